"""Fast, targeted tests of remit_ref's parts on real stores (SQLite files, embedded PostgreSQL,
InMemorySaver): the claim stores, the ledger, the saver's options and forwarding, the
frame inspection helpers. They are the first tests of the mutation run
(``mutation/remit_ref.toml``), so each asserts an observable behaviour a mutant breaks."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from remit_ref import claims as cl
from remit_ref import core


def _sqlite_base(path: Path) -> Any:
    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(sqlite3.connect(str(path), check_same_thread=False))
    saver.setup()
    return saver


def _ckpt_file(path: Path) -> str:
    """A SQLite checkpoint file with SqliteSaver's tables (where claims live), closed again."""
    _sqlite_base(path).conn.close()
    return str(path)


def _ckpt_dsn(pg: Any, name: str) -> str:
    """A fresh PostgreSQL database with PostgresSaver's tables (where claims live)."""
    dsn = pg.fresh_dsn(name)
    _pg_base(dsn).conn.close()
    return dsn


def _pg_base(dsn: str) -> Any:
    import psycopg
    from psycopg.rows import dict_row

    from langgraph.checkpoint.postgres import PostgresSaver

    saver = PostgresSaver(psycopg.connect(dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row))
    saver.setup()
    return saver


# ---- core: errors on bad input -----------------------------------------------------------------------


def test_core_rejects_unknown_inputs() -> None:
    for status in ("weird", "aborted", "Done", ""):  # before and after "pending"/"done" in string order
        with pytest.raises(ValueError, match=f"unknown ledger status {status!r}"):
            core.admit_effect(status)
    with pytest.raises(ValueError, match="remit_intent must be 'fork' or 'retry', not 'maybe'"):
        core.resume_intent(False, "maybe", True)
    assert core.resume_intent(True, "retry", True) is core.Intent.RETRY
    assert core.resume_intent(False, "fork", True) is core.Intent.FORK
    assert core.resume_intent(True, "fork", False) is core.Intent.RETRY
    assert core.first_invalid({"b": 0, "a": 0, "c": 1}, lambda ch, v: None if v else f"{ch}!") == ("a", "a!")


# ---- process identity ------------------------------------------------------------------------------


def test_owner_identity_and_liveness() -> None:
    me = os.getpid()
    start = cl.process_start(me)
    assert start and start == cl.process_start(me) and start.isdigit() and int(start) > 0  # field 22, starttime
    assert cl.process_start(999_999_999) == ""
    owner = cl.Owner.new()
    assert (owner.host, owner.pid, owner.pstart) == (cl.HOST, me, start)
    assert owner.token.startswith(f"{cl.HOST}/{me}/{start}/") and len(owner.token.rsplit("/", 1)[1]) == 12
    assert cl.Owner.new().token != owner.token
    assert cl.owner_alive(cl.HOST, me, start) is True
    assert cl.owner_alive(cl.HOST, me, "") is True             # unknown start time: trust the pid
    assert cl.owner_alive(cl.HOST, me, start + "0") is False   # pid reused by another process
    assert cl.owner_alive(cl.HOST, 999_999_999, "1") is False
    assert cl.owner_alive("another-host", me, start) is None
    assert cl.owner_alive(cl.HOST, 1, "") is True              # alive, not ours (PermissionError or ok)


# ---- the claim stores, one contract ----------------------------------------------------------------------


def _stores(tmp_path: Path, pg: Any) -> dict[str, cl.ClaimStore]:
    return {"memory": cl.MemoryClaims(), "sqlite": cl.sqlite_claims(_ckpt_file(tmp_path / "c.sqlite")),
            "postgres": cl.postgres_claims(_ckpt_dsn(pg, "claims"))}


def test_claim_store_base_is_abstract() -> None:
    store = cl.ClaimStore()
    for call in (lambda: store.try_insert(("t", "", "c", "i"), cl.Owner.new()), lambda: store.read(("a",) * 4),
                 lambda: store.take_over(("a",) * 4, "o", cl.Owner.new()), lambda: store.all_rows(None),
                 lambda: store.delete(("a",) * 4)):
        with pytest.raises(NotImplementedError):
            call()


def test_sqlite_claim_commits_without_its_own_sync_and_restores_the_setting(tmp_path: Path) -> None:
    conn = sqlite3.connect(_ckpt_file(tmp_path / "s.sqlite"), check_same_thread=False)
    seen: list[int] = []
    store = cl.SqliteClaims(conn, threading.Lock())
    assert store._run(lambda cur: seen.append(cur.execute("PRAGMA synchronous").fetchone()[0])) is None
    assert seen == [1] and conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # NORMAL inside, FULL restored
    conn.execute("PRAGMA synchronous=OFF")
    assert store._run(lambda cur: cur.execute("PRAGMA synchronous").fetchone()[0]) == 0  # OFF is left alone
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 0
    conn.execute("PRAGMA synchronous=EXTRA")
    assert store.try_insert(("t", "", "c", "i"), cl.Owner.new())
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 3
    assert not conn.in_transaction  # committed: visible to every other connection
    other = sqlite3.connect(str(tmp_path / "s.sqlite"))
    assert other.execute("SELECT task_id, idx, channel, type FROM writes").fetchall() == [
        ("remit-claim:i", 0, cl.CLAIM_CHANNEL, "json")]


def test_sqlite_claims_wait_for_another_writer_and_give_up_when_told(tmp_path: Path) -> None:
    path = _ckpt_file(tmp_path / "w.sqlite")
    blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")
    impatient = cl.SqliteClaims(sqlite3.connect(path, timeout=0, check_same_thread=False), threading.Lock(), retries=2)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        impatient.try_insert(("t", "", "c", "1"), cl.Owner.new())
    timer = threading.Timer(1.0, lambda: blocker.execute("COMMIT"))  # outlasts a shrunken back-off
    timer.start()
    patient = cl.SqliteClaims(sqlite3.connect(path, timeout=0, check_same_thread=False), threading.Lock())
    assert patient.try_insert(("t", "", "c", "1"), cl.Owner.new()) is True
    timer.join()


def test_sqlite_other_errors_are_not_retried(tmp_path: Path) -> None:
    conn = sqlite3.connect(_ckpt_file(tmp_path / "e.sqlite"), check_same_thread=False)
    store = cl.SqliteClaims(conn, threading.Lock())
    calls = []

    def bad(cur: sqlite3.Cursor) -> None:
        calls.append(1)
        cur.execute("SELECT * FROM writes WHERE no_such_column = 1")
    with pytest.raises(sqlite3.OperationalError, match="no such column"):
        store._run(bad)
    assert calls == [1]


def test_claims_in_a_database_without_checkpoint_tables_say_to_run_setup(tmp_path: Path, pg: Any) -> None:
    """Claims live in the saver's writes table: before the saver's setup() there is none, and the
    store says so in one line instead of a raw 'no such table'."""
    for kind, store in (("sqlite", cl.sqlite_claims(str(tmp_path / "bare.sqlite"))),
                        ("postgres", cl.postgres_claims(pg.fresh_dsn("bare")))):
        with pytest.raises(RuntimeError, match=r"call the checkpointer's setup\(\) first"):
            store.try_insert(("t", "", "c", "i"), cl.Owner.new())
        with pytest.raises(RuntimeError, match="no LangGraph checkpoint tables"):
            store.all_rows(None)


def _empty_checkpoint() -> Any:
    from langgraph.checkpoint.base import empty_checkpoint

    return empty_checkpoint()


class St(TypedDict):
    value: int


def _app(saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def node(s: St) -> dict[str, int]:
        return {"value": s["value"] + (1 if interrupt("q") else 0)}

    g = StateGraph(St)
    g.add_node("n", node)
    g.add_edge(START, "n")
    g.add_edge("n", END)
    return g.compile(checkpointer=saver)


def test_wrap_options_are_checked() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import wrap

    for kw, err, msg in ((dict(consume_gate="no"), TypeError, "consume_gate must be True or False"),
                         (dict(fork_intent=1), TypeError, "fork_intent must be True or False"),
                         (dict(addressed_is_fork=None), TypeError, "addressed_is_fork must be True or False"),
                         (dict(claim_ttl="10"), TypeError, "claim_ttl must be a number"),
                         (dict(claim_ttl=True), TypeError, "claim_ttl must be a number"),
                         (dict(claim_ttl=0), ValueError, "positive"), (dict(claim_ttl=-1.5), ValueError, "positive"),
                         (dict(claims=object()), TypeError, "claims must be a remit_ref.claims.ClaimStore"),
                         (dict(validator=123), TypeError, "validator must be None, False"),
                         (dict(validator=int), TypeError, "validator=int is not a pydantic model")):
        with pytest.raises(err, match=msg):
            wrap(InMemorySaver(), **kw)
    from remit_ref import RemitSaver

    direct, wrapped = RemitSaver(InMemorySaver()), wrap(InMemorySaver())
    for name in ("fork_intent", "consume_gate", "addressed_is_fork", "claim_ttl", "_use_graph_schema", "_explicit"):
        assert getattr(direct, name) == getattr(wrapped, name), name  # one set of defaults, documented once
    assert (direct.fork_intent, direct.consume_gate, direct.addressed_is_fork, direct.claim_ttl) == (True, False, True,
                                                                                                   None)
    saver = wrap(InMemorySaver(), claim_ttl=5, claims=cl.MemoryClaims())
    assert saver.claim_ttl == 5 and isinstance(saver._claims, cl.MemoryClaims)
    assert wrap(InMemorySaver())._claims is None
    assert wrap(InMemorySaver(), claim_ttl=0.5).claim_ttl == 0.5


def test_forwarding_and_administration(tmp_path: Path) -> None:
    from langgraph.types import Command

    from remit_ref import wrap

    base = _sqlite_base(tmp_path / "fw.sqlite")
    saver = wrap(base, consume_gate=True)
    assert saver.conn is base.conn and saver.config_specs == base.config_specs
    with pytest.raises(AttributeError):
        saver.no_such_attribute  # noqa: B018
    app = _app(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    assert saver.get(cfg) == base.get(cfg)
    assert [t.config for t in saver.list(cfg)] == [t.config for t in base.list(cfg)]
    assert len(list(saver.list(cfg, limit=1))) == 1
    assert len(list(saver.list(None, filter={"step": 0}))) == len(list(base.list(None, filter={"step": 0}))) >= 1
    first = list(base.list(cfg))[-1].config
    assert list(saver.list(cfg, before=first)) == []
    assert saver.get_next_version(None, None).split(".")[0] == base.get_next_version(None, None).split(".")[0]
    assert saver.get_next_version(saver.get_next_version(None, None), None).startswith("0" * 31 + "2")
    # claims: the resume claims the interrupt; administration sees and releases it
    assert app.invoke(Command(resume=True), cfg)["value"] == 2
    rows = saver.claims("t")
    assert len(rows) == 1 and rows[0]["owner_alive"] is True and rows[0]["pid"] == os.getpid()
    assert rows[0]["owner"].count("/") == 2 and rows[0]["thread_id"] == "t" and rows[0]["checkpoint_ns"] == ""
    assert saver.claims("other") == [] and len(saver.claims()) == 1
    assert saver.release_stale_claims() == 0  # the owner (this process) is alive
    key = next(k for k, _r in saver._claims.all_rows("t"))
    saver._claims.delete(key)
    saver._claims.try_insert(key, cl.Owner("h/999999999/x/dead", cl.HOST, 999_999_999, "x"))
    saver._claims.try_insert(("u", "", "c", "i"), cl.Owner.new())
    # the dead owner's answer is durable: its claim records a consume and stays (a resume would run the node again)
    assert saver.release_stale_claims("u") == 0 and saver.release_stale_claims("t") == 0
    unanswered = ("t", "", key[2], "not-an-interrupt-of-this-checkpoint")
    saver._claims.try_insert(unanswered, cl.Owner("h/999999999/x/dead", cl.HOST, 999_999_999, "x"))
    assert saver.release_stale_claims("t") == 1 and [k for k, _r in saver._claims.all_rows("t")] == [key]
    assert saver.release_claims("t") == 1  # the operator's override deletes the answered claim too
    assert saver.release_claims("u") == 1 and saver.claims() == []
    saver.delete_thread("t")
    assert base.get_tuple(cfg) is None
    plain = wrap(_sqlite_base(tmp_path / "plain.sqlite"))
    assert plain.claims() == [] and plain.release_stale_claims() == 0 and plain.release_claims("t") == 0


def _paused_claim_key(base: Any, cfg: dict) -> tuple[tuple, str]:
    """The claim key of the thread's pending interrupt (thread, ns, checkpoint, interrupt id), and the id."""
    tup = base.get_tuple(cfg)
    iid = next(w[2][0].id for w in tup.pending_writes if w[1] == "__interrupt__")
    return (cfg["configurable"]["thread_id"], "", tup.config["configurable"]["checkpoint_id"], iid), iid


def test_gate_lease_and_conflict_owner(tmp_path: Path) -> None:
    from langgraph.types import Command

    from remit_ref import ConsumeConflict, wrap

    base = _sqlite_base(tmp_path / "lease.sqlite")
    app0 = _app(wrap(base, consume_gate=True))
    cfg = {"configurable": {"thread_id": "t"}}
    app0.invoke({"value": 1}, cfg)
    key, iid = _paused_claim_key(base, cfg)
    store = cl.claims_for(base)
    store.try_insert(key, cl.Owner("elsewhere/1/1/nonce", "elsewhere", 1, "1"))  # another host: liveness unknown
    with pytest.raises(ConsumeConflict, match="consumed by elsewhere/1/1") as info:
        app0.invoke(Command(resume=True), cfg)
    assert (info.value.thread_id, info.value.interrupt_id, info.value.owner) == ("t", iid, "elsewhere/1/1")
    assert info.value.checkpoint_id == key[2]
    with pytest.raises(ConsumeConflict):
        _app(wrap(base, consume_gate=True, claim_ttl=3600)).invoke(Command(resume=True), cfg)  # lease not expired
    time.sleep(0.05)
    out = _app(wrap(base, consume_gate=True, claim_ttl=0.01)).invoke(Command(resume=True), cfg)
    assert out["value"] == 2 and store.read(key).pid == os.getpid()


def test_validators_and_intent_options(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command
    from pydantic import BaseModel

    from remit_ref import InvalidCheckpoint, wrap

    class Model(BaseModel):
        value: int

    for validator in (Model, lambda ch, v: "negative" if ch == "value" and v < 0 else None):
        app = _app(wrap(InMemorySaver(), validator=validator))
        cfg = {"configurable": {"thread_id": "v"}}
        with pytest.raises(InvalidCheckpoint) as info:
            app.invoke({"value": -1 if callable(validator) and not isinstance(validator, type) else "x"}, cfg)
        assert info.value.channel == "value" and info.value.where in ("put", "put_writes")
    off = _app(wrap(InMemorySaver(), validator=False))
    assert off.invoke({"value": "x"}, {"configurable": {"thread_id": "o"}}) is not None
    # addressed_is_fork=False: an addressed resume is a retry unless flagged
    app = _app(wrap(InMemorySaver(), addressed_is_fork=False))
    cfg = {"configurable": {"thread_id": "a"}}
    app.invoke({"value": 1}, cfg)
    cid = app.get_state(cfg).config["configurable"]["checkpoint_id"]
    addressed = {"configurable": {"thread_id": "a", "checkpoint_id": cid}}
    assert app.invoke(Command(resume=True), addressed)["value"] == 2
    assert app.invoke(Command(resume=False), addressed)["value"] == 2  # retry: the first answer stands
    retry = {"configurable": {"thread_id": "a", "checkpoint_id": cid, "remit_intent": "retry"}}
    assert app.invoke(Command(resume=False), retry)["value"] == 2
    flagged = {"configurable": {"thread_id": "a", "checkpoint_id": cid, "remit_intent": "fork"}}
    assert app.invoke(Command(resume=False), flagged)["value"] == 1
    # the default (addressed_is_fork=True) with an explicit retry flag: the first answer stands
    app = _app(wrap(InMemorySaver()))
    app.invoke({"value": 1}, cfg)
    cid = app.get_state(cfg).config["configurable"]["checkpoint_id"]
    assert app.invoke(Command(resume=True), {"configurable": {"thread_id": "a", "checkpoint_id": cid}})["value"] == 2
    assert app.invoke(Command(resume=False), {"configurable": {"thread_id": "a", "checkpoint_id": cid,
                                                               "remit_intent": "retry"}})["value"] == 2


# ---- the ledger ----------------------------------------------------------------------------------


def test_read_context_and_pending_write_helpers() -> None:
    from langgraph.types import Interrupt

    from remit_ref._langgraph import (
        has_recorded_answer,
        inspect_read,
        interrupt_ids,
        schema_checker,
        unanswered_interrupt_ids,
    )
    from remit_ref.claims import NULL_TASK_ID

    assert inspect_read({"configurable": {"thread_id": "t"}}).execution is False
    assert inspect_read({}).execution is False
    ctx = inspect_read({"configurable": {"__pregel_runtime": object(), "remit_resume": True}})
    assert ctx.execution and ctx.resume and not ctx.found_loop and ctx.graph is None
    for not_true in (1, 1.0, "true"):  # only the boolean True forces the resume path (as wrap's flags are bools)
        assert not inspect_read({"configurable": {"__pregel_runtime": object(), "remit_resume": not_true}}).resume
    writes = [("a", "__interrupt__", [Interrupt(value=1, id="x"), Interrupt(value=2, id="y")]),
              ("b", "__interrupt__", Interrupt(value=3, id="x")), ("c", "value", 1), ("d", "__resume__", 1)]
    assert interrupt_ids(writes) == ["x", "y"] and interrupt_ids(None) == [] and interrupt_ids(writes[2:]) == []
    assert has_recorded_answer(writes) and not has_recorded_answer(writes[:3]) and not has_recorded_answer(None)
    two = [("t1", "__interrupt__", [Interrupt(value=1, id="p")]), ("t2", "__interrupt__", [Interrupt(value=2, id="q")])]
    assert unanswered_interrupt_ids(two) == ["p", "q"] and unanswered_interrupt_ids(None) == []
    assert unanswered_interrupt_ids([*two, ("t2", "__resume__", 5)]) == ["p"]  # t2's interrupt has its answer
    read_back = "".join(["__res", "ume__"])  # equal to the literal, not the same object (as a store returns it)
    assert unanswered_interrupt_ids([*two, ("t2", read_back, 5)]) == ["p"]
    assert unanswered_interrupt_ids([*two, ("t1", "value", 1)]) == ["p", "q"]  # a task's own write is no answer
    assert unanswered_interrupt_ids([*two, (NULL_TASK_ID, "__resume__", 5)]) == ["p", "q"]  # a bare resume's write
    assert schema_checker(int) is None and schema_checker("x") is None

    class TD(TypedDict):
        items: list[str]
        n: int
    chk = schema_checker(TD)
    assert chk.check("items", ["a"]) is None and chk.check("unknown", 1) is None
    assert chk.check("items", ["a", None]) == "TD.items[1]: Input should be a valid string"
    assert chk.check("items", [None, "a", 3]) == "TD.items[0]: Input should be a valid string"  # the first error
    assert chk.name == "TD" and chk.plain_channels == frozenset()


def test_resume_map_is_classified_and_claims_named_interrupts() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    from remit_ref import wrap

    class P(TypedDict, total=False):
        a: int
        b: int

    g = StateGraph(P)
    g.add_node("x", lambda s: {"a": interrupt("a")})
    g.add_node("y", lambda s: {"b": interrupt("b")})
    g.add_edge(START, "x")
    g.add_edge(START, "y")
    g.add_edge("x", END)
    g.add_edge("y", END)
    saver = wrap(InMemorySaver(), consume_gate=True)
    app = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "m"}}
    app.invoke({}, cfg)
    ids = sorted(i.id for i in app.get_state(cfg).interrupts)
    assert len(ids) == 2
    app.invoke(Command(resume={ids[0]: 1}), cfg)
    assert sorted(c["interrupt_id"] for c in saver.claims("m")) == [ids[0]]


# ---- on PostgreSQL too (last: the embedded server starts on first use) ----------------------------


def test_claim_store_contract(tmp_path: Path, pg: Any) -> None:
    for kind, store in _stores(tmp_path, pg).items():
        a, b = cl.Owner.new(), cl.Owner.new()
        k1, k2, k3 = ("t", "", "c", "i1"), ("t", "", "c", "i2"), ("u", "", "c", "i1")
        assert store.read(k1) is None and store.all_rows(None) == []
        assert store.try_insert(k1, a) is True, kind
        assert store.try_insert(k1, b) is False, kind
        row = store.read(k1)
        assert (row.owner, row.host, row.pid, row.pstart) == (a.token, a.host, a.pid, a.pstart), kind
        assert abs(row.claimed_at - time.time()) < 60
        assert store.take_over(k1, b.token, b) is False and store.read(k1).owner == a.token, kind
        assert store.take_over(k1, a.token, b) is True and store.read(k1).owner == b.token, kind
        assert store.take_over(k2, a.token, b) is False and store.read(k2) is None, kind
        assert store.try_insert(k2, a) and store.try_insert(k3, a)
        assert [k for k, _r in store.all_rows("t")] == [k1, k2], kind
        assert [k for k, _r in store.all_rows(None)] == [k1, k2, k3], kind
        assert store.all_rows("t")[0][1].owner == b.token
        assert store.delete(k1, a.token) == 0 and store.read(k1) is not None, kind
        assert store.delete(k1, b.token) == 1 and store.read(k1) is None, kind
        assert store.delete(k1) == 0 and store.delete(k2) == 1 and store.delete(k3, None) == 1, kind
        assert store.all_rows(None) == []


def test_closed_connections_raise_store_closed(tmp_path: Path, pg: Any) -> None:
    from remit_ref import StoreClosed, wrap

    for base in (_sqlite_base(tmp_path / "x.sqlite"), _pg_base(pg.fresh_dsn("closed"))):
        saver = wrap(base, consume_gate=True)
        base.conn.close()
        name = type(base).__name__
        for call in (lambda: saver.get_tuple({"configurable": {"thread_id": "t"}}),
                     lambda: saver._claims.try_insert(("t", "", "c", "i"), cl.Owner.new()),
                     lambda: saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
                                       _empty_checkpoint(), {}, {}),
                     lambda: saver.put_writes({"configurable": {"thread_id": "t", "checkpoint_ns": "",
                                                                "checkpoint_id": "c"}}, [("a", 1)], "task")):
            with pytest.raises(StoreClosed, match=f"connection of the wrapped {name} is closed") as info:
                call()
            assert info.value.saver == name and "closed" in info.value.detail


def test_postgres_table_creation_is_race_free(pg: Any) -> None:
    """The effect ledger's table (REMIT's one table of its own) is created race-free by concurrent first users."""
    import psycopg

    from remit_ref.ledger import _DDL as _LEDGER_DDL
    from remit_ref.ledger import pg_create

    dsn = pg.fresh_dsn("race")
    barrier, errors = threading.Barrier(6), []

    def create() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            barrier.wait(timeout=30)
            try:
                pg_create(conn, _LEDGER_DDL, "remit_effects")
            except Exception as exc:  # noqa: BLE001 - the observation
                errors.append(repr(exc))
    threads = [threading.Thread(target=create) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT to_regclass('remit_effects')").fetchone()[0] == "remit_effects"


def test_claims_for_each_saver(tmp_path: Path, pg: Any) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    mem = InMemorySaver()
    assert isinstance(cl.claims_for(mem), cl.MemoryClaims) and cl.claims_for(mem) is cl.memory_claims_for(mem)
    assert cl.claims_for(InMemorySaver()) is not cl.claims_for(mem)
    sq = _sqlite_base(tmp_path / "f.sqlite")
    store = cl.claims_for(sq)
    assert isinstance(store, cl.SqliteClaims) and store.conn is sq.conn and store.lock is sq.lock
    pgs = _pg_base(pg.fresh_dsn("cf"))
    assert isinstance(cl.claims_for(pgs), cl.PostgresClaims) and cl.claims_for(pgs).saver is pgs

    class Delegate:
        def __init__(self, inner: Any) -> None:
            self.inner = inner
    assert cl.underlying(Delegate(Delegate(mem))) is mem
    chain: Any = mem
    for _ in range(6):  # six delegates deep: still unwrapped
        chain = Delegate(chain)
    assert cl.underlying(chain) is mem
    loop = Delegate(None)
    loop.inner = loop  # a cyclic delegate chain terminates
    assert cl.underlying(loop) is loop
    assert isinstance(cl.claims_for(Delegate(mem)), cl.MemoryClaims)
    assert cl.underlying(object()) is not None

    class Custom:
        pass
    with pytest.raises(TypeError, match="Custom is not one: pass claims="):
        cl.claims_for(Custom())
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    with pytest.raises(TypeError, match="async AsyncSqliteSaver: pass claims="):
        cl.claims_for(AsyncSqliteSaver.__new__(AsyncSqliteSaver))


# ---- the saver: options, forwarding, administration ------------------------------------------------------


def test_ledger_on_every_store(tmp_path: Path, pg: Any) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import EffectInDoubt, EffectLedger

    targets = {"memory": EffectLedger(None), "memory2": EffectLedger(":memory:"),
               "sqlite": EffectLedger(tmp_path / "l.sqlite"), "postgres": EffectLedger(pg.fresh_dsn("ledger"))}
    for kind, led in targets.items():
        fired: list[str] = []
        assert led.status("t", "a", "e") is None, kind
        assert led.once("t", "a", "e", lambda: fired.append("a") or {"r": 1}) == {"r": 1}
        assert led.once("t", "a", "e", lambda: fired.append("again")) == {"r": 1}, kind
        assert led.status("t", "a", "e") == "done" and fired == ["a"], kind
        with pytest.raises(RuntimeError, match="boom"):
            led.once("t", "b", "e", lambda: (_ for _ in ()).throw(RuntimeError("boom")))
        assert led.status("t", "b", "e") is None, kind        # a failed effect is forgotten
        assert led.once("t", "b", "e", lambda: 2) == 2
        assert led.once("u", "a", "e", lambda: None) is None
        assert [e["task"] for e in led.entries("t")] == ["a", "b"] and [e["seq"] for e in led.entries("t")] == [1, 2]
        assert led.entries("u") == [{"seq": 1, "task": "a", "effect_id": "e", "status": "done"}], kind
        assert led.counts() == {"t/a/e": 1, "t/b/e": 1, "u/a/e": 1}, kind
        with pytest.raises(ValueError, match="not in doubt"):
            led.resolve("t", "a", "e", fired=True)
        assert led._reserve(("t", "c", "e")) is True and led._reserve(("t", "c", "e")) is False
        assert led.status("t", "c", "e") == "pending"
        with pytest.raises(EffectInDoubt, match="ledger.resolve"):
            led.once("t", "c", "e", lambda: fired.append("twice"))
        led.resolve("t", "c", "e", fired=False)
        assert led.status("t", "c", "e") is None
        led._reserve(("t", "d", "e"))
        led.resolve("t", "d", "e", fired=True, result=[7])
        assert led.once("t", "d", "e", lambda: fired.append("twice")) == [7] and "twice" not in fired, kind
        led.close()
    assert EffectLedger.beside(InMemorySaver())._kind == "memory"


def test_ledger_beside_savers(tmp_path: Path, pg: Any) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from remit_ref import EffectLedger, wrap

    sq = _sqlite_base(tmp_path / "b.sqlite")
    led = EffectLedger.beside(wrap(sq))
    assert led._kind == "sqlite" and led.once("t", "a", "e", lambda: 1) == 1
    assert sq.conn.execute("SELECT count(*) FROM remit_effects").fetchone()[0] == 1
    with pytest.raises(ValueError, match="in-memory database"):
        EffectLedger.beside(SqliteSaver(sqlite3.connect(":memory:")))
    pgs = _pg_base(pg.fresh_dsn("beside"))
    led = EffectLedger.beside(pgs)
    assert led._kind == "postgres" and led.once("t", "a", "e", lambda: 1) == 1
    assert pgs.conn.execute("SELECT count(*) AS n FROM remit_effects").fetchone()["n"] == 1
    with pytest.raises(TypeError, match="cannot place a ledger beside"):
        EffectLedger.beside(object())


# ---- how a read is classified ---------------------------------------------------------------------


def test_claim_under_churn_decides_on_the_last_attempt() -> None:
    """A claim row that keeps vanishing between our insert and our read: the last attempt's insert
    still counts, and when every attempt loses the resume is refused (owner unknown), never run."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import ConsumeConflict, wrap

    class Churn(cl.MemoryClaims):
        def __init__(self, wins_at: int) -> None:
            super().__init__()
            self.inserts, self.wins_at = 0, wins_at

        def try_insert(self, key: cl.Key, owner: cl.Owner) -> bool:
            self.inserts += 1
            return self.inserts == self.wins_at

        def read(self, key: cl.Key) -> None:
            return None

    saver = wrap(InMemorySaver(), consume_gate=True, claims=Churn(wins_at=4))
    assert saver._claim("t", "c", "i") is None and saver._claims.inserts == 4
    saver = wrap(InMemorySaver(), consume_gate=True, claims=Churn(wins_at=0))
    with pytest.raises(ConsumeConflict, match="consumed by \\?"):
        saver._claim("t", "c", "i")
    assert saver._claims.inserts == 4


def test_only_database_closed_errors_are_translated() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import wrap

    class Failing(InMemorySaver):
        def get_tuple(self, config: Any) -> Any:
            raise RuntimeError("the stream was closed by the caller")  # not a database connection error

    with pytest.raises(RuntimeError, match="stream was closed") as info:
        wrap(Failing()).get_tuple({"configurable": {"thread_id": "t"}})
    assert type(info.value) is RuntimeError
    with pytest.raises(TypeError, match="validator must be None, False"):
        wrap(InMemorySaver(), validator=0)


def test_answered_interrupt_ids_reads_the_answers_langgraph_records() -> None:
    """The gate's "committed" test: a task's own resume write answers its interrupt; the null task's bare
    resume (the write a won claim carries) answers the checkpoint's interrupts; a resume map there only
    the ids it names; an interrupt with nothing recorded is unanswered."""
    from langgraph.types import Interrupt

    from remit_ref._langgraph import answered_interrupt_ids

    a, b = Interrupt("q", id="a" * 32), Interrupt("r", id="b" * 32)
    asked = [("ta", "__interrupt__", [a]), ("tb", "__interrupt__", [b])]
    assert answered_interrupt_ids(None) == [] and answered_interrupt_ids(asked) == []
    assert answered_interrupt_ids(asked + [("ta", "__resume__", ["x"])]) == [a.id]
    assert answered_interrupt_ids(asked[:1] + [(cl.NULL_TASK_ID, "__resume__", "x")]) == [a.id]
    assert answered_interrupt_ids(asked + [(cl.NULL_TASK_ID, "__resume__", {b.id: "y"})]) == [b.id]
    assert answered_interrupt_ids(asked + [(cl.NULL_TASK_ID, "__resume__", {"not-an-id": "y"})]) == [a.id, b.id]


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_a_declared_retry_over_a_dead_owners_committed_answer_is_refused(backend: str, tmp_path: Path) -> None:
    """The owner answered (claim and answer committed), then died: a declared RETRY addressed to the pause
    must not take its claim over (the gate would run again: CO, FI); ``invoke(None)`` consumes nothing
    and is not gated. A dead claim with no answer recorded is still taken over (LV)."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    from remit_ref import ConsumeConflict, wrap

    runs: list[Any] = []

    class St(TypedDict, total=False):
        answer: str

    def gate(s: St) -> dict[str, str]:
        answer = interrupt("ok?")
        runs.append(answer)
        return {"answer": answer}

    def app_on(saver: Any) -> Any:
        g = StateGraph(St)
        g.add_node("gate", gate)
        g.add_edge(START, "gate")
        g.add_edge("gate", END)
        return g.compile(checkpointer=saver)

    base = InMemorySaver() if backend == "memory" else _sqlite_base(tmp_path / "r.sqlite")
    saver = wrap(base, consume_gate=True)
    app = app_on(saver)
    dead = cl.Owner(f"{cl.HOST}/999999999/x/dead", cl.HOST, 999999999, "x")
    for thread, answer_first in (("answered", True), ("unanswered", False)):
        cfg = {"configurable": {"thread_id": thread}}
        app.invoke({}, cfg)
        cid = app.get_state(cfg).config["configurable"]["checkpoint_id"]
        iid = app.get_state(cfg).interrupts[0].id
        key = (thread, "", cid, iid)
        if answer_first:
            assert app.invoke(Command(resume="a"), cfg)["answer"] == "a"
            assert saver._claims.take_over(key, saver._claims.read(key).owner, dead)  # its owner is gone now
            retry = {"configurable": {"thread_id": thread, "checkpoint_id": cid, "remit_intent": "retry"}}
            with pytest.raises(ConsumeConflict):
                app.invoke(Command(resume="a"), retry)
            assert runs == ["a"] and app.get_state(cfg).values == {"answer": "a"}
            assert saver._claims.read(key).owner == dead.token  # refused without taking the claim
        else:
            assert saver._claims.try_insert(key, dead)  # claimed, died before any answer was written
            assert app.invoke(Command(resume="b"), cfg)["answer"] == "b"  # taken over
            assert runs == ["a", "b"]


def test_a_retry_after_the_answer_was_recorded_still_needs_the_claim() -> None:
    """The winner recorded its answer and is still running (a live owner): a thread-only resume that
    reads the checkpoint now sees the recorded answer, and must still lose the claim."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.constants import NULL_TASK_ID
    from langgraph.types import Command

    from remit_ref import ConsumeConflict, wrap

    base = InMemorySaver()
    saver = wrap(base, consume_gate=True)
    app = _app(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    tup = base.get_tuple(cfg)
    iid = next(w[2][0].id for w in tup.pending_writes if w[1] == "__interrupt__")
    saver._claims.try_insert(("t", "", tup.config["configurable"]["checkpoint_id"], iid), cl.Owner.new())
    base.put_writes(tup.config, [("__resume__", True)], NULL_TASK_ID)  # the winner's recorded answer
    with pytest.raises(ConsumeConflict):
        app.invoke(Command(resume=False), cfg)
    assert app.get_state(cfg).next == ("n",)


def test_wrapper_offers_optional_methods_only_where_the_base_does() -> None:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import RemitSaver, wrap

    class Pruning(InMemorySaver):
        def prune(self, *a: Any, **k: Any) -> str:
            return "pruned"

    plain, pruning = type(wrap(InMemorySaver())), type(wrap(Pruning()))
    for m in ("delete_for_runs", "adelete_for_runs", "copy_thread", "acopy_thread", "prune", "aprune"):
        assert getattr(plain, m) is getattr(BaseCheckpointSaver, m), m  # InMemorySaver 4.1.1 has none of them
    assert pruning.prune is RemitSaver.prune and pruning.aprune is BaseCheckpointSaver.aprune
    assert wrap(Pruning()).prune() == "pruned"
    assert issubclass(plain, RemitSaver) and plain is type(wrap(InMemorySaver()))  # built once per method set


def _append(a: list[str], b: Any) -> list[str]:
    return a + ([b] if isinstance(b, str) else list(b))


class R(TypedDict):
    items: Annotated[list[str], _append]
    last: str


def test_reducer_deltas_are_not_validated_as_field_values() -> None:
    """A write to a reducer channel is a delta (here one str appended to a list[str]); it is checked
    on the reduced value at put, never as a value of the field's type."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    from remit_ref import InvalidCheckpoint, wrap

    g = StateGraph(R)
    g.add_node("n", lambda s: {"items": "x", "last": "x"})
    g.add_edge(START, "n")
    g.add_edge("n", END)
    app = g.compile(checkpointer=wrap(InMemorySaver()))
    assert app.invoke({"items": ["a"], "last": ""}, {"configurable": {"thread_id": "r"}})["items"] == ["a", "x"]
    bad = StateGraph(R)
    bad.add_node("n", lambda s: {"last": 3})
    bad.add_edge(START, "n")
    bad.add_edge("n", END)
    with pytest.raises(InvalidCheckpoint, match="last"):
        bad.compile(checkpointer=wrap(InMemorySaver())).invoke({"items": [], "last": ""},
                                                               {"configurable": {"thread_id": "b"}})


def test_lock_retries_and_lease_arithmetic_and_closed_detection(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import ConsumeConflict, wrap

    store = cl.SqliteClaims(sqlite3.connect(str(tmp_path / "r.sqlite"), check_same_thread=False), threading.Lock(),
                            retries=3)
    calls: list[int] = []

    def locked(cur: sqlite3.Cursor) -> None:
        calls.append(1)
        raise sqlite3.OperationalError("database is locked")
    with pytest.raises(sqlite3.OperationalError):
        store._run(locked)
    assert len(calls) == 3  # exactly `retries` attempts
    # lease: a claim stamped in the future (another host's clock ahead) is not expired for a short ttl
    claims = cl.MemoryClaims()
    saver = wrap(InMemorySaver(), consume_gate=True, claim_ttl=0.9, claims=claims)
    claims._rows[("t", "", "c", "i")] = cl.ClaimRow("far/1/1/n", "far", 1, "1", time.time() + 1000)
    with pytest.raises(ConsumeConflict):
        saver._claim("t", "c", "i")
    claims._rows[("t", "", "c", "i")] = cl.ClaimRow("far/1/1/n", "far", 1, "1", time.time() - 5)
    assert saver._claim("t", "c", "i") is None  # expired: taken over

    class Conn:
        def __init__(self, closed: bool) -> None:
            self.closed = closed

    class Saver:
        def __init__(self, closed: bool) -> None:
            self.conn = Conn(closed)
    assert cl._pg_closed(Saver(False), RuntimeError("server closed the connection unexpectedly"))
    assert cl._pg_closed(Saver(True), RuntimeError("boom"))
    assert not cl._pg_closed(Saver(False), RuntimeError("boom"))


# ---- values, not identities: ids that arrive as fresh strings ------------------------------------------------


def _fresh(*parts: str) -> str:
    """An id built at run time (as one decoded from a request is): equal to, never the same object as,
    another built from the same parts."""
    return "".join(parts)


def test_ledger_orders_a_thread_by_its_id_value_on_every_store(tmp_path: Path) -> None:
    """The per-thread total order (seq 1, 2, ...) and the thread's listing go by the thread id's value:
    two effects of one thread whose id reaches the ledger as two distinct str objects are seq 1 and 2,
    and listed together, in memory as in SQLite."""
    from remit_ref import EffectLedger

    first, second = _fresh("thread-", "7"), _fresh("thread-", "7")
    assert first == second and first is not second
    expected = [{"seq": 1, "task": "s1", "effect_id": "e", "status": "done"},
                {"seq": 2, "task": "s2", "effect_id": "e", "status": "done"}]
    for target in (None, tmp_path / "order.sqlite"):
        led = EffectLedger(target)
        assert led.once(first, "s1", "e", lambda: 1) == 1
        assert led.once(second, "s2", "e", lambda: 2) == 2
        assert led.entries(_fresh("thread-", "7")) == expected, target
        led.close()


# ---- LangGraph 1.2.9's loop is found on every execution read ---------------------------------------------------


def test_execution_reads_find_the_pregel_loop_and_the_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the pinned LangGraph, every read the execution loop makes is recognised as such: the frame walk
    finds the loop (``found_loop``; without it REMIT falls back to stock behaviour) and the compiled graph,
    and tells a resume from a fresh input; state reads are not execution reads."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from remit_ref import saver as saver_mod
    from remit_ref import wrap

    seen: list[Any] = []
    after_read = saver_mod.RemitSaver._after_read

    def record(self: Any, config: Any, tup: Any, ctx: Any) -> Any:
        seen.append(ctx)
        return after_read(self, config, tup, ctx)
    monkeypatch.setattr(saver_mod.RemitSaver, "_after_read", record)
    app = _app(wrap(InMemorySaver()))
    cfg = {"configurable": {"thread_id": "loop"}}
    app.invoke({"value": 1}, cfg)
    assert seen and all(c.execution and c.found_loop and not c.resume and c.graph is not None for c in seen)
    seen.clear()
    # where a resume can matter (here: remit_intent is given and checked), the walk tells it from a fresh input
    assert app.invoke(Command(resume=True), {"configurable": {**cfg["configurable"], "remit_intent": "retry"}})["value"] == 2
    assert seen and all(c.execution and c.found_loop and c.resume for c in seen)
    seen.clear()
    # where nothing can depend on it (no gate, no recorded answer, no intent), only the graph is looked for
    app.invoke({"value": 1}, {"configurable": {"thread_id": "loop2"}})
    seen.clear()
    app.invoke(Command(resume=True), {"configurable": {"thread_id": "loop2"}})
    assert seen and all(c.execution and c.found_loop and not c.resume and c.graph is not None for c in seen)
    seen.clear()
    app.get_state(cfg)
    assert seen and not any(c.execution or c.found_loop for c in seen)


# ---- a connection closed in the middle of a claim ------------------------------------------------------------


def test_sqlite_claim_on_a_connection_closed_mid_transaction_raises_store_closed(tmp_path: Path) -> None:
    """The saver's connection is closed by another thread (a shutdown) after the claim's transaction
    began: the claim fails with StoreClosed, the named error, not a raw sqlite3 error."""
    from remit_ref import StoreClosed

    conn = sqlite3.connect(_ckpt_file(tmp_path / "mid.sqlite"), check_same_thread=False)
    store = cl.SqliteClaims(conn, threading.Lock())
    assert store.try_insert(("t", "", "c", "0"), cl.Owner.new())

    def closed_under_us(cur: sqlite3.Cursor) -> None:
        conn.close()
        cur.execute("SELECT count(*) FROM writes")
    with pytest.raises(StoreClosed, match="closed database") as info:
        store._run(closed_under_us)
    assert info.value.saver == "SqliteSaver"


# ---- the ledger when another process records the same effect first --------------------------------------------


def test_ledger_returns_the_result_another_process_recorded_between_our_check_and_reserve(tmp_path: Path) -> None:
    """Two processes run the same effect key on one SQLite ledger. The other one reserves, fires and records
    it after our status check found nothing: our reservation fails, and we return its recorded result
    without firing (EO) -- neither firing twice nor calling a finished effect in doubt."""
    from remit_ref import EffectLedger

    path = tmp_path / "race.sqlite"
    other, fired = EffectLedger(path), []

    class Overtaken(EffectLedger):
        overtaken = False

        def status(self, thread_id: str, task: str, effect_id: str) -> str | None:
            seen = super().status(thread_id, task, effect_id)
            if not self.overtaken:  # the other process runs the whole effect right after our read
                self.overtaken = True
                assert other.once(thread_id, task, effect_id, lambda: fired.append("other") or "theirs") == "theirs"
            return seen

    ours = Overtaken(path)
    assert ours.once("t", "a", "e", lambda: fired.append("ours") or "mine") == "theirs"
    assert fired == ["other"] and ours.entries("t") == [{"seq": 1, "task": "a", "effect_id": "e", "status": "done"}]
    ours.close()
    other.close()


def test_claims_are_matched_by_value_on_every_claim_store(tmp_path: Path) -> None:
    """Thread ids and owner tokens reach the claim store as fresh strings (an operator's call, a token read
    back from a log or another store): listing, releasing and the conditional takeover and delete compare
    them by value, in memory exactly as in SQLite."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import wrap

    a, b = cl.Owner.new(), cl.Owner.new()

    def copy(s: str) -> str:
        out = _fresh(s[:1], s[1:])
        assert out == s and out is not s
        return out

    for kind, store in (("memory", cl.MemoryClaims()), ("sqlite", cl.sqlite_claims(_ckpt_file(tmp_path / "v.sqlite")))):
        key = (_fresh("thread-", "v"), "", "c", "i")
        assert store.try_insert(key, a)
        assert [k for k, _r in store.all_rows(_fresh("thread-", "v"))] == [key], kind
        assert store.take_over(key, copy(a.token), b) is True and store.read(key).owner == b.token, kind
        assert store.delete(key, copy(a.token)) == 0 and store.delete(key, copy(b.token)) == 1, kind
        saver = wrap(InMemorySaver(), consume_gate=True, claims=store)
        store.try_insert(key, a)
        assert [c["thread_id"] for c in saver.claims(_fresh("thread-", "v"))] == [key[0]], kind
        assert saver.release_claims(_fresh("thread-", "v")) == 1 and saver.claims() == [], kind


def test_ledger_reservation_retries_while_another_writer_holds_the_database(tmp_path: Path) -> None:
    """Another process holds SQLite's write lock past the ledger's busy timeout: the reservation is retried
    ("database is locked" is not an answer), and the effect fires once when the lock is released."""
    from remit_ref import EffectLedger

    path = tmp_path / "busy.sqlite"
    blocker = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    fired: list[str] = []

    class Blocked(EffectLedger):
        checks = 0

        def status(self, thread_id: str, task: str, effect_id: str) -> str | None:
            self.checks += 1
            if self.checks == 2:  # the reservation failed on the lock: the other writer commits now
                assert blocker.in_transaction
                blocker.execute("COMMIT")
            return super().status(thread_id, task, effect_id)

    led = Blocked(path)
    led._conn.execute("PRAGMA busy_timeout=0")  # its patience is used up at once
    blocker.execute("BEGIN IMMEDIATE")
    assert led.once("t", "a", "e", lambda: fired.append("a") or 1) == 1
    assert fired == ["a"] and led.checks == 2 and led.status("t", "a", "e") == "done"
    led.close()
    blocker.close()


def test_ledger_counts_only_effects_recorded_done(tmp_path: Path) -> None:
    """counts() is what oracles compare with the fired effects: an effect in doubt (reserved, never
    recorded done) is not counted as fired, in memory as in SQLite."""
    from remit_ref import EffectLedger

    for target in (None, tmp_path / "counts.sqlite"):
        led = EffectLedger(target)
        led.once("t", "a", "e", lambda: 1)
        assert led._reserve(("t", "b", "e"))  # the process died between starting the effect and recording it
        assert led.status("t", "b", "e") == "pending"
        assert led.counts() == {"t/a/e": 1}, target
        led.close()


def test_resume_of_a_thread_that_never_ran_is_stock() -> None:
    """Command(resume=...) on a thread with no checkpoint: the loop reads nothing, and REMIT (gate on or
    off) behaves exactly as the stock saver -- the graph starts and reaches its interrupt."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    from remit_ref import wrap

    g = StateGraph(St)
    g.add_node("n", lambda s: {"value": 1 if interrupt("q") else 0})
    g.add_edge(START, "n")
    g.add_edge("n", END)
    outcomes = []
    for saver in (InMemorySaver(), wrap(InMemorySaver()), wrap(InMemorySaver(), consume_gate=True)):
        app = g.compile(checkpointer=saver)
        out = app.invoke(Command(resume=True), {"configurable": {"thread_id": "never-ran"}})
        outcomes.append(([i.value for i in out["__interrupt__"]], app.get_state({"configurable": {
            "thread_id": "never-ran"}}).next))
    assert outcomes == [(["q"], ("n",))] * 3


class Opaque:
    """A value pydantic has no schema for (a client, a file handle...)."""


class WithOpaque(TypedDict):
    handle: Opaque  # first: the fields after it are still checked
    value: int


def test_state_field_of_a_type_pydantic_cannot_check_is_left_unchecked() -> None:
    """The default validator checks the fields it can: a state that carries an object pydantic has no
    schema for (kept by a saver whose serializer pickles it) still runs under REMIT, and its other fields
    are still checked."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.graph import END, START, StateGraph

    from remit_ref import InvalidCheckpoint, wrap

    def build(value: Any) -> Any:
        g = StateGraph(WithOpaque)
        g.add_node("n", lambda s: {"value": value})
        g.add_edge(START, "n")
        g.add_edge("n", END)
        return g.compile(checkpointer=wrap(InMemorySaver(serde=JsonPlusSerializer(pickle_fallback=True))))

    handle = Opaque()
    out = build(2).invoke({"value": 1, "handle": handle}, {"configurable": {"thread_id": "o"}})
    assert out["value"] == 2 and isinstance(out["handle"], Opaque)
    with pytest.raises(InvalidCheckpoint, match="value"):
        build("two").invoke({"value": 1, "handle": handle}, {"configurable": {"thread_id": "o"}})


def test_claims_through_a_connection_of_their_own_are_seen_by_every_other_session(tmp_path: Path, pg: Any) -> None:
    """sqlite_claims(path) / postgres_claims(dsn) (the stores beside an async saver) commit each claim:
    another connection to the same store sees it at once and loses the same interrupt."""
    import psycopg

    a, b = cl.Owner.new(), cl.Owner.new()
    dsn = _ckpt_dsn(pg, "own")
    for kind, make in (("sqlite", lambda: cl.sqlite_claims(_ckpt_file(tmp_path / "own.sqlite"))),
                       ("postgres", lambda: cl.postgres_claims(dsn))):
        mine, theirs = make(), make()
        key = ("t", "", "c", "i")
        assert mine.try_insert(key, a), kind
        row = theirs.read(key)  # read first (an uncommitted claim would make an insert wait for its lock)
        assert row is not None and row.owner == a.token, kind
        assert theirs.try_insert(key, b) is False and [k for k, _r in theirs.all_rows("t")] == [key], kind


# ---- a drop-in saver: the base's signatures, the names of its errors and of its claims -------------------------


def test_wrapper_methods_take_the_base_savers_parameters() -> None:
    """Drop-in: every BaseCheckpointSaver method the wrapper overrides takes the base's parameters (names,
    kinds, defaults: ``list(config=...)`` and keyword-only ``filter``/``before``/``limit`` as on a stock saver),
    or forwards ``*args, **kwargs`` untouched."""
    import inspect

    from langgraph.checkpoint.base import BaseCheckpointSaver

    from remit_ref import RemitSaver

    def params(fn: Any) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    forwarding = [("self", inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty),
                  ("args", inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.empty),
                  ("kwargs", inspect.Parameter.VAR_KEYWORD, inspect.Parameter.empty)]
    overridden = [n for n, f in vars(RemitSaver).items() if callable(f) and not n.startswith("_")
                  and hasattr(BaseCheckpointSaver, n)]
    assert {"get_tuple", "aget_tuple", "list", "alist", "put", "aput", "put_writes", "aput_writes"} <= set(overridden)
    for name in overridden:
        mine = params(getattr(RemitSaver, name))
        assert mine in (params(getattr(BaseCheckpointSaver, name)), forwarding), name


def test_ledger_resolve_takes_its_decision_by_name(tmp_path: Path) -> None:
    """``resolve(thread_id, task, effect_id, fired=...)``: the settlement of an in-doubt effect is named at the
    call site (a bare True/False is refused), the key may be passed by name."""
    from remit_ref import EffectLedger

    led = EffectLedger(tmp_path / "resolve.sqlite")
    led._reserve(("t", "a", "e"))
    with pytest.raises(TypeError):
        led.resolve("t", "a", "e", True)  # type: ignore[misc]
    assert led.status("t", "a", "e") == "pending"
    led.resolve(thread_id="t", task="a", effect_id="e", fired=True, result=3)
    assert led.once("t", "a", "e", lambda: 4) == 3
    led.close()


def test_invalid_checkpoint_carries_the_validators_reason() -> None:
    """InvalidCheckpoint names where (put / put_writes), the channel, and the validator's own reason."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import InvalidCheckpoint, wrap

    saver = wrap(InMemorySaver(), validator=lambda ch, v: "must not be negative" if v < 0 else None)
    cfg = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    checkpoint = _empty_checkpoint()
    checkpoint["channel_values"] = {"a": 1, "b": -1}
    with pytest.raises(InvalidCheckpoint, match="channel 'b'.*must not be negative") as info:
        saver.put(cfg, checkpoint, {}, {})
    assert (info.value.where, info.value.channel, info.value.detail) == ("put", "b", "must not be negative")
    written = saver.put(cfg, _empty_checkpoint(), {}, {})
    with pytest.raises(InvalidCheckpoint) as info:
        saver.put_writes(written, [("a", 1), ("c", -2)], "task")
    assert (info.value.where, info.value.channel, info.value.detail) == ("put_writes", "c", "must not be negative")


def test_claims_name_the_checkpoint_and_the_interrupt_they_consumed(tmp_path: Path) -> None:
    from langgraph.types import Command

    from remit_ref import wrap

    base = _sqlite_base(tmp_path / "named.sqlite")
    saver = wrap(base, consume_gate=True)
    app = _app(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    interrupted = app.get_state(cfg)
    app.invoke(Command(resume=True), cfg)
    [claim] = saver.claims("t")
    assert claim["checkpoint_id"] == interrupted.config["configurable"]["checkpoint_id"]
    assert claim["interrupt_id"] == interrupted.interrupts[0].id and claim["checkpoint_ns"] == ""


def test_sqlite_claims_of_their_own_serve_every_thread(tmp_path: Path) -> None:
    """sqlite_claims(path) is built once (beside an async saver) and claimed in from whichever thread
    runs the resume."""
    store = cl.sqlite_claims(_ckpt_file(tmp_path / "threads.sqlite"))
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(store.try_insert(("t", "", "c", "i"), cl.Owner.new())))
    worker.start()
    worker.join()
    assert out == [True] and store.read(("t", "", "c", "i")) is not None


def test_a_memory_saver_subclass_keeping_the_stock_name_gets_memory_claims() -> None:
    """An application's instrumented subclass that keeps the name InMemorySaver (defined in its own
    module) is recognised as the in-memory saver: the gate claims in process memory."""
    from langgraph.checkpoint import memory

    from remit_ref import wrap

    class InMemorySaver(memory.InMemorySaver):  # the stock name, in the application's module
        pass
    assert InMemorySaver.__module__ != memory.InMemorySaver.__module__
    saver = InMemorySaver()
    assert cl.claims_for(saver) is cl.memory_claims_for(saver)
    assert isinstance(wrap(saver, consume_gate=True)._claims, cl.MemoryClaims)


class ChannelClosed(Exception):
    """An application's own error (its module sorts after sqlite3) that says 'closed'."""


def test_only_database_errors_saying_closed_become_store_closed() -> None:
    """StoreClosed is for the database connection (sqlite3, psycopg); any other error that mentions
    'closed' propagates unchanged."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import StoreClosed, wrap

    assert ChannelClosed.__module__ > "sqlite3"

    class Failing(InMemorySaver):
        error: Exception = ChannelClosed("the event channel was closed")

        def get_tuple(self, config: Any) -> Any:
            raise self.error

    saver = wrap(Failing())
    with pytest.raises(ChannelClosed):
        saver.get_tuple({"configurable": {"thread_id": "t"}})
    Failing.error = sqlite3.ProgrammingError("Cannot operate on a closed database.")
    with pytest.raises(StoreClosed):
        saver.get_tuple({"configurable": {"thread_id": "t"}})


# ---- the frame walk is bounded ---------------------------------------------------------------------------------


def _forwarding_stack(saver: Any, layers: int) -> Any:
    """``layers`` tracing savers stacked above ``saver``, each forwarding every call (one frame each)."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    class Forwarding(BaseCheckpointSaver):
        def __init__(self, inner: Any) -> None:
            super().__init__(serde=inner.serde)
            self.inner = inner
            self.channels = ["traces"]  # where it publishes (a graph is not the only object with channels)

        def get_tuple(self, config: Any) -> Any:
            return self.inner.get_tuple(config)

        def list(self, config: Any, *, filter: Any = None, before: Any = None, limit: Any = None) -> Any:
            return self.inner.list(config, filter=filter, before=before, limit=limit)

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            return self.inner.put(config, checkpoint, metadata, new_versions)

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            return self.inner.put_writes(config, writes, task_id, task_path)

        def get_next_version(self, current: Any, channel: Any) -> Any:
            return self.inner.get_next_version(current, channel)

    for _ in range(layers):
        saver = Forwarding(saver)
    return saver


def _fork_values(saver: Any) -> tuple[int, int]:
    """An interrupt answered True on the thread, then the same checkpoint addressed again with False."""
    from langgraph.types import Command

    app = _app(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    addressed = {"configurable": {"thread_id": "t",
                                  "checkpoint_id": app.get_state(cfg).config["configurable"]["checkpoint_id"]}}
    return app.invoke(Command(resume=True), addressed)["value"], app.invoke(Command(resume=False), addressed)["value"]


def test_frame_walk_sees_through_ten_forwarding_savers_and_is_plain_beyond_its_bound() -> None:
    """REMIT finds LangGraph's loop and graph by walking a bounded number of frames (12) up from the
    caller of get_tuple. Through ten tracing savers stacked above it both are found: a fork observes its
    own answer and the graph's schema is enforced. With twelve, the read is too far from the loop and
    counts as plain: exactly stock (the fork is served the first answer), never a walk up the whole stack."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import InvalidCheckpoint, wrap

    assert _fork_values(InMemorySaver()) == (2, 2)  # stock (LangGraph #6663)
    assert _fork_values(wrap(InMemorySaver())) == _fork_values(_forwarding_stack(wrap(InMemorySaver()), 10)) == (2, 1)
    with pytest.raises(InvalidCheckpoint, match="value"):
        _app(_forwarding_stack(wrap(InMemorySaver()), 10)).invoke({"value": "x"}, {"configurable": {"thread_id": "v"}})
    assert _fork_values(_forwarding_stack(wrap(InMemorySaver()), 12)) == (2, 2)


# ---- liveness of a process this one may not signal ----------------------------------------------------------


def test_owner_of_another_user_is_alive_unless_its_pid_was_reused() -> None:
    """A claim owned by a process of another user (kill(pid, 0) is not permitted) is judged by the pid's
    start time like any other: alive if it matches (or is unknown), a reused pid otherwise. Run as an
    unprivileged user (a forked child drops root) so that the signal really is refused."""
    import ast

    start = cl.process_start(1)
    assert start

    def judge() -> tuple[Any, ...]:
        try:
            os.kill(1, 0)
            permitted: Any = True
        except PermissionError:
            permitted = False
        return permitted, cl.owner_alive(cl.HOST, 1, start), cl.owner_alive(cl.HOST, 1, ""), \
            cl.owner_alive(cl.HOST, 1, start + "0")

    if os.geteuid() != 0:
        seen = judge()
    else:
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # pragma: no cover - the child reports through the pipe
            code = 0
            try:
                os.setgid(65534)
                os.setuid(65534)
                os.write(write, repr(judge()).encode())
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                os.write(write, repr(("error", repr(exc))).encode())
                code = 1
            os._exit(code)
        os.close(write)
        with os.fdopen(read) as fh:
            report = fh.read()
        os.waitpid(child, 0)
        seen = ast.literal_eval(report)
    assert seen == (False, True, True, False)


# ---- on PostgreSQL: async reads of a closed connection, the ledger's sequence race -----------------------------


def test_async_read_of_a_closed_connection_raises_store_closed(pg: Any) -> None:
    import asyncio

    import psycopg
    from psycopg.rows import dict_row

    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from remit_ref import StoreClosed, wrap

    async def read_after_close() -> None:
        conn = await psycopg.AsyncConnection.connect(pg.fresh_dsn("aclosed"), autocommit=True, prepare_threshold=0,
                                                     row_factory=dict_row)
        base = AsyncPostgresSaver(conn)
        await base.setup()
        saver = wrap(base)
        await conn.close()
        with pytest.raises(StoreClosed, match="connection of the wrapped AsyncPostgresSaver is closed"):
            await saver.aget_tuple({"configurable": {"thread_id": "t"}})
    asyncio.run(read_after_close())


def test_ledger_effects_of_one_thread_racing_for_the_next_seq_both_get_one(pg: Any) -> None:
    """Two processes reserve different effects of one thread at once on PostgreSQL (READ COMMITTED): both
    compute the same next seq and one loses on UNIQUE (thread_id, seq). The loser retries and takes the
    next one: both effects fire, once each, in one total order."""
    import psycopg

    from remit_ref import EffectLedger

    dsn = pg.fresh_dsn("seqrace")
    led = EffectLedger(dsn)
    other = psycopg.connect(dsn)  # the other process, mid-transaction: seq 1 taken, not yet committed
    other.execute("INSERT INTO remit_effects (thread_id, task, effect_id, seq, status, result, owner) "
                  "VALUES ('t', 'b', 'e', 1, 'pending', NULL, 'other')")
    out: list[Any] = []
    ours = threading.Thread(target=lambda: out.append(led.once("t", "a", "e", lambda: "fired")))
    ours.start()
    with psycopg.connect(dsn, autocommit=True) as watch:  # our insert waits on the other's seq 1
        for _ in range(6000):
            if watch.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                             "AND wait_event_type = 'Lock'").fetchone()[0]:
                break
            time.sleep(0.005)
        else:
            pytest.fail("the reservation never waited on the other transaction")
    other.commit()
    ours.join(timeout=120)
    assert out == ["fired"]
    assert [(e["seq"], e["task"]) for e in led.entries("t")] == [(1, "b"), (2, "a")]
    other.close()
    led.close()


def test_gate_on_an_async_saver_asks_for_a_claim_store_of_its_own() -> None:
    """The async savers' connections cannot serve the synchronous claim: claims_for refuses them with the
    remedy (sqlite_claims / postgres_claims) instead of a claim store that would fail at the first resume."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    for cls in (AsyncPostgresSaver, AsyncSqliteSaver):
        with pytest.raises(TypeError, match=f"async {cls.__name__}: pass claims=remit_ref.claims.sqlite_claims"):
            cl.claims_for(cls.__new__(cls))


def test_a_dict_answer_is_an_answer_and_the_gate_claims_its_interrupt(tmp_path: Path) -> None:
    """Command(resume={"approved": True}) answers the one pending interrupt with a dict (a form); it is not a
    resume map (its keys are not interrupt ids), so the gate claims that interrupt and a second resume of
    the same checkpoint is refused."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    from remit_ref import ConsumeConflict, wrap

    class Form(TypedDict, total=False):
        approved: bool

    g = StateGraph(Form)
    g.add_node("ask", lambda s: {"approved": interrupt("approve?")["approved"]})
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    base = InMemorySaver()
    saver = wrap(base, consume_gate=True)
    app = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "form"}}
    app.invoke({}, cfg)
    interrupted = app.get_state(cfg)
    assert app.invoke(Command(resume={"approved": True}), cfg) == {"approved": True}
    assert [c["interrupt_id"] for c in saver.claims("form")] == [interrupted.interrupts[0].id]
    with pytest.raises(ConsumeConflict):
        app.invoke(Command(resume={"approved": False}), interrupted.config | {"configurable": {
            **interrupted.config["configurable"], "remit_intent": "retry"}})


def test_release_stale_claims_leaves_owners_on_other_hosts(tmp_path: Path) -> None:
    """Liveness of a process on another host cannot be checked from here: release_stale_claims never
    releases its claim (claim_ttl or release_claims are the ways to free it)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import wrap

    saver = wrap(InMemorySaver(), consume_gate=True)
    saver._claims.try_insert(("t", "", "c", "i"), cl.Owner("elsewhere/7/1/n", "elsewhere", 7, "1"))
    assert saver.release_stale_claims() == 0 and saver.release_stale_claims("t") == 0
    assert [c["owner_alive"] for c in saver.claims()] == [None]
    assert saver.release_claims("t") == 1


def test_sqlite_claim_refused_by_the_connections_authorizer_reports_the_databases_error(tmp_path: Path) -> None:
    """An application may restrict what its connection runs (sqlite3's authorizer). A claim whose first
    statement is refused fails with the database's own error, nothing half done."""
    conn = sqlite3.connect(_ckpt_file(tmp_path / "auth.sqlite"), check_same_thread=False)
    conn.set_authorizer(lambda action, *_: sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_PRAGMA
                        else sqlite3.SQLITE_OK)
    store = cl.SqliteClaims(conn, threading.Lock())
    with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
        store.try_insert(("t", "", "c", "i"), cl.Owner.new())
    conn.set_authorizer(None)
    assert not conn.in_transaction
    assert conn.execute("SELECT count(*) FROM writes").fetchone()[0] == 0


# ---- pid reuse, however the new process is named ---------------------------------------------------------------


def test_a_pid_reused_by_a_later_process_is_not_the_owner() -> None:
    """The claim recorded the owner's start time; the pid now belongs to a process that started later
    (a larger start time, as the kernel's clock only grows): the owner is dead."""
    me = os.getpid()
    start = cl.process_start(me)
    earlier = str(int(start) - 1)
    assert cl.owner_alive(cl.HOST, me, earlier) is False
    assert cl.owner_alive(cl.HOST, me, start) is True


def test_start_time_of_a_process_whose_name_has_parentheses(tmp_path: Path) -> None:
    """/proc/<pid>/stat puts the process name in parentheses and the name may itself contain ')': a process
    that renames itself so keeps its start time, and a pid reused by such a process is still told apart."""
    import subprocess
    import sys

    code = ("import sys, time\n"
            "print('started', flush=True)\n"
            "sys.stdin.readline()\n"
            "open('/proc/self/comm', 'w').write('w) x) y')\n"
            "print('renamed', flush=True)\n"
            "sys.stdin.readline()\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "started"
        before = cl.process_start(child.pid)
        child.stdin.write("rename\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "renamed"
        assert Path(f"/proc/{child.pid}/comm").read_text().strip() == "w) x) y"
        assert before.isdigit() and cl.process_start(child.pid) == before
        assert cl.owner_alive(cl.HOST, child.pid, before) is True
        assert cl.owner_alive(cl.HOST, child.pid, str(int(before) - 1)) is False  # the pid's earlier owner
    finally:
        child.stdin.close()
        child.wait(timeout=60)


def test_resolve_refuses_an_effect_that_never_started(tmp_path: Path) -> None:
    from remit_ref import EffectLedger

    for target in (None, tmp_path / "never.sqlite"):
        led = EffectLedger(target)
        with pytest.raises(ValueError, match="is not in doubt \\(status None\\)"):
            led.resolve("t", "a", "e", fired=True)
        assert led.status("t", "a", "e") is None and led.entries("t") == []
        led.close()


def test_a_fresh_input_on_an_interrupted_thread_takes_no_claim() -> None:
    """Only a resume consumes an interrupt: new input sent to a thread parked at an interrupt (the
    application starting over) runs as on the stock saver and takes no claim."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from remit_ref import wrap

    saver = wrap(InMemorySaver(), consume_gate=True)
    app = _app(saver)
    cfg = {"configurable": {"thread_id": "fresh"}}
    app.invoke({"value": 1}, cfg)
    app.invoke({"value": 10}, cfg)
    assert saver.claims() == []
    assert app.invoke(Command(resume=True), cfg)["value"] == 11
    assert len(saver.claims("fresh")) == 1


# ---- what the package exports, and other small contracts ---------------------------------------------------------


def test_package_exports_only_its_names_and_the_lazy_ledger() -> None:
    """``remit_ref.EffectLedger`` is imported on first use; any other missing name is an AttributeError
    (whatever it sorts before or after), so ``hasattr`` and ``from remit_ref import ...`` tell the truth."""
    import importlib

    import remit_ref
    from remit_ref.ledger import EffectLedger

    assert remit_ref.EffectLedger is EffectLedger
    module, _, attr = "remit_ref:EffectLedger".partition(":")  # a spec read from configuration
    assert getattr(importlib.import_module(module), attr) is EffectLedger
    for name in ("Checkpointer", "ClaimStore", "EffectLedger2", "Effect", "ledger_for", "wrap_all", "__wrapped__"):
        assert not hasattr(remit_ref, name), name
    with pytest.raises(ImportError):
        exec("from remit_ref import Checkpointer", {})
    assert set(remit_ref.__all__) <= set(dir(remit_ref)) | {"EffectLedger"}


def test_pg_closed_without_a_connection_to_inspect_judges_by_the_error() -> None:
    """A saver that exposes no connection (only a cursor factory) is closed only if its error says so."""
    assert not cl._pg_closed(object(), RuntimeError("server terminated abnormally"))
    assert cl._pg_closed(object(), RuntimeError("the connection is closed"))


def test_two_takers_of_a_claim_of_a_dead_process_yield_one_winner(tmp_path: Path) -> None:
    """Both saw the dead owner; the first takeover wins and the second, still conditional on the dead
    owner, fails -- whatever the owners' tokens are, in memory as in SQLite."""
    dead = cl.Owner("mm-host/1/1/dead", "mm-host", 1, "1")
    for n, first_token in enumerate(("aa-host/2/2/first", "zz-host/2/2/first")):  # before / after the dead owner
        first = cl.Owner(first_token, first_token.split("/")[0], 2, "2")
        second = cl.Owner("nn-host/3/3/second", "nn-host", 3, "3")
        for kind, store in (("memory", cl.MemoryClaims()),
                            ("sqlite", cl.sqlite_claims(_ckpt_file(tmp_path / f"two{n}.sqlite")))):
            key = ("t", "", "c", "i")
            assert store.try_insert(key, dead)
            assert store.take_over(key, dead.token, first) is True, kind
            assert store.take_over(key, dead.token, second) is False, (kind, first_token)
            assert store.read(key).owner == first.token, kind


def test_delegate_unwrapping_is_bounded() -> None:
    """Six delegates deep, the stock saver is found; the walk is bounded (like a cyclic chain), so a saver
    hidden under seven is not found and claims_for says so instead of guessing."""
    from langgraph.checkpoint.memory import InMemorySaver

    class Delegate:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

    mem = InMemorySaver()
    chain: Any = mem
    for _ in range(6):
        chain = Delegate(chain)
    assert cl.underlying(chain) is mem
    seven = Delegate(chain)
    assert cl.underlying(seven) is not mem and cl.underlying(seven).inner is mem  # stopped one short
    with pytest.raises(TypeError, match="Delegate is not one: pass claims="):
        cl.claims_for(seven)


def test_ledger_records_results_as_canonical_json(tmp_path: Path) -> None:
    """The recorded result is canonical (sorted keys): equal results are stored as the same text, and a
    replay returns them in that one order, whatever order the effect built them in."""
    from remit_ref import EffectLedger

    path = tmp_path / "canon.sqlite"
    led = EffectLedger(path)
    assert led.once("t", "a", "e", lambda: {"z": 1, "a": {"y": 2, "b": 3}}) == {"z": 1, "a": {"y": 2, "b": 3}}
    led.once("t", "b", "e", lambda: {"a": {"b": 3, "y": 2}, "z": 1})
    with sqlite3.connect(str(path)) as conn:
        texts = [r[0] for r in conn.execute("SELECT result FROM remit_effects ORDER BY seq")]
    assert texts == ['{"a": {"b": 3, "y": 2}, "z": 1}'] * 2
    replayed = led.once("t", "a", "e", lambda: None)
    assert list(replayed) == ["a", "z"] and list(replayed["a"]) == ["b", "y"]
    led.close()


def test_claim_rows_handed_out_cannot_alter_the_store(tmp_path: Path) -> None:
    """read() and all_rows() hand out claim rows (the memory store its own objects): they are immutable
    values, so a caller cannot change a claim behind the store's back, and they can be compared and hashed;
    so is the Owner a resume claims as."""
    import dataclasses

    store = cl.MemoryClaims()
    owner = cl.Owner.new()
    store.try_insert(("t", "", "c", "i"), owner)
    row = store.read(("t", "", "c", "i"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.owner = "someone-else"  # type: ignore[misc]
    assert store.read(("t", "", "c", "i")).owner == owner.token
    assert len({row, store.all_rows("t")[0][1]}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        owner.token = "someone-else"  # type: ignore[misc]
    assert len({owner, cl.Owner(owner.token, owner.host, owner.pid, owner.pstart)}) == 1


def test_every_attribute_of_the_wrapped_saver_is_reachable_through_the_wrapper(tmp_path: Path) -> None:
    """Drop-in: whatever the wrapper does not define itself is the wrapped saver's, public or private
    (InMemorySaver's _load_blobs, SqliteSaver's conn and lock, ...), whatever its name."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import RemitSaver, wrap

    for base in (InMemorySaver(), _sqlite_base(tmp_path / "attrs.sqlite")):
        saver = wrap(base)
        names = [n for n in dir(base) if not n.startswith("__") and not hasattr(RemitSaver, n)]
        assert names, type(base).__name__
        for name in names:
            assert getattr(saver, name) == getattr(base, name), name


def test_ledger_sequence_numbers_have_no_gaps(tmp_path: Path) -> None:
    """Each thread's effects are numbered 1, 2, 3, ... in the order they were reserved, whatever other threads
    do meanwhile, in memory as in SQLite."""
    from remit_ref import EffectLedger

    for target in (None, tmp_path / "gapless.sqlite"):
        led = EffectLedger(target)
        for task in ("a", "b", "c", "d", "e"):
            led.once("t", task, "x", lambda: task)
            led.once("s", task, "x", lambda: task)  # another thread's effects, in between (its id sorts first)
        for thread in ("s", "t"):
            assert [(e["seq"], e["task"]) for e in led.entries(thread)] == list(enumerate("abcde", 1)), target
        led.close()


def test_a_release_that_lost_the_race_to_a_takeover_deletes_nothing(tmp_path: Path) -> None:
    """release_stale_claims deletes conditionally on the dead owner it saw: if a resume took the claim over
    in between, the release deletes nothing -- whatever the owners' tokens are, in memory as in SQLite."""
    for dead_token, winner_token in (("aa-host/1/1/dead", "zz-host/2/2/winner"),
                                     ("zz-host/1/1/dead", "aa-host/2/2/winner")):
        dead = cl.Owner(dead_token, dead_token.split("/")[0], 1, "1")
        winner = cl.Owner(winner_token, winner_token.split("/")[0], 2, "2")
        for kind, store in (("memory", cl.MemoryClaims()),
                            ("sqlite", cl.sqlite_claims(_ckpt_file(tmp_path / f"{dead_token[:2]}.sqlite")))):
            key = ("t", "", "c", "i")
            store.try_insert(key, dead)
            assert store.take_over(key, dead.token, winner)
            assert store.delete(key, dead.token) == 0, (kind, dead_token)
            assert store.read(key).owner == winner.token, kind


def test_options_are_named_at_the_call_site() -> None:
    """wrap(saver, consume_gate=True): every option is keyword-only (a bare True/False is refused), on
    wrap and on RemitSaver alike; the saver may be passed by name."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import RemitSaver, wrap

    for make in (wrap, RemitSaver):
        with pytest.raises(TypeError):
            make(InMemorySaver(), False)  # type: ignore[misc]
    assert RemitSaver(base=InMemorySaver(), consume_gate=True).consume_gate is True
    assert wrap(base_saver=InMemorySaver(), fork_intent=False).fork_intent is False


def test_claims_of_one_thread_are_listed_and_released_alone(tmp_path: Path) -> None:
    """claims(thread) and release_claims(thread) (an operator's override) touch that thread only, never
    the threads whose ids sort before or after it, in memory as in SQLite."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import wrap

    for kind, store in (("memory", cl.MemoryClaims()), ("sqlite", cl.sqlite_claims(_ckpt_file(tmp_path / "one.sqlite")))):
        saver = wrap(InMemorySaver(), consume_gate=True, claims=store)
        for thread in ("s", "t", "u"):
            store.try_insert((thread, "", "c", "i"), cl.Owner.new())
        assert [c["thread_id"] for c in saver.claims("t")] == ["t"], kind
        assert saver.release_claims("t") == 1, kind
        assert [c["thread_id"] for c in saver.claims()] == ["s", "u"], kind


def test_an_interrupt_beside_a_sibling_nodes_completed_write_is_claimed() -> None:
    """Two parallel nodes: one completes (its write -- messages, which carry ids of their own -- is pending
    at the checkpoint, listed first), the other interrupts. The resume claims that interrupt, and only it;
    a second resume of it is refused."""
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    from remit_ref import ConsumeConflict, wrap

    class P(TypedDict, total=False):
        Log: list    # channel names sorting before and after "__interrupt__"
        notes: list
        b: int

    base = InMemorySaver()
    x_saved = threading.Event()  # the order of the pending writes is the order the tasks finished in:
    stock_put_writes = base.put_writes  # y interrupts only once x's write is saved, so x's is listed first

    def put_writes(config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        stock_put_writes(config, writes, task_id, task_path)
        if any(channel == "Log" for channel, _ in writes):
            x_saved.set()

    base.put_writes = put_writes  # type: ignore[method-assign]

    def y(s: P) -> dict:
        assert x_saved.wait(60), "x's write never reached the saver"
        return {"b": interrupt("b")}

    g = StateGraph(P)
    g.add_node("x", lambda s: {"Log": [AIMessage(content="done", id="msg-1")],
                               "notes": [AIMessage(content="seen", id="msg-2")]})
    g.add_node("y", y)
    for n in ("x", "y"):
        g.add_edge(START, n)
        g.add_edge(n, END)
    saver = wrap(base, consume_gate=True)
    app = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "par"}}
    app.invoke({}, cfg)
    interrupted = app.get_state(cfg)
    assert [w[1] for w in base.get_tuple(cfg).pending_writes] == ["Log", "notes", "__interrupt__"]
    assert app.invoke(Command(resume=2), cfg)["b"] == 2
    assert [c["interrupt_id"] for c in saver.claims("par")] == [interrupted.interrupts[0].id]
    retry = {"configurable": {**interrupted.config["configurable"], "remit_intent": "retry"}}
    with pytest.raises(ConsumeConflict):
        app.invoke(Command(resume=3), retry)


def _age_claims(conn: sqlite3.Connection, seconds: float) -> None:
    """Make every claim in a SQLite checkpoint file ``seconds`` older (its time is inside the row's JSON)."""
    conn.execute("UPDATE writes SET value = CAST(json_set(CAST(value AS TEXT), '$.claimed_at', "
                 "json_extract(CAST(value AS TEXT), '$.claimed_at') - ?) AS BLOB) WHERE channel = ?",
                 (seconds, cl.CLAIM_CHANNEL))
    conn.commit()


def test_a_lease_expires_after_its_ttl_whatever_its_length(tmp_path: Path) -> None:
    """claim_ttl=3600: a claim by another host (liveness unknown) written two hours ago is taken over;
    one written half an hour ago still blocks."""
    from langgraph.types import Command

    from remit_ref import ConsumeConflict, wrap

    base = _sqlite_base(tmp_path / "hour.sqlite")
    app = _app(wrap(base, consume_gate=True, claim_ttl=3600))
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    key, _ = _paused_claim_key(base, cfg)
    store = cl.claims_for(base)
    store.try_insert(key, cl.Owner("elsewhere/1/1/nonce", "elsewhere", 1, "1"))
    _age_claims(base.conn, 1800)
    with pytest.raises(ConsumeConflict):
        app.invoke(Command(resume=True), cfg)
    _age_claims(base.conn, 5400)
    assert app.invoke(Command(resume=True), cfg)["value"] == 2
    assert store.read(key).host == cl.HOST


def test_read_inspection_never_fails_when_the_stack_is_shorter_than_its_start() -> None:
    """The frame walk starts a fixed number of frames up; a read with fewer callers than that (called from
    the top of a thread, or by C code) is a plain read, never an error."""
    from remit_ref._langgraph import inspect_read

    ctx = inspect_read({"configurable": {"__pregel_runtime": object()}}, start_depth=100_000)
    assert ctx.execution and not ctx.found_loop and not ctx.resume and ctx.graph is None


def test_an_owner_on_any_other_host_is_of_unknown_liveness() -> None:
    """Only this host's processes can be checked: an owner on any other host is None (unknown), whatever
    its name sorts as against ours -- never a local pid lookup of a remote process."""
    me, start = os.getpid(), cl.process_start(os.getpid())
    for host in ("", "0", cl.HOST + "-2", cl.HOST[:-1], "~" + cl.HOST):
        assert host != cl.HOST
        assert cl.owner_alive(host, me, start) is None, host


def test_closing_a_sqlite_ledger_releases_its_database(tmp_path: Path) -> None:
    """close() closes the ledger's connection: SQLite checkpoints and removes its WAL file, and a later use
    of the closed ledger fails loudly instead of writing."""
    from remit_ref import EffectLedger

    path = tmp_path / "closing.sqlite"
    led = EffectLedger(path)
    led.once("t", "a", "e", lambda: 1)
    assert Path(str(path) + "-wal").exists()
    led.close()
    assert not Path(str(path) + "-wal").exists()
    with pytest.raises(sqlite3.ProgrammingError):
        led.once("t", "b", "e", lambda: 2)


class Unresolvable(TypedDict):
    value: int
    later: "NotDefinedAnywhere"  # noqa: F821 - a forward reference nothing resolves


def test_a_schema_class_whose_annotations_cannot_be_resolved_is_refused_at_wrap() -> None:
    """validator=<class>: a TypedDict whose annotations cannot be resolved is refused at wrap time, before
    anything is written, with a TypeError that names the unresolved reference (not "not a schema")."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import wrap
    from remit_ref._langgraph import schema_checker

    with pytest.raises(TypeError, match="annotations of Unresolvable cannot be resolved .NameError: .*NotDefined"):
        schema_checker(Unresolvable)
    with pytest.raises(TypeError, match="annotations of Unresolvable cannot be resolved"):
        wrap(InMemorySaver(), validator=Unresolvable)


def test_closing_a_ledger_on_a_database_server_closes_its_connection(pg: Any) -> None:
    """close() of a ledger on a DSN closes its connection: a later use of the closed ledger fails loudly
    instead of writing, and what it recorded stays."""
    import psycopg

    from remit_ref import EffectLedger

    dsn = pg.fresh_dsn("closing")
    led = EffectLedger(dsn)
    led.once("t", "a", "e", lambda: 1)
    led.close()
    with pytest.raises(psycopg.OperationalError, match="closed"):
        led.once("t", "b", "e", lambda: 2)
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM remit_effects").fetchone()[0] == 1


# ---- the validator's exact-type shortcut, the per-graph checker memo, remit_resume without frames -------------

_HINTS = (int, str, float, bool, bytes, list[int], list[str], list[float], list[bool], list[bytes])


@pytest.mark.parametrize("hint", _HINTS, ids=lambda h: getattr(h, "__name__", str(h)))
def test_the_exact_type_shortcut_accepts_only_what_pydantic_accepts(hint: Any) -> None:
    """exact_type_test(hint) may accept a value only if pydantic's TypeAdapter(hint) accepts it, and it does
    accept every value of exactly the annotated type; so a checker with the shortcut decides (and explains)
    exactly as one without it. Checked over generated values of many types, including near misses
    (bool for int, int for float, str subclasses, tuples for lists, lists with one wrong item)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from pydantic import TypeAdapter, ValidationError

    from remit_ref._langgraph import SchemaChecker, exact_type_test

    class Text(str):
        pass

    scalar = st.one_of(st.integers(), st.text(max_size=3), st.floats(), st.booleans(), st.binary(max_size=3),
                       st.none(), st.text(max_size=3).map(Text))
    value_st = st.one_of(scalar, st.lists(scalar, max_size=4), st.lists(scalar, max_size=4).map(tuple),
                         st.dictionaries(st.text(max_size=2), scalar, max_size=2))
    test = exact_type_test(hint)
    assert test is not None
    adapter = TypeAdapter(hint)
    with_shortcut = SchemaChecker({"f": adapter}, name="S", exact={"f": test})
    without = SchemaChecker({"f": adapter}, name="S")

    def pydantic_accepts(value: Any) -> bool:
        try:
            adapter.validate_python(value)
        except ValidationError:
            return False
        return True

    @settings(max_examples=300, deadline=None, database=None)
    @given(value_st)
    def agree(value: Any) -> None:
        if test(value):
            assert pydantic_accepts(value), (hint, value)
        assert with_shortcut.check("f", value) == without.check("f", value)
    agree()
    origin = getattr(hint, "__origin__", None)
    item = hint.__args__[0] if origin is list else hint
    exact_value = {int: 3, str: "s", float: 1.5, bool: True, bytes: b"b"}[item]
    assert test([exact_value, exact_value] if origin is list else exact_value)
    assert not test([exact_value, None] if origin is list else None)


def test_the_exact_type_shortcut_covers_only_plain_scalars_and_their_lists() -> None:
    """Every other annotation (unions, optionals, nested or two-argument generics, models, Any) has no
    shortcut: pydantic decides every value there."""
    from typing import List, Optional, Union

    from remit_ref._langgraph import exact_type_test

    for hint in (Optional[int], Union[int, str], list[list[int]], dict[str, int], tuple[int, ...], set[str],
                 Any, St, list, List, object, type(None), list[Any]):
        assert exact_type_test(hint) is None, hint


def test_a_state_schema_check_skips_pydantic_for_exact_types_and_still_rejects(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker of a graph's schema answers exact-typed values without calling pydantic, and still gives
    pydantic's reason for a value of another type."""
    from pydantic import TypeAdapter

    from remit_ref._langgraph import schema_checker

    class Shape(TypedDict):
        count: int
        names: list[str]
        ratio: float | None

    checker = schema_checker(Shape)
    assert checker is not None and set(checker.exact) == {"count", "names"}
    calls: list[Any] = []
    real = TypeAdapter.validate_python
    monkeypatch.setattr(TypeAdapter, "validate_python", lambda self, v, *a, **k: (calls.append(v), real(self, v))[1])
    assert checker.check("count", 2) is None and checker.check("names", ["a", "b"]) is None and calls == []
    assert checker.check("ratio", None) is None and calls == [None]
    reason = checker.check("count", "two")
    assert reason is not None and reason.startswith("Shape.count: ") and "integer" in reason
    reason = checker.check("names", ["a", 2])
    assert reason is not None and reason.startswith("Shape.names[1]: ")


def test_what_the_exact_tests_leave_undecided_gives_the_verdict_of_checking_everything() -> None:
    """The write path hands ``core.first_invalid`` only ``SchemaChecker.undecided(values, only)``: the
    schema's values (within ``only``) that the exact tests do not accept. Over generated states (schema
    channels, a non-schema channel, near-miss values, any ``only``) the first invalid channel and its
    reason are those of checking every schema value in ``only`` with pydantic."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from remit_ref import core
    from remit_ref._langgraph import schema_checker

    class Shape(TypedDict):
        count: int
        names: list[str]
        ratio: float | None
        flag: bool

    checker = schema_checker(Shape)
    assert checker is not None and checker.exact_types == {"count": int, "flag": bool}
    scalar = st.one_of(st.integers(), st.text(max_size=2), st.floats(allow_nan=False), st.booleans(), st.none())
    value_st = st.one_of(scalar, st.lists(scalar, max_size=3))
    channels = ("count", "names", "ratio", "flag", "branch:to:x")

    @settings(max_examples=400, deadline=None, database=None)
    @given(st.dictionaries(st.sampled_from(channels), value_st),
           st.one_of(st.none(), st.frozensets(st.sampled_from(channels))))
    def agree(values: dict[str, Any], only: frozenset[str] | None) -> None:
        left = checker.undecided(values, only)
        assert set(left) <= set(values) and all(left[ch] is values[ch] for ch in left)
        everything = {ch: v for ch, v in values.items() if ch in checker.adapters and (only is None or ch in only)}
        assert core.first_invalid(left, checker.check) == core.first_invalid(everything, checker.check)
    agree()
    assert checker.undecided({"count": 1, "names": ["a"], "flag": True, "branch:to:x": None}) == {}
    assert checker.undecided({"count": True, "ratio": 0.5}) == {"count": True, "ratio": 0.5}  # bool is not int
    assert checker.undecided({"count": "x", "names": [1]}, frozenset({"names"})) == {"names": [1]}


def test_each_graph_remembers_its_checker_and_an_unhashable_graph_still_gets_one() -> None:
    """graph_checker memoises per graph object (a second lookup lists no channels) and builds a checker for
    a graph-like object that cannot be hashed (a subclass defining __eq__) instead of failing the read."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref._langgraph import graph_checker

    app = _app(InMemorySaver())
    first = graph_checker(app)
    assert first is not None and "value" in first.adapters and first.plain_channels == frozenset({"value"})
    channels = app.channels
    app.channels = None  # a memo hit does not look at the channels again
    try:
        assert graph_checker(app) is first
    finally:
        app.channels = channels

    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

        def __init__(self) -> None:
            self.builder = app.builder
            self.channels = channels

    checker = graph_checker(Unhashable())
    assert checker is first  # the same (schema, plain channels) -> the same checker
    assert graph_checker(object()) is None  # no builder, no schema


def test_remit_resume_is_honoured_when_the_frame_walk_cannot_start() -> None:
    """configurable["remit_resume"]=True forces the resume path even when no calling frame can be read (a
    read from the top of a thread, or from C code): the flag does not depend on the walk."""
    from remit_ref._langgraph import inspect_read

    ctx = inspect_read({"configurable": {"__pregel_runtime": object(), "remit_resume": True}}, start_depth=100_000)
    assert ctx.execution and ctx.resume and not ctx.found_loop


def test_async_sqlite_writes_on_a_closed_connection_raise_store_closed(tmp_path: Path) -> None:
    """AsyncSqliteSaver (aiosqlite) says "Connection closed" with a bare ValueError: the wrapper's async
    read and both async writes turn it into StoreClosed naming the saver; other ValueErrors pass through."""
    import asyncio

    import aiosqlite

    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from remit_ref import StoreClosed, wrap

    async def use_after_close() -> None:
        conn = await aiosqlite.connect(str(tmp_path / "aclosed.sqlite"))
        base = AsyncSqliteSaver(conn)
        await base.setup()
        saver = wrap(base, validator=False)
        cfg = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c"}}
        await conn.close()
        match = "connection of the wrapped AsyncSqliteSaver is closed"
        with pytest.raises(StoreClosed, match=match):
            await saver.aget_tuple({"configurable": {"thread_id": "t"}})
        with pytest.raises(StoreClosed, match=match):
            await saver.aput(cfg, empty_checkpoint(), {}, {})
        with pytest.raises(StoreClosed, match=match):
            await saver.aput_writes(cfg, [("value", 1)], "task")
    asyncio.run(use_after_close())
    saver = wrap(AsyncSqliteSaver.__new__(AsyncSqliteSaver), validator=False)
    assert saver._closed(ValueError("Connection closed")) is not None
    assert saver._closed(ValueError("Connection closed.")) is None and saver._closed(KeyError("closed")) is None


# ---- the frame walk's order, types compared by identity, a liveness probe that sends no signal --------------


def test_the_walk_takes_the_nearest_loop_and_only_a_graph_above_it() -> None:
    """The loop that decides is the nearest PregelLoop.__enter__ below the read (an enclosing loop's input
    is another run's), and a graph frame counts only above that loop: a read from inside a graph's
    stream with no loop below it (a node reading a checkpoint with its own config) finds no graph."""
    from langgraph.pregel._loop import PregelLoop
    from langgraph.types import Command

    from remit_ref._langgraph import inspect_read

    config = {"configurable": {"__pregel_runtime": object()}}

    class Loop(PregelLoop):
        def __init__(self, inp: Any, inner: Any = None) -> None:  # no PregelLoop.__init__: only .input is read
            self.input = inp
            self.inner = inner

        def __enter__(self) -> Any:
            if self.inner is not None:
                return self.inner.__enter__()
            return inspect_read(config, start_depth=1)

    nearest_resumes = Loop({"fresh": 1}, Loop(Command(resume=1))).__enter__()
    assert nearest_resumes.found_loop and nearest_resumes.resume
    nearest_fresh = Loop(Command(resume=1), Loop({"fresh": 1})).__enter__()
    assert nearest_fresh.found_loop and not nearest_fresh.resume

    class Graph:
        channels: dict[str, Any] = {}

        def stream(self) -> Any:
            return inspect_read(config, start_depth=1)

    no_loop = Graph().stream()
    assert no_loop.execution and not no_loop.found_loop and no_loop.graph is None


def test_a_read_of_another_address_inside_the_loops_start_is_plain() -> None:
    """Only the loop's read of its own checkpoint (``loop.checkpoint_config``, or a forwarding saver's copy of
    it) is the resume's; LangGraph 1.2.24's second read in ``__enter__`` (the thread's latest checkpoint, to tell
    whether the addressed one was superseded) is plain, even with ``remit_resume`` (see
    tests/test_remit_langgraph_reads.py)."""
    from langgraph.pregel._loop import PregelLoop
    from langgraph.types import Command

    from remit_ref._langgraph import inspect_read

    runtime = object()
    own = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1", "__pregel_runtime": runtime,
                            "remit_resume": True}}
    latest = {"configurable": {**own["configurable"], "checkpoint_id": None}}
    # a forwarding saver's copy of the loop's config (an equal id, not the same object: compared by value)
    copied = {"configurable": {**own["configurable"], "checkpoint_id": "".join(["c", "1"])}}

    class Loop(PregelLoop):
        def __init__(self, read: dict[str, Any], checkpoint_config: Any = None) -> None:  # only what is read
            self.input = Command(resume=1)
            self.read = read
            if checkpoint_config is not None:
                self.checkpoint_config = checkpoint_config

        def __enter__(self) -> Any:
            return inspect_read(self.read, start_depth=1)

    mine = Loop(own, own).__enter__()
    assert mine.found_loop and mine.resume and mine.resume_write is not None
    assert Loop(copied, own).__enter__().resume
    other = Loop(latest, own).__enter__()
    assert other.execution and other.found_loop and not other.resume and other.resume_write is None
    for key, value in (("thread_id", "u"), ("checkpoint_ns", "sub"), ("checkpoint_id", "c0")):
        assert not Loop({"configurable": {**own["configurable"], key: value}}, own).__enter__().resume, key
    assert Loop(latest).__enter__().resume  # a loop without checkpoint_config is not second-guessed


class _EqualsAnything(type):
    """A metaclass whose classes compare equal to every class: `type(v) == int` holds, `type(v) is int` not."""

    def __eq__(cls, other: object) -> bool:
        return True

    __hash__ = type.__hash__


class _Impostor(metaclass=_EqualsAnything):
    pass


def test_the_exact_type_shortcut_compares_types_by_identity() -> None:
    """A value (or a list item) whose class claims equality with every class is not of exactly the annotated
    type: the shortcut leaves it to pydantic, which rejects it; a hint whose origin claims to equal list, or
    a list annotation with two arguments (accepted at runtime), has no shortcut."""
    from pydantic import TypeAdapter

    from remit_ref._langgraph import SchemaChecker, exact_type_test

    assert type(_Impostor()) == int and type(_Impostor()) is not int  # noqa: E721 - the point of the test
    for hint, value in ((int, _Impostor()), (str, _Impostor()), (list[int], [1, _Impostor()])):
        test = exact_type_test(hint)
        assert test is not None and not test(value), hint
        checker = SchemaChecker({"f": TypeAdapter(hint)}, name="S", exact={"f": test})
        assert checker.check("f", value) is not None, hint
    assert not exact_type_test(list[int])(_Impostor())  # not a list at all, though its class "equals" list

    class FakeListHint:
        __origin__ = _Impostor
        __args__ = (int,)
    assert exact_type_test(FakeListHint()) is None
    assert exact_type_test(list[int, str]) is None  # type: ignore[misc] - two arguments, as the runtime allows


def test_checking_an_owner_alive_sends_it_no_signal() -> None:
    """owner_alive probes a live owner with signal 0 (existence only): the owner, a process that does not
    ignore SIGHUP or any other signal, is still there and answers afterwards."""
    import subprocess
    import sys

    code = ("import signal, sys\n"
            "for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM): signal.signal(s, signal.SIG_DFL)\n"
            "print('ready', flush=True)\n"
            "print(sys.stdin.readline().strip() + ' back', flush=True)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "ready"
        assert cl.owner_alive(cl.HOST, child.pid, cl.process_start(child.pid)) is True
        child.stdin.write("ping\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "ping back"  # a signalled child would have died: EOF
        assert child.wait(timeout=60) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
