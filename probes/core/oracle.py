"""The two effect oracles and their cross-check.

* ``EffectCounter`` lives in the process that fires effects and dies with it.
* ``Ledger`` is an SQLite file outside the framework's store: one committed row per
  effect, so it survives SIGKILL and the parent can read it afterwards. The same
  transaction appends an ``effect`` event to the probe's history (``history`` table of
  the same file, ``probes.core.history.HistoryLog``), so the history a checker judges
  and the ledger the cross-check reads can never disagree.

Each process that fires effects has an *incarnation* label (``park``, ``recover-1``,
``racer-3`` ...). When that process exits normally it reports its counter; the parent
compares it with the ledger rows of the same incarnation. A mismatch means the
measurement is broken and raises ``HarnessError`` -- never a verdict.

A framework may fire from a thread of its own (an activity worker) while the process reports:
``Oracle.report`` waits for an effect in flight to reach both oracles, and an effect fired after
the report (the process was already ending) is written to the ledger and history under the
incarnation ``<incarnation>+late``, outside the cross-check but never out of the judged history.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

from probes.core.errors import HarnessError
from probes.core.history import (HISTORY_SCHEMA, History, HistoryLog, Kind, durable_connection, insert_event,
                                 prepare_durable_file)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS effects (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    effect TEXT NOT NULL,
    incarnation TEXT NOT NULL,
    pid INTEGER NOT NULL,
    detail TEXT
)
"""


class Ledger:
    """Append-only, crash-surviving record of fired effects (one SQLite file)."""

    def __init__(self, path: Path | str) -> None:
        self.path = prepare_durable_file(path, _SCHEMA, HISTORY_SCHEMA)  # the history shares the file

    def _connect(self) -> sqlite3.Connection:
        return durable_connection(self.path)  # each INSERT its own durable transaction

    def record(self, effect: str, incarnation: str, detail: str | None = None, value: Any = None,
               step: str | None = None) -> None:
        """The ledger row and its history event, in one durable transaction."""
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "INSERT INTO effects(effect, incarnation, pid, detail) VALUES (?,?,?,?)",
                (effect, incarnation, os.getpid(), detail),
            )
            insert_event(conn, Kind.EFFECT, incarnation, step, effect, value)
            conn.execute("COMMIT")
        finally:
            conn.close()

    def history(self) -> History:
        """The probe's history (every process's events, in commit order)."""
        return HistoryLog(self.path).read()

    def counts(self, incarnation: str | None = None) -> dict[str, int]:
        conn = self._connect()
        try:
            if incarnation is None:
                rows = conn.execute("SELECT effect, COUNT(*) FROM effects GROUP BY effect").fetchall()
            else:
                rows = conn.execute(
                    "SELECT effect, COUNT(*) FROM effects WHERE incarnation=? GROUP BY effect", (incarnation,)
                ).fetchall()
        finally:
            conn.close()
        return {effect: n for effect, n in sorted(rows)}

    def rows(self) -> list[tuple[str, str, str | None]]:
        """(effect, incarnation, detail) in commit order."""
        conn = self._connect()
        try:
            return [tuple(r) for r in conn.execute("SELECT effect, incarnation, detail FROM effects ORDER BY seq")]
        finally:
            conn.close()


class EffectCounter:
    """In-process count of fired effects; reported by a process that exits normally."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def snapshot(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))


LATE = "+late"  # the incarnation suffix of an effect fired after its process reported its count


class Oracle:
    """Fire effects into both oracles at once. One per process (per incarnation)."""

    def __init__(self, ledger_path: Path | str, incarnation: str) -> None:
        self.ledger = Ledger(ledger_path)
        self.counter = EffectCounter()
        self.incarnation = incarnation
        self._lock = threading.Lock()  # one effect at a time reaches both oracles, and the report waits for it
        self._reported = False

    def fire(self, effect: str, detail: str | None = None, value: Any = None, step: str | None = None) -> None:
        """The non-idempotent external effect: count it, then commit its ledger row and history event.

        ``detail`` goes to the ledger only (it may be run-varying, e.g. a pid); ``value``
        (e.g. the answer the gate consumed) and ``step`` go to the history event.
        """
        with self._lock:
            incarnation = self.incarnation
            if self._reported:  # a thread went on after the process reported its count
                incarnation = f"{self.incarnation}{LATE}"
            else:
                self.counter.counts[effect] += 1
            self.ledger.record(effect, incarnation, detail, value, step)

    def report(self) -> dict[str, int]:
        """The process's final count, for the parent's cross-check: taken once no effect is half
        fired, and closing the counter (a later effect is recorded as ``LATE``)."""
        with self._lock:
            self._reported = True
            return self.counter.snapshot()

    def record(self, kind: Kind | str, step: str | None = None, value: Any = None,
               detail: Mapping[str, Any] | None = None) -> None:
        """Append a workflow event (step_begin, pause, complete, refuse...) to the probe's history."""
        HistoryLog(self.ledger.path).append(kind, self.incarnation, step=step, value=value, detail=detail)

    def cross_check(self) -> dict[str, int]:
        """Compare this process's counter with its ledger rows; a mismatch is a harness error."""
        return cross_check(self.counter.snapshot(), self.ledger, self.incarnation)


def cross_check(counter: Mapping[str, int], ledger: Ledger, incarnation: str) -> dict[str, int]:
    recorded = ledger.counts(incarnation)
    reported = {k: v for k, v in counter.items() if v}
    if recorded != reported:
        raise HarnessError(
            f"effect oracles disagree for incarnation {incarnation!r}: "
            f"counter {reported} vs ledger {recorded}"
        )
    return recorded


# Process-wide oracle for code running inside a framework (node bodies cannot take
# extra arguments). ``install`` is called once by the process entry point.
_current: Oracle | None = None


def install(ledger_path: Path | str, incarnation: str) -> Oracle:
    global _current
    _current = Oracle(ledger_path, incarnation)
    return _current


def current() -> Oracle:
    if _current is None:
        raise HarnessError("no effect oracle installed in this process (call probes.core.oracle.install)")
    return _current


def fire(effect: str, detail: str | None = None, value: Any = None, step: str | None = None) -> None:
    current().fire(effect, detail, value, step)


def record(kind: Kind | str, step: str | None = None, value: Any = None,
           detail: Mapping[str, Any] | None = None) -> None:
    """Append a workflow event from inside the framework's code (a no-op without an oracle)."""
    if _current is not None:
        _current.record(kind, step, value, detail)
