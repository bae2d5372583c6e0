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

The nested workflow (the kit's nested protocol, role "nested-pause"): the approval-gated tool ``s2`` belongs
to an agent of its own (``kit-s2``, a scripted model of its own, ``DBOSDurability`` too), which the outer
agent's tool ``s2`` runs: pydantic-ai's agent delegation (a tool that calls another agent's ``run``). The
delegate's run ends with ``DeferredToolRequests`` (pydantic-ai does not pass them up to the outer run:
the delegating tool answers them itself, as a caller of ``run`` does); the delegating tool asks (step
``ask``), parks in ``DBOS.recv_async`` inside the outer tool call (the workflow's own recv) and runs the
delegate again with the approval, and its result is the outer tool's result. Nothing of the nested run is
kept but what DBOS recorded: the delegate's model requests and its ``s2`` are steps of the one workflow.
"""

from __future__ import annotations

from typing import Any

from probes.kit import runtime

WID, TOPIC = "kit-run", "answer"
_registered: list[Any] = []


def _tools() -> tuple[str, ...]:
    """The tools the scripted model calls in order: ``s2b`` too when the step asks twice."""
    return ("s1", "s2", "s2b") if runtime.asks_twice() else ("s1", "s2")


def _model(messages: list[Any], info: Any) -> Any:
    """The scripted model: call each of ``_tools()``, then answer with the last one's result."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart

    done = {p.tool_name: p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}
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


def workflow() -> Any:
    """Build the agent and register the workflow once per process, before launch (recovery finds it by name)."""
    if _registered:
        return _registered[0]
    from dbos import DBOS
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolApproved
    from pydantic_ai.durable_exec.dbos import DBOSDurability
    from pydantic_ai.models.function import FunctionModel

    agent = Agent(FunctionModel(_model), name="kit", output_type=[str, DeferredToolRequests],
                  capabilities=[DBOSDurability()])

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

    @gated.tool_plain(requires_approval=True)
    @DBOS.step(name="s2")
    async def s2(answer: str = "") -> str:
        if runtime.asks_twice():
            runtime.first_answer(answer)
            return "s2 answered once"
        return runtime.step2(answer)

    if runtime.asks_twice():
        @agent.tool_plain(requires_approval=True)
        @DBOS.step(name="s2b")
        async def s2b(answer: str = "") -> str:  # the second approval of the step that asks twice
            return runtime.second_answer(answer)

    @DBOS.workflow(name="kit_workflow")
    async def kit_workflow() -> str:
        run = await agent.run("go")
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
