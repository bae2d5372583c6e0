"""DBOS worker processes (``run_child`` targets) and the paired latency driver.

Each function is one process: DBOS launches in-process, so a crash is the death of
the worker process and recovery is a fresh worker launching on the same SQLite
system database (DBOS recovers pending workflows on launch).
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from typing import Any

from probes.core import oracle
from probes.core.barrier import wait_at_barrier
from probes.core.nemesis import park


def _status(workflow_id: str) -> str | None:
    from dbos import DBOS

    st = DBOS.get_workflow_status(workflow_id)
    return None if st is None else str(st.status)


def crash_worker(ledger: str, sysdb: str, workflow_id: str, kill: str) -> dict[str, Any]:
    """Incarnation ``worker-1``: start the workflow; the parent SIGKILLs it at ``kill``.

    ``after_s1`` parks inside the workflow right after s1's output is durable;
    ``in_recv`` parks in the main thread once the workflow waits in recv.
    """
    from dbos import DBOS, SetWorkflowID

    from probes.dbos import app

    orc = oracle.install(ledger, "worker-1")
    app.launch(sysdb)
    with SetWorkflowID(workflow_id):
        handle = DBOS.start_workflow(app.approval_workflow)
    if kill == "in_recv":
        app.wait_in_recv(workflow_id)
        park("dbos.in_recv")
    else:
        handle.get_result()  # blocks: the workflow parks at dbos.after_s1 and is killed there
    # Not killed: the park point was not targeted. Report and leave the workflow pending.
    return {"status": _status(workflow_id), "oracle": orc.counter.snapshot()}


def recover_and_answer(ledger: str, sysdb: str, workflow_id: str, value: int) -> dict[str, Any]:
    """Incarnation ``worker-2``: a fresh worker launches (recovery), the answer is sent, result read."""
    from dbos import DBOS

    from probes.dbos import app

    orc = oracle.install(ledger, "worker-2")
    app.launch(sysdb)
    status_after_launch = _status(workflow_id)
    DBOS.send(workflow_id, value, app.TOPIC)
    result = DBOS.retrieve_workflow(workflow_id).get_result()
    out = {"status_after_launch": status_after_launch, "result": result, "status": _status(workflow_id),
           "steps": app.steps(workflow_id), "oracle": orc.counter.snapshot()}
    DBOS.destroy()
    return out


def fork_and_answer(ledger: str, sysdb: str, workflow_id: str, value: int) -> dict[str, Any]:
    """Incarnation ``fork``: fork the completed workflow from its recv step, answer the fork."""
    from dbos import DBOS

    from probes.dbos import app

    orc = oracle.install(ledger, "fork")
    app.launch(sysdb)
    recv_ids = [s["id"] for s in app.steps(workflow_id) if s["name"] == "DBOS.recv"]
    if not recv_ids:
        raise RuntimeError("the original workflow has no recorded recv step to fork from")
    handle = DBOS.fork_workflow(workflow_id, recv_ids[0])
    fork_id = handle.get_workflow_id()
    app.wait_in_recv(fork_id)
    DBOS.send(fork_id, value, app.TOPIC)
    fork_result = handle.get_result()
    out = {"fork_from_step": recv_ids[0], "fork_result": fork_result,
           "original_result": DBOS.retrieve_workflow(workflow_id).get_result(),
           "fork_steps": app.steps(fork_id), "distinct_id": fork_id != workflow_id,
           "oracle": orc.counter.snapshot()}
    DBOS.destroy()
    return out




def client_send(sysdb: str, workflow_id: str, value: int, barrier: str | None = None) -> dict[str, Any]:
    """Send an answer from another process through ``DBOSClient`` (no worker launched here)."""
    from dbos import DBOSClient

    from probes.dbos import app

    client = DBOSClient(system_database_url=f"sqlite:///{sysdb}")
    try:
        if barrier:
            wait_at_barrier(barrier)
        client.send(workflow_id, value, app.TOPIC)
    finally:
        client.destroy()
    return {"sent": value}


def unconsumed_messages(sysdb: str) -> int:
    """Messages still waiting in the system database (a stray answer stays here, inert)."""
    conn = sqlite3.connect(sysdb)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM notifications WHERE consumed = 0").fetchone()[0])
    except sqlite3.OperationalError:
        return int(conn.execute("SELECT COUNT(*) FROM notifications").fetchone()[0])
    finally:
        conn.close()


def restart_and_read(ledger: str, sysdb: str, workflow_id: str, incarnation: str) -> dict[str, Any]:
    """A worker launches again after a stray answer: recovery must not re-fire anything."""
    from dbos import DBOS

    from probes.dbos import app

    orc = oracle.install(ledger, incarnation)
    app.launch(sysdb)
    out = {"status": _status(workflow_id), "result": DBOS.retrieve_workflow(workflow_id).get_result(),
           "steps": app.steps(workflow_id), "oracle": orc.counter.snapshot()}
    DBOS.destroy()
    return out


def parked_worker(ledger: str, sysdb: str, workflow_id: str, barrier: str) -> dict[str, Any]:
    """Incarnation ``worker``: start the workflow, join the barrier once it waits in recv.

    Used by the concurrent-answer probe: the worker stays alive while the senders,
    released by the same barrier, race to answer.
    """
    from dbos import DBOS, SetWorkflowID

    from probes.dbos import app

    orc = oracle.install(ledger, "worker")
    app.launch(sysdb)
    with SetWorkflowID(workflow_id):
        handle = DBOS.start_workflow(app.approval_workflow)
    app.wait_in_recv(workflow_id)
    wait_at_barrier(barrier)
    result = handle.get_result()
    out = {"result": result, "steps": app.steps(workflow_id), "oracle": orc.counter.snapshot()}
    DBOS.destroy()
    return out


# --- latency: answer sent -> gated effect durable, DBOS beside stock LangGraph ---------


def _langgraph_app(db_path: str) -> Any:
    from typing import TypedDict

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    from probes.dbos import app as dbos_app

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
        return {"out": dbos_app.f(state["answer"])}

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


LG_HOOK: dict[str, Any] = {"on_gate": None}


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
    from dbos import DBOS, SetWorkflowID
    from langgraph.types import Command

    from probes.dbos import app

    orc = oracle.install(ledger, "latency")
    app.launch(sysdb, poll_interval_s)
    graph = _langgraph_app(lg_db)
    rng = random.Random(seed)
    done = threading.Event()
    stamp: dict[str, float] = {}

    def hook(t: float) -> None:
        stamp["t1"] = t
        done.set()

    app.on_gate = hook
    LG_HOOK["on_gate"] = hook

    def dbos_trial(i: int, think_s: float) -> float:
        wid = f"lat-{i}"
        with SetWorkflowID(wid):
            handle = DBOS.start_workflow(app.approval_workflow)
        app.wait_in_recv(wid)
        time.sleep(think_s)
        done.clear()
        t0 = time.perf_counter()
        DBOS.send(wid, 1, app.TOPIC)
        if not done.wait(120):
            raise TimeoutError("DBOS gated step never ran")
        latency = stamp["t1"] - t0
        if handle.get_result() != app.f(1):
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
        latency = stamp["t1"] - t0
        return latency

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
           "oracle": orc.counter.snapshot()}
    DBOS.destroy()
    return out
