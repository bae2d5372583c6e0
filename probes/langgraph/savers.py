"""The one place a LangGraph checkpoint saver is built, plus two instrumenting delegates.

Every probe builds its saver through :func:`make_saver`, so the REMIT campaign can run
the very same probes with ``arm="remit"`` (the stock saver wrapped by
``remit_ref.wrap``) and with ``arm="remit-contract"`` (the paper's build,
``remit-contract`` 0.1.2, through its documented ``remit.wrap(SaverClass, conn, ...)``,
which constructs the wrapped saver itself). Two delegates sit between the graph and the stock saver:

* :class:`ParkingSaver` calls ``park("put")``, ``park("put_writes")`` and ``park("op")``
  *after* each persistence operation has returned, and logs the operations in order.
  That gives SIGKILL points "inside the saver, after the n-th durable write" without
  touching LangGraph code, and records which operations 1.2.9 actually performs.
* :class:`DroppingSaver` silently discards a class of durable writes (every ``put``
  after the first, or all ``put_writes``): the RD arm asks whether recovery stays a
  function of what *did* become durable.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from probes.core.backends import Store
from probes.core.nemesis import park

ARMS = ("stock", "remit", "remit-contract")
FRAMEWORKS = {"stock": "langgraph", "remit": "langgraph+remit", "remit-contract": "langgraph+remit-contract"}
DROP_MODES = ("nothing", "later_puts", "all_put_writes")


def framework_name(arm: str) -> str:
    """Verdict framework label: stock LangGraph, or LangGraph behind a REMIT saver (this
    project's ``remit_ref`` or the paper's ``remit-contract`` build)."""
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; choose from {', '.join(ARMS)}")
    return FRAMEWORKS[arm]


@contextlib.contextmanager
def stock_saver(store: Store, busy_timeout_s: float = 5.0) -> Iterator[Any]:
    """The stock saver for a store; connections are closed when the block ends.

    ``busy_timeout_s``: how long an SQLite writer waits for another's lock (sqlite3's
    default, 5 s, unless a protocol races many writers on one file).
    """
    if store.backend == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    elif store.backend == "sqlite":
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(store.location, check_same_thread=False, timeout=busy_timeout_s)
        try:
            saver = SqliteSaver(conn)
            saver.setup()
            yield saver
        finally:
            conn.close()
    elif store.backend == "postgres":
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(store.location) as saver:
            saver.setup()
            yield saver
    else:
        raise ValueError(f"unknown backend {store.backend!r}")


@contextlib.contextmanager
def make_saver(store: Store, arm: str = "stock", *, park_ops: bool = False, drop: str = "nothing",
               op_log: list[str] | None = None, **remit_options: Any) -> Iterator[Any]:
    """Build the saver a probe uses: stock, or wrapped by REMIT (``arm="remit"``:
    ``remit_ref.wrap(saver, **remit_options)``; ``arm="remit-contract"``:
    ``remit.wrap(SaverClass, *ctor_args, **remit_options)``).

    ``park_ops`` / ``drop`` / ``op_log`` add the instrumenting delegate *below* REMIT, so
    a kill inside the saver or a dropped write hits the stock store in every arm.
    """
    global _ACTIVE
    framework_name(arm)
    _ACTIVE = None
    with stock_saver(store) as saver:
        if park_ops or drop != "nothing" or op_log is not None:
            saver = ParkingSaver(saver, drop=drop, op_log=op_log if op_log is not None else [],
                                 park_ops=park_ops)
        if arm == "remit":
            import remit_ref  # built by the REMIT campaign; imported only when asked for

            saver = remit_ref.wrap(saver, **remit_options)
        elif arm == "remit-contract":
            saver = contract_wrap(saver, **remit_options)
        yield saver


def contract_wrap(saver: Any, **options: Any) -> Any:
    """``saver`` rebuilt by remit-contract 0.1.2's documented ``remit.wrap(inner_cls, *args, **opts)``.

    remit-contract constructs the wrapped saver from a class and its constructor
    arguments (its README: ``remit.wrap(SqliteSaver, conn, validator=...)``), so the
    stock saver's class is re-instantiated on the same connection (SQLite, PostgreSQL;
    ``setup()`` already ran on it), an ``InMemorySaver`` fresh (a memory saver is
    only ever wrapped before first use), and the instrumenting delegate around the same
    stock saver it already holds.
    """
    import remit  # remit-contract, the paper's build; imported only when asked for

    if isinstance(options.get("validator"), str):  # a named validator (spec args are JSON)
        from probes.langgraph.workloads import VALIDATORS

        options = {**options, "validator": VALIDATORS[options["validator"]]}
    cls = type(saver)
    if getattr(saver, "inner", None) is not None and getattr(saver, "state", None) is not None:  # _Parking
        return remit.wrap(cls, saver.inner, drop=saver.drop, op_log=saver.state.op_log, park_ops=saver.park_ops,
                          state=saver.state, **options)
    if hasattr(saver, "conn"):
        return remit.wrap(cls, saver.conn, **options)
    return remit.wrap(cls, **options)


def _base():
    from langgraph.checkpoint.base import BaseCheckpointSaver

    return BaseCheckpointSaver


def ParkingSaver(inner: Any, *, drop: str = "nothing", op_log: list[str] | None = None,
                 park_ops: bool = True) -> Any:
    """A delegate saver (see module doc). Built lazily so LangGraph is imported on demand."""
    if drop not in DROP_MODES:
        raise ValueError(f"unknown drop mode {drop!r}; choose from {', '.join(DROP_MODES)}")
    return _parking_class()(inner, drop=drop, op_log=op_log if op_log is not None else [], park_ops=park_ops)


_CLASS: Any = None


class OpState:
    """Shared by a delegate and its ``with_allowlist`` clones: the op log and a barrier.

    ``inflight`` counts persistence operations that have started and not yet returned
    (a parked operation never returns). ``returns`` counts durable task results
    (``__return__`` writes). :func:`quiesce` lets a task wait on both before firing its
    effect, so a kill point sees a fixed set of durable writes (a barrier, not a sleep).
    """

    def __init__(self, op_log: list[str]) -> None:
        import threading

        self.op_log = op_log
        self.cond = threading.Condition()
        self.inflight = 0
        self.returns = 0
        self.puts = 0

    def begin(self) -> None:
        with self.cond:
            self.inflight += 1

    def end(self, entry: str, returns: int = 0) -> None:
        with self.cond:
            self.op_log.append(entry)
            self.inflight -= 1
            self.returns += returns
            self.cond.notify_all()

    def wait(self, min_returns: int, alone: bool = False) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.inflight <= (1 if alone else 0) and self.returns >= min_returns)


_ACTIVE: OpState | None = None


def quiesce(min_returns: int = 0) -> None:
    """Block until no persistence operation is in flight and ``min_returns`` task results
    are durable. No-op unless an instrumenting delegate is active in this process."""
    if _ACTIVE is not None:
        _ACTIVE.wait(min_returns)


def _parking_class() -> Any:
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    Base = _base()

    class _Parking(Base):  # type: ignore[misc, valid-type]
        def __init__(self, inner: Any, *, drop: str, op_log: list[str], park_ops: bool,
                     state: OpState | None = None) -> None:
            global _ACTIVE
            super().__init__(serde=inner.serde)
            self.inner = inner
            self.serde = inner.serde
            self.drop = drop
            self.park_ops = park_ops
            self.state = state or OpState(op_log)
            if park_ops:  # the barrier serves kill runs only; a recovery must not wait on it
                _ACTIVE = self.state

        # -- persistence operations: delegate, log, then offer a kill point ------------
        # The kill point sits after the operation is durable and *before* it counts as
        # finished, so tasks waiting in quiesce() cannot fire effects past a parked op.
        def put(self, config, checkpoint, metadata, new_versions):  # noqa: D401
            st = self.state
            st.begin()
            with st.cond:
                st.puts += 1
                nth = st.puts
            if self.drop == "later_puts" and nth > 1:
                st.end("put(dropped)")
                # Pretend it worked: return the config the stock saver would have returned.
                cfg = dict(config.get("configurable", {}))
                cfg["checkpoint_id"] = checkpoint["id"]
                return {"configurable": cfg}
            if self.park_ops:
                st.wait(0, alone=True)  # every earlier write has returned
                park("before:put")  # kill point B: inside put, before the checkpoint is stored
            result = self.inner.put(config, checkpoint, metadata, new_versions)
            self._park("put")
            st.end("put")
            return result

        def put_writes(self, config, writes, task_id, task_path=""):
            st = self.state
            st.begin()
            channels = ",".join(sorted({str(c) for c, _ in writes}))
            returns = sum(1 for c, _ in writes if c == "__return__")
            if self.drop == "all_put_writes":
                st.end(f"put_writes(dropped:{channels})", returns)  # LangGraph believes it durable
                return None
            self.inner.put_writes(config, writes, task_id, task_path)
            self._park("put_writes")
            st.end(f"put_writes({channels})", returns)
            return None

        def _park(self, name: str) -> None:
            if self.park_ops:
                park(name)
                park("op")

        # -- reads and the rest: plain delegation ---------------------------------------
        def get_tuple(self, config):
            return self.inner.get_tuple(config)

        def list(self, config, *, filter=None, before=None, limit=None):  # noqa: A002
            return self.inner.list(config, filter=filter, before=before, limit=limit)

        def delete_thread(self, thread_id):
            return self.inner.delete_thread(thread_id)

        def get_next_version(self, current, channel):
            return self.inner.get_next_version(current, channel)

        def get_delta_channel_history(self, *, config, channels):
            return self.inner.get_delta_channel_history(config=config, channels=channels)

        @property
        def config_specs(self) -> list:
            return self.inner.config_specs

        @property
        def conn(self) -> Any:
            """The stock saver's connection (remit-contract's gate takes its claims there); an
            ``AttributeError`` when the stock saver has none (memory)."""
            return self.inner.conn

        def with_allowlist(self, extra_allowlist):
            inner = self.inner.with_allowlist(extra_allowlist)
            if inner is self.inner:
                return self
            return _Parking(inner, drop=self.drop, op_log=self.state.op_log, park_ops=self.park_ops,
                            state=self.state)

    _CLASS = _Parking
    return _CLASS
