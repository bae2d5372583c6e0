"""Histories: what a probe observed, in order, as events a checker can judge.

A verdict is a judgement over a *history*, not over a count a campaign chose to keep.
The history is the ordered list of everything the harness saw during one probe:

* the events the harness drives (``start``, ``answer``, ``resume``, ``crash``,
  ``recover``, ``fork``, ``tamper``), appended by the protocol as it drives them;
* the events the workflow produces (``step_begin``, ``effect``, ``step_end``,
  ``pause``, ``consume``, ``complete``, ``error``, ``refuse``, ``persist``), appended
  from inside the framework's code through the oracle, by whichever process (which
  *incarnation*) ran them.

Both kinds are written to one SQLite table next to the effect ledger, one committed
row per event, so the order across processes is the commit order and a SIGKILLed
incarnation's events survive it. Checkers (``probes.core.checker``) read a
``History`` and return a label with a *witness*: the events that break the property.
The TLA+ trace validator (``probes.tla``) maps the same events onto the model.

Nothing here is run-varying except ``pid``, which is kept out of ``to_json(stable=True)``
so histories can be stored in verdict evidence and stay byte-identical across runs.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping


HARNESS = "harness"  # the incarnation of the events the harness itself records (starts, answers, crashes)


class Kind(str, Enum):
    # driven by the harness
    START = "start"          # a run was started with its input
    ANSWER = "answer"        # a human answer was submitted (value = the answer)
    RESUME = "resume"        # a resume was issued (detail: mode = retry | fork, target checkpoint)
    CRASH = "crash"          # the harness killed or failed an incarnation (detail: how, where)
    RECOVER = "recover"      # a recovery was issued after a crash (detail: mode)
    FORK = "fork"            # a fork was requested at an explicit earlier pause
    TAMPER = "tamper"        # the harness edited durable state (detail: edit)
    DELETE = "delete"        # the harness deleted the run through the framework's API (detail: while)
    # produced by the workflow
    STEP_BEGIN = "step_begin"
    EFFECT = "effect"        # the non-idempotent external effect fired
    STEP_END = "step_end"
    PAUSE = "pause"          # the workflow paused for a human answer
    CONSUME = "consume"      # a pending answer was consumed (value = the answer seen)
    PERSIST = "persist"      # durable state was written (detail: what)
    REFUSE = "refuse"        # the framework refused loudly (value = the error)
    ERROR = "error"          # an unexpected exception ended the incarnation (value = the error)
    COMPLETE = "complete"    # the run finished (value = the outcome)


@dataclass(frozen=True)
class Event:
    kind: Kind
    incarnation: str
    step: str | None = None
    effect: str | None = None
    value: Any = None
    detail: Mapping[str, Any] = field(default_factory=dict)
    seq: int = 0  # commit order within the history (1-based); 0 before it is stored

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"seq": self.seq, "kind": self.kind.value, "incarnation": self.incarnation}
        for name in ("step", "effect", "value"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.detail:
            data["detail"] = dict(self.detail)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Event":
        return cls(Kind(data["kind"]), data["incarnation"], data.get("step"), data.get("effect"),
                   data.get("value"), dict(data.get("detail", {})), int(data.get("seq", 0)))


@dataclass(frozen=True)
class History:
    """An ordered, immutable list of events with the queries checkers need."""

    events: tuple[Event, ...] = ()

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def of(self, *kinds: Kind) -> list[Event]:
        return [e for e in self.events if e.kind in kinds]

    def effect_counts(self) -> dict[str, int]:
        return dict(sorted(Counter(e.effect for e in self.of(Kind.EFFECT) if e.effect).items()))

    def incarnations(self) -> list[str]:
        seen: dict[str, None] = {}
        for e in self.events:
            seen.setdefault(e.incarnation, None)
        return list(seen)

    def after(self, event: Event) -> "History":
        return History(tuple(e for e in self.events if e.seq > event.seq))

    def to_json(self) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.events]

    @classmethod
    def from_json(cls, data: Iterable[Mapping[str, Any]]) -> "History":
        return cls(tuple(Event.from_json(d) for d in data))

    @classmethod
    def of_events(cls, events: Iterable[Event]) -> "History":
        """Number events in the given order (for histories built in one process)."""
        return cls(tuple(Event(e.kind, e.incarnation, e.step, e.effect, e.value, e.detail, i)
                         for i, e in enumerate(events, 1)))


HISTORY_SCHEMA = """
CREATE TABLE IF NOT EXISTS history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    incarnation TEXT NOT NULL,
    pid INTEGER NOT NULL,
    step TEXT,
    effect TEXT,
    value TEXT,
    detail TEXT
)
"""


def insert_event(conn: sqlite3.Connection, kind: Kind | str, incarnation: str, step: str | None = None,
                 effect: str | None = None, value: Any = None, detail: Mapping[str, Any] | None = None) -> None:
    """One history row on an open connection (so the oracle can commit it with its ledger row)."""
    conn.execute(
        "INSERT INTO history(kind, incarnation, pid, step, effect, value, detail) VALUES (?,?,?,?,?,?,?)",
        (Kind(kind).value, incarnation, os.getpid(), step, effect,
         None if value is None else json.dumps(value, sort_keys=True, default=repr),
         json.dumps(dict(detail), sort_keys=True, default=repr) if detail else None),
    )


def durable_connection(path: Path) -> sqlite3.Connection:
    """Autocommit (each INSERT its own transaction), fsync on commit, wait for other writers:
    what a record that must survive a SIGKILL of its writer needs."""
    conn = sqlite3.connect(path, timeout=60, isolation_level=None)
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA busy_timeout=60000")
    return conn


def prepare_durable_file(path: Path | str, *ddl: str) -> Path:
    """Create the file's directory, switch it to WAL and create its tables (idempotent).

    Several processes may open the same new file at once (racers, parallel campaigns):
    SQLite answers a concurrent switch to WAL or a schema read upgraded to a write with
    "database is locked" without waiting, whatever the busy timeout. An advisory lock on
    a sidecar file serializes the preparation; afterwards every statement is a plain read.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)  # released when the file closes, or when its holder dies
        conn = durable_connection(path)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            for statement in ddl:
                conn.execute(statement)
        finally:
            conn.close()
    return path


class HistoryLog:
    """The crash-surviving store of one probe's history (a table in an SQLite file).

    Every process of the probe appends to the same file; each append is its own
    committed transaction, so the log's order is the order events became durable and a
    killed process loses nothing it had appended.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = prepare_durable_file(path, HISTORY_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        return durable_connection(self.path)

    def append(self, kind: Kind | str, incarnation: str, step: str | None = None, effect: str | None = None,
               value: Any = None, detail: Mapping[str, Any] | None = None) -> None:
        conn = self._connect()
        try:
            insert_event(conn, kind, incarnation, step, effect, value, detail)
        finally:
            conn.close()

    def read(self) -> History:
        conn = self._connect()
        try:
            rows = conn.execute(
                "SELECT seq, kind, incarnation, step, effect, value, detail FROM history ORDER BY seq").fetchall()
        finally:
            conn.close()
        events = [Event(Kind(kind), inc, step, effect, None if value is None else json.loads(value),
                        json.loads(detail) if detail else {}, 0)
                  for _seq, kind, inc, step, effect, value, detail in rows]
        return History.of_events(events)  # renumber 1..n: AUTOINCREMENT gaps are not information
