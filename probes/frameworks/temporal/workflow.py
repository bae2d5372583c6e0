"""The kit's workflow as a Temporal workflow definition (imported by the workflow sandbox).

Temporal runs workflow code in a sandbox; this module holds the definition alone, keeps no
state and imports nothing of the harness but the kit's step list (the adapter passes the
``probes`` package through the sandbox, so this module is shared with it rather than
re-imported): the activities (the kit's step bodies, ``probes.kit.runtime``) are registered by
the adapter and named here by string.

``s1`` runs as an activity, then ``ask`` (the kit's ``before_pause``), then the workflow waits
in ``wait_condition`` for the ``answer`` signal and runs ``s2`` on it (the steps of ``SHAPE``).
A step that asks twice (role "pause-twice") waits for the signal a second time after its first
answer's activity ``s2`` (the kit's ``first_answer``) and runs ``s2b`` (``second_answer``) on the
second signal: each answer is taken once, in the order the signals arrive. The ``paused`` query
tells a process running a worker that the workflow reached such a wait (the kit's pause), and
which one: 1 at the first wait of the run, 2 at the second, 0 while it waits for no signal --
so a process that answered the first wait can tell the second (a new pause) from the first.

The parallel workflow (roles "branch-pause" and "join") starts each branch as a child workflow
``KitBranch`` (``start_child_workflow``, id ``<parent's id>-<branch>``), so both wait for their own signal
at once; the parent awaits both children's results and runs the join's activity on them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

from probes.kit.runtime import shape

# The steps this process's workflow code runs (``runtime.shape()``: the original s1, ask, the
# signal, s2; or the code a change protocol deployed), read once when the worker imports the
# definition, outside the sandbox.
SHAPE = shape()

# A killed worker's activity is retried once its attempt's start-to-close timeout expires (the
# server has no other sign of the death); an activity body here takes milliseconds, so 10 s
# leaves a loaded machine ample room. Retries keep the default policy (unlimited attempts),
# starting 0.2 s after a failure instead of 1 s.
ACTIVITY = {"start_to_close_timeout": timedelta(seconds=10),
            "retry_policy": RetryPolicy(initial_interval=timedelta(milliseconds=200))}


# The handler workflow (role "pause-fails", then role "handler"): the failing activity's application error is
# not retried (``non_retryable_error_types``, Temporal's way to end an activity's retries on an error the
# application declares final), so the workflow's except runs the handler activity; a killed worker's attempt
# (a start-to-close timeout) is still retried.
FAILING = {**ACTIVITY, "retry_policy": RetryPolicy(initial_interval=timedelta(milliseconds=200),
                                                   non_retryable_error_types=["StepFailed"])}
HANDLER = next((name for name, role in SHAPE if role == "handler"), "h")


def handed(error: ActivityError) -> str:
    """What the workflow's except was handed, in words: the error's type and its cause's (an activity's
    exception reaches the workflow as an ``ActivityError`` whose cause is an ``ApplicationError`` that names
    the exception's type)."""
    cause = error.cause
    return f"{type(error).__name__}({type(cause).__name__} {getattr(cause, 'type', None)})"


@workflow.defn(name="kit_workflow")
class KitWorkflow:
    def __init__(self) -> None:
        self.answer: Any = None  # the last signalled answer not yet taken by a wait
        self.waits = 0           # the waits for a signal the run has reached
        self.waiting = 0         # the wait it is in now (``waits``), 0 when it waits for no signal

    @workflow.run
    async def run(self) -> str:
        result: Any = None
        started: dict[str, Any] = {}  # the parallel workflow's branches: child workflow handles, by branch
        for name, role in SHAPE:
            if role == "first":
                await workflow.execute_activity(name, **ACTIVITY)
            elif role == "pause":
                await workflow.execute_activity("ask", **ACTIVITY)
                result = await workflow.execute_activity(name, await self._asked(), result_type=str, **ACTIVITY)
            elif role == "nested-pause":  # the pausing step in a child workflow, its id derived from this one's
                info = workflow.info()
                result = await workflow.execute_child_workflow(
                    KitNested.run, name, id=nested_id(info.workflow_id, name), task_queue=info.task_queue,
                    task_timeout=info.task_timeout, result_type=str)
            elif role == "branch-pause":  # a child workflow started, not awaited: the next branch starts too
                info = workflow.info()
                started[name] = await workflow.start_child_workflow(
                    KitBranch.run, name, id=nested_id(info.workflow_id, name), task_queue=info.task_queue,
                    task_timeout=info.task_timeout)
            elif role == "join":  # every branch's result awaited, then the join's activity on them
                answers = {branch: await handle for branch, handle in started.items()}
                result = await workflow.execute_activity(name, answers, result_type=str, **ACTIVITY)
            elif role == "pause-twice":  # the same wait twice, the first answer's effect in between
                await workflow.execute_activity("ask", **ACTIVITY)
                await workflow.execute_activity(name, await self._asked(), **ACTIVITY)
                result = await workflow.execute_activity(name + "b", await self._asked(), result_type=str,
                                                         **ACTIVITY)
            elif role == "pause-fails":  # the handler workflow: a try/except around the failing activity
                await workflow.execute_activity("ask", **ACTIVITY)
                answer = await self._asked()
                try:
                    result = await workflow.execute_activity(name, answer, result_type=str, **FAILING)
                except ActivityError as error:
                    result = await workflow.execute_activity(HANDLER, args=[answer, handed(error)], result_type=str,
                                                             **ACTIVITY)
            elif role == "handler":  # run by the except above, not in its own place
                continue
            else:
                await workflow.execute_activity(name, result, result_type=str, **ACTIVITY)
        return result

    async def _asked(self) -> Any:
        """Wait for the ``answer`` signal (the kit's pause) and take its answer, so that a second
        wait waits for a signal of its own rather than reading the first wait's answer again."""
        self.waits += 1
        self.waiting = self.waits
        await workflow.wait_condition(lambda: self.answer is not None)
        self.waiting = 0
        answer, self.answer = self.answer, None
        return answer

    @workflow.signal(name="answer")
    def give(self, answer: Any) -> None:
        self.answer = answer

    @workflow.query(name="paused")
    def paused(self) -> int:
        """The wait for a signal the workflow is in (1: its first, 2: its second), 0 when none."""
        return self.waiting


def nested_id(parent: str, step: str) -> str:
    """The id of the child workflow that runs the nested workflow's pausing step ``step``."""
    return f"{parent}-{step}"


@workflow.defn(name="kit_nested")
class KitNested(KitWorkflow):
    """The nested workflow's pausing step as a child workflow (role "nested-pause"): ``ask``, the wait for
    the ``answer`` signal, then the step's activity on it; its result is the parent's. The signal and the
    ``paused`` query are the parent class's, so the kit's pause is this child's wait."""

    @workflow.run
    async def run(self, name: str) -> str:  # type: ignore[override]
        await workflow.execute_activity("ask", **ACTIVITY)
        return await workflow.execute_activity(name, await self._asked(), result_type=str, **ACTIVITY)


@workflow.defn(name="kit_branch")
class KitBranch(KitWorkflow):
    """A branch of the parallel workflow (role "branch-pause") as a child workflow of its own: the activity
    ``<branch>.ask`` (the kit's ``before_branch``), the wait for the ``answer`` signal sent to this child,
    then the branch's activity on it (``branch``: its effect); its result is the answer, which the parent's
    join takes. The ``paused`` query is the parent class's: this child's wait."""

    @workflow.run
    async def run(self, name: str) -> Any:  # type: ignore[override]
        await workflow.execute_activity(f"{name}.ask", **ACTIVITY)
        return await workflow.execute_activity(name, await self._asked(), **ACTIVITY)
