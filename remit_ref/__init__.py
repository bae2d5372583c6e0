"""REMIT, the project's reference implementation of the Resume Contract for LangGraph.

Quick start::

    from langgraph.checkpoint.sqlite import SqliteSaver
    from remit_ref import wrap
    saver = wrap(SqliteSaver(conn), consume_gate=True)
    app = builder.compile(checkpointer=saver)
    app.invoke(Command(resume=answer), {"configurable": {"thread_id": "t"}})

The async savers need nothing more (the claim is awaited on their own connection)::

    saver = wrap(AsyncSqliteSaver(aconn), consume_gate=True)     # or AsyncPostgresSaver(aconn)
    await builder.compile(checkpointer=saver).ainvoke(Command(resume=answer), config)

Import name ``remit_ref`` (not ``remit``, which is the paper authors' separate build).
"""

from __future__ import annotations

from remit_ref.core import Admission, GateDecision, Intent
from remit_ref.errors import (
    ConsumeConflict, EffectInDoubt, InvalidCheckpoint, RemitError, StoreClosed, WriteSuperseded,
)
from remit_ref.saver import RemitSaver, wrap

__all__ = [
    "wrap", "RemitSaver", "ConsumeConflict", "InvalidCheckpoint", "EffectInDoubt", "RemitError", "StoreClosed",
    "WriteSuperseded",
    "EffectLedger", "Intent", "Admission", "GateDecision",
]
__version__ = "0.1.0"


def __getattr__(name: str):
    # The ledger imports nothing heavy, but keep `import remit_ref` minimal.
    if name == "EffectLedger":
        from remit_ref.ledger import EffectLedger

        return EffectLedger
    raise AttributeError(name)
