"""pydantic-graph's own protocols: the paper campaign's cells the kit's generic protocols lack.

The kit's protocols drive any framework through the same five operations; three cells of the
paper's pydantic-graph campaign need what only this framework has -- a pause that is *claimed*
(``load_next`` turns the ``'created'`` snapshot ``'pending'``) before its node runs, a state
model a step can write a value of the wrong type into, and a snapshot ``status`` an operator can
edit by hand. Each protocol records its history through the kit (``probes.kit.protocols.Run``)
and is decided by the kit's judge (``probes.kit.judge``), so its verdicts are labelled from the
adapter's citations alone and can be re-judged from the receipt like every kit verdict:

* ``claimed`` (LV, ``claimed-pause``): a process answering the pause is SIGKILLed right after
  ``iter_from_persistence`` claimed it, before the answered node ran; a fresh process recovers.
  Does the run complete?
* ``invalid_write`` (CV, ``write:invalid-state``): the workflow's first step writes a ``str``
  into a declared ``int`` field of the graph state (the adapter's ``invalid-write`` variant).
  Refused at the write (✓), or persisted (a violation)?
* ``status_reset`` (a named forgery, ``tamper:status-reset``): after a SIGKILL inside the answered
  step after its effect fired, the newest snapshot's ``status`` is set back to ``'created'`` by
  hand -- the repair an operator would try -- and the run is recovered. Judged as the kit's
  ``tamper`` protocol judges a type-valid edit: the "undetected forgery" row, never a property's ✓.
"""

from __future__ import annotations

from typing import Any

from probes.core.checker import Property, Verdict
from probes.core.errors import HarnessError
from probes.core.history import Kind
from probes.kit.adapter import Capability
from probes.kit.protocols import Probe, Run, _needs, ended, on_variant, state_model
from probes.kit.suite import Protocol
from probes.frameworks.pydantic_graph.adapter import (
    CLAIMED,
    INVALID_FIELD,
    INVALID_VALUE,
    INVALID_WRITE,
    WORKFLOW_ENV,
)

CLAIMED_PATH = "claimed-pause"
INVALID_PATH = "write:invalid-state"
RESET_PATH = "tamper:status-reset"
RESET_AT = "s2.effect"  # the kill the status reset repairs: inside the answered step, its effect fired


# --- reading the run's file, as the adapter locates and loads its durable documents -------------

def _documents(p: Probe, run: Run) -> list[tuple[str, Any]]:
    """Every durable document of ``run`` (a snapshot of the file), with its name, oldest first."""
    inst = p.target.cls(run.workdir, p.target.backend, run.store)
    return [(path, inst.load_state(path)) for path in inst.state_paths()]


def _node(doc: Any) -> str:
    """A snapshot's node: its ``node_id``, else (a node serialized without it) the prefix of the snapshot's id."""
    if doc.get("kind") != "node":
        return "End"
    node = doc.get("node")
    if isinstance(node, dict) and "node_id" in node:
        return str(node["node_id"])
    return f"{str(doc.get('id', '?')).partition(':')[0]} without node_id"


def snapshot_statuses(p: Probe, run: Run) -> list[str]:
    """``<node> <status>`` of every snapshot in the run's file, oldest first (no ids, no times)."""
    return [f"{_node(doc)} {doc.get('status', '-')}" for _, doc in _documents(p, run)]


def invalid_snapshots(p: Probe, run: Run) -> list[str]:
    """The snapshots whose state holds a non-``int`` in the declared ``int`` field ``INVALID_FIELD``,
    each as ``<document> (<node>, <status>)``."""
    def bad(doc: Any) -> bool:
        state = doc.get("state")
        value = state.get(INVALID_FIELD, 0) if isinstance(state, dict) else 0
        return isinstance(value, bool) or not isinstance(value, int)
    return [f"{path} ({_node(doc)}, {doc.get('status', '-')})" for path, doc in _documents(p, run) if bad(doc)]


def _killed(status: dict[str, Any], point: str) -> None:
    if status.get("status") != "killed":
        raise HarnessError(f"the answering process was not killed at {point}: {ended(status)}")


# --- the protocols -------------------------------------------------------------------------

def claimed(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """The pause claimed by a process that died before the answered node ran: can the run go on?"""
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER):
        return [p.judge.not_applicable(Property.LV, CLAIMED_PATH, why)]
    cls = p.target.cls
    answer, mode = cls.answers[0], cls.recovery_modes[0]
    run = p.run("run")
    handle = run.start().get("handle")
    _killed(run.answer("claim", handle, answer, park_at=CLAIMED), CLAIMED)
    after_claim = snapshot_statuses(p, run)
    recovered = run.recover("recover", mode, answer)
    status = run.to_completion(recovered, answer, "recover-answer")
    h = p.read()
    p.observations["claimed"] = {"statuses_after_claim": after_claim, "recovery": ended(recovered),
                                 "status": ended(status), "effects": h.effect_counts()}
    what = (f"the pause claimed by a process answering it, SIGKILLed before the answered node ran "
            f"(snapshots after the claim: {', '.join(after_claim)}; effects {h.effect_counts()}); "
            f"recovery by {mode} {ended(recovered)}")
    return [p.judge.live(CLAIMED_PATH, h, what, cls.result(answer))]


def invalid_write(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """The workflow's own step writes a ``str`` into the state's declared ``int`` field: refused at the
    write, or persisted? What became durable is read from the file and recorded as a PERSIST event
    marked invalid; a pause the run reached is then answered, to show what the stored state does."""
    if why := _needs(p, Capability.PAUSE):
        return [p.judge.not_applicable(Property.CV, INVALID_PATH, why)]
    answer = p.target.cls.answers[0]
    run = on_variant(p, WORKFLOW_ENV, INVALID_WRITE).run("run")  # the same probe, its processes on the variant
    run.note(Kind.START, detail={"workflow": INVALID_WRITE})
    first = run.op("start", "start")
    if first.get("status") not in ("paused", "raised"):
        raise HarnessError(f"the invalid-write workflow neither paused nor refused: {ended(first)}")
    found = invalid_snapshots(p, run)
    if found:  # seen in the file once the start ended: the event is the observation, after the process's own
        run.note(Kind.PERSIST, detail={"what": "graph state", "valid": False, "documents": found,
                                       "field": INVALID_FIELD, "declared": "int", "value": INVALID_VALUE,
                                       "seen": "in the file after the start ended"})
    then = run.answer("answer", first.get("handle"), answer) if first.get("status") == "paused" else None
    p.observations["invalid_write"] = {"start": ended(first), "invalid_documents": found,
                                       "answer": ended(then) if then else None}
    what = (f"S1 wrote {INVALID_VALUE!r} into the declared int field {INVALID_FIELD!r} (in the file: "
            f"{', '.join(found) or 'no snapshot'}); the start {ended(first)}"
            + (f"; answering the pause {ended(then)}" if then else ""))
    return [p.judge.valid_state(INVALID_PATH, p.read(), what)]


def status_reset(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Killed inside the answered step after its effect fired, the newest snapshot's status set back to
    ``'created'`` by hand, recovered. ``'created'`` is one of the statuses the snapshot model declares:
    the edit is type-valid, so it is a forgery (the kit's ``Judge.tampered`` with ``invalid=False``)."""
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER, Capability.TAMPER):
        return [p.judge.not_applicable(Property.CV, RESET_PATH, why)]
    cls = p.target.cls
    answer, mode = cls.answers[0], cls.recovery_modes[0]
    run = p.run("run")
    handle = run.start().get("handle")
    _killed(run.answer("answer", handle, answer, park_at=RESET_AT), RESET_AT)
    inst = cls(run.workdir, p.target.backend, run.store)
    newest = inst.state_paths()[-1]
    doc = inst.load_state(newest)
    _, shown = state_model(p, run, doc)
    inst.save_state(newest, {**doc, "status": "created"})
    run.note(Kind.TAMPER, detail={"edit": "status-reset", "snapshot": _node(doc), "from": doc.get("status"),
                                  "to": "created"})
    status = run.to_completion(run.recover("recover", mode, answer), answer, "recover-answer")
    h = p.read()
    p.observations["status_reset"] = {"reset": f"{_node(doc)} {doc.get('status')} -> created",
                                      "status": ended(status), "effects": h.effect_counts()}
    return p.judge.tampered(RESET_PATH, h, False, cls.result(answer), shown)


PROTOCOLS: dict[str, Protocol] = {"claimed": claimed, "invalid_write": invalid_write, "status_reset": status_reset}
