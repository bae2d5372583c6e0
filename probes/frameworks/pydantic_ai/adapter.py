"""pydantic-ai durable execution under the kit: the DBOS workflow of ``workflow.py``, driven per process.

Every operation is a fresh process that launches DBOS on the probe's system database (SQLite file,
or a PostgreSQL database of the harness's embedded server); ``DBOS.launch()`` recovers the pending
workflow (recovery mode "launch"; the application version is pinned, so a new process's code
matches). A pause is the workflow parked in ``DBOS.recv_async``; its handle is ``[workflow id,
topic]``; answering (again) is ``DBOS.send``. Concurrent answers come from ``DBOSClient`` processes
beside one executor (``Capability.CLIENT``), as in ``probes/frameworks/dbos``. Values stay pickled, DBOS's
default (its JSON serializer cannot store pydantic-ai's ``ModelResponse``); the documents the kit
edits are the pickled outputs of steps ``s1`` and ``s2``. Saves are hooked at
``SystemDatabase.record_operation_result`` (its write: ``_record_operation_result_txn``).

The step that asks twice (``workflow.py``: two approval-gated tool calls, each a ``recv``): an answer
after which the workflow waits in its next ``recv`` leaves the run paused again, told from the
operations DBOS recorded as ``probes/frameworks/dbos`` tells it (``_until_answered``).

The handler workflow (``Capability.HANDLER``): the approved tool raises after its effect and a ``Hooks``
capability's ``on_tool_execute_error`` hook (pydantic-ai's handler of a tool's exception, whose return value
becomes the tool's result) runs the kit's handler step. The callback workflow (``Capability.CALLBACK``): the
approval is asked by ``ApprovalRequiredToolset``'s ``approval_required_func``, pydantic-ai's approval callback,
run before the call is deferred. Both are built in ``workflow.py``; the driving below is the two-step one's.
"""

import base64
import os
import pickle
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

from probes.frameworks.dbos.adapter import _paused_in_recv, _recvs, _until_answered
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability
from probes.frameworks.pydantic_ai.citations import CITATIONS
from probes.frameworks.pydantic_ai.workflow import TOPIC, WID, workflow

_ROW = "workflow_uuid=? AND function_id=?"


def _own_dirs(root: Path) -> dict[str, str]:
    """``HOME`` and ``TMPDIR`` in directories of their own under ``root``, created."""
    env = {var: str((root / var.lower()).resolve()) for var in ("HOME", "TMPDIR")}
    for path in env.values():
        os.makedirs(path, exist_ok=True)
    return env


class PydanticAIAdapter(Adapter):
    framework = "pydantic-ai"
    packages = ("pydantic-ai-slim", "dbos")
    imports = ("dbos", "dbos._sys_db", "pydantic_ai", "pydantic_ai.messages", "pydantic_ai.durable_exec.dbos",
               "pydantic_ai.models.function")
    backends = ("sqlite", "postgres")
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.CLIENT, Capability.TWO_PAUSES,
                              Capability.NESTED, Capability.DELETE, Capability.PARALLEL,
                              Capability.HANDLER, Capability.CALLBACK})
    missing = {Capability.CODE_CHANGE: "the workflow is an agent's tool calls, chosen by the kit's scripted model: a "
                                       "code change would change its tools, which the change protocol does not define"}
    recovery_modes = ("launch",)
    answers = ("yes", "no")
    citations = CITATIONS

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.url = self.store if self.backend == "postgres" else f"sqlite:///{self.store}"

    @classmethod
    def environment(cls, root: Path) -> dict[str, str]:
        """Its home and temporary files inside the run from the start (before DBOS is
        imported)."""
        return _own_dirs(root)

    def hook(self) -> None:
        """In each operation's own process (never the kit's): its home and temporary files in the run's
        own directory, then the save's write hooked."""
        os.environ.update(_own_dirs(self.workdir))
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
        workflow()
        DBOS(config={"name": "rc-kit", "system_database_url": self.url, "log_level": "ERROR", "enable_otlp": False,
                     "application_version": "kit", "notification_listener_polling_interval_sec": 0.02})
        DBOS.launch()
        return DBOS, waiting

    def _result(self, DBOS: Any, wid: str = WID) -> dict[str, Any]:
        outcome = DBOS.retrieve_workflow(wid).get_result(polling_interval_sec=0.02)
        DBOS.destroy()
        return {"status": "completed", "outcome": outcome}

    def start(self) -> dict[str, Any]:
        return self.recover("launch", None)  # on a fresh store nothing is pending: the run starts

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        wid, topic = handle or (WID, TOPIC)
        DBOS, _ = self._launch()  # recovers the pending workflow, which then receives the answer
        if runtime.asks_twice():  # the workflow may wait in its next recv after this answer: paused again
            before, _ = _recvs(DBOS.list_workflow_steps(wid))
            DBOS.send(wid, answer, topic)
            status = _until_answered(DBOS.retrieve_workflow(wid), lambda: DBOS.list_workflow_steps(wid), before)
            if status["status"] == "paused":  # the executor thread waits in recv, for this run's next answer
                return _paused_in_recv({**status, "handle": [wid, topic]})
            DBOS.destroy()
            return status
        DBOS.send(wid, answer, topic)
        return self._result(DBOS, wid)

    def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """One parallel branch answered: ``DBOS.send`` of ``{"branch": ..., "answer": ...}`` to the workflow's
        recv (the workflow approves that branch's deferred call alone); returns once the workflow has ended or
        consumed it and waits in its next recv, with the branches it then names (``_parallel_paused``)."""
        wid, topic = handle or (WID, TOPIC)
        DBOS, _ = self._launch()
        before, _ = _recvs(DBOS.list_workflow_steps(wid))
        DBOS.send(wid, {"branch": branch, "answer": answer}, topic)
        status = _until_answered(DBOS.retrieve_workflow(wid), lambda: DBOS.list_workflow_steps(wid), before)
        if status["status"] == "paused":
            return self._parallel_paused(DBOS)
        DBOS.destroy()
        return status

    def _parallel_paused(self, DBOS: Any) -> dict[str, Any]:
        """The parallel workflow waiting in recv: the branches its ``pending`` event names (set before each
        recv), the process ended as a paused run's must."""
        from probes.frameworks.pydantic_ai.workflow import PENDING
        return _paused_in_recv({"status": "paused", "handle": [WID, TOPIC],
                                "pending": list(DBOS.get_event(WID, PENDING, timeout_seconds=5) or [])})

    def serve(self) -> dict[str, Any]:  # the one executor: the recovered workflow waits in recv for a client
        return self._result(self._launch()[0])

    def send(self, handle: Any, answer: Any) -> dict[str, Any]:  # a client: no DBOS launched here
        from dbos import DBOSClient
        wid, topic = handle or (WID, TOPIC)
        client = DBOSClient(system_database_url=self.url)
        try:
            client.send(wid, answer, topic)
            return {"status": "completed", "outcome": client.retrieve_workflow(wid).get_result(polling_interval_sec=0.02)}
        finally:
            client.destroy()

    def delete(self) -> dict[str, Any]:
        """pydantic-ai's durable run is its DBOS workflow (pydantic-ai has no deletion of its own):
        ``delete_workflow`` ("Delete a workflow and all its associated data by ID", ``DBOS.delete_workflow``;
        the same system-database delete through ``DBOSClient``, which launches no executor that would
        recover the pending workflow), with ``delete_children`` for a child workflow."""
        from dbos import DBOSClient
        client = DBOSClient(system_database_url=self.url)
        try:
            client.delete_workflow(WID, delete_children=True)
        finally:
            client.destroy()
        return {"status": "deleted"}

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        from dbos import SetWorkflowID
        DBOS, waiting = self._launch()
        if DBOS.get_workflow_status(WID) is None:  # no durable workflow yet: start it
            with SetWorkflowID(WID):
                DBOS.start_workflow(workflow())
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
            DBOS.destroy()
            return {"status": "completed", "outcome": box["outcome"]}
        if runtime.branches(runtime.code()):
            return self._parallel_paused(DBOS)
        # DBOS's executor waits in recv and interpreter exit would join it: end the process in
        # threading's exit hooks (they run after the kit's child wrote its result).
        threading._register_atexit(lambda: (sys.stdout.flush(), sys.stderr.flush(), os._exit(0)))
        return {"status": "paused", "handle": [WID, TOPIC]}

    # The durable state: the pickled outputs of steps s1 and s2, one row each (SQLite backend).
    def state_paths(self) -> list[Any]:
        if self.backend != "sqlite":
            return []
        with sqlite3.connect(self.store) as db:
            return [f for f, in db.execute("SELECT function_id FROM operation_outputs WHERE workflow_uuid=? AND output"
                                           " IS NOT NULL AND function_name IN ('s1', 's2') ORDER BY function_id", (WID,))]

    def load_state(self, path: Any) -> Any:  # a pickle this probe's own run wrote
        with sqlite3.connect(self.store) as db:
            value, = db.execute(f"SELECT output FROM operation_outputs WHERE {_ROW}", (WID, path)).fetchone()
        return pickle.loads(base64.b64decode(value))

    def state_required(self, doc: Any) -> dict[str, Any]:
        """No model constrains these documents, so nothing is required. A recorded step output is
        read back by DBOS's ``DefaultSerializer.deserialize``, which is ``pickle.loads`` and nothing
        else (``dbos/_serialization.py``), and the replayed value is the tool's result as it stands:
        pydantic-ai turns a tool's return annotation into a JSON schema for the model
        (``FunctionSchema.return_schema``, ``pydantic_ai/_function_schema.py``) but does not
        validate the returned value against it."""
        return {"status": "schema", "required": [],
                "model": "dbos step output: any pickled value (DefaultSerializer: pickle.loads, no schema)"}

    def save_state(self, path: Any, data: Any) -> None:
        with sqlite3.connect(self.store) as db:
            db.execute(f"UPDATE operation_outputs SET output=? WHERE {_ROW}",
                       (base64.b64encode(pickle.dumps(data)).decode(), WID, path))
