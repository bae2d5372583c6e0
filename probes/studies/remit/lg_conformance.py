"""LangGraph's own storage contract: ``langgraph-checkpoint-conformance`` (PyPI) run against
``remit_ref.wrap(...)`` of each backend, next to the stock saver.

The suite exercises the async saver API (``aput``, ``aput_writes``, ``aget_tuple``,
``alist``, ``adelete_thread``, ``adelete_for_runs``, ``acopy_thread``, ``aprune``), so
each backend is its async saver: ``InMemorySaver``, ``AsyncSqliteSaver`` (a fresh file
per capability suite), ``AsyncPostgresSaver`` (a fresh database per run). REMIT must
pass every capability the wrapped saver passes. The suite detects capabilities by
which methods a class overrides; ``RemitSaver`` forwards every method, so it is
"detected" for capabilities its base lacks -- those rows are reported, not counted
against REMIT (the stock saver does not offer them either).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from pathlib import Path
from typing import Any, AsyncIterator

BACKENDS = ("memory", "sqlite", "postgres")


def _factory(backend: str, location: str, workdir: Path, wrapped: bool) -> Any:
    from remit_ref import wrap

    counter = itertools.count()

    async def make() -> AsyncIterator[Any]:
        async with contextlib.AsyncExitStack() as stack:
            if backend == "memory":
                from langgraph.checkpoint.memory import InMemorySaver

                base: Any = InMemorySaver()
            elif backend == "sqlite":
                from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

                path = workdir / f"lgconf-{'remit' if wrapped else 'stock'}-{next(counter)}.sqlite"
                path.unlink(missing_ok=True)
                base = await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(str(path)))
                await base.setup()
            else:
                from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

                base = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(location))
                await base.setup()
            yield wrap(base) if wrapped else base

    return make


def _in_own_loop(make: Any) -> Any:
    """Run a coroutine to completion on a fresh event loop in its own thread (a notebook kernel
    already runs one in this thread)."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = asyncio.run(make())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            out["error"] = exc
    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def run(backend: str, location: str, workdir: Path | str) -> dict[str, Any]:
    """Both reports (stock, REMIT) and the per-capability comparison."""
    from langgraph.checkpoint.conformance import checkpointer_test, validate

    workdir = Path(workdir)
    reports = {}
    for arm, wrapped in (("stock", False), ("remit", True)):
        registered = checkpointer_test(name=f"{backend}-{arm}")(_factory(backend, location, workdir, wrapped))
        reports[arm] = _in_own_loop(lambda: validate(registered)).to_dict()
    stock, remit = reports["stock"]["results"], reports["remit"]["results"]
    rows = []
    for cap in sorted(set(stock) | set(remit)):
        s, r = stock.get(cap, {}), remit.get(cap, {})
        rows.append({"capability": cap, "stock_detected": s.get("detected"), "stock_passed": s.get("passed"),
                     "stock_tests": f"{s.get('tests_passed', 0)}/{s.get('tests_passed', 0) + s.get('tests_failed', 0)}",
                     "remit_passed": r.get("passed"),
                     "remit_tests": f"{r.get('tests_passed', 0)}/{r.get('tests_passed', 0) + r.get('tests_failed', 0)}",
                     "remit_failures": r.get("failures", [])[:5]})
    regressions = [row["capability"] for row in rows if row["stock_passed"] is True and row["remit_passed"] is not True]
    return {"backend": backend, "stock_level": reports["stock"]["conformance_level"],
            "remit_level": reports["remit"]["conformance_level"], "capabilities": rows,
            "regressions": regressions, "remit_passes_all_stock_passes": not regressions}
