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

Three operations for AutoGen's own protocols (``probes.autogen_kit.protocols``), which the
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
    from autogen_agentchat.conditions import HandoffTermination
    from autogen_agentchat.messages import HandoffMessage, TextMessage
    from autogen_agentchat.teams import DiGraphBuilder, GraphFlow

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
            passed = messages[-1].content if messages else None
            return Response(chat_message=TextMessage(content=runtime.extra_step(self.name, passed), source=self.name))

        async def on_reset(self, cancellation_token: Any) -> None:
            return None

    agents = [Step(name, description=name) for name in roles]
    if _nested():
        return _nested_team(agents)
    builder = DiGraphBuilder()
    for agent in agents:
        builder.add_node(agent)
    for before, after in zip(agents, agents[1:]):
        builder.add_edge(before, after)
    return GraphFlow(agents, graph=builder.build(), termination_condition=HandoffTermination("user"))


def _nested() -> tuple[str, ...]:
    """The steps that run inside a nested team (role "nested-pause")."""
    return tuple(name for name, role in runtime.shape() if role == "nested-pause")


def _no_model() -> Any:
    """A model client for a ``SelectorGroupChat`` whose ``selector_func`` always names the next speaker:
    never asked (refuses if it were)."""
    from autogen_core.models import ChatCompletionClient

    class _NoModel(ChatCompletionClient):
        def _refuse(self, *_: Any, **__: Any) -> Any:
            raise RuntimeError("the kit's selector_func picks every speaker: no model is asked")

        create = create_stream = count_tokens = remaining_tokens = _refuse

        async def close(self) -> None:
            return None

        def actual_usage(self) -> Any:
            from autogen_core.models import RequestUsage
            return RequestUsage(prompt_tokens=0, completion_tokens=0)

        total_usage = actual_usage

        @property
        def capabilities(self) -> Any:
            return self.model_info

        @property
        def model_info(self) -> Any:
            return {"vision": False, "function_calling": False, "json_output": False, "family": "unknown",
                    "structured_output": False}

    return _NoModel()


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

    return SelectorGroupChat([first, inner], model_client=_no_model(), selector_func=select, name="kit",
                             termination_condition=HandoffTermination("user") | SourceMatchTermination([pause.name]))


def _manager() -> str:
    """The team manager's entry in a saved team state."""
    return "SelectorGroupChatManager" if _nested() else MANAGER


def _roles() -> dict[str, str]:
    """The team's agents in order, name -> role: the steps of ``runtime.shape()`` (the original two,
    or the code a change protocol deployed), the paused step as an agent that asks and one that
    takes the answer."""
    roles: dict[str, str] = {}
    for name, role in runtime.shape():
        role = "pause" if role == "nested-pause" else role  # the same agents, in a team of their own
        if role == "pause":
            roles["ask" if name == "s2" else f"ask_{name}"] = "ask"
        roles[name] = role
    return roles


async def _save(team: Any, path: Path) -> None:
    """The application's save of the team (hooked): the framework's state, written atomically."""
    atomic_write_json(path, await team.save_state())


def _status(thread: list[Any], handle: str) -> dict[str, Any]:
    last = thread[-1] if thread else {}
    if last.get("type") == "HandoffMessage" and last.get("target") == "user":
        return {"status": "paused", "handle": handle}
    if last.get("source") == list(_roles())[-1]:
        return {"status": "completed", "outcome": last.get("content")}
    return {"status": f"stopped after {last.get('source')!r}"}


class AutoGenAdapter(Adapter):
    framework = "autogen"
    packages = ("autogen-agentchat", "autogen-core")
    imports = ("autogen_agentchat.agents", "autogen_agentchat.teams", "autogen_agentchat.conditions", "autogen_agentchat.messages")
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.CODE_CHANGE, Capability.NESTED,
                              Capability.DELETE})
    code_changes = runtime.CODE_CHANGES
    # the handler and callback workflows (the kit's handler and callback protocols): not built here
    missing = {
        Capability.HANDLER: "not built by this adapter: no error-handling construct of the framework's own is "
                            "wired into its workflow (not measured)",
        Capability.CALLBACK: "not built by this adapter: no approval callback or hook of the framework's own is "
                             "wired into its pause (not measured)",
        Capability.PARALLEL: "the adapter does not build the parallel workflow yet: the run stops at the first "
                             "handoff to the user (HandoffTermination), so two branches asking at once would "
                             "need a GraphFlow fan-out whose both handoffs survive in the saved team state; no "
                             "code for it was written or measured (a gap of the suite, not a finding about "
                             "AutoGen)",
    }
    recovery_modes = ("latest-team-state",)
    # As the paper's campaign cites it (probes/citations.py): a team's saved state resumes (AG-3); the
    # documentation is silent on crashes (AG-5), on validity (AG-7) and on consume-once (AG-8).
    citations = {"LV *": doc("AG-3", "claims")}

    def hook(self) -> None:
        runtime.hook_save(sys.modules[__name__], "_save", writes=((os, "replace"),))

    def _files(self) -> list[Path]:
        return sorted((self.workdir / "states").glob("*.json"))

    def _run(self, task: str | None, state: Path | None = None) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            team = _team()
            if state is not None:
                await team.load_state(json.loads(state.read_text()))
            result = await team.run(task=task)
            path = self.workdir / "states" / f"{len(self._files()) + 1:03d}-{os.getpid()}.json"
            await _save(team, path)  # the module global: hook() may have wrapped it
            return _status([m.dump() for m in result.messages], path.name)
        return asyncio.run(go())

    def start(self) -> dict[str, Any]:
        return self._run("go")

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        return self._run(answer, self.workdir / "states" / handle if handle else self._files()[-1])

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

    # --- AutoGen's own protocols (probes.autogen_kit.protocols) --------------------------
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
