"""The effect ledger: append-only, idempotency-keyed, totally ordered per thread.

A tool calls ``ledger.once(thread_id, task, effect_id, fn)`` around its side effect.
The key ``(thread_id, task, effect_id)`` is reserved (a ``pending`` row, with the
thread's next sequence number) before ``fn`` runs and marked ``done`` with ``fn``'s
JSON result right after. What a re-execution then gets is decided by
``core.admit_effect``:

* no row      -> fire (the first time);
* ``done``    -> not fired again; the recorded result is returned (a crash after the
                 effect, a replayed task, a stray resume: EO);
* ``pending`` -> the process died between starting the effect and recording it: the
                 ledger cannot know whether it happened and raises ``EffectInDoubt``
                 instead of firing twice (at-most-once; resolve it by hand).

If ``fn`` raises, the reservation is removed and the exception propagates: an effect
that failed is treated as not having happened (make ``fn`` raise only before the
external system committed).

Where it lives: a SQLite file path, a ``postgresql://`` DSN, ``None`` (process
memory), or the checkpointer itself (``EffectLedger.beside(saver)``: the same SQLite
file or PostgreSQL database).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from typing import Any, Callable

from remit_ref import core
from remit_ref.errors import EffectInDoubt

_DDL = """
CREATE TABLE IF NOT EXISTS remit_effects (
    thread_id TEXT NOT NULL,
    task TEXT NOT NULL,
    effect_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL,
    result TEXT,
    owner TEXT NOT NULL,
    PRIMARY KEY (thread_id, task, effect_id),
    UNIQUE (thread_id, seq)
)
"""
_INSERT = ("INSERT INTO remit_effects (thread_id, task, effect_id, seq, status, result, owner) "
           "SELECT ?, ?, ?, COALESCE(MAX(seq), 0) + 1, 'pending', NULL, ? FROM remit_effects WHERE thread_id = ?")
_KEY = "thread_id=? AND task=? AND effect_id=?"


class EffectLedger:
    """Exactly-once effects for tools. Thread-safe; share one per process and store."""

    def __init__(self, target: str | os.PathLike[str] | None = None) -> None:
        self._lock = threading.Lock()
        self._owner = f"{os.getpid()}"
        self._kind: str
        if target is None or str(target) == ":memory:":
            self._kind = "memory"
            self._rows: dict[tuple[str, str, str], dict[str, Any]] = {}
        elif str(target).startswith(("postgres://", "postgresql://")):
            import psycopg

            self._kind = "postgres"
            self._pg = psycopg.connect(str(target), autocommit=True)
            pg_create(self._pg, _DDL, "remit_effects")
        else:
            self._kind = "sqlite"
            self._conn = sqlite3.connect(str(target), timeout=60, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA busy_timeout=60000")
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_DDL)

    @classmethod
    def beside(cls, saver: Any) -> "EffectLedger":
        """A ledger in the same store as a SqliteSaver / PostgresSaver / InMemorySaver (wrapped or not)."""
        from remit_ref.claims import underlying

        base = underlying(saver)
        module = type(base).__module__
        if module.startswith("langgraph.checkpoint.memory"):
            return cls(None)
        if module.startswith("langgraph.checkpoint.sqlite"):
            row = base.conn.execute("PRAGMA database_list").fetchone()
            if not row or not row[2]:
                raise ValueError("the SqliteSaver uses an in-memory database; give EffectLedger a file path instead")
            return cls(row[2])
        if module.startswith("langgraph.checkpoint.postgres"):
            conn = base.conn
            info = getattr(conn, "info", None)
            if info is None:
                raise ValueError("PostgresSaver on a pool: give EffectLedger the DSN instead")
            return cls(info.dsn if info.dsn.startswith("postgres") else _dsn_from_info(info))
        raise TypeError(f"cannot place a ledger beside {module}.{type(base).__name__}; pass a path or DSN")

    # ---- primitive operations ------------------------------------------------------------
    def _sql(self, sql: str, params: tuple = (), fetch: bool = False) -> Any:
        with self._lock:
            if self._kind == "sqlite":
                cur = self._conn.execute(sql, params)
                return cur.fetchall() if fetch else cur.rowcount
            cur = self._pg.execute(sql.replace("?", "%s"), params)
            return cur.fetchall() if fetch else cur.rowcount

    def status(self, thread_id: str, task: str, effect_id: str) -> str | None:
        """``None`` (never started), ``"pending"`` (started, not recorded done) or ``"done"``."""
        key = (str(thread_id), str(task), str(effect_id))
        if self._kind == "memory":
            with self._lock:
                row = self._rows.get(key)
                return None if row is None else row["status"]
        rows = self._sql(f"SELECT status FROM remit_effects WHERE {_KEY}", key, fetch=True)
        return rows[0][0] if rows else None

    def _reserve(self, key: tuple[str, str, str]) -> bool:
        if self._kind == "memory":
            with self._lock:
                if key in self._rows:
                    return False
                seq = 1 + max((r["seq"] for k, r in self._rows.items() if k[0] == key[0]), default=0)
                self._rows[key] = {"seq": seq, "status": "pending", "result": None}
                return True
        for _ in range(50):
            try:
                return self._sql(_INSERT, (*key, self._owner, key[0])) == 1
            except Exception as exc:  # noqa: BLE001 - unique violations: key taken, or seq race
                if self.status(*key) is not None:
                    return False
                if "unique" not in str(exc).lower() and "locked" not in str(exc).lower():
                    raise
                time.sleep(0.001)  # back-off on a seq collision (not a synchronisation)
        raise RuntimeError(f"could not reserve effect {key} (persistent sequence conflicts)")

    def _finish(self, key: tuple[str, str, str], result: Any) -> None:
        text = json.dumps(result, sort_keys=True, default=str)
        if self._kind == "memory":
            with self._lock:
                self._rows[key].update(status="done", result=text)
            return
        self._sql(f"UPDATE remit_effects SET status='done', result=? WHERE {_KEY}", (text, *key))

    def _unreserve(self, key: tuple[str, str, str]) -> None:
        if self._kind == "memory":
            with self._lock:
                self._rows.pop(key, None)
            return
        self._sql(f"DELETE FROM remit_effects WHERE {_KEY} AND status='pending'", key)

    def _result(self, key: tuple[str, str, str]) -> Any:
        if self._kind == "memory":
            with self._lock:
                text = self._rows[key]["result"]
        else:
            text = self._sql(f"SELECT result FROM remit_effects WHERE {_KEY}", key, fetch=True)[0][0]
        return None if text is None else json.loads(text)

    # ---- the API a tool uses -----------------------------------------------------------------
    def once(self, thread_id: str, task: str, effect_id: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` (the side effect) unless this key already ran; returns fn's (recorded) result."""
        key = (str(thread_id), str(task), str(effect_id))
        for _ in range(2):
            admission = core.admit_effect(self.status(*key))
            if admission is core.Admission.SKIP:
                return self._result(key)
            if admission is core.Admission.IN_DOUBT:
                raise EffectInDoubt(*key)
            if self._reserve(key):
                break
        else:
            raise EffectInDoubt(*key)
        try:
            result = fn()
        except BaseException:
            self._unreserve(key)
            raise
        self._finish(key, result)
        return result

    def resolve(self, thread_id: str, task: str, effect_id: str, *, fired: bool, result: Any = None) -> None:
        """Settle an in-doubt effect after checking the external system by hand."""
        key = (str(thread_id), str(task), str(effect_id))
        if self.status(*key) != "pending":
            raise ValueError(f"effect {key} is not in doubt (status {self.status(*key)!r}); nothing to resolve")
        if fired:
            self._finish(key, result)
        else:
            self._unreserve(key)

    def entries(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's effects in their total order (seq 1, 2, ...)."""
        if self._kind == "memory":
            with self._lock:
                rows = [(r["seq"], k[1], k[2], r["status"]) for k, r in self._rows.items() if k[0] == str(thread_id)]
        else:
            rows = self._sql("SELECT seq, task, effect_id, status FROM remit_effects WHERE thread_id=? ORDER BY seq",
                             (str(thread_id),), fetch=True)
        return [{"seq": s, "task": t, "effect_id": e, "status": st} for s, t, e, st in sorted(rows)]

    def counts(self) -> dict[str, int]:
        """Done effects per (thread/task/effect) -- every value is 1 by construction; for oracles."""
        if self._kind == "memory":
            with self._lock:
                return {"/".join(k): 1 for k, r in sorted(self._rows.items()) if r["status"] == "done"}
        rows = self._sql("SELECT thread_id, task, effect_id FROM remit_effects WHERE status='done' ORDER BY 1,2,3",
                         fetch=True)
        return {"/".join(r): 1 for r in rows}

    def close(self) -> None:
        if self._kind == "sqlite":
            self._conn.close()
        elif self._kind == "postgres":
            self._pg.close()


def _dsn_from_info(info: Any) -> str:
    params = info.get_parameters()
    host = params.get("host", "")
    return (f"postgresql://{params.get('user', '')}@/{params.get('dbname', '')}?host={host}"
            f"&port={info.port}")


def pg_create(conn: Any, ddl: str, table: str) -> None:
    """Create ``table`` race-free: concurrent first users serialise on an advisory lock.

    A bare ``CREATE TABLE IF NOT EXISTS`` is not atomic in PostgreSQL: two sessions can
    both pass the existence test and one then fails on the catalog (``DuplicateObject:
    type ... already exists`` or a unique violation). Under the transaction-scoped
    advisory lock the second creator runs after the first committed and finds the table.
    """
    if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()[0] is not None:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("remit_ref:" + table,))
        conn.execute(ddl)
