"""CrewAI 1.15.2 Flow workloads, run inside fresh interpreters (``run_child`` targets).

Each function here is one protocol step executed by one process (one *incarnation*
of the effect oracle). CrewAI is imported inside the functions only: the parent
process that plans and judges a probe never pays the ~7 s import, and the book build
never imports CrewAI at all.

The flow under test is the paper's: state ``{id, counter}``; ``s1`` (start) adds 1
and fires effect ``s1``; ``s2`` (listens to ``s1``) adds 10 and fires effect ``s2``.
The human-feedback flow puts a ``@human_feedback`` pause between ``s1`` and the gated
listener ``act`` whose effect (``gate``) must fire once per answered pause.
"""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path
from typing import Any

from probes.core import oracle
from probes.core.barrier import wait_at_barrier
from probes.core.nemesis import FailOnce, park

# The environment every CrewAI child runs under (plus a temporary HOME set by the
# parent): no telemetry, no tracing, nothing written outside the probe's directory.
HERMETIC_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_DISABLE_TRACKING": "true",
}


def _counter_flow(persist_db: str | None, marker_dir: str, fail_s2: bool) -> type:
    """Build the s1 -> s2 flow class; with ``persist_db`` it is class-level ``@persist``."""
    from crewai.flow.flow import Flow, listen, start
    from pydantic import BaseModel

    class CounterState(BaseModel):
        id: str = ""
        counter: int = 0

    nemesis = FailOnce(marker_dir)

    class CounterFlow(Flow[CounterState]):
        @start()
        def s1(self) -> None:
            oracle.fire("s1")
            self.state.counter += 1

        @listen(s1)
        def s2(self) -> None:
            park("crewai.s2")  # SIGKILL point: inside s2, before its effect
            if fail_s2:
                nemesis.maybe_fail("s2")
            oracle.fire("s2")
            self.state.counter += 10

    if persist_db is not None:
        from crewai.flow.persistence import persist
        from crewai.flow.persistence.sqlite import SQLiteFlowPersistence

        CounterFlow = persist(SQLiteFlowPersistence(persist_db))(CounterFlow)
    return CounterFlow


def _persisted_counter(persist_db: str, flow_id: str) -> int | None:
    from crewai.flow.persistence.sqlite import SQLiteFlowPersistence

    state = SQLiteFlowPersistence(persist_db).load_state(flow_id)
    return None if state is None else int(state.get("counter", 0))


def persist_first_run(ledger: str, marker_dir: str, persist_db: str, fail_s2: bool) -> dict[str, Any]:
    """Incarnation ``first``: kick the @persist flow off; s2 may raise once (or be killed)."""
    orc = oracle.install(ledger, "first")
    flow_cls = _counter_flow(persist_db, marker_dir, fail_s2)
    flow = flow_cls()
    raised = None
    try:
        flow.kickoff()
    except Exception as exc:  # the injected crash surfaces here
        raised = type(exc).__name__
    return {
        "flow_id": flow.state.id,
        "raised": raised,
        "counter_in_memory": flow.state.counter,
        "counter_persisted": _persisted_counter(persist_db, flow.state.id),
        "oracle": orc.counter.snapshot(),
    }


def persist_restore(ledger: str, marker_dir: str, persist_db: str, flow_id: str, incarnation: str) -> dict[str, Any]:
    """A fresh interpreter restores the flow by id -- the documented @persist recovery."""
    orc = oracle.install(ledger, incarnation)
    flow_cls = _counter_flow(persist_db, marker_dir, fail_s2=False)
    before = _persisted_counter(persist_db, flow_id)
    flow = flow_cls()
    flow.kickoff(inputs={"id": flow_id})
    return {
        "counter_before": before,
        "counter": flow.state.counter,
        "counter_persisted": _persisted_counter(persist_db, flow_id),
        "same_id": flow.state.id == flow_id,
        "oracle": orc.counter.snapshot(),
    }


def persist_find_flow_id(persist_db: str) -> str | None:
    """After a SIGKILL the first incarnation returned nothing: read its id from the store."""
    import sqlite3

    conn = sqlite3.connect(persist_db)
    try:
        row = conn.execute("SELECT flow_uuid FROM flow_states ORDER BY id DESC LIMIT 1").fetchone()
    finally:
        conn.close()
    return None if row is None else str(row[0])


# --- CheckpointConfig ---------------------------------------------------------------


def checkpoint_first_run(ledger: str, marker_dir: str, location: str) -> dict[str, Any]:
    """Incarnation ``first``: the flow with ``CheckpointConfig(on_events=["*"])``; s2 raises once."""
    from crewai.state.checkpoint_config import CheckpointConfig

    orc = oracle.install(ledger, "first")
    flow_cls = _counter_flow(None, marker_dir, fail_s2=True)
    flow = flow_cls(checkpoint=CheckpointConfig(location=location, on_events=["*"]))
    raised = None
    try:
        flow.kickoff()
    except Exception as exc:
        raised = type(exc).__name__
    return {"raised": raised, "counter_in_memory": flow.state.counter, "oracle": orc.counter.snapshot()}


def _checkpoint_summary(path: str) -> dict[str, Any]:
    data = json.loads(Path(path).read_text())
    flows = [e for e in data.get("entities", []) if e.get("entity_type") == "flow"]
    entity = flows[0] if flows else {}
    state = entity.get("checkpoint_state") or {}
    return {
        "trigger": data.get("trigger"),
        "completed_methods": sorted(entity.get("checkpoint_completed_methods") or []),
        "counter": state.get("counter"),
    }


def newest_checkpoint(location: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The most advanced checkpoint file: most completed methods, then latest written.

    CrewAI writes checkpoints from event handlers, so file-name timestamps (second
    resolution) and parent links do not give a total order; ranking by recorded
    progress first makes the choice independent of that race.
    """
    files = sorted(p for p in glob.glob(os.path.join(location, "**", "*.json"), recursive=True))
    summaries = [dict(_checkpoint_summary(p), file=os.path.basename(p), mtime_ns=os.stat(p).st_mtime_ns) for p in files]
    if not files:
        return None, summaries
    best = max(range(len(files)), key=lambda i: (len(summaries[i]["completed_methods"]), summaries[i]["mtime_ns"], files[i]))
    return files[best], summaries


def checkpoint_restore(ledger: str, marker_dir: str, location: str) -> dict[str, Any]:
    """A fresh interpreter restores from the newest checkpoint, as CheckpointConfig documents."""
    from crewai.state.checkpoint_config import CheckpointConfig

    orc = oracle.install(ledger, "restore")
    path, summaries = newest_checkpoint(location)
    if path is None:
        return {"checkpoint": None, "checkpoints": 0, "oracle": orc.counter.snapshot()}
    flow_cls = _counter_flow(None, marker_dir, fail_s2=False)
    # What ``kickoff(from_checkpoint=CheckpointConfig(restore_from=path))`` does
    # (crewai.state.checkpoint_config.apply_checkpoint), spelled out so that the
    # restored object can be inspected before it runs.
    config = CheckpointConfig(restore_from=path)
    flow = flow_cls.from_checkpoint(config)
    restored_view = {
        "counter": flow.state.counter,
        "completed_methods": sorted(str(m) for m in getattr(flow, "_completed_methods", set())),
    }
    flow.checkpoint = config.model_copy(update={"restore_from": None})
    flow.kickoff()
    return {
        "checkpoint": _checkpoint_summary(path),
        "restored_before_kickoff": restored_view,
        "checkpoints": len(summaries),
        "checkpoint_triggers": sorted(s["trigger"] or "" for s in summaries),
        "counter": flow.state.counter,
        "oracle": orc.counter.snapshot(),
    }


# --- @human_feedback pause ------------------------------------------------------------


def _feedback_flow(persist_db: str) -> type:
    """s1 -> review (@human_feedback, pauses via a provider) -> act (gated effect)."""
    from crewai.flow.async_feedback import HumanFeedbackPending
    from crewai.flow.flow import Flow, listen, start
    from crewai.flow.human_feedback import human_feedback
    from crewai.flow.persistence import persist
    from crewai.flow.persistence.sqlite import SQLiteFlowPersistence
    from pydantic import BaseModel

    class PauseProvider:
        """An asynchronous provider: raise HumanFeedbackPending, i.e. pause the flow."""

        def request_feedback(self, context: Any, flow: Any) -> str:
            raise HumanFeedbackPending(context=context)

    class ReviewState(BaseModel):
        id: str = ""
        counter: int = 0
        answers: list[str] = []

    @persist(SQLiteFlowPersistence(persist_db))
    class ReviewFlow(Flow[ReviewState]):
        @start()
        def s1(self) -> str:
            oracle.fire("s1")
            self.state.counter += 1
            return "draft"

        # llm=None and no emit: the answer is routed without any model call.
        @listen(s1)
        @human_feedback(message="approve?", llm=None, provider=PauseProvider())
        def review(self) -> str:
            oracle.fire("review")
            return "draft for review"

        @listen(review)
        def act(self, result: Any) -> None:
            answer = getattr(result, "feedback", str(result))
            oracle.fire("gate", answer)
            self.state.counter += 10
            self.state.answers.append(answer)

    return ReviewFlow


def feedback_pause(ledger: str, persist_db: str) -> dict[str, Any]:
    """Incarnation ``park``: run to the human-feedback pause and return (the flow is durable)."""
    orc = oracle.install(ledger, "park")
    flow = _feedback_flow(persist_db)()
    result = flow.kickoff()
    return {
        "flow_id": flow.state.id,
        "paused": type(result).__name__ == "HumanFeedbackPending",
        "result_type": type(result).__name__,
        "oracle": orc.counter.snapshot(),
    }




def feedback_answer(ledger: str, persist_db: str, flow_id: str, answer: str, incarnation: str,
                    barrier: str | None = None) -> dict[str, Any]:
    """Load the pause with ``from_pending`` and answer it with ``resume``.

    With ``barrier`` set the process first loads the pause, then waits at the barrier,
    so two such processes both hold a loaded pause before either answers.
    """
    orc = oracle.install(ledger, incarnation)
    from crewai.flow.persistence.sqlite import SQLiteFlowPersistence

    flow_cls = _feedback_flow(persist_db)
    try:
        flow = flow_cls.from_pending(flow_id, SQLiteFlowPersistence(persist_db))
    except Exception as exc:  # a refused load is an observation, not a crash
        if barrier:
            wait_at_barrier(barrier)
        return {"loaded": False, "refused": f"{type(exc).__name__}: {exc}".replace(flow_id, "<flow>"),
                "oracle": orc.counter.snapshot()}
    if barrier:
        wait_at_barrier(barrier)
    try:
        flow.resume(answer)
    except Exception as exc:
        return {"loaded": True, "resumed": False, "refused": f"{type(exc).__name__}: {exc}".replace(flow_id, "<flow>"),
                "oracle": orc.counter.snapshot()}
    return {"loaded": True, "resumed": True, "counter": flow.state.counter, "answers": list(flow.state.answers),
            "oracle": orc.counter.snapshot()}
