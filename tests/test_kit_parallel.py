"""The parallel protocol (``probes.kit.protocols.parallel``): two parallel branches that each pause for an
answer of their own, then a join.

``partly``: one branch answered by a process that ends, a fresh process recovers, the other branch must still
be asking; ``crash``: both answered, the process running the join SIGKILLed at its begin or its effect, then
recovered. EO, CO (each branch's effect once per answer to that branch) and LV from the kit's checkers. On
LangGraph the branches are two nodes fanned out from ``s1`` that ``interrupt()``, answered one at a time by a
resume map keyed by the interrupt's id; an adapter that builds no such workflow gets n/a with its reason.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from probes.core.campaign import run_campaign
from probes.core.history import Event, History, Kind
from probes.kit import chapter
from probes.kit.judge import Judge, answered_pause, replay
from probes.kit.protocols import PARALLEL_RUNS
from probes.kit.runtime import JOIN_POINTS, branches, joined, parallel_effects
from probes.kit.suite import SMOKE, kit_campaign
from tests.installed import require

LANGGRAPH = "probes.frameworks.langgraph.adapter:StockSaverAdapter"
GATES = ("e_b1", "e_b2")
PAUSES = {"e_b1": "b1", "e_b2": "b2"}


def _parallel(name: str, adapter: str, out: Path, **params: Any) -> Any:
    campaign = kit_campaign(name, name, adapter)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["parallel"], **params}, quick=True), out)
    assert run.harness_errors == []
    return run


def _registered(name: str, out: Path, **params: Any) -> Any:
    """Registered campaign ``name``'s parallel cells (in its side environment), at every join point."""
    from probes import campaigns

    campaign = campaigns.get(name)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["parallel"], "parallel_points": list(JOIN_POINTS),
                                                   **params}, quick=True), out)
    assert run.harness_errors == []
    return run


def _seen(run: Any, by_mode: bool = False) -> dict[str, Any]:
    """Each cell's observations, keyed ``partly`` or ``crash@<point>`` (and ``/<mode>`` with ``by_mode``)."""
    return {r.args["of"] + (f"@{r.args['point']}" if r.args.get("point") else "")
            + (f"/{r.args['mode']}" if by_mode else ""): r.observations["parallel"] for r in run.receipts}


def _labels(run: Any) -> dict[tuple[str, str], str]:
    return {(v.path, v.property.value): v.label.value for r in run.receipts for v in r.verdicts}


def _history(b2_answered: bool) -> History:
    """s1, both branches ask, b1 answered and fired; b2 fired after its own answer, or with none (the run
    took b1's answer for it, or answered it by itself); the join."""
    h, a = "harness", "run/answer"
    events = [Event(Kind.START, h), Event(Kind.EFFECT, "run/start", "s1", "e1"),
              Event(Kind.PAUSE, "run/start", "b1"), Event(Kind.PAUSE, "run/start", "b2"),
              Event(Kind.ANSWER, h, value="yes", detail={"branch": "b1", "workflow": "parallel"}),
              Event(Kind.EFFECT, a, "b1", "e_b1")]
    if b2_answered:
        events.append(Event(Kind.ANSWER, h, value="no", detail={"branch": "b2", "workflow": "parallel"}))
    events += [Event(Kind.EFFECT, a, "b2", "e_b2"), Event(Kind.EFFECT, a, "join", "e_join"),
               Event(Kind.COMPLETE, a, value=joined({"b1": "yes", "b2": "no"}))]
    return History.of_events(events)


def test_the_parallel_workflow_and_its_effects() -> None:
    assert branches() == ("b1", "b2")
    assert parallel_effects() == ("e1", "e_b1", "e_b2", "e_join")
    assert joined({"b2": "no", "b1": "yes"}) == "joined b1='yes', b2='no'"
    assert JOIN_POINTS == ("join.begin", "join.effect")


def test_each_branch_effect_is_judged_against_the_answers_to_its_own_pause() -> None:
    """CO counts every answer as an answer to the one pause; per branch, the effect of a branch that was
    never answered (answered by itself, or by the other branch's answer) is a violation, though the whole
    history has an answer."""
    judge = Judge("x", "sqlite", {})
    early = _history(b2_answered=False)
    assert answered_pause(early, "b2").of(Kind.ANSWER) == [] and len(answered_pause(early, "b1").of(Kind.ANSWER)) == 1
    assert judge.gated_once("p", early, "w", gates=GATES).label.value == "✓"  # blind to which pause: every answer counts
    bad = judge.gated_once("p", early, "w", gates=GATES, pauses=PAUSES)
    assert (bad.label.value, bad.evidence["gate"], bad.evidence["answers"]) == ("U", "e_b2", 0)  # no citation: U
    assert len(bad.history) == len(early)  # the verdict keeps the whole history, not the projection
    assert judge.gated_once("p", _history(b2_answered=True), "w", gates=GATES, pauses=PAUSES).label.value == "✓"
    # the call is recorded with its pauses, so a re-judge of the receipt decides the same
    again = replay(judge.calls[1:2], {"p": early.to_json()}, "x", "sqlite", {})
    assert [v.label.value for v in again] == ["U"]
    # LV without the two-step workflow's gate: a run that never completed is named so, not a lost answer
    stuck = History.of_events(early.events[:6])
    assert "never completed" in judge.live("p", stuck, "w", joined({"b1": "yes", "b2": "no"}), gate=None).summary


def test_an_adapter_without_parallel_branches_is_not_applicable_with_its_reason(tmp_path: Path) -> None:
    run = _parallel("plain_parallel", "tests.fixtures.plain_adapter:PlainAdapter", tmp_path)
    labels = _labels(run)
    assert set(labels.values()) == {"n/a"}
    assert {path for path, _ in labels} == {"parallel:partly/latest", "parallel:crash@join.effect/latest"}
    assert all("parallel" in v.evidence["why"] for r in run.receipts for v in r.verdicts)


def test_the_plan_has_one_parallel_cell_in_the_smoke_profile_and_every_point_by_default() -> None:
    campaign = kit_campaign("plain_parallel_plan", "x", "tests.fixtures.plain_adapter:PlainAdapter")
    smoke = [s.id for s in campaign.plan(campaign.resolve({**SMOKE, "protocols": ["parallel"]}, quick=True))]
    assert smoke == ["parallel.crash.join.effect.latest.file.rep1"]
    full = [s.id for s in campaign.plan(campaign.resolve({"protocols": ["parallel"]}))]
    assert full == ["parallel.partly.latest.file.rep1", "parallel.crash.join.begin.latest.file.rep1",
                    "parallel.crash.join.effect.latest.file.rep1"]
    assert set(PARALLEL_RUNS) == {"partly", "crash"}


def test_the_chapter_lists_each_parallel_cell_and_the_model_names_the_branches() -> None:
    from probes.tla.trace import Recorded

    seen = {"cell": "crash", "point": "join.effect", "mode": "none-input", "steps": ["started", "killed at join.effect"],
            "end": "completed", "effects": {"e1": 1}}
    receipt = SimpleNamespace(observations={"parallel": seen}, args={"backend": "sqlite"}, verdicts=[])
    assert chapter.parallel_rows(SimpleNamespace(receipts=[receipt])) == [
        {"cell": "crash at join.effect", "recovery": "none-input", "what happened": "started; killed at join.effect",
         "effects": {"e1": 1}, "backend": "sqlite"}]
    assert "parallel branches" in Recorded("x", "c", "f", "parallel", _history(True)).outside_model


@pytest.fixture
def langgraph() -> None:
    require("langgraph.checkpoint.sqlite")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_langgraph_keeps_the_unanswered_branch_asking_and_restarts_a_killed_join(
        langgraph: None, backend: str, outside_basetemp: Path) -> None:
    run = _parallel(f"lg_parallel_{backend}", LANGGRAPH, outside_basetemp, backends=[backend],
                    parallel_points=list(JOIN_POINTS), recovery_modes=["none-input"])
    labels = _labels(run)
    seen = _seen(run)
    # b1 answered alone (a resume map with its interrupt id): b2 still asks; invoke(None) from a fresh
    # process finds b2 asking again, not lost and not answered by itself; its answer runs the join once
    assert seen["partly"]["steps"] == [
        "started: paused, asking b1, b2", "b1 answered: paused, asking b2", "recovered by none-input: paused, asking b2",
        "b2 answered: completed with \"joined b1='yes', b2='no'\""]
    assert seen["partly"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 1}
    assert {prop: labels[("parallel:partly/none-input", prop)] for prop in ("EO", "CO", "LV", "VO")} == dict.fromkeys(
        ("EO", "CO", "LV", "VO"), "✓")
    # killed as the join begins: invoke(None) runs the join, both branches' results read back (nothing again)
    assert seen["crash@join.begin"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 1}
    assert {prop: labels[("parallel:crash@join.begin/none-input", prop)] for prop in ("EO", "CO", "LV")} == dict.fromkeys(
        ("EO", "CO", "LV"), "✓")
    # killed after the join's effect: the join node starts again from its top (LG-4), e_join fires twice;
    # the branches are not run again
    assert seen["crash@join.effect"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 2}
    eo = next(v for r in run.receipts for v in r.verdicts
              if (v.path, v.property.value) == ("parallel:crash@join.effect/none-input", "EO"))
    assert (eo.label.value, eo.doc.source) == ("D", "LG-4")
    assert {prop: labels[("parallel:crash@join.effect/none-input", prop)] for prop in ("CO", "LV")} == {"CO": "✓",
                                                                                                        "LV": "✓"}


def test_langgraph_resending_the_input_to_a_half_answered_thread_starts_it_over(langgraph: None, tmp_path: Path) -> None:
    """The other documented recovery, the input sent again: LangGraph starts the thread's run over (s1
    again, both branches ask again); the answered branch's effect fires a second time once answered again."""
    run = _parallel("lg_parallel_resend", LANGGRAPH, tmp_path, parallel_runs=["partly"],
                    recovery_modes=["resend-input"])
    [receipt] = run.receipts
    seen = receipt.observations["parallel"]
    assert seen["steps"][2] == "recovered by resend-input: paused, asking b1, b2"
    assert seen["effects"] == {"e1": 2, "e_b1": 2, "e_b2": 1, "e_join": 1}
    labels = _labels(run)
    assert {prop: labels[("parallel:partly/resend-input", prop)] for prop in ("EO", "CO", "LV")} == {
        "EO": "✗", "CO": "✗", "LV": "✓"}


def test_dbos_branches_as_child_workflows_each_waiting_in_recv(tmp_path: Path) -> None:
    """DBOS: each branch a child workflow started by the parent (``DBOS.start_workflow``), waiting in its own
    ``DBOS.recv``; one answered by ``DBOS.send`` to its id, the other keeps waiting; the join a step."""
    require("dbos")
    run = _parallel("dbos_parallel", "probes.frameworks.dbos.adapter:DBOSAdapter", tmp_path,
                    parallel_points=list(JOIN_POINTS))
    labels = _labels(run)
    seen = _seen(run)
    # a launch recovers the parent and b2's child; b2's recv waits again, b1's recorded result is read back
    assert seen["partly"]["steps"] == [
        "started: paused, asking b1, b2", "b1 answered: paused, asking b2", "recovered by launch: paused, asking b2",
        "b2 answered: completed with \"joined b1='yes', b2='no'\""]
    for path in ("parallel:partly/launch", "parallel:crash@join.begin/launch"):
        assert {prop: labels[(path, prop)] for prop in ("EO", "CO", "LV")} == dict.fromkeys(("EO", "CO", "LV"), "✓")
    # killed after the join step's effect, before DBOS recorded its output: the step runs again at the next
    # launch (at-least-once steps, DB-5), the children's recorded results are not run again
    assert seen["crash@join.effect"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 2}
    eo = next(v for r in run.receipts for v in r.verdicts
              if (v.path, v.property.value) == ("parallel:crash@join.effect/launch", "EO"))
    assert (eo.label.value, eo.doc.source) == ("D", "DB-5")
    assert {prop: labels[("parallel:crash@join.effect/launch", prop)] for prop in ("CO", "LV")} == {"CO": "✓",
                                                                                                    "LV": "✓"}


def test_temporal_branches_as_child_workflows_each_waiting_for_its_signal(tmp_path: Path) -> None:
    """Temporal (its side environment and the campaign's dev server): each branch a child workflow started
    by the parent (``start_child_workflow``), waiting for the ``answer`` signal sent to its own id; the join
    an activity of the parent's after both children's results."""
    # no require(): temporalio lives in the campaign's side environment (made on first use), as tests/test_temporal.py
    run = _registered("temporal", tmp_path)
    labels = _labels(run)
    seen = _seen(run)
    # a new worker takes the parent and b2's child over: b2 waits for its signal again
    assert seen["partly"]["steps"][2] == "recovered by worker: paused, asking b2"
    for path in ("parallel:partly/worker", "parallel:crash@join.begin/worker"):
        assert {prop: labels[(path, prop)] for prop in ("EO", "CO", "LV")} == dict.fromkeys(("EO", "CO", "LV"), "✓")
    # the killed worker never reported the join activity: the server attempts it again (at-least-once activities)
    assert seen["crash@join.effect"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 2}
    eo = next(v for r in run.receipts for v in r.verdicts
              if (v.path, v.property.value) == ("parallel:crash@join.effect/worker", "EO"))
    assert (eo.label.value, eo.doc.source) == ("D", "temporalio.workflow:start_activity")


def test_maf_fans_out_to_two_requesting_executors_and_fans_in_to_the_join(tmp_path: Path) -> None:
    """Microsoft Agent Framework: s1 fans out to one executor per branch, each asking with request_info, and
    the branches fan in to the join; one branch answered by ``responses`` naming its request alone."""
    require("agent_framework")
    run = _parallel("maf_parallel", "probes.frameworks.maf.adapter:MafAdapter", tmp_path, parallel_points=list(JOIN_POINTS))
    labels = _labels(run)
    seen = _seen(run)
    # the newest checkpoint holds b2's request alone: the recovery asks it again
    assert seen["partly"]["steps"][1:3] == ["b1 answered: paused, asking b2",
                                            "recovered by latest-checkpoint: paused, asking b2"]
    for path in ("parallel:partly/latest-checkpoint", "parallel:crash@join.begin/latest-checkpoint"):
        assert {prop: labels[(path, prop)] for prop in ("EO", "CO", "LV")} == dict.fromkeys(("EO", "CO", "LV"), "✓")
    # killed after the join's effect: the newest checkpoint is from before the join's superstep, which runs
    # again; agent-framework says nothing of it (U, as for the two-step workflow's kill after e2)
    assert seen["crash@join.effect"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 2}
    path = "parallel:crash@join.effect/latest-checkpoint"
    assert {prop: labels[(path, prop)] for prop in ("EO", "CO", "LV")} == {"EO": "U", "CO": "✓", "LV": "✓"}


def test_google_adk_gathers_two_asking_branches_with_its_join_node(tmp_path: Path) -> None:
    """Google ADK (its side environment): s1 fans out to two branches, each a node asking with RequestInput
    under the branch's name and a node taking its answer, gathered by ADK's JoinNode before the join."""
    run = _registered("google_adk", tmp_path, recovery_modes=["resume-invocation", "resend-input"])
    labels = _labels(run)
    seen = _seen(run, by_mode=True)
    # b1's answer leaves b2's question open in the session (ADK asks nothing anew); the resumed invocation too
    assert seen["partly/resume-invocation"]["steps"][1:3] == ["b1 answered: paused, asking b2",
                                                               "recovered by resume-invocation: paused, asking b2"]
    for path in ("parallel:partly/resume-invocation", "parallel:crash@join.begin/resume-invocation"):
        assert {prop: labels[(path, prop)] for prop in ("EO", "CO", "LV")} == dict.fromkeys(("EO", "CO", "LV"), "✓")
    # killed after the join's effect, the resumed invocation runs the join node again: at-least-once, stated
    assert seen["crash@join.effect/resume-invocation"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 2}
    path = "parallel:crash@join.effect/resume-invocation"
    assert {prop: labels[(path, prop)] for prop in ("EO", "CO", "LV")} == {"EO": "D", "CO": "✓", "LV": "✓"}
    # the input sent again starts a new invocation: s1 again, both branches ask again and fire again once answered
    assert seen["partly/resend-input"]["effects"] == {"e1": 2, "e_b1": 2, "e_b2": 1, "e_join": 1}
    assert {prop: labels[("parallel:partly/resend-input", prop)] for prop in ("EO", "CO", "LV")} == {
        "EO": "U", "CO": "U", "LV": "✓"}


def test_openai_agents_two_parallel_approval_gated_tool_calls(tmp_path: Path) -> None:
    """OpenAI Agents SDK (its side environment): the scripted model calls both branches' approval-gated tools
    in one response; one call approved alone on the restored RunState, the other stays pending."""
    run = _registered("openai_agents", tmp_path, recovery_modes=["run-state", "session"])
    labels = _labels(run)
    seen = _seen(run, by_mode=True)
    # b2's approval stays pending in the stored state and in the session's rerun alike
    for mode in ("run-state", "session"):
        assert seen[f"partly/{mode}"]["steps"][1:3] == ["b1 answered: paused, asking b2",
                                                         f"recovered by {mode}: paused, asking b2"]
        assert {prop: labels[(f"parallel:partly/{mode}", prop)] for prop in ("EO", "CO", "LV")} == dict.fromkeys(
            ("EO", "CO", "LV"), "✓")
    # killed in the join: the application's newest RunState is the one stored before b2's answer, so the
    # run-state recovery asks b2 again and its answer fires e_b2 a second time (no SDK sentence: U)
    assert seen["crash@join.begin/run-state"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 2, "e_join": 1}
    assert {prop: labels[("parallel:crash@join.begin/run-state", prop)] for prop in ("EO", "CO", "LV")} == {
        "EO": "U", "CO": "U", "LV": "✓"}
    # the session kept b2's tool output: a rerun on it goes straight to the join, which runs again after its effect
    assert seen["crash@join.begin/session"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 1}
    assert seen["crash@join.effect/session"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 2}
    assert {prop: labels[("parallel:crash@join.effect/session", prop)] for prop in ("EO", "CO", "LV")} == {
        "EO": "U", "CO": "✓", "LV": "✓"}


def test_strands_two_interrupting_tool_calls_answered_one_at_a_time(tmp_path: Path) -> None:
    """Strands Agents: the scripted model calls both branches' tools in one message, each interrupting under the
    branch's name; one interrupt answered alone (one interruptResponse), the other stays in the agent's state."""
    run = _registered("strands", tmp_path)
    labels = _labels(run)
    seen = _seen(run)
    # the session's interrupt state keeps b2's interrupt open after b1's answer, and a fresh agent finds it
    assert seen["partly"]["steps"][1:3] == ["b1 answered: paused, asking b2", "recovered by session: paused, asking b2"]
    for path in ("parallel:partly/session", "parallel:crash@join.begin/session"):
        assert {prop: labels[(path, prop)] for prop in ("EO", "CO", "LV")} == dict.fromkeys(("EO", "CO", "LV"), "✓")
    # killed after the join tool's effect: the restored conversation has no result for the join's call, which
    # agent() executes again (e_join twice); left uncited, as a trailing tool call run again is (U)
    assert seen["crash@join.effect"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 2}
    assert {prop: labels[("parallel:crash@join.effect/session", prop)] for prop in ("EO", "CO", "LV")} == {
        "EO": "U", "CO": "✓", "LV": "✓"}


@pytest.mark.parametrize("adapter, says", [
    ("probes.frameworks.crewai.adapter:CrewAIAdapter", "one pending human feedback per flow"),
    ("probes.frameworks.pydantic_graph.adapter:PydanticGraphAdapter", "one next node at a time"),
])
def test_the_frameworks_without_the_parallel_workflow_say_why(adapter: str, says: str, tmp_path: Path) -> None:
    """n/a with the adapter's reason: measured (CrewAI) or read from the installed source (pydantic-graph)."""
    from probes.kit.protocols import Probe, Target, parallel
    from probes.kit.suite import adapter_class

    cls = adapter_class(adapter)
    probe = Probe(Target(adapter, cls, cls.backends[0]), tmp_path, lambda name: None)
    verdicts = parallel(probe, {"of": "partly", "mode": cls.recovery_modes[0]})
    assert {v.label.value for v in verdicts} == {"n/a"} and len(verdicts) == 3
    assert all(says in v.evidence["why"] for v in verdicts)


def test_agno_two_user_input_tool_calls_in_one_step_answered_one_at_a_time(tmp_path: Path) -> None:
    """agno (its side environment): Parallel refuses human review, so the branches are two user-input tools one
    step's agent calls in one response; one tool's input given alone, continue_run pauses again on the other."""
    run = _registered("agno", tmp_path)
    labels = _labels(run)
    seen = _seen(run)
    assert seen["partly"]["steps"][1:3] == ["b1 answered: paused, asking b2",
                                            "recovered by continue-run: paused, asking b2"]
    assert {prop: labels[("parallel:partly/continue-run", prop)] for prop in ("EO", "CO", "LV")} == dict.fromkeys(
        ("EO", "CO", "LV"), "✓")
    # Agno stores the run at its pauses and its end: killed in the join, the stored run is the pause asking b2,
    # the recovery asks b2 again and its second answer fires e_b2 again (uncited: U)
    for point in JOIN_POINTS:
        assert seen[f"crash@{point}"]["steps"][4] == "recovered by continue-run: paused, asking b2"
        assert seen[f"crash@{point}"]["effects"]["e_b2"] == 2
        assert {prop: labels[(f"parallel:crash@{point}/continue-run", prop)] for prop in ("EO", "CO", "LV")} == {
            "EO": "U", "CO": "U", "LV": "✓"}


def test_pydantic_ai_two_deferred_approvals_answered_one_at_a_time_inside_dbos(tmp_path: Path) -> None:
    """pydantic-ai (its side environment): the scripted model calls both branches' approval-gated tools in one
    response; the DBOS workflow parks in recv once per branch, keeping b1's consumed answer until b2's arrives
    (pydantic-ai refuses a DeferredToolResults that approves one of two calls), then approves both."""
    run = _registered("pydantic_ai", tmp_path)
    labels = _labels(run)
    seen = _seen(run)
    # a launch replays the consumed recv of b1's answer and waits again for b2's
    assert seen["partly"]["steps"][1:3] == ["b1 answered: paused, asking b2", "recovered by launch: paused, asking b2"]
    for path in ("parallel:partly/launch", "parallel:crash@join.begin/launch"):
        assert {prop: labels[(path, prop)] for prop in ("EO", "CO", "LV")} == dict.fromkeys(("EO", "CO", "LV"), "✓")
    # killed after the join tool's effect (a DBOS step whose output was not recorded): run again (uncited: U)
    assert seen["crash@join.effect"]["effects"] == {"e1": 1, "e_b1": 1, "e_b2": 1, "e_join": 2}
    assert {prop: labels[("parallel:crash@join.effect/launch", prop)] for prop in ("EO", "CO", "LV")} == {
        "EO": "U", "CO": "✓", "LV": "✓"}
