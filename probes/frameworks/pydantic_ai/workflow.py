"""The application the kit measures: a pydantic-ai agent with ``DBOSDurability`` inside a DBOS workflow.

Written the way the installed docstrings ask: ``DBOSDurability`` ("call ``agent.run()`` inside your own
``@DBOS.workflow`` to make that run durable"), a tool declared ``requires_approval=True`` (the run
ends with ``DeferredToolRequests``), answered with ``DeferredToolResults`` on the next run. A scripted
model (``FunctionModel``, no network, no keys) calls tool ``s1`` (the kit's first step), then ``s2``,
then answers with ``s2``'s result. The workflow then asks (step ``ask``: the kit's ``before_pause``),
parks in ``DBOS.recv_async`` for the answer and continues with ``agent.run(message_history=...,
deferred_tool_results=...)``, approving the call with the answer as its argument
(``ToolApproved(override_args=...)``); its result is the model's final text, ``s2``'s result.

The capability makes model requests DBOS steps; a function tool's body is no step (it runs again
whenever the workflow is replayed). A tool with a side effect is therefore decorated ``@DBOS.step()``
here, as the DBOS and pydantic-ai docs tell a user to do: the kit measures DBOS's recorded steps
around pydantic-ai's deferred tools. (Left undecorated, ``s1`` ran again in every process that
answered the pause, ``e1`` twice in a run with no fault: measured once on this machine, not a verdict.)

The step that asks twice (the pause-twice workflow): pydantic-ai asks for approval per tool call, before
the tool runs (``requires_approval``; the run ends with the call in ``DeferredToolRequests``), and a tool
body cannot ask again once it runs. So the step asks twice the way the SDK offers: two approval-gated
tool calls, ``s2`` (the kit's ``first_answer``) and then ``s2b`` (``second_answer``), which the scripted
model calls after ``s2``'s return; the workflow parks in ``recv`` for each approval in turn.

The parallel workflow (the kit's parallel protocol): the scripted model calls both branches' approval-gated
tools in one response, so the run ends with two approvals deferred; the workflow begins each branch (step
``ask_branch``), names the branches it waits for in a DBOS event (``pending``), and parks in ``recv`` for an
answer that names its branch, once per branch: pydantic-ai takes the deferred calls' results all at once
(a ``DeferredToolResults`` approving one of two is refused, "UserError: Tool call results need to be provided
for all deferred tool calls", measured on 2.68.0 while writing this workflow), so an answer given is kept as
DBOS keeps a consumed ``recv`` (its recorded operation) until the other arrives; then both calls are approved
together and the model calls the join tool on both results.

The nested workflow (the kit's nested protocol, role "nested-pause"): the approval-gated tool ``s2`` belongs
to an agent of its own (``kit-s2``, a scripted model of its own, ``DBOSDurability`` too), which the outer
agent's tool ``s2`` runs: pydantic-ai's agent delegation (a tool that calls another agent's ``run``). The
delegate's run ends with ``DeferredToolRequests`` (pydantic-ai does not pass them up to the outer run:
the delegating tool answers them itself, as a caller of ``run`` does); the delegating tool asks (step
``ask``), parks in ``DBOS.recv_async`` inside the outer tool call (the workflow's own recv) and runs the
delegate again with the approval, and its result is the outer tool's result. Nothing of the nested run is
kept but what DBOS recorded: the delegate's model requests and its ``s2`` are steps of the one workflow.

The handler workflow (the kit's handler protocol, role "pause-fails"): the approved ``s2`` fires ``e2`` and
raises (``runtime.step2_fails``); pydantic-ai's own handler of a tool's exception is a capability's
``on_tool_execute_error`` hook ("Return any value to suppress the error and use it as the tool result",
``pydantic_ai/capabilities/abstract.py``), registered here with the ``Hooks`` capability for tool ``s2``
(``hooks.on.tool_execute_error``). The hook runs the handler step ``h`` (``runtime.handler``, handed the
exception) and returns its output, which becomes ``s2``'s result; the scripted model answers with it.
``s2`` is a DBOS step as everywhere here (DBOS records the exception it raised, and a replay raises the
recorded one instead of running the body); ``h`` is one too, for its effect, by the same rule as the tools.

The callback workflow (the kit's callback protocol, role "callback-pause"): the approval is asked by
pydantic-ai's approval callback, ``ApprovalRequiredToolset``'s ``approval_required_func`` (``FunctionToolset
.approval_required(func)``, ``pydantic_ai/toolsets/approval_required.py``): for a call not yet approved the
toolset asks the function whether approval is needed and, if so, raises ``ApprovalRequired`` before the tool
runs; the run ends with the call in ``DeferredToolRequests``. ``s2`` is a tool of that toolset (not
``requires_approval``); the function fires ``e_cb`` (``runtime.approval_callback``) through a DBOS step
``cb`` of its own, by the rule above: the function is plain code of the workflow, which every replay runs.
The approved call runs with ``ctx.tool_call_approved`` set, so the toolset does not ask the function again.
(Left undecorated, the function ran again in every process that answered the pause, since that process
recovers the workflow and replays ``agent.run`` from its top: ``e_cb`` twice in a run with no fault, measured
once on this machine while writing this workflow, not a verdict. The handler's counts were the same either way.)
"""

from __future__ import annotations

from typing import Any

from probes.kit import runtime

WID, TOPIC = "kit-run", "answer"
_registered: list[Any] = []


def _tools() -> tuple[str, ...]:
    """The tools the scripted model calls in order: ``s2b`` too when the step asks twice."""
    return ("s1", "s2", "s2b") if runtime.asks_twice() else ("s1", "s2")


def _parallel_model(done: dict[str, Any]) -> Any:
    """The scripted model of the parallel workflow: ``s1``; then every branch's approval-gated tool in one
    response (parallel tool calls); with both results, the join tool on them (a JSON string); then its result."""
    import json

    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

    branches = runtime.branches(runtime.code())
    join = next(name for name, role in runtime.shape() if role == "join")
    if "s1" not in done:
        return ModelResponse(parts=[ToolCallPart("s1", {}, tool_call_id="call-s1")])
    if any(b not in done for b in branches):
        return ModelResponse(parts=[ToolCallPart(b, {}, tool_call_id=f"call-{b}") for b in branches if b not in done])
    if join not in done:
        answers = json.dumps({b: done[b] for b in branches})
        return ModelResponse(parts=[ToolCallPart(join, {"answers": answers}, tool_call_id=f"call-{join}")])
    return ModelResponse(parts=[TextPart(done[join])])


def _model(messages: list[Any], info: Any) -> Any:
    """The scripted model: call each of ``_tools()``, then answer with the last one's result."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart

    done = {p.tool_name: p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}
    if runtime.branches(runtime.code()):
        return _parallel_model(done)
    todo = [tool for tool in _tools() if tool not in done]
    return ModelResponse(parts=[ToolCallPart(todo[0], {}, tool_call_id=f"call-{todo[0]}") if todo
                                else TextPart(done[_tools()[-1]])])


def _nested() -> tuple[str, ...]:
    """The steps that run inside a delegate agent (role "nested-pause")."""
    return tuple(name for name, role in runtime.shape() if role == "nested-pause")


def _inner_model(messages: list[Any], info: Any) -> Any:
    """The delegate's scripted model: its approval-gated tool ``s2``, then answer with its result."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart

    done = [p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart) and p.tool_name == "s2"]
    return ModelResponse(parts=[TextPart(done[-1]) if done else ToolCallPart("s2", {}, tool_call_id="inner-s2")])


PENDING = "pending"  # the DBOS event where the parallel workflow names the branches whose approval it waits for


def _parallel_tools(agent: Any, branches: tuple[str, ...]) -> None:
    """The parallel workflow's tools on ``agent``: each branch approval-gated (its effect on the approved
    answer, ``runtime.branch``), the join on both branches' results; each a DBOS step, as ``s1`` is."""
    import json

    from dbos import DBOS

    join = next(name for name, role in runtime.shape() if role == "join")

    def gated(name: str) -> None:
        async def branch(answer: str = "") -> str:
            return runtime.branch(name, answer)
        agent.tool_plain(name=name, requires_approval=True)(DBOS.step(name=name)(branch))

    for name in branches:
        gated(name)

    async def joining(answers: str) -> str:
        return runtime.join(json.loads(answers), join)
    agent.tool_plain(name=join)(DBOS.step(name=join)(joining))


def _role(role: str) -> bool:
    """Whether this process's workflow has a step of ``role`` (``runtime.shape()``)."""
    return any(r == role for _, r in runtime.shape())


def _error_handler() -> Any:
    """The handler workflow's error handler: a ``Hooks`` capability whose ``on_tool_execute_error`` hook, for
    tool ``s2`` alone, runs the handler step ``h`` (a DBOS step: its effect is recorded once it ended) on the
    exception the tool raised and returns its output, which pydantic-ai then uses as the tool's result."""
    from dbos import DBOS
    from pydantic_ai.capabilities import Hooks

    @DBOS.step(name="h")
    async def handler_step(answer: Any, error: Exception) -> str:
        return runtime.handler(answer, error)

    hooks: Any = Hooks()

    @hooks.on.tool_execute_error(tools=["s2"])
    async def handled(ctx: Any, *, call: Any, tool_def: Any, args: Any, error: Exception) -> str:
        # the answer the approved call ran with: its override args, or what the failure carries
        answer = args.get("answer") if isinstance(args, dict) else getattr(error, "answer", None)
        return await handler_step(answer, error)

    return hooks


def _approval_asked() -> tuple[Any, Any]:
    """The callback workflow's toolset: ``s2`` is registered on it by ``workflow``; wrapped in
    ``ApprovalRequiredToolset`` whose ``approval_required_func`` is the application's approval callback. It
    fires ``e_cb`` in a DBOS step ``cb`` (so a replay of the workflow returns the recorded answer instead of
    firing it again) and returns True: the call needs approval. Returns the toolset to register ``s2`` on and
    the wrapped toolset the agent is given."""
    from dbos import DBOS
    from pydantic_ai.toolsets import FunctionToolset

    @DBOS.step(name="cb")
    def ask_approval() -> bool:
        return runtime.approval_callback()

    def approval_needed(ctx: Any, tool_def: Any, tool_args: dict[str, Any]) -> bool:
        return ask_approval()

    tools: Any = FunctionToolset()
    return tools, tools.approval_required(approval_needed)


def workflow() -> Any:
    """Build the agent and register the workflow once per process, before launch (recovery finds it by name)."""
    if _registered:
        return _registered[0]
    from dbos import DBOS
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolApproved
    from pydantic_ai.durable_exec.dbos import DBOSDurability
    from pydantic_ai.models.function import FunctionModel

    fails, by_callback = _role("pause-fails"), _role("callback-pause")
    capabilities: list[Any] = [DBOSDurability()] + ([_error_handler()] if fails else [])
    asked, wrapped = _approval_asked() if by_callback else (None, None)
    agent = Agent(FunctionModel(_model), name="kit", output_type=[str, DeferredToolRequests],
                  capabilities=capabilities, toolsets=[wrapped] if wrapped is not None else None)

    @agent.tool_plain
    @DBOS.step(name="s1")
    async def s1() -> dict[str, str]:
        return {"s1": runtime.step1()}

    @DBOS.step(name="ask")  # a step: a replay never asks again
    async def ask() -> None:
        runtime.before_pause()

    gated = agent
    if _nested():  # the approval-gated tool is the delegate's; the outer agent's s2 delegates to it
        gated = Agent(FunctionModel(_inner_model), name=f"kit-{_nested()[0]}",
                      output_type=[str, DeferredToolRequests], capabilities=[DBOSDurability()])

        @agent.tool_plain(name=_nested()[0])
        async def delegate() -> str:
            run = await gated.run("go")
            await ask()
            while isinstance(run.output, DeferredToolRequests):  # the delegate's approval, in the workflow's recv
                answer = await DBOS.recv_async(TOPIC, timeout_seconds=3600)
                approved = {c.tool_call_id: ToolApproved(override_args={"answer": answer})
                            for c in run.output.approvals}
                run = await gated.run(message_history=run.all_messages(),
                                      deferred_tool_results=DeferredToolResults(approvals=approved))
            return run.output

    @DBOS.step(name="s2")
    async def s2(answer: str = "") -> str:
        if fails:  # the handler workflow: e2, then the tool raises, for the on_tool_execute_error hook
            return runtime.step2_fails(answer)
        if runtime.asks_twice():
            runtime.first_answer(answer)
            return "s2 answered once"
        return runtime.step2(answer)

    if asked is not None:  # the callback workflow: approval asked by the toolset's approval_required_func
        asked.tool_plain(s2)
    else:
        gated.tool_plain(requires_approval=True)(s2)

    if runtime.asks_twice():
        @agent.tool_plain(requires_approval=True)
        @DBOS.step(name="s2b")
        async def s2b(answer: str = "") -> str:  # the second approval of the step that asks twice
            return runtime.second_answer(answer)

    branches = runtime.branches(runtime.code())
    if branches:
        _parallel_tools(agent, branches)

    @DBOS.step(name="ask_branch")  # each branch's begin, a step: a replay never begins it again
    async def ask_branch(name: str) -> None:
        runtime.before_branch(name)

    @DBOS.workflow(name="kit_workflow")
    async def kit_workflow() -> str:
        run = await agent.run("go")
        if branches:  # every branch's approval at once, one answer (naming its branch) at a time
            for call in run.output.approvals if isinstance(run.output, DeferredToolRequests) else []:
                await ask_branch(call.tool_name)
            while isinstance(run.output, DeferredToolRequests):
                calls = {c.tool_name: c.tool_call_id for c in run.output.approvals}
                given: dict[str, Any] = {}
                while set(calls) - set(given):  # each answer a recv of its own (recorded), kept until all are in
                    await DBOS.set_event_async(PENDING, sorted(set(calls) - set(given)))
                    answer = await DBOS.recv_async(TOPIC, timeout_seconds=3600)
                    given.setdefault(answer["branch"], answer["answer"])
                approved = {calls[b]: ToolApproved(override_args={"answer": given[b]}) for b in calls}
                run = await agent.run(message_history=run.all_messages(),
                                      deferred_tool_results=DeferredToolResults(approvals=approved))
            await DBOS.set_event_async(PENDING, [])
            return run.output
        if _nested():  # the delegate asked and was answered inside the outer run
            return run.output
        await ask()
        while isinstance(run.output, DeferredToolRequests):  # each approval the run asks for, in turn
            answer = await DBOS.recv_async(TOPIC, timeout_seconds=3600)
            approved = {c.tool_call_id: ToolApproved(override_args={"answer": answer}) for c in run.output.approvals}
            run = await agent.run(message_history=run.all_messages(),
                                  deferred_tool_results=DeferredToolResults(approvals=approved))
        return run.output

    _registered.append(kit_workflow)
    return kit_workflow
