"""The async consume gate's workloads: async savers, the gated app, racers held at a barrier after their read.

Run in the test process (asyncio tasks) and in fresh interpreters (``run_child``
targets, JSON in and out). The gated effect fires through the harness oracle (its
crash-surviving SQLite ledger), so the parent counts fires across processes.

The barrier sits *after* each racer's checkpoint read (``hold_after_read``): every racer
has read the interrupted checkpoint before any of them may claim, so the interleaving
that lets every racer through a gate-less saver is forced in every round, not left to
the scheduler.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator, Awaitable, Callable

from probes.core import oracle
from probes.studies.remit.workloads import cfg, gated_app

RUNTIME_KEY = "__pregel_runtime"  # in the config of the execution loop's reads only


@contextlib.asynccontextmanager
async def async_saver(backend: str, location: str) -> AsyncIterator[Any]:
    """A stock async saver on the store (its tables set up): AsyncSqliteSaver or AsyncPostgresSaver."""
    if backend == "sqlite":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(location) as saver:
            await saver.setup()
            yield saver
    elif backend == "postgres":
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(location) as saver:
            await saver.setup()
            yield saver
    else:
        raise ValueError(f"unknown backend {backend!r}")


def hold_after_read(base: Any, parties: int, wait: Callable[[], Awaitable[None]]) -> None:
    """The first ``parties`` execution reads of ``base`` each ``await wait()`` once they have read."""
    read = base.aget_tuple
    held = [0]

    async def aget_tuple(config: Any) -> Any:
        tup = await read(config)
        if RUNTIME_KEY in (config.get("configurable") or {}) and held[0] < parties:
            held[0] += 1
            await wait()
        return tup
    base.aget_tuple = aget_tuple


async def resume(app: Any, answer: Any, thread: str) -> str:
    """One resume; its outcome: ``completed`` (own answer consumed), ``conflict``, ``served:<answer>``, ``other:``."""
    from langgraph.types import Command

    from remit_ref import ConsumeConflict

    try:
        out = await app.ainvoke(Command(resume=answer), cfg(thread))
    except ConsumeConflict:
        return "conflict"
    got = out.get("answer")
    return "completed" if got == answer else (f"served:{got!r}" if "answer" in out else f"other:{out!r}")


async def park(backend: str, location: str, remit: dict[str, Any] | None, thread: str, effect: str) -> int:
    """Run a fresh thread to its interrupt; the number of interrupts pending."""
    from remit_ref import wrap

    async with async_saver(backend, location) as base:
        app = gated_app(base if remit is None else wrap(base, **remit), effect)
        await app.ainvoke({}, cfg(thread))
        return len((await app.aget_state(cfg(thread))).interrupts)


async def inspect(saver: Any, app: Any, thread: str) -> dict[str, Any]:
    """Every read a dashboard or operator makes of a thread, through the wrapper; what they saw."""
    state = await app.aget_state(cfg(thread))
    history = [s async for s in app.aget_state_history(cfg(thread))]
    listed = [t async for t in saver.alist(cfg(thread))]
    tup = await saver.aget_tuple(cfg(thread))
    return {"pending_interrupts": len(state.interrupts), "history": len(history), "listed": len(listed),
            "read": tup is not None, "claims": len(await saver.aclaims(thread))}


# ---- child-process entry points (JSON in, JSON out) -----------------------------------------


def race_child(backend: str, location: str, ledger: str, remit: dict[str, Any] | None, thread: str,
               effect: str, incarnation: str, answer: int, barrier: str) -> dict[str, Any]:
    """One racer process: read the parked thread, wait at the cross-process barrier, resume with ``answer``."""
    from probes.core.barrier import wait_at_barrier
    from remit_ref import wrap

    oracle.install(ledger, incarnation)

    async def main() -> str:
        async with async_saver(backend, location) as base:
            hold_after_read(base, 1, lambda: asyncio.to_thread(wait_at_barrier, barrier))
            app = gated_app(base if remit is None else wrap(base, **remit), effect)
            return await resume(app, answer, thread)
    outcome = asyncio.run(main())
    return {"incarnation": incarnation, "answer": answer, "outcome": outcome,
            "counter": oracle.current().counter.snapshot()}


def inspect_child(backend: str, location: str, remit: dict[str, Any], thread: str, effect: str) -> dict[str, Any]:
    """Another process inspects the parked thread through a gated wrapper of its own async saver."""
    from remit_ref import wrap

    async def main() -> dict[str, Any]:
        async with async_saver(backend, location) as base:
            saver = wrap(base, **remit)
            return await inspect(saver, gated_app(saver, effect), thread)
    return asyncio.run(main())
