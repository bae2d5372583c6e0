"""DBOS: a durable workflow whose pause is ``DBOS.recv``, on an SQLite system database.

Workflow: steps ``s1`` and ``ask`` (the kit's ``before_pause``), ``DBOS.recv(TOPIC)``, step
``s2`` on the answer. A pause's handle is ``[workflow id, topic]``; answering (again) is
``DBOS.send``. Each operation is a fresh process launching DBOS, which recovers its
executor's pending workflows at launch (recovery mode "launch"): that is also how a later
process's answer is consumed. A process whose workflow waits in ``recv`` ends there,
leaving it pending (as a stopped worker does).

The step that asks twice (the pause-twice workflow) is the pause's construct twice: ``ask``,
``recv``, step ``s2`` (the first answer's effect), ``recv`` again, step ``s2b``. An answer after
which the workflow waits in a later ``recv`` leaves the run paused again; the answering process
(an executor's ``resume`` or a client's ``send``) tells that from the operations DBOS recorded
(``_until_answered``).

Concurrent answers (the kit's race) use DBOS as it is deployed (``Capability.CLIENT``): one
executor process launches DBOS and runs the pending workflow (``serve``), and each of the k
answering processes is a ``DBOSClient`` that sends the answer to the workflow's topic and
waits for its result (``send``), launching no executor. (k processes that each launch DBOS
and recover the same pending workflow are k duplicate executors, a deployment the
documentation answers with at-least-once steps, DB-5; the kit no longer measures that.)

DBOS pickles program data by default; the adapter sets DBOS's public JSON serializer, so
the durable documents are JSON: the workflow's inputs and the outputs of ``s1``/``s2``,
one per row (``ask``'s null and DBOS's bookkeeping, like recv's deadline, are left out).
The save hook is ``SystemDatabase.record_operation_result``; its write, the transaction
body ``_record_operation_result_txn`` (the row's INSERT, committed when it returns).

One operation for DBOS's own protocol (``probes.frameworks.dbos.protocols``), which the kit never
calls: ``fork_workflow``, DBOS's documented way to give an answered pause another answer
(DB-10) -- the completed workflow forked from its ``recv`` step into a new workflow, and the
fork answered.

The nested workflow (the kit's nested protocol, role "nested-pause") runs the pausing step as a DBOS
child workflow: the parent runs ``s1``, then calls the child workflow ``kit_nested`` (``ask``,
``recv``, ``s2``) under ``SetWorkflowID`` with the id ``<parent's id>-<step name>`` and returns its
result. A workflow called from a workflow is its child (DBOS records the child's id among the
parent's operations and, on replay, awaits the recorded child instead of starting it again); both
are pending while the child waits in ``recv``, and a launch recovers each. The pause's handle names
the child (``_pausing``), where ``recv`` waits; the run's outcome is the parent's result.

The parallel workflow (the kit's parallel protocol, roles "branch-pause" and "join") starts each branch as
a child workflow ``kit_branch(name)`` with ``DBOS.start_workflow`` under the id ``<parent's id>-<branch>``
(so both wait in their ``recv`` at once), then awaits both children's results and runs the join as a step
of the parent's. One branch is answered by ``DBOS.send`` to its own child's id (``resume_branch``); a
paused status names the branches whose ``recv`` waits, read from each child's recorded operations.
"""

import json
import os
import sqlite3
import sys
import threading
import time
from typing import Any, Callable

from probes.citations import doc as _doc
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability

WID, TOPIC = "kit-run", "answer"
_registered: list[Any] = []


def _pausing() -> str:
    """The id of the workflow whose ``recv`` is the pause: the nested workflow's child (its id derived
    from the parent's and the step's name, as the parent sets it), else the workflow itself."""
    nested = [name for name, role in runtime.shape() if role == "nested-pause"]
    return f"{WID}-{nested[0]}" if nested else WID


def _workflow() -> Any:
    """Register the workflow once per process, before launch (recovery finds it by name): the steps
    of ``runtime.shape()`` in order (the original ``s1``, ``ask``, ``recv``, ``s2``, or the code a
    change protocol deployed, or the step that asks twice, or the nested workflow's parent, whose pausing
    step is a child workflow); it returns the answered step's result."""
    if not _registered:
        from dbos import DBOS, SetWorkflowID
        first = {name: DBOS.step(name=name)(lambda: {"s1": runtime.step1()})
                 for name, role in runtime.shape() if role == "first"}
        answered = {name: DBOS.step(name=name)(lambda answer: runtime.step2(answer))
                    for name, role in runtime.shape() if role == "pause"}
        extra = {name: DBOS.step(name=name)(lambda passed, name=name: runtime.extra_step(name, passed))
                 for name, role in runtime.shape() if role == "extra"}
        # The step that asks twice: each answer's effect is a step of its own after its recv, as the
        # pause's s2 is, so the first answer's effect is recorded before the workflow asks again.
        first_of_two = {name: DBOS.step(name=name)(lambda answer: runtime.first_answer(answer))
                        for name, role in runtime.shape() if role == "pause-twice"}
        second_of_two = {name: DBOS.step(name=f"{name}b")(lambda answer: runtime.second_answer(answer))
                         for name, role in runtime.shape() if role == "pause-twice"}
        ask = DBOS.step(name="ask")(lambda: runtime.before_pause())  # a step: replay never re-runs it
        # The nested workflow's pausing step: a child workflow of its own (ask, recv, s2), registered
        # only for that workflow; the parent calls it under an id derived from its own.
        inner = {name: DBOS.step(name=name)(lambda answer: runtime.step2(answer))
                 for name, role in runtime.shape() if role == "nested-pause"}
        nested = {}
        for name, answered_inside in inner.items():
            @DBOS.workflow(name="kit_nested")
            def kit_nested() -> str:
                ask()
                return answered_inside(DBOS.recv(TOPIC, timeout_seconds=3600))
            nested[name] = kit_nested

        # The handler workflow: the answered step fails after its effect; a try/except around it in the workflow
        # (DBOS's way to handle a step's error: the step's exception is raised in the workflow) runs the
        # handler step (role "handler", taking no place of its own in the loop below).
        fails = {name: DBOS.step(name=name)(lambda answer: runtime.step2_fails(answer))
                 for name, role in runtime.shape() if role == "pause-fails"}
        handlers = [DBOS.step(name=name)(lambda answer, error: runtime.handler(answer, error))
                    for name, role in runtime.shape() if role == "handler"]
        # The parallel workflow's branches: each a child workflow of its own (its begin, recv, its effect),
        # started (not called) by the parent so both wait in recv at once; the join a step of the parent's
        # after it has awaited both children's results.
        branch_of = _branch_workflow() if any(role == "branch-pause" for _, role in runtime.shape()) else None
        joins = {name: DBOS.step(name=name)(lambda answers, name=name: runtime.join(answers, name))
                 for name, role in runtime.shape() if role == "join"}

        @DBOS.workflow(name="kit_workflow")
        def kit_workflow() -> str:
            result = None
            started: dict[str, Any] = {}
            for name, role in runtime.shape():
                if role == "first":
                    first[name]()
                elif role == "pause":
                    ask()
                    result = answered[name](DBOS.recv(TOPIC, timeout_seconds=3600))
                elif role == "pause-fails":
                    ask()
                    answer = DBOS.recv(TOPIC, timeout_seconds=3600)
                    try:
                        result = fails[name](answer)
                    except Exception as error:  # the step's recorded error, on replay too
                        result = handlers[0](answer, error)
                elif role == "handler":
                    continue
                elif role == "pause-twice":
                    ask()
                    first_of_two[name](DBOS.recv(TOPIC, timeout_seconds=3600))
                    result = second_of_two[name](DBOS.recv(TOPIC, timeout_seconds=3600))
                elif role == "nested-pause":  # the child workflow, called: the parent waits for its result
                    with SetWorkflowID(f"{DBOS.workflow_id}-{name}"):
                        result = nested[name]()
                elif role == "branch-pause":  # started: the next branch starts before this one is answered
                    with SetWorkflowID(f"{DBOS.workflow_id}-{name}"):
                        started[name] = DBOS.start_workflow(branch_of, name)
                elif role == "join":  # every branch's result awaited (each recorded), then the join's step
                    result = joins[name]({branch: h.get_result() for branch, h in started.items()})
                else:
                    extra[name](result)
            return result
        _registered.append(kit_workflow)
    return _registered[0]


def _branch_workflow() -> Any:
    """The parallel workflow's branch as a DBOS child workflow ``kit_branch(name)``: a step that begins
    the branch (``runtime.before_branch``), ``DBOS.recv`` on the branch's own workflow id, a step that
    consumes the answer and fires ``e_<name>`` (``runtime.branch``); its result is the answer."""
    from dbos import DBOS

    ask = DBOS.step(name="ask_branch")(lambda name: runtime.before_branch(name))
    answered = DBOS.step(name="branch")(lambda name, answer: runtime.branch(name, answer))

    @DBOS.workflow(name="kit_branch")
    def kit_branch(name: str) -> Any:
        ask(name)
        return answered(name, DBOS.recv(TOPIC, timeout_seconds=3600))

    return kit_branch


ACTIVE = ("PENDING", "ENQUEUED", "DELAYED")  # a workflow status that has not ended


def _branch_id(branch: str) -> str:
    """The id of parallel branch ``branch``'s child workflow (the parent starts it under this id)."""
    return f"{WID}-{branch}"


def _branch_states(db: Any) -> dict[str, str]:
    """Each parallel branch's state, read from what DBOS recorded (``db``: ``DBOS`` or a ``DBOSClient``):
    ``unstarted`` (no child workflow yet), ``asking`` (its ``recv`` waits, ``_recvs``), ``running``, or
    the child's ended status (``SUCCESS``, ``ERROR``, ...)."""
    out = {}
    for branch in runtime.branches(runtime.code()):
        status = db.get_workflow_status(_branch_id(branch))
        if status is None:
            out[branch] = "unstarted"
        elif status.status in ACTIVE:
            out[branch] = "asking" if _recvs(db.list_workflow_steps(_branch_id(branch)))[1] else "running"
        else:
            out[branch] = status.status
    return out


def _parallel_status(db: Any, answered: str | None = None, before: int = 0) -> dict[str, Any]:
    """The parallel run's status once it has settled: completed (the parent ended: its result, or the
    framework's error from ``get_result``), or paused with the branches whose ``recv`` waits
    (``pending``) once no branch is still starting or running. ``answered``: a branch just sent an
    answer, not settled until its child has ended, or asks in a ``recv`` after the one that consumed a
    message it had not before (``before``): a process that ends while a branch runs its step would cut the
    step short itself (a kill the protocol did not ask for)."""
    while True:
        parent = db.get_workflow_status(WID)
        if parent is not None and parent.status not in ACTIVE:
            return {"status": "completed", "outcome": db.retrieve_workflow(WID).get_result(polling_interval_sec=0.02)}
        # read before the states: a branch asking after its recv consumed the answer asks in a new recv
        consumed = _recvs(db.list_workflow_steps(_branch_id(answered)))[0] if answered else 0
        states = _branch_states(db)
        taken = answered is None or states[answered] not in ("asking", "running") or \
            (states[answered] == "asking" and consumed > before)
        asking = [branch for branch, state in states.items() if state == "asking"]
        if taken and asking and not any(state in ("unstarted", "running") for state in states.values()):
            return {"status": "paused", "handle": [WID, TOPIC], "pending": asking}
        time.sleep(0.02)


def _recvs(steps: list[Any]) -> tuple[int, bool]:
    """From a workflow's recorded operations (``list_workflow_steps``): how many ``recv`` calls have
    consumed a message, and whether one waits for a message. A ``recv`` records its deadline (a
    ``DBOS.sleep`` row at the id after its own) once it found no message, and its own row only
    when it consumes one: a deadline whose ``recv`` has no row is a ``recv`` still waiting."""
    consumed = {s["function_id"] for s in steps if s["function_name"] == "DBOS.recv"}
    deadlines = {s["function_id"] - 1 for s in steps if s["function_name"] == "DBOS.sleep"}
    return len(consumed), bool(deadlines - consumed)


def _run(wid: str) -> str:
    """The workflow whose result is the run's, given the one an answer is sent to: the parent when that
    is the nested workflow's child (``_pausing``), else that workflow."""
    return WID if wid == _pausing() else wid


def _until_answered(handle: Any, steps: Callable[[], list[Any]], consumed_before: int) -> dict[str, Any]:
    """After an answer was sent: the run's status once the workflow has ended (its result, or the
    framework's error from ``get_result``), or once it consumed a message it had not consumed
    before (``consumed_before``, counted before the send) and waits in a later ``recv`` (paused
    again, the step that asks twice). Polls the system database as ``get_result`` does, so an
    executor (``resume``) and a client (``send``) decide alike, from what DBOS recorded."""
    while handle.get_status().status in ("PENDING", "ENQUEUED", "DELAYED"):
        consumed, waiting = _recvs(steps())
        if consumed > consumed_before and waiting:
            return {"status": "paused", "handle": [_pausing(), TOPIC]}
        time.sleep(0.02)
    return {"status": "completed", "outcome": handle.get_result(polling_interval_sec=0.02)}


def _paused_in_recv(status: dict[str, Any]) -> dict[str, Any]:
    """A DBOS executor thread waits in recv and interpreter exit would join it: end the process in
    threading's exit hooks (they run before that join, after the kit's child wrote ``status``)."""
    threading._register_atexit(lambda: (sys.stdout.flush(), sys.stderr.flush(), os._exit(0)))
    return status


class DBOSAdapter(Adapter):
    framework = "dbos"
    packages = ("dbos",)
    imports = ("dbos", "dbos._sys_db", "langgraph.graph", "langgraph.types", "langgraph.checkpoint.sqlite")
    backends = ("sqlite",)
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.CLIENT, Capability.CODE_CHANGE,
                              Capability.TWO_PAUSES, Capability.NESTED, Capability.DELETE,
                              Capability.HANDLER, Capability.PARALLEL})
    missing = {Capability.CALLBACK: "DBOS has no approval callback or hook (dbos 2.27.0): a pause is DBOS.recv in the "
                                    "workflow's own code, and what runs before it is a step of the workflow"}
    code_changes = runtime.CODE_CHANGES
    recovery_modes = ("launch",)
    answers = ("yes", "no")
    citations = {
        # the statements the paper's DBOS campaign cites for each property (probes/citations.py)...
        "PC *": _doc("DB-1", "claims"), "EO *": _doc("DB-5", "deviation"), "LV *": _doc("DB-2", "claims"),
        "CO *": _doc("DB-6", "claims"), "FD *": _doc("DB-10", "claims"),
        # ...and where the kit's path is another situation
        "LV crash:raise@*": _doc("DB-3", "deviation"),  # a workflow that raised is ERROR, never recovered
        "FD fork:same-pause": _doc("DB-10", "deviation"),  # another answer needs a fork (new id), not a resend
        # The same two situations on the nested workflow (``nested:<path>``): the raise inside the child
        # workflow ends the child ERROR and, through its recorded result, the parent (DB-3 speaks of any
        # workflow that raises); the answered pause is the completed child's recv, given another answer
        # by a resend to the child's id, not a fork (DB-10)
        "LV nested:crash:raise@*": _doc("DB-3", "deviation"),
        "FD nested:fork:same-pause": _doc("DB-10", "deviation"),
    }

    def hook(self) -> None:  # the write: the transaction's body (pollers commit meanwhile on other threads)
        from dbos._sys_db import SystemDatabase
        runtime.hook_save(SystemDatabase, "record_operation_result",
                          writes=((SystemDatabase, "_record_operation_result_txn"),))

    def _launch(self) -> tuple[Any, threading.Event]:
        from dbos import DBOS, DBOSPortableJSONSerializer
        from dbos._sys_db import SystemDatabase
        waiting, setup = threading.Event(), SystemDatabase.recv_setup
        def recv_setup(*a: Any, **k: Any) -> Any:  # observes only: (False, ...) = recv waits for a message
            out = setup(*a, **k)
            if not out[0]:
                waiting.set()
            return out
        SystemDatabase.recv_setup = recv_setup
        _workflow()
        DBOS(config={"name": "rc-kit", "system_database_url": f"sqlite:///{self.store}", "run_admin_server": False,
                     "log_level": "ERROR", "application_version": "kit", "serializer": DBOSPortableJSONSerializer(),
                     "notification_listener_polling_interval_sec": 0.02})
        DBOS.launch()
        return DBOS, waiting

    def start(self) -> dict[str, Any]:
        return self.recover("launch", None)  # on a fresh store nothing is pending: the run starts

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        wid, topic = handle or (_pausing(), TOPIC)
        DBOS, _ = self._launch()  # recovers the pending workflow, which then receives the answer
        if runtime.asks_twice():  # the workflow may wait in its next recv after this answer: paused again
            before, _ = _recvs(DBOS.list_workflow_steps(wid))
            DBOS.send(wid, answer, topic)
            status = _until_answered(DBOS.retrieve_workflow(_run(wid)), lambda: DBOS.list_workflow_steps(wid), before)
            if status["status"] == "paused":  # the executor thread waits in recv
                return _paused_in_recv(status)
            DBOS.destroy()
            return status
        DBOS.send(wid, answer, topic)
        outcome = DBOS.retrieve_workflow(_run(wid)).get_result(polling_interval_sec=0.02)
        DBOS.destroy()
        return {"status": "completed", "outcome": outcome}

    def serve(self) -> dict[str, Any]:
        """The one executor: launching DBOS recovers the pending workflow, which waits in recv for a client."""
        DBOS, _ = self._launch()
        outcome = DBOS.retrieve_workflow(WID).get_result(polling_interval_sec=0.02)
        DBOS.destroy()
        return {"status": "completed", "outcome": outcome}

    def send(self, handle: Any, answer: Any) -> dict[str, Any]:
        """A client (``DBOSClient``, no DBOS launched): send the answer, wait for the workflow's result."""
        from dbos import DBOSClient, DBOSPortableJSONSerializer
        wid, topic = handle or (_pausing(), TOPIC)
        client = DBOSClient(system_database_url=f"sqlite:///{self.store}", serializer=DBOSPortableJSONSerializer())
        try:
            if runtime.asks_twice():  # the executor's workflow may wait in its next recv: paused again
                before, _ = _recvs(client.list_workflow_steps(wid))
                client.send(wid, answer, topic)
                return _until_answered(client.retrieve_workflow(_run(wid)), lambda: client.list_workflow_steps(wid),
                                       before)
            client.send(wid, answer, topic)
            outcome = client.retrieve_workflow(_run(wid)).get_result(polling_interval_sec=0.02)
        finally:
            client.destroy()
        return {"status": "completed", "outcome": outcome}

    def delete(self) -> dict[str, Any]:
        """``delete_workflow`` ("Delete a workflow and all its associated data by ID", ``DBOS.delete_workflow``;
        the same system-database delete through ``DBOSClient``, as an operator outside the application
        deletes one), with ``delete_children`` for the nested workflow's child. A client launches no
        executor: a launched DBOS would recover the pending workflow itself. The delete is one DELETE of
        the workflow's status row; its operations, notifications and events go with it (ON DELETE CASCADE)."""
        from dbos import DBOSClient, DBOSPortableJSONSerializer
        client = DBOSClient(system_database_url=f"sqlite:///{self.store}", serializer=DBOSPortableJSONSerializer())
        try:
            client.delete_workflow(WID, delete_children=True)
        finally:
            client.destroy()
        return {"status": "deleted"}

    def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """One parallel branch answered: launching DBOS recovers the parent and the children still pending,
        and ``DBOS.send`` delivers the answer to the branch's own child workflow, where its ``recv`` waits
        (each branch's ``recv`` is addressed by its workflow's id; the other branch's is left waiting).
        Returns once the run has settled (``_parallel_status``)."""
        DBOS, _ = self._launch()
        before, _ = _recvs(DBOS.list_workflow_steps(_branch_id(branch)))
        DBOS.send(_branch_id(branch), answer, TOPIC)
        return self._settled(DBOS, _parallel_status(DBOS, branch, before))

    def _settled(self, DBOS: Any, status: dict[str, Any]) -> dict[str, Any]:
        """End the process as a paused run's must (an executor thread waits in recv), else destroy DBOS."""
        if status["status"] == "paused":
            return _paused_in_recv(status)
        DBOS.destroy()
        return status

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        from dbos import SetWorkflowID
        DBOS, waiting = self._launch()
        if DBOS.get_workflow_status(WID) is None:  # no durable workflow yet: start it
            with SetWorkflowID(WID):
                DBOS.start_workflow(_workflow())
        if runtime.branches(runtime.code()):  # the parallel workflow: settled when each branch asks or ended
            return self._settled(DBOS, _parallel_status(DBOS))
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
        return _paused_in_recv({"status": "paused", "handle": [_pausing(), TOPIC]})

    def fork_workflow(self, answer: Any) -> dict[str, Any]:
        """``DBOS.fork_workflow`` of the completed workflow from its first ``recv`` step (the steps
        before it are copied into a new workflow, ``recv`` and what follows run again there), the
        fork answered with ``answer`` once it waits in ``recv``, as the original was answered at its
        pause. Returns the fork's outcome and, read again after it, the original's (a fork must leave
        the original as it was); the fork's id only as whether it differs (ids vary between runs)."""
        DBOS, waiting = self._launch()  # nothing is pending: only the fork will wait in recv
        recvs = [s["function_id"] for s in DBOS.list_workflow_steps(WID) if s["function_name"] == "DBOS.recv"]
        if not recvs:
            raise RuntimeError(f"workflow {WID} recorded no recv step to fork from")
        fork = DBOS.fork_workflow(WID, recvs[0])
        if not waiting.wait(120):
            raise TimeoutError("the forked workflow never waited in recv")
        DBOS.send(fork.get_workflow_id(), answer, TOPIC)
        outcome = fork.get_result(polling_interval_sec=0.02)
        original = DBOS.retrieve_workflow(WID).get_result(polling_interval_sec=0.02)
        distinct = fork.get_workflow_id() != WID
        DBOS.destroy()
        return {"status": "completed", "outcome": outcome, "original_outcome": original,
                "forked_from_step": recvs[0], "new_workflow_id": distinct}

    # The durable state: JSON values in the system database, one (table, column, row) per document.
    def state_paths(self) -> list[Any]:
        with sqlite3.connect(self.store) as db:
            ops = db.execute("SELECT function_id FROM operation_outputs WHERE workflow_uuid=? AND output IS NOT NULL"
                             " AND function_name IN ('s1', 's2') ORDER BY function_id", (WID,)).fetchall()
        return [("workflow_status", "inputs", "")] + [("operation_outputs", "output", f" AND function_id={f}")
                                                      for f, in ops]

    def load_state(self, path: Any) -> Any:
        table, column, row = path
        with sqlite3.connect(self.store) as db:
            value, = db.execute(f"SELECT {column} FROM {table} WHERE workflow_uuid=?{row}", (WID,)).fetchone()
        return json.loads(value)

    def state_required(self, doc: Any) -> dict[str, Any]:
        """No DBOS model constrains these documents, so nothing is required. A step's recorded
        output is read back by ``DBOSPortableJSONSerializer.deserialize``, which is ``json.loads``
        and nothing else (``dbos/_serialization.py``): any JSON value is the step's result (the
        kit's ``s1`` has no return annotation to coerce it to). The workflow's inputs (the only
        other document, ``{"positionalArgs": [...], "namedArgs": {...}}``) are the TypedDict
        ``JsonWorkflowArgs``, declared ``total=False``, whose missing keys ``deserialize_args``
        fills with defaults; its required keys are read from the TypedDict."""
        from dbos._serialization import JsonWorkflowArgs
        if isinstance(doc, dict) and doc and set(doc) <= set(JsonWorkflowArgs.__annotations__):
            return {"status": "schema", "required": sorted(JsonWorkflowArgs.__required_keys__),
                    "model": "dbos JsonWorkflowArgs (TypedDict, total=False)"}
        return {"status": "schema", "required": [],
                "model": "dbos step output: any JSON value (DBOSPortableJSONSerializer: json.loads, no schema)"}

    def save_state(self, path: Any, data: Any) -> None:
        table, column, row = path
        with sqlite3.connect(self.store) as db:
            db.execute(f"UPDATE {table} SET {column}=? WHERE workflow_uuid=?{row}", (json.dumps(data), WID))
