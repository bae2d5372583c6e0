"""LangGraph's own protocols under the kit: the paper campaign's cells the kit's protocols lack.

* ``functional``: the kit's protocols on the same workflow written in LangGraph's functional API
  (``@entrypoint`` and ``@task``, ``interrupt()`` in the entrypoint: the adapter's ``RC_LG_API``
  variant, ``probes.frameworks.langgraph.saver``), paths ``functional:<kit path>``. The paper's campaign
  measured both API shapes; on the functional one a crash inside a task is recovered from the tasks'
  checkpointed results.
* ``answer_by_checkpoint``: on the functional API, the pause answered by ``Command(resume=v)``
  addressed to the pause's own checkpoint id (the adapter answers the current pause on the thread
  alone, as the documentation does): EO and LV, path ``functional:answer-by-checkpoint``.
* ``fork_ways``: the answered pause answered again with the other answer, addressed the ways
  LangGraph's API offers besides the kit's plain ``Command(resume=v)`` at the pause's checkpoint (the
  kit's ``fork``): ``Command(resume={interrupt_id: v})`` at that checkpoint (``fork:resume-map``, both
  answers sent so), a fork of the checkpoint by ``update_state`` resumed with ``v``
  (``fork:update-state``), and a replay of the checkpoint (``invoke(None)`` at it) followed by
  ``Command(resume=v)`` on the thread (``fork:replay-then-resume``). Each is decided by the kit's FD
  judgement (``Judge.fork``) against the outcome a run answered ``v`` in the first place reaches.
* ``invalid_write`` (CV, ``probes.frameworks.langgraph.invalid_write``): a node appends ``None`` to a pydantic
  ``items: list[str]``; refused at the write, or durable?
* ``sequential`` and ``fanout`` (CO, EO, LV, ``probes.frameworks.langgraph.shapes``): two interrupts in one run,
  answered in turn across a restart, or in parallel branches answered by one resume map and then again.
"""

from __future__ import annotations

from typing import Any, Mapping

from probes.core.campaign import ProbeSpec
from probes.core.checker import Property, Verdict
from probes.core.history import Kind
from probes.kit.adapter import Capability
from probes.frameworks.langgraph.saver import API_ENV, FORK_WAYS, FUNCTIONAL
from probes.kit.protocols import Probe, _isolated, _needs
from probes.kit.suite import Protocol, kit_plan
from probes.kit.variants import Variant
from probes.frameworks.langgraph import shapes
from probes.frameworks.langgraph.invalid_write import invalid_write
from probes.frameworks.langgraph.intent import intent

FUNCTIONAL_API = Variant(
    protocol="functional", env=API_ENV, workflow=FUNCTIONAL, prefix="functional:",
    # not fork and race (their paths are fixed inside the kit's judge and race cell), nor tamper, save-kill,
    # exhaustive, stall, partition or change: sweeps of the saver's puts and deploys, measured on the graph
    # API's workflow (the functional API's task results are the saver's put_writes, which the kit does not hook)
    runs=("baseline", "crash", "parkkill", "stray", "answers", "pause_twice", "answer_by_checkpoint",
          "handler", "callback"))  # the last two: a try/except around a task, code before interrupt() in the entrypoint


def answer_by_checkpoint(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """No fault; the pause answered by ``Command(resume=v)`` addressed to its own checkpoint id. Every
    effect must fire exactly once, and the run complete with ``f(v)``."""
    path = "answer-by-checkpoint"
    if why := _needs(p, Capability.PAUSE):
        return [p.judge.not_applicable(prop, path, why) for prop in (Property.EO, Property.LV)]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    handle = run.start().get("handle")
    run.note(Kind.ANSWER, value=answer, detail={"addressed": True, "way": "checkpoint"})
    done = run.op("answer", "address", way="checkpoint", handle=handle, answer=answer, first=True)
    h = p.read()
    what = f"the pause answered at its checkpoint id: {done.get('status')}"
    return [p.judge.effects_once(path, h, what), p.judge.live(path, h, what, p.target.cls.result(answer))]


def fork_ways(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """The answered pause answered again with the other answer, each way of ``FORK_WAYS`` on a run of
    its own; FD is decided against the outcome a run answered that answer in the first place reaches."""
    paths = [f"fork:{way}" for way in FORK_WAYS]
    if why := _needs(p, Capability.PAUSE, Capability.FORK):
        return [p.judge.not_applicable(Property.FD, path, why) for path in paths]
    a, b = p.target.cls.answers
    _, ref = _isolated(p, "reference")
    expected = ref.to_completion(ref.start(), b, "answer").get("outcome")
    verdicts = []
    for way, path in zip(FORK_WAYS, paths):
        sub, run = _isolated(p, way)
        handle = run.start().get("handle")
        run.note(Kind.ANSWER, value=a, detail={"addressed": True, "way": way})
        first = run.op("first", "address", way=way, handle=handle, answer=a, first=True)
        run.note(Kind.FORK, value=b, detail={"intent": "fork", "at": "the answered pause", "way": way})
        run.note(Kind.ANSWER, value=b, detail={"addressed": True, "way": way})
        second = run.op("fork", "address", way=way, handle=handle, answer=b, first=False)
        sub.observations["fork"] = {"first": first.get("status"), "second": second.get("status"),
                                    "second_error": second.get("error")}
        verdicts.append(p.judge.fork(sub.read(), expected, path=path))
    return verdicts


PROTOCOLS: dict[str, Protocol] = {"fork_ways": fork_ways, "answer_by_checkpoint": answer_by_checkpoint,
                                   "invalid_write": invalid_write,  # CV, probes.frameworks.langgraph.invalid_write
                                   "sequential": shapes.sequential, "fanout": shapes.fanout,  # two interrupts in one run
                                   "intent": intent}  # declared FORK / RETRY (probes.frameworks.langgraph.intent)
PROTOCOLS[FUNCTIONAL_API.protocol] = FUNCTIONAL_API.protocol_of(PROTOCOLS)


def plan(params: Mapping[str, Any], names: tuple[str, ...]) -> list[ProbeSpec]:
    """The kit's plan over ``names`` with the functional API's cell expanded into its protocols' cells."""
    return FUNCTIONAL_API.plan(params, kit_plan(params, names), lambda ps: kit_plan(ps, names))
