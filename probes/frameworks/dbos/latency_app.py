"""The latency study's worker process: DBOS and stock LangGraph timed side by side.

A ``run_child`` target (``latency_pairs``), imported only in that process: importing it imports
DBOS and registers the study's workflow, which DBOS needs before it launches. The study is the
paper campaign's since its first version (moved here from the legacy ``probes/dbos`` package
unchanged in method): its own DBOS application as DBOS ships it (pickle serializer, the default
notification polling of an SQLite system database, unless the probe sets an interval), not the
kit adapter's, which polls every 20 ms to keep the conformance probes quick and would time that
setting instead of DBOS's.

The workflow is ``s1`` (ledger effect) -> ``DBOS.recv`` -> gated step (ledger effect); the
LangGraph graph is the same three nodes with ``interrupt`` and ``SqliteSaver``. Effects fire into
the probe's oracle (``probes.core.oracle``), so the parent can check every trial ran once.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from typing import Any, Callable

from dbos import DBOS, SetWorkflowID

from probes.core import oracle
from probes.core.manifest import package_versions

TOPIC = "decision"
APP_NAME = "rc-dbos-probe"
RECV_TIMEOUT_S = 600.0
VERSIONS = ("dbos", "langgraph", "langgraph-checkpoint-sqlite")  # what ran, for the receipt (and drift)

# Set by the latency driver: called with perf_counter() right after the gated effect's ledger row committed.
on_gate: Callable[[float], None] | None = None
LG_HOOK: dict[str, Any] = {"on_gate": None}


def f(v: int) -> int:
    """The gated outcome for answer ``v``: injective and not the identity."""
    return 10 * v + 1


@DBOS.step()
def s1_step() -> str:
    oracle.fire("s1")
    return "s1 done"


@DBOS.step()
def gated_step(v: int) -> int:
    oracle.fire("gate", str(v))
    if on_gate is not None:
        on_gate(time.perf_counter())
    return f(v)


@DBOS.workflow()
def approval_workflow() -> Any:
    s1_step()
    v = DBOS.recv(TOPIC, timeout_seconds=RECV_TIMEOUT_S)
    if v is None:
        return None
    return gated_step(int(v))


def launch(sysdb: str, poll_interval_s: float | None = None) -> None:
    """Start DBOS in this process on an SQLite system database (no admin server); DBOS's own
    notification polling unless ``poll_interval_s`` sets it."""
    config: dict[str, Any] = {
        "name": APP_NAME,
        "system_database_url": f"sqlite:///{sysdb}",
        "run_admin_server": False,
        "log_level": "WARNING",
    }
    if poll_interval_s is not None:
        config["notification_listener_polling_interval_sec"] = poll_interval_s
    DBOS(config=config)  # type: ignore[arg-type]
    DBOS.launch()


def wait_in_recv(workflow_id: str, deadline_s: float = 120.0) -> None:
    """Block until the workflow has durably entered recv (its timeout sleep is recorded).

    This waits for a durable condition, not for a time window: the poll only decides
    how soon we notice.
    """
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if any(s["function_name"] == "DBOS.sleep" for s in DBOS.list_workflow_steps(workflow_id)):
            return
        time.sleep(0.005)
    raise TimeoutError(f"workflow did not reach recv within {deadline_s} s")


def _langgraph_app(db_path: str) -> Any:
    from typing import TypedDict

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    class S(TypedDict, total=False):
        answer: int
        out: int

    def s1(state: S) -> S:
        oracle.fire("lg.s1")
        return {}

    def ask(state: S) -> S:
        return {"answer": int(interrupt("approve?"))}

    def gated(state: S) -> S:
        oracle.fire("lg.gate", str(state["answer"]))
        if LG_HOOK["on_gate"] is not None:
            LG_HOOK["on_gate"](time.perf_counter())
        return {"out": f(state["answer"])}

    g = StateGraph(S)
    g.add_node("s1", s1)
    g.add_node("ask", ask)
    g.add_node("gated", gated)
    g.add_edge(START, "s1")
    g.add_edge("s1", "ask")
    g.add_edge("ask", "gated")
    g.add_edge("gated", END)
    conn = sqlite3.connect(db_path, check_same_thread=False)
    return g.compile(checkpointer=SqliteSaver(conn))


def latency_pairs(ledger: str, sysdb: str, lg_db: str, n: int, seed: int,
                  poll_interval_s: float | None, think_ms_max: int) -> dict[str, Any]:
    """n paired trials in one process; within each pair the order is drawn from ``seed``.

    Both arms: run to the point where the answer is awaited durably (DBOS: workflow in
    recv; LangGraph: interrupt checkpoint written), idle for the pair's think time,
    then time from the call that sends the answer to the gated effect's ledger row
    being committed. The think time (seeded, uniform in [0, think_ms_max], the same
    for both arms of a pair) stands for the human answering: without it, back-to-back
    trials phase-lock to DBOS's notification poller and every DBOS answer would wait
    almost a full polling period.
    """
    global on_gate
    from langgraph.types import Command

    orc = oracle.install(ledger, "latency")
    launch(sysdb, poll_interval_s)
    graph = _langgraph_app(lg_db)
    rng = random.Random(seed)
    done = threading.Event()
    stamp: dict[str, float] = {}

    def hook(t: float) -> None:
        stamp["t1"] = t
        done.set()

    on_gate = hook
    LG_HOOK["on_gate"] = hook

    def dbos_trial(i: int, think_s: float) -> float:
        wid = f"lat-{i}"
        with SetWorkflowID(wid):
            handle = DBOS.start_workflow(approval_workflow)
        wait_in_recv(wid)
        time.sleep(think_s)
        done.clear()
        t0 = time.perf_counter()
        DBOS.send(wid, 1, TOPIC)
        if not done.wait(120):
            raise TimeoutError("DBOS gated step never ran")
        latency = stamp["t1"] - t0
        if handle.get_result() != f(1):
            raise RuntimeError("DBOS workflow returned the wrong outcome")
        return latency

    def lg_trial(i: int, think_s: float) -> float:
        cfg = {"configurable": {"thread_id": f"lat-{i}"}}
        graph.invoke({}, cfg)
        if not graph.get_state(cfg).interrupts:
            raise RuntimeError("LangGraph did not stop at the interrupt")
        time.sleep(think_s)
        done.clear()
        t0 = time.perf_counter()
        graph.invoke(Command(resume=1), cfg)
        if not done.is_set():
            raise RuntimeError("LangGraph gated node never ran")
        return stamp["t1"] - t0

    dbos_ms: list[float] = []
    lg_ms: list[float] = []
    order: list[str] = []
    think: list[float] = []
    # One unrecorded warm-up of each arm: first-call import and schema costs are not latency.
    dbos_trial(-1, 0.0)
    lg_trial(-1, 0.0)
    for i in range(n):
        first = rng.choice(["dbos", "langgraph"])
        think_s = rng.uniform(0.0, think_ms_max / 1000.0)
        order.append(first)
        think.append(round(think_s * 1000.0, 3))
        for arm in ([first, "langgraph" if first == "dbos" else "dbos"]):
            if arm == "dbos":
                dbos_ms.append(dbos_trial(i, think_s) * 1000.0)
            else:
                lg_ms.append(lg_trial(i, think_s) * 1000.0)
    out = {"dbos_ms": dbos_ms, "langgraph_ms": lg_ms, "order": order, "think_ms": think,
           "oracle": orc.counter.snapshot(), "versions": package_versions(VERSIONS)}
    DBOS.destroy()
    return out
