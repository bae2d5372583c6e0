"""Two interrupts in one run, on LangGraph's stock savers: the paper campaign's "CO sequential" and
"fan-out" cells as kit protocols.

The kit's own workflow pauses once. The paper's LangGraph campaign also measured a run that pauses
twice, so that consuming one answer must not re-fire the effect another answer gated:

* ``sequential``: ``g1`` then ``s2``, each ``interrupt()``-ing and firing its effect after its answer,
  answered one after the other, each answer from a fresh process (a restart between). Path
  ``sequential:restart-between``.
* ``fanout``: ``b1`` and ``s2`` as parallel branches from ``START``, each interrupting; both answered by
  one resume map ``Command(resume={interrupt_id: answer, ...})``, then the same map sent again once the
  run has completed (a stray). Path ``fan-out:resume-map``.

The node the paper called ``g2`` (the second gate) is the kit's pausing step ``s2`` here, so its
effect is the kit's gated effect ``e2``; the other gate (``g1``, ``b1``) fires ``e_<node>``. CO, as
the paper's campaign decided it, is each pause's gated effect at most once (the kit's ``gated_once``
over both gates); EO (``effects_once`` expecting both) asks each exactly once on completion; LV that
the run completes with ``s2``'s result for its answer.
"""

from __future__ import annotations

from typing import Any, Callable

from probes.core.checker import Property, Verdict
from probes.core.history import History, Kind
from probes.kit import runtime
from probes.kit.adapter import Capability
from probes.frameworks.langgraph.saver import THREAD, SaverAdapter
from probes.kit.protocols import Probe, _needs, ended, on_variant

SEQUENTIAL, FANOUT = "sequential", "fanout"  # the adapter's WORKFLOWS names (RC_LG_WORKFLOW)
SEQUENTIAL_PATH, FANOUT_PATH = "sequential:restart-between", "fan-out:resume-map"
FIRST_GATE = {SEQUENTIAL: "g1", FANOUT: "b1"}  # the gate besides s2 in each workflow
PROPS = (Property.EO, Property.CO, Property.LV)


def _asks(name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A node that asks ``name`` (the interrupt's value is the node's name, so a resume map can be keyed
    by it) and fires ``e_<name>`` after its answer: a gate that is not the kit's ``s2``. It records its
    begin before the interrupt, as the kit's ``before_pause`` does, because LangGraph runs the node again
    from its top when the answer arrives."""
    from langgraph.types import interrupt

    def node(state: dict[str, Any]) -> dict[str, Any]:
        runtime.record(Kind.STEP_BEGIN, step=name)
        answer = interrupt(name)
        runtime.record(Kind.CONSUME, step=name, value=answer)
        runtime._effect(name)  # e_<name>, into both oracles and the history
        runtime.record(Kind.STEP_END, step=name)
        return {}

    return node


def _s2(state: dict[str, Any]) -> dict[str, Any]:
    """The kit's pausing step ``s2`` as a node: its answer gates ``e2`` and gives the run's outcome."""
    from langgraph.types import interrupt

    runtime.before_pause()
    return {"out": runtime.step2(interrupt("s2"))}


def _graph(adapter: SaverAdapter, edges: tuple[tuple[str, str], ...]) -> Any:
    """A ``StateGraph`` of the gate ``g1``/``b1`` and ``s2`` wired by ``edges``, over the adapter's saver.
    Its state is the kit's (``out``, written by ``s2`` alone, so parallel branches never collide)."""
    from typing import TypedDict

    from langgraph.graph import StateGraph

    class State(TypedDict):
        out: str

    graph = StateGraph(State)
    for a, b in edges:
        for name in (a, b):
            if name not in graph.nodes and not name.startswith("__"):
                graph.add_node(name, _s2 if name == "s2" else _asks(name))
        graph.add_edge(a, b)
    return graph.compile(checkpointer=adapter._saver)


def build_sequential(adapter: SaverAdapter) -> Any:
    """``g1`` then ``s2``: two interrupts in sequence, one answer each."""
    from langgraph.graph import END, START

    return _graph(adapter, ((START, "g1"), ("g1", "s2"), ("s2", END)))


def build_fanout(adapter: SaverAdapter) -> Any:
    """``b1`` and ``s2`` in parallel from ``START``: two interrupts open at once, in one superstep."""
    from langgraph.graph import END, START

    return _graph(adapter, ((START, "b1"), (START, "s2"), ("b1", END), ("s2", END)))


class ResumeMap(SaverAdapter):
    """The adapter operation the fan-out needs: every open interrupt of the thread answered at once by
    one ``Command(resume={interrupt_id: answer})``, the way LangGraph documents answering parallel
    interrupts (a plain ``Command(resume=v)`` cannot say which interrupt ``v`` is for)."""

    def resume_map(self, answers: dict[str, Any], ids: dict[str, str] | None = None) -> dict[str, Any]:
        """Answer the thread's open interrupts with ``answers`` (by question, i.e. node name) in one resume
        map on the thread. ``ids``: the question -> interrupt id map an earlier call returned, sent again
        as it was (the stray, when the thread has no open interrupt left to read them from). Returns the
        status and the ``ids`` used; an open interrupt with no answer given is left out of the map, and
        LangGraph decides what that means."""
        from langgraph.types import Command

        if ids is None:
            ids = {str(i.value): i.id for i in self._app().get_state(THREAD).interrupts}
        resume = {ids[q]: answers[q] for q in sorted(ids) if q in answers}
        return {**self._invoke(Command(resume=resume)), "ids": ids, "asked": sorted(ids)}


def _workflow(p: Probe, name: str) -> Probe:
    """``p`` with every process building workflow ``name``, and the probe saying which steps it has and
    which one is gated (``observations["workflow"]``, read by trace validation)."""
    from probes.frameworks.langgraph.adapter import WORKFLOW_ENV  # imported on use: the adapter imports this module

    q = on_variant(p, WORKFLOW_ENV, name)
    q.observations["workflow"] = {"steps": [FIRST_GATE[name], "s2"], "gate": "s2"}
    return q


def _judged(p: Probe, path: str, h: History, what: str, gates: tuple[str, str], last: Any) -> list[Verdict]:
    """EO (both gated effects exactly once on completion), CO (each at most once) and LV (the run completed
    with ``f(last)``, the second gate's answer)."""
    return [p.judge.effects_once(path, h, what, gates), p.judge.gated_once(path, h, what, gates=gates),
            p.judge.live(path, h, what, p.target.cls.result(last))]


def sequential(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Two interrupts in sequence, ``g1`` answered ``a`` and then ``s2`` answered ``b``, each answer sent on
    the thread (``Command(resume=v)``, no checkpoint id) from a fresh process. Each gated effect must fire
    at most once (CO, over both), both exactly once on completion (EO), and the second answer
    must run the thread to its end with ``f(b)``."""
    path = SEQUENTIAL_PATH
    if why := _needs(p, Capability.PAUSE):
        return [p.judge.not_applicable(prop, path, why) for prop in PROPS]
    p = _workflow(p, SEQUENTIAL)
    a, b = p.target.cls.answers
    run = p.run("run")
    statuses = {"start": ended(run.start())}
    for gate, answer in (("g1", a), ("s2", b)):
        run.note(Kind.ANSWER, value=answer, detail={"addressed": False, "interrupt": gate, "workflow": SEQUENTIAL})
        statuses[gate] = ended(run.op(f"answer-{gate}", "resume", handle=None, answer=answer))
    h = p.read()
    fired = dict(sorted(h.effect_counts().items()))
    p.observations[SEQUENTIAL] = {**statuses, "effects": fired}
    what = (f"two interrupts answered in turn, a restart before each: after g1's answer the run was "
            f"{statuses['g1']}, after s2's {statuses['s2']}")
    return _judged(p, path, h, what, ("e_g1", "e2"), b)


def fanout(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Two parallel interrupts, ``b1`` and ``s2``, answered ``a`` and ``b`` by one resume map; then the same
    map sent again on the completed thread (a stray), each from a fresh process. Each branch's effect
    must fire at most once whatever was delivered (CO, over both; EO exactly once on completion), and the run must have
    completed with ``f(b)``."""
    path = FANOUT_PATH
    if why := _needs(p, Capability.PAUSE):
        return [p.judge.not_applicable(prop, path, why) for prop in PROPS]
    p = _workflow(p, FANOUT)
    a, b = p.target.cls.answers
    answers = {"b1": a, "s2": b}
    run = p.run("run")
    started = run.start()
    run.note(Kind.ANSWER, value=answers, detail={"addressed": False, "way": "resume-map", "workflow": FANOUT})
    done = run.op("answer", "resume_map", answers=answers)
    run.note(Kind.ANSWER, value=answers, detail={"addressed": False, "way": "resume-map", "stray": True,
                                                 "workflow": FANOUT})
    stray = run.op("stray", "resume_map", answers=answers, ids=done.get("ids"))
    h = p.read()
    fired = dict(sorted(h.effect_counts().items()))
    p.observations[FANOUT] = {"start": ended(started), "asked": done.get("asked"), "answer": ended(done),
                              "stray": ended(stray), "effects": fired}
    what = (f"two parallel interrupts ({', '.join(done.get('asked') or []) or 'none open'}) answered by one "
            f"resume map: {ended(done)}; the same map again: {ended(stray)}")
    return _judged(p, path, h, what, ("e_b1", "e2"), b)
