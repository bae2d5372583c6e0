"""Trace validation with the real TLC: hand-built histories of known behaviours.

Each history encodes a behaviour whose explanation is known (a fork served the first
answer -> ForkIgnore; the restored flow starts over -> Replay; ...). The test fails if
TLC accepts a history under the wrong setting, stops accepting a reference behaviour,
or explains the unexplainable one.
"""

from __future__ import annotations

import pytest

from probes.core.errors import UsageError
from probes.tla import trace as T
from probes.tla.known_histories import EXPECTED, GATE, HISTORIES, STEPS

@pytest.fixture(scope="module")
def verdicts() -> dict[str, T.Verdict]:
    traces = [T.observations(h, name=n, steps=STEPS, gate=GATE) for n, h in HISTORIES.items()]
    return T.explain(traces)


def test_each_history_is_explained_by_its_known_cause(verdicts: dict[str, T.Verdict]) -> None:
    assert {n: v.explained_by for n, v in verdicts.items()} == EXPECTED


def test_every_setting_was_checked(verdicts: dict[str, T.Verdict]) -> None:
    names = {T.setting_name(s) for s in T.DEFAULT_SETTINGS}
    assert len(names) == 1 + 7 + 15
    assert all(set(v.accepted) == names for v in verdicts.values())
    # a fault switch adds behaviours except where it changes a mechanism the trace exercises
    assert not verdicts["fork_and_retry_ok"].accepted["ForkIgnore"]
    assert not verdicts["stray_inert"].accepted["DoubleConsume"]
    assert verdicts["clean"].accepted["Replay+ForkIgnore"]


def test_mapping_of_events() -> None:
    trace = T.observations(HISTORIES["replay_from_start"])
    assert (trace.n, trace.ip, trace.steps) == (3, 2, ("a", "b", "c"))
    assert [o.kind for o in trace.observations] == ["exec", "interrupt", "consume", "crash", "exec", "interrupt",
                                                    "consume", "exec"]
    assert trace.observations[3].at == 1 and trace.observations[4].effects == (2, 1, 0)
    fork = T.observations(HISTORIES["fork_sees_first"]).observations[-1]
    assert (fork.kind, fork.v, fork.out) == ("fork", 2, 1)   # "no" observed "yes"
    # the fork's branch effect is the branch's own: the primary counts stay (1, 1, 1)
    assert T.observations(HISTORIES["fork_and_retry_ok"]).observations[3].effects == (1, 1, 1)
    assert [o.kind for o in T.observations(HISTORIES["fork_and_retry_ok"]).observations][-2:] == ["fork", "retry"]


def test_workflow_without_a_gate_gets_a_virtual_one() -> None:
    history = [{"kind": "effect", "step": "x"}, {"kind": "effect", "step": "y"}]  # plain dicts work too
    trace = T.observations(history)
    assert (trace.n, trace.ip) == (3, 3)
    assert T.explain([trace])["trace"].explained_by == ["reference"]


def test_unknown_event_kind_is_refused() -> None:
    with pytest.raises(UsageError, match="kind 'teleport'"):
        T.observations([{"kind": "effect", "step": "a"}, {"kind": "teleport"}])


def test_recorded_histories_are_read_from_receipts() -> None:
    from probes.core.checker import Property, Subject
    from probes.core.receipt import Receipt

    verdict = Subject("langgraph", "sqlite").verdict(Property.FD, "fork", False, {}, "s")
    with_history = Receipt("langgraph", "fork.sqlite", {}, {}, {
        "history": HISTORIES["fork_sees_first"].to_json(), "workflow": {"steps": list(STEPS), "gate": GATE}},
        [verdict], {}, [])
    without = Receipt("langgraph", "crash.sqlite", {}, {}, {"counts": {}}, [], {}, [])
    recorded, missing = T.recorded_histories("langgraph", [with_history, without])
    assert missing == 1 and len(recorded) == 1
    rec = recorded[0]
    assert (rec.name, rec.framework, rec.family, rec.steps, rec.gate) == (
        "langgraph/fork.sqlite", "langgraph", "fork", STEPS, GATE)
    trace = T.observations(rec.history, rec.name, rec.steps, rec.gate)
    assert T.explain([trace])[rec.name].explained_by == ["ForkIgnore"]


def test_oracle_histories_get_steps_and_a_virtual_entry_before_a_first_gated_task() -> None:
    """A consume race as the oracles record it (effects by name, a pause without a step,
    racers' answers): the gated task is the one the answer released; with the gate first,
    a virtual entry task precedes it. One consumption is a behaviour of the reference; two
    (stock LangGraph's double fire) are not -- ResumePlane has no concurrent racers."""
    from probes.core.history import Event, History, Kind

    def race(fires: int) -> History:
        events = [Event(Kind.PAUSE, "park"), Event(Kind.ANSWER, "r0", value=True), Event(Kind.ANSWER, "r1", value=True)]
        events += [Event(Kind.EFFECT, f"r{i}", effect="gate") for i in range(fires)]
        events += [Event(Kind.REFUSE, "r1", value="ConsumeConflict")] if fires == 1 else []
        return History(tuple(events))

    once = T.observations(T.with_steps(race(1)), "once")
    assert (once.steps, once.n, once.ip) == ((T.ENTRY, "gate"), 2, 2)
    assert [o.kind for o in once.observations] == ["exec", "interrupt", "consume"]
    assert any("virtual entry" in n for n in once.notes)
    twice = T.observations(T.with_steps(race(2)), "twice")
    assert [o.kind for o in twice.observations] == ["exec", "interrupt", "consume", "consume"]
    verdicts = T.explain([once, twice])
    assert verdicts["once"].explained_by == ["reference"]
    assert not verdicts["twice"].reference


def test_checker_histories_in_the_receipt_are_read() -> None:
    from probes.core.checker import Expectation, Subject, check_eo
    from probes.core.receipt import Receipt, recorded_histories

    history = HISTORIES["clean"]
    verdict = check_eo(history, Expectation(effects=())).verdict(Subject("fw", "sqlite"), "crash:A", "s")
    receipt = Receipt("fw", "crash.A", {}, {}, {}, [verdict], {}, [], histories=recorded_histories([verdict]))
    recorded, missing = T.recorded_histories("fw", [receipt])
    assert missing == 0 and [r.name for r in recorded] == ["fw/crash.A/crash:A"]
    assert T.explain([T.observations(recorded[0].history, recorded[0].name, STEPS, GATE)])[
        recorded[0].name].explained_by == ["reference"]
