"""OpenAI Agents SDK: a tool that needs approval, a serialized RunState, an SQLite session.

A scripted model (``agents.testing.ScriptedModel``, no network) calls tool ``s1`` (the
kit's first step), then tool ``s2``, declared ``needs_approval=True``: the run pauses
with an approval interruption. The application stores ``result.to_state().to_string()``
after every run (``states/<n>.json``); a pause's handle is its state file. Answering is
``approve`` / ``reject`` on the restored state and ``Runner.run(agent, state)``; the
tool ``s2`` runs the kit's second step only when approved. Conversation items also go
to an ``SQLiteSession``, which gives a second documented recovery: rerun with the session.

The step that asks twice (the pause-twice workflow): the SDK asks for approval per tool call,
before the tool runs (``needs_approval``), and a tool body cannot ask again once it runs; so the
nearest the SDK comes to one step asking twice is one run whose gated work is two approval-gated
tool calls, answered one at a time: ``s2`` (approved: ``before_pause`` and ``first_answer``), then
``s2b``, which the scripted model calls after ``s2``'s output (approved: ``second_answer``). Each
pause is a stored RunState answered in a fresh process, so the second answer shows whether the
restored state keeps ``s2`` done or runs it again.

The nested workflow (the kit's nested protocol, role "nested-pause"): the approval-gated tool ``s2`` belongs
to an agent of its own (with a scripted model of its own), which the outer agent calls as its tool ``s2``
(``Agent.as_tool``, the SDK's agents-as-tools). The nested run's approval interruption is the outer
result's, and ``to_state()`` serializes the nested run's state inside the outer one (the pending function
call's ``agent_run_state``), so approving it on the restored outer state resumes the nested run.

The parallel workflow (the kit's parallel protocol): after ``s1`` the scripted model calls both branches'
approval-gated tools in one response (parallel tool calls), and once both have an output the join tool with
them; a paused status names the tools whose approval is pending. One branch is answered by approving its tool
call alone on the restored state (``resume_branch``); the other call's approval stays pending.
"""

import asyncio
from pathlib import Path
from typing import Any

from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability
from probes.frameworks.openai_agents.citations import CITATIONS


def _tools() -> tuple[str, ...]:
    """The tools the scripted model calls in order: ``s2b`` too when the step asks twice."""
    return ("s1", "s2", "s2b") if runtime.asks_twice() else ("s1", "s2")


def _nested() -> tuple[str, ...]:
    """The outer agent's tools that are agents (the nested workflow's pausing step, ``Agent.as_tool``)."""
    return tuple(name for name, role in runtime.shape() if role == "nested-pause")


def _respond_parallel(outs: list[tuple[str, str]]) -> list[Any]:
    """The scripted model of the parallel workflow: ``s1``; then both branches' approval-gated tools in one
    response (parallel tool calls); once both have an output, the join tool with their outputs by branch
    (a JSON string); then a final message echoing the join's result."""
    import json

    from agents.testing import assistant_message, function_call

    def last(tool: str) -> str | None:
        mine = [out for cid, out in outs if cid.rsplit("-", 1)[0] == tool]
        return mine[-1] if mine and not mine[-1].startswith("An error occurred while running the tool") else None

    branches = runtime.branches(runtime.code())
    join = next(name for name, role in runtime.shape() if role == "join")
    if last("s1") is None:
        return [function_call("s1", {}, call_id="s1-0")]
    if any(last(b) is None for b in branches):
        return [function_call(b, {}, call_id=f"{b}-0") for b in branches if last(b) is None]
    if last(join) is None:
        return [function_call(join, {"answers": json.dumps({b: last(b) for b in branches})}, call_id=f"{join}-0")]
    return [assistant_message(f"final: {last(join)}")]


def _respond(call: Any) -> list[Any]:
    """The scripted model: each of ``_tools()``, then a final message echoing the last one's result. A
    tool that failed is called again, as the SDK's error output asks ("... Please try again.")."""
    from agents.testing import assistant_message, function_call

    items = call.input if isinstance(call.input, list) else []
    outs = [(i.get("call_id"), str(i.get("output"))) for i in items if isinstance(i, dict)
            and i.get("type") == "function_call_output"]
    if runtime.branches(runtime.code()):
        return _respond_parallel(outs)
    for tool in _tools():
        mine = [out for cid, out in outs if cid.rsplit("-", 1)[0] == tool]
        if not mine or mine[-1].startswith("An error occurred while running the tool"):
            args = {"input": "go"} if tool in _nested() else {}  # an agent tool takes its agent's input
            return [function_call(tool, args, call_id=f"{tool}-{len(mine)}")]
    return [assistant_message(f"final: {mine[-1]}")]


def _respond_inner(call: Any) -> list[Any]:
    """The nested agent's scripted model (the nested workflow): its one tool, the approval-gated ``s2``,
    under a call id of its own (the SDK refuses one shared with the outer run), then a final message that
    is that tool's result, which the agent tool hands back to the outer agent as its output."""
    from agents.testing import assistant_message, function_call

    items = call.input if isinstance(call.input, list) else []
    outs = [str(i.get("output")) for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"
            and str(i.get("call_id")).startswith("inner-s2-")]
    if not outs or outs[-1].startswith("An error occurred while running the tool"):
        return [function_call("s2", {}, call_id=f"inner-s2-{len(outs)}")]
    return [assistant_message(outs[-1])]


def _agent() -> Any:
    from agents import Agent, function_tool, set_tracing_disabled
    from agents.testing import ModelStep, ScriptedModel

    set_tracing_disabled(True)  # no network: traces would be exported to the provider

    @function_tool
    def s1() -> str:
        return runtime.step1()

    async def approval_needed(context: Any, parameters: dict[str, Any], call_id: str) -> bool:
        """The callback workflow's approval callback (``needs_approval`` as a function, the SDK's per-call
        approval policy): the application's own code, run by the SDK before it pauses; it fires ``e_cb``."""
        return runtime.approval_callback()

    callback = any(role == "callback-pause" for _, role in runtime.shape())
    fails = any(role == "pause-fails" for _, role in runtime.shape())

    def on_error(context: Any, error: Exception) -> str:
        """The handler workflow's error handler: the tool's ``failure_error_function``, the SDK's handler of a
        tool call that raised, whose string is the call's output to the model."""
        return runtime.handler("approve", error)

    @function_tool(needs_approval=approval_needed if callback else True,
                   **({"failure_error_function": on_error} if fails else {}))
    def s2() -> str:
        runtime.before_pause()  # the call was approved: step 2 runs
        if fails:  # the handler workflow: e2, then the step raises
            return runtime.step2_fails("approve")
        if runtime.asks_twice():
            runtime.first_answer("approve")
            return "s2 answered once"
        return runtime.step2("approve")

    @function_tool(needs_approval=True)
    def s2b() -> str:  # the second approval of the step that asks twice
        return runtime.second_answer("approve")

    tools = [s1, s2, s2b] if runtime.asks_twice() else [s1, s2]
    if runtime.branches(runtime.code()):
        tools = [s1, *_parallel_tools()]
    nested = [name for name, role in runtime.shape() if role == "nested-pause"]
    if nested:  # the gated step inside an agent that the outer agent calls as its tool "s2"
        inner = ScriptedModel([ModelStep.respond(_respond_inner) for _ in range(8)])
        gated = Agent(name=f"kit-{nested[0]}", model=inner, tools=[s2])
        tools = [s1, gated.as_tool(tool_name=nested[0], tool_description="the kit's second step, as an agent")]
    return Agent(name="kit", model=ScriptedModel([ModelStep.respond(_respond) for _ in range(8)]), tools=tools)


def _parallel_tools() -> list[Any]:
    """The parallel workflow's tools: one approval-gated tool per branch (approved: ``before_branch`` and
    ``branch``, its effect), and the join, a tool taking the branches' outputs (``runtime.join``)."""
    import json

    from agents import function_tool

    def gated(name: str) -> Any:
        def branch() -> str:
            runtime.before_branch(name)  # the call was approved: the branch runs
            return runtime.branch(name, "approve")
        branch.__name__ = branch.__qualname__ = name
        return function_tool(branch, name_override=name, needs_approval=True)

    def joins(name: str) -> Any:
        def join(answers: str) -> str:
            return runtime.join(json.loads(answers), name)
        return function_tool(join, name_override=name)

    return [gated(name) if role == "branch-pause" else joins(name)
            for name, role in runtime.shape() if role in ("branch-pause", "join")]


class OpenAIAgentsAdapter(Adapter):
    framework = "openai-agents"
    packages = ("openai-agents", "openai")
    imports = ("agents",)
    backends = ("sqlite",)
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.TWO_PAUSES, Capability.NESTED,
                              Capability.DELETE, Capability.CALLBACK, Capability.HANDLER, Capability.PARALLEL})
    missing = {Capability.CODE_CHANGE: "the workflow is an agent's tool calls, chosen by the kit's scripted model: a "
                                       "code change would change its tools, which the change protocol does not define"}
    recovery_modes = ("run-state", "session")
    answers = ("approve", "reject")
    declines = ("reject",)
    citations = CITATIONS

    @classmethod
    def result(cls, answer: Any) -> Any:
        """The scripted model's final message echoes s2's result (``_respond``); a declined call has
        the SDK's rejection text as its final output, which the kit does not predict (no expectation)."""
        own = super().result(answer)
        return own if answer in cls.declines else f"final: {own}"

    @classmethod
    def handled(cls, answer: Any) -> Any:
        """The handler workflow's outcome: the scripted model's final message echoes the handler's output."""
        return f"final: {super().handled(answer)}"

    @classmethod
    def parallel_result(cls, answers: Any) -> Any:
        """The scripted model's final message echoes the join's result (``_respond_parallel``)."""
        return f"final: {super().parallel_result(answers)}"

    def hook(self) -> None:
        from agents import SQLiteSession
        runtime.hook_save(SQLiteSession, "add_items")

    def _go(self, payload: Any, answer: Any = None, only: str | None = None) -> dict[str, Any]:
        """Run the agent on ``payload`` (a stored state is restored and its approvals answered ``answer``;
        ``only``: the approval of that tool alone, the others left pending; no ``answer``: none answered) and
        store its state."""
        from agents import RunState, Runner, SQLiteSession

        async def go() -> dict[str, Any]:
            agent = _agent()
            session = SQLiteSession("kit", self.store)
            run_input = payload
            if isinstance(payload, Path):  # a stored state: restore it and answer its approvals
                run_input = await RunState.from_string(agent, payload.read_text())
                for item in run_input.get_interruptions():
                    if answer is not None and (only is None or item.tool_name == only):
                        (run_input.approve if answer == "approve" else run_input.reject)(item)
            result = await Runner.run(agent, run_input, session=session)
            states = self.workdir / "states"
            states.mkdir(parents=True, exist_ok=True)
            path = states / f"{len(list(states.glob('*.json'))) + 1:03d}.json"
            path.write_text(result.to_state().to_string())
            runtime.persisted("run-state")
            if result.interruptions:
                if runtime.branches(runtime.code()):  # the parallel workflow: the tools whose approval is pending
                    return {"status": "paused", "handle": path.name,
                            "pending": sorted({str(item.tool_name) for item in result.interruptions})}
                return {"status": "paused", "handle": path.name}
            return {"status": "completed", "outcome": result.final_output}
        return asyncio.run(go())

    def start(self) -> dict[str, Any]:
        return self._go("go")

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        paths = self.state_paths()
        return self._go(self.workdir / "states" / handle if handle else paths[-1], answer)

    def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """One parallel branch answered: the stored state restored and only the approval of the branch's tool
        call approved (or rejected), the other tool call's approval left pending, then ``Runner.run``."""
        paths = self.state_paths()
        return self._go(self.workdir / "states" / handle if handle else paths[-1], answer, only=branch)

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        if mode == "session":  # rerun on the conversation the session kept
            from agents import SQLiteSession
            has_items = asyncio.run(SQLiteSession("kit", self.store).get_items())
            return self._go([] if has_items else "go")
        paths = self.state_paths()
        if not paths:
            return self.nothing_durable("no run state saved yet")
        # the parallel workflow's recovery answers nothing itself: which branch an answer is for is the kit's
        return self._go(paths[-1], None if runtime.branches(runtime.code()) else answer)

    def delete(self) -> dict[str, Any]:
        """The SDK's durable store of the run is its session: ``clear_session`` (``SessionABC``, in
        ``SQLiteSession`` a delete of the session's row and its items) is its documented deletion.
        The stored ``RunState`` files are the application's own (the SDK serializes a state, it does
        not store it), so the application deletes them itself, as it wrote them."""
        from agents import SQLiteSession
        asyncio.run(SQLiteSession("kit", self.store).clear_session())
        for path in self.state_paths():
            path.unlink()
        return {"status": "deleted"}

    def state_paths(self) -> list[Any]:
        return sorted((self.workdir / "states").glob("*.json"))

    def state_required(self, doc: Any) -> dict[str, Any]:
        """A state file is ``RunState.to_string()``; the SDK declares no model for it (a plain JSON
        object). ``RunState.from_string``/``from_json`` read it in ``_build_run_state_from_json``
        (``agents/run_state.py``), which takes some keys by subscript, with no default
        (``current_agent``, ``context``, ``original_input``, ``max_turns``, ``current_turn`` in
        0.24.0; read from its source here) and every other one with ``.get`` and a default; before
        that, ``_validate_run_state_schema_version`` refuses a document without ``$schemaVersion``
        (asked of the validator itself here, with an empty document)."""
        from agents import run_state
        from agents.exceptions import UserError

        from probes.kit.adapter import keys_read  # reads subscripted keys from a function's source
        required = set(keys_read(run_state._build_run_state_from_json, "state_json"))
        try:
            run_state._validate_run_state_schema_version({}, validation_error_factory=lambda msg, kind: kind(msg))
        except UserError:  # the validator refuses a document without a schema version: that key is required
            required.add("$schemaVersion")
        return {"status": "schema", "required": sorted(required),
                "model": "agents RunState JSON (plain dict; keys _build_run_state_from_json requires)"}
