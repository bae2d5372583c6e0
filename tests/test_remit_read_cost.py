"""REMIT's read path does the frame walk only where its answer can matter (issue 28's cost floor):
never with every feature off, only on reads of a checkpoint holding an interrupt for the gate alone,
and for the default validator every execution read, finding a graph seen before from its loop."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest


class State(TypedDict, total=False):
    value: int
    answer: Any


def _app(saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def gate(s: State) -> dict[str, Any]:
        return {"answer": interrupt("approve?"), "value": s.get("value", 0) + 1}

    g = StateGraph(State)
    g.add_node("gate", gate)
    g.add_edge(START, "gate")
    g.add_edge("gate", END)
    return g.compile(checkpointer=saver)


def _walks(monkeypatch: pytest.MonkeyPatch, **options: Any) -> list[Any]:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from remit_ref import saver as saver_mod
    from remit_ref import wrap

    walks: list[Any] = []
    real = saver_mod.inspect_read

    def counting(config: Any, start_depth: int = 2, want_graph: bool = True, want_resume: bool = True) -> Any:
        ctx = real(config, start_depth + 1, want_graph, want_resume)
        walks.append(ctx)
        return ctx
    monkeypatch.setattr(saver_mod, "inspect_read", counting)
    app = _app(wrap(InMemorySaver(), **options))
    for i in range(2):
        cfg = {"configurable": {"thread_id": f"t{i}"}}
        app.invoke({"value": 0}, cfg)
        assert app.invoke(Command(resume=True), cfg)["answer"] is True
        app.get_state(cfg)
    return walks


def test_every_feature_off_walks_no_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _walks(monkeypatch, fork_intent=False, validator=False) == []


def test_the_gate_alone_walks_only_to_resume_a_checkpoint_with_an_interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    walks = _walks(monkeypatch, fork_intent=False, validator=False, consume_gate=True)
    assert len(walks) == 2 and all(w.found_loop and w.resume and w.graph is None for w in walks)


def test_the_default_validator_finds_the_graph_on_every_execution_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from remit_ref import _langgraph

    walks = _walks(monkeypatch)
    assert len(walks) == 4 and all(w.found_loop and w.graph is not None for w in walks)
    assert len({id(w.graph) for w in walks}) == 1
    assert any(ref() is walks[0].graph for ref in _langgraph._GRAPH_OF_SPECS.values())
