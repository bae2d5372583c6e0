"""AutoGen AgentChat: a ``GraphFlow`` team whose run stops at a handoff to the user.

Scripted agents (no model) in a ``DiGraphBuilder`` graph ``s1 -> ask -> s2``: ``s1`` runs
the kit's first step; ``ask`` starts the second and hands off to the user, which
``HandoffTermination("user")`` turns into the end of the run; ``s2`` runs the rest of the
second step with the newest ``user`` message it was given. AgentChat has no durable
execution; as its human-in-the-loop tutorial says (AG-3), the application saves the
team's state when a run stops and resumes the team when the answer arrives. So after
every run the adapter writes ``team.save_state()`` to ``states/<n>-<pid>.json``: one
document per agent (message buffers; the graph manager's thread, ready queue and turn,
listed last, so the kit tampers with it). A pause's handle is its file: answering is
``team.load_state`` of it + ``team.run(task=answer)``, so answering again loads the same
snapshot again. Recovery (``latest-team-state``) reads the newest file: a thread ending in
the handoff to the user still waits for the answer (the kit delivers it again);
otherwise the run completed; no file: start over.

SAVE_HOOK: AutoGen writes nothing to disk; the hooked save is the adapter's ``_save``:
``team.save_state()`` and an atomic JSON write (temp file, fsync, ``os.replace``), so
``save.write`` kills just before the rename (``save.enter``: before ``save_state``).

Three operations for AutoGen's own protocols (``probes.frameworks.autogen.protocols``), which the
kit never calls: ``load`` (only ``team.load_state`` of a saved state, so a refusal there is
a refusal at ``load_state``, not in the run after it), ``proceed`` (a saved state loaded
into a new team and run on without a new task) and ``state_errors`` (what AgentChat's own
models reject in edited entries of a team state).

The nested workflow (the kit's nested protocol, role "nested-pause"): the asking agent and ``s2`` form a
team of their own (a ``GraphFlow`` ``ask -> s2`` that ends at the handoff to the user), a participant of
the outer team (AgentChat's nested teams: a ``Team`` among a group chat's participants). ``GraphFlow``
takes agents only, so the outer team is a ``SelectorGroupChat`` whose ``selector_func`` picks ``s1`` first
and the inner team after it (its model is never asked: ``_NoModel`` refuses if it were). The inner team's
handoff reaches the outer thread with its result, where ``HandoffTermination("user")`` stops the outer run;
``save_state`` of the outer team holds the inner team's state in its participant's entry, and the answer
(the outer run's task) is buffered for the inner team, which resumes at ``s2``.

The handler workflow (the kit's handler protocol, roles "pause-fails" and "handler"): after the answer, ``s2``
is an ``AssistantAgent`` (a scripted model, ``_model_client``) calling its tool with the answer; the tool runs
``runtime.step2_fails``, which raises after ``e2``. AgentChat's own error handling makes the exception the
call's result (``StaticWorkbench.call_tool`` catches it into ``ToolResult(is_error=True)``,
``AssistantAgent._execute_tool_call`` into a ``FunctionExecutionResult`` with ``is_error``, returned in a
``ToolCallSummaryMessage``), and the graph's conditional edge on that error (``_failed_call``) routes to the
handler agent ``h``, handed the failed call's ``FunctionExecutionResult``.

The callback workflow (role "callback-pause"): the run stops at the handoff to the user through
``_approval_termination``, a ``TerminationCondition`` of the application's (AgentChat's hook that decides a
run stops: the pause) whose body is the approval callback (``runtime.approval_callback``) before it stops the
run; the answered run does not call it for the restored handoff (the thread is loaded, not replayed).

The parallel workflow (roles "branch-pause" and "join"): ``s1`` fans out to an agent per branch, fanned in to
``join`` (activation "all"). A branch agent without its answer hands off to the user, and a conditional edge
back to itself (an activation group of its own, "any") keeps it in the ready queue; its answer, a user
message whose ``metadata`` names the branch (``resume_branch``), makes it reply with its result. A paused
status's ``pending`` is read from the graph manager's saved thread (a branch whose newest message is a
handoff). Measured on 0.7.5: in one team object the branch left unanswered asks again and stays in the ready
queue; after ``load_state`` it does not, because ``GraphFlowManager.save_state`` does not save
``_triggered_activation_groups``, so selecting the branch after a load never clears its ``enqueued_any``
flag, its loop edge enqueues nothing, the ready queue empties and the manager takes the graph as complete and
resets it to ``s1`` (``_digraph_group_chat.py``: ``save_state``, ``_reset_triggered_activation_groups``,
``update_message_thread``, ``_apply_termination_condition``): the next answer runs ``s1`` again.
"""

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from probes.citations import doc
from probes.core.atomic import atomic_write_json
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability, keys_read

MANAGER = "GraphManager"


def _team() -> Any:
    from autogen_agentchat.agents import BaseChatAgent
    from autogen_agentchat.base import Response
    from autogen_agentchat.messages import HandoffMessage, TextMessage, ToolCallSummaryMessage

    roles = _roles()

    class Step(BaseChatAgent):
        produced_message_types = (TextMessage, HandoffMessage)

        async def on_messages(self, messages: Any, cancellation_token: Any) -> Any:
            role = roles[self.name]
            if role == "first":
                return Response(chat_message=TextMessage(content=runtime.step1(), source=self.name))
            if role == "ask":
                runtime.before_pause()
                return Response(chat_message=HandoffMessage(content="answer?", target="user", source=self.name))
            if role == "pause":
                answer = [m.content for m in messages if m.source == "user"][-1]
                return Response(chat_message=TextMessage(content=runtime.step2(answer), source=self.name))
            if role == "handler":  # routed here by the error edge: handed the failed call's FunctionExecutionResult
                answer = [m.content for m in messages if m.source == "user"][-1]
                failed = [r for m in messages if isinstance(m, ToolCallSummaryMessage) for r in m.results
                          if r.is_error][-1]
                return Response(chat_message=TextMessage(content=runtime.handler(answer, failed), source=self.name))
            if role == "branch-pause":
                return Response(chat_message=_branch(self.name, messages))
            if role == "join":
                return Response(chat_message=TextMessage(content=runtime.join(_branch_results(messages)),
                                                         source=self.name))
            passed = messages[-1].content if messages else None
            return Response(chat_message=TextMessage(content=runtime.extra_step(self.name, passed), source=self.name))

        async def on_reset(self, cancellation_token: Any) -> None:
            return None

    agents = [_failing(name) if role == "pause-fails" else Step(name, description=name) for name, role in roles.items()]
    if _nested():
        return _nested_team(agents)
    if "join" in roles.values():
        return _parallel_team(agents)
    return _chain_team(agents)


def _handoff(message: Any) -> bool:
    """Whether ``message`` hands off to the user: the team's pause."""
    from autogen_agentchat.messages import HandoffMessage
    return isinstance(message, HandoffMessage) and message.target == "user"


def _failed_call(message: Any) -> bool:
    """The handler workflow's error edge: the answered step's tool call came back as an error result
    (``FunctionExecutionResult.is_error``, which AgentChat's workbench makes of the tool's exception)."""
    from autogen_agentchat.messages import ToolCallSummaryMessage
    return isinstance(message, ToolCallSummaryMessage) and any(r.is_error for r in message.results)


def _chain_team(agents: list[Any]) -> Any:
    """The two-step workflow (and its code changes, the handler and the callback workflow): the agents in a
    ``GraphFlow`` chain, the run ending at the handoff to the user. The handler workflow's last edge
    (failed step -> handler) is conditional on the failed tool call (``_failed_call``): AgentChat's error
    route. The callback workflow stops at the handoff through ``_ApprovalTermination``, the application's
    termination condition whose body is the approval callback."""
    from autogen_agentchat.conditions import HandoffTermination
    from autogen_agentchat.teams import DiGraphBuilder, GraphFlow

    roles = _roles()
    builder = DiGraphBuilder()
    for agent in agents:
        builder.add_node(agent)
    for before, after in zip(agents, agents[1:]):
        handled = roles[before.name] == "pause-fails" and roles[after.name] == "handler"
        builder.add_edge(before, after, condition=_failed_call if handled else None)
    callback = any(role == "callback-pause" for _, role in runtime.shape())
    return GraphFlow(agents, graph=builder.build(),
                     termination_condition=_approval_termination() if callback else HandoffTermination("user"))


def _parallel_team(agents: list[Any]) -> Any:
    """The parallel workflow: ``s1`` fans out to one agent per branch (GraphFlow runs a turn's ready agents
    concurrently), each joined to ``join`` (activation "all": the join waits for both). A branch agent
    without its answer hands off to the user; its conditional edge back to itself (an activation group of its
    own, "any") is meant to keep it in the graph's ready queue, so a run that answers the other branch runs it
    again, it asks again and the run ends at a handoff (``HandoffTermination``): so it does within one team
    object, not after ``load_state`` (the module's docstring: the loop's bookkeeping is not in the saved state).
    Its answer makes it reply with its result, whose conditional edge counts towards the join."""
    from autogen_agentchat.conditions import HandoffTermination
    from autogen_agentchat.teams import DiGraphBuilder, GraphFlow

    roles = _roles()
    first = [a for a in agents if roles[a.name] == "first"][0]
    join = [a for a in agents if roles[a.name] == "join"][0]
    builder = DiGraphBuilder()
    for agent in agents:
        builder.add_node(agent)
    for agent in agents:
        if roles[agent.name] == "branch-pause":
            builder.add_edge(first, agent)
            builder.add_edge(agent, agent, condition=_handoff, activation_group=f"asks-{agent.name}",
                             activation_condition="any")
            builder.add_edge(agent, join, condition=lambda m: not _handoff(m))
    return GraphFlow(agents, graph=builder.build(), termination_condition=HandoffTermination("user"))


def _branch(name: str, messages: Any) -> Any:
    """A parallel branch's turn: the newest answer addressed to it (a user message whose metadata names the
    branch) runs the rest of the branch (``runtime.branch``), its result the reply; no answer to it: it
    asks (``runtime.before_branch``, a handoff to the user)."""
    from autogen_agentchat.messages import HandoffMessage, TextMessage

    answers = [m.content for m in messages if m.source == "user" and m.metadata.get("branch") == name]
    if answers:
        return TextMessage(content=json.dumps(runtime.branch(name, answers[-1])), source=name)
    runtime.before_branch(name)
    return HandoffMessage(content=f"{name}: answer?", target="user", source=name)


def _branch_results(messages: Any) -> dict[str, Any]:
    """What the join was handed: each branch's newest reply buffered for it (its result, not a handoff)."""
    names = runtime.branches(runtime.code())
    return {m.source: json.loads(m.content) for m in messages if m.source in names and not _handoff(m)}


def _failing(name: str) -> Any:
    """The handler workflow's answered step (role "pause-fails"): an ``AssistantAgent`` whose scripted model
    calls its tool ``name`` with the user's answer; the tool runs ``runtime.step2_fails``, which raises after
    its effect. AgentChat's own error handling turns the exception into the call's result:
    ``StaticWorkbench.call_tool`` catches it (``is_error=True``), ``AssistantAgent`` returns it in a
    ``ToolCallSummaryMessage`` (``reflect_on_tool_use=False``), and the graph's error edge routes to the
    handler."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_core.tools import FunctionTool

    async def step(answer: str) -> str:  # a coroutine: run on the team's event loop, not in a worker thread
        return runtime.step2_fails(answer)

    return AssistantAgent(name, model_client=_model_client(name), tools=[FunctionTool(step, "the answered step",
                                                                                         name=name)],
                          reflect_on_tool_use=False, description=name)


def _approval_termination() -> Any:
    """The callback workflow's termination condition (AgentChat's hook that decides a run stops): at the
    handoff to the user it calls the application's approval callback (``runtime.approval_callback``: an
    audit write, a notification) and, the approval being needed, stops the run for it. CodeExecutorAgent's
    ``approval_func`` is not it: it must return its ``ApprovalResponse`` inside the run
    (``CodeExecutorAgent.execute_code_block``), so it cannot stop a run for an answer that comes later."""
    from autogen_agentchat.base import TerminatedException, TerminationCondition
    from autogen_agentchat.messages import StopMessage

    class _ApprovalTermination(TerminationCondition):
        def __init__(self) -> None:
            self._stopped = False

        @property
        def terminated(self) -> bool:
            return self._stopped

        async def __call__(self, messages: Any) -> Any:
            if self._stopped:
                raise TerminatedException("the run already stopped for the approval")
            if any(_handoff(m) for m in messages) and runtime.approval_callback():
                self._stopped = True
                return StopMessage(content="the user's approval is asked", source="approval-callback")
            return None

        async def reset(self) -> None:
            self._stopped = False

    return _ApprovalTermination()


def _nested() -> tuple[str, ...]:
    """The steps that run inside a nested team (role "nested-pause")."""
    return tuple(name for name, role in runtime.shape() if role == "nested-pause")


def _model_client(tool: str | None = None) -> Any:
    """A model client that no real model stands behind. Without ``tool``: for a ``SelectorGroupChat`` whose
    ``selector_func`` always names the next speaker, never asked (refuses if it were). With ``tool``: the
    handler workflow's ``AssistantAgent``'s scripted model, which calls ``tool`` with the newest user message
    (the kit's answer) as ``answer``; ``reflect_on_tool_use=False`` and one tool iteration (the default) mean
    it is asked once per turn."""
    from autogen_core import FunctionCall
    from autogen_core.models import ChatCompletionClient, CreateResult, RequestUsage

    class _Scripted(ChatCompletionClient):
        def _refuse(self, *_: Any, **__: Any) -> Any:
            raise RuntimeError("the scripted model only answers create()" if tool else
                               "the kit's selector_func picks every speaker: no model is asked")

        async def create(self, messages: Any, *_: Any, **__: Any) -> Any:
            if tool is None:
                self._refuse()
            answer = [m.content for m in messages if getattr(m, "source", None) == "user"][-1]
            call = FunctionCall(id=f"call-{tool}", name=tool, arguments=json.dumps({"answer": answer}))
            return CreateResult(finish_reason="function_calls", content=[call], cached=False,
                                usage=RequestUsage(prompt_tokens=0, completion_tokens=0))

        create_stream = count_tokens = remaining_tokens = _refuse

        async def close(self) -> None:
            return None

        def actual_usage(self) -> Any:
            return RequestUsage(prompt_tokens=0, completion_tokens=0)

        total_usage = actual_usage

        @property
        def capabilities(self) -> Any:
            return self.model_info

        @property
        def model_info(self) -> Any:
            return {"vision": False, "function_calling": tool is not None, "json_output": False,
                    "family": "unknown", "structured_output": False}

    return _Scripted()


def _nested_team(agents: list[Any]) -> Any:
    """The nested workflow: ``s1``, then the team ``ask -> s2`` (a GraphFlow ending at the handoff) as the
    outer ``SelectorGroupChat``'s other participant."""
    from autogen_agentchat.conditions import HandoffTermination, SourceMatchTermination
    from autogen_agentchat.teams import DiGraphBuilder, GraphFlow, SelectorGroupChat

    first, ask, pause = agents
    builder = DiGraphBuilder()
    builder.add_node(ask).add_node(pause).add_edge(ask, pause)
    inner = GraphFlow([ask, pause], graph=builder.build(), termination_condition=HandoffTermination("user"),
                      name=f"team_{_nested()[0]}", description="the kit's second step, as a team")

    def select(thread: Any) -> str:  # s1 first, then the inner team (again with the answer, after the pause)
        return inner.name if any(m.source == first.name for m in thread) else first.name

    return SelectorGroupChat([first, inner], model_client=_model_client(), selector_func=select, name="kit",
                             termination_condition=HandoffTermination("user") | SourceMatchTermination([pause.name]))


def _manager() -> str:
    """The team manager's entry in a saved team state."""
    return "SelectorGroupChatManager" if _nested() else MANAGER


def _roles() -> dict[str, str]:
    """The team's agents in order, name -> role: the steps of ``runtime.shape()`` (the original two,
    or the code a change protocol deployed, or a workflow of its own), the paused step as an agent that
    asks and one that takes the answer (the callback workflow's too: its callback is the termination
    condition, ``_approval_termination``; the handler workflow's failing step takes the answer as a tool
    call). A parallel branch asks and takes its answer in one agent (``_branch``)."""
    roles: dict[str, str] = {}
    for name, role in runtime.shape():
        role = "pause" if role in ("nested-pause", "callback-pause") else role  # the same agents
        if role in ("pause", "pause-fails"):
            roles["ask" if name == "s2" else f"ask_{name}"] = "ask"
        roles[name] = role
    return roles


async def _save(team: Any, path: Path) -> None:
    """The application's save of the team (hooked): the framework's state, written atomically."""
    atomic_write_json(path, await team.save_state())


def _status(thread: list[Any], handle: str) -> dict[str, Any]:
    if "join" in _roles().values():
        return _parallel_status(thread, handle)
    last = thread[-1] if thread else {}
    if last.get("type") == "HandoffMessage" and last.get("target") == "user":
        return {"status": "paused", "handle": handle}
    if last.get("source") == list(_roles())[-1]:
        return {"status": "completed", "outcome": last.get("content")}
    return {"status": f"stopped after {last.get('source')!r}"}


def _parallel_status(thread: list[Any], handle: str) -> dict[str, Any]:
    """The parallel workflow's status, read from the graph manager's thread (the saved team state): a branch
    whose newest message is a handoff to the user still asks (``pending``); the join's reply last: completed."""
    names = runtime.branches(runtime.code())
    newest = {m.get("source"): m for m in thread if m.get("source") in names}
    pending = [b for b in names if b in newest and newest[b].get("type") == "HandoffMessage"
               and newest[b].get("target") == "user"]
    if pending:
        return {"status": "paused", "handle": handle, "pending": pending}
    last = thread[-1] if thread else {}
    if last.get("source") == "join":
        return {"status": "completed", "outcome": last.get("content")}
    return {"status": f"stopped after {last.get('source')!r}"}


class AutoGenAdapter(Adapter):
    framework = "autogen"
    packages = ("autogen-agentchat", "autogen-core")
    imports = ("autogen_agentchat.agents", "autogen_agentchat.teams", "autogen_agentchat.conditions", "autogen_agentchat.messages")
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.CODE_CHANGE, Capability.NESTED,
                              Capability.DELETE, Capability.HANDLER, Capability.CALLBACK, Capability.PARALLEL})
    code_changes = runtime.CODE_CHANGES
    recovery_modes = ("latest-team-state",)
    # As the paper's campaign cites it (probes/citations.py): a team's saved state resumes (AG-3); the
    # documentation is silent on crashes (AG-5), on validity (AG-7) and on consume-once (AG-8). No statement
    # speaks to a tool error's result, a termination condition or a graph's branches across save/load: the
    # handler, callback and parallel paths cite nothing for EO and CO (U).
    citations = {"LV *": doc("AG-3", "claims")}

    def hook(self) -> None:
        runtime.hook_save(sys.modules[__name__], "_save", writes=((os, "replace"),))

    def _files(self) -> list[Path]:
        return sorted((self.workdir / "states").glob("*.json"))

    def _run(self, task: Any, state: Path | None = None) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            team = _team()
            if state is not None:
                await team.load_state(json.loads(state.read_text()))
            result = await team.run(task=task)
            path = self.workdir / "states" / f"{len(self._files()) + 1:03d}-{os.getpid()}.json"
            await _save(team, path)  # the module global: hook() may have wrapped it
            if "join" in _roles().values():  # which branches still ask: the whole thread, as saved
                return _status(self.load_state((path, MANAGER))["message_thread"], path.name)
            return _status([m.dump() for m in result.messages], path.name)
        return asyncio.run(go())

    def start(self) -> dict[str, Any]:
        return self._run("go")

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        return self._run(answer, self.workdir / "states" / handle if handle else self._files()[-1])

    def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """One parallel branch answered: the saved team state ``handle`` (else the newest) loaded and run with
        a user message addressed to ``branch`` (its ``metadata``); the other branch's agent, still in the
        graph's ready queue, runs without an answer of its own and asks again."""
        from autogen_agentchat.messages import TextMessage

        task = TextMessage(content=answer, source="user", metadata={"branch": branch})
        return self._run(task, self.workdir / "states" / handle if handle else self._files()[-1])

    def delete(self) -> dict[str, Any]:
        """AgentChat stores nothing (no durable execution; ``save_state`` returns a dict, AG-3): the run's
        durable state is the application's own files of ``team.save_state()``, so the application deletes
        them itself, as it wrote them (as OpenAI Agents' ``RunState`` files are)."""
        for path in self._files():
            path.unlink()
        return {"status": "deleted"}

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        if not self._files():
            return self.nothing_durable("no team state saved yet")
        return _status(self.load_state((self._files()[-1], _manager()))["message_thread"], self._files()[-1].name)

    # A durable document: one agent's state in a saved team state, addressed (file, agent name).
    def state_paths(self) -> list[Any]:
        names = ("s1", f"team_{_nested()[0]}", _manager()) if _nested() else ("s1", "ask", "s2", MANAGER)
        return [(f, name) for f in self._files() for name in names]

    def load_state(self, path: Any) -> Any:
        return json.loads(path[0].read_text())["agent_states"][path[1]]

    def save_state(self, path: Any, data: Any) -> None:
        team_state = json.loads(path[0].read_text())
        team_state["agent_states"][path[1]] = data
        path[0].write_text(json.dumps(team_state))

    def state_required(self, doc: Any) -> dict[str, Any]:
        """The document the kit edits is the graph manager's entry of the team state (listed
        last). AgentChat declares no model for it: ``GraphFlowManager.save_state`` returns a plain
        dict and ``GraphFlowManager.load_state`` reads it back key by key
        (``autogen_agentchat/teams/_group_chat/_graph/_digraph_group_chat.py``), neither through
        ``GraphFlowManagerState`` (whose fields all have defaults and which the manager never
        validates against) nor ``TeamState`` (which types the entry as ``Any``). The required keys
        are therefore those ``load_state`` reads by subscript, with no default: read from its
        source here, so a release that changes the deserialiser changes them."""
        from autogen_agentchat.teams._group_chat._graph._digraph_group_chat import GraphFlowManager
        return {"status": "schema", "required": keys_read(GraphFlowManager.load_state, "state"),
                "model": "autogen_agentchat GraphFlowManager.load_state (plain dict, keys read by subscript)"}

    # --- AutoGen's own protocols (probes.frameworks.autogen.protocols) --------------------------
    def load(self, handle: Any) -> dict[str, Any]:
        """``team.load_state`` of the saved team state ``handle`` into a new team, and nothing
        else: what raises here is refused at load, before anything runs."""
        async def go() -> dict[str, Any]:
            await _team().load_state(json.loads((self.workdir / "states" / handle).read_text()))
            return {"status": "loaded"}
        return asyncio.run(go())

    def proceed(self, handle: Any) -> dict[str, Any]:
        """The saved team state ``handle`` loaded into a new team and run on without a new task
        (``team.run()``), saved after as every run is."""
        return self._run(None, self.workdir / "states" / handle)

    def state_errors(self, entries: list[Any]) -> dict[str, Any]:
        """What AgentChat's own models reject in each ``[agent, entry]`` of a team state: an agent's
        entry is a ``ChatAgentContainerState`` whose buffered messages must be of a message type
        the team's ``MessageFactory`` knows, valid under that type's model; the graph manager's
        entry must have the keys ``GraphFlowManager.load_state`` reads by subscript
        (``state_required``) and a thread of such messages. One list of errors per entry, each
        ``<where>: <exception>: <its first line>``; empty: the entry is valid."""
        from autogen_agentchat.messages import MessageFactory
        from autogen_agentchat.state import ChatAgentContainerState

        def first_line(exc: Exception) -> str:
            return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"

        def messages(where: str, items: Any) -> list[str]:
            errors = []
            for i, item in enumerate(items if isinstance(items, list) else []):
                try:
                    MessageFactory().create(item)
                except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
                    errors.append(f"{where}[{i}]: {first_line(exc)}")
            return errors

        out = []
        for agent, entry in entries:
            if agent == MANAGER:
                missing = [k for k in self.state_required(entry)["required"] if k not in entry]
                out.append([f"{MANAGER}: no {k!r}" for k in missing]
                           + messages(f"{MANAGER}.message_thread", entry.get("message_thread")))
                continue
            try:
                ChatAgentContainerState.model_validate(entry)
            except ValueError as exc:
                out.append([f"{agent}: {first_line(exc)}"])
                continue
            out.append(messages(f"{agent}.message_buffer", entry.get("message_buffer", [])))
        return {"status": "schema", "errors": out,
                "model": "autogen_agentchat ChatAgentContainerState, the MessageFactory's message types and "
                         "GraphFlowManager.load_state's keys"}
