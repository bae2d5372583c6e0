"""LangGraph's checkpoint validity (CV) under the kit: a node writes a value its pydantic state forbids.

The paper's LangGraph campaign measured CV (the #6491 class) with a graph of its own, in one
process, and typed its verdict from what it saw. Here the same question is a kit protocol: the
adapter's workflow variant ``invalid-write`` (``WORKFLOW_ENV``) is the kit's workflow with a pydantic
state declaring ``items: list[str]`` and one more node between the kit's two steps:

* ``s1`` runs the kit's first step (effect ``e1``) and appends ``"ok"``;
* ``write`` appends ``None`` -- the schema-invalid write (LangGraph validates a pydantic state only
  on the first node's input, LG-21, so nothing stops it at the write);
* ``s2`` is the kit's pausing step (``before_pause``, ``interrupt()``, ``step2``).

Every operation runs in a fresh process through the kit's ``Run``. After the start, a fresh
process reads every checkpoint and pending write of the thread straight from the saver
(``durable_items``: the raw blobs, not LangGraph's state reads, which validate) and tells which hold
a value the declared model refuses; that is recorded as a PERSIST event marked ``valid: False``, so
the kit's judge (``Judge.valid_state``) decides CV from the history alone and a re-judgement of the
receipt decides it again the same way. Path ``write:invalid-state``, as pydantic-graph's own
``invalid_write`` names it, so the matrix reads the two frameworks' cells alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from probes.core.checker import Property, Verdict
from probes.core.errors import HarnessError
from probes.core.history import Kind
from probes.core.portable import portable_text
from probes.kit import runtime
from probes.kit.adapter import Capability
from probes.frameworks.langgraph.saver import THREAD
from probes.kit.protocols import Probe, _needs, ended, on_variant

if TYPE_CHECKING:
    from probes.frameworks.langgraph.adapter import StockSaverAdapter

INVALID_WRITE = "invalid-write"  # the adapter's workflow variant (``WORKFLOWS``) this protocol runs
INVALID_PATH = "write:invalid-state"
FIELD, VALUE = "items", None  # the declared ``list[str]`` field and the value the ``write`` node appends to it
READ = "read"  # the status of ``durable_items`` (neither paused nor completed: the kit's child records no event)


class State(BaseModel):
    """The variant's declared state model: ``items`` is a list of strings, so ``None`` in it is invalid.
    ``out`` carries the kit's outcome (``SaverAdapter._invoke`` reads it) and takes the kit's start input."""

    items: list[str] = []
    out: str = ""


def build_invalid_write(adapter: StockSaverAdapter) -> Any:
    """The ``invalid-write`` workflow compiled over ``adapter._saver``: the kit's steps around the write
    of ``None`` into ``items``, so the kit's history, oracles and the adapter's ``start``/``resume``
    behave as on the kit's own workflow."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def s1(state: State) -> dict[str, Any]:
        return {"out": runtime.step1(), FIELD: state.items + ["ok"]}

    def write(state: State) -> dict[str, Any]:
        return {FIELD: state.items + [VALUE]}  # the schema-invalid write

    def s2(state: State) -> dict[str, Any]:
        runtime.before_pause()
        return {"out": runtime.step2(interrupt("answer?")), FIELD: state.items + ["done"]}

    graph = StateGraph(State)
    previous = START
    for name, body in (("s1", s1), ("write", write), ("s2", s2)):
        graph.add_node(name, body)
        graph.add_edge(previous, name)
        previous = name
    graph.add_edge(previous, END)
    return graph.compile(checkpointer=adapter._saver)


def _invalid(items: Any) -> bool:
    """Whether ``items`` is a value of ``FIELD`` the declared model refuses."""
    try:
        State.model_validate({FIELD: items})
    except ValidationError:
        return True
    return False


def validator(checkpoint: dict[str, Any]) -> None:
    """The workflow's declared state model as a checkpoint validator (a REMIT build's ``validator=``, which
    raises before persisting when it raises): a checkpoint's ``items`` must be a ``list[str]``."""
    values = checkpoint.get("channel_values", {})
    if FIELD in values:
        State.model_validate({FIELD: values[FIELD]})


def _outcome(read: Any) -> str:
    """A LangGraph read's outcome in words (deterministic: no ids, a raise by its first line)."""
    try:
        read()
    except Exception as exc:  # the framework's refusal to read the thread: an observation, not a verdict
        return f"raised {type(exc).__name__}: {portable_text(str(exc)).splitlines()[0] if str(exc) else ''}"
    return "ok"


def durable_items(adapter: StockSaverAdapter) -> dict[str, Any]:
    """Every value of ``FIELD`` durable on the thread, oldest checkpoint first, read raw from the saver
    (``list``: each checkpoint's ``channel_values`` and its pending writes), each named by the
    checkpoint's step and source (no ids); which of them the declared model refuses; and what
    LangGraph's own reads of the thread (``get_state``, ``get_state_history``) do afterwards."""
    durable, invalid = [], []
    for tup in reversed(list(adapter._saver.list(THREAD))):
        at = f"checkpoint step {tup.metadata.get('step')} ({tup.metadata.get('source')})"
        values = tup.checkpoint.get("channel_values", {})
        found = [(f"{at}: {FIELD}", values[FIELD])] if FIELD in values else []
        found += [(f"{at}, pending write: {FIELD}", value)
                  for _task, channel, value in tup.pending_writes or [] if channel == FIELD]
        for where, value in found:
            durable.append(f"{where} = {value!r}")
            if _invalid(value):
                invalid.append(f"{where} = {value!r}")
    app = adapter._app()
    reads = {"get_state": _outcome(lambda: app.get_state(THREAD)),
             "get_state_history": _outcome(lambda: list(app.get_state_history(THREAD)))}
    return {"status": READ, "durable": durable, "invalid": invalid, "reads": reads}


def invalid_write(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """The workflow's own node appends ``None`` to the declared ``list[str]``: refused at the write, or
    persisted? What became durable is read raw from the saver by a fresh process and recorded as a
    PERSIST event marked invalid; then a pause the run reached is answered, or a run that raised is
    recovered the documented way (``invoke(None)``), to show what the stored state does to the thread."""
    from probes.frameworks.langgraph.adapter import WORKFLOW_ENV  # here: the adapter imports this module

    if why := _needs(p, Capability.PAUSE, Capability.RECOVER):
        return [p.judge.not_applicable(Property.CV, INVALID_PATH, why)]
    cls = p.target.cls
    answer, mode = cls.answers[0], cls.recovery_modes[0]
    run = on_variant(p, WORKFLOW_ENV, INVALID_WRITE).run("run")  # the same probe, its processes on the variant
    run.note(Kind.START, detail={"workflow": INVALID_WRITE})
    first = run.op("start", "start")
    if first.get("status") not in ("paused", "raised"):
        raise HarnessError(f"the invalid-write workflow neither paused nor raised: {ended(first)}")
    seen = run.op("read", "durable_items")
    if seen.get("status") != READ:
        raise HarnessError(f"the saver's checkpoints could not be read raw: {ended(seen)}")
    if seen["invalid"]:  # seen in the saver once the start ended: the event is the observation, after the process's own
        run.note(Kind.PERSIST, detail={"what": "graph state", "valid": False, "documents": seen["invalid"],
                                       "field": FIELD, "declared": "list[str]", "value": repr(VALUE),
                                       "seen": "in the saver after the start ended"})
    if first.get("status") == "paused":
        then, how = run.answer("answer", first.get("handle"), answer), "answering the pause"
    else:
        then, how = run.recover("recover", mode, answer), f"recovering by {mode}"
    p.observations["invalid_write"] = {"start": ended(first), "durable": seen["durable"], "invalid": seen["invalid"],
                                       "reads_after_start": seen["reads"], "then": f"{how}: {ended(then)}"}
    what = (f"node write appended {VALUE!r} to the declared list[str] field {FIELD!r} (invalid in the saver: "
            f"{'; '.join(seen['invalid']) or 'nothing'}); the start {ended(first)}; {how} {ended(then)}")
    return [p.judge.valid_state(INVALID_PATH, p.read(), what)]
