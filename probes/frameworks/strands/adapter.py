"""Strands Agents: an agent whose second tool interrupts, persisted by a file session manager.

A scripted model (a ``strands.models.model.Model`` subclass: no Bedrock, no network) calls
tool ``s1`` (the kit's first step), then tool ``s2``, declared ``@tool(context=True)``:
it starts the second step and calls ``tool_context.interrupt("answer")``, which stops the
agent with ``stop_reason == "interrupt"``. ``FileSessionManager`` keeps the agent (its
interrupt state in ``agent.json``) and every message as JSON files under the probe's
``sessions/`` directory (never ``~/.strands``). Answering is a fresh ``Agent`` on the same
session called with ``[{"interruptResponse": {"interruptId": id, "response": answer}}]``;
the tool then runs again from its top and its ``interrupt`` call returns the answer. A
pause's handle is the interrupt id; the application also keeps the ids it was given
(``pauses.txt``), as a caller that shows the question to a human would. Recovery: a restored
agent in its interrupt state accepts only the answer (sent again); else ``agent()``, no input.

The nested workflow (the kit's nested protocol, role "nested-pause"): the interrupting tool ``s2`` belongs to
an agent of its own (a scripted model of its own, no session manager), which the outer agent calls as its
tool ``s2`` (``Agent.as_tool``, the SDK's agent-as-tool). The sub-agent's interrupt is raised again by the
outer agent (its id prefixed with the tool call's), and, the tool not preserving context, the outer agent
stores the sub-agent's interrupted turn in its own interrupt state (``agent.json``), from which answering
the outer interrupt in a fresh process restores the sub-agent and resumes its tool.
"""

import json
import os
from pathlib import Path
from typing import Any

from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability, required_fields
from probes.frameworks.strands.citations import CITATIONS

SESSION, AGENT = "kit", "kit"


def _events(tool: str | None, text: str = "", call_id: str = "", args: str = "{}") -> list[dict[str, Any]]:
    """One assistant message as model stream events: a tool call, or a final text."""
    if tool is None:
        block = [{"contentBlockDelta": {"delta": {"text": text}}}]
    else:
        block = [{"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": tool}}}},
                 {"contentBlockDelta": {"delta": {"toolUse": {"input": args}}}}]
    return [{"messageStart": {"role": "assistant"}}, *block, {"contentBlockStop": {}},
            {"messageStop": {"stopReason": "tool_use" if tool else "end_turn"}}]


def _calls(calls: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """One assistant message with several tool calls (``(tool, call id, input)`` each) as model stream events:
    the parallel workflow's branches, called at once."""
    blocks = [event for tool, call_id, args in calls
              for event in ({"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": tool}}}},
                            {"contentBlockDelta": {"delta": {"toolUse": {"input": args}}}}, {"contentBlockStop": {}})]
    return [{"messageStart": {"role": "assistant"}}, *blocks, {"messageStop": {"stopReason": "tool_use"}}]


def _parallel_reply(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scripted model of the parallel workflow: ``s1``; then both branches' tools in one message; once both
    have a result, the join tool with their results by branch (a JSON string); then the join's result as text."""
    def last(tool: str) -> str | None:
        mine = [r for r in results if r["toolUseId"].startswith(f"{tool}-") and r.get("status") != "error"]
        return "".join(c.get("text", "") for c in mine[-1]["content"]) if mine else None

    branches = runtime.branches(runtime.code())
    join = next(name for name, role in runtime.shape() if role == "join")
    if last("s1") is None:
        return _events("s1", call_id="s1-0")
    if any(last(b) is None for b in branches):
        return _calls([(b, f"{b}-0", "{}") for b in branches if last(b) is None])
    if last(join) is None:
        return _events(join, call_id=f"{join}-0", args=json.dumps({"answers": json.dumps({b: last(b) for b in branches})}))
    return _events(None, text=last(join) or "")


def _nested() -> tuple[str, ...]:
    """The outer agent's tools that are agents (the nested workflow's pausing step, ``Agent.as_tool``)."""
    return tuple(name for name, role in runtime.shape() if role == "nested-pause")


def _model(tools: tuple[str, ...] = ("s1", "s2"), prefix: str = "") -> Any:
    from strands.models.model import Model

    class Scripted(Model):
        """Each of ``tools`` (s1, then s2), then a final message that is the last one's result. A failed
        tool is called again. An agent tool takes its agent's input; ``prefix`` keeps a sub-agent's call
        ids apart from the outer agent's."""

        def update_config(self, **config: Any) -> None:
            pass

        def get_config(self) -> dict[str, Any]:
            return {}

        async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the kit's workflow asks for no structured output")
            yield

        async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            results = [b["toolResult"] for m in messages for b in m["content"] if "toolResult" in b]
            if runtime.branches(runtime.code()):  # the parallel workflow
                for event in _parallel_reply(results):
                    yield event
                return
            reply = None
            for tool in tools:
                mine = [r for r in results if r["toolUseId"].startswith(f"{prefix}{tool}-")]
                if reply is None and (not mine or mine[-1].get("status") == "error"):
                    args = '{"input": "go"}' if not prefix and tool in _nested() else "{}"
                    reply = _events(tool, call_id=f"{prefix}{tool}-{len(mine)}", args=args)
            for event in reply or _events(None, text="".join(c.get("text", "") for c in mine[-1]["content"])):
                yield event

    return Scripted()


def _agent(storage: Path) -> Any:
    from strands import Agent, tool
    from strands.session.file_session_manager import FileSessionManager

    @tool
    def s1() -> str:
        """The kit's first step."""
        return runtime.step1()

    @tool(context=True)
    def s2(tool_context: Any) -> str:
        """The kit's second step: asks for the answer, then consumes it."""
        runtime.before_pause()
        return runtime.step2(tool_context.interrupt("answer", reason="answer?"))

    hooks = []
    if any(role == "callback-pause" for _, role in runtime.shape()):  # the approval asked by a hook, not the tool
        s2, hooks = _approved_s2(), [_approval_hook()]
    if any(role == "pause-fails" for _, role in runtime.shape()):  # the answered step fails; a hook handles it
        s2, hooks = _failing_s2(), [_error_hook()]
    tools = [s1, s2]
    if runtime.branches(runtime.code()):
        tools = [s1, *_parallel_tools()]
    if _nested():  # the interrupting step inside an agent that the outer agent calls as its tool "s2"
        inner = Agent(model=_model(("s2",), prefix="inner-"), tools=[s2], name=f"kit-{_nested()[0]}",
                      callback_handler=None)
        tools = [s1, inner.as_tool(name=_nested()[0], description="the kit's second step, as an agent")]
    manager = FileSessionManager(session_id=SESSION, storage_dir=str(storage))
    return Agent(model=_model(), tools=tools, session_manager=manager, agent_id=AGENT, callback_handler=None,
                 hooks=hooks)


ANSWER_KEY = "kit_answer"  # where the approval hook leaves the answer for the tool (its invocation state)


def _approval_hook() -> Any:
    """The callback workflow's approval (role "callback-pause"): a ``BeforeToolCallEvent`` hook, Strands'
    interrupt from a hook, whose callback fires ``e_cb`` (the application's approval callback) and then calls
    ``event.interrupt``; answered, that call returns the answer, which the hook hands the tool."""
    from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry

    class Approval(HookProvider):
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeToolCallEvent, self.ask)

        def ask(self, event: BeforeToolCallEvent) -> None:
            if event.tool_use["name"] != "s2":
                return
            runtime.approval_callback()
            event.invocation_state[ANSWER_KEY] = event.interrupt("approval", reason="approve s2?")

    return Approval()


def _error_hook() -> Any:
    """The handler workflow's error handler: an ``AfterToolCallEvent`` hook (fired "regardless of whether the
    execution was successful or resulted in an error", its ``result`` writable) that, when ``s2`` raised, runs
    the handler step and replaces the error result with the handler's output."""
    from strands.hooks import AfterToolCallEvent, HookProvider, HookRegistry

    class OnError(HookProvider):
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(AfterToolCallEvent, self.handle)

        def handle(self, event: AfterToolCallEvent) -> None:
            if event.tool_use["name"] != "s2" or event.exception is None:
                return
            out = runtime.handler(getattr(event.exception, "answer", None), event.exception)
            event.result = {"toolUseId": event.tool_use["toolUseId"], "status": "success", "content": [{"text": out}]}

    return OnError()


def _failing_s2() -> Any:
    """The handler workflow's answered step: asks (an interrupt, as the kit's s2), then fires e2 and raises."""
    from strands import tool

    @tool(context=True)
    def s2(tool_context: Any) -> str:
        """The kit's second step, failing after its effect."""
        runtime.before_pause()
        return runtime.step2_fails(tool_context.interrupt("answer", reason="answer?"))

    return s2


def _approved_s2() -> Any:
    """The tool the approval hook gates: the kit's second step on the answer the hook received."""
    from strands import tool

    @tool(context=True)
    def s2(tool_context: Any) -> str:
        """The kit's second step, approved by the hook: consumes the answer."""
        runtime.before_pause()
        return runtime.step2(tool_context.invocation_state.get(ANSWER_KEY))

    return s2


def _parallel_tools() -> list[Any]:
    """The parallel workflow's tools: one per branch, interrupting with the branch's name (its begin before the
    interrupt, its effect after the answer: ``before_branch``, ``branch``), and the join taking their results."""
    from strands import tool

    def interrupting(name: str) -> Any:
        def branch(tool_context: Any) -> str:
            runtime.before_branch(name)
            return runtime.branch(name, tool_context.interrupt(name, reason=name))
        branch.__doc__ = f"The parallel workflow's branch {name}: asks for its answer, then consumes it."
        return tool(name=name, context=True)(branch)

    def joins(name: str) -> Any:
        def join(answers: str) -> str:
            return runtime.join(json.loads(answers), name)
        join.__doc__ = "The parallel workflow's join: both branches' answers, as a JSON object."
        return tool(name=name)(join)

    return [interrupting(name) if role == "branch-pause" else joins(name)
            for name, role in runtime.shape() if role in ("branch-pause", "join")]


class StrandsAdapter(Adapter):
    framework = "strands"
    packages = ("strands-agents",)
    imports = ("strands", "strands.models.model", "strands.session.file_session_manager")
    backends = ("file",)
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.DELETE, Capability.NESTED, Capability.CALLBACK,
                              Capability.HANDLER, Capability.PARALLEL})
    missing = {Capability.CODE_CHANGE: "the workflow is an agent's tool calls, chosen by the kit's scripted model: a "
                                       "code change would change its tools, which the change protocol does not define"}
    recovery_modes = ("session",)
    answers = ("yes", "no")
    citations = CITATIONS

    @property
    def _agent_file(self) -> Path:
        return self.workdir / "sessions" / f"session_{SESSION}" / "agents" / f"agent_{AGENT}" / "agent.json"

    @classmethod
    def environment(cls, root: Path) -> dict[str, str]:
        """Telemetry off before strands is imported (it exports traces only to an OTLP endpoint: none)."""
        return {"OTEL_SDK_DISABLED": "true"}

    def hook(self) -> None:
        """Every operation's first call in its process: no OTLP endpoint, then the session's atomic
        write hooked."""
        os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
        from strands.session.file_session_manager import FileSessionManager
        runtime.hook_save(FileSessionManager, "_write_file", writes=((os, "replace"),))

    def _call(self, prompt: Any) -> dict[str, Any]:
        result = _agent(self.workdir / "sessions")(prompt)
        if result.stop_reason == "interrupt" and runtime.branches(runtime.code()):
            return self._asking()
        if result.stop_reason == "interrupt":
            handle = result.interrupts[0].id
            with open(self.workdir / "pauses.txt", "a") as given:
                given.write(handle + "\n")
            return {"status": "paused", "handle": handle}
        return {"status": "completed", "outcome": str(result).strip(), "stop_reason": result.stop_reason}

    def _asking(self) -> dict[str, Any]:
        """The parallel workflow's pause, read from the durable interrupt state: the branches (each interrupt's
        name) still waiting; the handle maps each to its interrupt id."""
        named = self._interrupts()
        return {"status": "paused", "handle": named, "pending": sorted(named)}

    def _interrupts(self) -> dict[str, str]:
        """The durable interrupt state's open interrupts, by name (the parallel workflow's branches)."""
        if not self._agent_file.exists():
            return {}
        doc = json.loads(self._agent_file.read_text())
        state = (doc.get("_internal_state") or {}).get("interrupt_state") or {}
        if not state.get("activated"):
            return {}
        return {str(i.get("name")): iid for iid, i in (state.get("interrupts") or {}).items() if i.get("response") is None}

    def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """One parallel branch answered: a fresh agent on the session called with one ``interruptResponse``, the
        id of the interrupt the branch's tool raised (from ``handle``, else the durable interrupt state); the
        other interrupt gets no response."""
        iid = (handle or self._interrupts()).get(branch)
        return self._call([{"interruptResponse": {"interruptId": iid, "response": answer}}])

    def _pending(self) -> list[str]:
        """The interrupt ids the durable agent state is waiting on."""
        if not self._agent_file.exists():
            return []
        doc = json.loads(self._agent_file.read_text())
        state = (doc.get("_internal_state") or {}).get("interrupt_state") or {}
        return list(state.get("interrupts") or {}) if state.get("activated") else []

    def start(self) -> dict[str, Any]:
        return self._call("go")

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        if handle is None:  # the run's current pause, else the last one the application was given
            given = (self.workdir / "pauses.txt").read_text().split()
            handle = (self._pending() or given)[-1]
        return self._call([{"interruptResponse": {"interruptId": handle, "response": answer}}])

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        if not self._agent_file.exists():
            return self.nothing_durable("no agent state saved yet")
        pending = self._pending()
        if pending and runtime.branches(runtime.code()):  # which branch an answer is for is the kit's to say
            return self._asking()
        if pending:  # the restored agent is in its interrupt state: it accepts only the answer
            return self.resume(pending[-1], answer)
        return self._call(None)  # "No input: uses existing conversation history"

    def delete(self) -> dict[str, Any]:
        """``FileSessionManager.delete_session``, the session manager's own deletion of a session
        ("Delete session and all associated data": the session's directory, its agent and messages)."""
        from strands.session.file_session_manager import FileSessionManager
        FileSessionManager(session_id=SESSION, storage_dir=str(self.workdir / "sessions")).delete_session(SESSION)
        return {"status": "deleted"}

    # The durable state the kit edits is agent.json: the agent, its interrupt state inside.
    def state_paths(self) -> list[Any]:
        return [self._agent_file] if self._agent_file.exists() else []

    def state_required(self, doc: Any) -> dict[str, Any]:
        from strands.types.session import SessionAgent
        return {"status": "schema", "required": required_fields(SessionAgent), "model": "strands SessionAgent"}
