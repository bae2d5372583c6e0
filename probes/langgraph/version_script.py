"""FD (#6663) and CV (#6491 class) on SqliteSaver, for one LangGraph release.

Runs inside a throwaway venv that has only that LangGraph release installed, so it
imports nothing from this project. Prints one JSON object on stdout.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any, TypedDict


def _err(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"[:200]


def fd(saver: Any) -> dict[str, Any]:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    class S(TypedDict):
        value: int

    def gate(state: S) -> dict[str, int]:
        answer = interrupt("approve?")
        return {"value": state["value"] + 1 if answer else state["value"]}

    g = StateGraph(S)
    g.add_node("gate", gate)
    g.add_edge(START, "gate")
    g.add_edge("gate", END)
    app = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "fd"}}
    app.invoke({"value": 1}, cfg)
    icfg = app.get_state(cfg).config
    first = app.invoke(Command(resume=True), icfg)["value"]
    try:
        second = app.invoke(Command(resume=False), icfg)["value"]
        error = None
    except Exception as exc:
        second, error = None, _err(exc)
    return {"first_outcome": first, "second_outcome": second, "error": error}


def cv(saver: Any) -> dict[str, Any]:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt
    from pydantic import BaseModel

    class S(BaseModel):
        items: list[str] = []

    def a(state: S) -> dict[str, Any]:
        return {"items": state.items + ["ok"]}

    def b(state: S) -> dict[str, Any]:
        return {"items": state.items + [None]}

    def c(state: S) -> dict[str, Any]:
        interrupt("continue?")
        return {"items": state.items + ["done"]}

    g = StateGraph(S)
    for name, fn in (("a", a), ("b", b), ("c", c)):
        g.add_node(name, fn)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    app = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "cv"}}
    error = None
    try:
        app.invoke({"items": []}, cfg)
        ran_ok = True
    except Exception as exc:
        ran_ok, error = False, _err(exc)
    durable = []
    for tup in saver.list(cfg):
        if "items" in tup.checkpoint.get("channel_values", {}):
            durable.append(list(tup.checkpoint["channel_values"]["items"]))
        durable += [list(v) for _t, ch, v in (tup.pending_writes or []) if ch == "items"]
    became_durable = any(None in items for items in durable)
    failing = []
    for name, fn in (("get_state", lambda: app.get_state(cfg)), ("history", lambda: list(app.get_state_history(cfg))),
                     ("resume", lambda: app.invoke(Command(resume=True), cfg)), ("invoke_none", lambda: app.invoke(None, cfg))):
        try:
            fn()
        except Exception:
            failing.append(name)
    return {"refused": (not ran_ok) and not became_durable, "became_durable": became_durable, "error": error,
            "reads_failing": failing}


def main() -> int:
    import importlib.metadata

    from langgraph.checkpoint.sqlite import SqliteSaver

    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(str(Path(tmp) / "cp.sqlite"), check_same_thread=False)
        saver = SqliteSaver(conn)
        out = {"langgraph": importlib.metadata.version("langgraph"),
               "langgraph-checkpoint": importlib.metadata.version("langgraph-checkpoint"),
               "langgraph-checkpoint-sqlite": importlib.metadata.version("langgraph-checkpoint-sqlite"),
               "pydantic": importlib.metadata.version("pydantic"),
               "fd": fd(saver), "cv": cv(saver)}
        conn.close()
    json.dump(out, sys.stdout, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
