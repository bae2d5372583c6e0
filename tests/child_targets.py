"""Functions the harness tests run in fresh interpreters."""

from __future__ import annotations

import os
from typing import Any

from probes.core import oracle
from probes.core.nemesis import park


def fire_then_park(ledger: str, incarnation: str, effects: list[str], park_after: int) -> dict:
    o = oracle.install(ledger, incarnation)
    for i, effect in enumerate(effects):
        if i == park_after:
            park("mid")
        o.fire(effect)
    return {"counter": o.counter.snapshot()}


def lie_about_counter(ledger: str, incarnation: str) -> dict:
    o = oracle.install(ledger, incarnation)
    o.fire("a")
    return {"counter": {"a": 2}}


def crash() -> dict:
    raise RuntimeError("boom in child")


def three_node_chain(state: type, first: Any, slow: Any, last: Any, saver: Any) -> Any:
    """first -> slow -> last, compiled with ``saver``: the write-ownership tests' graph (here and in-process)."""
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(state)
    for name, fn in (("first", first), ("slow", slow), ("last", last)):
        g.add_node(name, fn)
    g.add_edge(START, "first")
    g.add_edge("first", "slow")
    g.add_edge("slow", "last")
    g.add_edge("last", END)
    return g.compile(checkpointer=saver)


def ownership_worker(backend: str, where: str, thread: str, effects: str, who: str, ownership: bool) -> dict:
    """One worker of a thread under REMIT's write ownership (tests/test_remit_ownership.py).

    Runs ``first -> slow -> last`` on ``thread``: ``who="A"`` starts the run, ``"B"``
    takes it over with ``invoke(None)``. Every node appends ``"<node> <who>"`` to
    ``effects`` (its side effect); ``slow`` then passes the pause point ``slow`` (where the
    test freezes A). After its run, successful or refused, the worker tries two more
    writes of its own on the thread (a ``put_writes`` and a ``put`` on the latest
    checkpoint) and reports whether each was written or refused.
    """
    from typing import TypedDict

    from langgraph.checkpoint.base import copy_checkpoint
    from langgraph.checkpoint.base.id import uuid6

    from probes.core.nemesis import pause
    from remit_ref import WriteSuperseded, wrap

    if backend == "sqlite":
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        base = SqliteSaver(sqlite3.connect(where, check_same_thread=False))
    else:
        import psycopg
        from psycopg.rows import dict_row

        from langgraph.checkpoint.postgres import PostgresSaver

        base = PostgresSaver(psycopg.connect(where, autocommit=True, prepare_threshold=0, row_factory=dict_row))
    base.setup()
    saver = wrap(base, write_ownership=ownership)

    class State(TypedDict):
        n: int
        by: str

    def fire(node: str) -> None:
        fd = os.open(effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{node} {who}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def first(state: State) -> dict:
        fire("first")
        return {"n": state["n"] + 1, "by": who}

    def slow(state: State) -> dict:
        fire("slow")
        pause("slow")
        return {"n": state["n"] + 10, "by": who}

    def last(state: State) -> dict:
        fire("last")
        return {"n": state["n"] + 100, "by": who}

    app = three_node_chain(State, first, slow, last, saver)
    config = {"configurable": {"thread_id": thread}}
    out: dict = {"who": who}
    try:
        values = app.invoke({"n": 0, "by": ""} if who == "A" else None, config, durability="sync")
        out.update(outcome="completed", values=dict(values))
    except WriteSuperseded as exc:
        out.update(outcome="superseded", error=type(exc).__name__, message=str(exc),
                   epoch=exc.epoch, current_epoch=exc.current_epoch)

    latest = base.get_tuple(config)
    at = {"configurable": {"thread_id": thread, "checkpoint_ns": "",
                           "checkpoint_id": latest.config["configurable"]["checkpoint_id"]}}
    late: dict = {}
    try:
        saver.put_writes(at, [("n", -1), ("by", f"late {who}")], f"late-task-{who}")
        late["put_writes"] = "written"
    except WriteSuperseded:
        late["put_writes"] = "refused"
    checkpoint = copy_checkpoint(latest.checkpoint)
    checkpoint["id"] = str(uuid6())
    try:
        saver.put(at, checkpoint, {"source": "update", "step": 99, "parents": {}, "late": who}, {})
        late["put"] = "written"
    except WriteSuperseded:
        late["put"] = "refused"
    out["late"] = late
    return out


def pause_then_return(name: str) -> dict:
    from probes.core.nemesis import pause

    pause(name)
    return {"went_on": True, "pid": os.getpid()}


def identity() -> dict:
    """Who this process is: the fork-server tests compare it with the server's and each other's."""
    import random
    import sys

    return {"pid": os.getpid(), "ppid": os.getppid(), "random": random.random(), "env": os.environ.get("RC_TEST_MARK"),
            "preloaded": "tests.fixtures.threaded_import" in sys.modules or "json.tool" in sys.modules}


def sleep_forever() -> dict:
    import time

    while True:
        time.sleep(1)
