"""What every adapter process of the Temporal campaign runs: a client, a worker, the activities.

The activities are the kit's step bodies (``probes.kit.runtime``), sync functions on a thread
pool. A session connects a client to the campaign's dev server (``RC_TEMPORAL_ADDRESS``) with
telemetry off (no metrics exporter, no worker heartbeats, no environment info) and, unless it
is a client only, runs a worker on the run's task queue that caches no workflow between tasks,
so each workflow task replays the history. The harness package passes through the workflow
sandbox: its ``__init__`` resolves the project root, a file-system access the sandbox forbids,
and the workflow module keeps no state, so sharing it is safe.

Process hygiene: ``tether()`` makes the kernel kill this process when the campaign that started
it dies (it may be mid-wait on a server that is going away), and ends it at once if that
already happened; ``exit_hard()`` ends the process in threading's exit hooks, once the kit's
child has written its result and before interpreter finalization, where temporalio's native
threads can abort it (temporalio/sdk-python#300).
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, AsyncIterator

from probes.kit import runtime
from probes.frameworks.temporal.server import die_with_parent

ADDRESS = "RC_TEMPORAL_ADDRESS"  # the campaign's dev server (probes.frameworks.temporal.campaign)
HOLDS: dict[str, str] = {}  # step -> a barrier socket: the activity waits there once its body returned


def hold_after(step: str) -> None:
    """Where the server-kill protocol holds a live worker: the step's body (and effect) done, its
    outcome not yet reported to the server. The parent kills the server meanwhile, then says go."""
    if (sock := HOLDS.pop(step, None)) is not None:
        from probes.core.barrier import wait_at_barrier
        wait_at_barrier(sock)


def shield_effects() -> None:
    """Make each kit effect whole under temporalio's cancellation of a threaded activity.

    temporalio cancels a synchronous activity running on a thread pool by raising ``CancelledError``
    inside its thread, between any two bytecodes (``Runtime._raise_in_thread``). A stalled worker let go
    on after its activity timed out meets that at once, and once it landed inside the kit's effect:
    after the counter had counted ``e2``, before the ledger committed its row. The two oracles then
    disagreed and the cell ended in a harness error (drift, temporalio 1.35.0,
    ``stall.s2.consumed.worker.sqlite``: counter {'e2': 2} vs ledger {'e2': 1}, seen in two runs).
    temporalio's own remedy for code that must not be cut in two is
    ``activity.shield_thread_cancel_exception()``: a cancellation arriving inside the block is raised
    when the block ends. The kit runs each effect inside it (``runtime.guard_effects``) when the effect
    fires in an activity. So an effect fires or not, as the framework decides, but never half.
    """
    from temporalio import activity

    runtime.guard_effects(lambda: activity.shield_thread_cancel_exception() if activity.in_activity()
                          else contextlib.nullcontext())


def activities() -> list[Any]:
    """The activities of the steps of ``runtime.shape()`` (the original ``s1``, ``ask``, ``s2``, or the
    code a change protocol deployed, or the pause-twice workflow), each registered under its step's
    name; a step that asks twice has one activity per answer, ``<step>`` and ``<step>b``, so each
    answer's effect fires inside an activity of its own, as the one answer's does."""
    from temporalio import activity

    shield_effects()

    def first(name: str) -> list[tuple[str, Any]]:
        def s1() -> str:
            out = runtime.step1()
            hold_after(name)
            return out
        return [(name, s1)]

    def answered(name: str) -> list[tuple[str, Any]]:
        def s2(answer: Any) -> str:
            return runtime.step2(answer)
        return [(name, s2)]

    def twice(name: str) -> list[tuple[str, Any]]:
        def after_first(answer: Any) -> None:
            runtime.first_answer(answer)

        def after_second(answer: Any) -> str:
            return runtime.second_answer(answer)
        return [(name, after_first), (name + "b", after_second)]

    def extra(name: str) -> list[tuple[str, Any]]:
        def more(passed: Any) -> Any:
            return runtime.extra_step(name, passed)
        return [(name, more)]

    def ask() -> None:
        runtime.before_pause()

    def fails(name: str) -> list[tuple[str, Any]]:  # the handler workflow's answered step: raises after e2
        def s2_fails(answer: Any) -> str:
            return runtime.step2_fails(answer)
        return [(name, s2_fails)]

    def handler(name: str) -> list[tuple[str, Any]]:  # the activity the workflow's except runs
        def on_error(answer: Any, handed: str) -> str:
            return runtime.handler(answer, handed=handed)
        return [(name, on_error)]

    def branch(name: str) -> list[tuple[str, Any]]:  # the parallel workflow's branch: its begin, its answer's effect
        def begin() -> None:
            runtime.before_branch(name)

        def answered_branch(answer: Any) -> Any:
            return runtime.branch(name, answer)
        return [(f"{name}.ask", begin), (name, answered_branch)]

    def join(name: str) -> list[tuple[str, Any]]:
        def joined(answers: dict[str, Any]) -> str:
            return runtime.join(answers, name)
        return [(name, joined)]

    bodies = {"first": first, "pause": answered, "pause-twice": twice, "extra": extra, "nested-pause": answered,
              "pause-fails": fails, "handler": handler, "branch-pause": branch, "join": join}
    return [activity.defn(name="ask")(ask)] + [activity.defn(name=named)(body) for name, role in runtime.shape()
                                              for named, body in bodies[role](name)]


class WorkflowTaskFailed(Exception):
    """Temporal failed the workflow's task and keeps retrying it (a ``NondeterminismError``: the
    replayed history no longer matches the workflow code) -- the failure is recorded in the
    workflow's history, where any client sees it, and the run waits for a fix of the code instead
    of ending. Raised with the failure's own message, as the framework's refusal."""


async def result_or_task_failure(handle: Any, poll: float = 0.5) -> Any:
    """The workflow's result, or ``WorkflowTaskFailed`` once its history records a workflow task that
    failed as nondeterministic (which Temporal retries rather than ending the run)."""
    import asyncio

    from temporalio.api.enums.v1 import EventType, WorkflowTaskFailedCause

    waiting = asyncio.ensure_future(handle.result())
    try:
        while not (await asyncio.wait({waiting}, timeout=poll))[0]:
            async for event in handle.fetch_history_events():
                attrs = event.workflow_task_failed_event_attributes
                if (event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED and attrs.cause ==
                        WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR):
                    raise WorkflowTaskFailed(attrs.failure.message)
        return waiting.result()
    finally:
        waiting.cancel()


@contextlib.asynccontextmanager
async def session(task_queue: str, worker: bool = True) -> AsyncIterator[Any]:
    """A connected client; with ``worker``, a worker runs on ``task_queue`` while the block runs."""
    from temporalio.client import Client
    from temporalio.runtime import Runtime, TelemetryConfig
    from temporalio.worker import Worker
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

    from probes.frameworks.temporal.workflow import KitBranch, KitNested, KitWorkflow
    engine = Runtime(telemetry=TelemetryConfig(metrics=None), worker_heartbeat_interval=None,
                     disable_environment_info=True)
    client = await Client.connect(os.environ[ADDRESS], runtime=engine)
    if not worker:
        yield client
        return
    sandbox = SandboxedWorkflowRunner(restrictions=SandboxRestrictions.default.with_passthrough_modules("probes"))
    with ThreadPoolExecutor(4) as pool:
        async with Worker(client, task_queue=task_queue, workflows=[KitWorkflow, KitNested, KitBranch], activities=activities(),
                          activity_executor=pool, max_cached_workflows=0, workflow_runner=sandbox):
            yield client


def tether() -> None:
    """Die with the campaign (Linux: PR_SET_PDEATHSIG); if it died already, end now."""
    if (die := die_with_parent()) is None:
        return
    die()
    hold = os.environ.get("RC_HOLD_FD")  # the kit's parent (run_child) holds its write end while it lives
    if hold and select.select([int(hold)], [], [], 0)[0]:  # EOF: it died before the line above
        os._exit(1)


def exit_hard() -> None:
    """Register the hard exit: status 0 when the kit's result was written, else 1."""
    def end() -> None:
        result = os.environ.get("RC_RESULT_PATH")
        sys.stdout.flush(), sys.stderr.flush()
        os._exit(0 if result and os.path.exists(result) else 1)
    threading._register_atexit(end)  # type: ignore[attr-defined]  # runs first: registered last
