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
"""

import json
import os
import sqlite3
import types
from typing import Any, Callable

from probes.citations import doc as _cite
from probes.crewai.workload import HERMETIC_ENV  # the paper's campaign's hermetic settings
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability, required_fields


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
        if role == "pause":
            asking = listen_to(human_feedback(message="answer?", llm=None, provider=Pause())(named(ask, name)))
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


class CrewAIAdapter(Adapter):
    framework = "crewai"
    packages = ("crewai", "pydantic")
    capabilities = frozenset(Capability) - {Capability.CLIENT}
    code_changes = runtime.CODE_CHANGES
    missing = {Capability.CLIENT: "a Flow has no executor that other processes answer as clients: each "
                                  "answer resumes the flow in its own process (the race protocol's k processes)"}
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
        # once answered, the pause's checkpoint exists: restoring it must skip completed work
        "PC crash:*@s2.[ce]*/latest-checkpoint": _cite("CR-1", "claims"),
        "LV crash:*/latest-checkpoint": _cite("CR-5", "claims"),
    }

    def hook(self) -> None:  # first thing in every child: keep CrewAI hermetic, then hook its saves
        home = self.workdir / "home"
        os.environ.update(HERMETIC_ENV, HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"))
        from crewai.flow.persistence.sqlite import SQLiteFlowPersistence as P
        for method in ("save_state", "save_pending_feedback"):
            runtime.hook_save(P, method, writes=((P, "_save_state_sql"),))

    def _sql(self, query: str, *args: Any) -> list[tuple]:
        if not (self.workdir / "flows.db").exists():
            return []
        with sqlite3.connect(self.workdir / "flows.db") as db:
            return db.execute(query, args).fetchall()

    def _go(self, how: str | None, arg: Any, run: Callable[[Any], Any]) -> dict[str, Any]:
        from crewai.flow.persistence import SQLiteFlowPersistence
        from crewai.state.checkpoint_config import CheckpointConfig
        db, where = str(self.workdir / "flows.db"), str(self.workdir / "checkpoints")
        cls = _flow(db)
        flow = (cls.from_pending(arg, SQLiteFlowPersistence(db)) if how == "pending" else
                cls.from_checkpoint(CheckpointConfig(restore_from=arg)) if how == "checkpoint" else cls())
        flow.checkpoint = CheckpointConfig(location=where, on_events=["flow_paused"])
        result = run(flow)
        if type(result).__name__ == "HumanFeedbackPending":
            return {"status": "paused", "handle": flow.state.id}
        return {"status": "completed", "outcome": result}

    def start(self) -> dict[str, Any]:
        return self._go(None, None, lambda flow: flow.kickoff())

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        return self._go("pending", handle or self._flow_id(), lambda flow: flow.resume(answer))

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        flow_id = self._flow_id()
        points = sorted((self.workdir / "checkpoints").rglob("*.json"), key=lambda p: (p.stat().st_mtime_ns, p.name))
        if mode == "persist-id" and flow_id:  # @persist: kick the flow off again under its id
            return self._go(None, None, lambda flow: flow.kickoff(inputs={"id": flow_id}))
        if mode == "latest-checkpoint" and points:
            return self._go("checkpoint", str(points[-1]), lambda flow: flow.kickoff())
        if mode == "latest-checkpoint":
            return self.nothing_durable("no CheckpointConfig checkpoint written yet (they are taken at the pause)")
        return self.nothing_durable("no @persist state saved yet")

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
