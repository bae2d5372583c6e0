"""The one place a LangGraph checkpoint saver is built for the probes: stock, or behind the paper's REMIT build.

``stock_saver`` opens the stock ``SqliteSaver`` or ``PostgresSaver`` on a store the harness made, with
its tables set up: the kit's LangGraph adapters (``probes.frameworks.langgraph.adapter``, ``probes.studies.remit.
kit_adapters``), the atlas cells and the consume race all build theirs here, so "the stock saver"
means one configuration everywhere. ``contract_wrap`` puts remit-contract (the paper's REMIT build)
around such a saver through its documented API. Frameworks are imported inside the functions only.
"""

from __future__ import annotations

import sqlite3
from typing import Any


def stock_saver(backend: str, location: str, busy_timeout_s: float = 60.0) -> Any:
    """The stock saver of ``backend`` on the store the harness made (tables set up).

    ``busy_timeout_s``: how long an SQLite writer waits for another's lock -- long, because several
    processes of one probe (racers, a recovery beside a stopped worker) write the same file; the
    caller closes ``saver.conn`` when it is done (a child process simply exits).
    """
    if backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        saver: Any = SqliteSaver(sqlite3.connect(location, check_same_thread=False, timeout=busy_timeout_s))
    elif backend == "postgres":
        import psycopg
        from psycopg.rows import dict_row

        from langgraph.checkpoint.postgres import PostgresSaver

        saver = PostgresSaver(psycopg.connect(location, autocommit=True, prepare_threshold=0, row_factory=dict_row))
    else:
        raise ValueError(f"no stock durable saver for backend {backend!r}: sqlite or postgres")
    saver.setup()
    return saver


def contract_wrap(saver: Any, **options: Any) -> Any:
    """``saver`` rebuilt by remit-contract 0.1.2's documented ``remit.wrap(inner_cls, *args, **opts)``.

    remit-contract constructs the wrapped saver itself from a class and its constructor arguments (its
    README: ``remit.wrap(SqliteSaver, conn, validator=...)``): the result is an instance of a subclass
    of the stock class, so the stock saver's class is re-instantiated on the same connection (its
    ``setup()`` already ran there). A saver with no connection (``InMemorySaver``) is wrapped fresh: a
    memory saver is only ever wrapped before first use. Because the wrapper subclasses the stock
    class, a hook on the stock class's ``put`` still runs beneath REMIT (the kit's save kills).
    """
    import remit  # remit-contract, the paper's build; imported only when asked for

    cls = type(saver)
    if hasattr(saver, "conn"):
        return remit.wrap(cls, saver.conn, **options)
    return remit.wrap(cls, **options)
