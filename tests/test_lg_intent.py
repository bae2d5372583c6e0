"""The intent protocol (declared FORK / RETRY at an answered pause, CONTRACT.md's FI) and its judge.

The judge's rule on hand-made histories (a RETRY that fires the gate again, a FORK served another
outcome, an undeclared second resume), the call recorded and replayed from what a receipt stores; then
the stock savers' cell on a real SqliteSaver: n/a with the reason the wire has no discriminator.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from probes.core.checker import DocRef, Label, Property
from probes.core.history import Event, History, Kind
from probes.kit.judge import Judge, replay
from probes.frameworks.langgraph.intent import NO_INTENT_ON_THE_WIRE, PATH

DEVIATION = DocRef(page="https://example.invalid", quote="an addressed resume is a retry", stance="deviation",
                   source="X-2", version="1.0")
YES, NO = "s2 served 'yes'", "s2 served 'no'"


def _resume(value: str, mode: str | None = None) -> Event:
    return Event(Kind.RESUME, "harness", value=value, detail={"mode": mode} if mode else {})


def _history(retry_fires: bool, fork_outcome: str, retry_mode: str | None = "retry") -> History:
    """Started, paused, answered 'yes' (e2 fires), a RETRY of 'yes', a FORK with 'no'."""
    events = [Event(Kind.START, "harness"), Event(Kind.EFFECT, "run/start", effect="e1"),
              Event(Kind.PAUSE, "run/start", step="s2"),
              _resume("yes"), Event(Kind.EFFECT, "run/answer", effect="e2"), Event(Kind.COMPLETE, "run/answer", value=YES),
              _resume("yes", retry_mode)]
    events += [Event(Kind.EFFECT, "run/retry", effect="e2")] if retry_fires else []
    events += [Event(Kind.COMPLETE, "run/retry", value=YES) if retry_fires else Event(Kind.REFUSE, "run/retry",
                                                                                      value="ConsumeConflict"),
               _resume("no", "fork"), Event(Kind.EFFECT, "run/fork", effect="e2"),
               Event(Kind.COMPLETE, "run/fork", value=fork_outcome)]
    return History.of_events(events)


def test_declarations_honoured_hold() -> None:
    v = Judge("fw", "sqlite", {}).intent(PATH, _history(False, NO), NO)
    assert (v.property, v.path, v.label) == (Property.FI, PATH, Label.PASS)
    assert "a declared RETRY of 'yes': refused ConsumeConflict" in v.summary
    assert "a declared FORK of 'no': completed with \"s2 served 'no'\"" in v.summary


def test_a_retry_that_fires_the_gate_again_violates_and_is_labelled_from_the_citation() -> None:
    v = Judge("fw", "sqlite", {f"FI {PATH}": DEVIATION}).intent(PATH, _history(True, NO), NO)
    assert v.label is Label.DOC and v.doc == DEVIATION and "the gated effect fired 3 time(s)" in v.summary
    u = Judge("fw", "sqlite", {}).intent(PATH, _history(True, NO), NO)
    assert u.label is Label.UNDOC  # no statement: undocumented


def test_a_fork_served_the_first_answer_and_an_undeclared_resume_violate() -> None:
    assert Judge("fw", "sqlite", {}).intent(PATH, _history(False, YES), NO).label.violates
    assert Judge("fw", "sqlite", {}).intent(PATH, _history(False, NO, retry_mode=None), NO).label.violates


def test_the_call_is_recorded_and_replayed_from_the_stored_history() -> None:
    from probes.core.receipt import recorded_histories

    j = Judge("fw", "sqlite", {f"FI {PATH}": DEVIATION})
    made = [j.intent(PATH, _history(True, NO), NO)]
    assert j.calls == [{"call": "intent", "path": PATH, "expected": NO}]
    again = replay(json.loads(json.dumps(j.calls)), json.loads(json.dumps(recorded_histories(made))),
                   "fw", "sqlite", {f"FI {PATH}": DEVIATION})
    assert [v.to_json() for v in again] == [v.to_json() for v in made]


def test_the_stock_savers_cell_is_not_applicable_with_the_reason(tmp_path: Path, outside_basetemp: Path) -> None:
    """Stock LangGraph has no discriminator on the wire: the intent cell is n/a, saying so, and no
    process is started for it."""
    from probes.core.backends import StoreFactory
    from probes.core.campaign import ProbeContext, ProbeSpec
    from probes.kit.suite import run_kit_probe
    from probes.frameworks.langgraph.protocols import PROTOCOLS

    with contextlib.ExitStack() as stack:
        stores = StoreFactory(outside_basetemp / "stores", stack)
        res = run_kit_probe("probes.frameworks.langgraph.adapter:StockSaverAdapter", None,
                            ProbeSpec("intent.sqlite.rep1", {"protocol": "intent", "backend": "sqlite", "rep": 1}),
                            ProbeContext(tmp_path, stores, 0, {}), protocols=PROTOCOLS)
    assert res.harness_errors == []
    [v] = res.verdicts
    assert (v.framework, v.property, v.path, v.label) == ("langgraph", Property.FI, PATH, Label.NA)
    assert v.summary == NO_INTENT_ON_THE_WIRE and "children" not in res.observations
