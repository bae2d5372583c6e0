"""LlamaIndex Workflows' own protocols: the paper campaign's cells the kit's generic protocols lack,
and the ``wait_for_event`` pause as a variant every applicable kit protocol runs on.

The kit drives any framework through the same five operations. The paper's LlamaIndex
campaign also measured what only this framework has: two ways to pause (an input request
*between* steps, the kit's workflow, and ``ctx.wait_for_event`` *inside* a step), answers sent
back to back into one restored run, a store value no serializer encodes, and named edits of
the serialized context. Each protocol here records its history through the kit
(``probes.kit.protocols.Run``) and is decided by the kit's judge (``probes.kit.judge``), so its
verdicts are labelled from the adapter's citations alone and can be re-judged from the receipt
like every kit verdict:

* ``wait_for_event`` (paths ``wait:<kit path>``): a kit protocol (``VARIANT_PROTOCOLS``) run on
  the adapter's ``wait_for_event`` variant, whose one step does ``s1``'s work and then waits; the
  step replays from its top when the answer arrives (LI-3), so ``s1``'s effect runs again. The
  plan (``plan``) gives one probe per cell of each selected protocol, as on the split steps.
* ``in_process`` (``in-process``): a run answered from its own event stream, in the process that
  asked, no snapshot restored: EO and LV (PC is n/a: nothing was recovered).
* ``double`` (``double-answer``, ``double-answer:step-appended``): two different answers sent
  back to back into one restored run, on the kit's workflow (the answered step ends the run) and
  on one with a step after the answered step (as the paper campaign's workflow had). CO counts
  the gated effect; LV asks for the first answer's result (the paper's "first wins").
* ``unserialisable`` (``store:unserialisable``, CV): ``s1`` puts an ``asyncio.Lock`` into
  ``ctx.store``; is the snapshot refused loudly, and nothing unreadable made durable?
* ``forgeries`` (``tamper:<name>``): the paper campaign's named edits of the paused snapshot
  (``EDITS``), each answered from a fresh process and decided as the kit's tamper protocol decides
  an edit (``Judge.tampered``): invalid under the framework's own model (``state_valid``, the
  pydantic ``SerializedContext``) a CV question, else the "undetected forgery" row. Three of them
  coincide with generic edits of the kit's tamper protocol (``removed-state``, ``removed-workers``,
  ``not-running`` are ``drop:state``, ``drop:workers``, ``flip:is_running``); they keep the paper's
  names so its rows read the same.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Mapping

from probes.core.campaign import ProbeSpec
from probes.core.checker import Property, Verdict
from probes.core.errors import HarnessError
from probes.core.history import Kind
from probes.kit.adapter import Capability
from probes.kit.protocols import Probe, _isolated, _needs, ended
from probes.kit.protocols import on_variant as kit_on_variant
from probes.kit.runtime import STEPS
from probes.kit.suite import Protocol, kit_plan
from probes.kit.variants import Variant
from probes.frameworks.llamaindex.adapter import UNSERIALISABLE, UNSERIALISABLE_KEY, WAIT_FOR_EVENT, WORKFLOW_ENV

WAIT = WAIT_FOR_EVENT  # the protocol that runs kit protocols on the adapter's variant of that name
WAIT_PREFIX = "wait:"  # what the variant's verdict paths begin with
# The protocols the wait_for_event variant runs (its workflow is the original one, asked once): not
# fork and race (their paths are fixed inside the kit's judge and race cell), not tamper, save-kill,
# stall, partition or exhaustive (sweeps of the split steps' own snapshots and saves), not change and
# pause_twice (other workflows), not this module's double (two answers, the split steps' question).
VARIANT_PROTOCOLS = ("baseline", "crash", "parkkill", "stray", "answers", "in_process")
WAIT_VARIANT = Variant(protocol=WAIT, env=WORKFLOW_ENV, workflow=WAIT_FOR_EVENT, prefix=WAIT_PREFIX,
                       runs=VARIANT_PROTOCOLS)
IN_PROCESS_PATH = "in-process"
DOUBLE_PATH = "double-answer"
STEP_AFTER = "step-appended"  # runtime.SHAPES: a step after the answered one, like the paper campaign's s3
STORE_PATH = "store:unserialisable"
ANSWERED = STEPS[-1]  # the kit workflow's step that takes the answer (its worker in the snapshot)
FORGED = "forged"  # the answer the forged-answer edit plants
EDITS = ("wrong-version", "queue-not-a-list", "bad-state-value", "removed-state", "removed-workers",
         "not-running", "forged-answer")


# --- the variant: the kit's protocols on another workflow, its paths named after it ----------------

def on_variant(p: Probe, workflow: str, prefix: str = "") -> Probe:
    """``p`` with every process building the adapter's workflow variant ``workflow``; with ``prefix``,
    its verdict paths named after the variant (the kit's ``on_variant`` over ``RC_LI_WORKFLOW``)."""
    return kit_on_variant(p, WORKFLOW_ENV, workflow, prefix)


def plan(params: Mapping[str, Any], names: tuple[str, ...]) -> list[ProbeSpec]:
    """The kit's plan over ``names``, its one ``wait_for_event`` cell replaced by a probe per cell of each
    selected protocol the variant runs (all of them when none is selected): ``wait_for_event.<cell id>``."""
    return WAIT_VARIANT.plan(params, kit_plan(params, names), lambda ps: kit_plan(ps, names))


# --- LlamaIndex's own protocols -----------------------------------------------------------------

def _ended(status: dict[str, Any]) -> str:
    """``probes.kit.protocols.ended``, without the memory addresses an object's repr in a message carries
    (the unserialisable store's error names its lock by address)."""
    return re.sub(r" at 0x[0-9a-f]+", "", ended(status))


def in_process(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """A run answered from its own event stream when it asks, in the process that asked: no snapshot is
    restored. Every effect exactly once, and the run completes with the answer's result."""
    path = IN_PROCESS_PATH
    if why := _needs(p, Capability.PAUSE):
        return [p.judge.not_applicable(prop, path, why) for prop in (Property.EO, Property.LV)]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    run.note(Kind.START)
    status = run.op("live", "answer_in_process", answer=answer)  # records its pause and its answer as they happen
    h = p.read()
    p.observations["in_process"] = {"status": _ended(status), "input_requests": status.get("input_requests"),
                                    "effects": dict(sorted(h.effect_counts().items()))}
    what = "answered from the event stream in the process that asked, no snapshot restored"
    return [p.judge.effects_once(path, h, what),
            p.judge.not_applicable(Property.PC, path, "one process, nothing recovered: no durable prefix to keep "
                                                      "(a step's work done again is EO's)"),
            p.judge.live(path, h, what, p.target.cls.result(answer))]


def double(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Two different answers sent back to back into one restored run, on the kit's workflow and on one with
    a step after the answered step: CO (the gated effect at most once) and LV (completed with the first
    answer's result: the first wins)."""
    cls = p.target.cls
    a, b = cls.answers
    verdicts: list[Verdict] = []
    for code, path in (("v1", DOUBLE_PATH), (STEP_AFTER, f"{DOUBLE_PATH}:{STEP_AFTER}")):
        caps = (Capability.PAUSE,) if code == "v1" else (Capability.PAUSE, Capability.CODE_CHANGE)
        why = _needs(p, *caps) or (None if code == "v1" or code in cls.code_changes else
                                   f"the adapter builds its workflow with {', '.join(cls.code_changes)} only")
        if why:
            verdicts += [p.judge.not_applicable(prop, path, why) for prop in (Property.CO, Property.LV)]
            continue
        sub, run = _isolated(p, code)
        run.code = code  # every process of this run builds that workflow
        handle = run.start().get("handle")
        for answer in (a, b):  # the run's steps are in its shape (runtime.SHAPES), named in the detail
            run.note(Kind.ANSWER, value=answer, detail={"addressed": True, "back_to_back": True, "shape": code})
        status = run.op("answers", "resume_back_to_back", handle=handle, answers=[a, b])
        h = sub.read()
        consumed = [e.value for e in h.of(Kind.CONSUME)]
        sub.observations["double"] = {"workflow": code, "status": _ended(status), "consumed": consumed,
                                      "effects": dict(sorted(h.effect_counts().items()))}
        what = (f"{a!r} and {b!r} sent back to back into one restored run ("
                + ("the answered step ends the run" if code == "v1" else "a step after the answered one") + ")")
        verdicts += [sub.judge.gated_once(path, h, what), sub.judge.live(path, h, what, cls.result(a))]
    return verdicts


def unserialisable(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """``s1`` puts an ``asyncio.Lock`` into ``ctx.store`` before the pause: the snapshot must be refused
    loudly, and nothing it could not encode made durable. A snapshot written anyway is read back and
    recorded as a PERSIST event marked invalid."""
    if why := _needs(p, Capability.PAUSE):
        return [p.judge.not_applicable(Property.CV, STORE_PATH, why)]
    q = on_variant(p, UNSERIALISABLE)
    run = q.run("run")
    run.note(Kind.START, detail={"workflow": UNSERIALISABLE})
    first = run.op("start", "start")
    if first.get("status") not in ("paused", "raised"):
        raise HarnessError(f"the unserialisable-store workflow neither paused nor refused: {_ended(first)}")
    inst = p.target.cls(run.workdir, p.target.backend, run.store)
    written = [path.name for path in inst.state_paths()]
    if written:  # seen on disk once the start ended: what the snapshot holds for the lock
        data = inst.load_state(inst.state_paths()[-1]).get("state", {}).get("state_data", {}).get("_data", {})
        run.note(Kind.PERSIST, detail={"what": "ctx.to_dict() snapshot", "valid": False, "key": UNSERIALISABLE_KEY,
                                       "stored_as": data.get(UNSERIALISABLE_KEY), "seen": "on disk after the start"})
    p.observations["unserialisable"] = {"start": _ended(first), "snapshots": len(written)}
    what = (f"an asyncio.Lock in ctx.store at the pause: the start {_ended(first)}; "
            f"{len(written)} snapshot(s) on disk")
    return [q.judge.valid_state(STORE_PATH, p.read(), what)]


def edit(doc: Any, name: str, forged_event: str | None = None) -> Any:
    """The paper campaign's named edit ``name`` of a paused snapshot (``ctx.to_dict()``), on a copy."""
    d = copy.deepcopy(doc)
    if name == "wrong-version":  # a format version the framework does not have
        d["version"] = 99
    elif name == "queue-not-a-list":  # the answered step's worker queue of the wrong type
        d["workers"][ANSWERED]["queue"] = 42
    elif name == "bad-state-value":  # a store value that is not the serializer's JSON
        d["state"]["state_data"]["_data"]["outcome"] = "{not json"
    elif name == "removed-state":
        del d["state"]
    elif name == "removed-workers":
        del d["workers"]
    elif name == "not-running":
        d["is_running"] = False
    elif name == "forged-answer":  # an answer nobody gave, queued for the answered step
        if forged_event is None:
            raise ValueError("the forged-answer edit needs the serialized event it plants")
        d["workers"][ANSWERED]["queue"] = [{"event": forged_event}]
    else:
        raise ValueError(f"unknown edit {name!r}; choose from {', '.join(EDITS)}")
    return d


def forgeries(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Each named edit of the paused snapshot, then the pause answered from a fresh process. Whether an
    edit is invalid is the framework's own model's answer (the adapter's ``state_valid``, over the edits
    of a first run's snapshot)."""
    if why := _needs(p, Capability.PAUSE, Capability.TAMPER):
        return [p.judge.not_applicable(Property.CV, f"tamper:{name}", why) for name in EDITS]
    cls = p.target.cls
    answer = cls.answers[0]
    _, shape = _isolated(p, "shape")
    shape.start()
    inst = cls(shape.workdir, p.target.backend, shape.store)
    doc0 = inst.load_state(inst.state_paths()[-1])
    forged = shape.op("forge", "serialized_answer", answer=FORGED)["event"]
    models = {name: shape.op(f"valid-{name}", "state_valid", doc=edit(doc0, name, forged)) for name in EDITS}
    p.observations["forgeries"] = {name: {k: m[k] for k in ("model", "valid", "error") if k in m}
                                   for name, m in models.items()}
    verdicts: list[Verdict] = []
    for name in EDITS:
        sub, run = _isolated(p, name)
        handle = run.start().get("handle")
        inst = cls(run.workdir, p.target.backend, run.store)
        target = inst.state_paths()[-1]
        inst.save_state(target, edit(inst.load_state(target), name, forged))
        run.note(Kind.TAMPER, detail={"edit": name})
        run.answer("answer", handle, answer)
        model = models[name]
        shown = (f"{model['model']} rejects it: {model['error']}" if not model["valid"] else
                 f"{model['model']} accepts it")
        verdicts += sub.judge.tampered(f"tamper:{name}", sub.read(), not model["valid"], cls.result(answer), shown)
    return verdicts


PROTOCOLS: dict[str, Protocol] = {"in_process": in_process, "double": double, "unserialisable": unserialisable,
                                  "forgeries": forgeries}
PROTOCOLS[WAIT] = WAIT_VARIANT.protocol_of(PROTOCOLS)  # the kit's protocols and these on the wait_for_event variant
