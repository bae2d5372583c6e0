"""Process-side workloads for the REMIT probes: apps, racers, park-kill victims.

Everything here runs inside a probe process or a fresh interpreter (``run_child`` /
multiprocessing spawn) and returns JSON. Effects go through the harness oracle
(counter + crash-surviving SQLite ledger); with ``use_ledger`` they are wrapped by
REMIT's ``EffectLedger.once`` so that a re-executed task does not fire again.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from typing import Any, Iterator

from probes.core import oracle
from probes.core.nemesis import FailOnce, park

THREAD = "t"


def cfg(thread: str = THREAD, checkpoint_id: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


@contextlib.contextmanager
def open_saver(backend: str, location: str, remit: dict[str, Any] | None) -> Iterator[Any]:
    """A stock saver for the store, wrapped by REMIT when ``remit`` (its options) is not None."""
    if backend == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        base: Any = InMemorySaver()
        closer = None
    elif backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        closer = sqlite3.connect(location, check_same_thread=False, timeout=60)
        base = SqliteSaver(closer)
        base.setup()
    elif backend == "postgres":
        import psycopg
        from psycopg.rows import dict_row

        from langgraph.checkpoint.postgres import PostgresSaver

        closer = psycopg.connect(location, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        base = PostgresSaver(closer)
        base.setup()
    else:
        raise ValueError(f"unknown backend {backend!r}")
    try:
        if remit is None:
            yield base
        else:
            from remit_ref import wrap

            yield wrap(base, **remit)
    finally:
        if closer is not None:
            closer.close()


def gated_app(saver: Any, effect: str = "gate") -> Any:
    """START -> gate -> END: ``interrupt()``, a park point, then the gated effect, once."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    class State(TypedDict, total=False):
        answer: Any

    def gate(state: State) -> dict[str, Any]:
        answer = interrupt("approve?")
        park("remit.gate")  # kill point: the resume has claimed the interrupt, the effect has not fired
        oracle.fire(effect, detail=f"pid={os.getpid()}")
        return {"answer": answer}

    g = StateGraph(State)
    g.add_node("gate", gate)
    g.add_edge(START, "gate")
    g.add_edge("gate", END)
    return g.compile(checkpointer=saver)


def crash_app(saver: Any, fail_dir: str | None, ledger: Any | None) -> Any:
    """Functional ``s1 -> s2`` (CAMPAIGNS.md crash path); effects through the REMIT ledger if given."""
    from langgraph.func import entrypoint, task

    def effect(name: str) -> str:
        if ledger is None:
            oracle.fire(name)
            return name
        return ledger.once(THREAD, name, "effect", lambda: (oracle.fire(name), name)[1])

    @task
    def s1(x: int) -> str:
        effect("s1")
        park("remit.s1.after_effect")
        return f"a{x}"

    @task
    def s2(a: str) -> str:
        park("remit.s2.before_effect")
        if fail_dir:
            FailOnce(fail_dir).maybe_fail("s2")
        effect("s2")
        park("remit.s2.after_effect")  # the insert-to-persist window: effect recorded, task write not durable
        return a + "b"

    @entrypoint(checkpointer=saver)
    def workflow(x: int) -> dict[str, Any]:
        a = s1(x).result()
        return {"out": s2(a).result()}

    return workflow


# ---- child-process entry points (JSON in, JSON out) -----------------------------------------


def park_to_interrupt(backend: str, location: str, ledger: str, remit: dict[str, Any] | None) -> dict[str, Any]:
    oracle.install(ledger, "park")
    with open_saver(backend, location, remit) as saver:
        app = gated_app(saver)
        app.invoke({}, cfg())
        state = app.get_state(cfg())
        return {"interrupts": len(state.interrupts), "counter": oracle.current().counter.snapshot(),
                "checkpoint_id": state.config["configurable"]["checkpoint_id"]}


def resume_once(backend: str, location: str, ledger: str, remit: dict[str, Any] | None,
                incarnation: str) -> dict[str, Any]:
    """Send Command(resume=True) to the parked thread; report the outcome class."""
    from langgraph.types import Command

    from remit_ref import ConsumeConflict

    oracle.install(ledger, incarnation)
    with open_saver(backend, location, remit) as saver:
        app = gated_app(saver)
        try:
            out = app.invoke(Command(resume=True), cfg())
            outcome = "completed" if out.get("answer") is True else f"other:{out!r}"
        except ConsumeConflict:
            outcome = "conflict"
        claims = saver.claims() if hasattr(saver, "claims") else []
        return {"outcome": outcome, "counter": oracle.current().counter.snapshot(),
                "claims_alive": sorted(str(c["owner_alive"]) for c in claims)}


def resume_as(backend: str, location: str, ledger: str, remit: dict[str, Any] | None, incarnation: str,
              answer: Any = True, checkpoint_id: str | None = None, intent: str | None = None,
              command: bool = True, durability: str | None = None) -> dict[str, Any]:
    """One resume of the parked thread from this fresh process, shaped as the caller says: ``answer``
    in ``Command(resume=...)`` (or ``invoke(None)`` when ``command`` is False, the recovery that consumes
    nothing new), addressed to ``checkpoint_id`` or thread-only, with ``remit_intent`` = ``intent`` or
    none. Why a separate entry point: the kit runs every operation in a fresh process, so a claim's
    owner has exited by the time a later resume arrives -- that is the case the gate must get right."""
    from langgraph.types import Command

    from remit_ref import ConsumeConflict

    oracle.install(ledger, incarnation)
    config = cfg(checkpoint_id=checkpoint_id)
    if intent is not None:
        config["configurable"]["remit_intent"] = intent
    kwargs = {"durability": durability} if durability else {}
    with open_saver(backend, location, remit) as saver:
        app = gated_app(saver)
        try:
            out = app.invoke(Command(resume=answer) if command else None, config, **kwargs)
            outcome = (f"answer:{out['answer']!r}" if "answer" in out
                       else ("paused" if "__interrupt__" in out else f"other:{out!r}"))
        except ConsumeConflict:
            outcome = "conflict"
        state = app.get_state(cfg())
        return {"outcome": outcome, "counter": oracle.current().counter.snapshot(),
                "answer": state.values.get("answer"), "next": list(state.next)}


def read_state(backend: str, location: str, remit: dict[str, Any] | None) -> dict[str, Any]:
    """get_state, history and list on the thread; returns what a reader sees and the claims on record."""
    with open_saver(backend, location, remit) as saver:
        app = gated_app(saver)
        state = app.get_state(cfg())
        history = list(app.get_state_history(cfg()))
        listed = list(saver.list(cfg()))
        return {"pending_interrupts": len(state.interrupts), "history": len(history), "listed": len(listed),
                "claims": len(saver.claims()) if hasattr(saver, "claims") else 0,
                "stale_released": 0}


def release_stale(backend: str, location: str, remit: dict[str, Any]) -> dict[str, Any]:
    with open_saver(backend, location, remit) as saver:
        before = saver.claims()
        n = saver.release_stale_claims()
        return {"before_alive": sorted(str(c["owner_alive"]) for c in before), "released": n,
                "after": len(saver.claims())}


def racer(backend: str, location: str, ledger: str, remit: dict[str, Any] | None, incarnation: str,
          barrier: Any, queue: Any, answer: Any = True) -> None:
    """One racer: build the app, wait at the barrier, resume with ``answer``; report through the queue.

    Outcomes: ``completed`` (the run finished with this racer's own answer: it consumed
    the interrupt), ``conflict`` (ConsumeConflict), ``served:<answer>`` (the run
    returned another racer's answer: this resume arrived after the thread had finished,
    a stray re-delivery), or ``other:...``.
    """
    from langgraph.types import Command

    from remit_ref import ConsumeConflict

    try:
        oracle.install(ledger, incarnation)
        with open_saver(backend, location, remit) as saver:
            app = gated_app(saver)
            barrier.wait(timeout=120)
            try:
                out = app.invoke(Command(resume=answer), cfg())
                got = out.get("answer")
                outcome = "completed" if got == answer else (f"served:{got!r}" if "answer" in out else f"other:{out!r}")
            except ConsumeConflict:
                outcome = "conflict"
            queue.put({"incarnation": incarnation, "outcome": outcome,
                       "counter": oracle.current().counter.snapshot()})
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as a harness error
        queue.put({"incarnation": incarnation, "outcome": "error", "error": f"{type(exc).__name__}: {exc}"[:400],
                   "counter": {}})


def crash_run(backend: str, location: str, ledger: str, remit: dict[str, Any] | None, use_ledger: bool,
              fail_dir: str | None, incarnation: str, mode: str) -> dict[str, Any]:
    """Run (``mode="start"``) or recover (``"none"``: invoke(None); ``"resubmit"``: the input again)."""
    from remit_ref import EffectLedger

    oracle.install(ledger, incarnation)
    with open_saver(backend, location, remit) as saver:
        effects = EffectLedger(location) if use_ledger else None  # same SQLite file / Postgres database
        app = crash_app(saver, fail_dir, effects)
        error = None
        try:
            out = app.invoke(1 if mode in ("start", "resubmit") else None, cfg())
        except Exception as exc:  # noqa: BLE001 - an injected crash is an observation
            out, error = None, type(exc).__name__
        order = effects.entries(THREAD) if effects else []
        if effects:
            effects.close()
        return {"out": out, "error": error, "counter": oracle.current().counter.snapshot(),
                "ledger_order": [e["task"] for e in order]}


def racer_loop(backend: str, remit: dict[str, Any] | None, incarnation: str, barrier: Any, inbox: Any,
               outbox: Any) -> None:
    """A long-lived racer: for each ``(location, ledger, answer)`` from ``inbox`` (until ``None``), one :func:`racer`.

    Lets a test run many first-use races on fresh databases without paying an
    interpreter start per racer and race.
    """
    while True:
        job = inbox.get()
        if job is None:
            return
        location, ledger, answer = job
        racer(backend, location, ledger, remit, incarnation, barrier, outbox, answer)
