"""Model-based stateful test of the real saver: Hypothesis drives real operations on a
real LangGraph graph through ``remit_ref.wrap(...)`` on a real store, and after every
step checks what it observed against the reference model (``probes.studies.remit.model``,
the explicit-state transcription of tla/ResumePlane.tla, bounds N=3, IP=2).

The graph is the contract's resume plane: ``t1 -> gate -> t3``; ``gate`` calls
``interrupt()`` and its outcome is ``f(v) = 10 + v``; every task's effect goes through
REMIT's ``EffectLedger.once`` and is counted when it really fires (the oracle).
Rules (each on a thread of its own model state): start to the interrupt; resume with
an answer (thread-only: a RETRY); resume a fork at the interrupt checkpoint (addressed:
a FORK); stray resume on a finished thread; k concurrent resumes (threads, each with
its own saver and connection, meeting at a barrier after their checkpoint read);
resume over a dead owner's claim; crash at a named point (an exception raised inside
``t3`` before its effect: the in-process stand-in for the SIGKILL probes of the
campaign) and recovery with ``invoke(None)``; a tampered
write (``update_state`` with a value outside the schema); inspection
(``get_state``, history, ``list``).

Each step names the model action(s) it performs; the step is legal only if the model
has that successor in the current state, the model's invariants (the six properties)
hold in the new state, and every observation equals the model's: effect counts per
task, whether an interrupt is pending, the outcome a resume returned, and that
losers of a race raised ``ConsumeConflict``. Coverage is reported as model actions
taken and decision cases of ``remit_ref.core`` reached (each function's result kinds,
recorded while the real saver ran).

With the fork view (``fork_intent=False``), the gate (``consume_gate=False``) or the
validator (``validator=False``) disabled, the same machine fails: see ``run(...,
options=...)`` and the tests.
"""

from __future__ import annotations

import contextlib
import operator
import sqlite3
import threading
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Iterator, TypedDict

from probes.studies.remit import model

B = model.Bounds(N=3, IP=2, V=(0, 1, 2), max_resumes=10, max_crashes=10, max_strays=10)
GATE_ON = {"consume_gate": True}


class Crash(Exception):
    """The injected crash of a step (raised inside a task)."""


class S(TypedDict, total=False):
    log: Annotated[list[int], operator.add]
    outcome: int


# ---- coverage of the decision core --------------------------------------------------------------


@contextlib.contextmanager
def recording_core(hits: Counter) -> Iterator[None]:
    """Record each core decision's result kind while the real saver and ledger run."""
    from remit_ref import core

    originals = {n: getattr(core, n) for n in ("admit_effect", "resume_intent", "gate_decision", "fork_view",
                                                  "claim_targets", "first_invalid")}

    def admit(recorded: Any) -> Any:
        out = originals["admit_effect"](recorded)
        hits[f"admit_effect:{out.value}"] += 1
        return out

    def intent(addressed: bool, flag: Any, fork_intent: bool) -> Any:
        out = originals["resume_intent"](addressed, flag, fork_intent)
        hits[f"resume_intent:{out.value}:{'flag' if flag else ('addressed' if addressed else 'thread')}"] += 1
        return out

    def gate(inserted: bool, alive: Any, expired: bool, answered: bool) -> Any:
        out = originals["gate_decision"](inserted, alive, expired, answered)
        hits[f"gate_decision:{out.value}"] += 1
        return out

    def view(writes: Any, intent_: Any) -> Any:
        out = originals["fork_view"](writes, intent_)
        hits[f"fork_view:{intent_.value}:{'dropped' if len(out) < len(list(writes)) else 'kept'}"] += 1
        return out

    def targets(ids: Any, answered: Any, unanswered: Any) -> Any:
        out = originals["claim_targets"](ids, answered, unanswered)
        hits[f"claim_targets:{'map' if answered is not None else 'bare'}:{len(out)}"] += 1
        return out

    def invalid(values: Any, check: Any) -> Any:
        out = originals["first_invalid"](values, check)
        hits[f"first_invalid:{'found' if out else 'none'}"] += 1
        return out

    repl = {"admit_effect": admit, "resume_intent": intent, "gate_decision": gate, "fork_view": view,
            "claim_targets": targets, "first_invalid": invalid}
    for n, f in repl.items():
        setattr(core, n, f)
    try:
        yield
    finally:
        for n, f in originals.items():
            setattr(core, n, f)


# ---- the system under test ------------------------------------------------------------------------


class World:
    """One store, its ledger, the graph, and the oracle's counters; savers opened per use."""

    def __init__(self, backend: str, location: str, workdir: Path, options: dict[str, Any]) -> None:
        from remit_ref import EffectLedger

        self.backend, self.location, self.options = backend, location, options
        self.workdir = Path(workdir)
        self.fired: Counter[tuple[str, str]] = Counter()      # (thread, task) -> real effect firings
        self.crash_at: dict[str, str] = {}                     # thread -> named crash point
        self.lock = threading.Lock()
        self._memory: Any = None
        self._closers: list[Any] = []
        if backend == "memory":
            from langgraph.checkpoint.memory import InMemorySaver

            self._memory = InMemorySaver()
            self.ledger = EffectLedger(None)
        else:
            self.ledger = EffectLedger(location)
        self.saver = self.open_saver()
        self.app = self.graph(self.saver)

    def open_saver(self, barrier: Any = None) -> Any:
        """A stock saver on the store (a connection of its own), wrapped by REMIT."""
        from remit_ref import wrap

        if self.backend == "memory":
            base: Any = self._memory
        elif self.backend == "sqlite":
            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(self.location, check_same_thread=False, timeout=60)
            self._closers.append(conn)
            base = SqliteSaver(conn)
        else:
            import psycopg
            from psycopg.rows import dict_row

            from langgraph.checkpoint.postgres import PostgresSaver

            conn = psycopg.connect(self.location, autocommit=True, prepare_threshold=0, row_factory=dict_row)
            self._closers.append(conn)
            base = PostgresSaver(conn)
            base.setup()
        if barrier is not None:
            base = _BarrierReads(base, barrier)
        return wrap(base, **self.options)

    def graph(self, saver: Any) -> Any:
        from langgraph.config import get_config
        from langgraph.graph import END, START, StateGraph
        from langgraph.types import interrupt

        world = self

        def effect(task: str) -> None:
            thread = get_config()["configurable"]["thread_id"]

            def fire() -> str:
                with world.lock:
                    world.fired[(thread, task)] += 1
                return task
            world.ledger.once(thread, task, "e", fire)

        def t1(s: S) -> dict[str, Any]:
            effect("t1")
            return {"log": [1]}

        def gate(s: S) -> dict[str, Any]:
            v = interrupt("approve?")
            effect("gate")
            return {"log": [2], "outcome": B.f(v)}

        def t3(s: S) -> dict[str, Any]:
            thread = get_config()["configurable"]["thread_id"]
            point = world.crash_at.pop(thread, None)
            if point == "t3.before_effect":
                raise Crash(point)
            effect("t3")
            return {"log": [3]}

        g = StateGraph(S)
        g.add_node("t1", t1)
        g.add_node("gate", gate)
        g.add_node("t3", t3)
        g.add_edge(START, "t1")
        g.add_edge("t1", "gate")
        g.add_edge("gate", "t3")
        g.add_edge("t3", END)
        return g.compile(checkpointer=saver)

    def eff(self, thread: str) -> tuple[int, ...]:
        return tuple(self.fired[(thread, t)] for t in ("t1", "gate", "t3"))

    def close(self) -> None:
        for c in self._closers:
            with contextlib.suppress(Exception):
                c.close()
        self.ledger.close()


def _barrier_base() -> type:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    class BarrierReads(BaseCheckpointSaver):
        """Under REMIT: the execution loop's first read waits at a barrier, so every racer has read
        the pending interrupt before any of them claims it (a deterministic race, not a sleep)."""

        def __init__(self, inner: Any, barrier: Any) -> None:
            super().__init__(serde=inner.serde)
            self.inner, self.barrier, self.waited = inner, barrier, False

        def __getattr__(self, name: str) -> Any:
            if name == "inner":
                raise AttributeError(name)
            return getattr(self.inner, name)

        def get_tuple(self, config: Any) -> Any:
            tup = self.inner.get_tuple(config)
            if not self.waited and "__pregel_runtime" in (config.get("configurable") or {}):
                self.waited = True
                self.barrier.wait(timeout=60)
            return tup

        def list(self, *a: Any, **k: Any) -> Any:
            return self.inner.list(*a, **k)

        def put(self, *a: Any, **k: Any) -> Any:
            return self.inner.put(*a, **k)

        def put_writes(self, *a: Any, **k: Any) -> Any:
            return self.inner.put_writes(*a, **k)

        def get_next_version(self, current: Any, channel: Any) -> Any:
            return self.inner.get_next_version(current, channel)

    return BarrierReads


def _BarrierReads(inner: Any, barrier: Any) -> Any:  # noqa: N802 - a class built on first use
    return _barrier_base()(inner, barrier)


# ---- the machine ---------------------------------------------------------------------------------------


def machine(world_factory: Any, stats: dict[str, Any]) -> type:
    from hypothesis import strategies as st
    from hypothesis.stateful import Bundle, RuleBasedStateMachine, precondition, rule
    from langgraph.types import Command

    from remit_ref import ConsumeConflict, InvalidCheckpoint, RemitError
    from remit_ref.claims import HOST, Owner

    class ResumePlane(RuleBasedStateMachine):
        threads = Bundle("threads")

        def __init__(self) -> None:
            super().__init__()
            self.w = world_factory()
            stats["examples"] += 1
            self.model: dict[str, model.St] = {}
            self.interrupt_cp: dict[str, str] = {}
            self.outcome: dict[str, int | None] = {}
            self.n = 0

        def teardown(self) -> None:
            self.w.close()

        # -- helpers -------------------------------------------------------------------------------
        def cfg(self, t: str, checkpoint_id: str | None = None) -> dict[str, Any]:
            conf: dict[str, Any] = {"thread_id": t}
            if checkpoint_id:
                conf["checkpoint_id"] = checkpoint_id
            return {"configurable": conf}

        def act(self, t: str, *labels: str) -> None:
            """Advance the model by ``labels``; each must be a successor the model allows."""
            s = self.model[t]
            for label in labels:
                succ = dict(model.successors(s, B, model.REFERENCE))
                assert label in succ, f"model does not allow {label} in {s} (allowed: {sorted(succ)})"
                s = succ[label]
                stats["actions"][label.split("(")[0]] = stats["actions"].get(label.split("(")[0], 0) + 1
                bad = model.check_invariants(s, B)
                assert not bad, f"model invariants {bad} violated after {label}"
            self.model[t] = s

        def observe(self, t: str) -> None:
            """The real system equals the model: effects per task, pending interrupt, progress."""
            s = self.model[t]
            got = self.w.eff(t)
            assert got == s.eff, f"EO/CO: effects fired {got}, the model allows {s.eff} (thread {t})"
            state = self.w.app.get_state(self.cfg(t))
            assert bool(state.interrupts) == s.pending, f"pending interrupt {bool(state.interrupts)} != model {s.pending}"
            done = s.nxt > B.N
            assert (state.next == ()) == done, f"next={state.next}, model done={done}"
            stats["steps"] += 1

        def pending(self, t: str) -> bool:
            return self.model[t].pending

        def done(self, t: str) -> bool:
            return self.model[t].nxt > B.N

        def stuck(self, t: str) -> bool:  # crashed in t3: not pending, not done
            s = self.model[t]
            return not s.pending and s.consumed is not None and s.nxt <= B.N

        # -- rules -----------------------------------------------------------------------------------
        @rule(target=threads)
        def start(self) -> str:
            self.n += 1
            t = f"x{stats['examples']}-{self.n}"
            self.model[t] = model.init(B)
            self.w.app.invoke({"log": []}, self.cfg(t))
            self.interrupt_cp[t] = self.w.app.get_state(self.cfg(t)).config["configurable"]["checkpoint_id"]
            self.act(t, "Execute(1)", "Interrupt")
            self.outcome[t] = None
            self.observe(t)
            return t

        @rule(t=threads, v=st.sampled_from(B.V), crash=st.sampled_from([None, "t3.before_effect"]))
        def resume(self, t: str, v: int, crash: str | None) -> None:
            if self.stuck(t):
                return
            if crash and self.pending(t):
                self.w.crash_at[t] = crash
            was_pending = self.pending(t)
            try:
                out = self.w.app.invoke(Command(resume=v), self.cfg(t))
                err = None
            except Crash as exc:
                out, err = None, str(exc)
            self.w.crash_at.pop(t, None)
            if was_pending:
                self.act(t, f"Consume({v})")
                if err is None:
                    self.act(t, "Execute(3)")
                    assert out["outcome"] == B.f(v), f"RETRY resume {v} returned {out}"
                    self.outcome[t] = out["outcome"]
                else:
                    self.act(t, "CrashRecover")
                    self.outcome[t] = B.f(v)
            else:
                assert self.done(t)
                self.act(t, "Stray")
                assert out["outcome"] == self.outcome[t], f"CO: a stray resume changed the outcome: {out}"
            self.observe(t)

        @precondition(lambda self: any(self.stuck(t) for t in self.model))
        @rule(data=st.data())
        def recover(self, data: Any) -> None:
            t = data.draw(st.sampled_from(sorted(t for t in self.model if self.stuck(t))))
            out = self.w.app.invoke(None, self.cfg(t))
            self.act(t, "Execute(3)")
            assert out["outcome"] == self.outcome[t]
            self.observe(t)

        @rule(t=threads, v=st.sampled_from(B.V), flag=st.booleans())
        def fork(self, t: str, v: int, flag: bool) -> None:
            if not self.done(t):
                return
            conf = self.cfg(t, self.interrupt_cp[t])
            if flag:
                conf["configurable"]["remit_intent"] = "fork"
            try:
                out = self.w.app.invoke(Command(resume=v), conf)
            except RemitError as exc:
                raise AssertionError(f"FD: the fork with {v} was refused ({type(exc).__name__})") from exc
            self.act(t, f"Fork({v})")
            assert out["outcome"] == B.f(v), f"FD: a fork with {v} returned outcome {out.get('outcome')}, not f({v})"
            self.outcome[t] = out["outcome"]  # the fork is now the thread's latest branch
            self.observe(t)

        @rule(t=threads, k=st.integers(2, 4))
        def race(self, t: str, k: int) -> None:
            if not self.pending(t):
                return
            barrier = threading.Barrier(k)
            results: list[tuple[int, Any]] = []
            apps = [self.w.graph(self.w.open_saver(barrier)) for _ in range(k)]

            def go(i: int) -> None:
                try:
                    res: Any = apps[i].invoke(Command(resume=i % len(B.V)), self.cfg(t))
                except ConsumeConflict:
                    res = "conflict"
                except Exception as exc:  # noqa: BLE001 - reported as an observation
                    res = f"error:{type(exc).__name__}:{exc}"
                with self.w.lock:
                    results.append((i, res))

            workers = [threading.Thread(target=go, args=(i,)) for i in range(k)]
            for th in workers:
                th.start()
            for th in workers:
                th.join(timeout=120)
            winners = [(i, r) for i, r in results if isinstance(r, dict)]
            others = [r for _i, r in results if not isinstance(r, dict)]
            assert len(winners) == 1 and others == ["conflict"] * (k - 1), \
                f"CO: {k} racers on one interrupt: {sorted(results, key=lambda x: x[0])}"
            i, out = winners[0]
            v = i % len(B.V)
            self.act(t, f"Consume({v})", "Execute(3)")
            assert out["outcome"] == B.f(v)
            self.outcome[t] = out["outcome"]
            stats["races"] += 1
            self.observe(t)

        @rule(t=threads, v=st.sampled_from(B.V))
        def resume_over_dead_owner(self, t: str, v: int) -> None:
            if not self.pending(t) or not self.w.options.get("consume_gate"):
                return
            saver = self.w.saver
            state = self.w.app.get_state(self.cfg(t))
            cid = state.config["configurable"]["checkpoint_id"]
            for intr in state.interrupts:
                saver._claims.try_insert((t, "", cid, intr.id), Owner(f"{HOST}/999999999/x/dead", HOST, 999999999,
                                                                       "x"))
            out = self.w.app.invoke(Command(resume=v), self.cfg(t))
            self.act(t, f"Consume({v})", "Execute(3)")
            assert out["outcome"] == B.f(v), f"LV: the dead owner's claim was not taken over: {out}"
            self.outcome[t] = out["outcome"]
            self.observe(t)

        @rule(t=threads)
        def tamper(self, t: str) -> None:
            before = self.w.app.get_state(self.cfg(t)).values
            try:
                self.w.app.update_state(self.cfg(t), {"outcome": "not a number"})
                refused = False
            except InvalidCheckpoint:
                refused = True
            after = self.w.app.get_state(self.cfg(t)).values
            assert refused and after == before, f"CV: an invalid write was persisted ({after.get('outcome')!r})"
            stats["tampers"] += 1
            self.observe(t)

        @rule(t=threads)
        def inspect(self, t: str) -> None:
            claims_before = len(self.w.saver.claims(t))
            state = self.w.app.get_state(self.cfg(t))
            history = list(self.w.app.get_state_history(self.cfg(t)))
            listed = list(self.w.saver.list(self.cfg(t)))
            assert len(history) == len(listed) >= 1 and state.values.get("log", []) == sorted(state.values["log"])
            assert len(self.w.saver.claims(t)) == claims_before, "inspection took a claim"
            stats["inspections"] += 1
            self.observe(t)

    return ResumePlane


def run(backend: str, location: str, workdir: Path | str, examples: int = 10, steps: int = 12,
        options: dict[str, Any] | None = None, seed: int = 0) -> dict[str, Any]:
    """Run the machine; counts, coverage, and the first failure (``holds`` False) if any."""
    from hypothesis import HealthCheck, settings
    from hypothesis.stateful import run_state_machine_as_test

    options = dict(GATE_ON if options is None else options)
    workdir = Path(workdir)
    stats: dict[str, Any] = {"examples": 0, "steps": 0, "races": 0, "tampers": 0, "inspections": 0, "actions": {}}
    hits: Counter[str] = Counter()

    def world() -> World:
        loc = location
        if backend == "sqlite":
            loc = str(workdir / f"stateful-{stats['examples']}.sqlite")
            Path(loc).unlink(missing_ok=True)
        return World(backend, loc, workdir, options)

    Machine = machine(world, stats)
    cfg = settings(max_examples=examples, stateful_step_count=steps, derandomize=True, database=None,
                   deadline=None, suppress_health_check=list(HealthCheck), print_blob=False)
    failure = None
    with recording_core(hits):
        try:
            run_state_machine_as_test(Machine, settings=cfg)
        except AssertionError as exc:
            failure = str(exc).strip().splitlines()[0][:400]
    return {"backend": backend, "options": options, "examples": stats["examples"], "max_steps": steps,
            "steps": stats["steps"], "races": stats["races"], "tampers": stats["tampers"],
            "inspections": stats["inspections"], "model_actions": dict(sorted(stats["actions"].items())),
            "decision_cases": dict(sorted(hits.items())), "failure": failure, "holds": failure is None}
