"""Google ADK: a graph ``Workflow`` whose middle node asks for input (``RequestInput``).

Nodes ``s1`` -> ``ask`` -> ``s2``: ``s1`` runs the kit's first step; ``ask`` starts the
second step and yields ``RequestInput(interrupt_id="answer")``, which surfaces as an
``adk_request_input`` function call; the answer is a ``FunctionResponse`` with that id
sent through ``Runner.run_async``, and becomes ``s2``'s input. The app is resumable
(``ResumabilityConfig(is_resumable=True)``). Sessions (the event log: the durable
state) live in ``SqliteSessionService`` or, on PostgreSQL, ``DatabaseSessionService``.
A pause's handle is its interrupt id, so answering it again sends the same id.

The step that asks twice (the pause-twice workflow) is ADK's other documented request-input
form, one node that both asks and handles the answer: ``rerun_on_resume=True``, the answers read
from ``ctx.resume_inputs`` by interrupt id, a ``RequestInput`` yielded for each one still missing.
ADK reruns such a node from scratch on each answer, so the code between the two questions runs
again when the second answer arrives.

The nested workflow (the kit's nested protocol, role "nested-pause") puts the paused step's two nodes,
``ask`` and ``s2``, into a ``Workflow`` of their own, which is a node of the outer one after ``s1``: a
``Workflow`` is a ``BaseNode``, ADK's own nesting of graph workflows. Its ``RequestInput`` surfaces as the
outer invocation's ``adk_request_input`` call, so the handle, the answer and the recovery stay as they are.

The parallel workflow (the kit's parallel protocol) fans ``s1`` out to two branches, each an asking node
(``RequestInput`` with the branch's name as its interrupt id) and an answered node, gathered by ADK's
``JoinNode`` before the join's node. One branch is answered by a function response with its id; a paused
status names the questions the session still has unanswered (``_open_requests``).
"""

import asyncio
import json
import sqlite3
from typing import Any

from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability, required_fields
from probes.frameworks.google_adk.citations import CITATIONS

APP, USER, SESSION, INTERRUPT = "kit", "u", "s", "answer"
SECOND = "answer-2"  # the interrupt id of the second question of the step that asks twice


def _app() -> Any:
    from google.adk.apps.app import App, ResumabilityConfig
    from google.adk.events.request_input import RequestInput
    from google.adk.workflow import START, Workflow, node

    def named(fn: Any, name: str) -> Any:  # a node's name is its function's
        fn.__name__ = fn.__qualname__ = name
        return fn

    def s1():
        return runtime.step1()

    def ask(node_input: str):
        runtime.before_pause()
        yield RequestInput(interrupt_id=INTERRUPT, message="answer?")

    def s2(node_input: str):
        return runtime.step2(node_input)

    def s2_twice(ctx: Any, node_input: str):
        """The step that asks twice, as ADK's single-node form of request input has it (the
        ``request_input_rerun`` sample): rerun on each answer, it reads the answers so far from
        ``ctx.resume_inputs`` and asks for the first one missing. Nothing is skipped by hand: the
        code between the questions runs whenever ADK runs the node."""
        runtime.before_pause()
        first = ctx.resume_inputs.get(INTERRUPT)
        if first is None:
            yield RequestInput(interrupt_id=INTERRUPT, message="first answer?")
            return
        runtime.first_answer(first)
        second = ctx.resume_inputs.get(SECOND)
        if second is None:
            yield RequestInput(interrupt_id=SECOND, message="second answer?")
            return
        yield runtime.second_answer(second)

    def first_after(node_input: str):  # s1 where a step comes before it (the steps swapped)
        return runtime.step1()

    def extra(name: str) -> Any:
        return named(lambda node_input: runtime.extra_step(name, node_input), name)

    def confirmed(name: str) -> Any:
        """The callback workflow's pausing step (role "callback-pause"): a ``FunctionTool`` whose
        ``require_confirmation`` is a callable, ADK's tool confirmation, wrapped by the workflow as a tool node.
        The callable is the application's approval callback (it fires ``e_cb``); the tool runs the step on
        the confirmation's payload, the kit's answer."""
        from google.adk.tools.function_tool import FunctionTool
        from google.adk.tools.tool_context import ToolContext

        def needs_confirmation(node_input: str, tool_context: ToolContext) -> bool:  # the tool's own arguments
            return runtime.approval_callback()

        def gated(node_input: str, tool_context: ToolContext) -> str:
            runtime.before_pause()
            return runtime.step2(tool_context.tool_confirmation.payload)

        return FunctionTool(named(gated, name), require_confirmation=needs_confirmation)

    def failing(name: str) -> Any:
        """The handler workflow's answered step (role "pause-fails") as a tool node: the answer is the tool's
        argument; it fires e2 and raises, for the app's ``on_tool_error_callback`` plugin (``OnToolError``)."""
        from google.adk.tools.function_tool import FunctionTool

        def fails(node_input: str) -> str:
            return runtime.step2_fails(node_input)

        return FunctionTool(named(fails, name))

    if runtime.branches(runtime.code()):
        return App(name=APP, root_agent=_parallel(named, s1), resumability_config=ResumabilityConfig(is_resumable=True))
    # the steps of runtime.shape() (the original two, or the code a change protocol deployed); the
    # paused step is two nodes, the one that asks and the one that takes the answer
    nodes: list[Any] = []
    for name, role in runtime.shape():
        if role == "first":
            nodes.append(named(s1, name) if not nodes else named(first_after, name))
        elif role == "pause":
            nodes += [named(ask, "ask" if name == "s2" else f"ask_{name}"), named(s2, name)]
        elif role == "pause-twice":  # one node that asks, is rerun with the answer, and asks again
            nodes.append(node(s2_twice, name=name, rerun_on_resume=True))
        elif role == "callback-pause":  # a tool node whose confirmation callback fires e_cb before the pause
            nodes.append(confirmed(name))
        elif role == "pause-fails":  # the question, then a tool node that fails; the plugin below handles it
            nodes += [named(ask, "ask"), failing(name)]
        elif role == "handler":  # run by the app's on_tool_error_callback, not a node of the chain
            continue
        elif role == "nested-pause":  # the paused step's two nodes as a Workflow of their own, a node of this one
            asks, answered = named(ask, "ask"), named(s2, "s2")
            nodes.append(Workflow(name=name, edges=[(START, asks), (asks, answered)]))
        else:
            nodes.append(extra(name))
    workflow = Workflow(name=APP, edges=list(zip([START] + nodes, nodes)))
    handles = any(role == "handler" for _, role in runtime.shape())
    return App(name=APP, root_agent=workflow, resumability_config=ResumabilityConfig(is_resumable=True),
               plugins=[_on_tool_error()] if handles else [])


def _on_tool_error() -> Any:
    """The handler workflow's error handler: a plugin's ``on_tool_error_callback`` ("an opportunity to handle
    tool errors gracefully": a dictionary it returns is the tool's response), which runs the handler step on
    the failed call's answer (its argument)."""
    from google.adk.plugins.base_plugin import BasePlugin

    class OnToolError(BasePlugin):
        async def on_tool_error_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                         error: Exception) -> dict[str, Any] | None:
            return {"result": runtime.handler(tool_args.get("node_input"), error)}

    return OnToolError(name="kit_on_tool_error")


def _parallel(named: Any, s1: Any) -> Any:
    """The parallel workflow (``runtime.SHAPES["parallel"]``) as a graph ``Workflow``: ``s1`` fans out to each
    branch's two nodes, ``ask_<branch>`` (``runtime.before_branch``, then ``RequestInput`` with the branch's
    name as its interrupt id) and ``<branch>`` (its answer's effect, ``runtime.branch``); both lead to ADK's
    ``JoinNode`` ``gather``, which waits for all its predecessors and outputs their outputs by node name,
    and from there to the join's node (``runtime.join``)."""
    from google.adk.events.request_input import RequestInput
    from google.adk.workflow import START, JoinNode, Workflow

    def asks(branch: str) -> Any:
        def ask(node_input: str):
            runtime.before_branch(branch)
            yield RequestInput(interrupt_id=branch, message=branch)
        return named(ask, f"ask_{branch}")

    def answered(branch: str) -> Any:
        return named(lambda node_input: runtime.branch(branch, node_input), branch)

    edges: list[tuple[Any, Any]] = [(START, s1)]
    gather = JoinNode(name="gather")
    for name, role in runtime.shape():
        if role == "branch-pause":
            ask, taken = asks(name), answered(name)
            edges += [(s1, ask), (ask, taken), (taken, gather)]
        elif role == "join":
            edges.append((gather, named(lambda node_input, name=name: runtime.join(node_input, name), name)))
    return Workflow(name=APP, edges=edges)


def _open_requests(events: list[Any]) -> list[str]:
    """The interrupt ids of the ``adk_request_input`` calls in a session's events that no later function
    response answers: the questions still open. (After one of two parallel questions is answered, ADK's run
    asks nothing anew, and a resumed invocation neither: the open one is in the session's record.) In
    order, since an invocation started anew asks under the same ids again."""
    open_: set[str] = set()
    for event in events:
        open_ |= {c.id for c in event.get_function_calls() if c.name == "adk_request_input"}
        open_ -= {r.id for r in event.get_function_responses() if r.name == "adk_request_input"}
    return sorted(open_)


class GoogleAdkAdapter(Adapter):
    framework = "google-adk"
    packages = ("google-adk",)
    imports = ("google.adk.runners", "google.adk.workflow", "google.adk.events", "google.adk.sessions.sqlite_session_service", "google.adk.sessions.database_session_service", "google.genai")
    backends = ("sqlite", "postgres")
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.CODE_CHANGE, Capability.TWO_PAUSES,
                              Capability.DELETE, Capability.NESTED, Capability.CALLBACK, Capability.HANDLER,
                              Capability.PARALLEL})
    code_changes = runtime.CODE_CHANGES
    recovery_modes = ("resume-invocation", "resend-input")
    answers = ("yes", "no")
    citations = CITATIONS

    @classmethod
    def handled(cls, answer: Any) -> Any:
        """The handler workflow's outcome: the failed tool node's output, the dictionary the plugin returned."""
        return {"result": super().handled(answer)}

    def _service(self) -> Any:
        if self.backend == "postgres":
            from google.adk.sessions.database_session_service import DatabaseSessionService
            return DatabaseSessionService(self.store.replace("postgresql://", "postgresql+psycopg://", 1))
        from google.adk.sessions.sqlite_session_service import SqliteSessionService
        return SqliteSessionService(self.store)

    def hook(self) -> None:
        import aiosqlite
        runtime.hook_save(type(self._service()), "append_event", writes=((aiosqlite.Connection, "commit"),))

    def _send(self, message: Any = None, invocation: str | None = None) -> dict[str, Any]:
        from google.adk.runners import Runner

        parallel = runtime.branches(runtime.code())
        # the node whose output is the run's: the pausing step's, or the parallel workflow's join
        final = next((f"/{name}@" for name, role in runtime.shape() if role == "join"), "s2")

        async def go() -> dict[str, Any]:
            service = self._service()
            if await service.get_session(app_name=APP, user_id=USER, session_id=SESSION) is None:
                await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
            runner = Runner(app=_app(), session_service=service)
            handle, outputs, seen = None, [], 0
            async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=message,
                                                invocation_id=invocation):
                seen += 1
                # the handle is the id of the question asked (the step that asks twice asks two)
                handle = next((c.id for c in event.get_function_calls() if c.name == "adk_request_input"), handle)
                if event.output is not None and final in str(event.node_info.path if event.node_info else ""):
                    outputs.append(event.output)
            if outputs:
                return {"status": "completed", "outcome": outputs[-1]}
            if parallel:  # the questions still open, from the session's record (no handle: each is its branch)
                session = await service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
                pending = [b for b in _open_requests(session.events if session else []) if b in parallel]
                return {"status": "paused", "handle": None, "pending": pending} if pending else \
                    {"status": f"no-op ({seen} events)"}
            return {"status": "paused", "handle": handle} if handle else {"status": f"no-op ({seen} events)"}
        return asyncio.run(go())

    @staticmethod
    def _text(text: str) -> Any:
        from google.genai import types
        return types.Content(role="user", parts=[types.Part(text=text)])

    def start(self) -> dict[str, Any]:
        return self._send(self._text("go"))

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        from google.genai import types
        # a tool confirmation (the callback workflow) is answered with ADK's ToolConfirmation payload: confirmed,
        # the kit's answer its payload; its question's id is ADK's, so an unaddressed answer reads it from the session
        callback = any(role == "callback-pause" for _, role in runtime.shape())
        reply = {"confirmed": True, "payload": answer} if callback else {"result": answer}
        response = types.FunctionResponse(id=handle or (self._asked() if callback else INTERRUPT),
                                          name="adk_request_input", response=reply)
        return self._send(types.Content(role="user", parts=[types.Part(function_response=response)]))

    def _asked(self) -> str | None:
        """The id of the last question the session's events asked (an ``adk_request_input`` call)."""
        async def asked() -> str | None:
            session = await self._service().get_session(app_name=APP, user_id=USER, session_id=SESSION)
            calls = [c.id for e in (session.events if session else []) for c in e.get_function_calls()
                     if c.name == "adk_request_input"]
            return calls[-1] if calls else None
        return asyncio.run(asked())
    def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """One parallel branch answered: a ``FunctionResponse`` to the ``adk_request_input`` call whose id is the
        branch's interrupt id, the other branch's call left unanswered."""
        return self.resume(branch, answer)

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        async def last_invocation() -> str | None:
            session = await self._service().get_session(app_name=APP, user_id=USER, session_id=SESSION)
            return session.events[-1].invocation_id if session and session.events else None
        invocation = asyncio.run(last_invocation())
        if invocation is None:
            return self.nothing_durable("the session holds no event yet")
        if mode == "resend-input":
            return self.start()
        return self._send(invocation=invocation)

    def delete(self) -> dict[str, Any]:
        """``delete_session``, the session service's own deletion of a session (``BaseSessionService``;
        ``SqliteSessionService`` and ``DatabaseSessionService`` delete its row, and its events with it)."""
        asyncio.run(self._service().delete_session(app_name=APP, user_id=USER, session_id=SESSION))
        return {"status": "deleted"}

    # The durable state is the session's event log; each event is a JSON document.
    def state_paths(self) -> list[Any]:
        if self.backend != "sqlite":
            return []
        with sqlite3.connect(self.store) as db:
            return [r[0] for r in db.execute("SELECT id FROM events ORDER BY timestamp")]

    def load_state(self, path: Any) -> Any:
        with sqlite3.connect(self.store) as db:
            return json.loads(db.execute("SELECT event_data FROM events WHERE id=?", (path,)).fetchone()[0])

    def state_required(self, doc: Any) -> dict[str, Any]:
        """An ``events`` row's ``event_data`` is ADK's pydantic ``Event``: ``SqliteSessionService``
        stores it and reads it back with ``Event.model_validate_json`` (``get_session`` in
        ``google/adk/sessions/sqlite_session_service.py``), so its fields without a default are the
        required keys (none, in 2.13.0: every field of ``Event`` has a default)."""
        from google.adk.events import Event
        return {"status": "schema", "required": required_fields(Event), "model": "google.adk Event"}

    def save_state(self, path: Any, data: Any) -> None:
        with sqlite3.connect(self.store) as db:
            db.execute("UPDATE events SET event_data=? WHERE id=?", (json.dumps(data), path))
