"""Microsoft Agent Framework 1.23.0 under the kit's nested protocol (quick profile, the real framework).

The pausing executor is the one executor of a sub-workflow that ``WorkflowExecutor`` wraps as the
outer workflow's ``s2`` (``probes.frameworks.maf.adapter``): its ``request_info`` goes up as the outer
workflow's request under the same id, and the outer checkpoint embeds the sub-workflow's. Asserts
what the kit measured on this release, each label with the effect counts of its recorded history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.installed import require

require("agent_framework")

from probes import campaigns  # noqa: E402
from probes.core.campaign import run_campaign  # noqa: E402
from probes.core.history import History, Kind  # noqa: E402
from probes.kit.protocols import NESTED_RUNS  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = campaigns.get("maf")
    params = campaign.resolve({"protocols": ["nested"], "crash_points": ["s2.consumed", "s2.effect"],
                               "crash_hows": ["kill"]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("maf_nested"))
    assert run.harness_errors == []
    return run


def _labels(run: Any) -> dict[tuple[str, str], str]:
    return {(v.path, v.property.value): v.label.value for r in run.receipts for v in r.verdicts}


def _fired(run: Any, of: str, **args: Any) -> dict[str, int]:
    receipt = next(r for r in run.receipts if r.args.get("of") == of and
                   all(r.args.get(k) == v for k, v in args.items()))
    return History.from_json(receipt.observations["history"]).effect_counts()


def test_every_cell_ran_on_the_nested_workflow(run: Any) -> None:
    labels = _labels(run)
    assert {path.split(":")[1] for path, _ in labels} == {"baseline", "crash", "park-kill", "stray-after-completion",
                                                         "fork"}
    assert all(path.startswith("nested:") for path, _ in labels)
    assert "n/a" not in labels.values()  # the adapter declares Capability.NESTED: every cell decided
    assert len(NESTED_RUNS) == len({r.args["of"] for r in run.receipts})
    for receipt in run.receipts:
        assert receipt.observations["workflow_shape"] == "nested"
        if "history" in receipt.observations:
            answers = History.from_json(receipt.observations["history"]).of(Kind.ANSWER)
            assert {e.detail.get("workflow") for e in answers} == {"nested"}


def test_the_answer_reaches_the_request_inside_the_sub_workflow(run: Any) -> None:
    labels = _labels(run)
    # the outer workflow's pause is the sub-workflow's request (propagate_request): answered by its id,
    # s1 ran once and the nested executor's response handler fired e2 once on that answer
    assert _fired(run, "baseline") == {"e1": 1, "e2": 1}
    assert labels[("nested:baseline:yes", "EO")] == "✓" and labels[("nested:baseline:yes", "LV")] == "✓"
    # killed while parked at the nested pause, answered in a new process from the outer checkpoint: the
    # sub-workflow's pending request came back from the checkpoint it embeds, s1 did not run again
    assert _fired(run, "parkkill") == {"e1": 1, "e2": 1}
    assert {labels[("nested:park-kill", prop)] for prop in ("EO", "PC", "LV")} == {"✓"}
    # a second answer after completion: refused, nothing fires again (the gate once, e2 once)
    assert _fired(run, "stray") == {"e1": 1, "e2": 1}
    assert labels[("nested:stray-after-completion", "CO")] == "✓"
    assert labels[("nested:stray-after-completion", "EO")] == "✓"


def test_a_crash_inside_the_sub_workflow_recovers_from_the_outer_checkpoint(run: Any) -> None:
    labels = _labels(run)
    # killed after the answer was consumed, before e2: the latest checkpoint (written as the answer
    # arrived) replays the nested response handler, which consumes the answer again and fires e2 once
    assert _fired(run, "crash", point="s2.consumed") == {"e1": 1, "e2": 1}
    path = "nested:crash:kill@s2.consumed/latest-checkpoint"
    assert {labels[(path, prop)] for prop in ("EO", "PC", "LV")} == {"✓"}
    # killed after e2 fired, before the step's checkpoint: the same replay fires e2 a second time. The
    # outer step s1 is not re-entered (PC ✓) and the run completes (LV ✓); the duplicate e2 is an EO
    # violation no agent-framework statement speaks to (U), as on the flat workflow
    assert _fired(run, "crash", point="s2.effect") == {"e1": 1, "e2": 2}
    path = "nested:crash:kill@s2.effect/latest-checkpoint"
    assert labels[(path, "EO")] == "U"
    assert labels[(path, "PC")] == "✓" and labels[(path, "LV")] == "✓"


def test_a_second_answer_at_the_answered_nested_pause_is_served(run: Any) -> None:
    # resuming the paused checkpoint again with the other answer runs the nested response handler on it:
    # e2 fires once per answer and the fork's outcome is f(the new answer), as on the flat workflow
    fork = next(v for r in run.receipts for v in r.verdicts if v.path == "nested:fork:same-pause" and
                v.property.value == "FD")
    assert fork.label.value == "✓" and "fork: served the new answer" in fork.summary
    receipt = next(r for r in run.receipts if r.args.get("of") == "fork")
    assert receipt.observations["fork"] == {"first": "completed", "second": "completed", "second_error": None}
    assert fork.history.effect_counts() == {"e1": 1, "e2": 2}
