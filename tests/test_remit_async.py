"""The consume gate on the async savers (AsyncSqliteSaver, AsyncPostgresSaver), through their own connection.

The properties the sync gate's tests check, with concurrent asyncio tasks in one process
and with several processes (``run_child`` racers released by ``probes.core.barrier``),
on a SQLite file and on PostgreSQL (embedded): exactly one of k concurrent resumes of one
interrupt fires the gated effect and the others raise ConsumeConflict; reads (state,
history, list, a plain ``aget_tuple``) take no claim and do not block the racers that
follow; a stray resume after the finish is served, fires nothing; the claim and the
resume write are one transaction of the saver's own connection, and the loop's copy of
that write is dropped. Every race holds each racer after its checkpoint read until all
k have read (``hold_after_read``), and a stock arm (no gate) shows that interleaving
fires the effect k times -- so each round is a real race, not a serialised one.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from probes.core import oracle
from probes.core.barrier import run_racers
from probes.core.nemesis import run_child
from probes.core.oracle import Ledger
from probes.studies.remit.workloads import gated_app
from remit_ref import claims as cl
from tests.async_gate_workloads import async_saver, hold_after_read, inspect, park, resume

GATE = {"consume_gate": True}
K, ROUNDS = 6, 5                # asyncio tasks per race, races per test (in one process)
K_PROC, ROUNDS_PROC = 4, 3      # racer processes per race, races per test
BACKENDS = ["sqlite", "postgres"]


def _location(request: pytest.FixtureRequest, backend: str, tmp_path: Path, name: str) -> str:
    if backend == "sqlite":
        return str(tmp_path / f"{name}.sqlite")
    return request.getfixturevalue("pg").fresh_dsn(name)


def _raw(backend: str, location: str, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """A query of the store through a plain connection of the test's own (not REMIT's, not the saver's)."""
    if backend == "sqlite":
        with sqlite3.connect(location) as db:
            return db.execute(sql, params).fetchall()
    import psycopg

    with psycopg.connect(location, autocommit=True) as db:
        return db.execute(sql.replace("?", "%s").replace(" writes ", " checkpoint_writes "), params).fetchall()


def _claim_rows(backend: str, location: str, thread: str) -> int:
    return _raw(backend, location, "SELECT count(*) FROM writes WHERE thread_id=? AND channel=?",
                (thread, cl.CLAIM_CHANNEL))[0][0]


def _expect_one_winner(outcomes: list[str], fires: int, k: int, gated: bool) -> None:
    if gated:
        assert sorted(outcomes) == ["completed"] + ["conflict"] * (k - 1) and fires == 1, (outcomes, fires)
    else:  # stock: every racer read the interrupt before any answered it, so every one consumes it
        assert outcomes == ["completed"] * k and fires == k, (outcomes, fires)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("connections", ["shared", "one-per-task"])
@pytest.mark.parametrize("arm", ["gate", "stock"])
def test_concurrent_tasks_one_fires_the_rest_conflict(request: pytest.FixtureRequest, tmp_path: Path, backend: str,
                                                      connections: str, arm: str) -> None:
    """K asyncio tasks resume one interrupt at once, ROUNDS times: through one wrapped saver (one connection,
    the saver's lock between them) or each through a saver and connection of its own."""
    from remit_ref import wrap

    location = _location(request, backend, tmp_path, f"tasks_{connections}_{arm}".replace("-", "_"))
    ledger = str(tmp_path / "effects.sqlite")
    remit = GATE if arm == "gate" else None
    oracle.install(ledger, "tasks")

    async def race(n: int) -> list[str]:
        thread, effect = f"t{n}", f"gate-{n}"
        assert await park(backend, location, remit, thread, effect) == 1
        barrier = asyncio.Barrier(K)
        async with contextlib.AsyncExitStack() as stack:
            bases = [await stack.enter_async_context(async_saver(backend, location))
                     for _ in range(1 if connections == "shared" else K)]
            for base in bases:
                hold_after_read(base, K // len(bases), barrier.wait)
            apps = [gated_app(wrap(b, **remit) if remit else b, effect) for b in bases]
            return list(await asyncio.gather(*(resume(apps[i % len(apps)], 100 + i, thread) for i in range(K))))

    for n in range(ROUNDS):
        outcomes = asyncio.run(race(n))
        _expect_one_winner(outcomes, Ledger(ledger).counts().get(f"gate-{n}", 0), K, remit is not None)
        assert _claim_rows(backend, location, f"t{n}") == (1 if remit else 0)
    print(f"{backend}/{connections}/{arm}: {ROUNDS} rounds of {K} tasks, outcomes as expected in every round")


@pytest.mark.parametrize("backend", BACKENDS)
def test_inspection_takes_no_claim_and_racers_after_it_still_race(request: pytest.FixtureRequest, tmp_path: Path,
                                                                   backend: str) -> None:
    """State reads through the gated wrapper take no claim (checked on the store itself) and leave the interrupt
    pending; K racers that follow still yield one winner; a stray resume after the finish is served the winner's
    answer, fires nothing and takes no claim."""
    from remit_ref import wrap

    location = _location(request, backend, tmp_path, "inspect")
    ledger = str(tmp_path / "effects.sqlite")
    oracle.install(ledger, "inspect")

    async def scenario() -> tuple[list[dict[str, Any]], list[str], str, int]:
        assert await park(backend, location, GATE, "t", "gate") == 1
        async with contextlib.AsyncExitStack() as stack:
            base = await stack.enter_async_context(async_saver(backend, location))
            saver = wrap(base, **GATE)
            app = gated_app(saver, "gate")
            seen = [await inspect(saver, app, "t") for _ in range(3)]
            raw_after_inspection = _claim_rows(backend, location, "t")
            barrier = asyncio.Barrier(K)
            hold_after_read(base, K, barrier.wait)
            outcomes = list(await asyncio.gather(*(resume(app, 100 + i, "t") for i in range(K))))
            winner = next(100 + i for i, o in enumerate(outcomes) if o == "completed")
            stray = await resume(app, 999, "t")
            return seen, outcomes, stray.replace(f"served:{winner!r}", "served:winner"), raw_after_inspection

    seen, outcomes, stray, raw_after_inspection = asyncio.run(scenario())
    assert raw_after_inspection == 0
    assert all(s["pending_interrupts"] == 1 and s["claims"] == 0 and s["read"] and s["listed"] >= 2 for s in seen), seen
    _expect_one_winner(outcomes, Ledger(ledger).counts().get("gate", 0), K, True)
    assert stray == "served:winner" and Ledger(ledger).counts() == {"gate": 1}
    assert _claim_rows(backend, location, "t") == 1


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("arm", ["gate", "stock"])
def test_cross_process_racers_one_fires_the_rest_conflict(request: pytest.FixtureRequest, tmp_path: Path, backend: str,
                                                      arm: str) -> None:
    """K_PROC racer processes, each with its own async saver, resume one interrupt; first another process
    inspects the thread (no claim, the interrupt still pending). ROUNDS_PROC rounds (one on the stock arm)."""
    location = _location(request, backend, tmp_path, f"procs_{arm}")
    ledger = str(tmp_path / "effects.sqlite")
    remit = GATE if arm == "gate" else None
    rounds = ROUNDS_PROC if remit else 1
    for n in range(rounds):
        thread, effect = f"t{n}", f"gate-{n}"
        assert asyncio.run(park(backend, location, remit, thread, effect)) == 1
        if remit:
            seen = run_child("tests.async_gate_workloads:inspect_child",
                             {"backend": backend, "location": location, "remit": remit, "thread": thread,
                              "effect": effect}).require_ok()
            assert seen["claims"] == 0 and seen["pending_interrupts"] == 1, seen
            assert _claim_rows(backend, location, thread) == 0

        def launch(i: int, sock: str) -> dict[str, Any]:
            return run_child("tests.async_gate_workloads:race_child",
                             {"backend": backend, "location": location, "ledger": ledger, "remit": remit,
                              "thread": thread, "effect": effect, "incarnation": f"racer-{n}-{i}", "answer": 100 + i,
                              "barrier": sock}, timeout=240).require_ok()
        results = run_racers(K_PROC, launch, timeout=240)
        fires = Ledger(ledger).counts().get(effect, 0)
        _expect_one_winner([r["outcome"] for r in results], fires, K_PROC, remit is not None)
        for r in results:  # the harness's own cross-check: each process fired what the ledger recorded for it
            assert r["counter"].get(effect, 0) == Ledger(ledger).counts(r["incarnation"]).get(effect, 0)
    print(f"{backend}/{arm}: {rounds} rounds of {K_PROC} racer processes, outcomes as expected in every round")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_claim_and_the_resume_write_are_one_transaction_of_the_savers_connection(
        request: pytest.FixtureRequest, tmp_path: Path, backend: str) -> None:
    """A gated resume commits its claim and the null task's ``__resume__`` write together, through the async
    saver's own connection (no other connection is opened), and the loop's copy of that write never reaches
    the saver: the store holds what stock holds, plus the claim row. SQLite: the statements between the
    claim's insert and its commit (traced on the saver's connection); PostgreSQL: both rows carry the same
    inserting transaction id (``xmin``)."""
    from langgraph.types import Command

    from remit_ref import wrap

    location = _location(request, backend, tmp_path, "carry")
    oracle.install(str(tmp_path / "effects.sqlite"), "carry")

    async def scenario() -> tuple[list[str], list[list[str]], Any]:
        async with async_saver(backend, location) as base:
            app = gated_app(wrap(base, **GATE), "gate")
            await app.ainvoke({}, {"configurable": {"thread_id": "t"}})
            null_writes: list[list[str]] = []
            write = base.aput_writes

            async def aput_writes(config: Any, writes: Any, task_id: str, task_path: str = "") -> Any:
                if task_id == cl.NULL_TASK_ID:
                    null_writes.append([c for c, _v in writes])
                return await write(config, writes, task_id, task_path)
            base.aput_writes = aput_writes
            statements: list[str] = []
            if backend == "sqlite":
                await base.conn.set_trace_callback(statements.append)
            out = await app.ainvoke(Command(resume=41), {"configurable": {"thread_id": "t"}})
            if backend == "sqlite":
                await base.conn.set_trace_callback(None)
            return statements, null_writes, out

    statements, null_writes, out = asyncio.run(scenario())
    assert out == {"answer": 41}
    assert null_writes == [], f"the loop's resume write reached the store again: {null_writes}"
    rows = _raw(backend, location, "SELECT task_id, idx, channel FROM writes WHERE thread_id=? AND "
                "(channel=? OR task_id=?) ORDER BY task_id", ("t", cl.CLAIM_CHANNEL, cl.NULL_TASK_ID))
    assert [(r[1], r[2]) for r in rows] == [(-4, "__resume__"), (0, cl.CLAIM_CHANNEL)], rows
    if backend == "sqlite":
        claim = next(i for i, s in enumerate(statements) if s.startswith("INSERT OR IGNORE INTO writes"))
        commit = next(i for i, s in enumerate(statements) if i > claim and s == "COMMIT")
        between = statements[claim + 1:commit]
        assert len(between) == 1 and between[0].startswith("INSERT OR REPLACE INTO writes") and \
            "__resume__" in between[0], statements[claim:commit + 1]
        assert "BEGIN" in statements[claim - 1] and not any("synchronous" in s for s in statements), statements
    else:
        xmins = _raw(backend, location, "SELECT DISTINCT xmin::text FROM writes WHERE thread_id=? AND "
                     "(channel=? OR task_id=?)", ("t", cl.CLAIM_CHANNEL, cl.NULL_TASK_ID))
        assert len(xmins) == 1, xmins


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sync_resume_from_a_worker_thread_races_through_the_same_gate(request: pytest.FixtureRequest,
                                                                        tmp_path: Path, backend: str) -> None:
    """``graph.invoke`` from a worker thread on an async saver (its sync methods run on the saver's loop): its
    claim goes through the same async store, so it races with the loop's own resumes for one winner. The sync
    administration calls refuse on the loop's thread (they would wait for themselves) and work awaited."""
    from langgraph.types import Command

    from remit_ref import ConsumeConflict, wrap

    location = _location(request, backend, tmp_path, "thread")
    ledger = str(tmp_path / "effects.sqlite")
    oracle.install(ledger, "thread")

    def sync_resume(app: Any, answer: int) -> str:
        try:
            out = app.invoke(Command(resume=answer), {"configurable": {"thread_id": "t"}})
        except ConsumeConflict:
            return "conflict"
        return "completed" if out.get("answer") == answer else f"other:{out!r}"

    async def scenario() -> tuple[list[str], list[dict[str, Any]]]:
        assert await park(backend, location, GATE, "t", "gate") == 1
        async with async_saver(backend, location) as base:
            saver = wrap(base, **GATE)
            app = gated_app(saver, "gate")
            with pytest.raises(asyncio.InvalidStateError, match="use the async interface"):
                saver.claims()
            barrier = asyncio.Barrier(3)
            hold_after_read(base, 3, barrier.wait)
            outcomes = await asyncio.gather(asyncio.to_thread(sync_resume, app, 7), resume(app, 8, "t"),
                                            resume(app, 9, "t"))
            return list(outcomes), await saver.aclaims("t")

    outcomes, claims = asyncio.run(scenario())
    _expect_one_winner(outcomes, Ledger(ledger).counts().get("gate", 0), 3, True)
    assert len(claims) == 1 and claims[0]["owner_alive"] is True


@pytest.mark.parametrize("kind", ["pipeline", "pool"])
def test_postgres_gate_through_a_pipelined_connection_or_a_pool(request: pytest.FixtureRequest, tmp_path: Path,
                                                                kind: str) -> None:
    """AsyncPostgresSaver's other connection forms: ``from_conn_string(pipeline=True)`` (one pipelined
    connection) and an ``AsyncConnectionPool``. The claim takes the saver's own cursor path in both: one winner
    of K racers, and the claim and the resume write share one transaction."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from remit_ref import wrap

    dsn = _location(request, "postgres", tmp_path, kind)
    ledger = str(tmp_path / "effects.sqlite")
    oracle.install(ledger, kind)

    @contextlib.asynccontextmanager
    async def saver() -> Any:
        if kind == "pipeline":  # (its setup() cannot run pipelined: CREATE INDEX CONCURRENTLY; set up apart)
            async with async_saver("postgres", dsn):
                pass
            async with AsyncPostgresSaver.from_conn_string(dsn, pipeline=True) as base:
                yield base
        else:
            from psycopg.rows import dict_row
            from psycopg_pool import AsyncConnectionPool

            async with AsyncConnectionPool(dsn, min_size=2, max_size=4, open=False,
                                           kwargs={"autocommit": True, "prepare_threshold": 0,
                                                   "row_factory": dict_row}) as pool:
                base = AsyncPostgresSaver(pool)
                await base.setup()
                yield base

    async def scenario() -> list[str]:
        async with saver() as base:
            app = gated_app(wrap(base, **GATE), "gate")
            await app.ainvoke({}, {"configurable": {"thread_id": "t"}})
            barrier = asyncio.Barrier(K)
            hold_after_read(base, K, barrier.wait)
            return list(await asyncio.gather(*(resume(app, 100 + i, "t") for i in range(K))))

    _expect_one_winner(asyncio.run(scenario()), Ledger(ledger).counts().get("gate", 0), K, True)
    xmins = _raw("postgres", dsn, "SELECT DISTINCT xmin::text FROM writes WHERE thread_id=? AND "
                 "(channel=? OR task_id=?)", ("t", cl.CLAIM_CHANNEL, cl.NULL_TASK_ID))
    assert _claim_rows("postgres", dsn, "t") == 1 and len(xmins) == 1, xmins


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_declared_retry_over_a_dead_owners_committed_answer_is_refused_async(
        request: pytest.FixtureRequest, tmp_path: Path, backend: str) -> None:
    """On the async savers the gate reads the claimed interrupt's answer with the saver's own async read
    (a sync read there would block its event loop): the answer committed, its owner gone, a declared
    RETRY addressed to the pause is refused and the gated effect stays at one."""
    from langgraph.types import Command

    from remit_ref import ConsumeConflict, wrap

    location = _location(request, backend, tmp_path, "retry_dead")
    ledger = str(tmp_path / "effects.sqlite")
    oracle.install(ledger, "retry")
    dead = cl.Owner(f"{cl.HOST}/999999999/x/dead", cl.HOST, 999999999, "x")

    async def scenario() -> str:
        async with async_saver(backend, location) as base:
            saver = wrap(base, **GATE)
            app = gated_app(saver, "gate")
            cfg = {"configurable": {"thread_id": "t"}}
            await app.ainvoke({}, cfg)
            state = await app.aget_state(cfg)
            cid = state.config["configurable"]["checkpoint_id"]
            key = ("t", "", cid, state.interrupts[0].id)
            assert (await app.ainvoke(Command(resume=True), cfg)) == {"answer": True}
            row = await saver._aclaims.read(key)
            assert await saver._aclaims.take_over(key, row.owner, dead)  # the owner is gone now
            retry = {"configurable": {"thread_id": "t", "checkpoint_id": cid, "remit_intent": "retry"}}
            try:
                await app.ainvoke(Command(resume=True), retry)
            except ConsumeConflict:
                return "conflict"
            return "ran"

    assert asyncio.run(scenario()) == "conflict"
    assert Ledger(ledger).counts() == {"gate": 1}
