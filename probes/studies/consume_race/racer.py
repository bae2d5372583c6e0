"""The consume race, process side: the app, the parking process and the racers.

These classes run inside long-lived workers (``probes.core.worker``): LangGraph is
imported once per process, then every repetition of every cell is raced by the same
processes. Everything LangGraph-specific is in this module; the parent
(``probes.studies.consume_race.campaign``) only sees JSON.

The workload: one node ``gate`` that asks ``interrupt(...)``; on resume it runs for
``gate_ms`` (the gated node's own work -- the parameter of the dose-response, not
synchronisation) and then fires the gated effect, one committed ledger row.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from probes.core import oracle

GATE_EFFECT = "gate"


def build_app(saver: Any, gate_ms: float) -> Any:
    """START -> gate -> END; ``gate`` interrupts, then does its work, then fires once."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    class State(TypedDict, total=False):
        answer: Any

    def gate(state: State) -> dict[str, Any]:
        answer = interrupt("approve the gated effect?")
        if gate_ms > 0:
            time.sleep(gate_ms / 1000.0)  # the gated node's work before its effect
        oracle.fire(GATE_EFFECT, detail=f"pid={os.getpid()}")
        return {"answer": answer}

    graph = StateGraph(State)
    graph.add_node("gate", gate)
    graph.add_edge(START, "gate")
    graph.add_edge("gate", END)
    return graph.compile(checkpointer=saver)


def wrap_for_arm(base: Any, arm: str) -> Any:
    """The saver an arm runs on: stock LangGraph, or REMIT's consumption gate around it."""
    if arm == "stock":
        return base
    if arm == "contract":  # the paper's build: remit-contract 0.1.2's opt-in cross-process gate
        from probes.frameworks.langgraph.savers import contract_wrap

        return contract_wrap(base, cross_process_gate=True)
    if arm == "gate":
        from remit_ref import wrap  # the project's reference implementation (probes/studies/remit)

        return wrap(base, consume_gate=True)
    raise ValueError(f"unknown arm {arm!r}")


def gate_arm_available() -> tuple[bool, str]:
    """Whether the REMIT consumption gate can be imported here, and if not, why."""
    try:
        import remit_ref

        remit_ref.wrap  # noqa: B018 - the attribute is the API the gate arm needs
        remit_ref.ConsumeConflict  # noqa: B018
    except Exception as exc:  # ImportError, AttributeError
        return False, f"{type(exc).__name__}: {exc}"
    return True, ""


class _Store:
    """The base saver of one round, opened in ``prepare`` and closed after ``go``.

    Why per round: a long-lived worker must not hold a connection between rounds (the
    campaign's PostgreSQL server is stopped at the end, and every cell has a store of
    its own). Opening happens before the barrier, so it costs nothing in the race.
    """

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()

    def open(self, backend: str, location: str, setup: bool = False) -> Any:
        self.close()
        if backend == "sqlite":
            from langgraph.checkpoint.sqlite import SqliteSaver

            saver = self._stack.enter_context(SqliteSaver.from_conn_string(location))
        elif backend == "postgres":
            from langgraph.checkpoint.postgres import PostgresSaver

            saver = self._stack.enter_context(PostgresSaver.from_conn_string(location))
        else:
            raise ValueError(f"backend {backend!r} is not shared across processes")
        if setup:
            saver.setup()
        return saver

    def close(self) -> None:
        self._stack.close()
        self._stack = contextlib.ExitStack()


def _error(exc: BaseException) -> dict[str, str]:
    kind = type(exc)
    return {"type": f"{kind.__module__}.{kind.__qualname__}", "message": str(exc)[:600]}


def _config(thread_id: str, inspect: bool = False) -> dict[str, Any]:
    """A thread's config; ``inspect`` marks a state read as inspection (remit-contract's documented
    ``remit_inspect`` key: without it a read of a parked thread takes the consume claim)."""
    conf: dict[str, Any] = {"thread_id": thread_id}
    if inspect:
        conf["remit_inspect"] = True
    return {"configurable": conf}


class Parker:
    """Runs a fresh thread to its interrupt and checks the interrupt is durable."""

    def __init__(self) -> None:
        import langgraph.graph  # noqa: F401 - import once, at start-up, not in a round

        self.store = _Store()
        self.task: dict[str, Any] = {}

    def prepare(self, task: dict[str, Any]) -> dict[str, Any]:
        self.task = task
        base = self.store.open(task["backend"], task["location"], setup=task.get("setup", True))
        self.app = build_app(wrap_for_arm(base, task["arm"]), task["gate_ms"])
        self.oracle = oracle.install(task["ledger"], task["incarnation"])
        return {"pid": os.getpid()}

    def go(self) -> dict[str, Any]:
        cfg = _config(self.task["thread_id"])
        try:
            self.app.invoke({"answer": None}, cfg)
            state = self.app.get_state(_config(self.task["thread_id"], inspect=True))
        finally:
            self.store.close()
        return {
            "pending_interrupts": len(state.interrupts),
            "next": list(state.next),
            "counter": self.oracle.counter.snapshot(),
        }


class Racer:
    """One racing process: builds the app on the shared saver, then resumes on release."""

    def __init__(self) -> None:
        import langgraph.graph  # noqa: F401
        from langgraph.types import Command  # noqa: F401

        self.store = _Store()
        self.task: dict[str, Any] = {}

    def prepare(self, task: dict[str, Any]) -> dict[str, Any]:
        """Everything but the resume: app, oracle, and a read of the parked state."""
        self.task = task
        base = self.store.open(task["backend"], task["location"])
        self.app = build_app(wrap_for_arm(base, task["arm"]), task["gate_ms"])
        self.oracle = oracle.install(task["ledger"], task["incarnation"])
        state = self.app.get_state(_config(task["thread_id"], inspect=True))
        return {"saw_pending": len(state.interrupts) > 0}

    def go(self) -> dict[str, Any]:
        from langgraph.types import Command

        jitter_s = float(self.task["jitter_s"])
        if jitter_s > 0:
            time.sleep(jitter_s)  # the protocol's parameter: this racer's offset after release
        started = time.monotonic()
        outcome, error = "returned", None
        try:
            self.app.invoke(Command(resume=True), _config(self.task["thread_id"]))
        except Exception as exc:  # the measured behaviour: which racers raise, and how
            outcome, error = "raised", _error(exc)
        finally:
            self.store.close()
        return {
            "outcome": outcome,
            "error": error,
            "counter": self.oracle.counter.snapshot(),
            "resume_started": started,
            "resume_seconds": time.monotonic() - started,
        }
