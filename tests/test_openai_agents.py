"""OpenAI Agents SDK 0.24.0 under the kit, in its side environment (created once, cached).

The first run creates ``openai-agents-py311-<hash>`` in the user cache with pip (about a minute and
a half on two cores); later runs reuse it.
"""

from __future__ import annotations

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from tests.kit_checks import EACH_ANSWER_ONCE, pause_twice


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    campaign = campaigns.get("openai_agents")
    params = campaign.resolve({"protocols": ["baseline", "crash", "fork", "answers"], "crash_points": ["s1.effect"],
                               "recovery_modes": ["run-state", "session"], "crash_hows": ["kill"],
                               "answers_n": [2]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("oa"))
    assert run.harness_errors == []
    assert {r.observations.get("framework_versions", {}).get("openai-agents") for r in run.receipts} == {"0.24.0"}
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_approve_and_reject_complete(verdicts: dict) -> None:
    assert verdicts[("EO", "baseline:approve")].evidence["effect_counts"] == {"e1": 1, "e2": 1}
    assert verdicts[("EO", "baseline:reject")].evidence["effect_counts"] == {"e1": 1}
    assert verdicts[("LV", "baseline:reject")].label.value == "✓"


def test_a_rejection_after_an_approval_of_the_same_state_is_served(verdicts: dict) -> None:
    fd = verdicts[("FD", "fork:same-pause")]
    assert fd.evidence["observed"] == fd.evidence["expected_f_v"] != fd.evidence["first_resume_outcome"]


def test_recovery_modes_differ_after_a_kill_inside_s1(verdicts: dict) -> None:
    # nothing was saved yet: the stored RunState recovery starts over and runs s1 again...
    state = verdicts[("EO", "crash:kill@s1.effect/run-state")]
    assert state.evidence["effect_counts"]["e1"] == 2
    # ...and so does the session rerun: the session only got items at the pause
    session = verdicts[("EO", "crash:kill@s1.effect/session")]
    assert session.evidence["effect_counts"]["e1"] >= 1


def test_the_same_run_state_approved_twice_runs_the_tool_twice(verdicts: dict) -> None:
    assert verdicts[("CO", "retry:same-pause×2")].evidence["gate_fires"] == 2


@pytest.fixture(scope="module")
def tamper_receipts(tmp_path_factory: pytest.TempPathFactory) -> list:
    campaign = campaigns.get("openai_agents")
    params = campaign.resolve({"protocols": ["tamper"], "tamper_limit": 1}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("oa-tamper"))
    assert run.harness_errors == []
    return run.receipts


def test_the_run_state_model_is_read_from_the_sdks_deserialiser(tamper_receipts: list) -> None:
    """The SDK has no model class for a serialized RunState: the keys its deserialiser takes with no
    default (``_build_run_state_from_json``, and ``$schemaVersion`` for the version check) are the
    declared required ones (issue 24), so an emptied state is an invalid edit on the SDK's own row."""
    required = ["$schemaVersion", "context", "current_agent", "current_turn", "max_turns", "original_input"]
    tampered = [r for r in tamper_receipts if r.probe.startswith("tamper.")]
    assert len(tampered) == 2
    for receipt in tampered:
        assert receipt.observations["state_model"] == {
            "model": "agents RunState JSON (plain dict; keys _build_run_state_from_json requires)",
            "required": required}
    empty = next(v for r in tampered for v in r.verdicts if v.property.value == "CV" and v.path == "tamper:empty-object")
    assert empty.framework == "openai-agents" and empty.evidence["invalid_edit"] is True


def test_two_approvals_answered_one_at_a_time_run_each_tool_once(tmp_path) -> None:
    """The pause-twice workflow as the SDK offers it (one run, two approval-gated tool calls, each
    answered from its stored RunState in a fresh process): the restored state after the second
    approval keeps ``s2`` done, so the first answer's effect is not fired again."""
    got = pause_twice("openai_agents", tmp_path)
    assert got.observations["pause_twice"] == EACH_ANSWER_ONCE
    assert {v.property.value: v.label.value for v in got.verdicts} == {"EO": "✓", "CO": "✓", "LV": "✓", "VO": "✓"}
