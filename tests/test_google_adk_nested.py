"""Google ADK 2.13.0 under the kit's nested protocol (quick profile, SQLite sessions, its side environment).

The pausing step (``ask``, which yields ``RequestInput``, then ``s2`` on the answer) is a ``Workflow`` of its
own, a node of the outer graph workflow after ``s1`` (``probes.frameworks.google_adk.adapter``: a ``Workflow`` is a
``BaseNode``, so a graph workflow takes one as a node). The request surfaces as the outer invocation's
``adk_request_input`` call; the answer is the ``FunctionResponse`` with its interrupt id, as on the flat
workflow. Asserts what the kit measured on this release, each label with the effect counts of its history:
the nested labels equal the flat workflow's, except that a duplicate ``e2`` on a nested path is U (the
adapter cites ``ResumabilityConfig``'s at-least-once sentence for flat crash paths only; no DOCS.md statement
speaks to ADK, so nothing is cited for nested ones).
"""

from __future__ import annotations

from typing import Any

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.kit.protocols import NESTED_RUNS


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = campaigns.get("google_adk")
    params = campaign.resolve({"protocols": ["nested"], "backends": ["sqlite"], "crash_points": ["s2.effect"],
                               "crash_hows": ["kill", "raise"]}, quick=True)
    made = run_campaign(campaign, params, tmp_path_factory.mktemp("adk_nested"))
    assert made.harness_errors == []
    return made


def _verdicts(run: Any) -> dict[tuple[str, str], Any]:
    return {(v.path, v.property.value): v for r in run.receipts for v in r.verdicts}


def _labels(run: Any) -> dict[tuple[str, str], str]:
    return {key: v.label.value for key, v in _verdicts(run).items()}


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


def test_the_answer_reaches_the_request_inside_the_nested_workflow(run: Any) -> None:
    labels = _labels(run)
    # the nested workflow's RequestInput is the invocation's pause, answered by its interrupt id: s1 ran
    # once, the nested s2 node fired e2 once on the answer
    assert _fired(run, "nested:baseline:yes") == {"e1": 1, "e2": 1}
    assert labels[("nested:baseline:yes", "EO")] == "✓" and labels[("nested:baseline:yes", "LV")] == "✓"
    # killed while parked at the nested request, answered in a new process from the session's events:
    # the nested workflow's pending request came back, s1 did not run again
    assert _fired(run, "nested:park-kill") == {"e1": 1, "e2": 1}
    assert {labels[("nested:park-kill", prop)] for prop in ("EO", "PC", "LV")} == {"✓"}
    # a second answer after completion: nothing fires again (the gate once, e2 once)
    assert _fired(run, "nested:stray-after-completion") == {"e1": 1, "e2": 1}
    assert labels[("nested:stray-after-completion", "CO")] == "✓"
    assert labels[("nested:stray-after-completion", "EO")] == "✓"


def test_a_crash_after_e2_inside_the_nested_workflow_runs_its_node_again(run: Any) -> None:
    verdicts = _verdicts(run)
    # killed, or raising, after e2 fired and before the nested s2 node's output event was appended: resuming
    # the invocation runs that node again on the recorded answer, e2 fires a second time. s1 is not re-entered
    # (PC ✓) and the run completes (LV ✓). D, as on the flat workflow: ResumabilityConfig's at-least-once
    # sentence speaks of any resumed invocation, a nested node's too
    for how in ("kill", "raise"):
        path = f"nested:crash:{how}@s2.effect/resume-invocation"
        assert _fired(run, path) == {"e1": 1, "e2": 2}
        assert verdicts[(path, "EO")].label.value == "D"
        assert verdicts[(path, "PC")].label.value == "✓" and verdicts[(path, "LV")].label.value == "✓"


def test_a_second_answer_at_the_answered_nested_request_is_ignored(run: Any) -> None:
    # the same interrupt id answered again with the other answer: the first outcome stands, e2 fired once
    # (retry side), FD U as on the flat workflow
    fork = _verdicts(run)[("nested:fork:same-pause", "FD")]
    receipt = next(r for r in run.receipts if r.args["of"] == "fork")
    assert receipt.observations["fork"] == {"first": "completed", "second": "completed", "second_error": None}
    assert fork.label.value == "U" and "retry: ignored, the first outcome stands" in fork.summary
    assert _fired(run, "nested:fork:same-pause") == {"e1": 1, "e2": 1}
