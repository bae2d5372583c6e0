"""Write ownership (issue 28, item 3): a superseded run's writes are refused, with a real SIGSTOP'd worker.

The scenario of langchain-ai/langgraph#8796, on a real SqliteSaver file and a real
PostgreSQL (embedded): worker A (a fresh interpreter) starts ``first -> slow -> last``,
writes its checkpoints up to ``slow`` and, inside ``slow``, reaches a pause point where
the test freezes it with SIGSTOP (deterministic: the child says it is there, then it is
stopped; no sleep). Worker B (another interpreter) takes the run over with
``invoke(None)`` and completes it. Then A gets SIGCONT and goes on. Each clause of
``remit_ref.ownership`` is checked on what the store holds afterwards, read back raw:

* W1/W2 A's ``put`` / ``put_writes`` are refused (``WriteSuperseded``) and not durable:
  every table of the store is, row for row, what it was when B had finished;
* W3 one linear chain: no checkpoint has two children;
* W4 B's writes (its checkpoints, its pending writes at the checkpoint A was working on)
  read back unchanged, and the thread's head is B's;
* no effect fires again: A's late path fires nothing (``last`` fired once, by B);
* W5 A stays superseded: two more writes it makes after B's run ended are refused too.

The same scenario with ownership off is the control: there A's writes land, the chain
forks, ``last`` fires twice -- so each assertion above is one that fails without it.
Every child is killed at the end of its test, whatever happened (``PausedChild``).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any, TypedDict

import pytest

from probes.core.nemesis import PausedChild, run_child
from remit_ref import WriteSuperseded, wrap
from tests.child_targets import three_node_chain

WORKER = "tests.child_targets:ownership_worker"
THREAD = "owned-thread"
_TABLES = {"sqlite": ("checkpoints", "writes", "remit_ownership"),
           "postgres": ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "remit_ownership")}


def _store(backend: str, tmp_path: Path, pg: Any) -> str:
    return str(tmp_path / "owned.sqlite") if backend == "sqlite" else pg.fresh_dsn("owned")


def _rows(backend: str, where: str) -> dict[str, list[tuple]]:
    """Every row of every table of the store (the checkpoints', the writes', REMIT's), read raw."""
    out: dict[str, list[tuple]] = {}
    if backend == "sqlite":
        conn = sqlite3.connect(where)
        try:
            for table in _TABLES["sqlite"]:
                has = conn.execute("SELECT 1 FROM sqlite_master WHERE name=?", (table,)).fetchone()
                out[table] = sorted(map(repr, conn.execute(f"SELECT * FROM {table}"))) if has else []
        finally:
            conn.close()
        return out
    import psycopg

    with psycopg.connect(where, autocommit=True) as conn:
        for table in _TABLES["postgres"]:
            has = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()[0]
            out[table] = sorted(map(repr, conn.execute(f"SELECT * FROM {table}"))) if has else []
    return out


def _chain(backend: str, where: str) -> list[tuple[str, str | None]]:
    """(checkpoint id, parent id) of the thread's root-namespace checkpoints."""
    sql = ("SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints WHERE thread_id=%s AND checkpoint_ns=''"
           " ORDER BY checkpoint_id")
    if backend == "sqlite":
        conn = sqlite3.connect(where)
        try:
            return [tuple(r) for r in conn.execute(sql.replace("%s", "?"), (THREAD,))]
        finally:
            conn.close()
    import psycopg

    with psycopg.connect(where, autocommit=True) as conn:
        return [tuple(r) for r in conn.execute(sql, (THREAD,))]


def _forks(chain: list[tuple[str, str | None]]) -> dict[str | None, int]:
    """Parents with more than one child (a root counts as a child of None)."""
    children: dict[str | None, int] = {}
    for _cid, parent in chain:
        children[parent] = children.get(parent, 0) + 1
    return {p: n for p, n in children.items() if n > 1}


def _takeover(backend: str, where: str, tmp_path: Path, ownership: bool) -> dict[str, Any]:
    """A starts and is frozen inside ``slow``; B takes over and completes; A goes on. What each saw, and the store."""
    effects = tmp_path / "effects.txt"
    args = {"backend": backend, "where": where, "thread": THREAD, "effects": str(effects), "ownership": ownership}
    seen: dict[str, Any] = {}
    with PausedChild(WORKER, {**args, "who": "A"}, pause_at="slow") as a:
        seen["paused_at"] = a.stop()
        seen["chain_at_stop"] = _chain(backend, where)
        b = run_child(WORKER, {**args, "who": "B"}, timeout=180)
        seen["b"] = b.require_ok()
        seen["settled"] = _rows(backend, where)
        seen["effects_settled"] = effects.read_text().splitlines()
        a.resume()
        seen["a"] = a.finish(timeout=180).require_ok()
    seen["after"] = _rows(backend, where)
    seen["chain"] = _chain(backend, where)
    seen["effects"] = effects.read_text().splitlines()
    return seen


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_superseded_worker_writes_nothing_forks_nothing_and_stays_superseded(
        backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    pg = request.getfixturevalue("pg") if backend == "postgres" else None
    where = _store(backend, tmp_path, pg)
    seen = _takeover(backend, where, tmp_path, ownership=True)

    assert seen["paused_at"] == "slow#1"
    assert len(seen["chain_at_stop"]) >= 2, f"A had not written a checkpoint before it was stopped: {seen}"
    b, a = seen["b"], seen["a"]
    assert b["outcome"] == "completed" and b["values"] == {"n": 111, "by": "B"}, b
    # W1/W2: A's writes after the takeover are refused, observably ...
    assert a["outcome"] == "superseded" and a["error"] == "WriteSuperseded", a
    assert a["current_epoch"] > a["epoch"], a
    # ... and nothing A wrote after it is durable: the store is, row for row, what B left.
    assert seen["after"] == seen["settled"], "A's late writes reached the store"
    # W3: one lineage, no checkpoint with two children.
    assert not _forks(seen["chain"]), f"the chain forked: {_forks(seen['chain'])}"
    # W4: B's writes stand (unchanged rows above) and the head is B's.
    assert b["late"] == {"put_writes": "written", "put": "written"}  # B, the owner, may still write
    # no effect fires again: A's late path fired nothing; `last` ran once, in B.
    assert seen["effects"] == seen["effects_settled"], seen["effects"]
    assert [e for e in seen["effects"] if e.startswith("last")] == ["last B"]
    # W5: A stays superseded: its further writes, after B's run ended, are refused too.
    assert a["late"] == {"put_writes": "refused", "put": "refused"}, a


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_control_without_ownership_the_same_worker_forks_the_chain_and_fires_again(
        backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """What each assertion above guards against: the scenario with ``write_ownership=False``."""
    pg = request.getfixturevalue("pg") if backend == "postgres" else None
    where = _store(backend, tmp_path, pg)
    seen = _takeover(backend, where, tmp_path, ownership=False)

    assert seen["paused_at"] == "slow#1"
    a = seen["a"]
    assert a["outcome"] == "completed", a           # W1/W2 fail: A's writes were taken
    assert seen["after"] != seen["settled"]          # and are durable
    assert _forks(seen["chain"]), seen["chain"]      # W3 fails: the chain forked
    assert [e for e in seen["effects"] if e.startswith("last")] == ["last B", "last A"]  # `last` fired twice
    assert a["late"] == {"put_writes": "written", "put": "written"}  # W5 fails: nothing refuses A
    assert seen["after"]["remit_ownership"] == []    # off means off: REMIT created no table


# ---- in one process: InMemorySaver, and the rules around the flag ---------------------------------------


class _St(TypedDict):
    n: int
    by: str


def _graph(saver: Any, who: str, fired: list[str], reached: threading.Event, go: threading.Event) -> Any:

    def first(s: _St) -> dict:
        fired.append(f"first {who}")
        return {"n": s["n"] + 1, "by": who}

    def slow(s: _St) -> dict:
        fired.append(f"slow {who}")
        if who == "A":
            reached.set()
            go.wait()
        return {"n": s["n"] + 10, "by": who}

    def last(s: _St) -> dict:
        fired.append(f"last {who}")
        return {"n": s["n"] + 100, "by": who}

    return three_node_chain(_St, first, slow, last, saver)


@pytest.mark.parametrize("ownership", [True, False])
def test_in_memory_two_wrappers_of_one_saver(ownership: bool) -> None:
    """InMemorySaver: ownership among the wrappers of one saver object (A in a thread, paused on an Event)."""
    from langgraph.checkpoint.memory import InMemorySaver

    base = InMemorySaver()
    fired: list[str] = []
    reached, go = threading.Event(), threading.Event()
    app_a = _graph(wrap(base, write_ownership=ownership), "A", fired, reached, go)
    app_b = _graph(wrap(base, write_ownership=ownership), "B", fired, reached, go)
    config = {"configurable": {"thread_id": "t"}}
    outcome: dict[str, Any] = {}

    def run_a() -> None:
        try:
            outcome["a"] = app_a.invoke({"n": 0, "by": ""}, config, durability="sync")
        except WriteSuperseded as exc:
            outcome["a"] = exc

    worker = threading.Thread(target=run_a)
    worker.start()
    try:
        assert reached.wait(60)
        assert app_b.invoke(None, config, durability="sync") == {"n": 111, "by": "B"}
    finally:
        go.set()
        worker.join(60)
    parents = [t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None
               for t in base.list(config)]
    if ownership:
        assert isinstance(outcome["a"], WriteSuperseded)
        assert len(parents) == len(set(parents)), "the chain forked"
        assert fired.count("last A") == 0 and fired.count("last B") == 1
        assert app_b.get_state(config).values == {"n": 111, "by": "B"}
    else:
        assert outcome["a"] == {"n": 111, "by": "A"}
        assert len(parents) > len(set(parents)) and fired.count("last A") == 1


def test_ownership_is_opt_in_and_refuses_what_it_cannot_fence(tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = tmp_path / "opt.sqlite"
    base = SqliteSaver(sqlite3.connect(str(path), check_same_thread=False))
    base.setup()
    plain = wrap(base)
    assert plain._ownership is None
    assert base.conn.execute("SELECT 1 FROM sqlite_master WHERE name='remit_ownership'").fetchone() is None
    with pytest.raises(TypeError, match="write_ownership must be True or False"):
        wrap(base, write_ownership="yes")  # type: ignore[arg-type]

    async def wrap_async() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            with pytest.raises(TypeError, match="write_ownership=True supports"):
                wrap(saver, write_ownership=True)

    asyncio.run(wrap_async())


def test_ownership_refuses_the_async_postgres_saver_by_name(pg: Any) -> None:
    import psycopg
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async def wrap_async() -> None:
        async with await psycopg.AsyncConnection.connect(pg.fresh_dsn("own-async"), autocommit=True) as conn:
            with pytest.raises(TypeError, match="write_ownership=True supports InMemorySaver, SqliteSaver and "
                                                "PostgresSaver \\(sync\\); langgraph.checkpoint.postgres.aio"):
                wrap(AsyncPostgresSaver(conn), write_ownership=True)

    asyncio.run(wrap_async())


def test_a_takeover_waits_for_a_write_in_flight_sqlite(tmp_path: Path) -> None:
    """The check and the write are one transaction: while a fenced write is open, taking ownership cannot
    commit (it meets the write lock), so no takeover lands between an owner's check and its commit."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from remit_ref.ownership import SqliteOwnership

    path = str(tmp_path / "atomic.sqlite")
    owner = SqliteOwnership(SqliteSaver(sqlite3.connect(path, check_same_thread=False)))
    other = SqliteOwnership(SqliteSaver(sqlite3.connect(path, check_same_thread=False, timeout=0)))
    other._runner.retries = 1
    epoch = owner.take("t", "owner")
    with owner.fenced("t", epoch):
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.take("t", "taker")
    assert other.take("t", "taker") == epoch + 1
    with pytest.raises(WriteSuperseded):
        with owner.fenced("t", epoch):
            pass


def test_a_takeover_waits_for_a_write_in_flight_postgres(pg: Any) -> None:
    import psycopg

    from langgraph.checkpoint.postgres import PostgresSaver

    from remit_ref.ownership import PostgresOwnership

    dsn = pg.fresh_dsn("atomic")
    owner = PostgresOwnership(PostgresSaver(psycopg.connect(dsn, autocommit=True)))
    other_conn = psycopg.connect(dsn, autocommit=True)
    other = PostgresOwnership(PostgresSaver(other_conn))
    epoch = owner.take("t", "owner")
    other_conn.execute("SET lock_timeout = '50ms'")
    with owner.fenced("t", epoch):
        with pytest.raises(psycopg.errors.LockNotAvailable):
            other.take("t", "taker")
    assert other.take("t", "taker") == epoch + 1
    with pytest.raises(WriteSuperseded):
        with owner.fenced("t", epoch):
            pass


def test_a_resume_that_loses_the_consume_gate_does_not_supersede_the_winner() -> None:
    """With the gate on too, ownership is taken only after the claim is won: the loser's ConsumeConflict
    leaves the winner's run the owner, and the winner completes."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    from remit_ref import ConsumeConflict

    class Q(TypedDict):
        answer: str

    inside, go = threading.Event(), threading.Event()

    def ask(state: Q) -> dict:
        answer = interrupt("question")
        if answer == "winner":
            inside.set()
            go.wait()
        return {"answer": answer}

    def app(saver: Any) -> Any:
        g = StateGraph(Q)
        g.add_node("ask", ask)
        g.add_edge(START, "ask")
        g.add_edge("ask", END)
        return g.compile(checkpointer=saver)

    base = InMemorySaver()
    winner = app(wrap(base, consume_gate=True, write_ownership=True))
    loser = app(wrap(base, consume_gate=True, write_ownership=True))
    config = {"configurable": {"thread_id": "gated"}}
    winner.invoke({"answer": ""}, config, durability="sync")
    outcome: dict[str, Any] = {}

    def resume() -> None:
        try:
            outcome["winner"] = winner.invoke(Command(resume="winner"), config, durability="sync")
        except Exception as exc:  # noqa: BLE001 -- the assertion below names it
            outcome["winner"] = exc

    worker = threading.Thread(target=resume)
    worker.start()
    try:
        assert inside.wait(60)
        with pytest.raises(ConsumeConflict):
            loser.invoke(Command(resume="loser"), config, durability="sync")
    finally:
        go.set()
        worker.join(60)
    assert outcome["winner"] == {"answer": "winner"}, outcome


# --- the ownership stores and the wrapper's bookkeeping, directly (mutation/remit_ownership.toml) ----------

def _ownership_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    from remit_ref.ownership import MemoryOwnership, PostgresOwnership, SqliteOwnership

    if backend == "memory":
        return MemoryOwnership()
    if backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver
        return SqliteOwnership(SqliteSaver(sqlite3.connect(tmp_path / "own.sqlite", check_same_thread=False)))
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    conn = psycopg.connect(request.getfixturevalue("pg").fresh_dsn("own"), autocommit=True, prepare_threshold=0)
    request.addfinalizer(conn.close)
    return PostgresOwnership(PostgresSaver(conn))


@pytest.mark.parametrize("backend", ["memory", "sqlite", "postgres"])
def test_epochs_start_at_one_grow_by_one_and_a_refusal_names_who_owns_the_thread(
        backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    store = _ownership_store(backend, tmp_path, request)
    assert store.current("t") == (None, None)
    with pytest.raises(WriteSuperseded) as nobody:  # a thread nobody took: no write is fenced by a made-up epoch
        with store.fenced("t", 1):
            pass
    assert (nobody.value.epoch, nobody.value.current_epoch, nobody.value.current_owner) == (1, None, None)
    assert (store.take("t", "a"), store.take("t", "b")) == (1, 2)
    assert store.current("t") == (2, "b") and store.current("other") == (None, None)
    with store.fenced("t", 2):  # the owner's write goes through
        pass
    for stale in (1, 3):  # an earlier epoch, and one nobody took yet
        with pytest.raises(WriteSuperseded) as refused:
            with store.fenced("t", stale):
                pass
        assert (refused.value.epoch, refused.value.current_epoch, refused.value.current_owner) == (stale, 2, "b")


@pytest.mark.parametrize("method", ["write", "awrite"])
def test_a_wrapper_fences_only_the_threads_it_took_and_asks_the_store_once_it_lost_one(method: str) -> None:
    """The same bookkeeping for the synchronous writes and the async ones (InMemorySaver's)."""
    from remit_ref.ownership import MemoryOwnership, WriteOwnership

    class Counting(MemoryOwnership):
        def __init__(self) -> None:
            super().__init__()
            self.fenced_calls = 0

        def fenced(self, thread_id: str, epoch: int) -> Any:
            self.fenced_calls += 1
            return super().fenced(thread_id, epoch)

    def write(own: WriteOwnership, config: dict, fn: Any) -> Any:
        if method == "write":
            return own.write(config, fn)

        async def later() -> Any:
            return fn()
        return asyncio.run(own.awrite(config, later))

    store = Counting()
    mine, theirs = WriteOwnership(store), WriteOwnership(store)
    config = {"configurable": {"thread_id": "t"}}
    assert write(mine, {}, lambda: "no thread") == "no thread"
    assert write(mine, config, lambda: "not held") == "not held" and store.fenced_calls == 0
    assert mine.take("t") == 1 and mine.held("t") == 1
    assert write(mine, config, lambda: "owned") == "owned" and store.fenced_calls == 1
    theirs.take("t")
    with pytest.raises(WriteSuperseded):
        write(mine, config, lambda: "late")
    with pytest.raises(WriteSuperseded) as again:  # W5: refused without asking the store to fence it
        write(mine, config, lambda: "later")
    assert store.fenced_calls == 2 and again.value.current_epoch == 2
    assert write(mine, {"configurable": {"thread_id": "u"}}, lambda: "another thread") == "another thread"
    assert mine.take("t") == 3 and write(mine, config, lambda: "owned again") == "owned again"


@pytest.mark.parametrize("method", ["write", "awrite"])
def test_a_refusal_of_an_old_run_does_not_mark_the_wrappers_new_run_lost(method: str) -> None:
    """A write of this wrapper's earlier run is refused while its new run has just taken the thread
    again (the refusal crossed the take): the new run's epoch is the held one and must stay usable."""
    from remit_ref.ownership import MemoryOwnership, WriteOwnership

    store = MemoryOwnership()
    mine = WriteOwnership(store)
    config = {"configurable": {"thread_id": "t"}}
    old = mine.take("t")

    def old_write() -> str:
        mine.take("t")  # the new run takes the thread while the old run's write is in flight
        raise WriteSuperseded("t", old, old + 1, "new run")

    async def old_awrite() -> str:
        return old_write()

    with pytest.raises(WriteSuperseded):
        if method == "write":
            mine.write(config, old_write)
        else:
            asyncio.run(mine.awrite(config, old_awrite))
    assert mine.held("t") == old + 1
    assert mine.write(config, lambda: "new run writes") == "new run writes"


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_an_owner_past_its_256th_takeover_still_writes(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Epochs read back from the store are new int objects: compared by value, not identity (CPython
    caches only the small ones, so an identity check would start refusing the owner at epoch 257)."""
    store = _ownership_store(backend, tmp_path, request)
    for i in range(300):
        epoch = store.take("t", f"run-{i}")
    assert epoch == 300
    with store.fenced("t", epoch):
        pass


def test_ownership_refuses_a_postgres_saver_on_a_pool(pg: Any) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg_pool import ConnectionPool

    with ConnectionPool(pg.fresh_dsn("own-pool"), kwargs={"autocommit": True}, min_size=1, max_size=1) as pool:
        with pytest.raises(TypeError, match="needs a PostgresSaver on one psycopg Connection"):
            wrap(PostgresSaver(pool), write_ownership=True)


def test_ownership_refuses_a_third_party_saver_even_on_a_sqlite_connection(tmp_path: Path) -> None:
    """Only LangGraph's own sync SqliteSaver gets SQLite ownership: a saver from elsewhere that keeps a
    ``sqlite3`` connection has its own tables and transactions, which the fence cannot join."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    class ThirdPartySaver(BaseCheckpointSaver):
        def __init__(self, conn: sqlite3.Connection) -> None:
            super().__init__()
            self.conn = conn

    saver = ThirdPartySaver(sqlite3.connect(str(tmp_path / "third.sqlite"), check_same_thread=False))
    with pytest.raises(TypeError, match="write_ownership=True supports InMemorySaver, SqliteSaver and PostgresSaver"):
        wrap(saver, write_ownership=True)
