"""LlamaIndex Workflows 2.22.2 on the kit's handler, parallel and callback workflows (quick profile, the real
framework, campaign ``llamaindex_kit``).

* handler: the answered step ``s2`` fires ``e2`` and raises; a ``@catch_error(for_steps=["s2"])`` step, the
  framework's own error handler, runs the handler step (``e_handler``) and ends the run with its result. The
  application's only durable state is the snapshot taken at the input request (LI-8: no checkpointer), so a
  kill inside the handler is recovered from that pause: its answer is delivered again and the failed step runs
  again (``e2`` twice), as LI-2's at-least-once resume says (D).
* parallel: ``s1`` fans out with ``ctx.send_event`` to two branch steps that each wait with
  ``ctx.wait_for_event`` (a ``HumanResponseEvent`` whose ``branch`` field names it), and a join gathers both
  answers with ``ctx.collect_events``. One branch's answer leaves the other's wait open in the snapshot; a kill
  in the join is recovered from the snapshot taken after the first answer, so the second branch is asked and
  answered again (``e_b2`` twice; LI-2: D).
* callback: n/a, the release has no approval callback or hook (read from its source, checked below).

Each test asserts what the kit measured, effect counts first, then the labels and the citation that gives them.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from tests.installed import require

require("workflows")

from probes import campaigns  # noqa: E402
from probes.core.campaign import run_campaign  # noqa: E402
from probes.kit.protocols import CALLBACK_CELLS, HANDLER_CELLS  # noqa: E402
from probes.kit.runtime import JOIN_POINTS  # noqa: E402
from tests.kit_checks import cited_labels  # noqa: E402

MODE = "latest-snapshot"  # the adapter's one recovery mode


def _run(protocol: str, tmp_path: Any, ran: bool = True, **params: Any) -> Any:
    """The ``llamaindex_kit`` campaign restricted to ``protocol`` (quick profile): no harness error; where the
    cells ran the framework (``ran``; an n/a cell starts no process), on the pinned release."""
    campaign = campaigns.get("llamaindex_kit")
    run = run_campaign(campaign, campaign.resolve({"protocols": [protocol], **params}, quick=True), tmp_path)
    assert run.harness_errors == []
    versions = {r.observations.get("framework_versions", {}).get("llama-index-workflows") for r in run.receipts}
    assert versions - {None} == ({"2.22.2"} if ran else set())
    return run


def test_catch_error_runs_the_handler_and_a_kill_inside_it_runs_the_failed_step_again(tmp_path: Any) -> None:
    """No fault: e2 and the handler's effect once, the run completes with the handler's result. Killed at the
    handler's begin or effect: the paused snapshot is the newest, its answer runs the failed s2 again (e2
    twice) and the handler again (its effect twice once the kill came after it). Each run of the handler was
    handed the exception s2 raised (StepFailedEvent.exception)."""
    run = _run("handler", tmp_path, handler_cells=list(HANDLER_CELLS))
    seen = {r.args["at"]: r.observations["handler"] for r in run.receipts}
    assert {at: s["effects"] for at, s in seen.items()} == {
        "clean": {"e1": 1, "e2": 1, "e_handler": 1}, "h.begin": {"e1": 1, "e2": 2, "e_handler": 1},
        "h.effect": {"e1": 1, "e2": 2, "e_handler": 2}}
    assert {at: s["handed"] for at, s in seen.items()} == {
        "clean": ["StepFailed"], "h.begin": ["StepFailed", "StepFailed"], "h.effect": ["StepFailed", "StepFailed"]}
    assert {s["ended"] for s in seen.values()} == {"completed with \"the handler served 'yes'\""}
    labels = cited_labels(run)
    assert {prop: labels[("handler:clean", prop)] for prop in ("EO", "CO", "LV")} == dict.fromkeys(
        ("EO", "CO", "LV"), ("✓", ""))
    for at in ("h.begin", "h.effect"):
        path = f"handler:kill@{at}/{MODE}"
        assert labels[(path, "EO")] == ("D", "LI-2")  # at-least-once resume from the snapshot
        assert labels[(path, "CO")] == ("U", "")      # no statement on an answer delivered again (LI-9: silent)
        assert labels[(path, "LV")] == ("✓", "")


def test_two_waiting_branches_answered_one_at_a_time_and_a_kill_in_the_join(tmp_path: Any) -> None:
    """partly: after b1's answer the snapshot still records b2's wait, and a fresh process finds it there; every
    effect once. crash: killed in the join, the newest snapshot is the one after b1's answer, so b2 is asked and
    answered again (e_b2 twice) and the join runs again (e_join twice after a kill past its effect)."""
    run = _run("parallel", tmp_path, parallel_points=list(JOIN_POINTS))
    seen = {r.args["of"] + (f"@{r.args['point']}" if r.args.get("point") else ""): r.observations["parallel"]
            for r in run.receipts}
    assert seen["partly"]["steps"] == [
        "started: paused, asking b1, b2", "b1 answered: paused, asking b2",
        f"recovered by {MODE}: paused, asking b2", "b2 answered: completed with \"joined b1='yes', b2='no'\""]
    assert seen["partly"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 1}
    for point, joins in (("join.begin", 1), ("join.effect", 2)):
        assert seen[f"crash@{point}"]["steps"][4] == f"recovered by {MODE}: paused, asking b2"
        assert seen[f"crash@{point}"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 2, "e_join": joins}
    labels = cited_labels(run)
    assert {prop: labels[(f"parallel:partly/{MODE}", prop)] for prop in ("EO", "CO", "LV")} == dict.fromkeys(
        ("EO", "CO", "LV"), ("✓", ""))
    for point in JOIN_POINTS:
        path = f"parallel:crash@{point}/{MODE}"
        assert {prop: labels[(path, prop)] for prop in ("EO", "CO", "LV")} == {
            "EO": ("D", "LI-2"), "CO": ("U", ""), "LV": ("✓", "")}


def test_no_approval_callback_so_the_callback_cells_are_not_applicable(tmp_path: Any) -> None:
    """Every callback cell is n/a with the adapter's reason, and the reason's facts hold in the installed
    release: no parameter of ``@step``, ``Workflow.__init__`` or ``Context.wait_for_event`` is a callable asked
    before the pause (the names the reason lists are all there are)."""
    from workflows import Context, Workflow, step

    from probes.kit.adapter import Capability
    from probes.frameworks.llamaindex.adapter import LlamaIndexAdapter

    run = _run("callback", tmp_path, ran=False, callback_cells=list(CALLBACK_CELLS))
    verdicts = [v for r in run.receipts for v in r.verdicts]
    assert len(verdicts) == 3 * len(CALLBACK_CELLS) and {v.label.value for v in verdicts} == {"n/a"}
    assert all(v.evidence["why"] == LlamaIndexAdapter.missing[Capability.CALLBACK] for v in verdicts)
    assert "2.22.2 has no approval callback or hook" in LlamaIndexAdapter.missing[Capability.CALLBACK]

    def params(fn: Any) -> list[str]:
        return [name for name in inspect.signature(fn).parameters if name not in ("self", "func")]
    assert params(Context.wait_for_event) == ["event_type", "waiter_event", "waiter_id", "requirements", "timeout"]
    assert params(step) == ["workflow", "num_workers", "retry_policy", "skip_graph_checks", "accept_event_subclasses"]
    assert params(Workflow.__init__) == ["timeout", "disable_validation", "verbose", "resource_manager",
                                         "num_concurrent_runs", "runtime", "workflow_name", "skip_graph_checks"]


@pytest.mark.parametrize("workers, answered, expected", [
    # idle after s1 sent the branches' events, neither begun yet (2.22.2 reports idle between ticks)
    ({"s1": {}, "b1": {}, "b2": {}}, None, False),
    # one branch waits, the other has not begun
    ({"b1": {"collected_waiters": [{"waiter_id": "b1"}]}, "b2": {}}, None, False),
    ({"b1": {"collected_waiters": [{"waiter_id": "b1"}]}, "b2": {"collected_waiters": [{"waiter_id": "b2"}]}},
     None, True),
    # restored with both waits, the answer to b1 not taken yet
    ({"b1": {"collected_waiters": [{"waiter_id": "b1"}]}, "b2": {"collected_waiters": [{"waiter_id": "b2"}]}},
     "b1", False),
    # b1's answer in the join's buffer, b2 waits
    ({"b2": {"collected_waiters": [{"waiter_id": "b2"}]},
      "join": {"collected_events": {"default": [
          '{"__is_pydantic": true, "value": {"value": "yes"}, '
          '"qualified_name": "probes.frameworks.llamaindex.adapter.B1Answered"}']}}}, "b1", True),
    # a step still has work queued
    ({"b1": {"collected_waiters": [{"waiter_id": "b1"}]}, "b2": {"queue": ["ev"]}}, None, False),
])
def test_a_parallel_run_is_snapshotted_only_once_settled(workers: dict, answered: str | None, expected: bool,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The moment the adapter snapshots the parallel run is read from the context, not from the idle event
    alone: a snapshot taken before both branches wait would hold neither branch's wait."""
    from probes.kit import runtime
    from probes.frameworks.llamaindex.adapter import settled

    monkeypatch.setenv(runtime.CODE_ENV, "parallel")
    assert settled({"workers": workers}, answered) is expected
