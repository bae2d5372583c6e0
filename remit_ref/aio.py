"""The consume gate's claims for the async savers, through the saver's own async connection.

Why: a service on ``AsyncSqliteSaver`` (aiosqlite) or ``AsyncPostgresSaver`` (psycopg
async) has one connection (or pool), bound to its event loop. The claim goes through
it -- the saver's lock, its connection, its transaction -- so that it lands in the same
store as the checkpoints and, on a bare ``Command(resume=v)``, in the same transaction
as LangGraph's ``(__resume__, v)`` write, exactly as ``remit_ref.claims`` does for the
sync savers: the same rows, the same statements, the same owner encoding; only the I/O
is awaited. No second connection is needed.

* ``AsyncSqliteClaims``: under ``saver.lock`` (the ``asyncio.Lock`` every
  AsyncSqliteSaver method holds), ``INSERT OR IGNORE`` the claim row and, if it won,
  ``INSERT OR REPLACE`` the resume write, then one ``commit`` of the aiosqlite
  connection: one SQLite transaction.
* ``AsyncPostgresClaims``: one statement (``PostgresClaims._CARRY``: the claim and,
  only if it inserted, the resume write) through ``saver._cursor(pipeline=True)``, the
  path AsyncPostgresSaver's own ``aput_writes`` takes (with the saver's pipeline, if it
  has one, synced before the cursor is released): one PostgreSQL transaction.

``BlockingClaims`` is the sync ``ClaimStore`` face of such a store, for the wrapper's
sync entry points (``get_tuple`` from a worker thread, ``claims()``,
``release_*()``): it runs each call on the saver's event loop, as the async savers' own
sync methods do, and refuses (``asyncio.InvalidStateError``) on that loop's own thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from typing import Any, Awaitable, Callable, Coroutine, TypeVar

from remit_ref.claims import (
    _SQLITE_ALL,
    _SQLITE_ANSWER,
    _SQLITE_CLAIM,
    _SQLITE_DELETE,
    _SQLITE_DELETE_OWNED,
    _SQLITE_READ,
    _SQLITE_TAKE_OVER,
    CLAIM_CHANNEL,
    NO_TABLES,
    ClaimRow,
    ClaimStore,
    Key,
    Owner,
    PostgresClaims,
    ResumeWrite,
    _first,
    _pg_closed,
    _row_key,
    all_claims_query,
    answer_params,
    claim_key,
    claim_params,
    claims_for,
    decode_claim,
    encode_claim,
    pg_claim_rows,
    underlying,
)
from remit_ref.errors import StoreClosed

T = TypeVar("T")
# What aiosqlite raises (a bare ValueError) once its connection is closed.
AIOSQLITE_CLOSED = frozenset({"Connection closed", "no active connection"})


class AsyncClaimStore:
    """Atomic claim primitives, awaited; the async twin of ``remit_ref.claims.ClaimStore``."""

    carries_writes = False  # True: try_insert(key, owner, carry) commits ``carry`` with a won claim
    loop: asyncio.AbstractEventLoop | None = None  # the event loop the store's connection belongs to

    async def try_insert(self, key: Key, owner: Owner, carry: ResumeWrite | None = None) -> bool:
        raise NotImplementedError

    async def read(self, key: Key) -> ClaimRow | None:
        raise NotImplementedError

    async def take_over(self, key: Key, old_owner: str, owner: Owner) -> bool:
        raise NotImplementedError

    async def all_rows(self, thread_id: str | None) -> list[tuple[Key, ClaimRow]]:
        raise NotImplementedError

    async def delete(self, key: Key, owner: str | None = None) -> int:
        raise NotImplementedError


class AsyncSqliteClaims(AsyncClaimStore):
    """Claims in an AsyncSqliteSaver's ``writes`` table, through its aiosqlite connection and its lock.

    With ``serde`` (the saver's own) a won claim carries the resume write. Commits follow
    ``SqliteClaims._run``: a bare claim without its own sync, a carrying one at the saver's
    setting; "database is locked" from another process is retried, the lock released in between.
    """

    def __init__(self, saver: Any, retries: int = 200, serde: Any = None) -> None:
        self.saver = saver
        self.loop = getattr(saver, "loop", None)
        self.retries = retries
        self.serde = serde
        self.carries_writes = serde is not None

    def _closed(self, exc: BaseException) -> StoreClosed | None:
        if isinstance(exc, sqlite3.ProgrammingError) or (type(exc) is ValueError and str(exc) in AIOSQLITE_CLOSED):
            return StoreClosed(type(self.saver).__name__, str(exc).strip())
        return None

    async def _run(self, fn: Callable[[Any], Awaitable[T]], durable: bool = False) -> T:
        delay = 0.002
        for attempt in range(self.retries):
            async with self.saver.lock:
                conn = self.saver.conn
                try:
                    cur = await conn.cursor()
                except (ValueError, sqlite3.ProgrammingError) as exc:
                    closed = self._closed(exc)
                    if closed is None:
                        raise
                    raise closed from exc
                sync = None
                try:
                    if not durable:
                        await cur.execute("PRAGMA synchronous")
                        sync = (await cur.fetchone())[0]
                        if sync > 1:
                            await cur.execute("PRAGMA synchronous=NORMAL")
                    out = await fn(cur)
                    await conn.commit()
                    return out
                except sqlite3.OperationalError as exc:
                    with contextlib.suppress(sqlite3.Error, ValueError):
                        await conn.rollback()
                    if "no such table" in str(exc):
                        raise RuntimeError(NO_TABLES) from exc
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise
                    if attempt == self.retries - 1:
                        raise
                except (ValueError, sqlite3.ProgrammingError) as exc:
                    closed = self._closed(exc)
                    if closed is None:
                        raise
                    raise closed from exc
                finally:
                    if sync is not None and sync > 1:
                        with contextlib.suppress(sqlite3.Error, ValueError):
                            await cur.execute(f"PRAGMA synchronous={int(sync)}")
                    with contextlib.suppress(sqlite3.Error, ValueError):
                        await cur.close()
            await asyncio.sleep(delay)  # back-off between lock attempts (not a synchronisation)
            delay = min(delay * 2, 0.05)
        raise RuntimeError("unreachable")

    async def try_insert(self, key: Key, owner: Owner, carry: ResumeWrite | None = None) -> bool:
        async def fn(cur: Any) -> bool:
            await cur.execute(_SQLITE_CLAIM, claim_params(key, owner))
            won = cur.rowcount == 1
            if won and carry is not None:
                await cur.execute(_SQLITE_ANSWER, answer_params(key, self.serde, carry))
            return won
        return await self._run(fn, durable=carry is not None)

    async def read(self, key: Key) -> ClaimRow | None:
        async def fn(cur: Any) -> ClaimRow | None:
            await cur.execute(_SQLITE_READ, _row_key(key))
            row = await cur.fetchone()
            return decode_claim(row[0]) if row else None
        return await self._run(fn)

    async def take_over(self, key: Key, old_owner: str, owner: Owner) -> bool:
        async def fn(cur: Any) -> bool:
            await cur.execute(_SQLITE_TAKE_OVER, (encode_claim(owner), *_row_key(key), old_owner))
            return cur.rowcount == 1
        return await self._run(fn)

    async def all_rows(self, thread_id: str | None) -> list[tuple[Key, ClaimRow]]:
        async def fn(cur: Any) -> list[tuple[Key, ClaimRow]]:
            await cur.execute(*all_claims_query(_SQLITE_ALL, thread_id))
            return [(claim_key(*r[:4]), decode_claim(r[4])) for r in await cur.fetchall()]
        return await self._run(fn)

    async def delete(self, key: Key, owner: str | None = None) -> int:
        async def fn(cur: Any) -> int:
            if owner is None:
                await cur.execute(_SQLITE_DELETE, (*_row_key(key), CLAIM_CHANNEL))
            else:
                await cur.execute(_SQLITE_DELETE_OWNED, (*_row_key(key), CLAIM_CHANNEL, owner))
            return cur.rowcount
        return await self._run(fn)


class AsyncPostgresClaims(AsyncClaimStore):
    """Claims in an AsyncPostgresSaver's ``checkpoint_writes``, through its connection (or pool) and lock.

    Every statement is one transaction and returns rows (``RETURNING 1`` where the sync
    store reads a row count: a pipelined cursor has no row count before its results are
    fetched). With ``serde`` (the saver's own) a won claim carries the resume write.
    """

    def __init__(self, saver: Any, serde: Any = None) -> None:
        self.saver = saver
        self.loop = getattr(saver, "loop", None)
        self.serde = serde
        self.carries_writes = serde is not None

    async def _rows(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        from psycopg import InterfaceError, OperationalError
        from psycopg.errors import UndefinedTable

        try:
            async with self.saver._cursor(pipeline=True) as cur:
                await cur.execute(sql.replace("?", "%s"), params)
                return await cur.fetchall()
        except UndefinedTable as exc:
            raise RuntimeError(NO_TABLES) from exc
        except (OperationalError, InterfaceError) as exc:
            if _pg_closed(self.saver, exc):
                raise StoreClosed(type(self.saver).__name__, str(exc).strip()) from exc
            raise

    async def try_insert(self, key: Key, owner: Owner, carry: ResumeWrite | None = None) -> bool:
        if carry is None:
            return len(await self._rows(PostgresClaims._CLAIM + " RETURNING 1", claim_params(key, owner))) == 1
        rows = await self._rows(PostgresClaims._CARRY, claim_params(key, owner) + answer_params(key, self.serde, carry))
        return _first(rows[0]) == 1

    async def read(self, key: Key) -> ClaimRow | None:
        rows = await self._rows(PostgresClaims._READ, _row_key(key))
        return decode_claim(bytes(_first(rows[0]))) if rows else None

    async def take_over(self, key: Key, old_owner: str, owner: Owner) -> bool:
        rows = await self._rows(PostgresClaims._TAKE_OVER + " RETURNING 1",
                                (encode_claim(owner), *_row_key(key), old_owner))
        return len(rows) == 1

    async def all_rows(self, thread_id: str | None) -> list[tuple[Key, ClaimRow]]:
        return pg_claim_rows(await self._rows(*all_claims_query(PostgresClaims._ALL, thread_id)))

    async def delete(self, key: Key, owner: str | None = None) -> int:
        if owner is None:
            return len(await self._rows(PostgresClaims._DELETE + " RETURNING 1", (*_row_key(key), CLAIM_CHANNEL)))
        return len(await self._rows(PostgresClaims._DELETE_OWNED + " RETURNING 1",
                                    (*_row_key(key), CLAIM_CHANNEL, owner)))


class BlockingClaims(ClaimStore):
    """An ``AsyncClaimStore`` called from sync code: each call runs on the store's event loop.

    As AsyncSqliteSaver's and AsyncPostgresSaver's own sync methods: allowed from any
    thread but the loop's own, where waiting would deadlock -- there it raises
    ``asyncio.InvalidStateError`` naming the async interface to use instead.
    """

    def __init__(self, store: AsyncClaimStore) -> None:
        self.store = store
        self.carries_writes = store.carries_writes

    def _wait(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self.store.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or running is loop:
            coro.close()
            raise asyncio.InvalidStateError(
                "the consume gate of an async saver is called synchronously from its own event loop; use the "
                "async interface there (await graph.ainvoke(...), await saver.aclaims(), "
                "await saver.arelease_stale_claims(), await saver.arelease_claims(thread_id))")
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def try_insert(self, key: Key, owner: Owner, carry: ResumeWrite | None = None) -> bool:
        return self._wait(self.store.try_insert(key, owner, carry))

    def read(self, key: Key) -> ClaimRow | None:
        return self._wait(self.store.read(key))

    def take_over(self, key: Key, old_owner: str, owner: Owner) -> bool:
        return self._wait(self.store.take_over(key, old_owner, owner))

    def all_rows(self, thread_id: str | None) -> list[tuple[Key, ClaimRow]]:
        return self._wait(self.store.all_rows(thread_id))

    def delete(self, key: Key, owner: str | None = None) -> int:
        return self._wait(self.store.delete(key, owner))


def async_claims_for(saver: Any) -> AsyncClaimStore | None:
    """The async claim store on ``saver``'s own connection, if it is an AsyncSqliteSaver or AsyncPostgresSaver."""
    saver = underlying(saver)
    module = type(saver).__module__
    if module == "langgraph.checkpoint.sqlite.aio":
        import aiosqlite

        if isinstance(getattr(saver, "conn", None), aiosqlite.Connection):
            return AsyncSqliteClaims(saver, serde=saver.serde)
    if module == "langgraph.checkpoint.postgres.aio" and getattr(saver, "conn", None) is not None:
        return AsyncPostgresClaims(saver, serde=saver.serde)
    return None


def claim_store_for(saver: Any) -> ClaimStore | AsyncClaimStore:
    """Where the gate claims for ``saver``: its own async connection, else ``claims_for``'s sync store."""
    return async_claims_for(saver) or claims_for(saver)
