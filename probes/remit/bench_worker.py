"""Benchmark worker: runs one interrupt-then-resume protocol per request, timing it itself.

Runs under the project's interpreter: arms ``stock``, ``remit:<options>`` (remit_ref)
and ``rc:default``, ``rc:validator``, ``rc:gate`` (the published build
``remit-contract==0.1.2``, import name ``remit``, installed beside remit_ref from the
lock and used only through its documented public API, ``remit.wrap``).
Protocol: JSON lines on stdin ``{"arm", "db"}`` -> JSON lines on stdout with
``interrupt_ms``, ``resume_ms``, ``total_ms`` (``time.perf_counter``), ``cpu_ms`` (the
protocol's CPU time, ``time.process_time``: every thread of this process, LangGraph's
background writer included, and none of the time spent waiting for the disk), ``fired``.
Stand-alone on purpose: it imports nothing from ``probes``.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from typing import Any, TypedDict


class State(TypedDict, total=False):
    value: int
    items: list[str]
    answer: bool


FIRED: list[str] = []


def build(saver: Any) -> Any:
    from langgraph.config import get_config
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def prepare(s: State) -> dict[str, Any]:
        return {"value": s.get("value", 0) + 1, "items": list(s.get("items", [])) + ["prepared"]}

    def gate(s: State) -> dict[str, Any]:
        answer = interrupt("approve?")
        FIRED.append(get_config()["configurable"]["thread_id"])  # the gated effect (counted in-process, per thread)
        return {"answer": bool(answer), "items": list(s.get("items", [])) + ["done"]}

    g = StateGraph(State)
    g.add_node("prepare", prepare)
    g.add_node("gate", gate)
    g.add_edge(START, "prepare")
    g.add_edge("prepare", "gate")
    g.add_edge("gate", END)
    return g.compile(checkpointer=saver)


def make_saver(arm: str, conn: sqlite3.Connection) -> Any:
    from langgraph.checkpoint.sqlite import SqliteSaver

    if arm == "stock":
        return SqliteSaver(conn)
    if arm.startswith("remit:"):
        from remit_ref import wrap

        return wrap(SqliteSaver(conn), **json.loads(arm.split(":", 1)[1]))
    if arm == "rc:default":
        import remit

        return remit.wrap(SqliteSaver, conn)
    if arm == "rc:validator":
        import remit

        def validate(checkpoint: dict) -> None:
            items = (checkpoint.get("channel_values") or {}).get("items")
            if items is not None and not all(isinstance(x, str) for x in items):
                raise ValueError("items must be a list of str")

        return remit.wrap(SqliteSaver, conn, validator=validate)
    if arm == "rc:gate":
        import remit

        return remit.wrap(SqliteSaver, conn, cross_process_gate=True)
    raise ValueError(f"unknown arm {arm!r}")


def protocol(arm: str, db: str) -> dict[str, Any]:
    from langgraph.types import Command

    conn = sqlite3.connect(db, check_same_thread=False)
    try:
        saver = make_saver(arm, conn)
        app = build(saver)
        cfg = {"configurable": {"thread_id": "bench"}}
        before = len(FIRED)
        c0, t0 = time.process_time(), time.perf_counter()
        app.invoke({"value": 0, "items": []}, cfg)
        t1 = time.perf_counter()
        out = app.invoke(Command(resume=True), cfg)
        t2, c2 = time.perf_counter(), time.process_time()
        return {"interrupt_ms": (t1 - t0) * 1e3, "resume_ms": (t2 - t1) * 1e3, "total_ms": (t2 - t0) * 1e3,
                "cpu_ms": (c2 - c0) * 1e3,
                "fired": len(FIRED) - before, "ok": out.get("answer") is True}
    finally:
        conn.close()


def main() -> int:
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            res = protocol(req["arm"], req["db"])
        except Exception as exc:  # noqa: BLE001 - reported to the parent as a harness error
            res = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        print(json.dumps(res), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
