"""AutoGen's own protocols (``probes.frameworks.autogen.protocols``) against AutoGen AgentChat 0.7.5.

Both run for real, twice (``reps`` 2), in a throwaway kit campaign over the kit's AutoGen
adapter (what they measure is asserted in ``tests/test_autogen.py``, on the paper campaign).
Here: the two repetitions give byte-identical verdicts; every verdict is decided again,
identically, from its receipt alone; and whether a forgery is invalid comes from AgentChat's
own models, read in the framework's process.
"""

from __future__ import annotations

import pytest

from tests.installed import require

require("autogen_agentchat")

from probes.frameworks.autogen.adapter import AutoGenAdapter  # noqa: E402
from probes.frameworks.autogen.protocols import FORGERIES, PROTOCOLS  # noqa: E402
from probes.core.campaign import CampaignRun, run_campaign  # noqa: E402
from probes.core.checker import Verdict  # noqa: E402
from probes.kit.suite import kit_campaign  # noqa: E402
from probes.rejudge import kit_verdicts, stable  # noqa: E402

ADAPTER = "probes.frameworks.autogen.adapter:AutoGenAdapter"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> CampaignRun:
    campaign = kit_campaign("ag_protocols_test", "AutoGen's own protocols", ADAPTER,
                            packages=("autogen-agentchat", "autogen-core"), protocols=PROTOCOLS)
    params = campaign.resolve({"protocols": list(PROTOCOLS), "reps": 2}, quick=True)
    done = run_campaign(campaign, params, tmp_path_factory.mktemp("ag_protocols"))
    assert done.harness_errors == []
    return done


def _rep(run: CampaignRun, rep: int) -> dict[tuple[str, str, str], Verdict]:
    return {(v.framework, v.property.value, v.path): v for r in run.receipts if r.args["rep"] == rep
            for v in r.verdicts}


def test_the_verdicts_are_deterministic_and_re_judged_from_the_receipt(run: CampaignRun) -> None:
    first, second = _rep(run, 1), _rep(run, 2)
    # restore: EO; each forgery: CV, and LV where it was accepted (five of the nine); VO on each of those paths
    assert sorted(first) == sorted(second) and len(first) == 1 + len(FORGERIES) + 5 + (1 + len(FORGERIES))
    assert all(stable(first[k]) == stable(second[k]) for k in first)
    for receipt in run.receipts:
        again = kit_verdicts(receipt, AutoGenAdapter)
        assert again is not None and [stable(v) for v in again] == [stable(v) for v in receipt.verdicts]
    observed = [r.observations["forgeries"] for r in run.receipts if r.args["protocol"] == "forgeries"]
    assert len(observed) == 2 and observed[0] == observed[1]


def test_invalid_means_rejected_by_agentchats_own_models(run: CampaignRun) -> None:
    seen = next(r.observations["forgeries"] for r in run.receipts if r.args["protocol"] == "forgeries")
    assert [name for name, s in seen.items() if s["model_errors"]] == [
        "structural", "wrong-content-type", "team-unknown-thread-type"]
    assert seen["structural"]["model_errors"] == ["s2.message_buffer[0]: ValueError: Unknown message type: "
                                                  "ForgedMessageType"]
    assert seen["wrong-content-type"]["model_errors"] == ["s2.message_buffer[0]: ValidationError: 1 validation "
                                                          "error for TextMessage"]
    assert seen["team-unknown-thread-type"]["model_errors"] == ["GraphManager.message_thread[1]: ValueError: "
                                                                "Unknown message type: ForgedMessageType"]


def test_the_state_model_reads_the_managers_required_keys() -> None:
    """``state_errors`` in this process (it imports AgentChat's models only): a manager entry without
    a key ``GraphFlowManager.load_state`` reads by subscript is invalid; an agent entry that is not a
    ``ChatAgentContainerState`` is too."""
    adapter = AutoGenAdapter.__new__(AutoGenAdapter)
    out = adapter.state_errors([["GraphManager", {"message_thread": [], "current_turn": 0, "remaining": {},
                                                  "enqueued_any": {}}],
                                ["s2", {"message_buffer": "not a list"}], ["s1", {}]])
    assert out["errors"][0] == ["GraphManager: no 'ready'"]
    assert out["errors"][1][0].startswith("s2: ValidationError: 1 validation error for ChatAgentContainerState")
    assert out["errors"][2] == []
