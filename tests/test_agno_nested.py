"""Agno 3.1.10 under the kit's nested protocol (quick profile, its side environment).

The pausing step runs inside a ``Team`` that the workflow's step ``s2`` executes (``Step(team=...)``): the
team's leader (a scripted model) delegates to its one member agent, whose user-input tool ``s2`` pauses
it (``probes.frameworks.agno.adapter._team``). Agno copies the member's requirement to the team run and the team's to
the workflow run (an executor ``StepRequirement``), so the workflow pauses with the member's question, and
``continue_run`` hands the answer down to the team and on to the member's run. Asserts what the kit
measured on this release, each label with the effect counts of its history: the nested labels equal the
flat workflow's (the fork's documented refusal keyed for the nested path as for the flat one).
"""

from __future__ import annotations

from typing import Any

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.core.history import Kind
from probes.kit.protocols import NESTED_RUNS

POINTS = ("s2.begin", "s2.consumed", "s2.effect")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = campaigns.get("agno")
    params = campaign.resolve({"protocols": ["nested"], "crash_points": list(POINTS),
                               "crash_hows": ["kill", "raise"]}, quick=True)
    made = run_campaign(campaign, params, tmp_path_factory.mktemp("agno_nested"))
    assert made.harness_errors == []
    return made


def _verdicts(run: Any) -> dict[tuple[str, str], Any]:
    return {(v.path, v.property.value): v for r in run.receipts for v in r.verdicts}


def _labels(run: Any) -> dict[tuple[str, str], str]:
    return {key: v.label.value for key, v in _verdicts(run).items()}


def _history(run: Any, path: str) -> Any:
    return next(v.history for (p, _), v in _verdicts(run).items() if p == path and v.history)


def _fired(run: Any, path: str) -> dict[str, int]:
    """The effects the history ``path``'s verdicts were decided on records, by effect."""
    counts = [v.history.effect_counts() for (p, _), v in _verdicts(run).items() if p == path and v.history]
    assert counts and all(c == counts[0] for c in counts)
    return counts[0]


def test_every_cell_ran_on_the_nested_workflow(run: Any) -> None:
    labels = _labels(run)
    assert all(path.startswith("nested:") for path, _ in labels)
    assert "n/a" not in labels.values()  # the adapter declares Capability.NESTED: every cell decided
    assert {r.args["of"] for r in run.receipts} == set(NESTED_RUNS)
    for receipt in run.receipts:
        assert receipt.observations["workflow_shape"] == "nested"


def test_the_answer_reaches_the_member_agents_tool(run: Any) -> None:
    labels = _labels(run)
    # both answers travel down through the team to the member's user-input tool: s2 ran once, e2 once,
    # and the leader's answer is the member's result (LV: the workflow's own outcome)
    for answer in ("yes", "no"):
        assert _fired(run, f"nested:baseline:{answer}") == {"e1": 1, "e2": 1}
        assert {labels[(f"nested:baseline:{answer}", p)] for p in ("EO", "LV")} == {"✓"}
    # killed while parked at the member's pause, continued in a new process from the stored workflow run:
    # the team's and the member's paused runs came back with it, s1 did not run again
    assert _fired(run, "nested:park-kill") == {"e1": 1, "e2": 1}
    assert {labels[("nested:park-kill", prop)] for prop in ("EO", "PC", "LV")} == {"✓"}
    # a stray answer after completion: the last run is completed, nothing is continued, nothing fires again
    assert _fired(run, "nested:stray-after-completion") == {"e1": 1, "e2": 1}
    assert labels[("nested:stray-after-completion", "CO")] == "✓"


def test_crashes_before_e2_run_the_member_tool_once(run: Any) -> None:
    labels = _labels(run)
    for point in ("s2.begin", "s2.consumed"):
        # a kill before e2: the stored workflow run is still paused (Agno saves it at the pause and at the
        # end), and continuing it with the answer again runs the member's tool once
        path = f"nested:crash:kill@{point}/continue-run"
        assert _fired(run, path) == {"e1": 1, "e2": 1}
        assert {labels[(path, p)] for p in ("EO", "PC", "LV")} == {"✓"}
        # a raise before e2: the member agent gets the exception as the tool's result (tool_call_error) and
        # calls s2 again, which asks again: a second pause, answered by the recovery; e2 once. On the flat
        # workflow the step's own retry (max_retries) runs it again instead: the same labels
        path = f"nested:crash:raise@{point}/continue-run"
        assert _fired(run, path) == {"e1": 1, "e2": 1}
        assert len(_history(run, path).of(Kind.PAUSE)) >= 2
        assert {labels[(path, p)] for p in ("EO", "PC", "LV")} == {"✓"}


def test_a_crash_after_e2_runs_the_member_tool_again(run: Any) -> None:
    labels = _labels(run)
    # killed after e2: the stored run is still the paused one, continuing it runs the member's tool again.
    # Raising after e2: the member calls s2 again, which asks again and fires e2 again on the answer. e2
    # twice either way; s1 is not re-entered (PC ✓), the run completes (LV ✓). No Agno sentence speaks to a
    # step (or a member's tool) run twice: EO U, as on the flat workflow
    for how in ("kill", "raise"):
        path = f"nested:crash:{how}@s2.effect/continue-run"
        assert _fired(run, path) == {"e1": 1, "e2": 2}
        assert labels[(path, "EO")] == "U"
        assert labels[(path, "PC")] == "✓" and labels[(path, "LV")] == "✓"


def test_a_second_answer_at_the_answered_pause_is_refused(run: Any) -> None:
    # continue_run on the outer workflow's completed run raises ValueError ("not in a paused state"): the
    # fork is refused, e2 fired once, D by the same docstring as the flat fork
    fork = _verdicts(run)[("nested:fork:same-pause", "FD")]
    receipt = next(r for r in run.receipts if r.args["of"] == "fork")
    assert receipt.observations["fork"]["second"] == "raised"
    assert receipt.observations["fork"]["second_error"] == "ValueError"
    assert fork.label.value == "D" and "not in a paused state" in fork.doc.quote
    assert _fired(run, "nested:fork:same-pause") == {"e1": 1, "e2": 1}
