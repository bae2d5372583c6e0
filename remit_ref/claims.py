"""The consume gate's claims, kept as rows of the saver's own writes table.

One row per consumed interrupt, keyed by the writes table's own primary key
(thread, namespace, checkpoint, task id ``remit-claim:<interrupt id>``, index 0), so
the atomic ``INSERT`` that skips an existing key decides who consumes. Keeping claims
there, instead of in a table of REMIT's, means no DDL (nothing to create, so nothing to
race on at first use), and it lets the first claim carry the write the resume path
makes anyway: LangGraph's ``__resume__`` write for the interrupted checkpoint goes into
the same transaction as the claim (``ResumeWrite``), and the wrapper drops the loop's
identical ``put_writes`` that follows -- so a gated resume makes no durable write
beyond what stock does. A claim row's value is JSON (a serialisation type every
LangGraph serde reads) naming its owner (host, pid, process start time, a per-resume
nonce), which is what makes a dead owner's claim recoverable:

* automatically, when the next resume finds the owner was a process on this host
  that no longer exists (pid gone, or reused by another process -- the start time
  differs): it takes the claim over with a conditional ``UPDATE ... WHERE owner=old``
  (two takers still yield one winner);
* with a lease (``claim_ttl`` seconds): an older claim may be taken over from any
  host -- the rule for owners on other hosts, whose liveness cannot be checked;
* explicitly, with ``release_stale_claims()`` (dead same-host owners) or
  ``release_claims(thread_id)`` (an operator's decision).

The wrapper hides claim rows from every read (``without_claims``); deleting a thread
deletes its claims with its writes. The async savers' stores (``remit_ref.aio``) keep the
same rows with the same statements, awaited on the async saver's own connection.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from langgraph.checkpoint.base import WRITES_IDX_MAP, CheckpointTuple

from remit_ref.core import RESUME_CHANNEL
from remit_ref.errors import StoreClosed

HOST = socket.gethostname()
CLAIM_CHANNEL = "__remit_claim__"
CLAIM_TASK = "remit-claim:"  # + interrupt id: the claim row's task id
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"  # LangGraph's task id of input (and resume) writes
NO_TABLES = ("no LangGraph checkpoint tables in this database: call the checkpointer's setup() first "
             "(REMIT's claims live in its writes table)")


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


@dataclass(frozen=True)
class ResumeWrite:
    """The write LangGraph's loop makes on a bare ``Command(resume=value)``: ``(__resume__, value)``
    for the null task at the checkpoint being resumed. A store that ``carries_writes`` commits it
    with the claim it inserts, in one transaction."""

    value: Any


class ClaimStore:
    """Atomic claim primitives; one implementation per store kind."""

    carries_writes = False  # True: try_insert(key, owner, carry) commits ``carry`` with a won claim

    def try_insert(self, key: Key, owner: Owner, carry: ResumeWrite | None = None) -> bool:
        raise NotImplementedError

    def read(self, key: Key) -> ClaimRow | None:
        raise NotImplementedError

    def take_over(self, key: Key, old_owner: str, owner: Owner) -> bool:
        raise NotImplementedError

    def all_rows(self, thread_id: str | None) -> list[tuple[Key, ClaimRow]]:
        raise NotImplementedError

    def delete(self, key: Key, owner: str | None = None) -> int:
        raise NotImplementedError


def encode_claim(owner: Owner) -> bytes:
    """A claim row's value: JSON with sorted keys (the ``json`` type every LangGraph serde loads)."""
    return json.dumps({"owner": owner.token, "host": owner.host, "pid": owner.pid, "pstart": owner.pstart,
                       "claimed_at": time.time()}, sort_keys=True).encode()


def decode_claim(value: bytes | str) -> ClaimRow:
    d = json.loads(value)
    return ClaimRow(d["owner"], d["host"], d["pid"], d["pstart"], d["claimed_at"])


def claim_key(thread_id: str, checkpoint_ns: str, checkpoint_id: str, task_id: str) -> Key:
    return (thread_id, checkpoint_ns, checkpoint_id, task_id[len(CLAIM_TASK):])


def without_claims(tup: CheckpointTuple | None) -> CheckpointTuple | None:
    """``tup`` as the wrapped saver would return it had no claim been written (claims are REMIT's, not state)."""
    if tup is None or not tup.pending_writes or not any(w[1] == CLAIM_CHANNEL for w in tup.pending_writes):
        return tup
    return tup._replace(pending_writes=[w for w in tup.pending_writes if w[1] != CLAIM_CHANNEL])


class MemoryClaims(ClaimStore):
    """Claims of an ``InMemorySaver``: shared by every wrapper of that saver object in this process."""

    def __init__(self) -> None:
        self._rows: dict[Key, ClaimRow] = {}
        self._lock = threading.Lock()

    def try_insert(self, key: Key, owner: Owner, carry: ResumeWrite | None = None) -> bool:
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


_PerSaver = TypeVar("_PerSaver")
_per_saver_lock = threading.Lock()


def one_per_saver(table: "weakref.WeakKeyDictionary[Any, _PerSaver]", saver: Any,
                  make: Callable[[], _PerSaver]) -> _PerSaver:
    """The one in-process store attached to ``saver`` (made on first use; gone with the saver): every
    wrapper of one InMemorySaver shares it, as every process shares a database's table."""
    with _per_saver_lock:
        found = table.get(saver)
        if found is None:
            found = table[saver] = make()
        return found


_memory_claims: "weakref.WeakKeyDictionary[Any, MemoryClaims]" = weakref.WeakKeyDictionary()


def memory_claims_for(saver: Any) -> MemoryClaims:
    return one_per_saver(_memory_claims, saver, MemoryClaims)


# The claim row of one key: the writes table's primary key, index 0.
_WHERE = "thread_id=? AND checkpoint_ns=? AND checkpoint_id=? AND task_id=? AND idx=0"


def _row_key(key: Key) -> tuple[str, str, str, str]:
    return (key[0], key[1], key[2], CLAIM_TASK + key[3])


def claim_params(key: Key, owner: Owner) -> tuple[Any, ...]:
    """The parameters of a claim row's insert (``_SQLITE_CLAIM``, ``_PG_CLAIM``, the head of ``_PG_CARRY``)."""
    return (*_row_key(key), CLAIM_CHANNEL, encode_claim(owner))


def answer_params(key: Key, serde: Any, carry: ResumeWrite) -> tuple[Any, ...]:
    """The parameters of the carried resume write: the null task's ``__resume__`` row at the claimed checkpoint."""
    return (key[0], key[1], key[2], NULL_TASK_ID, WRITES_IDX_MAP[RESUME_CHANNEL], RESUME_CHANNEL,
            *serde.dumps_typed(carry.value))


def all_claims_query(select: str, thread_id: str | None) -> tuple[str, tuple[str, ...]]:
    """Every claim row (of one thread, or all), in key order: ``select`` names the table's columns."""
    return (select + (" AND thread_id=?" if thread_id else "") + " ORDER BY 1,2,3,4",
            (CLAIM_CHANNEL, thread_id) if thread_id else (CLAIM_CHANNEL,))


# The owner token inside a claim row's JSON value (stored as a BLOB in SQLite, bytea in PostgreSQL).
_SQLITE_OWNER = "json_extract(CAST(value AS TEXT), '$.owner')"
_PG_OWNER = "(convert_from(blob, 'UTF8')::json ->> 'owner')"
_PG_COLUMNS = "(thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)"

# SQLite statements, shared by the sync store (SqliteSaver) and the async one (remit_ref.aio, AsyncSqliteSaver).
_SQLITE_CLAIM = ("INSERT OR IGNORE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
                 "channel, type, value) VALUES (?,?,?,?,0,?,'json',?)")
_SQLITE_ANSWER = ("INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
                  "channel, type, value) VALUES (?,?,?,?,?,?,?,?)")
_SQLITE_READ = f"SELECT value FROM writes WHERE {_WHERE}"
_SQLITE_TAKE_OVER = f"UPDATE writes SET value=? WHERE {_WHERE} AND {_SQLITE_OWNER}=?"
_SQLITE_ALL = "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, value FROM writes WHERE channel=?"
_SQLITE_DELETE = f"DELETE FROM writes WHERE {_WHERE} AND channel=?"
_SQLITE_DELETE_OWNED = f"{_SQLITE_DELETE} AND {_SQLITE_OWNER}=?"


class SqliteClaims(ClaimStore):
    """Claims in a SQLite checkpoint file's ``writes`` table (SqliteSaver's), through a connection and its lock.

    ``serde`` is the saver's serializer: given one, the store carries the resume write
    with a won claim (``carries_writes``) -- only for the saver's own connection, whose
    transaction is the one LangGraph's write would have committed.
    """

    def __init__(self, conn: sqlite3.Connection, lock: Any, retries: int = 200, serde: Any = None) -> None:
        self.conn = conn
        self.lock = lock
        self.retries = retries
        self.serde = serde
        self.carries_writes = serde is not None

    def _run(self, fn: Callable[[sqlite3.Cursor], Any], durable: bool = False) -> Any:
        """Run ``fn`` in one transaction and commit it; unless ``durable``, *without its own fsync*.

        A claim alone needs to be visible to the other processes (committed), not durable
        on its own: that commit runs with ``PRAGMA synchronous=NORMAL`` (restored right
        after; a connection already at NORMAL or OFF is left as it is). In WAL mode --
        SqliteSaver's -- NORMAL does not sync on commit, never risks corruption, and the
        saver's next synced commit on this database flushes the claim too, the WAL being
        one file synced as a whole. A claim that carries the resume write commits at the
        saver's own setting: it *is* the write LangGraph would have made durable. Other
        processes may hold the write lock for a moment: "database is locked" is retried.
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
                    if not durable:
                        sync = cur.execute("PRAGMA synchronous").fetchone()[0]
                        if sync > 1:
                            cur.execute("PRAGMA synchronous=NORMAL")
                    out = fn(cur)
                    self.conn.commit()
                    return out
                except sqlite3.OperationalError as exc:
                    self.conn.rollback()
                    if "no such table" in str(exc):
                        raise RuntimeError(NO_TABLES) from exc
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

    def try_insert(self, key: Key, owner: Owner, carry: ResumeWrite | None = None) -> bool:
        def fn(cur: sqlite3.Cursor) -> bool:
            cur.execute(_SQLITE_CLAIM, claim_params(key, owner))
            won = cur.rowcount == 1
            if won and carry is not None:
                cur.execute(_SQLITE_ANSWER, answer_params(key, self.serde, carry))
            return won
        return self._run(fn, durable=carry is not None)

    def read(self, key: Key) -> ClaimRow | None:
        def fn(cur: sqlite3.Cursor) -> ClaimRow | None:
            row = cur.execute(_SQLITE_READ, _row_key(key)).fetchone()
            return decode_claim(row[0]) if row else None
        return self._run(fn)

    def take_over(self, key: Key, old_owner: str, owner: Owner) -> bool:
        def fn(cur: sqlite3.Cursor) -> bool:
            cur.execute(_SQLITE_TAKE_OVER, (encode_claim(owner), *_row_key(key), old_owner))
            return cur.rowcount == 1
        return self._run(fn)

    def all_rows(self, thread_id: str | None) -> list[tuple[Key, ClaimRow]]:
        def fn(cur: sqlite3.Cursor) -> list[tuple[Key, ClaimRow]]:
            rows = cur.execute(*all_claims_query(_SQLITE_ALL, thread_id)).fetchall()
            return [(claim_key(*r[:4]), decode_claim(r[4])) for r in rows]
        return self._run(fn)

    def delete(self, key: Key, owner: str | None = None) -> int:
        def fn(cur: sqlite3.Cursor) -> int:
            if owner is None:
                cur.execute(_SQLITE_DELETE, (*_row_key(key), CLAIM_CHANNEL))
            else:
                cur.execute(_SQLITE_DELETE_OWNED, (*_row_key(key), CLAIM_CHANNEL, owner))
            return cur.rowcount
        return self._run(fn)


class PostgresClaims(ClaimStore):
    """Claims in a PostgreSQL checkpoint database's ``checkpoint_writes`` table, through the saver's
    connection (or pool). With ``serde`` (the saver's own), a won claim carries the resume write."""

    # A claim alone (insert or takeover) commits with synchronous_commit off for that one
    # transaction: it is visible to every other session at once (that is what excludes
    # them) but adds no WAL flush of its own; the saver's next synchronous commit flushes
    # it with everything before it (the WAL is a prefix). A claim carrying the resume
    # write commits synchronously, as LangGraph's own write would have.
    _ASYNC = "WITH _remit AS (SELECT set_config('synchronous_commit', 'off', true)) "
    # Claim and resume write in one statement: the second insert runs only if the first inserted.
    _CARRY = (f"WITH claim AS (INSERT INTO checkpoint_writes {_PG_COLUMNS} VALUES (?,?,?,?,'',0,?,'json',?) "
              "ON CONFLICT DO NOTHING RETURNING 1), "
              f"answer AS (INSERT INTO checkpoint_writes {_PG_COLUMNS} SELECT ?,?,?,?,'',?,?,?,? FROM claim "
              "ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET "
              "channel=EXCLUDED.channel, type=EXCLUDED.type, blob=EXCLUDED.blob) "
              "SELECT count(*) FROM claim")
    # The other statements (remit_ref.aio's store appends RETURNING 1 where it needs a row count).
    _CLAIM = (_ASYNC + f"INSERT INTO checkpoint_writes {_PG_COLUMNS} SELECT ?,?,?,?,'',0,?,'json',? "
              "FROM _remit ON CONFLICT DO NOTHING")
    _READ = f"SELECT blob FROM checkpoint_writes WHERE {_WHERE}"
    _TAKE_OVER = _ASYNC + f"UPDATE checkpoint_writes SET blob=? FROM _remit WHERE {_WHERE} AND {_PG_OWNER}=?"
    _ALL = "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, blob FROM checkpoint_writes WHERE channel=?"
    _DELETE = f"DELETE FROM checkpoint_writes WHERE {_WHERE} AND channel=?"
    _DELETE_OWNED = f"{_DELETE} AND {_PG_OWNER}=?"

    def __init__(self, saver: Any, serde: Any = None) -> None:
        self.saver = saver
        self.serde = serde
        self.carries_writes = serde is not None

    def _run(self, sql: str, params: tuple = (), fetch: bool = False) -> Any:
        from psycopg import InterfaceError, OperationalError  # imported by name: cosmic-ray can mutate the handler
        from psycopg.errors import UndefinedTable

        try:
            with self.saver._cursor() as cur:
                cur.execute(sql.replace("?", "%s"), params)
                if fetch:
                    return cur.fetchall()
                return cur.rowcount
        except UndefinedTable as exc:
            raise RuntimeError(NO_TABLES) from exc
        except (OperationalError, InterfaceError) as exc:
            if _pg_closed(self.saver, exc):
                raise StoreClosed(type(self.saver).__name__, str(exc).strip()) from exc
            raise

    def try_insert(self, key: Key, owner: Owner, carry: ResumeWrite | None = None) -> bool:
        if carry is None:
            return self._run(self._CLAIM, claim_params(key, owner)) == 1
        rows = self._run(self._CARRY, claim_params(key, owner) + answer_params(key, self.serde, carry), fetch=True)
        return _first(rows[0]) == 1

    def read(self, key: Key) -> ClaimRow | None:
        rows = self._run(self._READ, _row_key(key), fetch=True)
        return decode_claim(bytes(_first(rows[0]))) if rows else None

    def take_over(self, key: Key, old_owner: str, owner: Owner) -> bool:
        return self._run(self._TAKE_OVER, (encode_claim(owner), *_row_key(key), old_owner)) == 1

    def all_rows(self, thread_id: str | None) -> list[tuple[Key, ClaimRow]]:
        return pg_claim_rows(self._run(*all_claims_query(self._ALL, thread_id), fetch=True))

    def delete(self, key: Key, owner: str | None = None) -> int:
        if owner is None:
            return self._run(self._DELETE, (*_row_key(key), CLAIM_CHANNEL))
        return self._run(self._DELETE_OWNED, (*_row_key(key), CLAIM_CHANNEL, owner))


def pg_claim_rows(rows: list[Any]) -> list[tuple[Key, ClaimRow]]:
    """``PostgresClaims._ALL``'s rows (tuples or psycopg dict rows) as claim keys and rows."""
    out = []
    for r in rows:
        vals = list(r.values()) if isinstance(r, dict) else list(r)
        out.append((claim_key(*vals[:4]), decode_claim(bytes(vals[4]))))
    return out


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
    """Claims in the checkpoint file at ``path`` through a connection of their own (whose ``writes`` table
    a saver's setup created). They do not carry the resume write. Not needed beside an AsyncSqliteSaver
    any more: its gate claims through its own connection (``remit_ref.aio``)."""
    return SqliteClaims(sqlite3.connect(path, check_same_thread=False, timeout=60), threading.Lock())


def postgres_claims(dsn: str) -> "PostgresClaims":
    """Claims in the checkpoint database at ``dsn`` through a sync connection of their own (whose
    ``checkpoint_writes`` a saver's setup created). They do not carry the resume write. Not needed beside an
    AsyncPostgresSaver any more: its gate claims through its own connection (``remit_ref.aio``)."""
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
        return SqliteClaims(saver.conn, saver.lock, serde=saver.serde)
    if module.startswith("langgraph.checkpoint.postgres") and not module.endswith(".aio") and hasattr(saver, "_cursor"):
        return PostgresClaims(saver, serde=saver.serde)
    if module.endswith(".aio"):
        raise TypeError(
            f"consume_gate=True with the async {name}: pass claims=remit_ref.claims.sqlite_claims(path) or "
            f"claims=remit_ref.claims.postgres_claims(dsn) (a sync connection of its own to the same store)"
        )
    raise TypeError(
        f"consume_gate=True needs a store REMIT can claim in (InMemorySaver, SqliteSaver, PostgresSaver); "
        f"{module}.{name} is not one: pass claims=<a remit_ref.claims.ClaimStore> or consume_gate=False"
    )
