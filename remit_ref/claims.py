"""The consume gate's claim table, in the same store as the checkpoints.

One row per consumed interrupt, keyed (thread, namespace, checkpoint, interrupt id)
with a unique constraint, so the atomic ``INSERT`` decides who consumes. The row
names its owner (host, pid, process start time, a per-resume nonce), which is what
makes a dead owner's claim recoverable:

* automatically, when the next resume finds the owner was a process on this host
  that no longer exists (pid gone, or reused by another process -- the start time
  differs): it takes the claim over with a conditional ``UPDATE ... WHERE owner=old``
  (two takers still yield one winner);
* with a lease (``claim_ttl`` seconds): an older claim may be taken over from any
  host -- the rule for owners on other hosts, whose liveness cannot be checked;
* explicitly, with ``release_stale_claims()`` (dead same-host owners) or
  ``release_claims(thread_id)`` (an operator's decision).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Any, Callable

from remit_ref.errors import StoreClosed

HOST = socket.gethostname()

_SQLITE_DDL = """
CREATE TABLE IF NOT EXISTS remit_claims (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    interrupt_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    pstart TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, interrupt_id)
)
"""
_PG_DDL = _SQLITE_DDL.replace("REAL", "DOUBLE PRECISION")
# SQLite: one b-tree keyed by the primary key (no rowid table beside an index): half the pages to
# create on first use and to write per claim.
_SQLITE_DDL = _SQLITE_DDL.replace("interrupt_id)\n)", "interrupt_id)\n) WITHOUT ROWID")


def pg_create(conn: Any, ddl: str, table: str) -> None:
    """Create ``table`` race-free: concurrent first users serialise on an advisory lock.

    A bare ``CREATE TABLE IF NOT EXISTS`` is not atomic in PostgreSQL: two sessions can
    both pass the existence test and one then fails on the catalog (``DuplicateObject:
    type ... already exists`` or a unique violation). Under the transaction-scoped
    advisory lock the second creator runs after the first committed and finds the table.
    """
    if _first(conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()) is not None:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("remit_ref:" + table,))
        conn.execute(ddl)


def _first(row: Any) -> Any:
    return next(iter(row.values())) if isinstance(row, dict) else row[0]


def _pg_closed(saver: Any, exc: BaseException) -> bool:
    conn = getattr(saver, "conn", None)
    return bool(getattr(conn, "closed", False)) or "closed" in str(exc)


def process_start(pid: int) -> str:
    """The kernel's start time of ``pid`` (Linux ``/proc``), to tell a reused pid apart; '' if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read().decode(errors="replace")
        return data.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def owner_alive(host: str, pid: int, pstart: str) -> bool | None:
    """Is the claim's owner process still running? ``None`` if it lives on another host."""
    if host != HOST:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    current = process_start(pid)
    if pstart and current and current != pstart:
        return False  # pid reused by another process
    return True


@dataclass(frozen=True)
class Owner:
    """Who is claiming: this process, plus a nonce per resume call."""

    token: str
    host: str
    pid: int
    pstart: str

    @classmethod
    def new(cls) -> "Owner":
        pid = os.getpid()
        pstart = _own_start(pid)
        return cls(f"{HOST}/{pid}/{pstart}/{uuid.uuid4().hex[:12]}", HOST, pid, pstart)


_OWN_START: dict[int, str] = {}


def _own_start(pid: int) -> str:
    """This process's start time, read once per pid (a forked child gets its own)."""
    if pid not in _OWN_START:
        _OWN_START[pid] = process_start(pid)
    return _OWN_START[pid]


@dataclass(frozen=True)
class ClaimRow:
    owner: str
    host: str
    pid: int
    pstart: str
    claimed_at: float


Key = tuple[str, str, str, str]  # thread_id, checkpoint_ns, checkpoint_id, interrupt_id


class ClaimStore:
    """Atomic claim primitives; one implementation per store kind."""

    def try_insert(self, key: Key, owner: Owner) -> bool:
        raise NotImplementedError

    def read(self, key: Key) -> ClaimRow | None:
        raise NotImplementedError

    def take_over(self, key: Key, old_owner: str, owner: Owner) -> bool:
        raise NotImplementedError

    def all_rows(self, thread_id: str | None) -> list[tuple[Key, ClaimRow]]:
        raise NotImplementedError

    def delete(self, key: Key, owner: str | None = None) -> int:
        raise NotImplementedError


class MemoryClaims(ClaimStore):
    """Claims of an ``InMemorySaver``: shared by every wrapper of that saver object in this process."""

    def __init__(self) -> None:
        self._rows: dict[Key, ClaimRow] = {}
        self._lock = threading.Lock()

    def try_insert(self, key: Key, owner: Owner) -> bool:
        with self._lock:
            if key in self._rows:
                return False
            self._rows[key] = ClaimRow(owner.token, owner.host, owner.pid, owner.pstart, time.time())
            return True

    def read(self, key: Key) -> ClaimRow | None:
        with self._lock:
            return self._rows.get(key)

    def take_over(self, key: Key, old_owner: str, owner: Owner) -> bool:
        with self._lock:
            row = self._rows.get(key)
            if row is None or row.owner != old_owner:
                return False
            self._rows[key] = ClaimRow(owner.token, owner.host, owner.pid, owner.pstart, time.time())
            return True

    def all_rows(self, thread_id: str | None) -> list[tuple[Key, ClaimRow]]:
        with self._lock:
            return sorted((k, r) for k, r in self._rows.items() if thread_id is None or k[0] == thread_id)

    def delete(self, key: Key, owner: str | None = None) -> int:
        with self._lock:
            row = self._rows.get(key)
            if row is None or (owner is not None and row.owner != owner):
                return 0
            del self._rows[key]
            return 1


_memory_claims: "weakref.WeakKeyDictionary[Any, MemoryClaims]" = weakref.WeakKeyDictionary()
_memory_lock = threading.Lock()


def memory_claims_for(saver: Any) -> MemoryClaims:
    with _memory_lock:
        claims = _memory_claims.get(saver)
        if claims is None:
            claims = _memory_claims[saver] = MemoryClaims()
        return claims


_WHERE = "thread_id=? AND checkpoint_ns=? AND checkpoint_id=? AND interrupt_id=?"


class SqliteClaims(ClaimStore):
    """Claims in the SqliteSaver's own database file, through its own connection and lock."""

    def __init__(self, conn: sqlite3.Connection, lock: Any, retries: int = 200) -> None:
        self.conn = conn
        self.lock = lock
        self.retries = retries
        self._ready = False

    def _run(self, fn: Callable[[sqlite3.Cursor], Any]) -> Any:
        """Run ``fn`` in one transaction and commit it *without its own fsync*.

        The claim needs to be visible to the other processes (committed), not durable
        on its own: the commit runs with ``PRAGMA synchronous=NORMAL`` (restored right
        after; a connection already at NORMAL or OFF is left as it is). In WAL mode --
        SqliteSaver's -- NORMAL does not sync on commit, never risks corruption, and the
        saver's next synced commit on this database (the resume write the loop makes
        right after this read) flushes the claim too, the WAL being one file synced as
        a whole. So the gate adds no durable write of its own. Other processes may hold
        the write lock for a moment: "database is locked" is retried.
        """
        delay = 0.002
        for attempt in range(self.retries):
            with self.lock:
                try:
                    cur = self.conn.cursor()
                except sqlite3.ProgrammingError as exc:  # closed connection
                    raise StoreClosed("SqliteSaver", str(exc)) from exc
                sync = None
                try:
                    sync = cur.execute("PRAGMA synchronous").fetchone()[0]
                    if sync > 1:
                        cur.execute("PRAGMA synchronous=NORMAL")
                    if not self._ready:
                        cur.execute(_SQLITE_DDL)  # committed together with the first claim
                    out = fn(cur)
                    self.conn.commit()
                    self._ready = True
                    return out
                except sqlite3.OperationalError as exc:
                    self.conn.rollback()
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise
                    if attempt == self.retries - 1:
                        raise
                except sqlite3.ProgrammingError as exc:
                    raise StoreClosed("SqliteSaver", str(exc)) from exc
                finally:
                    if sync is not None and sync > 1:
                        with contextlib.suppress(sqlite3.Error):
                            cur.execute(f"PRAGMA synchronous={int(sync)}")
                    with contextlib.suppress(sqlite3.Error):
                        cur.close()
            time.sleep(delay)  # back-off between lock attempts (not a synchronisation)
            delay = min(delay * 2, 0.05)
        raise RuntimeError("unreachable")

    def try_insert(self, key: Key, owner: Owner) -> bool:
        def fn(cur: sqlite3.Cursor) -> bool:
            cur.execute(
                "INSERT OR IGNORE INTO remit_claims VALUES (?,?,?,?,?,?,?,?,?)",
                (*key, owner.token, owner.host, owner.pid, owner.pstart, time.time()),
            )
            return cur.rowcount == 1
        return self._run(fn)

    def read(self, key: Key) -> ClaimRow | None:
        def fn(cur: sqlite3.Cursor) -> ClaimRow | None:
            row = cur.execute(f"SELECT owner, host, pid, pstart, claimed_at FROM remit_claims WHERE {_WHERE}",
                              key).fetchone()
            return ClaimRow(*row) if row else None
        return self._run(fn)

    def take_over(self, key: Key, old_owner: str, owner: Owner) -> bool:
        def fn(cur: sqlite3.Cursor) -> bool:
            cur.execute(
                f"UPDATE remit_claims SET owner=?, host=?, pid=?, pstart=?, claimed_at=? WHERE {_WHERE} AND owner=?",
                (owner.token, owner.host, owner.pid, owner.pstart, time.time(), *key, old_owner),
            )
            return cur.rowcount == 1
        return self._run(fn)

    def all_rows(self, thread_id: str | None) -> list[tuple[Key, ClaimRow]]:
        def fn(cur: sqlite3.Cursor) -> list[tuple[Key, ClaimRow]]:
            sql = ("SELECT thread_id, checkpoint_ns, checkpoint_id, interrupt_id, owner, host, pid, pstart, "
                   "claimed_at FROM remit_claims")
            rows = cur.execute(sql + (" WHERE thread_id=?" if thread_id else "") + " ORDER BY 1,2,3,4",
                               (thread_id,) if thread_id else ()).fetchall()
            return [(tuple(r[:4]), ClaimRow(*r[4:])) for r in rows]
        return self._run(fn)

    def delete(self, key: Key, owner: str | None = None) -> int:
        def fn(cur: sqlite3.Cursor) -> int:
            if owner is None:
                cur.execute(f"DELETE FROM remit_claims WHERE {_WHERE}", key)
            else:
                cur.execute(f"DELETE FROM remit_claims WHERE {_WHERE} AND owner=?", (*key, owner))
            return cur.rowcount
        return self._run(fn)


class PostgresClaims(ClaimStore):
    """Claims in the PostgresSaver's database, through the saver's connection (or pool)."""

    # A claim (insert or takeover) commits with synchronous_commit off for that one
    # transaction: it is visible to every other session at once (that is what excludes
    # them) but adds no WAL flush of its own; the saver's next synchronous commit -- the
    # resume write -- flushes it with everything before it (the WAL is a prefix).
    _ASYNC = "WITH _remit AS (SELECT set_config('synchronous_commit', 'off', true)) "

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        self._ready = False

    def _run(self, sql: str, params: tuple = (), fetch: bool = False) -> Any:
        from psycopg import InterfaceError, OperationalError  # imported by name: cosmic-ray can mutate the handler

        try:
            with self.saver._cursor() as cur:
                if not self._ready:
                    pg_create(cur.connection, _PG_DDL, "remit_claims")
                    self._ready = True
                cur.execute(sql.replace("?", "%s"), params)
                if fetch:
                    return cur.fetchall()
                return cur.rowcount
        except (OperationalError, InterfaceError) as exc:
            if _pg_closed(self.saver, exc):
                raise StoreClosed(type(self.saver).__name__, str(exc).strip()) from exc
            raise

    def try_insert(self, key: Key, owner: Owner) -> bool:
        n = self._run(self._ASYNC + "INSERT INTO remit_claims SELECT ?,?,?,?,?,?,?,?,? FROM _remit "
                      "ON CONFLICT DO NOTHING",
                      (*key, owner.token, owner.host, owner.pid, owner.pstart, time.time()))
        return n == 1

    @staticmethod
    def _row(r: Any) -> ClaimRow:
        if isinstance(r, dict):
            return ClaimRow(r["owner"], r["host"], r["pid"], r["pstart"], r["claimed_at"])
        return ClaimRow(*r)

    def read(self, key: Key) -> ClaimRow | None:
        rows = self._run(f"SELECT owner, host, pid, pstart, claimed_at FROM remit_claims WHERE {_WHERE}", key,
                         fetch=True)
        return self._row(rows[0]) if rows else None

    def take_over(self, key: Key, old_owner: str, owner: Owner) -> bool:
        n = self._run(
            self._ASYNC + "UPDATE remit_claims SET owner=?, host=?, pid=?, pstart=?, claimed_at=? FROM _remit "
            f"WHERE {_WHERE} AND owner=?",
            (owner.token, owner.host, owner.pid, owner.pstart, time.time(), *key, old_owner))
        return n == 1

    def all_rows(self, thread_id: str | None) -> list[tuple[Key, ClaimRow]]:
        sql = ("SELECT thread_id, checkpoint_ns, checkpoint_id, interrupt_id, owner, host, pid, pstart, claimed_at "
               "FROM remit_claims" + (" WHERE thread_id=?" if thread_id else "") + " ORDER BY 1,2,3,4")
        rows = self._run(sql, (thread_id,) if thread_id else (), fetch=True)
        out = []
        for r in rows:
            vals = list(r.values()) if isinstance(r, dict) else list(r)
            out.append((tuple(vals[:4]), ClaimRow(*vals[4:])))
        return out

    def delete(self, key: Key, owner: str | None = None) -> int:
        if owner is None:
            return self._run(f"DELETE FROM remit_claims WHERE {_WHERE}", key)
        return self._run(f"DELETE FROM remit_claims WHERE {_WHERE} AND owner=?", (*key, owner))


def underlying(saver: Any, depth: int = 6) -> Any:
    """The stock saver under instrumenting delegates (``.inner`` / ``.base`` / ``.saver`` chains)."""
    for _ in range(depth):
        if type(saver).__module__.startswith("langgraph.checkpoint."):
            return saver
        nxt = next((getattr(saver, a) for a in ("inner", "base", "saver", "_saver")
                    if getattr(saver, a, None) is not None), None)
        if nxt is None:
            return saver
        saver = nxt
    return saver


def sqlite_claims(path: str) -> SqliteClaims:
    """Claims in a SQLite file through a connection of their own (e.g. beside an AsyncSqliteSaver)."""
    return SqliteClaims(sqlite3.connect(path, check_same_thread=False, timeout=60), threading.Lock())


def postgres_claims(dsn: str) -> "PostgresClaims":
    """Claims in a PostgreSQL database through a sync connection of their own (e.g. beside AsyncPostgresSaver)."""
    import psycopg

    conn = psycopg.connect(dsn, autocommit=True)
    lock = threading.Lock()

    class _Own:
        def __init__(self) -> None:
            self.conn = conn

        @contextlib.contextmanager
        def _cursor(self):  # the one method PostgresClaims uses
            with lock, conn.cursor() as cur:
                yield cur

    return PostgresClaims(_Own())


def claims_for(saver: Any) -> ClaimStore:
    """The claim store that lives where ``saver`` keeps its checkpoints; a one-line error otherwise."""
    saver = underlying(saver)
    name = type(saver).__name__
    module = type(saver).__module__
    if name in ("InMemorySaver", "MemorySaver") or module.startswith("langgraph.checkpoint.memory"):
        return memory_claims_for(saver)
    if module.startswith("langgraph.checkpoint.sqlite") and isinstance(getattr(saver, "conn", None),
                                                                        sqlite3.Connection):
        return SqliteClaims(saver.conn, saver.lock)
    if module.startswith("langgraph.checkpoint.postgres") and not module.endswith(".aio") and hasattr(saver, "_cursor"):
        return PostgresClaims(saver)
    if module.endswith(".aio"):
        raise TypeError(
            f"consume_gate=True with the async {name}: pass claims=remit_ref.claims.sqlite_claims(path) or "
            f"claims=remit_ref.claims.postgres_claims(dsn) (a sync connection of its own to the same store)"
        )
    raise TypeError(
        f"consume_gate=True needs a store REMIT can claim in (InMemorySaver, SqliteSaver, PostgresSaver); "
        f"{module}.{name} is not one: pass claims=<a remit_ref.claims.ClaimStore> or consume_gate=False"
    )
