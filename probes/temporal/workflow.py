"""The kit's workflow as a Temporal workflow definition (imported by the workflow sandbox).

Temporal runs workflow code in a sandbox; this module holds the definition alone, keeps no
state and imports nothing of the harness (the adapter passes the ``probes`` package through the
sandbox, so this module is shared with it rather than re-imported): the activities (the kit's
step bodies, ``probes.kit.runtime``) are registered by the adapter and named here by string.

``s1`` runs as an activity, then ``ask`` (the kit's ``before_pause``), then the workflow waits
in ``wait_condition`` for the ``answer`` signal and runs ``s2`` on it. The ``paused`` query tells
a process running a worker that the workflow reached that wait (the kit's pause).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

# A killed worker's activity is retried once its attempt's start-to-close timeout expires (the
# server has no other sign of the death); an activity body here takes milliseconds, so 10 s
# leaves a loaded machine ample room. Retries keep the default policy (unlimited attempts),
# starting 0.2 s after a failure instead of 1 s.
ACTIVITY = {"start_to_close_timeout": timedelta(seconds=10),
            "retry_policy": RetryPolicy(initial_interval=timedelta(milliseconds=200))}


@workflow.defn(name="kit_workflow")
class KitWorkflow:
    def __init__(self) -> None:
        self.answer: Any = None
        self.waiting = False

    @workflow.run
    async def run(self) -> str:
        await workflow.execute_activity("s1", **ACTIVITY)
        await workflow.execute_activity("ask", **ACTIVITY)
        self.waiting = True
        await workflow.wait_condition(lambda: self.answer is not None)
        self.waiting = False
        return await workflow.execute_activity("s2", self.answer, result_type=str, **ACTIVITY)

    @workflow.signal(name="answer")
    def give(self, answer: Any) -> None:
        self.answer = answer

    @workflow.query(name="paused")
    def paused(self) -> bool:
        return self.waiting
