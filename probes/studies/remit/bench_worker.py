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

Counting mode (``bench_worker.py --count ARM BACKEND LOCATION N1,N2,...``, used by
``probes/studies/remit/counted.py`` under cachegrind and strace): the process imports and warms
up once, then forks one child per size (see :func:`count_run`); the harness differences
a child of N protocols against a child of 0, so what it divides by N is N protocols.
Bytecode mode (``--opcodes ARM BACKEND LOCATION N``, :func:`opcode_run`): the Python
bytecodes each function executes over N protocols, for ``counted.count_bytecodes``.
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


def make_saver(arm: str, conn: Any, backend: str = "sqlite") -> Any:
    if backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver as saver_class
    else:
        from langgraph.checkpoint.postgres import PostgresSaver as saver_class

    if arm == "stock":
        return saver_class(conn)
    if arm.startswith("remit:"):
        from remit_ref import wrap

        return wrap(saver_class(conn), **json.loads(arm.split(":", 1)[1]))
    if arm == "rc:default":
        import remit

        return remit.wrap(saver_class, conn)
    if arm == "rc:validator":
        import remit

        def validate(checkpoint: dict) -> None:
            items = (checkpoint.get("channel_values") or {}).get("items")
            if items is not None and not all(isinstance(x, str) for x in items):
                raise ValueError("items must be a list of str")

        return remit.wrap(saver_class, conn, validator=validate)
    if arm == "rc:gate":
        import remit

        return remit.wrap(saver_class, conn, cross_process_gate=True)
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


WARMUP = 3  # protocols the counting parent runs before it forks (imports, first-use paths)


def _connect(backend: str, location: str) -> Any:
    if backend == "sqlite":
        return sqlite3.connect(location, check_same_thread=False)
    import psycopg
    from psycopg.rows import dict_row

    return psycopg.connect(location, autocommit=True, prepare_threshold=0, row_factory=dict_row)


def session(arm: str, backend: str, location: str, label: str, n: int) -> dict[str, Any]:
    """One connection, saver and compiled graph; one warm protocol, then n: each on its own thread id."""
    from langgraph.types import Command

    conn = _connect(backend, location)
    try:
        saver = make_saver(arm, conn, backend)
        if backend == "postgres":
            saver.setup()
        app = build(saver)
        before, bad = len(FIRED), 0
        for i in range(1 + n):
            cfg = {"configurable": {"thread_id": f"{label}-{i}"}}
            app.invoke({"value": 0, "items": []}, cfg)
            out = app.invoke(Command(resume=True), cfg)
            bad += out.get("answer") is not True
        return {"protocols": 1 + n, "fired": len(FIRED) - before, "ok": bad == 0}
    finally:
        conn.close()


def _database(backend: str, location: str, label: str) -> str:
    """SQLite: a fresh database file per session in the directory ``location``; PostgreSQL: the DSN itself
    (thread ids are unique per session)."""
    import os

    return os.path.join(location, f"{label}.sqlite") if backend == "sqlite" else location


def _die_with_parent() -> None:
    """Linux: this forked child is killed when its parent dies (a stopped campaign leaves no child behind)."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def count_run(arm: str, backend: str, location: str, sizes: list[int]) -> int:
    """Counting mode: warm up, then one forked child per size, in order, each running a :func:`session`.

    Every child starts from the same warmed parent, so two children's counts differ by
    their sessions only: a size-0 child measures everything but the protocols. Each child
    prints ``{"pid", "size", ...}`` and leaves with ``os._exit`` (no finaliser of the
    inherited state runs twice). SQLite: ``location`` is a directory, a fresh database per
    session; PostgreSQL: a DSN, thread ids unique per session.
    """
    import os

    session(arm, backend, _database(backend, location, "warmup"), "warmup", WARMUP - 1)
    for k, n in enumerate(sizes):
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            _die_with_parent()
            try:
                label = f"child{k}-{os.getpid()}"
                db = _database(backend, location, label)
                res = {"pid": os.getpid(), "size": n, **session(arm, backend, db, label, n)}
            except BaseException as exc:  # noqa: BLE001 - reported to the parent as a harness error
                res, code = {"pid": os.getpid(), "size": n, "error": f"{type(exc).__name__}: {exc}"[:500]}, 1
            print(json.dumps(res), flush=True)
            os._exit(code)
        _pid, status = os.waitpid(pid, 0)
        if status != 0:
            return 1
    return 0


def _code_name(code: Any) -> str:
    """``package/module.py:function`` for installed code, else the path as it is (stable across machines)."""
    path = code.co_filename
    for marker in ("site-packages/", "/remit_ref/"):
        if marker in path:
            path = ("remit_ref/" if marker == "/remit_ref/" else "") + path.split(marker, 1)[1]
            break
    return f"{path}:{code.co_name}"


def opcode_run(arm: str, backend: str, location: str, n: int) -> int:
    """Bytecode mode: Python bytecodes executed per function over a session of ``n`` protocols, on every
    thread (LangGraph writes from a pool), after a warm-up; printed as one JSON line.

    Why: cachegrind sees CPython's C functions, not which Python function made them work; the
    bytecodes a function executes say where an arm's extra instructions come from. The tracer is
    installed before the warm-up so that the pool's threads, started then, carry it."""
    import os
    import threading
    from collections import Counter

    counts: Counter[str] = Counter()
    names: dict[Any, str] = {}
    on = [False]

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        code = frame.f_code
        name = names.get(code) or names.setdefault(code, _code_name(code))

        def per_opcode(frame: Any, event: str, arg: Any) -> Any:
            if event == "opcode" and on[0]:
                counts[name] += 1
            return per_opcode
        return per_opcode

    threading.settrace(tracer)
    sys.settrace(tracer)

    session(arm, backend, _database(backend, location, "warmup"), "warmup", WARMUP - 1)
    on[0] = True
    label = f"opcodes-{os.getpid()}"
    res = session(arm, backend, _database(backend, location, label), label, n)
    on[0] = False
    sys.settrace(None)
    threading.settrace(None)  # type: ignore[arg-type]
    print(json.dumps({"pid": os.getpid(), "size": n, **res, "opcodes": dict(counts)}), flush=True)
    return 0


def main() -> int:
    if sys.argv[1:2] == ["--opcodes"]:
        arm, backend, location, size = sys.argv[2:6]
        return opcode_run(arm, backend, location, int(size))
    if sys.argv[1:2] == ["--count"]:
        arm, backend, location, sizes = sys.argv[2:6]
        return count_run(arm, backend, location, [int(x) for x in sizes.split(",")])
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
