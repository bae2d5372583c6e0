"""pydantic-ai durable execution: an agent with ``DBOSDurability`` run inside a DBOS workflow.

A scripted model (``FunctionModel``, no network) calls tool ``s1`` (the kit's first step), then
tool ``s2``, declared ``requires_approval=True``: ``agent.run`` ends with ``DeferredToolRequests``.
The workflow a user writes around it (``DBOSDurability``'s docstring: call ``agent.run()`` inside
your own ``@DBOS.workflow``) asks the human (step ``ask``, the kit's ``before_pause``), parks in
``DBOS.recv_async`` and continues with ``agent.run(message_history=..., deferred_tool_results=...)``,
approving the call with the human's answer as its argument (``ToolApproved(override_args=...)``);
the outcome is the model's final text, ``s2``'s result.

Effects live in DBOS steps: the capability makes model requests steps, but a function tool's body
is no step (it runs again when the workflow is replayed), so each tool is decorated
``@DBOS.step()`` as the pydantic-ai and DBOS docs tell a user to do for a tool with side effects.
The kit therefore measures DBOS's recorded steps around pydantic-ai's deferred tools, not a tool
body left unprotected (which would fire ``e1`` again on every replay, whatever the crash).

DBOS is launched in every operation (recovery mode "launch": ``DBOS.launch()`` recovers the pending
workflow of executor ``local``, application version pinned), as in ``probes/dbos_kit``; concurrent
answers come from ``DBOSClient`` processes while one executor runs the workflow (``CLIENT``).
Values stay pickled (DBOS's default): ``DBOSPortableJSONSerializer`` raises ``TypeError: Object of
type ModelResponse is not portable JSON serializable`` on the first model step. The documents the
kit edits are the pickled outputs of the steps ``s1`` and ``s2`` (dicts of strings); the model
steps' ``ModelResponse`` pickles need pydantic-ai to load, which the kit's process has not.
Hermetic: ``HOME`` and ``TMPDIR`` point into the run's directory; DBOS's OTLP export is off.
"""

import base64
import os
import pickle
import sqlite3
import sys
import threading
from typing import Any

from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability
from probes.pydantic_ai.citations import CITATIONS

WID, TOPIC = "kit-run", "answer"
_registered: list[Any] = []


def _model(messages: list[Any], info: Any) -> Any:
    """The scripted model: call s1, then s2, then answer with s2's result."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart

    done = {p.tool_name: p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}
    for tool in ("s1", "s2"):
        if tool not in done:
            return ModelResponse(parts=[ToolCallPart(tool, {}, tool_call_id=f"call-{tool}")])
    return ModelResponse(parts=[TextPart(done["s2"])])


def _workflow() -> Any:
    """Build the agent and register the workflow once per process, before launch."""
    if not _registered:
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

        @agent.tool_plain(requires_approval=True)
        @DBOS.step(name="s2")
        async def s2(answer: str = "") -> str:
            return runtime.step2(answer)

        @DBOS.step(name="ask")
        async def ask() -> None:
            runtime.before_pause()

        @DBOS.workflow(name="kit_workflow")
        async def kit_workflow() -> str:
            first = await agent.run("go")
            await ask()
            answer = await DBOS.recv_async(TOPIC, timeout_seconds=3600)
            approved = {c.tool_call_id: ToolApproved(override_args={"answer": answer}) for c in first.output.approvals}
            done = await agent.run(message_history=first.all_messages(),
                                   deferred_tool_results=DeferredToolResults(approvals=approved))
            return done.output
        _registered.append(kit_workflow)
    return _registered[0]


class PydanticAIAdapter(Adapter):
    framework = "pydantic-ai"
    packages = ("pydantic-ai-slim", "dbos")
    backends = ("sqlite", "postgres")
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.READDRESS, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.CLIENT})
    recovery_modes = ("launch",)
    answers = ("yes", "no")
    citations = CITATIONS

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        for var in ("HOME", "TMPDIR"):  # hermetic: nothing of the framework's lands outside the run
            os.environ[var] = str((self.workdir / var.lower()).resolve())
            os.makedirs(os.environ[var], exist_ok=True)
        self.url = self.store if self.backend == "postgres" else f"sqlite:///{self.store}"

    def hook(self) -> None:  # the write: the transaction's body
        from dbos._sys_db import SystemDatabase
        runtime.hook_save(SystemDatabase, "record_operation_result",
                          writes=((SystemDatabase, "_record_operation_result_txn"),))

    def _launch(self) -> tuple[Any, threading.Event]:
        from dbos import DBOS
        from dbos._sys_db import SystemDatabase
        waiting, setup = threading.Event(), SystemDatabase.recv_setup
        def recv_setup(*a: Any, **k: Any) -> Any:  # observes only: (False, ...) = recv waits for a message
            out = setup(*a, **k)
            if not out[0]:
                waiting.set()
            return out
        SystemDatabase.recv_setup = recv_setup
        _workflow()
        DBOS(config={"name": "rc-kit", "system_database_url": self.url, "log_level": "ERROR",
                     "application_version": "kit", "enable_otlp": False,
                     "notification_listener_polling_interval_sec": 0.02})
        DBOS.launch()
        return DBOS, waiting

    def start(self) -> dict[str, Any]:
        return self.recover("launch", None)  # on a fresh store nothing is pending: the run starts

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        DBOS, _ = self._launch()  # recovers the pending workflow, which then receives the answer
        wid, topic = handle or (WID, TOPIC)
        DBOS.send(wid, answer, topic)
        return self._done(DBOS, DBOS.retrieve_workflow(wid).get_result(polling_interval_sec=0.02))

    def serve(self) -> dict[str, Any]:
        DBOS, _ = self._launch()
        return self._done(DBOS, DBOS.retrieve_workflow(WID).get_result(polling_interval_sec=0.02))

    def send(self, handle: Any, answer: Any) -> dict[str, Any]:
        from dbos import DBOSClient
        wid, topic = handle or (WID, TOPIC)
        client = DBOSClient(system_database_url=self.url)
        try:
            client.send(wid, answer, topic)
            return {"status": "completed", "outcome": client.retrieve_workflow(wid).get_result(polling_interval_sec=0.02)}
        finally:
            client.destroy()

    @staticmethod
    def _done(DBOS: Any, outcome: Any) -> dict[str, Any]:
        DBOS.destroy()
        return {"status": "completed", "outcome": outcome}

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        from dbos import SetWorkflowID
        DBOS, waiting = self._launch()
        if DBOS.get_workflow_status(WID) is None:  # no durable workflow yet: start it
            with SetWorkflowID(WID):
                DBOS.start_workflow(_workflow())
        box: dict[str, Any] = {}
        def watch() -> None:  # until the workflow waits in recv or has ended
            try:
                box["outcome"] = DBOS.retrieve_workflow(WID).get_result(polling_interval_sec=0.02)
            except Exception as exc:  # the framework's error, raised below
                box["error"] = exc
            waiting.set()
        threading.Thread(target=watch, daemon=True).start()
        waiting.wait()
        if "error" in box:
            raise box["error"]
        if "outcome" in box:
            return self._done(DBOS, box["outcome"])
        # DBOS's executor waits in recv and interpreter exit would join it: end the process in
        # threading's exit hooks (they run after the kit's child wrote its result).
        threading._register_atexit(lambda: (sys.stdout.flush(), sys.stderr.flush(), os._exit(0)))
        return {"status": "paused", "handle": [WID, TOPIC]}

    # The durable state: the pickled outputs of the steps s1 and s2, one row each (SQLite backend).
    def state_paths(self) -> list[Any]:
        if self.backend != "sqlite":
            return []
        with sqlite3.connect(self.store) as db:
            return [f for f, in db.execute("SELECT function_id FROM operation_outputs WHERE workflow_uuid=? AND "
                                           "output IS NOT NULL AND function_name IN ('s1', 's2') ORDER BY function_id",
                                           (WID,))]

    def load_state(self, path: Any) -> Any:
        with sqlite3.connect(self.store) as db:
            value, = db.execute("SELECT output FROM operation_outputs WHERE workflow_uuid=? AND function_id=?",
                                (WID, path)).fetchone()
        return pickle.loads(base64.b64decode(value))  # a pickle this probe's own run wrote

    def save_state(self, path: Any, data: Any) -> None:
        with sqlite3.connect(self.store) as db:
            db.execute("UPDATE operation_outputs SET output=? WHERE workflow_uuid=? AND function_id=?",
                       (base64.b64encode(pickle.dumps(data)).decode(), WID, path))
