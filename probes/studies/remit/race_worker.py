"""The REMIT cross-process race, process side: long-lived racers released at a barrier.

Why: each repetition of ``co.race`` used to spawn ``k`` fresh interpreters, each
importing LangGraph and REMIT before it could reach the barrier -- seconds of start-up
per repetition on two cores, for a step that takes milliseconds (and a race cell now
runs tens of trials: ``probes.studies.remit.race``). The racers are now workers of
``probes.core.worker.WorkerPool`` (started once per run, shared by every trial of every
race cell): ``prepare`` opens the cell's store, builds the gated app and installs the
effect oracle; the pool releases all racers together once every one is ready (a
barrier over pipes, not a sleep); ``go`` sends the one resume. The parking step
(run a fresh thread to its interrupt) runs in a long-lived worker of its own too.
"""

from __future__ import annotations

import contextlib
from typing import Any

from probes.core import oracle

TARGET = "probes.studies.remit.race_worker:RaceRacer"
PARKER = "probes.studies.remit.race_worker:Parker"
_POOL: Any = None
_PARKER: Any = None


class Parker:
    """Runs ``workloads.park_to_interrupt`` for a cell (the same step the race used to fork for)."""

    def __init__(self) -> None:
        import langgraph.graph  # noqa: F401
        import remit_ref  # noqa: F401

        self.task: dict[str, Any] = {}

    def prepare(self, task: dict[str, Any]) -> None:
        self.task = task

    def go(self) -> dict[str, Any]:
        from probes.studies.remit.workloads import park_to_interrupt

        return park_to_interrupt(**self.task)


class RaceRacer:
    """One racer: everything but the resume in ``prepare``; the resume in ``go``."""

    def __init__(self) -> None:
        import langgraph.graph  # noqa: F401 - imported once, at start-up, not in a race
        import remit_ref  # noqa: F401

        self._stack = contextlib.ExitStack()
        self.task: dict[str, Any] = {}

    def prepare(self, task: dict[str, Any]) -> dict[str, Any]:
        from probes.studies.remit.workloads import gated_app, open_saver

        self._stack.close()
        self.task = task
        oracle.install(task["ledger"], task["incarnation"])
        saver = self._stack.enter_context(open_saver(task["backend"], task["location"], task["remit"]))
        self.app = gated_app(saver)
        return {"incarnation": task["incarnation"]}

    def go(self) -> dict[str, Any]:
        from langgraph.types import Command

        from probes.studies.remit.workloads import cfg
        from remit_ref import ConsumeConflict

        try:
            try:
                out = self.app.invoke(Command(resume=True), cfg())
                outcome = "completed" if out.get("answer") is True else f"other:{out!r}"
            except ConsumeConflict:
                outcome = "conflict"
        finally:
            self._stack.close()
        return {"incarnation": self.task["incarnation"], "outcome": outcome,
                "counter": oracle.current().counter.snapshot()}


def pool(size: int) -> Any:
    """The run's racer pool (grown to ``size``); closed at interpreter exit."""
    global _POOL
    from probes.core.worker import WorkerPool

    if _POOL is None or _POOL.closed:
        _POOL = WorkerPool(TARGET, size, idle_s=900.0)
    _POOL.resize(size)
    return _POOL


def parker() -> Any:
    """The run's parking worker (a pool of one)."""
    global _PARKER
    from probes.core.worker import WorkerPool

    if _PARKER is None or _PARKER.closed:
        _PARKER = WorkerPool(PARKER, 1, idle_s=900.0)
    return _PARKER


def close_pool() -> None:
    global _POOL, _PARKER
    for p in (_POOL, _PARKER):
        if p is not None:
            p.close()
    _POOL = _PARKER = None
