"""Write ownership: once another run has taken a thread over, a stale run's writes are refused.

Why. Two processes can run one thread at once: worker A stalls (a long model call, a
GC pause, a ``SIGSTOP``), a supervisor decides it is gone and has worker B resume the
thread with ``invoke(None, config)``; B finishes; then A wakes up and goes on writing.
Stock checkpointers take A's writes: its next checkpoint becomes a second child of the
checkpoint B already continued from (the chain forks, silently), and A's loop goes on to
run the nodes after it, firing their side effects a second time. LangGraph's checkpoint
conformance suite has no clause about concurrent writers; issue #8796 of
langchain-ai/langgraph ("Add a write-ownership extended capability to
langgraph-checkpoint-conformance", https://github.com/langchain-ai/langgraph/issues/8796)
reproduces this with a ``SIGSTOP``'d worker on PostgreSQL and proposes an opt-in
*extended* capability, ``write_ownership`` (drafted in pull request #8894, closed at the
time of writing), that a saver advertises and the suite then judges. Its clauses, in our words:

W1  a write (``put``) from an owner that has been superseded is refused, observably (an
    error the caller can tell apart from other failures), and the refused checkpoint is
    not durable;
W2  the same for ``put_writes``: refused, and none of its pending writes are durable;
W3  a superseded owner cannot fork the chain: the thread keeps one lineage, in which no
    checkpoint has two children;
W4  it cannot displace the current owner's writes: what the current owner wrote (its
    checkpoints and the pending writes of the same task at the same checkpoint) reads
    back unchanged;
W5  it stays superseded: every later write of the superseded run is refused as well,
    also after the current owner's run has ended;

and, from the issue's discussion, the check that matters is the one made *atomically
with the write*: ownership checked a moment before writing can be lost in between.

How. Each thread has an ownership **epoch** in REMIT's own table ``remit_ownership``
(thread id, epoch, owner, time taken), in the same store as the checkpoints. A run takes
ownership when the execution loop reads the thread at the root namespace -- starting a
run, ``invoke(None)``, a resume, a replay -- by incrementing the epoch (one upsert; a
state read, ``get_state``, takes nothing). The wrapper remembers the epoch it took per
thread. Every ``put`` / ``put_writes`` of a thread it holds runs inside one transaction
that first checks the stored epoch is still its own and then makes the wrapped saver's
own write, so nothing can take ownership between check and commit:

* SQLite (``SqliteSaver``): ``BEGIN IMMEDIATE`` (the database's write lock), the check,
  then the saver's own ``INSERT`` and ``commit`` -- one transaction;
* PostgreSQL (``PostgresSaver`` on one connection): a transaction that reads the epoch
  ``FOR SHARE`` (a takeover's upsert waits for it), then the saver's own statements in
  that same transaction;
* ``InMemorySaver``: check and write under one lock (ownership among wrappers of one
  saver object in one process).

To run the saver's own write inside the transaction the wrapper opened, the saver's lock
is made reentrant (``threading.RLock``, swapped in when the wrapper is made): the check
and the write then hold it once, as one critical section. A refused write raises
``WriteSuperseded`` and rolls back; the wrapper then refuses that thread's later writes
without asking the store (W5; the store would refuse them too: epochs only grow, and
``delete_thread`` keeps the thread's epoch, so a deleted and recreated thread cannot
hand ownership back to a stale run).

Opt-in (``wrap(saver, write_ownership=True)``), for three reasons: a wrapper that takes
ownership changes what a second process on the same thread experiences (a deliberate
takeover of a live run now aborts that run's writes: the right outcome for the scenario
above, a behaviour change for deployments that run one thread from several processes on
purpose and reconcile afterwards); it creates a table in the user's database; and it adds
work to every write (one extra statement and a lock), which the REMIT benchmark's default
arm must not pay. The conformance proposal is opt-in for the same first reason.

Limits. The loop stops before the next node only if it waits for its writes:
with ``durability="sync"`` a refused write ends the run at that step; with
``durability="async"`` (LangGraph's default) the loop learns of the refusal when it next
waits for its background writes, which can be after the next node has run, so that node's
effects may still fire (nothing it writes becomes durable; guard such effects with the
effect ledger, or use ``durability="sync"``). Ownership belongs to a wrapper object per thread: two runs of one thread through
the same wrapper object at the same time are not fenced against each other (the consume
gate is what orders racing resumes in one process). Writes to a thread the wrapper holds
no ownership of (``update_state`` without a run, a direct ``put``) are not fenced. Async
savers, a ``PostgresSaver`` on a connection pool or in pipeline mode are not supported
(one clear ``TypeError`` at ``wrap``).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
import weakref
from typing import Any, Callable, Iterator, TypeVar

from remit_ref.claims import Owner, SqliteClaims, one_per_saver, underlying
from remit_ref.errors import WriteSuperseded

T = TypeVar("T")
_RLOCK = type(threading.RLock())
_SQLITE_TABLE = ("CREATE TABLE IF NOT EXISTS remit_ownership (thread_id TEXT PRIMARY KEY, epoch INTEGER NOT NULL, "
                 "owner TEXT NOT NULL, taken_at REAL NOT NULL)")
_PG_TABLE = ("CREATE TABLE IF NOT EXISTS remit_ownership (thread_id TEXT PRIMARY KEY, epoch BIGINT NOT NULL, "
             "owner TEXT NOT NULL, taken_at DOUBLE PRECISION NOT NULL)")
# Take ownership: the first run of a thread gets epoch 1, every later one the next epoch.
_TAKE = ("INSERT INTO remit_ownership (thread_id, epoch, owner, taken_at) VALUES (?, 1, ?, ?) "
         "ON CONFLICT (thread_id) DO UPDATE SET epoch = remit_ownership.epoch + 1, owner = excluded.owner, "
         "taken_at = excluded.taken_at RETURNING epoch")
_CURRENT = "SELECT epoch, owner FROM remit_ownership WHERE thread_id = ?"


def _reentrant(saver: Any) -> None:
    """Make ``saver.lock`` reentrant, so a fenced write can hold it around the saver's own write."""
    if not isinstance(saver.lock, _RLOCK):
        saver.lock = threading.RLock()


class OwnershipStore:
    """Where a thread's epoch lives; one implementation per store kind."""

    def take(self, thread_id: str, owner: str) -> int:
        """Become the thread's owner: its epoch goes up by one and is returned."""
        raise NotImplementedError

    def current(self, thread_id: str) -> tuple[int | None, str | None]:
        """The thread's (epoch, owner) on record; ``(None, None)`` if it never had one."""
        raise NotImplementedError

    def fenced(self, thread_id: str, epoch: int) -> contextlib.AbstractContextManager[None]:
        """A transaction in which the caller's write commits only while ``epoch`` is still current.

        Raises ``WriteSuperseded`` (nothing written) when the thread's epoch is another.
        """
        raise NotImplementedError


class MemoryOwnership(OwnershipStore):
    """Epochs of an ``InMemorySaver``'s threads, shared by every wrapper of that saver object."""

    def __init__(self) -> None:
        self._epochs: dict[str, tuple[int, str]] = {}
        self._lock = threading.RLock()

    def take(self, thread_id: str, owner: str) -> int:
        with self._lock:
            epoch = self._epochs.get(thread_id, (0, ""))[0] + 1
            self._epochs[thread_id] = (epoch, owner)
            return epoch

    def current(self, thread_id: str) -> tuple[int | None, str | None]:
        with self._lock:
            return self._epochs.get(thread_id, (None, None))

    @contextlib.contextmanager
    def fenced(self, thread_id: str, epoch: int) -> Iterator[None]:
        with self._lock:
            now, owner = self._epochs.get(thread_id, (None, None))
            if now != epoch:
                raise WriteSuperseded(thread_id, epoch, now, owner)
            yield


_memory: "weakref.WeakKeyDictionary[Any, MemoryOwnership]" = weakref.WeakKeyDictionary()


def _memory_for(saver: Any) -> MemoryOwnership:
    return one_per_saver(_memory, saver, MemoryOwnership)


class SqliteOwnership(OwnershipStore):
    """Epochs in the SQLite checkpoint file of a ``SqliteSaver``, through the saver's connection."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        _reentrant(saver)
        saver.setup()  # now, not inside a fenced write: its executescript would commit our transaction
        # Taking ownership commits like a claim does (visible at once, flushed by the saver's next synced
        # commit): claims.SqliteClaims' transaction runner, which also retries a locked database.
        self._runner = SqliteClaims(saver.conn, saver.lock)
        self._runner._run(lambda cur: cur.execute(_SQLITE_TABLE))

    def take(self, thread_id: str, owner: str) -> int:
        return int(self._runner._run(lambda cur: cur.execute(_TAKE, (thread_id, owner, time.time())).fetchone()[0]))

    def current(self, thread_id: str) -> tuple[int | None, str | None]:
        row = self._runner._run(lambda cur: cur.execute(_CURRENT, (thread_id,)).fetchone())
        return (None, None) if row is None else (int(row[0]), str(row[1]))

    @contextlib.contextmanager
    def fenced(self, thread_id: str, epoch: int) -> Iterator[None]:
        conn: sqlite3.Connection = self.saver.conn
        with self.saver.lock:
            if conn.in_transaction:  # the saver commits every block it runs; nothing of ours is open
                conn.commit()
            conn.execute("BEGIN IMMEDIATE")  # the write lock, from the check to the saver's commit
            try:
                row = conn.execute(_CURRENT, (thread_id,)).fetchone()
                if row is None or int(row[0]) != epoch:
                    raise WriteSuperseded(thread_id, epoch, None if row is None else int(row[0]),
                                          None if row is None else str(row[1]))
                yield  # the saver's own write: its statements join this transaction, its commit ends it
            except BaseException:
                if conn.in_transaction:
                    conn.rollback()
                raise
            if conn.in_transaction:
                conn.commit()


class PostgresOwnership(OwnershipStore):
    """Epochs in the PostgreSQL checkpoint database of a ``PostgresSaver`` on one connection."""

    def __init__(self, saver: Any) -> None:
        import psycopg

        if not isinstance(saver.conn, psycopg.Connection) or getattr(saver, "pipe", None) is not None:
            raise TypeError("write_ownership=True needs a PostgresSaver on one psycopg Connection (not a pool, "
                            "not pipeline mode): the ownership check shares the write's transaction")
        self.saver = saver
        _reentrant(saver)
        try:
            self._run(_PG_TABLE)
        except (psycopg.errors.UniqueViolation, psycopg.errors.DuplicateTable):
            pass  # another process created it at the same moment (CREATE ... IF NOT EXISTS can race)

    def _run(self, sql: str, params: tuple = ()) -> Any:
        from psycopg.rows import tuple_row

        with self.saver.lock, self.saver.conn.cursor(row_factory=tuple_row) as cur:
            cur.execute(sql.replace("?", "%s"), params)
            return cur.fetchone() if cur.description else None

    def take(self, thread_id: str, owner: str) -> int:
        return int(self._run(_TAKE, (thread_id, owner, time.time()))[0])

    def current(self, thread_id: str) -> tuple[int | None, str | None]:
        row = self._run(_CURRENT, (thread_id,))
        return (None, None) if row is None else (int(row[0]), str(row[1]))

    @contextlib.contextmanager
    def fenced(self, thread_id: str, epoch: int) -> Iterator[None]:
        from psycopg.rows import tuple_row

        conn = self.saver.conn
        with self.saver.lock, conn.transaction():
            with conn.cursor(row_factory=tuple_row) as cur:
                # FOR SHARE: a takeover's upsert of this row waits until this transaction ends.
                cur.execute(_CURRENT.replace("?", "%s") + " FOR SHARE", (thread_id,))
                row = cur.fetchone()
            if row is None or int(row[0]) != epoch:
                raise WriteSuperseded(thread_id, epoch, None if row is None else int(row[0]),
                                      None if row is None else str(row[1]))
            yield  # the saver's own statements run in this transaction; it commits when the block ends


def ownership_store_for(saver: Any) -> OwnershipStore:
    """The ownership store that lives where ``saver`` keeps its checkpoints; a one-line error otherwise."""
    saver = underlying(saver)
    name = type(saver).__name__
    module = type(saver).__module__
    if name in ("InMemorySaver", "MemorySaver") or module.startswith("langgraph.checkpoint.memory"):
        return _memory_for(saver)
    if module.startswith("langgraph.checkpoint.sqlite") and not module.endswith(".aio") and isinstance(
            getattr(saver, "conn", None), sqlite3.Connection):
        return SqliteOwnership(saver)
    if module.startswith("langgraph.checkpoint.postgres") and not module.endswith(".aio"):
        return PostgresOwnership(saver)
    raise TypeError(f"write_ownership=True supports InMemorySaver, SqliteSaver and PostgresSaver (sync); "
                    f"{module}.{name} is not one: pass write_ownership=False")


class WriteOwnership:
    """The ownership one wrapper holds: the epoch it took per thread, and the threads it lost."""

    def __init__(self, store: OwnershipStore) -> None:
        self.store = store
        self._held: dict[str, int] = {}
        self._lost: set[str] = set()
        self._lock = threading.Lock()

    def take(self, thread_id: str) -> int:
        """A run of ``thread_id`` starts here: it becomes the owner (superseding any earlier one)."""
        epoch = self.store.take(thread_id, Owner.new().token)
        with self._lock:
            self._held[thread_id] = epoch
            self._lost.discard(thread_id)
        return epoch

    def held(self, thread_id: str) -> int | None:
        """The epoch this wrapper took for ``thread_id``, if it took one."""
        return self._held.get(thread_id)

    def write(self, config: dict[str, Any], fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` -- the wrapped saver's write -- fenced by this wrapper's epoch of the config's thread."""
        thread = (config.get("configurable") or {}).get("thread_id")
        epoch = None if thread is None else self._held.get(str(thread))
        if epoch is None:
            return fn(*args)  # no run of this wrapper owns the thread: not fenced (see Limits)
        thread = str(thread)
        if thread in self._lost:
            raise WriteSuperseded(thread, epoch, *self.store.current(thread))
        try:
            with self.store.fenced(thread, epoch):
                return fn(*args)
        except WriteSuperseded:
            with self._lock:
                if self._held.get(thread) == epoch:
                    self._lost.add(thread)
            raise

    async def awrite(self, config: dict[str, Any], fn: Callable[..., Any], *args: Any) -> Any:
        """``write`` for the async methods (``InMemorySaver``'s, which do not await anything in between)."""
        thread = (config.get("configurable") or {}).get("thread_id")
        epoch = None if thread is None else self._held.get(str(thread))
        if epoch is None:
            return await fn(*args)
        thread = str(thread)
        if thread in self._lost:
            raise WriteSuperseded(thread, epoch, *self.store.current(thread))
        try:
            with self.store.fenced(thread, epoch):
                return await fn(*args)
        except WriteSuperseded:
            with self._lock:
                if self._held.get(thread) == epoch:
                    self._lost.add(thread)
            raise
