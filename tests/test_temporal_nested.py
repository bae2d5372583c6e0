"""Temporal 1.35.0 under the kit's nested protocol (quick profile, the campaign's dev server, its side environment).

The pausing step runs in a child workflow (``probes.frameworks.temporal.workflow.KitNested``), which the parent
starts after its ``s1`` activity with ``workflow.execute_child_workflow`` under the id ``<parent's
id>-s2`` and whose result it returns: ``ask``, the wait for the ``answer`` signal and the ``s2``
activity are the child's. The pause's handle is the child's id and run id, the answer a signal to the
child, the run's outcome the parent's result. Asserts what the kit measured on this release, each label
with the effect counts of its history: the nested labels equal the flat workflow's, except that a
duplicate ``e2`` on a nested path is U (the adapter cites ``start_activity``'s retry sentences for the
flat "crash:*" paths only; no DOCS.md statement speaks to Temporal, so nothing is cited for nested ones).
"""

from __future__ import annotations

from typing import Any

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.kit.protocols import NESTED_RUNS


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = campaigns.get("temporal")
    params = campaign.resolve({"protocols": ["nested"], "crash_points": ["s2.effect"],
                               "crash_hows": ["kill", "raise"]}, quick=True)
    made = run_campaign(campaign, params, tmp_path_factory.mktemp("temporal_nested"))
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


def _receipt(run: Any, of: str) -> Any:
    return next(r for r in run.receipts if r.args["of"] == of)


def test_the_pause_is_the_child_workflows_wait_and_the_baseline_holds(run: Any) -> None:
    labels = _labels(run)
    assert all(path.startswith("nested:") for path, _ in labels)
    assert "n/a" not in labels.values()  # the adapter declares Capability.NESTED: every cell decided
    assert {r.args["of"] for r in run.receipts} == set(NESTED_RUNS)
    for receipt in run.receipts:
        assert receipt.observations["workflow_shape"] == "nested"
    # the start paused in the child: its handle names the child's workflow id (the parent's, "-s2")
    start = _receipt(run, "baseline").observations["children"]["run/start"]["result"]
    assert start["status"] == "paused" and start["handle"][0].endswith("-s2")
    # the signal reached the child's wait, the child's s2 activity fired e2 once, the parent returned it
    assert _fired(run, "nested:baseline:yes") == {"e1": 1, "e2": 1}
    assert labels[("nested:baseline:yes", "EO")] == "✓" and labels[("nested:baseline:yes", "LV")] == "✓"


def test_a_worker_killed_at_the_childs_wait_leaves_both_workflows_on_the_server(run: Any) -> None:
    labels = _labels(run)
    # the worker died while the child waited; the parent and child stay open on the server, a new worker
    # replays both histories, the child takes the signal: e1 and e2 once
    assert _fired(run, "nested:park-kill") == {"e1": 1, "e2": 1}
    assert {labels[("nested:park-kill", prop)] for prop in ("EO", "PC", "LV")} == {"✓"}


def test_a_crash_after_e2_in_the_childs_activity_attempts_it_again(run: Any) -> None:
    verdicts = _verdicts(run)
    # a worker killed after e2 (the attempt outlives its start-to-close timeout) or an activity raising after
    # e2: the server attempts the child's s2 activity again, e2 fires twice; s1 is the parent's recorded
    # activity (PC ✓) and the run completes (LV ✓). D, as on the flat workflow: start_activity's retry
    # sentences speak of any activity, the child workflow's too
    for how in ("kill", "raise"):
        path = f"nested:crash:{how}@s2.effect/worker"
        assert _fired(run, path) == {"e1": 1, "e2": 2}
        assert verdicts[(path, "EO")].label.value == "D"
        assert verdicts[(path, "PC")].label.value == "✓" and verdicts[(path, "LV")].label.value == "✓"


def test_answers_to_the_completed_child_are_refused(run: Any) -> None:
    labels = _labels(run)
    # a stray answer after completion is a signal to the closed child: refused, nothing runs again
    assert _fired(run, "nested:stray-after-completion") == {"e1": 1, "e2": 1}
    assert labels[("nested:stray-after-completion", "CO")] == "✓"
    assert labels[("nested:stray-after-completion", "EO")] == "✓"
    # the other answer at the answered pause: the signal to the closed child raises RPCError (a loud refusal,
    # the retry side), e2 fired once; FD U as on the flat workflow
    fork = _verdicts(run)[("nested:fork:same-pause", "FD")]
    assert _receipt(run, "fork").observations["fork"] == {"first": "completed", "second": "raised",
                                                          "second_error": "RPCError"}
    assert fork.label.value == "U" and "retry: refused loudly" in fork.summary
    assert _fired(run, "nested:fork:same-pause") == {"e1": 1, "e2": 1}
