"""Microsoft Agent Framework: checkpointed executor workflows with a request/response pause.

Two executors joined by an edge: ``s1`` runs the kit's first step and sends a message;
``s2`` asks with ``ctx.request_info`` and, in its ``@response_handler``, runs the kit's
second step and yields the outcome. Checkpoints go to ``FileCheckpointStorage`` (JSON
files; the framework saves one per superstep). A pause's handle is the checkpoint id
and the request id; resuming is ``run(checkpoint_id=..., responses={request_id: answer})``.
For the pause-twice workflow the pausing executor asks twice through the same mechanism: its
response handler, given the answer to the first request, runs ``first_answer`` and issues a
second ``request_info``, whose answer it finishes the step with.
For the nested workflow (the kit's nested protocol) the pausing executor is the one executor of a
sub-workflow that ``WorkflowExecutor`` wraps as an executor of the outer workflow, agent_framework's
own nesting: with ``propagate_request`` the sub-workflow's request surfaces as the outer workflow's,
under the same request id, and the outer checkpoint embeds the sub-workflow's own checkpoint
(``WorkflowExecutor.on_checkpoint_save``), so the handle, the resume and the recovery stay as they are.
For the parallel workflow (the kit's parallel protocol) ``s1`` fans out (``add_fan_out_edges``) to one
executor per branch, each asking with ``request_info`` (its name as the request's data), and the branches
fan in (``add_fan_in_edges``) to the join, which the framework hands both branches' messages at once. A
pause's handle is the checkpoint id and each open request's id by its branch; one branch is answered by
``responses`` naming its request alone.
For the handler workflow (the kit's handler protocol) the run is a functional workflow, agent_framework's
other workflow API (``@workflow`` / ``@step``, experimental in 1.23.0, same ``run`` signature, same
checkpoint storage and workflow name): ``s1``, the answered ``s2`` and the handler ``h`` are ``@step``s, the
pause is ``RunContext.request_info``, and the error handler is a try/except around the ``s2`` step in the
durable workflow function (a step's exception is re-raised into the workflow, ``StepWrapper.__call__``),
which hands the exception to the ``h`` step. The graph API has no such construct: an executor's exception
ends the run (``Executor.execute`` emits ``executor_failed`` and re-raises).
"""


import asyncio
import os
from typing import Any

from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability, required_fields

NAME = "kit"
FIRST, SECOND = "first answer?", "second answer?"  # the two requests of the step that asks twice
INNER = "inner"  # the pausing executor's id inside the nested workflow's sub-workflow


def _workflow(storage: Any) -> Any:
    """The steps of ``runtime.shape()`` as executors in a chain (the original two, or the code a change
    protocol deployed); each sends its result on, the last one yields it as the workflow's output."""
    from agent_framework import (Executor, WorkflowBuilder, WorkflowContext, WorkflowExecutor, handler,
                                 response_handler)

    shape = runtime.shape()
    if any(role == "pause-fails" for _, role in shape):  # the handler workflow: the functional API's (below)
        return _handler_workflow(storage)
    last = shape[-1][0]

    async def forward(name: str, value: str, ctx: WorkflowContext[str, str]) -> None:
        await (ctx.yield_output(value) if name in (last, INNER) else ctx.send_message(value))

    class First(Executor):
        @handler
        async def go(self, msg: str, ctx: WorkflowContext[str, str]) -> None:
            await forward(self.id, runtime.step1(), ctx)

    class Second(Executor):
        @handler
        async def ask(self, msg: str, ctx: WorkflowContext) -> None:
            runtime.before_pause()
            await ctx.request_info("answer?", str)

        @response_handler
        async def answered(self, original: str, answer: str, ctx: WorkflowContext[str, str]) -> None:
            await forward(self.id, runtime.step2(answer), ctx)

    class SecondTwice(Executor):
        """The pausing step asking twice. Both requests are plain strings (a class of the adapter's
        own would need registering on the checkpoint allow-list), so the one response handler tells
        them apart by the request it is handed back, and the second request is issued from the
        handler of the first: the framework, not the adapter, keeps which question is pending."""

        @handler
        async def ask(self, msg: str, ctx: WorkflowContext) -> None:
            runtime.before_pause()
            await ctx.request_info(FIRST, str)

        @response_handler
        async def answered(self, original: str, answer: str, ctx: WorkflowContext[str, str]) -> None:
            if original == FIRST:
                runtime.first_answer(answer)
                await ctx.request_info(SECOND, str)
            else:
                await forward(self.id, runtime.second_answer(answer), ctx)

    class Approval(Second):
        """The callback workflow's pausing step (role "callback-pause"). MAF's tool approval takes no callback
        (``approval_mode`` is "always_require" or "never_require"); a workflow asks for an approval with
        ``ctx.request_info`` from an executor's handler, so the application's approval callback is the code
        of that handler before the request: it fires ``e_cb``, then the request pauses the workflow."""

        @handler
        async def ask(self, msg: str, ctx: WorkflowContext) -> None:
            runtime.before_pause()
            runtime.approval_callback()
            await ctx.request_info("approve?", str)

    class Extra(Executor):
        @handler
        async def go(self, msg: str, ctx: WorkflowContext[str, str]) -> None:
            await forward(self.id, runtime.extra_step(self.id, msg), ctx)

    def nested(id: str) -> Any:
        """The pausing step as the one executor of a sub-workflow (no checkpoint storage of its own: the
        outer workflow checkpoints it, as ``WorkflowExecutor``'s docstring says), wrapped as the outer
        workflow's executor ``id``. Its request goes up to the caller as the outer workflow's own
        (``propagate_request``); its output is the outer workflow's when it is the last step
        (``allow_direct_output``), else a message to the next step."""
        inner = WorkflowBuilder(start_executor=Second(id=INNER), name=f"{NAME}-{id}").build()
        return WorkflowExecutor(inner, id=id, allow_direct_output=id == last, propagate_request=True)

    class Branch(Executor):
        """A parallel branch (role "branch-pause"): asks with its own name as the request's data, and on its
        answer fires its effect and sends ``{branch: answer}`` on to the join."""

        @handler
        async def ask(self, msg: str, ctx: WorkflowContext) -> None:
            runtime.before_branch(self.id)
            await ctx.request_info(self.id, str)

        @response_handler
        async def answered(self, original: str, answer: str, ctx: WorkflowContext[dict]) -> None:
            await ctx.send_message({self.id: runtime.branch(self.id, answer)})

    class Join(Executor):
        """The join (role "join"): a fan-in edge hands it every branch's message at once, as a list."""

        @handler
        async def go(self, msgs: list[dict], ctx: WorkflowContext[str, str]) -> None:
            answers = {branch: answer for msg in msgs for branch, answer in msg.items()}
            await forward(self.id, runtime.join(answers, self.id), ctx)

    kinds = {"first": First, "pause": Second, "pause-twice": SecondTwice, "extra": Extra, "nested-pause": nested,
             "callback-pause": Approval, "branch-pause": Branch, "join": Join}
    executors = [kinds[role](id=name) for name, role in shape]
    builder = WorkflowBuilder(start_executor=executors[0], checkpoint_storage=storage, name=NAME)
    roles = [role for _, role in shape]
    if "branch-pause" in roles:  # s1 fans out to the branches, which fan in to the join
        branches = [e for e, role in zip(executors, roles) if role == "branch-pause"]
        join = executors[roles.index("join")]
        return builder.add_fan_out_edges(executors[0], branches).add_fan_in_edges(branches, join).build()
    for before, after in zip(executors, executors[1:]):
        builder = builder.add_edge(before, after)
    return builder.build()


def _handler_workflow(storage: Any) -> Any:
    """The handler workflow (``runtime.SHAPES["handler"]``) as a functional workflow: the graph API's executors
    have no error route (an executor's exception fails the run), while a functional workflow's ``@step`` raises
    its exception into the workflow function, where a try/except decides what runs next, the way a durable
    workflow of DBOS or Temporal handles a step's failure. Each step is a ``@step``, so its result is cached in
    the run's checkpoints and a replay (the response, a restored checkpoint) skips it; the handler is handed
    the exception itself. Named ``NAME`` like the graph workflow, so the adapter's checkpoint lookups hold."""
    from agent_framework import RunContext, step, workflow

    names = {role: name for name, role in runtime.shape()}

    @step(name=names["first"])
    async def first() -> str:
        return runtime.step1()

    @step(name=names["pause-fails"])
    async def answered(answer: str) -> str:
        return runtime.step2_fails(answer)

    @step(name=names["handler"])
    async def handle(answer: str, error: Exception) -> str:
        return runtime.handler(answer, error)

    @workflow(name=NAME)
    async def kit(message: str, ctx: RunContext) -> str:
        await first()
        runtime.before_pause()  # the workflow function replays from its top on every run: begins again, no effect
        answer = await ctx.request_info("answer?", str)
        try:
            return await answered(answer)
        except runtime.StepFailed as error:  # the failed step's own exception, raised into the workflow
            return await handle(answer, error)

    return kit.build(checkpoint_storage=storage)


class MafAdapter(Adapter):
    framework = "agent-framework"
    packages = ("agent-framework-core",)
    imports = ("agent_framework",)
    backends = ("file",)
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.CODE_CHANGE, Capability.TWO_PAUSES,
                              Capability.NESTED, Capability.DELETE, Capability.CALLBACK, Capability.PARALLEL,
                              Capability.HANDLER})
    code_changes = runtime.CODE_CHANGES
    recovery_modes = ("latest-checkpoint",)
    answers = ("yes", "no")
    from probes.frameworks.maf.citations import CITATIONS as citations

    def hook(self) -> None:
        from agent_framework import FileCheckpointStorage
        runtime.hook_save(FileCheckpointStorage, "save", writes=((os, "replace"),))

    def _storage(self) -> Any:
        from agent_framework import FileCheckpointStorage
        return FileCheckpointStorage(self.workdir / "checkpoints")

    def _run(self, **kw: Any) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            storage = self._storage()
            result = await _workflow(storage).run(**kw)
            pending = result.get_request_info_events()
            if pending:
                latest = await storage.get_latest(workflow_name=NAME)
                if runtime.branches(runtime.code()):  # the parallel workflow: each open request by its branch
                    asked = {str(e.data): e.request_id for e in pending}
                    return {"status": "paused", "handle": [latest.checkpoint_id, asked], "pending": sorted(asked)}
                return {"status": "paused", "handle": [latest.checkpoint_id, pending[0].request_id]}
            outputs, state = result.get_outputs(), result.get_final_state()
            finished = outputs or state.name == "IDLE"  # idle with nothing pending: the run is over
            return {"status": "completed" if finished else str(state), "outcome": outputs[0] if outputs else None}
        return asyncio.run(go())

    def _latest(self) -> tuple[str | None, str | None]:
        """The newest checkpoint and the newest request id any checkpoint holds."""
        async def go() -> tuple[str | None, str | None]:
            points = sorted(await self._storage().list_checkpoints(workflow_name=NAME), key=lambda c: c.timestamp)
            rids = [r for c in points for r in c.pending_request_info_events]
            return (points[-1].checkpoint_id if points else None, rids[-1] if rids else None)
        return asyncio.run(go())

    def start(self) -> dict[str, Any]:
        return self._run(message="go")

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        checkpoint, request = handle or self._latest()
        return self._run(checkpoint_id=checkpoint, responses={request: answer})

    def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """One parallel branch answered: ``run(checkpoint_id=..., responses={request_id: answer})`` with the
        request id of that branch's open request alone (the handle's ``{branch: request id}``; none: the
        newest checkpoint's pending requests, by the branch each asked with); the other request stays open."""
        async def asked() -> tuple[str, dict[str, str]]:
            latest = await self._storage().get_latest(workflow_name=NAME)
            return latest.checkpoint_id, {str(e.data): rid for rid, e in latest.pending_request_info_events.items()}
        checkpoint, requests = handle or asyncio.run(asked())
        return self._run(checkpoint_id=checkpoint, responses={requests[branch]: answer})

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        checkpoint, _ = self._latest()
        if checkpoint is None:
            return self.nothing_durable("no checkpoint written yet")
        return self._run(checkpoint_id=checkpoint)

    def delete(self) -> dict[str, Any]:
        """The run's durable state is its workflow's checkpoints; ``FileCheckpointStorage`` deletes one
        by id (``delete``, agent_framework's ``CheckpointStorage`` protocol) and lists a workflow's ids
        (``list_checkpoint_ids``): every checkpoint of the workflow, each through the storage's own delete."""
        async def go() -> None:
            storage = self._storage()
            for checkpoint in await storage.list_checkpoint_ids(workflow_name=NAME):
                await storage.delete(checkpoint)
        asyncio.run(go())
        return {"status": "deleted"}

    def state_paths(self) -> list[Any]:
        files = list((self.workdir / "checkpoints").glob("*.json"))
        return sorted(files, key=lambda p: self.load_state(p)["timestamp"])

    def state_required(self, doc: Any) -> dict[str, Any]:
        """A checkpoint file is agent-framework's ``WorkflowCheckpoint`` dataclass
        (``agent_framework/_workflows/_checkpoint.py``): ``FileCheckpointStorage.save`` writes
        ``checkpoint.to_dict()`` (one key per field) and ``load`` rebuilds it with
        ``WorkflowCheckpoint.from_dict`` (``cls(**data)``), so its fields without a default are
        the required keys."""
        from agent_framework import WorkflowCheckpoint
        return {"status": "schema", "required": required_fields(WorkflowCheckpoint),
                "model": "agent_framework WorkflowCheckpoint"}
