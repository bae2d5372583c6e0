"""Apache Burr: an ``Application`` of two actions that halts before the one needing a human.

Why this shape: Burr has no pause inside an action. Its human-in-the-loop is the caller's
``app.run(halt_before=[...])``: the application stops before the action whose input a
human must give, and a later ``app.run(..., inputs={"answer": ...})`` runs that action
with the input. So the kit's ``s1`` is an action that fires ``e1``; ``s2`` is an action
declaring the input ``answer``, halted before; answered, it begins the second step
(``runtime.before_pause``: nothing of it runs before the halt), consumes the answer, fires
``e2`` and writes the outcome into the state, which the run ends with. The graph is built
from ``runtime.shape()``, so the change protocol's code versions are the same builder.

Durable state: ``SQLitePersister`` on the SQLite file the harness made (``with_state_persister``
saves the state after every action, with status "completed" or "failed"). Every operation
builds the application afresh with ``initialize_from(persister, resume_at_next_action=True,
...)`` under one app id, as a process that restarts would. A pause's handle is what Burr
addresses a saved state by: app id, partition key and the sequence id the application halted
at (``with_identifiers(sequence_id=...)`` then loads that state, the same pause again); without
a handle the latest state of the app id is loaded, as a user holding only the run's id would.

Recovery ("resume-at-next-action"): the same build with no sequence id. Halted before the action
that needs the answer, it is reported paused (Burr's ``run`` always executes one action before it
tests ``halt_before``, so it is not called there); else it runs on to the next such halt or to the
end. Nothing saved: nothing is durable.

The save is hooked at ``SQLitePersister.save``, its lower-level write at the connection's commit:
the connection is a plain ``sqlite3`` connection of a subclass named here (``connect_kwargs``'
``factory``), since the built-in class's methods cannot be replaced.

Hermetic with no settings: 0.43.0 has no telemetry (``burr.telemetry`` is a no-op stub: "Telemetry
has been removed from Burr per ASF policy."), and writes only the SQLite file it is given.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from probes.frameworks.burr.citations import CITATIONS
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability

APP, PARTITION = "kit", "kit"  # the run's identifiers: one application per probe
TABLE = "burr_state"  # SQLitePersister's default table
ANSWER, OUTCOME = "answer", "outcome"  # the pausing action's input; the state field the run ends with


class _Connection(sqlite3.Connection):
    """A plain sqlite3 connection: a Python subclass only so that ``hook_save`` can wrap its commit."""


def _names(role: str) -> list[str]:
    """The actions of this process's workflow that have ``role``."""
    return [name for name, r in runtime.shape() if r == role]


def _graph() -> Any:
    """The Burr ``Graph`` of ``runtime.shape()``: its actions by name, chained in order by transitions."""
    from burr.core import GraphBuilder, State, action

    def first(name: str) -> Any:
        @action(reads=[], writes=[name])
        def run(state: State) -> State:
            return state.update(**{name: runtime.step1()})
        return run

    def asking(name: str) -> Any:
        @action(reads=[], writes=[OUTCOME])
        def run(state: State, answer: str) -> State:
            runtime.before_pause()  # Burr ran nothing of this action before the halt: it begins here
            return state.update(**{OUTCOME: runtime.step2(answer)})
        return run

    def extra(name: str) -> Any:
        @action(reads=[], writes=[OUTCOME])
        def run(state: State) -> State:
            return state.update(**{OUTCOME: runtime.extra_step(name, state.get(OUTCOME))})
        return run

    bodies = {"first": first, "pause": asking, "extra": extra}
    steps = runtime.shape()
    actions = {name: bodies[role](name) for name, role in steps}
    transitions = [(a, b) for (a, _), (b, _) in zip(steps, steps[1:])]
    return GraphBuilder().with_actions(**actions).with_transitions(*transitions).build()


class BurrAdapter(Adapter):
    framework = "burr"
    packages = ("apache-burr",)
    imports = ("burr.core", "burr.core.persistence")
    backends = ("sqlite",)
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY, Capability.CONCURRENT,
                              Capability.FORK, Capability.TAMPER, Capability.SAVE_HOOK, Capability.CODE_CHANGE})
    code_changes = runtime.CODE_CHANGES
    missing = {
        Capability.TWO_PAUSES: "Burr halts between actions only (halt_before / halt_after): an action cannot ask "
                               "twice, so the step that asks twice would be two actions, not one step",
        Capability.NESTED: "Burr nests an application only inside an action (burr.core.parallelism), run with "
                           "halt_after alone: a nested application cannot halt for an answer, and one an action "
                           "runs itself returns to that action when it halts, which halts nothing",
        Capability.PARALLEL: "Burr's parallel actions (burr.core.parallelism) run each branch's sub-application with "
                             "halt_after alone, inside one action: a branch cannot halt for an answer of its own",
        Capability.HANDLER: "Burr has no error-handling construct: an action's exception leaves run() (saved with "
                            "status \"failed\"), and transitions are chosen on the state only",
        Capability.CALLBACK: "Burr's pause is the caller's halt_before, not asked by a hook or callback of its own",
        Capability.DELETE: "SQLitePersister offers no deletion of an application's saved states",
        Capability.INTENT: "Burr's run takes no declaration of intent (fork or retry) when a pause is answered again",
    }
    recovery_modes = ("resume-at-next-action",)
    answers = ("yes", "no")
    citations = CITATIONS

    def hook(self) -> None:
        """Kills inside Burr's save (``SQLitePersister.save``) and at its commit, and a persist event per save."""
        from burr.core.persistence import SQLitePersister
        runtime.hook_save(SQLitePersister, "save", writes=((_Connection, "commit"),))

    # --- the application ----------------------------------------------------------
    def _persister(self) -> Any:
        from burr.core.persistence import SQLitePersister
        persister = SQLitePersister(db_path=str(self.store), connect_kwargs={"factory": _Connection})
        persister.initialize()  # creates the table if it does not exist
        return persister

    def _app(self, persister: Any, sequence_id: int | None = None) -> Any:
        """The application as a restarted process builds it: the state the persister holds for the app id
        (at ``sequence_id``, else the latest), or a fresh one at the first action."""
        from burr.core import ApplicationBuilder

        return (ApplicationBuilder()
                .with_graph(_graph())
                .with_identifiers(app_id=APP, partition_key=PARTITION, sequence_id=sequence_id)
                .initialize_from(persister, resume_at_next_action=True, default_state={},
                                 default_entrypoint=runtime.shape()[0][0])
                .with_state_persister(persister)
                .build())

    @staticmethod
    def _status(app: Any) -> dict[str, Any]:
        """Where the application stands: halted before an action that needs the answer, at its end, or elsewhere."""
        following = app.get_next_action()
        if following is None:
            return {"status": "completed", "outcome": app.state.get(OUTCOME)}
        if following.name in _names("pause"):
            return {"status": "paused",
                    "handle": {"app_id": APP, "partition_key": PARTITION, "sequence_id": app.sequence_id}}
        return {"status": "halted", "next": following.name}

    def _run(self, app: Any, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        """``app.run`` halting before every action that needs the answer and after the last one."""
        app.run(halt_before=_names("pause"), halt_after=[runtime.shape()[-1][0]], inputs=inputs)
        return self._status(app)

    # --- the operations -------------------------------------------------------------
    def start(self) -> dict[str, Any]:
        return self._run(self._app(self._persister()))

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        """The answer as the pausing action's input, at the state ``handle`` names (else the latest)."""
        app = self._app(self._persister(), handle["sequence_id"] if handle else None)
        return self._run(app, {ANSWER: answer})

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        persister = self._persister()
        if persister.load(PARTITION, APP) is None:
            return self.nothing_durable("no state saved for the app id yet")
        app = self._app(persister)
        status = self._status(app)
        return status if status["status"] != "halted" else self._run(app)

    # --- the durable documents: each saved state's JSON (its ``state`` column), oldest first ---------
    def _sql(self, query: str, *args: Any) -> list[Any]:
        with sqlite3.connect(str(self.store)) as db:
            return db.execute(query, args).fetchall()

    def state_paths(self) -> list[Any]:
        try:
            return [row[0] for row in self._sql(f"SELECT rowid FROM {TABLE} ORDER BY sequence_id, rowid")]
        except sqlite3.OperationalError:  # no table yet: nothing saved
            return []

    def load_state(self, path: Any) -> Any:
        return json.loads(self._sql(f"SELECT state FROM {TABLE} WHERE rowid=?", path)[0][0])

    def save_state(self, path: Any, data: Any) -> None:
        self._sql(f"UPDATE {TABLE} SET state=? WHERE rowid=?", json.dumps(data), path)

    def state_required(self, doc: Any) -> dict[str, Any]:
        """Burr's state is untyped here (no ``with_typing``): what the application declares of it is each
        action's ``reads``, the fields the action needs; none of the kit's actions reads one."""
        required = sorted({field for act in _graph().actions for field in act.reads})
        return {"status": "schema", "required": required, "model": "burr State (untyped): the actions' declared reads"}
