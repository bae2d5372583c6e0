"""Which of the reads LangGraph makes when a run starts is the resume's (``remit_ref._langgraph``).

LangGraph 1.2.24 reads twice in ``PregelLoop.__enter__`` when a run addresses a
checkpoint: the addressed checkpoint (the loop's own read, with
``loop.checkpoint_config``) and then the thread's latest one, only to tell whether the
addressed checkpoint was superseded. Only the first may claim. These tests run on the
pinned LangGraph here and on the newer one in ``tests/test_remit_newer_langgraph.py``;
they fail without the rule on 1.2.24 (the pinned release makes no second read; the rule's unit test,
``test_a_read_of_another_address_inside_the_loops_start_is_plain`` in ``test_remit_units.py``,
simulates it, so it fails without the rule on either release).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, TypedDict

import pytest


class S(TypedDict):
    a: int
    b: int


def _two_pauses(saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def first(s: S) -> dict[str, int]:
        return {"a": interrupt("q1")}

    def second(s: S) -> dict[str, int]:
        return {"b": interrupt("q2")}

    g = StateGraph(S)
    g.add_node("first", first)
    g.add_node("second", second)
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", END)
    return g.compile(checkpointer=saver)


def _paused_twice(tmp_path: Path, **options: Any) -> tuple[Any, Any, Any, str, str]:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command

    from remit_ref import wrap

    base = SqliteSaver(sqlite3.connect(str(tmp_path / "c.sqlite"), check_same_thread=False))
    saver = wrap(base, consume_gate=True, **options)
    app = _two_pauses(saver)
    thread = {"configurable": {"thread_id": "t"}}
    app.invoke({"a": 0, "b": 0}, thread)
    first_pause = app.get_state(thread).config["configurable"]["checkpoint_id"]
    app.invoke(Command(resume=1), thread)
    head = app.get_state(thread).config["configurable"]["checkpoint_id"]
    assert len(saver.claims()) == 1
    return base, saver, app, first_pause, head


def test_a_fork_of_an_earlier_pause_neither_claims_nor_answers_the_heads_interrupt(tmp_path: Path) -> None:
    from langgraph.types import Command

    base, saver, app, first_pause, head = _paused_twice(tmp_path)
    out = app.invoke(Command(resume=5), {"configurable": {"thread_id": "t", "checkpoint_id": first_pause}})
    assert out["a"] == 5 and [i.value for i in out["__interrupt__"]] == ["q2"]  # the fork's own answer
    assert len(saver.claims()) == 1  # only the first resume's claim
    old_head = base.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": head}})
    assert [w for w in old_head.pending_writes if w[1] == "__resume__"] == []  # nobody answered q2 there


def test_a_retry_addressed_to_the_head_claims_once_and_runs(tmp_path: Path) -> None:
    from langgraph.types import Command

    from remit_ref import ConsumeConflict

    _base, saver, app, _first, head = _paused_twice(tmp_path, addressed_is_fork=False)
    addressed = {"configurable": {"thread_id": "t", "checkpoint_id": head}}
    assert app.invoke(Command(resume=7), addressed) == {"a": 1, "b": 7}
    assert len(saver.claims()) == 2
    with pytest.raises(ConsumeConflict):  # the same interrupt again: consumed
        app.invoke(Command(resume=8), addressed)


def test_an_async_fork_of_an_earlier_pause_does_not_claim_the_heads_interrupt(tmp_path: Path) -> None:
    """The same on the async path (``__aenter__`` -> ``acheckpoint_superseded`` -> ``aget_tuple``)."""
    import asyncio

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.types import Command

    from remit_ref import wrap
    from remit_ref.claims import sqlite_claims

    db = str(tmp_path / "a.sqlite")

    async def scenario() -> tuple[int, int]:
        async with AsyncSqliteSaver.from_conn_string(db) as base:
            await base.setup()
            saver = wrap(base, consume_gate=True, claims=sqlite_claims(db))
            app = _two_pauses(saver)
            thread = {"configurable": {"thread_id": "t"}}
            await app.ainvoke({"a": 0, "b": 0}, thread)
            first_pause = (await app.aget_state(thread)).config["configurable"]["checkpoint_id"]
            await app.ainvoke(Command(resume=1), thread)
            out = await app.ainvoke(Command(resume=5), {"configurable": {"thread_id": "t", "checkpoint_id": first_pause}})
            return out["a"], len(saver.claims())

    assert asyncio.run(scenario()) == (5, 1)
