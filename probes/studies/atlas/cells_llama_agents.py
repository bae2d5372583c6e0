"""The LlamaIndex workflow server's atlas cells (``python -m probes.studies.atlas.cells_llama_agents``, in a release's env).

The real server of run-llama/llama-agents (``llama_agents.server.WorkflowServer``) over its
SQLite store (``SqliteWorkflowStore``, a file in the cell's scratch directory): a run is
started through its HTTP API (``POST /workflows/<name>/run-nowait``) with the server on a
loopback port (127.0.0.1, an ephemeral port, uvicorn), the server process is killed at a
barrier in the store, and the server is started again on the same store, which is when
it resumes the handlers it finds running. The workflow's step fires its effect through
the harness oracle. The vocabulary is ``probes.studies.atlas.cellkit``'s.
"""

import asyncio  # no ``from __future__ import annotations``: the step decorator reads real annotations
import importlib
import json
import sys
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from probes.studies.atlas.cellkit import CellBase, Module, NotApplicable, NotReproduced, Observed, Registry, err, killed_child
from probes.core.history import Kind

CELLS = Registry()
WORKFLOW = "charge"
BOOT_WAIT_S = 10.0


def _api() -> dict[str, Any]:
    try:
        from llama_agents.server import HandlerQuery, SqliteWorkflowStore, WorkflowServer
        from workflows import Workflow, step
        from workflows.events import StartEvent, StopEvent
    except ImportError as exc:
        raise NotApplicable(f"no WorkflowServer with a SqliteWorkflowStore in this release ({exc})") from None
    return {"Query": HandlerQuery, "Store": SqliteWorkflowStore, "Server": WorkflowServer, "Workflow": Workflow,
            "step": step, "Start": StartEvent, "Stop": StopEvent}


def _workflow(c: CellBase, api: dict[str, Any]) -> Any:
    """``charge``: one step that charges the order its start event names (its effect ``charge:<order>``)."""
    Start, Stop, step = api["Start"], api["Stop"], api["step"]

    class OrderStart(Start):  # type: ignore[misc, valid-type]
        order: str | None = None

    class Charge(api["Workflow"]):  # type: ignore[misc, valid-type]
        @step
        async def charge(self, ev: OrderStart) -> Stop:  # type: ignore[valid-type]
            c.log(Kind.STEP_BEGIN, "charge", value=ev.order)
            c.fire(f"charge:{ev.order}", "charge")
            return Stop(result=f"charged {ev.order}")

    return Charge(timeout=30)


def _child_cell(backend: str, location: str, workdir: str, incarnation: str) -> CellBase:
    return CellBase(backend, location, Path(workdir), incarnation)


def victim_564(backend: str, location: str, workdir: str) -> dict[str, Any]:
    """Child: serve the workflow on loopback, start a run over HTTP, and park (to be SIGKILLed) at the
    store's first tick -- after the handler's row was written as running, before any state of the
    run was persisted (the order the store sees; recorded)."""
    import uvicorn

    from probes.core.nemesis import park

    c = _child_cell(backend, location, workdir, "server-1")
    api = _api()
    writes: list[str] = []

    class BarrierStore(api["Store"]):  # type: ignore[misc, valid-type]
        async def update(self, handler: Any) -> Any:
            writes.append(f"update({handler.status})")
            c.log(Kind.PERSIST, value=f"handler {handler.status}")
            return await super().update(handler)

        async def append_tick(self, run_id: str, tick_data: Any) -> Any:
            writes.append("append_tick")
            c.log(Kind.PERSIST, value="first tick", writes=list(writes))
            park("kill")
            return await super().append_tick(run_id, tick_data)

    async def serve() -> None:
        server = api["Server"](workflow_store=BarrierStore(location))
        server.add_workflow(WORKFLOW, _workflow(c, api))
        await server.start()
        web = uvicorn.Server(uvicorn.Config(server.app, host="127.0.0.1", port=0, log_level="warning",
                                            lifespan="off"))
        serving = asyncio.create_task(web.serve())
        while not web.started:
            await asyncio.sleep(0.02)
        port = web.servers[0].sockets[0].getsockname()[1]

        def post() -> Any:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/workflows/{WORKFLOW}/run-nowait",
                                             data=json.dumps({"start_event": {"order": "A-1"}}).encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as reply:
                return json.loads(reply.read())

        c.log(Kind.START, value="order A-1")
        await asyncio.to_thread(post)
        await asyncio.sleep(5)  # the barrier is reached before this ends
        web.should_exit = True
        await serving

    asyncio.run(serve())
    return {"not_killed": True, "writes": writes}


def _version() -> str:
    import importlib.metadata

    return importlib.metadata.version("llama-agents-server")


def _grace_s() -> float:
    """How old a running handler must be before a starting server resumes it (0 if the release has no
    such window): a handler younger than that may still belong to a live server."""
    try:
        runtime = importlib.import_module("llama_agents.server._runtime.persistence_runtime")
    except ImportError:
        return 0.0
    grace = getattr(runtime, "RESUME_FRESH_HANDLER_GRACE", None)
    return float(grace.total_seconds()) if grace is not None else 0.0


def _boot(c: CellBase, api: dict[str, Any], location: str, label: str) -> dict[str, Any]:
    """Start the server again on the store (it resumes what it finds running), let its resume end, stop it."""
    async def boot() -> dict[str, Any]:
        store = api["Store"](location)
        server = api["Server"](workflow_store=store)
        server.add_workflow(WORKFLOW, _workflow(c, api))
        c.log(Kind.RECOVER, value=label)
        await server.start()
        deadline = time.monotonic() + BOOT_WAIT_S
        handlers = await store.query(api["Query"]())
        while time.monotonic() < deadline and any(h.status == "running" for h in handlers):
            await asyncio.sleep(0.2)
            handlers = await store.query(api["Query"]())
        await server.stop()
        return {"handlers": [{"status": h.status, "result": None if h.result is None else str(getattr(h.result, "result",
                                                                                                     h.result)),
                              "error": (h.error or None) and str(h.error)[:200]} for h in handlers]}

    return asyncio.run(boot())


@CELLS.cell("564")
def zombie_handler_rerun_from_empty_start(c: CellBase) -> Observed:
    """A run of ``charge`` for order A-1 is accepted over HTTP; the server is SIGKILLed after the
    handler's row was written as running and before any state of the run was persisted. The server
    is started twice on the same store. A handler with nothing to replay cannot be resumed: the
    server must say so (mark it failed) and must not run the workflow again from an empty start
    event -- a charge for an order nobody sent, recorded as the handler's completed result. (The
    report's second half, duplicate rows of the LlamaCloud agent-data store, needs that service:
    not run.)"""

    api = _api()
    if not hasattr(api["Store"], "append_tick"):  # before 0.2.0 a handler's row carried its whole context
        raise NotApplicable(f"llama-agents-server {_version()}: its store persists no ticks (SqliteWorkflowStore has "
                            f"no append_tick), so a running handler with nothing to replay is not a state it leaves")
    location = str(c.workdir / "workflows.sqlite")
    killed_child("probes.studies.atlas.cells_llama_agents:victim_564",
                 {"backend": c.backend, "location": location, "workdir": str(c.workdir)},
                 "564: the server at its first tick")
    c.log(Kind.CRASH, detail_how="SIGKILL at the store's first tick")
    writes = [e.value for e in c.history.read().of(Kind.PERSIST) if e.incarnation == "server-1"]

    async def rows() -> list[Any]:
        return await api["Store"](location).query(api["Query"]())

    left = asyncio.run(rows())
    if [h.status for h in left] != ["running"]:
        raise NotReproduced(f"the killed server left handlers {[h.status for h in left]}, not one running handler "
                            f"(store writes before the kill: {writes})")
    waited = 0.0
    grace = _grace_s()
    if grace:  # restart once the handler is older than the window in which a live server may still own it
        started = left[0].started_at
        started = started if started.tzinfo else started.replace(tzinfo=timezone.utc)
        waited = max(0.0, grace + 1.0 - (datetime.now(timezone.utc) - started).total_seconds())
        time.sleep(waited)
    before = c.ledger.counts()
    boots = {}
    for label in ("boot 1", "boot 2"):
        try:
            boots[label] = _boot(c, api, location, label)
        except Exception as exc:  # a loud failure to start is an observation
            boots[label] = {"error": err(exc), "handlers": []}
    counts = c.ledger.counts()
    reran = {k: counts.get(k, 0) - before.get(k, 0) for k in counts if counts.get(k, 0) - before.get(k, 0)}
    final = (boots["boot 2"].get("handlers") or boots["boot 1"].get("handlers") or [{}])[0]
    status = final.get("status")
    fabricated = [k for k in reran if k != "charge:A-1"]
    behaviour = (f"server killed after writing the handler as running, before any tick ({', '.join(writes)}); "
                 + (f"restarted once the handler was older than the release's {grace:.0f} s resume window; "
                    if grace else "")
                 + "; ".join(f"{b}: handler {(o.get('handlers') or [{}])[0].get('status')}"
                             + (f", raised {o['error']}" if o.get("error") else "") for b, o in boots.items())
                 + (f"; the workflow ran again from the start: {', '.join(f'{k} x{v}' for k, v in reran.items())}"
                    if reran else "; the workflow did not run again")
                 + (f"; result {final.get('result')!r}" if final.get("result") else "")
                 + (f"; error {final.get('error')!r}" if final.get("error") else ""))
    return Observed(behaviour, {"refused_at_write": status == "failed" and not reran,
                                "became_durable": status == "completed" and bool(fabricated),
                                "error": final.get("error")},
                    {"store_writes_before_kill": writes, "boots": boots, "reran": reran, "grace_s": grace,
                     "waited_s": round(waited, 1)})


DISTRIBUTIONS = ("llama-agents-server", "llama-index-workflows")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
