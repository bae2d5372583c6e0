"""How REMIT tells a resume read from a plain read, inside the saver (LangGraph 1.2: the releases
it is tested on are named on the book's REMIT API page).

A saver only receives ``config``. What LangGraph passes tells two of three facts:

* a read made by the execution loop carries ``configurable["__pregel_runtime"]``
  (a ``Runtime``); ``get_state`` / ``get_state_history`` / ``list`` do not -- so a
  state read can never take or block a claim;
* an explicit ``configurable["checkpoint_id"]`` is the caller addressing a checkpoint.

The third -- is this run a *resume* (``Command(resume=...)``), a fresh input or
``invoke(None)``? -- is not in the config. LangGraph reads the checkpoint in
``SyncPregelLoop.__enter__`` / ``AsyncPregelLoop.__aenter__``, whose ``self.input``
holds the command. REMIT looks up the calling frames (a bounded walk, a few frames)
for that loop object and reads ``loop.input``, the same test LangGraph itself applies
in ``_first`` (``isinstance(input, Command) and input.resume is not None``). Walking a
little further finds the compiled graph (``Pregel.stream``'s ``self``), whose builder
holds the state schema used as the default validator. If the frames are not found
(another LangGraph version), the read counts as plain: REMIT then behaves exactly like
stock, never worse -- and ``configurable["remit_resume"]=True`` forces the resume path.
"""

from __future__ import annotations

import contextlib
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from remit_ref.claims import NULL_TASK_ID, ResumeWrite
from remit_ref.core import INTERRUPT_CHANNEL, RESUME_CHANNEL

RUNTIME_KEY = "__pregel_runtime"
_MAX_DEPTH = 12


@dataclass
class ReadContext:
    """What REMIT knows about one ``get_tuple`` call."""

    execution: bool = False           # made by the execution loop (not a state read)
    resume: bool = False              # the run's input is Command(resume=...)
    resume_map_ids: list[str] | None = None  # interrupt ids named by a resume map
    resume_write: ResumeWrite | None = None  # the write the loop will make for a bare resume (see below)
    graph: Any = None                 # the compiled graph, when found
    found_loop: bool = False
    walked: bool = True               # False: the saver skipped the walk, nothing it finds could matter


# Reads whose walk the saver skips (``RemitSaver._read_context``); shared, never mutated.
STATE_READ = ReadContext()
UNWALKED_EXECUTION_READ = ReadContext(execution=True, walked=False)


_LOOP_METHODS = frozenset({"__enter__", "__aenter__"})  # where PregelLoop reads its checkpoint
_GRAPH_METHODS = frozenset({"stream", "astream"})       # where the compiled graph runs the loop
_LANGGRAPH: tuple[Any, Any] | None = None
# id(graph.channels) -> the graph, weakly: a loop's ``specs`` *is* its graph's ``channels`` dict
# (``Pregel.stream`` passes ``specs=self.channels``), so a graph seen once is found from its loop
# without reading the ``stream`` frame's locals (which copies all of them). Checked by identity.
_GRAPH_OF_SPECS: dict[int, "weakref.ref[Any]"] = {}
_MAX_GRAPHS = 256


def _known_graph(loop: Any) -> Any:
    specs = getattr(loop, "specs", None)
    ref = _GRAPH_OF_SPECS.get(id(specs))
    graph = ref() if ref is not None else None
    return graph if graph is not None and getattr(graph, "channels", None) is specs else None


def _note_graph(graph: Any) -> None:
    channels = getattr(graph, "channels", None)
    if channels is None:
        return
    if len(_GRAPH_OF_SPECS) >= _MAX_GRAPHS:
        _GRAPH_OF_SPECS.clear()
    with contextlib.suppress(TypeError):  # a graph that cannot be weakly referenced is walked to every time
        _GRAPH_OF_SPECS[id(channels)] = weakref.ref(graph)


def _langgraph_types() -> tuple[Any, Any]:
    """``(PregelLoop, Command)``, imported once (at first use: REMIT imports without LangGraph's loop)."""
    global _LANGGRAPH
    if _LANGGRAPH is None:
        from langgraph.pregel._loop import PregelLoop
        from langgraph.types import Command

        _LANGGRAPH = (PregelLoop, Command)
    return _LANGGRAPH


def inspect_read(config: dict[str, Any], start_depth: int = 2, want_graph: bool = True,
                 want_resume: bool = True) -> ReadContext:
    """What the caller of ``get_tuple`` is, read off the calling frames.

    Only frames running one of the loop's or the graph's methods are looked into: reading
    a frame's ``f_locals`` copies all its locals (``Pregel.stream`` has dozens), so the
    code name is tested first and the walk costs a few attribute reads per frame. The
    graph of a loop seen before is found from the loop (``_known_graph``), and without
    ``want_graph`` the walk stops at the loop. Without ``want_resume`` (only the graph is
    wanted: the default validator's schema) the read counts as plain and the loop's input is
    not looked at.
    """
    conf = config.get("configurable", {}) or {}
    ctx = ReadContext(execution=RUNTIME_KEY in conf)
    if not ctx.execution:
        return ctx
    if conf.get("remit_resume") is True:
        ctx.resume = True
    pregel_loop, command = _langgraph_types()
    try:
        frame = sys._getframe(start_depth)
    except ValueError:
        return ctx
    depth = 0
    loop = None
    while frame is not None and depth < _MAX_DEPTH:
        name = frame.f_code.co_name
        if loop is None and name in _LOOP_METHODS:
            me = frame.f_locals.get("self")
            if isinstance(me, pregel_loop):
                loop = me
                if not want_graph:
                    break
                known = _known_graph(me)
                if known is not None:
                    ctx.graph = known
                    break
        elif loop is not None and name in _GRAPH_METHODS:
            me = frame.f_locals.get("self")
            if hasattr(me, "channels"):
                ctx.graph = me
                _note_graph(me)
                break
        frame = frame.f_back
        depth += 1
    ctx.found_loop = loop is not None
    if not want_resume:
        ctx.resume = False
        return ctx
    if loop is not None:
        if not _reads_loop_checkpoint(conf, loop):
            ctx.resume = False  # another read made while the loop starts: plain (see _reads_loop_checkpoint)
            return ctx
        inp = loop.input
        if isinstance(inp, command) and inp.resume is not None:
            ctx.resume = True
            resume = inp.resume
            if isinstance(resume, dict) and resume:
                from langgraph.pregel._utils import is_xxh3_128_hexdigest

                if all(isinstance(k, str) and is_xxh3_128_hexdigest(k) for k in resume):
                    ctx.resume_map_ids = sorted(resume)
            if (ctx.resume_map_ids is None and inp.update is None and not inp.goto and inp.graph is None
                    and getattr(loop, "durability", None) != "exit"):
                # _first will put_writes(NULL_TASK_ID, [(__resume__, resume)]) at this checkpoint, durably
                ctx.resume_write = ResumeWrite(resume)
    return ctx


_ADDRESS = ("thread_id", "checkpoint_ns", "checkpoint_id")


def _reads_loop_checkpoint(conf: dict[str, Any], loop: Any) -> bool:
    """Whether this read is of the checkpoint the loop will run from (``loop.checkpoint_config``).

    The loop reads its checkpoint with exactly that config. LangGraph 1.2.24 makes a second
    read inside ``__enter__`` when the run addresses a checkpoint: the thread's latest one
    (``checkpoint_superseded``, the same config with ``checkpoint_id=None``), only to compare
    ids. That read is not the resume's: claiming there would consume the head's interrupt
    for a fork of an earlier checkpoint (and carry the fork's answer onto it), or, for a
    retry addressed to the head, conflict with the resume's own claim. So a read whose
    address (thread, namespace, checkpoint id) differs from the loop's counts as plain.
    A loop without a ``checkpoint_config`` is not second-guessed.
    """
    own = getattr(loop, "checkpoint_config", None)
    if not isinstance(own, dict):
        return True
    own_conf = own.get("configurable", {}) or {}
    return all(conf.get(key) == own_conf.get(key) for key in _ADDRESS)


def interrupt_ids(pending_writes: list[tuple[str, str, Any]] | None) -> list[str]:
    """Ids of the interrupts recorded in a checkpoint's pending writes."""
    ids: set[str] = set()
    for _task, channel, value in pending_writes or []:
        if channel != INTERRUPT_CHANNEL:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            iid = getattr(item, "id", None)
            if isinstance(iid, str):
                ids.add(iid)
    return sorted(ids)


def has_interrupt(pending_writes: list[tuple[str, str, Any]] | None) -> bool:
    return any(channel == INTERRUPT_CHANNEL for _t, channel, _v in pending_writes or [])


def has_recorded_answer(pending_writes: list[tuple[str, str, Any]] | None) -> bool:
    return any(channel == RESUME_CHANNEL for _t, channel, _v in pending_writes or [])


def unanswered_interrupt_ids(pending_writes: list[tuple[str, str, Any]] | None) -> list[str]:
    """Ids of the recorded interrupts whose task has no recorded answer: the ones LangGraph
    counts as pending when it decides whether a bare ``Command(resume=v)`` is ambiguous."""
    writes = pending_writes or []
    answered_tasks = {task for task, channel, _v in writes if channel == RESUME_CHANNEL}
    return interrupt_ids([w for w in writes if w[0] not in answered_tasks])


def answered_interrupt_ids(pending_writes: list[tuple[str, str, Any]] | None) -> list[str]:
    """Ids of the recorded interrupts whose answer is durable at this checkpoint: the consume gate's
    "committed" test (``core.gate_decision``'s ``answered``).

    An interrupt is answered once its task recorded a resume value, or once the null task holds a
    ``__resume__`` write: a resume map there answers the ids it names; a bare value answers every
    interrupt of the checkpoint, since LangGraph writes one only when at most one was still pending
    (it refuses a bare resume with several) -- which is also the write a won claim carries.
    """
    writes = pending_writes or []
    ids = interrupt_ids(writes)
    answered = set(ids) - set(unanswered_interrupt_ids(writes))
    for task, channel, value in writes:
        if task != NULL_TASK_ID or channel != RESUME_CHANNEL:
            continue
        if isinstance(value, dict) and value and all(isinstance(k, str) and k in ids for k in value):
            answered.update(value)
        else:
            answered.update(ids)
    return sorted(answered)


_SCALARS = (int, str, float, bool, bytes)


def exact_type_test(hint: Any) -> Callable[[Any], bool] | None:
    """A pure-Python test that accepts only values pydantic accepts for ``hint``; None if there is none.

    Why: a pydantic call from LangGraph's background writer thread costs far more than
    its CPU time (measured in ``remit_bench``: the same checks in Python cost a fraction),
    and almost every state value is of exactly its annotated type. A value whose type
    *is* the annotation (``int``, ``str``, ``float``, ``bool``, ``bytes``), or a ``list``
    of such values, validates under pydantic in every mode, so the test may accept it.
    The test never rejects: anything else goes to pydantic, which decides and explains.
    """
    if hint in _SCALARS:
        return lambda value: type(value) is hint
    if getattr(hint, "__origin__", None) is list and len(getattr(hint, "__args__", ())) == 1:
        item = hint.__args__[0]
        if item in _SCALARS:
            only = frozenset((item,))  # the set of the items' exact types must be within it (C-level, no generator)
            return lambda value: type(value) is list and set(map(type, value)) <= only
    return None


@dataclass
class SchemaChecker:
    """Validates channel values against a state schema's field types (pydantic)."""

    adapters: dict[str, Any] = field(default_factory=dict)
    plain_channels: frozenset[str] = frozenset()  # channels without a reducer (writes are whole values)
    name: str = ""
    exact: dict[str, Callable[[Any], bool]] = field(default_factory=dict)  # see exact_type_test
    # channel -> its scalar annotation: the commonest exact test, made without a call
    exact_types: dict[str, type] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.fields = frozenset(self.adapters)
        self.plain_fields = self.fields & self.plain_channels  # what put_writes checks of this graph's writes

    def undecided(self, values: dict[str, Any], only: frozenset[str] | None = None) -> dict[str, Any]:
        """The values only pydantic can decide: those of a schema field (within ``only`` when given)
        that the exact tests do not accept. Usually none: the schema's channels are found by a set
        intersection and most values pass an identity test of their type, so writing a valid
        state costs a few lookups."""
        out: dict[str, Any] = {}
        exact_types = self.exact_types
        for channel in values.keys() & (self.fields if only is None else self.fields & only):
            value = values[channel]
            if exact_types.get(channel) is not type(value):
                test = self.exact.get(channel)
                if test is None or not test(value):
                    out[channel] = value
        return out

    def check(self, channel: str, value: Any) -> str | None:
        adapter = self.adapters.get(channel)
        if adapter is None:
            return None
        exact = self.exact.get(channel)
        if exact is not None and exact(value):
            return None
        from pydantic import ValidationError

        try:
            adapter.validate_python(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first.get("loc", ()))
            return f"{self.name}.{channel}{'[' + loc + ']' if loc else ''}: {first.get('msg')}"
        return None


def plain_channels(channels: dict[str, Any]) -> frozenset[str]:
    """The channels without a reducer: a write to one is the field's whole new value."""
    return frozenset(n for n, ch in channels.items() if type(ch).__name__ in ("LastValue", "LastValueAfterFinish"))


def schema_checker(schema: Any, plain: frozenset[str] = frozenset()) -> SchemaChecker | None:
    """Field-type validators for a pydantic model or TypedDict state schema; None if not a schema.

    A TypedDict whose annotations cannot be resolved (a forward reference to a name not
    in its module) is a schema REMIT cannot check: that is a TypeError naming the cause.
    """
    import typing

    from pydantic import BaseModel, TypeAdapter

    hints: dict[str, Any]
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        hints = {name: f.annotation for name, f in schema.model_fields.items()}
    elif isinstance(schema, type) and hasattr(schema, "__annotations__"):
        try:
            hints = typing.get_type_hints(schema)  # strips Annotated[..., reducer]
        except Exception as exc:  # noqa: BLE001 - NameError, TypeError, ...: whatever resolution raised
            raise TypeError(f"the annotations of {schema.__name__} cannot be resolved ({type(exc).__name__}: "
                            f"{exc}); define or import every type they name, or pass validator=False") from exc
    else:
        return None
    adapters = {}
    for name, hint in hints.items():
        try:
            adapters[name] = TypeAdapter(hint)
        except Exception:  # noqa: BLE001 - a type pydantic cannot check is not checked
            continue
    exact = {name: test for name in adapters if (test := exact_type_test(hints[name])) is not None}
    exact_types = {name: hints[name] for name in exact if hints[name] in _SCALARS}
    return SchemaChecker(adapters, plain, getattr(schema, "__name__", "state"), exact, exact_types)


_CHECKERS: dict[tuple[Any, frozenset[str]], SchemaChecker | None] = {}
_BY_GRAPH: "weakref.WeakKeyDictionary[Any, SchemaChecker | None]" = weakref.WeakKeyDictionary()


def graph_checker(graph: Any) -> SchemaChecker | None:
    """The checker for a compiled graph's state schema, built once per (schema, plain channels).

    Building pydantic validators is expensive and a process compiles the same schema
    many times; the cache is keyed by the schema class itself (never by ``id(graph)``,
    which can be reused after garbage collection). Each graph object remembers its
    checker (weakly), so the reads of one graph look it up without listing its channels.
    """
    try:
        return _BY_GRAPH[graph]
    except (KeyError, TypeError):  # TypeError: a graph that cannot be weakly referenced or hashed
        pass
    builder = getattr(graph, "builder", None)
    schema = getattr(builder, "state_schema", None)
    if schema is None:
        checker = None
    else:
        plain = plain_channels(getattr(graph, "channels", None) or {})
        key = (schema, plain)  # the schema is hashable: LangGraph's StateGraph(schema) refuses one that is not
        if key not in _CHECKERS:
            _CHECKERS[key] = schema_checker(schema, plain)
        checker = _CHECKERS[key]
    with contextlib.suppress(TypeError):
        _BY_GRAPH[graph] = checker
    return checker
