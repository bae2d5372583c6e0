"""The gate's claim carries LangGraph's resume write (issue 16, "cost at the floor").

A gated resume commits its claim and the ``(__resume__, value)`` write of the null task
in one transaction, and the wrapper drops the loop's identical ``put_writes``: so the
wrapped saver sees one write fewer, the store ends up with exactly what stock writes
(plus the hidden claim rows), and a loser writes nothing. Where LangGraph would write
something else (a resume map, a Command with an update, ``durability="exit"``) nothing is
carried and the loop's own writes go through unchanged. Real SqliteSaver files and a
real PostgreSQL (embedded) throughout.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypedDict

import pytest

from remit_ref import claims as cl
from tests.test_remit_units import _pg_base as _postgres
from tests.test_remit_units import _sqlite_base as _sqlite

NULL = cl.NULL_TASK_ID


class St(TypedDict):
    value: int


def _graph(saver: Any, two: bool = False) -> Any:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def ask(s: St) -> dict[str, int]:
        return {"value": s["value"] + int(interrupt("how much?"))}

    def ask_too(s: St) -> dict[str, int]:
        interrupt("and you?")
        return {}

    g = StateGraph(St)
    g.add_node("a", ask)
    g.add_edge(START, "a")
    if two:
        g.add_node("b", ask_too)
        g.add_edge(START, "b")
        g.add_edge("b", END)
    g.add_edge("a", END)
    return g.compile(checkpointer=saver)


class Spy:
    """Records the null task's put_writes the wrapped saver receives (it is the base: nothing else changes)."""

    def __init__(self, base: Any) -> None:
        self.calls: list[list[str]] = []
        self.tasks: list[str] = []
        orig = base.put_writes

        def put_writes(config: Any, writes: Any, task_id: str, task_path: str = "") -> Any:
            self.tasks.append(task_id)
            if task_id == NULL:
                self.calls.append([c for c, _v in writes])
            return orig(config, writes, task_id, task_path)
        base.put_writes = put_writes


def _bases(tmp_path: Path, pg: Any, name: str) -> dict[str, Any]:
    return {"sqlite": _sqlite(tmp_path / f"{name}.sqlite"), "postgres": _postgres(pg.fresh_dsn(name))}


def _writes(base: Any, thread: str) -> list[tuple[int, str, Any]]:
    """Every write row of a thread, as (idx, channel, value), ids left out (task and interrupt ids embed
    checkpoint ids)."""
    rows = []
    for tup in base.list({"configurable": {"thread_id": thread}}):
        rows += [(cl.WRITES_IDX_MAP.get(c, 0), c, repr([i.value for i in v] if c == "__interrupt__" else v))
                 for _t, c, v in tup.pending_writes or []]
    return sorted(rows)


def test_a_gated_resume_commits_the_resume_write_with_its_claim_and_the_loop_does_not_repeat_it(
        tmp_path: Path, pg: Any) -> None:
    from langgraph.types import Command

    from remit_ref import wrap

    for kind, base in _bases(tmp_path, pg, "carry").items():
        stock = _graph(_sqlite(tmp_path / f"stock-{kind}.sqlite") if kind == "sqlite"
                       else _postgres(pg.fresh_dsn("carry_stock")))
        spy = Spy(base)
        app = _graph(wrap(base, consume_gate=True))
        cfg = {"configurable": {"thread_id": "t"}}
        for g in (app, stock):
            g.invoke({"value": 1}, cfg)
        spy.calls.clear()
        assert app.invoke(Command(resume=41), cfg) == stock.invoke(Command(resume=41), cfg) == {"value": 42}, kind
        assert spy.calls == [], f"{kind}: the loop's resume write reached the store again: {spy.calls}"
        # the store holds what stock writes, plus one claim row that no read returns
        raw = _writes(base, "t")
        claims = [w for w in raw if w[1] == cl.CLAIM_CHANNEL]
        assert len(claims) == 1 and [w for w in raw if w[1] != cl.CLAIM_CHANNEL] == _writes(stock.checkpointer, "t")
        assert (-4, "__resume__", "41") in raw, kind
        seen = [w for t in app.checkpointer.list(cfg) for w in t.pending_writes]
        assert seen and all(w[1] != cl.CLAIM_CHANNEL for w in seen), kind
        assert [s.values for s in app.get_state_history(cfg)] == [s.values for s in stock.get_state_history(cfg)]


def test_a_loser_writes_nothing(tmp_path: Path, pg: Any) -> None:
    """The claim is held by a live owner: the resume raises ConsumeConflict and the store is unchanged."""
    from langgraph.types import Command

    from remit_ref import ConsumeConflict, wrap

    for kind, base in _bases(tmp_path, pg, "loser").items():
        app = _graph(wrap(base, consume_gate=True))
        cfg = {"configurable": {"thread_id": "t"}}
        app.invoke({"value": 1}, cfg)
        tup = base.get_tuple(cfg)
        iid = next(w[2][0].id for w in tup.pending_writes if w[1] == "__interrupt__")
        cl.claims_for(base).try_insert(("t", "", tup.config["configurable"]["checkpoint_id"], iid), cl.Owner.new())
        before = _writes(base, "t")
        with pytest.raises(ConsumeConflict):
            app.invoke(Command(resume=5), cfg)
        assert _writes(base, "t") == before, kind


@pytest.mark.parametrize("case", ["update", "exit", "map", "map-one", "custom-store", "memory"])
def test_nothing_is_carried_where_langgraph_writes_something_else(tmp_path: Path, case: str) -> None:
    """Command(resume, update): the loop writes both, itself. durability="exit": the loop writes no
    pending write, so none may be carried. A resume map (of one interrupt or several): there is no
    null-task resume write; on SQLite each claim is then a bare claim (committed without its own sync). A claim
    store of one's own: it carries nothing (its connection is not the saver's). InMemorySaver: its
    claims are in process memory, apart from its writes, so the loop writes the answer itself."""
    from langgraph.types import Command

    from remit_ref import wrap

    if case == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        base = InMemorySaver()
    else:
        base = _sqlite(tmp_path / "c.sqlite")
    spy = Spy(base)
    store = cl.sqlite_claims(str(tmp_path / "c.sqlite")) if case == "custom-store" else None
    app = _graph(wrap(base, consume_gate=True, claims=store), two=(case == "map"))
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    spy.calls.clear()
    statements: list[str] = []
    traced = case in ("update", "exit", "map", "map-one")  # the resume's own statements, on SQLite

    def resume(command: Any, **kwargs: Any) -> None:
        if traced:
            base.conn.set_trace_callback(statements.append)
        app.invoke(command, cfg, **kwargs)
        if traced:
            base.conn.set_trace_callback(None)
    if case == "update":
        resume(Command(resume=2, update={"value": 10}))
        # one put_writes of both, by the loop (LangGraph 1.2.24 lists the update first, 1.2.9 the answer)
        assert [sorted(call) for call in spy.calls] == [["__resume__", "value"]]
    elif case == "exit":
        interrupted = base.get_tuple(cfg)
        resume(Command(resume=2), durability="".join(["ex", "it"]))  # LangGraph compares it by value
        assert spy.calls == []
        again = base.get_tuple({"configurable": {**cfg["configurable"],
                                                 "checkpoint_id": interrupted.config["configurable"]["checkpoint_id"]}})
        assert [w[1] for w in again.pending_writes if w[1] == "__resume__"] == []  # as stock: nothing recorded
    elif case == "map":
        ids = [i.id for i in app.get_state(cfg).interrupts]
        resume(Command(resume={i: 1 for i in ids}))
        assert spy.calls == [] and len(app.checkpointer.claims("t")) == 2
    elif case == "map-one":
        interrupted = base.get_tuple(cfg)
        resume(Command(resume={app.get_state(cfg).interrupts[0].id: 2}))
        assert spy.calls == [] and len(app.checkpointer.claims("t")) == 1
        again = base.get_tuple(interrupted.config)
        assert [w for w in again.pending_writes if w[0] == NULL] == []  # as stock: the map is not a null-task write
    else:
        app.invoke(Command(resume=2), cfg)
        assert spy.calls == [["__resume__"]] and len(app.checkpointer.claims("t")) == 1
    if traced:
        assert statements.count("PRAGMA synchronous=NORMAL") == (2 if case == "map" else 1), (case, statements)
    assert app.get_state(cfg).values["value"] == {"update": 10 + 2, "map": 1 + 1}.get(case, 1 + 2)


def test_a_stock_reader_of_the_same_store_ignores_the_claim_rows(tmp_path: Path) -> None:
    """Claims are rows of LangGraph's own writes table: a graph on the plain saver (a dashboard, an older
    deployment) reads the thread as if REMIT had never been there."""
    from langgraph.types import Command

    from remit_ref import wrap

    path = tmp_path / "shared.sqlite"
    app = _graph(wrap(_sqlite(path), consume_gate=True))
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    app.invoke(Command(resume=1), cfg)
    plain = _graph(_sqlite(path))
    assert plain.get_state(cfg).values == {"value": 2}
    assert [s.values for s in plain.get_state_history(cfg)] == [s.values for s in app.get_state_history(cfg)]
    first = list(plain.get_state_history(cfg))[-2]  # the interrupted checkpoint: claim row beside its writes
    assert any(w[1] == cl.CLAIM_CHANNEL for w in plain.checkpointer.get_tuple(first.config).pending_writes)


def test_the_null_task_id_is_langgraphs() -> None:
    from langgraph._internal._constants import NULL_TASK_ID, RESUME

    assert cl.NULL_TASK_ID == NULL_TASK_ID and cl.RESUME_CHANNEL == RESUME


def test_alist_and_aget_tuple_hide_claim_rows() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from remit_ref import wrap

    base = InMemorySaver()
    saver = wrap(base, consume_gate=True, claims=cl.MemoryClaims())
    app = _graph(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    tup = base.get_tuple(cfg)
    base.put_writes(tup.config, [(cl.CLAIM_CHANNEL, {"owner": "x"})], cl.CLAIM_TASK + "i")  # as a store would
    assert any(w[1] == cl.CLAIM_CHANNEL for w in base.get_tuple(cfg).pending_writes)

    async def read() -> tuple[list[Any], Any]:
        return [t async for t in saver.alist(cfg)], await saver.aget_tuple(cfg)
    listed, tup = asyncio.run(read())
    assert listed and all(w[1] != cl.CLAIM_CHANNEL for t in listed for w in t.pending_writes)
    assert all(w[1] != cl.CLAIM_CHANNEL for w in tup.pending_writes)
    app.invoke(Command(resume=1), cfg)


def test_only_the_very_write_carried_is_dropped() -> None:
    """The loop's write is dropped only for the checkpoint whose claim carried it and only if it is the same
    value object: an equal value, another thread's write or a write with nothing carried reaches the store."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import wrap

    base = InMemorySaver()
    spy = Spy(base)
    saver = wrap(base, consume_gate=True)
    answer = [1]
    saver._claim("t", "c1", "i", cl.ResumeWrite(answer))

    def write(thread: str, value: Any, *more: tuple[str, Any], task: str = NULL) -> None:
        config = {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": "c1"}}
        saver.put_writes(config, [("__resume__", value), *more], task)
    write("u", [1])       # another thread's resume write: nothing carried for it
    write("t", [1])       # equal, not the same object: not the carried write
    assert spy.calls == [["__resume__"], ["__resume__"]] and saver._carried == {}
    saver._claim("t", "c1", "j", cl.ResumeWrite(answer))
    write("t", answer, ("value", 2))  # the carried value and more: the batch is not the carried write
    assert spy.calls[-1] == ["__resume__", "value"] and ("t", "", "c1") in saver._carried
    write("t", answer, task="a-task")  # the interrupted task's own resume write, same value: not the null task's
    assert spy.tasks[-1] == "a-task" and ("t", "", "c1") in saver._carried
    write("t", answer)    # the carried one
    assert len(spy.calls) == 3 and saver._carried == {}
    saver._claim("t", "c1", "k", cl.ResumeWrite(answer))
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}}
    saver.put_writes(config, [("".join(["__res", "ume__"]), answer)], NULL)  # the channel name compared by value
    assert len(spy.calls) == 3 and saver._carried == {}
    for n, channel in enumerate(("value", "__error__"), start=4):  # other channels, sorting after and before
        saver._claim("t", "c1", channel, cl.ResumeWrite(answer))
        saver.put_writes(config, [(channel, answer)], NULL)  # the carried value, written to another channel
        assert spy.calls[-1] == [channel] and len(spy.calls) == n
    saver._claim("t", "c1", "m", cl.ResumeWrite(answer))
    write("t", answer, task="0")  # a task id sorting before the null task's: still not the null task
    assert spy.tasks[-1] == "0" and ("t", "", "c1") in saver._carried
    saver.put_writes(config, [], NULL)  # an empty batch is forwarded like any other, the carried entry kept
    assert spy.calls[-1] == [] and ("t", "", "c1") in saver._carried


def test_carried_writes_never_seen_are_forgotten_past_a_bound() -> None:
    """Claims carry writes for many checkpoints at once (one per resume in flight); entries whose write
    never came (the run failed before it) are dropped past a bound, and each in-flight one is kept."""
    from langgraph.checkpoint.memory import InMemorySaver

    from remit_ref import wrap
    from remit_ref.saver import _MAX_CARRIED

    saver = wrap(InMemorySaver(), consume_gate=True)
    for i in range(3):
        saver._claim("t", f"c{i}", "i", cl.ResumeWrite(i))
    assert sorted(saver._carried) == [("t", "", "c0"), ("t", "", "c1"), ("t", "", "c2")]
    for i in range(3, 3 * _MAX_CARRIED):
        saver._claim("t", f"c{i}", "i", cl.ResumeWrite(i))
        assert len(saver._carried) <= _MAX_CARRIED
    assert ("t", "", f"c{3 * _MAX_CARRIED - 1}") in saver._carried


def test_a_claim_alone_skips_its_own_sync_and_a_claim_carrying_the_resume_write_does_not(tmp_path: Path) -> None:
    """A bare claim only has to be visible (PRAGMA synchronous=NORMAL for its commit); a claim carrying the
    resume write is the durable write LangGraph would have made, committed at the saver's own setting."""
    base = _sqlite(tmp_path / "sync.sqlite")
    statements: list[str] = []
    base.conn.set_trace_callback(statements.append)
    store = cl.claims_for(base)
    assert store.carries_writes and store.try_insert(("t", "", "c", "a"), cl.Owner.new())
    assert "PRAGMA synchronous=NORMAL" in statements
    statements.clear()
    assert store.try_insert(("t", "", "c", "b"), cl.Owner.new(), cl.ResumeWrite(7))
    assert statements and not any("synchronous" in s for s in statements), statements
    assert base.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c"}}) is None
    rows = base.conn.execute("SELECT task_id, idx, channel FROM writes ORDER BY task_id").fetchall()
    assert rows == [(NULL, -4, "__resume__"), ("remit-claim:a", 0, cl.CLAIM_CHANNEL),
                    ("remit-claim:b", 0, cl.CLAIM_CHANNEL)]


def test_reads_without_claim_rows_are_returned_as_they_are() -> None:
    """Every read goes through without_claims: a tuple with no claim row is returned itself (no copy on
    the read path), one with claim rows loses exactly those."""
    from langgraph.checkpoint.base import CheckpointTuple

    plain = CheckpointTuple({"configurable": {}}, {}, {}, None, [("task", "value", 1), ("task", "__resume__", 2),
                                                                 ("task", "__interrupt__", 3)])
    for tup in (None, plain, plain._replace(pending_writes=[]), plain._replace(pending_writes=None)):
        assert cl.without_claims(tup) is tup
    claimed = plain._replace(pending_writes=[("remit-claim:i", cl.CLAIM_CHANNEL, {}), *plain.pending_writes])
    assert cl.without_claims(claimed).pending_writes == plain.pending_writes


def _interrupted_twice(base: Any) -> tuple[Any, dict[str, Any]]:
    """The two-interrupt graph through a gated wrap of ``base``, run to its interrupts: (app, config)."""
    from remit_ref import wrap

    app = _graph(wrap(base, consume_gate=True), two=True)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, cfg)
    return app, cfg


def test_a_bare_resume_langgraph_refuses_claims_nothing(tmp_path: Path, pg: Any) -> None:
    """LangGraph refuses a bare Command(resume=v) while several interrupts are pending: it consumed nothing,
    so REMIT must neither commit an answer LangGraph never wrote nor hold a claim -- the correct resume map
    that follows, from the same process, goes through."""
    from langgraph.types import Command

    for kind, base in _bases(tmp_path, pg, "refused").items():
        app, cfg = _interrupted_twice(base)
        interrupted = base.get_tuple(cfg)
        with pytest.raises(RuntimeError, match="multiple pending interrupts"):
            app.invoke(Command(resume=2), cfg)
        after = base.get_tuple(interrupted.config).pending_writes
        assert [w for w in after if w[0] == NULL or w[1] == cl.CLAIM_CHANNEL] == [], kind
        answers = {i.id: 2 for i in app.get_state(cfg).interrupts}
        assert len(answers) == 2, kind
        assert app.invoke(Command(resume=answers), cfg)["value"] == 3, kind


def _answer_one(app: Any, cfg: dict[str, Any], which: str) -> Any:
    """Answer one of the two interrupts with a resume map; returns that interrupt."""
    from langgraph.types import Command

    target = next(i for i in app.get_state(cfg).interrupts if i.value == which)
    app.invoke(Command(resume={target.id: 2}), cfg)
    return target


def test_a_bare_resume_of_the_one_interrupt_left_claims_only_that_one(tmp_path: Path, pg: Any) -> None:
    """After a resume map answered one of two interrupts, LangGraph takes a bare resume for the other: REMIT
    must claim only the interrupt it answers, not lose to the map's claim on the answered one."""
    from langgraph.types import Command

    for kind, base in _bases(tmp_path, pg, "partial").items():
        app, cfg = _interrupted_twice(base)
        _answer_one(app, cfg, "how much?")
        assert app.invoke(Command(resume="ok"), cfg) == {"value": 3}, kind
        assert app.get_state(cfg).next == (), kind


def test_a_late_resume_refused_by_a_later_claim_commits_no_answer(tmp_path: Path) -> None:
    """A bare resume of a checkpoint whose interrupts are all answered claims every one (it must lose to whoever
    answered). If its first claim is free and the next is held, it is refused -- and must not have committed the
    resume write with the claim it did win."""
    import sqlite3

    from langgraph.types import Command

    from remit_ref import ConsumeConflict

    base = _sqlite(tmp_path / "late.sqlite")
    app, cfg = _interrupted_twice(base)
    interrupted = base.get_tuple(cfg).config
    ids = sorted(i.id for i in (_answer_one(app, cfg, "how much?"), _answer_one(app, cfg, "and you?")))
    with sqlite3.connect(tmp_path / "late.sqlite") as db:  # the first claim released, the second still held
        assert db.execute("DELETE FROM writes WHERE task_id = ?", (cl.CLAIM_TASK + ids[0],)).rowcount == 1
    late = {"configurable": {**interrupted["configurable"], "remit_intent": "retry"}}
    with pytest.raises(ConsumeConflict, match=ids[1]):
        app.invoke(Command(resume=5), late)
    assert [w for w in base.get_tuple(interrupted).pending_writes if w[0] == NULL] == []


def test_a_carried_write_cannot_be_changed_after_the_claim() -> None:
    """The claim commits the value it was given and the loop's write is matched against that very value:
    the record of it is immutable."""
    import dataclasses

    carry = cl.ResumeWrite([1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        carry.value = [2]  # type: ignore[misc]
