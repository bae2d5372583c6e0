"""CrewAI Flows: a ``@human_feedback`` pause, ``@persist`` in SQLite, ``CheckpointConfig`` JSON files.

``s1`` (``@start``) runs the kit's first step; ``s2`` (``@human_feedback``, its provider raising
``HumanFeedbackPending``, as in the old campaign) starts the second and pauses; ``act`` gets the
answer and finishes it. ``@persist(SQLiteFlowPersistence)`` saves after every method and, at the
pause, state and context in a ``pending_feedback`` row. A pause's handle is the flow id; answering
is ``Flow.from_pending(id, persistence).resume(answer)``. Tamper edits that row's state JSON, what
an answer rehydrates (no answer reads a checkpoint file). Save-kills hook ``save_state`` /
``save_pending_feedback`` (write: ``_save_state_sql``, in the transaction). Recovery: ``@persist``'s
``kickoff(inputs={"id": ...})``, or restoring the newest checkpoint (by mtime, as ``crewai checkpoint
resume`` picks it). Checkpoints are taken at the pause only, a write the flow awaits: per-method ones
are written by event-bus threads while the flow runs on, and serializing the growing event record
then now and then aborts the run (pydantic ``PanicException``, a ``BaseException``).

The step that asks twice (the pause-twice workflow) is two ``@human_feedback`` methods in a chain:
``s2`` pauses, ``s2_again`` (listening to it) takes the first answer and pauses again, ``act`` takes
the second (``_asks_twice`` says why a single method cannot pause twice).

The paper's own workload, its *counter flow*, is a variant of the workflow (issue 25), chosen per
process by the environment variable ``RC_CREWAI_WORKFLOW`` (unset: the human-feedback flow above,
unchanged). Its state is ``{id, counter}``; ``s1`` (``@start``) runs the kit's first step and adds 1,
``s2`` (listening to it, no pause) runs the kit's ``step("s2")`` and adds 10 (``INCREMENTS``), so its
crash points are the kit's ``s1.*`` and ``s2.begin`` / ``s2.effect`` and a run with each step once
ends at counter 11. ``counter``: the class under ``@persist(SQLiteFlowPersistence)``, recovered by
``kickoff(inputs={"id": ...})`` (``persist-id``). ``counter-checkpoint``: no ``@persist``, but
``CheckpointConfig(on_events=["*"])`` (a checkpoint file on every event, written by event-bus threads,
hooked as saves), recovered as ``kickoff(from_checkpoint=...)`` restores (``latest-checkpoint``) from
the most advanced checkpoint: most completed methods, then newest, because files written by threads
while the flow runs on are not in the order of its progress. Every status of the counter flow carries
``state`` (its counter after the run) and, for a recovery, what it resumed from.
"""

import json
import os
import sqlite3
import types
from pathlib import Path
from typing import Any, Callable

from probes.citations import doc as _cite
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability, required_fields

# The environment every CrewAI process runs under (plus a HOME inside the probe's directory): no
# telemetry, no tracing, nothing written outside the probe's directory.
HERMETIC_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_DISABLE_TRACKING": "true",
}
WORKFLOW_ENV = "RC_CREWAI_WORKFLOW"  # the workflow variant a process builds; unset: the human-feedback flow
COUNTER = "counter"  # the paper's counter flow under @persist(SQLiteFlowPersistence)
COUNTER_CHECKPOINT = "counter-checkpoint"  # the same flow under CheckpointConfig(on_events=["*"]) instead
COUNTER_VARIANTS = (COUNTER, COUNTER_CHECKPOINT)
INCREMENTS = (("s1", 1), ("s2", 10))  # what each step of the counter flow adds to its state's counter
COUNTER_RESULT = "s2 done"  # what the counter flow's kickoff returns (its last step's, ``runtime.step``)


def workflow() -> str | None:
    """The workflow variant this process builds (``WORKFLOW_ENV``), or None for the human-feedback flow."""
    return os.environ.get(WORKFLOW_ENV) or None


def _state_model() -> Any:
    """The flow's state model (a pydantic model, as CrewAI's structured state is): what the
    pending row's ``state_json`` is validated against."""
    from pydantic import BaseModel

    class KitState(BaseModel):
        id: str = ""
        steps: int = 0
        done: list[str] = []

    return KitState


def _flow(db: str) -> Any:
    from crewai.flow import Flow, HumanFeedbackPending, human_feedback, listen, persist, start
    from crewai.flow.persistence import SQLiteFlowPersistence

    class Pause:  # an asynchronous provider: the flow pauses, the answer comes later
        def request_feedback(self, context: Any, flow: Any) -> str:
            raise HumanFeedbackPending(context=context)

    class CallbackPause(Pause):  # the callback workflow: the provider is the application's approval callback
        def request_feedback(self, context: Any, flow: Any) -> str:
            runtime.approval_callback()  # e_cb, before the flow pauses
            return super().request_feedback(context, flow)

    KitState = _state_model()

    def first(self: Any, *_: Any) -> str:
        out, self.state.steps = runtime.step1(), self.state.steps + 1
        self.state.done.append("s1")
        return out

    def ask(self: Any) -> str:
        runtime.before_pause()
        return "asking"

    def took(self: Any, out: str) -> str:  # the answered step ended: recorded in the flow's state
        self.state.steps += 1
        self.state.done.append("s2")
        return out

    def act(self: Any, result: Any) -> str:
        return took(self, runtime.step2(getattr(result, "feedback", result)))

    def ask_again(self: Any, result: Any) -> str:
        runtime.first_answer(getattr(result, "feedback", result))
        return "asking again"

    def act_twice(self: Any, result: Any) -> str:
        return took(self, runtime.second_answer(getattr(result, "feedback", result)))

    def extra(name: str) -> Callable[..., Any]:
        def more(self: Any, passed: Any = None) -> Any:
            self.state.done.append(name)
            return runtime.extra_step(name, passed)
        return more

    def named(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        fn.__name__, fn.__qualname__ = name, f"KitFlow.{name}"
        return fn

    # The steps of runtime.shape() as the flow's methods, each listening to the one before (the
    # original s1 -> s2 (the pause) -> act, or the code a change protocol deployed); the paused
    # step is the method named after it, its answer taken by ``act`` (``act_<name>`` for another name).
    methods: dict[str, Any] = {}
    previous: Any = None
    for name, role in runtime.shape():
        listen_to = start() if previous is None else listen(previous)
        taker = "act" if name == "s2" else f"act_{name}"
        if role in ("pause", "callback-pause"):  # the callback workflow asks through a provider that fires e_cb
            provider = CallbackPause() if role == "callback-pause" else Pause()
            asking = listen_to(human_feedback(message="answer?", llm=None, provider=provider)(named(ask, name)))
            methods[name], methods[taker] = asking, listen(asking)(named(act, taker))
            previous = methods[taker]
        elif role == "pause-twice":
            methods.update(_asks_twice(name, taker, listen_to, named(ask, name), named(ask_again, f"{name}_again"),
                                       named(act_twice, taker), Pause))
            previous = methods[taker]
        else:
            body = first if role == "first" else extra(name)
            methods[name] = previous = listen_to(named(body, name))
    KitFlow = types.new_class("KitFlow", (Flow[KitState],),
                              exec_body=lambda ns: ns.update(methods, __module__=__name__))
    return persist(SQLiteFlowPersistence(db))(KitFlow)


def _asks_twice(name: str, taker: str, listen_to: Callable[..., Any], ask: Callable[..., Any],
                ask_again: Callable[..., Any], act: Callable[..., Any], provider: type) -> dict[str, Any]:
    """The pausing step that asks twice, as two chained ``@human_feedback`` methods: ``<name>``
    (``before_pause``, then the first pause), ``<name>_again`` listening to it (``first_answer`` on the
    first answer, then the second pause), and ``taker`` listening to that (``second_answer``).

    Why two methods: ``@human_feedback`` only stamps a config on the method; the engine asks once,
    after the method has returned (``Flow._run_human_feedback_step``), and ``resume()`` settles that
    one pending feedback and runs the method's listeners, never re-entering the method. A method thus
    pauses at most once per execution, so no single method can ask, take an answer and ask again.
    What CrewAI documents for asking again is a listener that is itself a ``@human_feedback`` method
    (human-feedback-in-flows, "Combining with Other Decorators": ``@listen(other_method)`` over
    ``@human_feedback``), ``resume()`` then returning ``HumanFeedbackPending`` "if another feedback
    point is reached" (its docstring): two real pauses, each persisted in a ``pending_feedback`` row
    and answered by ``from_pending(id).resume(answer)`` in a fresh process, with the first answer's
    work between them, as MAF's response handler issuing a second request. (A cycle re-running the
    same method would need a ``@router`` or an ``emit`` whose outcome an LLM collapses: no nearer
    to one step, and not hermetic.)
    """
    from crewai.flow import human_feedback, listen

    first = listen_to(human_feedback(message="answer?", llm=None, provider=provider())(ask))
    again = listen(first)(human_feedback(message="second answer?", llm=None, provider=provider())(ask_again))
    return {name: first, f"{name}_again": again, taker: listen(again)(act)}


def _counter_flow(db: str | None) -> Any:
    """The paper's counter flow (``s1`` adds 1, ``s2`` listening to it adds 10), under
    ``@persist(SQLiteFlowPersistence(db))`` when ``db`` is given, else bare (checkpointed by config)."""
    from crewai.flow import Flow, listen, persist, start
    from crewai.flow.persistence import SQLiteFlowPersistence
    from pydantic import BaseModel

    if runtime.shape() != runtime.SHAPES["v1"]:
        raise ValueError(f"the counter flow is built for the original workflow only, not {runtime.code()}")
    adds = dict(INCREMENTS)

    class CounterState(BaseModel):
        id: str = ""
        counter: int = 0

    class CounterFlow(Flow[CounterState]):
        @start()
        def s1(self) -> str:
            out = runtime.step1()
            self.state.counter += adds["s1"]
            return out

        @listen(s1)
        def s2(self) -> str:
            out = runtime.step("s2")
            self.state.counter += adds["s2"]
            return out

    return persist(SQLiteFlowPersistence(db))(CounterFlow) if db is not None else CounterFlow


def _checkpoint_summary(path: str) -> dict[str, Any]:
    """What a CheckpointConfig file holds for the flow: the event that wrote it, the methods it records
    completed, the state's counter."""
    with open(path) as f:
        data = json.load(f)
    flows = [e for e in data.get("entities", []) if e.get("entity_type") == "flow"]
    entity = flows[0] if flows else {}
    state = entity.get("checkpoint_state") or {}
    return {"trigger": data.get("trigger"), "completed_methods": sorted(entity.get("checkpoint_completed_methods")
                                                                        or []), "counter": state.get("counter")}


def _most_advanced(points: list[Any]) -> tuple[Any, dict[str, Any]]:
    """The checkpoint a restore after per-event checkpoints takes: the most completed methods, then the
    newest file. The files are written by event-bus threads while the flow runs on, so neither their
    modification times nor the timestamps in their names (one-second resolution) nor their parent links
    order them by the flow's progress; ranking by recorded progress first makes the choice independent of
    that race. Returns the file and its summary."""
    summaries = {path: _checkpoint_summary(str(path)) for path in points}
    best = max(points, key=lambda path: (len(summaries[path]["completed_methods"]), path.stat().st_mtime_ns,
                                         str(path)))
    return best, summaries[best]


def _home(home: Path) -> dict[str, str]:
    """``HOME`` and ``XDG_DATA_HOME`` (where CrewAI keeps its files) at ``home``, created."""
    data = home / ".local" / "share"
    data.mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home), "XDG_DATA_HOME": str(data)}


class CrewAIAdapter(Adapter):
    framework = "crewai"
    packages = ("crewai", "pydantic")
    imports = ("crewai.flow", "crewai.flow.persistence", "crewai.flow.persistence.sqlite",
               "crewai.state.checkpoint_config", "crewai.state.provider.json_provider")
    capabilities = frozenset(Capability) - {Capability.CLIENT, Capability.NESTED, Capability.DELETE,
                                            Capability.HANDLER, Capability.PARALLEL}
    code_changes = runtime.CODE_CHANGES
    # Measured on 1.15.2: a flow's method that kicks off another flow (the nesting the Flow docs know only
    # as "a parent flow calling a child flow's kickoff", in usage_metrics) gets the child's pause back as a
    # value, a HumanFeedbackPending the child's kickoff returns; the parent method returns it and the parent
    # completes, with no pending_feedback row of its own (the one row is the child's, under the child's flow
    # id). Resuming the child (Flow.from_pending) continues the child alone. A Crew inside a flow asks its
    # human (Task.human_input) on the console (input()), not as a pause that persists.
    missing = {Capability.CLIENT: "a Flow has no executor that other processes answer as clients: each "
                                  "answer resumes the flow in its own process (the race protocol's k processes)",
               Capability.NESTED: "CrewAI 1.15.2 has no nesting that pauses and resumes: a child flow kicked off "
                                  "from a parent's method returns its HumanFeedbackPending as a value, the parent "
                                  "completes with no pending row of its own, and resuming the child (from_pending) "
                                  "does not continue the parent; a Crew's human input is console input()",
               Capability.HANDLER: "not built: CrewAI 1.15.2's Flow API has no error-handling construct of its "
                                   "own (no error route or handler listener; a method's exception ends kickoff), "
                                   "read in the API, not measured",
               # Measured on 1.15.2 (a flow whose s1 has two @human_feedback listeners, their takers joined by
               # and_, the provider raising HumanFeedbackPending, @persist(SQLiteFlowPersistence)): both branches
               # pause, the flow persists one of them.
               Capability.PARALLEL: "CrewAI 1.15.2 keeps one pending human feedback per flow: two @human_feedback "
                                    "methods listening to one method both pause, but pending_feedback holds one row "
                                    "per flow (flow_uuid UNIQUE), naming one of the two (which one varies from run to "
                                    "run), and from_pending(id).resume(answer) names the flow, not the method: it "
                                    "answers that one and the flow completes with the other branch's question lost "
                                    "and the and_ join never run (measured); the flow_paused checkpoint taken while "
                                    "the other branch runs now and then dies with pyo3's PanicException ('dictionary "
                                    "changed size during iteration', a BaseException that ends the process)",
               Capability.DELETE: "CrewAI 1.15.2 has no deletion of a flow's state: FlowPersistence (SQLiteFlowPersistence) "
                                  "saves and loads it, and clear_pending_feedback drops only the pending-feedback "
                                  "marker after a resume (the flow_states rows stay, and @persist's kickoff(inputs="
                                  "{'id': ...}) restores from them); the checkpoint provider's prune keeps a branch's "
                                  "newest max_keep checkpoints, a retention policy, not a run's deletion"}
    recovery_modes = ("persist-id", "latest-checkpoint")
    citations = {
        "CO race:*": _cite("CR-16", "deviation"),  # concurrent answers: idempotency is the handler's job
        "CO retry:*": _cite("CR-17", "claims"), "CO stray-after-completion": _cite("CR-17", "claims"),
        "FD fork:same-pause": _cite("CR-17", "deviation"),  # an answered pause is gone: no second answer
        "LV park-kill": _cite("CR-15", "claims"),
        "CV tamper:*": _cite("CR-11", "claims"),  # "automatic state validation during save and load"
        # @persist's recovery (save-kill recovers by it) runs the flow from its start again
        **{f"{p} {path}": _cite("CR-6", "deviation") for p in ("EO", "PC")
           for path in ("crash:*/persist-id", "save-kill:*")},
        "LV crash:*/persist-id": _cite("CR-9", "claims"), "LV save-kill:*": _cite("CR-9", "claims"),
        # the callback workflow killed past its provider's effect, recovered by @persist: the same restart from the top
        "EO callback:kill@*/persist-id": _cite("CR-6", "deviation"),
        # once answered, the pause's checkpoint exists: restoring it must skip completed work
        "PC crash:*@s2.[ce]*/latest-checkpoint": _cite("CR-1", "claims"),
        "LV crash:*/latest-checkpoint": _cite("CR-5", "claims"),
        # the counter flow (probes.frameworks.crewai.protocols), cited as the paper's campaign cited its cells: a
        # restore by id runs the @start method again (also of a completed flow); restoring a checkpoint,
        # which records s1 completed once s1 ran, must skip it
        **{f"{p} counter:*/persist-id": _cite("CR-6", "deviation") for p in ("EO", "PC")},
        "LV counter:*/persist-id": _cite("CR-9", "claims"),
        **{f"{p} counter:*/latest-checkpoint": _cite("CR-1", "claims") for p in ("EO", "PC")},
        "LV counter:*/latest-checkpoint": _cite("CR-5", "claims"),
    }

    @classmethod
    def environment(cls, root: Path) -> dict[str, str]:
        """Telemetry and tracing off and a home inside the run from the start: importing
        CrewAI writes ``~/.local/share/crewai/credentials/secret.key``."""
        return {**HERMETIC_ENV, **_home(root / "home")}

    def hook(self) -> None:  # first thing in every child: the run's own home, then hook its saves
        os.environ.update(_home(self.workdir / "home"))
        from crewai.flow.persistence.sqlite import SQLiteFlowPersistence as P
        for method in ("save_state", "save_pending_feedback"):
            runtime.hook_save(P, method, writes=((P, "_save_state_sql"),))
        if workflow() == COUNTER_CHECKPOINT:  # that variant's durable writes are its checkpoint files
            from crewai.state.provider.json_provider import JsonProvider
            runtime.hook_save(JsonProvider, "checkpoint")

    def _sql(self, query: str, *args: Any) -> list[tuple]:
        if not (self.workdir / "flows.db").exists():
            return []
        with sqlite3.connect(self.workdir / "flows.db") as db:
            return db.execute(query, args).fetchall()

    def _go(self, how: str | None, arg: Any, run: Callable[[Any], Any]) -> dict[str, Any]:
        from crewai.flow.persistence import SQLiteFlowPersistence
        from crewai.state.checkpoint_config import CheckpointConfig
        if workflow() in COUNTER_VARIANTS:
            return self._count(how, arg, run)
        db, where = str(self.workdir / "flows.db"), str(self.workdir / "checkpoints")
        cls = _flow(db)
        flow = (cls.from_pending(arg, SQLiteFlowPersistence(db)) if how == "pending" else
                cls.from_checkpoint(CheckpointConfig(restore_from=arg)) if how == "checkpoint" else cls())
        flow.checkpoint = CheckpointConfig(location=where, on_events=["flow_paused"])
        result = run(flow)
        if type(result).__name__ == "HumanFeedbackPending":
            return {"status": "paused", "handle": flow.state.id}
        return {"status": "completed", "outcome": result}

    def _count(self, how: str | None, arg: Any, run: Callable[[Any], Any]) -> dict[str, Any]:
        """A run of the counter flow (the variant ``workflow()`` names): started (``how`` None), or restored
        from the checkpoint file ``arg`` as ``kickoff(from_checkpoint=CheckpointConfig(restore_from=arg))``
        does (``apply_checkpoint``), spelled out so the restored flow can be read before it runs
        (``before_kickoff``). The status carries the counter the run ended with (``state``)."""
        from crewai.state.checkpoint_config import CheckpointConfig
        variant, where = workflow(), str(self.workdir / "checkpoints")
        cls = _counter_flow(str(self.workdir / "flows.db") if variant == COUNTER else None)
        restored: dict[str, Any] = {}
        if how == "checkpoint":
            config = CheckpointConfig(location=where, restore_from=arg)
            flow = cls.from_checkpoint(config)
            flow.checkpoint = config.model_copy(update={"restore_from": None})
            restored = {"before_kickoff": {"counter": flow.state.counter, "completed_methods": sorted(
                str(m) for m in getattr(flow, "_completed_methods", set()))}}
        elif variant == COUNTER_CHECKPOINT:
            flow = cls(checkpoint=CheckpointConfig(location=where, on_events=["*"]))
        else:
            flow = cls()
        outcome = run(flow)
        return {"status": "completed", "outcome": outcome, "state": {"counter": flow.state.counter}, **restored}

    def start(self) -> dict[str, Any]:
        return self._go(None, None, lambda flow: flow.kickoff())

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        if workflow() in COUNTER_VARIANTS:
            raise ValueError("the counter flow never pauses: there is nothing to answer")
        return self._go("pending", handle or self._flow_id(), lambda flow: flow.resume(answer))

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        flow_id = self._flow_id()
        points = sorted((self.workdir / "checkpoints").rglob("*.json"), key=lambda p: (p.stat().st_mtime_ns, p.name))
        counting = workflow() in COUNTER_VARIANTS
        if mode == "persist-id" and flow_id:  # @persist: kick the flow off again under its id
            saved = {"resumed_from": {"counter": self._saved_counter(flow_id)}} if counting else {}
            return {**self._go(None, None, lambda flow: flow.kickoff(inputs={"id": flow_id})), **saved}
        if mode == "latest-checkpoint" and points and counting:  # per-event files: the most advanced one
            point, summary = _most_advanced(points)
            return {**self._go("checkpoint", str(point), lambda flow: flow.kickoff()),
                    "resumed_from": {**summary, "checkpoints": len(points),
                                     "triggers": sorted(_checkpoint_summary(str(p))["trigger"] or "" for p in points)}}
        if mode == "latest-checkpoint" and points:
            return self._go("checkpoint", str(points[-1]), lambda flow: flow.kickoff())
        if mode == "latest-checkpoint":
            return self.nothing_durable(f"the {workflow()} flow wrote no CheckpointConfig checkpoint" if counting else
                                        "no CheckpointConfig checkpoint written yet (they are taken at the pause)")
        return self.nothing_durable("no @persist state saved yet")

    def _saved_counter(self, flow_id: str) -> int | None:
        """The counter in the newest state ``@persist`` saved for ``flow_id`` (what a restore by id loads)."""
        rows = self._sql("SELECT state_json FROM flow_states WHERE flow_uuid=? ORDER BY id DESC LIMIT 1", flow_id)
        return json.loads(rows[0][0]).get("counter") if rows else None

    def _flow_id(self) -> str | None:
        """The paused flow, else the flow saved last."""
        rows = (self._sql("SELECT flow_uuid FROM pending_feedback ORDER BY id DESC LIMIT 1")
                or self._sql("SELECT flow_uuid FROM flow_states ORDER BY id DESC LIMIT 1"))
        return rows[0][0] if rows else None

    # The durable pause: the pending_feedback row (keyed by flow id) whose state from_pending loads.
    def state_paths(self) -> list[Any]:
        return [r[0] for r in self._sql("SELECT flow_uuid FROM pending_feedback ORDER BY id")]

    def load_state(self, path: Any) -> Any:
        return json.loads(self._sql("SELECT state_json FROM pending_feedback WHERE flow_uuid=?", path)[0][0])

    def state_required(self, doc: Any) -> dict[str, Any]:
        """The pending row's state is the flow's pydantic state model (``_state_model``)."""
        model = _state_model()
        return {"status": "schema", "required": required_fields(model), "model": f"crewai_kit {model.__name__}"}

    def save_state(self, path: Any, data: Any) -> None:
        self._sql("UPDATE pending_feedback SET state_json=? WHERE flow_uuid=?", json.dumps(data), path)
