"""How REMIT tells a resume read from a plain read, inside the saver (LangGraph 1.2.9).

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

import sys
from dataclasses import dataclass, field
from typing import Any

RUNTIME_KEY = "__pregel_runtime"
_MAX_DEPTH = 12


@dataclass
class ReadContext:
    """What REMIT knows about one ``get_tuple`` call."""

    execution: bool = False           # made by the execution loop (not a state read)
    resume: bool = False              # the run's input is Command(resume=...)
    resume_map_ids: list[str] | None = None  # interrupt ids named by a resume map
    graph: Any = None                 # the compiled graph, when found
    found_loop: bool = False


def inspect_read(config: dict[str, Any], start_depth: int = 2) -> ReadContext:
    conf = config.get("configurable", {}) or {}
    ctx = ReadContext(execution=RUNTIME_KEY in conf)
    if not ctx.execution:
        return ctx
    from langgraph.pregel._loop import PregelLoop
    from langgraph.types import Command

    try:
        frame = sys._getframe(start_depth)
    except ValueError:
        return ctx
    depth = 0
    loop = None
    while frame is not None and depth < _MAX_DEPTH:
        me = frame.f_locals.get("self")
        if loop is None and isinstance(me, PregelLoop):
            loop = me
        elif loop is not None and frame.f_code.co_name in ("stream", "astream") and hasattr(me, "channels"):
            ctx.graph = me
            break
        frame = frame.f_back
        depth += 1
    if loop is not None:
        ctx.found_loop = True
        inp = loop.input
        if isinstance(inp, Command) and inp.resume is not None:
            ctx.resume = True
            resume = inp.resume
            if isinstance(resume, dict) and resume:
                from langgraph.pregel._utils import is_xxh3_128_hexdigest

                if all(isinstance(k, str) and is_xxh3_128_hexdigest(k) for k in resume):
                    ctx.resume_map_ids = sorted(resume)
    if conf.get("remit_resume") is True:
        ctx.resume = True
    return ctx


def interrupt_ids(pending_writes: list[tuple[str, str, Any]] | None) -> list[str]:
    """Ids of the interrupts recorded in a checkpoint's pending writes."""
    ids: set[str] = set()
    for _task, channel, value in pending_writes or []:
        if channel != "__interrupt__":
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            iid = getattr(item, "id", None)
            if isinstance(iid, str):
                ids.add(iid)
    return sorted(ids)


def has_recorded_answer(pending_writes: list[tuple[str, str, Any]] | None) -> bool:
    return any(channel == "__resume__" for _t, channel, _v in pending_writes or [])


@dataclass
class SchemaChecker:
    """Validates channel values against a state schema's field types (pydantic)."""

    adapters: dict[str, Any] = field(default_factory=dict)
    plain_channels: frozenset[str] = frozenset()  # channels without a reducer (writes are whole values)
    name: str = ""

    def check(self, channel: str, value: Any) -> str | None:
        adapter = self.adapters.get(channel)
        if adapter is None:
            return None
        from pydantic import ValidationError

        try:
            adapter.validate_python(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first.get("loc", ()))
            return f"{self.name}.{channel}{'[' + loc + ']' if loc else ''}: {first.get('msg')}"
        return None


def schema_checker(schema: Any, channels: dict[str, Any] | None = None) -> SchemaChecker | None:
    """Field-type validators for a pydantic model or TypedDict state schema; None if not a schema."""
    import typing

    from pydantic import BaseModel, TypeAdapter

    hints: dict[str, Any]
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        hints = {name: f.annotation for name, f in schema.model_fields.items()}
    elif isinstance(schema, type) and hasattr(schema, "__annotations__"):
        try:
            hints = typing.get_type_hints(schema)  # strips Annotated[..., reducer]
        except Exception:  # noqa: BLE001 - unresolvable forward refs: no schema known
            return None
    else:
        return None
    adapters = {}
    for name, hint in hints.items():
        try:
            adapters[name] = TypeAdapter(hint)
        except Exception:  # noqa: BLE001 - a type pydantic cannot check is not checked
            continue
    plain = frozenset(
        name for name, ch in (channels or {}).items() if type(ch).__name__ in ("LastValue", "LastValueAfterFinish")
    )
    return SchemaChecker(adapters, plain, getattr(schema, "__name__", "state"))


_CHECKERS: dict[tuple[Any, frozenset[str]], SchemaChecker | None] = {}


def graph_checker(graph: Any) -> SchemaChecker | None:
    """The checker for a compiled graph's state schema, built once per (schema, plain channels).

    Building pydantic validators is expensive and a process compiles the same schema
    many times; the cache is keyed by the schema class itself (never by ``id(graph)``,
    which can be reused after garbage collection).
    """
    builder = getattr(graph, "builder", None)
    schema = getattr(builder, "state_schema", None)
    if schema is None:
        return None
    channels = getattr(graph, "channels", None) or {}
    plain = frozenset(n for n, ch in channels.items() if type(ch).__name__ in ("LastValue", "LastValueAfterFinish"))
    key = (schema, plain)
    try:  # the schema is hashable: LangGraph's StateGraph(schema) refuses one that is not
        return _CHECKERS[key]
    except KeyError:
        pass
    checker = _CHECKERS[key] = schema_checker(schema, channels)
    return checker
