"""``wrap(saver)``: a drop-in ``BaseCheckpointSaver`` that makes resume mean resume.

Everything REMIT does not change is forwarded unchanged to the wrapped saver (every
method of ``BaseCheckpointSaver``, sync and async, ``put_writes``' ``task_path``
included; any other attribute through ``__getattr__``). What it changes:

* **fork intent** (read path): a resume addressed to an explicit checkpoint id (or
  carrying ``configurable["remit_intent"] = "fork"``) does not see the answers
  recorded at that checkpoint, so ``interrupt()`` returns the fork's own value;
* **checkpoint validity** (write path): values are checked against the state schema
  before ``put`` / ``put_writes`` reach the store; an invalid one raises
  ``InvalidCheckpoint`` and nothing is written;
* **consume gate** (opt-in, read path): a resume reading a checkpoint with interrupts
  claims them atomically in the same store; the loser raises ``ConsumeConflict``
  before any node runs. The winner's claim carries LangGraph's resume write (one
  transaction), and the loop's identical ``put_writes`` is then not repeated. On the async
  savers (AsyncSqliteSaver, AsyncPostgresSaver) the claim is awaited in ``aget_tuple``,
  through the saver's own async connection (``remit_ref.aio``).
* **write ownership** (opt-in, write path): a run takes ownership of its thread when it
  starts; once a later run (another process) has taken it, this run's ``put`` /
  ``put_writes`` raise ``WriteSuperseded`` and nothing is written (``remit_ref.ownership``).

Decisions come from ``remit_ref.core``; this module only does I/O around them.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, AsyncIterator, Callable, Generator, Iterator, NamedTuple, Sequence

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from remit_ref import core
from remit_ref._langgraph import (
    RUNTIME_KEY,
    STATE_READ,
    UNWALKED_EXECUTION_READ,
    ReadContext,
    SchemaChecker,
    answered_interrupt_ids,
    graph_checker,
    has_interrupt,
    has_recorded_answer,
    inspect_read,
    interrupt_ids,
    schema_checker,
    unanswered_interrupt_ids,
)
from remit_ref.aio import AIOSQLITE_CLOSED as _AIOSQLITE_CLOSED
from remit_ref.aio import AsyncClaimStore, BlockingClaims, claim_store_for
from remit_ref.claims import (
    NULL_TASK_ID,
    ClaimStore,
    Owner,
    ResumeWrite,
    owner_alive,
    underlying,
    without_claims,
)
from remit_ref.errors import ConsumeConflict, InvalidCheckpoint, StoreClosed
from remit_ref.ownership import WriteOwnership, ownership_store_for

Validator = Callable[[str, Any], "str | None"]
_NOTHING = object()


class StoreCall(NamedTuple):
    """One call the gate's protocol makes on its claim store (``RemitSaver._claim_steps``), or, for
    ``ANSWERED``, on the wrapped saver (``RemitSaver._answered``)."""

    method: str  # try_insert, read, take_over or ANSWERED
    args: tuple[Any, ...]


ANSWERED = "answered"  # is the claimed interrupt's answer durable? Read from the checkpoint's writes
ClaimWanted = tuple[Any, str, str, "ResumeWrite | None"]  # thread id (as configured), checkpoint id, interrupt id,
# carried write
_MAX_CARRIED = 256  # resume writes carried but not yet seen from the loop; past this, forget them (harmless)


class RemitSaver(BaseCheckpointSaver):
    """The wrapper ``wrap`` returns. Construct it through ``wrap``."""

    def __init__(
        self,
        base: BaseCheckpointSaver,
        *,
        fork_intent: bool = True,
        validator: Any = None,
        consume_gate: bool = False,
        addressed_is_fork: bool = True,
        claim_ttl: float | None = None,
        claims: ClaimStore | AsyncClaimStore | None = None,
        write_ownership: bool = False,
    ) -> None:
        if not isinstance(base, BaseCheckpointSaver):
            raise TypeError(f"wrap() needs a langgraph BaseCheckpointSaver, got {type(base).__name__}; "
                            f"pass InMemorySaver(), SqliteSaver(conn) or PostgresSaver(conn)")
        if isinstance(base, RemitSaver):
            raise TypeError("this saver is already wrapped by REMIT; wrap the underlying saver once")
        for name, flag in (("fork_intent", fork_intent), ("consume_gate", consume_gate),
                           ("addressed_is_fork", addressed_is_fork), ("write_ownership", write_ownership)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, not {flag!r}")
        if claim_ttl is not None:
            if isinstance(claim_ttl, bool) or not isinstance(claim_ttl, (int, float)):
                raise TypeError(f"claim_ttl must be a number of seconds or None, not {claim_ttl!r}")
            if not claim_ttl > 0:
                raise ValueError(f"claim_ttl must be a positive number of seconds or None, not {claim_ttl!r}")
        if claims is not None and not isinstance(claims, (ClaimStore, AsyncClaimStore)):
            raise TypeError(f"claims must be a remit_ref.claims.ClaimStore (e.g. remit_ref.claims.sqlite_claims(path)), "
                            f"not {type(claims).__name__}")
        super().__init__(serde=base.serde)
        self.base = base
        self.fork_intent = fork_intent
        self.addressed_is_fork = addressed_is_fork
        self.consume_gate = consume_gate
        self.claim_ttl = claim_ttl
        self._explicit: Validator | SchemaChecker | None = None
        self._use_graph_schema = validator is None
        if validator is False or validator is None:
            pass
        elif isinstance(validator, type):
            checker = schema_checker(validator)
            if checker is None:
                raise TypeError(f"validator={validator.__name__} is not a pydantic model or TypedDict; pass one, "
                                f"a callable(channel, value) -> str | None, or False")
            self._explicit = checker
        elif callable(validator):
            self._explicit = validator
        else:
            raise TypeError(f"validator must be None, False, a state schema class or a callable, not {validator!r}")
        store = claims if claims is not None else (claim_store_for(base) if consume_gate else None)
        # An async store (the async savers' own connection) is awaited by aget_tuple; the sync
        # entry points reach it through BlockingClaims, on the saver's event loop.
        self._aclaims: AsyncClaimStore | None = store if isinstance(store, AsyncClaimStore) else None
        self._claims: ClaimStore | None = BlockingClaims(store) if isinstance(store, AsyncClaimStore) else store
        self._thread_checker: dict[Any, SchemaChecker | None] = {}  # keyed by the config's thread_id as given
        # (thread, ns, checkpoint) -> resume value whose write a won claim already committed
        self._carried: dict[tuple[str, str, str], Any] = {}
        self._lock = threading.Lock()
        self._ownership = WriteOwnership(ownership_store_for(base)) if write_ownership else None
        # Cost at the floor: only the work an option can need is done. Validation runs only with a
        # validator; LangGraph's per-channel get_next_version goes straight to the wrapped saver.
        self._validating = self._use_graph_schema or self._explicit is not None
        self.get_next_version = base.get_next_version  # type: ignore[method-assign]

    # ---- attribute forwarding ----------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        # Only called for attributes RemitSaver does not define (conn, setup, lock ...).
        if name == "base":
            raise AttributeError(name)
        return getattr(self.base, name)

    @property
    def config_specs(self) -> list:  # type: ignore[override]
        return self.base.config_specs

    # ---- the read path -----------------------------------------------------------
    def _after_read(self, config: dict[str, Any], tup: CheckpointTuple | None, ctx: ReadContext) -> CheckpointTuple | None:
        tup, wanted = self._read_view(config, tup, ctx)
        for thread_id, checkpoint_id, iid, carry in wanted:
            self._claim(thread_id, checkpoint_id, iid, carry)
        return tup

    def _read_view(self, config: dict[str, Any], tup: CheckpointTuple | None,
                   ctx: ReadContext) -> tuple[CheckpointTuple | None, list[ClaimWanted]]:
        """What the loop may see of ``tup``, and the claims that must be won before it sees it."""
        tup = without_claims(tup)
        wanted: list[ClaimWanted] = []
        conf = config.get("configurable", {}) or {}
        if ctx.graph is not None and self._use_graph_schema and conf.get("thread_id") is not None:
            self._remember_schema(conf["thread_id"], ctx.graph)
        if tup is None or not ctx.execution or not ctx.resume or conf.get("checkpoint_ns", ""):
            return tup, wanted
        pending = list(tup.pending_writes or [])
        intent = core.resume_intent(
            addressed=bool(conf.get("checkpoint_id")) and self.addressed_is_fork,
            flag=conf.get("remit_intent"),
            fork_intent=self.fork_intent,
        )
        answered_before = has_recorded_answer(pending)
        if self._claims is not None and (intent is core.Intent.RETRY or not answered_before):
            # (claims are taken only where the loop's view is ``pending`` itself, so its unanswered ids are these)
            targets = core.claim_targets(interrupt_ids(pending), ctx.resume_map_ids, unanswered_interrupt_ids(pending))
            # A bare resume of one interrupt: LangGraph's next write is (__resume__, value) here; the claim carries it.
            carry = ctx.resume_write if self._claims.carries_writes and len(targets) == 1 else None
            checkpoint_id = tup.config["configurable"].get("checkpoint_id", "")
            wanted = [(conf.get("thread_id"), checkpoint_id, iid, carry) for iid in targets]
        if answered_before:  # a FORK's view drops the recorded answers; a RETRY's is the same writes
            tup = tup._replace(pending_writes=core.fork_view(pending, intent))
        return tup, wanted

    def _claim(self, thread_id: Any, checkpoint_id: str, iid: str, carry: ResumeWrite | None = None) -> None:
        """Claim one interrupt through the sync store, or raise ConsumeConflict (``_claim_steps``)."""
        assert self._claims is not None
        steps = self._claim_steps(thread_id, checkpoint_id, iid, carry)
        result = None
        while True:
            try:
                call = steps.send(result)
            except StopIteration:
                return
            if call.method == ANSWERED:
                result = self._answered(*call.args)
            else:
                result = getattr(self._claims, call.method)(*call.args)

    async def _aclaim(self, thread_id: Any, checkpoint_id: str, iid: str, carry: ResumeWrite | None = None) -> None:
        """``_claim``, awaited on the async store (an async saver's own connection); else the sync store's.
        The answer is read with the wrapped saver's async read: a sync read of an async saver would block
        (or refuse to run on) the very event loop this runs on."""
        steps = self._claim_steps(thread_id, checkpoint_id, iid, carry)
        result = None
        while True:
            try:
                call = steps.send(result)
            except StopIteration:
                return
            if call.method == ANSWERED:
                result = await self._aanswered(*call.args)
            elif self._aclaims is None:
                assert self._claims is not None
                result = getattr(self._claims, call.method)(*call.args)
            else:
                result = await getattr(self._aclaims, call.method)(*call.args)

    @staticmethod
    def _checkpoint_config(thread_id: Any, checkpoint_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}}

    def _answered(self, thread_id: Any, checkpoint_id: str, iid: str) -> bool:
        """Whether the store holds the answer to interrupt ``iid`` at the claimed checkpoint (read now,
        from the wrapped saver: claim rows are not writes LangGraph reads)."""
        tup = self.base.get_tuple(self._checkpoint_config(thread_id, checkpoint_id))
        return iid in answered_interrupt_ids(tup.pending_writes if tup is not None else None)

    async def _aanswered(self, thread_id: Any, checkpoint_id: str, iid: str) -> bool:
        tup = await self.base.aget_tuple(self._checkpoint_config(thread_id, checkpoint_id))
        return iid in answered_interrupt_ids(tup.pending_writes if tup is not None else None)

    def _claim_steps(self, thread_id: Any, checkpoint_id: str, iid: str,
                     carry: ResumeWrite | None) -> Generator[StoreCall, Any, None]:
        """The gate's protocol for one interrupt, free of I/O: it yields each store call and is sent its result
        (``_claim`` drives it on a sync store, ``_aclaim`` on an async one). Returns when this resume
        consumes the interrupt, raises ConsumeConflict otherwise; every outcome is ``core.gate_decision``'s.

        With ``carry``, a won first insert also committed the resume write: it is noted so
        that ``put_writes`` drops the loop's identical write instead of committing it again.

        A lost insert also asks whether the holder's answer is durable (``ANSWERED``), after its
        liveness was read: a dead owner writes nothing more, so an answer absent then stays absent
        and the takeover it allows cannot be a second consume.
        """
        key = (str(thread_id), "", checkpoint_id, iid)
        me = Owner.new()
        if carry is None:
            inserted = yield StoreCall("try_insert", (key, me))
        else:
            inserted = yield StoreCall("try_insert", (key, me, carry))
            if inserted:
                with self._lock:
                    if len(self._carried) >= _MAX_CARRIED:
                        self._carried.clear()
                    self._carried[(key[0], "", checkpoint_id)] = carry.value
        row = None
        for _ in range(3):
            if not inserted:
                row = yield StoreCall("read", (key,))
                if row is None:  # released between our insert and read: try again
                    inserted = yield StoreCall("try_insert", (key, me))
                    continue
            alive = None if row is None else owner_alive(row.host, row.pid, row.pstart)
            expired = (row is not None and self.claim_ttl is not None
                       and time.time() - row.claimed_at > self.claim_ttl)
            answered = False
            if not inserted:
                answered = yield StoreCall(ANSWERED, (thread_id, checkpoint_id, iid))
            decision = core.gate_decision(inserted, alive, expired, answered)
            if decision is core.GateDecision.CONSUME:
                return
            if decision is core.GateDecision.CONFLICT:
                break
            assert row is not None
            inserted = yield StoreCall("take_over", (key, row.owner, me))  # TAKEOVER: conditional on the old owner
        else:
            if core.gate_decision(inserted, None, False, False) is core.GateDecision.CONSUME:
                return  # the last attempt's insert or takeover won
        raise ConsumeConflict(str(thread_id), checkpoint_id, iid, (row.owner if row else "?").rsplit("/", 1)[0])

    def _closed(self, exc: BaseException) -> StoreClosed | None:
        """A clear error for a closed connection (sqlite3, psycopg and aiosqlite say it their own way)."""
        module = type(exc).__module__
        if (("closed" in str(exc) and (module.startswith("psycopg") or module == "sqlite3"))
                or (type(exc) is ValueError and str(exc) in _AIOSQLITE_CLOSED)):
            return StoreClosed(type(underlying(self.base)).__name__, str(exc).strip())
        return None

    def _raise_closed(self, exc: BaseException) -> None:
        closed = self._closed(exc)
        if closed is not None:
            raise closed from exc

    def _read_context(self, config: dict[str, Any], tup: CheckpointTuple | None) -> ReadContext:
        """The frame walk (``inspect_read``), only where what it finds can change this read or what is
        remembered from it: the graph's schema for the default validator; whether this is a resume where
        a claim could be taken (gate on, interrupts recorded), where a fork could drop a recorded answer
        (an addressed read with an answer recorded), or where ``remit_intent`` is given (it is checked)."""
        conf = config.get("configurable") or {}
        if RUNTIME_KEY not in conf:
            return STATE_READ
        want_graph = self._use_graph_schema and conf.get("thread_id") is not None
        pending = tup.pending_writes if tup is not None else None
        want_resume = bool(pending) and not conf.get("checkpoint_ns", "") and (
            conf.get("remit_intent") is not None
            or (self._claims is not None and has_interrupt(pending))
            or (self.fork_intent and self.addressed_is_fork and bool(conf.get("checkpoint_id"))
                and has_recorded_answer(pending)))
        if not (want_graph or want_resume):
            return UNWALKED_EXECUTION_READ
        return inspect_read(config, start_depth=3, want_graph=want_graph, want_resume=want_resume)

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        try:
            tup = self.base.get_tuple(config)
        except Exception as exc:
            self._raise_closed(exc)
            raise
        ctx = self._read_context(config, tup)
        tup = self._after_read(config, tup, ctx)
        if self._ownership is not None:
            self._take_ownership(config, ctx)
        return tup

    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        try:
            tup = await self.base.aget_tuple(config)
        except Exception as exc:
            self._raise_closed(exc)
            raise
        ctx = self._read_context(config, tup)
        tup, wanted = self._read_view(config, tup, ctx)
        for thread_id, checkpoint_id, iid, carry in wanted:
            await self._aclaim(thread_id, checkpoint_id, iid, carry)
        if self._ownership is not None:
            self._take_ownership(config, ctx)
        return tup

    def _take_ownership(self, config: dict[str, Any], ctx: ReadContext) -> None:
        """The execution loop read the thread at the root namespace: a run starts (or resumes) here."""
        assert self._ownership is not None
        conf = config.get("configurable") or {}
        if ctx.execution and not conf.get("checkpoint_ns") and conf.get("thread_id") is not None:
            self._ownership.take(str(conf["thread_id"]))

    def get(self, config: dict[str, Any]) -> Any:
        return self.base.get(config)

    async def aget(self, config: dict[str, Any]) -> Any:
        return await self.base.aget(config)

    def list(self, config: Any, *, filter: Any = None, before: Any = None, limit: Any = None) -> Iterator[CheckpointTuple]:
        return map(without_claims, self.base.list(config, filter=filter, before=before, limit=limit))

    async def alist(self, config: Any, *, filter: Any = None, before: Any = None,
                    limit: Any = None) -> AsyncIterator[CheckpointTuple]:
        async for tup in self.base.alist(config, filter=filter, before=before, limit=limit):
            yield without_claims(tup)

    # ---- the write path ------------------------------------------------------------
    def _remember_schema(self, thread_id: Any, graph: Any) -> None:
        checker = graph_checker(graph)
        with self._lock:
            self._thread_checker[thread_id] = checker

    def _validate(self, where: str, config: dict[str, Any], values: dict[str, Any], writes: bool) -> None:
        """``core.first_invalid`` over the values only the checker can decide (a schema's exact
        type tests accept most values without a call); InvalidCheckpoint names the first.

        A write to a reducer channel is a delta, not a value of the field's type: those are
        checked at ``put``, on the reduced value; ``put_writes`` checks the plain channels."""
        from_graph = self._thread_checker.get((config.get("configurable") or {}).get("thread_id"))
        if self._explicit is None:
            if from_graph is None:
                return
            bad = core.first_invalid(from_graph.undecided(values, from_graph.plain_fields if writes else None),
                                     from_graph.check)
        else:
            bad = self._explicit_first_invalid(from_graph, values, writes)
        if bad is not None:
            raise InvalidCheckpoint(where, bad[0], bad[1])

    def _explicit_first_invalid(self, from_graph: SchemaChecker | None, values: dict[str, Any],
                                writes: bool) -> tuple[str, str] | None:
        """The same for a validator given to ``wrap``: writes are checked on the graph's plain
        channels where the graph is known, else on every channel but LangGraph's own."""
        plain = from_graph.plain_channels if writes and from_graph is not None else None
        checker = self._explicit
        if isinstance(checker, SchemaChecker):
            return core.first_invalid(checker.undecided(values, plain), checker.check)
        if writes:
            values = {ch: v for ch, v in values.items() if not ch.startswith("__") and (plain is None or ch in plain)}
        return core.first_invalid(values, checker)

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if self._validating:
            self._validate("put", config, checkpoint.get("channel_values") or {}, False)
        try:
            if self._ownership is not None:
                return self._ownership.write(config, self.base.put, config, checkpoint, metadata, new_versions)
            return self.base.put(config, checkpoint, metadata, new_versions)
        except Exception as exc:
            self._raise_closed(exc)
            raise

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if self._validating:
            self._validate("put", config, checkpoint.get("channel_values") or {}, False)
        try:
            if self._ownership is not None:
                return await self._ownership.awrite(config, self.base.aput, config, checkpoint, metadata, new_versions)
            return await self.base.aput(config, checkpoint, metadata, new_versions)
        except Exception as exc:
            self._raise_closed(exc)
            raise

    def _was_carried(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str) -> bool:
        """Is this the loop's resume write that the won claim already committed (``_claim``)?"""
        if not self._carried or task_id != NULL_TASK_ID or len(writes) != 1:
            return False
        conf = config.get("configurable") or {}
        key = (str(conf.get("thread_id")), str(conf.get("checkpoint_ns", "")), str(conf.get("checkpoint_id")))
        with self._lock:
            value = self._carried.pop(key, _NOTHING)
        channel, written = writes[0]
        return channel == core.RESUME_CHANNEL and written is value

    def put_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        if self._carried and self._was_carried(config, writes, task_id):
            return None
        if self._validating:
            self._validate("put_writes", config, dict(writes), True)
        try:
            if self._ownership is not None:
                return self._ownership.write(config, self.base.put_writes, config, writes, task_id, task_path)
            return self.base.put_writes(config, writes, task_id, task_path)
        except Exception as exc:
            self._raise_closed(exc)
            raise

    async def aput_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        if self._carried and self._was_carried(config, writes, task_id):
            return None
        if self._validating:
            self._validate("put_writes", config, dict(writes), True)
        try:
            if self._ownership is not None:
                return await self._ownership.awrite(config, self.base.aput_writes, config, writes, task_id, task_path)
            return await self.base.aput_writes(config, writes, task_id, task_path)
        except Exception as exc:
            self._raise_closed(exc)
            raise

    # ---- plain forwarding -------------------------------------------------------------
    def delete_thread(self, thread_id: str) -> None:
        return self.base.delete_thread(thread_id)

    async def adelete_thread(self, thread_id: str) -> None:
        return await self.base.adelete_thread(thread_id)

    def delete_for_runs(self, *args: Any, **kwargs: Any) -> Any:
        return self.base.delete_for_runs(*args, **kwargs)

    async def adelete_for_runs(self, *args: Any, **kwargs: Any) -> Any:
        return await self.base.adelete_for_runs(*args, **kwargs)

    def copy_thread(self, *args: Any, **kwargs: Any) -> Any:
        return self.base.copy_thread(*args, **kwargs)

    async def acopy_thread(self, *args: Any, **kwargs: Any) -> Any:
        return await self.base.acopy_thread(*args, **kwargs)

    def prune(self, *args: Any, **kwargs: Any) -> Any:
        return self.base.prune(*args, **kwargs)

    async def aprune(self, *args: Any, **kwargs: Any) -> Any:
        return await self.base.aprune(*args, **kwargs)

    def get_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        return self.base.get_delta_channel_history(*args, **kwargs)

    async def aget_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        return await self.base.aget_delta_channel_history(*args, **kwargs)

    def get_next_version(self, current: Any, channel: Any) -> Any:
        return self.base.get_next_version(current, channel)

    # ---- claim administration -------------------------------------------------------------
    def claims(self, thread_id: str | None = None) -> list[dict[str, Any]]:
        """The consume claims on record (all threads, or one), for inspection."""
        if self._claims is None:
            return []
        return [
            {"thread_id": k[0], "checkpoint_ns": k[1], "checkpoint_id": k[2], "interrupt_id": k[3],
             "owner": r.owner.rsplit("/", 1)[0], "host": r.host, "pid": r.pid, "claimed_at": r.claimed_at,
             "owner_alive": owner_alive(r.host, r.pid, r.pstart)}
            for k, r in self._claims.all_rows(thread_id)
        ]

    def release_stale_claims(self, thread_id: str | None = None) -> int:
        """Delete claims whose owner was a process on this host that is gone, unless the claimed
        interrupt's answer is durable; returns how many.

        A claim whose answer is in the store records a consume that happened (the gate refuses a
        takeover of it for the same reason): deleting it would let a later resume of the same
        interrupt run the node again. Such a run is finished with ``invoke(None)``, which takes no
        claim. Owners on other hosts cannot be checked from here: use ``claim_ttl`` or
        ``release_claims`` for them.
        """
        if self._claims is None:
            return 0
        n = 0
        for key, row in self._claims.all_rows(thread_id):
            thread, _ns, checkpoint_id, iid = key
            if owner_alive(row.host, row.pid, row.pstart) is False and not self._answered(thread, checkpoint_id, iid):
                n += self._claims.delete(key, row.owner)
        return n

    def release_claims(self, thread_id: str) -> int:
        """An operator's override: delete every claim of ``thread_id`` (its owner is known to be gone),
        answered ones included: a resume after it may consume an answered interrupt again."""
        if self._claims is None:
            return 0
        return sum(self._claims.delete(key) for key, _row in self._claims.all_rows(thread_id))

    # The same, from a coroutine (an async saver's event loop cannot wait for itself): the sync
    # method runs in a worker thread, and an async store's calls come back to the loop.
    async def aclaims(self, thread_id: str | None = None) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.claims, thread_id)

    async def arelease_stale_claims(self, thread_id: str | None = None) -> int:
        return await asyncio.to_thread(self.release_stale_claims, thread_id)

    async def arelease_claims(self, thread_id: str) -> int:
        return await asyncio.to_thread(self.release_claims, thread_id)


def wrap(
    base_saver: BaseCheckpointSaver,
    *,
    fork_intent: bool = True,
    validator: Any = None,
    consume_gate: bool = False,
    addressed_is_fork: bool = True,
    claim_ttl: float | None = None,
    claims: ClaimStore | AsyncClaimStore | None = None,
    write_ownership: bool = False,
) -> RemitSaver:
    """Wrap a LangGraph checkpointer so that resume means resume. See book/remit-api.md.

    ``fork_intent``        addressed (or ``remit_intent="fork"``) resumes do not see recorded answers.
    ``validator``          None: the graph's state schema where known; False: off; a schema class;
                           or ``callable(channel, value) -> reason | None``.
    ``consume_gate``       claim interrupts atomically in the store on resume (loser: ConsumeConflict).
    ``addressed_is_fork``  False for deployments that send checkpoint ids on every resume: then only
                           ``remit_intent="fork"`` marks a fork.
    ``claim_ttl``          seconds after which any host may take a claim over (lease); None: never.
    ``claims``             a custom ``remit_ref.claims.ClaimStore`` or ``remit_ref.aio.AsyncClaimStore``
                           (other stores). Not needed for the async savers: their gate claims through
                           the saver's own async connection.
    ``write_ownership``    a run owns its thread from its first read; once another run took it over,
                           this run's writes raise WriteSuperseded and write nothing (opt-in; sync
                           savers and InMemorySaver; see remit_ref.ownership).
    """
    return _class_for(base_saver)(base_saver, fork_intent=fork_intent, validator=validator,
                                  consume_gate=consume_gate, addressed_is_fork=addressed_is_fork,
                                  claim_ttl=claim_ttl, claims=claims, write_ownership=write_ownership)


# Optional BaseCheckpointSaver methods: offered by the wrapper only where the wrapped saver offers them.
_OPTIONAL = ("delete_for_runs", "adelete_for_runs", "copy_thread", "acopy_thread", "prune", "aprune")
_CLASSES: dict[frozenset[str], type[RemitSaver]] = {}


def _class_for(base: Any) -> type[RemitSaver]:
    """RemitSaver, minus the optional methods the wrapped saver's class does not implement.

    Callers (and LangGraph's conformance suite) detect a saver's capabilities by which
    methods its class overrides; forwarding a method the base lacks would advertise a
    capability that only raises NotImplementedError.
    """
    missing = frozenset(m for m in _OPTIONAL
                        if getattr(type(base), m, None) is getattr(BaseCheckpointSaver, m, None))
    if not missing:
        return RemitSaver
    cls = _CLASSES.get(missing)
    if cls is None:
        cls = _CLASSES[missing] = type("RemitSaver", (RemitSaver,),
                                       {m: getattr(BaseCheckpointSaver, m) for m in missing})
    return cls
