"""remit_ref against the real LangGraph 1.2.9: fork intent, validity, the consume gate
(including a real SIGKILLed claim owner), the effect ledger and forwarding."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import sqlite3
from pathlib import Path
from typing import Any, TypedDict

import pytest

from probes.core.nemesis import run_child
from probes.core.oracle import Ledger


class S(TypedDict):
    value: int


def _fd_app(saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def node(s: S) -> dict[str, int]:
        answer = interrupt("q")
        return {"value": s["value"] + 1 if answer else s["value"]}

    g = StateGraph(S)
    g.add_node("n", node)
    g.add_edge(START, "n")
    g.add_edge("n", END)
    return g.compile(checkpointer=saver)


def _sqlite_saver(path: Path) -> Any:
    from langgraph.checkpoint.sqlite import SqliteSaver

    return SqliteSaver(sqlite3.connect(str(path), check_same_thread=False))


def _fork(saver: Any) -> tuple[Any, Any]:
    from langgraph.types import Command

    app = _fd_app(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    cid = app.get_state(cfg).config["configurable"]["checkpoint_id"]
    addressed = {"configurable": {"thread_id": "t", "checkpoint_id": cid}}
    first = app.invoke(Command(resume=True), addressed)
    second = app.invoke(Command(resume=False), addressed)
    return first["value"], second["value"]


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_fork_intent_repairs_6663(backend: str, tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import wrap

    make = (lambda: InMemorySaver()) if backend == "memory" else (lambda: _sqlite_saver(tmp_path / f"{id(object())}.db"))
    assert _fork(make()) == (2, 2)            # stock: the fork is served the first answer
    assert _fork(wrap(make())) == (2, 1)      # REMIT: the fork observes f(False) = 1
    assert _fork(wrap(make(), fork_intent=False)) == (2, 2)


def test_explicit_fork_flag_and_retry_flag(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from remit_ref import wrap

    app = _fd_app(wrap(InMemorySaver(), addressed_is_fork=False))
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    cid = app.get_state(cfg).config["configurable"]["checkpoint_id"]
    assert app.invoke(Command(resume=True), {"configurable": {"thread_id": "t", "checkpoint_id": cid}})["value"] == 2
    # addressed but not flagged: a retry, the first answer stands
    assert app.invoke(Command(resume=False), {"configurable": {"thread_id": "t", "checkpoint_id": cid}})["value"] == 2
    flagged = {"configurable": {"thread_id": "t", "checkpoint_id": cid, "remit_intent": "fork"}}
    assert app.invoke(Command(resume=False), flagged)["value"] == 1


def _trace(saver: Any) -> list[Any]:
    """What a thread-only interrupt/resume/stray leaves in the store, minus run-varying ids."""
    from langgraph.types import Command

    app = _fd_app(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    def strip(r: dict[str, Any]) -> dict[str, Any]:
        return {k: ([i.value for i in v] if k == "__interrupt__" else v) for k, v in r.items()}

    out: list[Any] = [strip(app.invoke({"value": 1}, cfg)), strip(app.invoke(Command(resume=True), cfg)),
                      strip(app.invoke(Command(resume=True), cfg))]
    for tup in saver.list(cfg):
        out.append((tup.metadata.get("source"), tup.metadata.get("step"), tup.checkpoint["channel_values"],
                    sorted(w[1] for w in tup.pending_writes or [])))
    return out


def test_thread_only_resumes_identical_to_stock(tmp_path: Path) -> None:
    from remit_ref import wrap

    stock = _trace(_sqlite_saver(tmp_path / "a.db"))
    remit = _trace(wrap(_sqlite_saver(tmp_path / "b.db"), consume_gate=True))
    assert stock == remit
    assert len(stock) > 4


def test_invalid_state_refused_before_persisting() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from pydantic import BaseModel

    from remit_ref import InvalidCheckpoint, wrap

    class P(BaseModel):
        items: list[str] = []

    def build(saver: Any) -> Any:
        g = StateGraph(P)
        g.add_node("bad", lambda s: {"items": s.items + [None]})
        g.add_edge(START, "bad")
        g.add_edge("bad", END)
        return g.compile(checkpointer=saver)

    cfg = {"configurable": {"thread_id": "c"}}
    stock = InMemorySaver()
    build(stock).invoke({"items": ["a"]}, cfg)   # stock: silently persisted
    assert any(None in (t.checkpoint["channel_values"].get("items") or []) for t in stock.list(cfg))

    base = InMemorySaver()
    app = build(wrap(base))
    with pytest.raises(InvalidCheckpoint, match="items"):
        app.invoke({"items": ["a"]}, cfg)
    persisted = [t.checkpoint["channel_values"].get("items") for t in base.list(cfg)]
    writes = [w for t in base.list(cfg) for w in (t.pending_writes or []) if w[1] == "items"]
    assert all(None not in (v or []) for v in persisted)
    assert all(None not in w[2] for w in writes)
    assert app.get_state(cfg).values == {"items": ["a"]}  # the thread is not wedged


def _race(backend_loc: Path, tmp: Path, k: int, remit: dict[str, Any] | None) -> tuple[list[str], dict[str, int]]:
    from probes.studies.remit.workloads import park_to_interrupt, racer

    ledger = str(tmp / f"effects-{remit is not None}.sqlite")
    park_to_interrupt("sqlite", str(backend_loc), ledger, remit)
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(k), ctx.Queue()
    procs = [ctx.Process(target=racer, args=("sqlite", str(backend_loc), ledger, remit, f"racer-{i}", barrier, queue))
             for i in range(k)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    return sorted(r["outcome"] for r in results), Ledger(ledger).counts()


def test_consume_gate_cross_process_sqlite(tmp_path: Path) -> None:
    outcomes, counts = _race(tmp_path / "stock.db", tmp_path, 3, None)
    assert counts.get("gate", 0) >= 1 and "conflict" not in outcomes  # stock: no gate, nobody refused
    outcomes, counts = _race(tmp_path / "gate.db", tmp_path, 3, {"consume_gate": True})
    assert counts == {"gate": 1}
    assert outcomes == ["completed", "conflict", "conflict"]


def test_dead_owner_after_its_answer_committed_is_finished_by_invoke_none(tmp_path: Path) -> None:
    """A resume claims the interrupt (its answer committed with the claim) and is SIGKILLed before its
    effect: a later resume from a fresh process is refused -- the consume is committed, a takeover would
    consume it twice -- and invoke(None), which consumes nothing, finishes the run with that answer, once."""
    db, ledger, remit = str(tmp_path / "k.db"), str(tmp_path / "fx.sqlite"), {"consume_gate": True}
    base = {"backend": "sqlite", "location": db, "ledger": ledger, "remit": remit}
    run_child("probes.studies.remit.workloads:park_to_interrupt", base).require_ok()
    victim = run_child("probes.studies.remit.workloads:resume_once", {**base, "incarnation": "victim"}, park_at="remit.gate")
    victim.require_killed()
    seen = run_child("probes.studies.remit.workloads:read_state",
                     {"backend": "sqlite", "location": db, "remit": remit}).require_ok()
    assert seen["claims"] == 1 and seen["pending_interrupts"] == 1   # reads neither take nor block claims
    again = run_child("probes.studies.remit.workloads:resume_once", {**base, "incarnation": "again"}).require_ok()
    assert again["outcome"] == "conflict" and again["claims_alive"] == ["False"]
    rec = run_child("probes.studies.remit.workloads:resume_as",
                    {**base, "incarnation": "recover", "command": False}).require_ok()
    assert (rec["outcome"], rec["next"]) == ("answer:True", [])
    assert Ledger(ledger).counts() == {"gate": 1}


def test_dead_owner_before_its_answer_was_durable_is_taken_over(tmp_path: Path) -> None:
    """With durability="exit" the claim commits alone (no resume write to carry) and the answer would be
    written only at the run's end: the owner SIGKILLed in the node leaves a claim with no answer, and the
    next resume from a fresh process takes it over and completes, firing once (LV)."""
    db, ledger, remit = str(tmp_path / "k.db"), str(tmp_path / "fx.sqlite"), {"consume_gate": True}
    base = {"backend": "sqlite", "location": db, "ledger": ledger, "remit": remit}
    run_child("probes.studies.remit.workloads:park_to_interrupt", base).require_ok()
    run_child("probes.studies.remit.workloads:resume_as", {**base, "incarnation": "victim", "durability": "exit"},
              park_at="remit.gate").require_killed()
    assert run_child("probes.studies.remit.workloads:read_state",
                     {"backend": "sqlite", "location": db, "remit": remit}).require_ok()["claims"] == 1
    rec = run_child("probes.studies.remit.workloads:resume_as", {**base, "incarnation": "recover"}).require_ok()
    assert (rec["outcome"], rec["next"]) == ("answer:True", [])
    assert Ledger(ledger).counts() == {"gate": 1}


def _answer_then_resume_again(backend: str, location: str, ledger: str) -> list[tuple[str, Any, Any]]:
    """The kit's intent protocol, every operation a fresh process: answer "a"; then, addressed to the pause,
    a declared RETRY of "a", a declared RETRY of "b", a resume with no flag, thread-only and addressed (the
    address makes it a FORK), a thread-only one, and a declared FORK with "b"."""
    base = {"backend": backend, "location": location, "ledger": ledger, "remit": {"consume_gate": True}}
    cid = run_child("probes.studies.remit.workloads:park_to_interrupt", base).require_ok()["checkpoint_id"]
    out = []
    for name, shape in (("answer", {"answer": "a"}),
                        ("retry", {"answer": "a", "checkpoint_id": cid, "intent": "retry"}),
                        ("retry-other", {"answer": "b", "checkpoint_id": cid, "intent": "retry"}),
                        ("thread-only", {"answer": "a"}),
                        ("fork", {"answer": "b", "checkpoint_id": cid, "intent": "fork"})):
        res = run_child("probes.studies.remit.workloads:resume_as", {**base, "incarnation": name, **shape}).require_ok()
        out.append((name, res["outcome"], Ledger(ledger).counts().get("gate", 0)))
    return out


_EXPECTED = [("answer", "answer:'a'", 1),
             ("retry", "conflict", 1),            # FI: a declared RETRY neither fires the gate again ...
             ("retry-other", "conflict", 1),      # ... nor changes the outcome
             ("thread-only", "answer:'a'", 1),    # a stray on the finished thread: inert
             ("fork", "answer:'b'", 2)]           # FD: a declared FORK is served its own answer (forks are not gated)


def test_declared_retry_from_a_fresh_process_is_refused_cross_process_sqlite(tmp_path: Path) -> None:
    assert _answer_then_resume_again("sqlite", str(tmp_path / "i.db"), str(tmp_path / "fx.sqlite")) == _EXPECTED


def test_declared_retry_from_a_fresh_process_is_refused_cross_process_postgres(tmp_path: Path, pg: Any) -> None:
    assert _answer_then_resume_again("postgres", pg.fresh_dsn("retry_fresh"), str(tmp_path / "fx.sqlite")) == _EXPECTED


def test_release_stale_claims_after_sigkill_keeps_an_answered_claim(tmp_path: Path) -> None:
    """The victim is killed after its claim went in with the answer (one transaction): the consume
    happened, so releasing stale claims keeps that claim, and a later resume of the same interrupt
    from another process is refused instead of firing the gated effect a second time."""
    db, ledger, remit = str(tmp_path / "k.db"), str(tmp_path / "fx.sqlite"), {"consume_gate": True}
    base = {"backend": "sqlite", "location": db, "ledger": ledger, "remit": remit}
    run_child("probes.studies.remit.workloads:park_to_interrupt", base).require_ok()
    run_child("probes.studies.remit.workloads:resume_once", {**base, "incarnation": "victim"},
              park_at="remit.gate").require_killed()
    out = run_child("probes.studies.remit.workloads:release_stale",
                    {"backend": "sqlite", "location": db, "remit": remit}).require_ok()
    assert out == {"before_alive": ["False"], "released": 0, "after": 1}
    again = run_child("probes.studies.remit.workloads:resume_once", {**base, "incarnation": "late"}).require_ok()
    assert again["outcome"] == "conflict" and Ledger(Path(ledger)).counts().get("gate", 0) == 0


def test_live_owner_blocks_and_state_reads_do_not_claim() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from remit_ref import ConsumeConflict, wrap
    from remit_ref.claims import Owner

    base = InMemorySaver()
    saver = wrap(base, consume_gate=True)
    app = _fd_app(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    app.get_state(cfg)
    list(app.get_state_history(cfg))
    assert saver.claims() == []
    tup = base.get_tuple(cfg)
    iid = next(w[2][0].id for w in tup.pending_writes if w[1] == "__interrupt__")
    # a live owner (this very process, another resume call) already holds it
    saver._claims.try_insert(("t", "", tup.config["configurable"]["checkpoint_id"], iid), Owner.new())
    with pytest.raises(ConsumeConflict):
        app.invoke(Command(resume=True), cfg)
    assert app.get_state(cfg).next == ("n",)   # no node ran
    assert saver.release_claims("t") == 1
    assert app.invoke(Command(resume=True), cfg)["value"] == 2


def test_effect_ledger_once_in_doubt_and_order(tmp_path: Path) -> None:
    from remit_ref import EffectInDoubt, EffectLedger

    for target in (None, str(tmp_path / "l.db")):
        led = EffectLedger(target)
        fired: list[str] = []
        assert led.once("t", "s1", "charge", lambda: fired.append("s1") or 7) == 7
        assert led.once("t", "s1", "charge", lambda: fired.append("again") or 8) == 7
        assert led.once("t", "s2", "mail", lambda: fired.append("s2") or "ok") == "ok"
        assert fired == ["s1", "s2"]
        assert [e["seq"] for e in led.entries("t")] == [1, 2]
        with pytest.raises(RuntimeError):
            led.once("t", "s3", "x", lambda: (_ for _ in ()).throw(RuntimeError("boom")))
        assert led.status("t", "s3", "x") is None      # a failed effect is not recorded
        led._reserve(("t", "s4", "y"))                    # the process died between start and record
        with pytest.raises(EffectInDoubt, match="resolve"):
            led.once("t", "s4", "y", lambda: fired.append("twice"))
        led.resolve("t", "s4", "y", fired=True, result=1)
        assert led.once("t", "s4", "y", lambda: fired.append("twice")) == 1
        assert "twice" not in fired


def test_forwarding_task_path_async_and_errors(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from remit_ref import wrap

    seen: list[str] = []

    class Spy(InMemorySaver):
        def put_writes(self, config, writes, task_id, task_path=""):  # type: ignore[no-untyped-def]
            seen.append(task_path)
            return super().put_writes(config, writes, task_id, task_path)

    saver = wrap(Spy())
    app = _fd_app(saver)
    cfg = {"configurable": {"thread_id": "a"}}

    async def run() -> Any:
        await app.ainvoke({"value": 1}, cfg)
        return await app.ainvoke(Command(resume=True), cfg)

    assert asyncio.run(run())["value"] == 2
    assert any(p.startswith("~__pregel_pull") for p in seen)
    with pytest.raises(TypeError, match="BaseCheckpointSaver"):
        wrap(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="already wrapped"):
        wrap(saver)
    with pytest.raises(ValueError, match="claim_ttl"):
        wrap(InMemorySaver(), claim_ttl=0)
