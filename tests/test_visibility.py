"""Effect visibility ordering (probes.core.visibility, checker.check_vo, the kit judge's VO verdict).

Each anomaly is shown firing on a history built the way the kit records one, and not firing on
the same history with the one fact changed that makes the order sound.
"""

from __future__ import annotations

from typing import Any

from probes.core import checker
from probes.core.checker import Label, Property
from probes.core.history import Event, History, Kind
from probes.core.receipt import recorded_histories
from probes.core.visibility import (EFFECT_AHEAD_OF_RECORD, EFFECT_BEFORE_CAUSE, STALE_READ, SUPERSEDED_WRITE,
                                    anomalies)
from probes.kit.judge import Judge, replay, visibility_verdicts

H = "harness"


def ev(kind: Kind, inc: str = H, step: str | None = None, effect: str | None = None, value: Any = None,
       **detail: Any) -> Event:
    return Event(kind, inc, step, effect, value, detail)


def run_to_pause(persist_after_s1: bool = True) -> list[Event]:
    return [ev(Kind.START), ev(Kind.STEP_BEGIN, "run/start", "s1"), ev(Kind.EFFECT, "run/start", "s1", "e1"),
            ev(Kind.STEP_END, "run/start", "s1"),
            *([ev(Kind.PERSIST, "run/start", what="put")] if persist_after_s1 else []),
            ev(Kind.STEP_BEGIN, "run/start", "s2"), ev(Kind.PAUSE, "run/start", "s2"),
            ev(Kind.ANSWER, value="yes", addressed=True)]


def crash_in_s2(persist_before_effect: bool = False, mode: str = "none-input", again: str = "ask") -> History:
    """Answered, killed after e2 fired; the recovery then asks again (``ask``) or begins s1 again (``s1``)."""
    events = run_to_pause(persist_after_s1=again != "s1") + [
        ev(Kind.STEP_BEGIN, "run/answer", "s2"), ev(Kind.CONSUME, "run/answer", "s2", value="yes"),
        *([ev(Kind.PERSIST, "run/answer", what="put_writes")] if persist_before_effect else []),
        ev(Kind.EFFECT, "run/answer", "s2", "e2"),
        ev(Kind.CRASH, how="SIGKILL", at="s2.effect", victim="run/answer"), ev(Kind.RECOVER, mode=mode)]
    if again == "s1":
        events += [ev(Kind.STEP_BEGIN, "run/recover", "s1"), ev(Kind.EFFECT, "run/recover", "s1", "e1")]
    events += [ev(Kind.STEP_BEGIN, "run/recover", "s2"), ev(Kind.PAUSE, "run/recover", "s2")]
    return History.of_events(events)


def names(h: History) -> list[str]:
    return [a.name for a in anomalies(h)]


def test_effect_before_cause_fires_when_the_answer_was_not_durable() -> None:
    found = anomalies(crash_in_s2())
    assert [a.name for a in found] == [EFFECT_BEFORE_CAUSE]
    assert [e.kind for e in found[0].events] == [Kind.CONSUME, Kind.EFFECT, Kind.CRASH, Kind.PAUSE]


def test_a_write_between_consume_and_effect_is_no_ordering_anomaly() -> None:
    assert names(crash_in_s2(persist_before_effect=True)) == []


def test_a_recovery_that_resends_the_input_asked_for_a_restart() -> None:
    assert names(crash_in_s2(mode="resend-input")) == []


def test_effect_ahead_of_record_when_the_earlier_step_was_never_written() -> None:
    found = anomalies(crash_in_s2(again="s1"))  # nothing written since s1 ended, nor before e2
    assert [a.name for a in found] == [EFFECT_BEFORE_CAUSE, EFFECT_AHEAD_OF_RECORD]
    assert found[1].events[0].effect == "e2" and found[1].events[-1].step == "s1"


def test_an_earlier_step_run_again_after_its_record_was_written_is_pc_not_vo() -> None:
    events = list(crash_in_s2(again="s1").events)
    at = next(i for i, e in enumerate(events) if e.kind is Kind.STEP_END and e.step == "s1")
    events.insert(at + 1, ev(Kind.PERSIST, "run/start", what="put"))
    assert names(History.of_events(events)) == [EFFECT_BEFORE_CAUSE]


def stall(takeover_runs: bool) -> History:
    events = run_to_pause() + [
        ev(Kind.STEP_BEGIN, "run/answer", "s2"), ev(Kind.CONSUME, "run/answer", "s2", value="yes"),
        ev(Kind.RECOVER, mode="none-input", at="s2.consumed", stopped="run/answer")]
    if takeover_runs:
        events += [ev(Kind.CONSUME, "run/takeover", "s2", value="yes"), ev(Kind.EFFECT, "run/takeover", "s2", "e2"),
                   ev(Kind.COMPLETE, "run/takeover", value="done")]
    else:
        events += [ev(Kind.REFUSE, "run/takeover", value="the run is owned by another worker")]
    events += [ev(Kind.EFFECT, "run/answer", "s2", "e2"), ev(Kind.PERSIST, "run/answer", what="put")]
    return History.of_events(events)


def test_a_superseded_owner_that_fires_and_writes_on_waking() -> None:
    found = anomalies(stall(takeover_runs=True))
    assert [a.name for a in found] == [SUPERSEDED_WRITE, SUPERSEDED_WRITE]
    assert "fired e2" in found[0].explanation and "wrote durable state" in found[1].explanation


def test_an_owner_nobody_took_over_from_is_not_superseded() -> None:
    assert names(stall(takeover_runs=False)) == []


def fork(read: Any, first: Any = "yes", second: Any = "no") -> History:
    return History.of_events(run_to_pause() + [
        ev(Kind.CONSUME, "run/first", "s2", value=first), ev(Kind.EFFECT, "run/first", "s2", "e2"),
        ev(Kind.COMPLETE, "run/first", value=first),
        ev(Kind.FORK, value=second, at="the answered pause", intent="fork"),
        ev(Kind.ANSWER, value=second, addressed=True),
        ev(Kind.CONSUME, "run/fork", "s2", value=read), ev(Kind.COMPLETE, "run/fork", value=read)])


def test_a_fork_that_reads_the_superseded_branch() -> None:
    assert names(fork(read="yes")) == [STALE_READ]
    assert names(fork(read="no")) == []


def test_structured_answers_are_compared_without_hashing() -> None:
    """Frameworks answer with dicts (tool approvals, ADK's function responses): unhashable values."""
    first, second = {"approve": True}, {"approve": False}
    assert names(fork(read=dict(first), first=first, second=second)) == [STALE_READ]
    assert names(fork(read=dict(second), first=first, second=second)) == []


def test_check_vo_witness_and_evidence_name_the_events() -> None:
    check = checker.check(Property.VO, crash_in_s2(), checker.Expectation())
    assert not check.holds
    assert [a["anomaly"] for a in check.evidence["anomalies"]] == [EFFECT_BEFORE_CAUSE]
    assert {e.seq for e in check.witness} == set(check.evidence["anomalies"][0]["events"])
    assert checker.check_vo(fork(read="no")).holds


def test_the_judge_gives_vo_per_path_and_a_receipt_replays_it() -> None:
    judge = Judge("fw", "sqlite", {})
    h = crash_in_s2()
    decided = [judge.effects_once("crash:kill@s2.effect", h, "after the crash"),
               judge.live("fork:same-pause", fork(read="no"), "the fork")]
    vo = visibility_verdicts(judge, decided)
    assert [(v.property, v.path, v.label) for v in vo] == [
        (Property.VO, "crash:kill@s2.effect", Label.UNDOC), (Property.VO, "fork:same-pause", Label.PASS)]
    assert EFFECT_BEFORE_CAUSE in vo[0].summary
    again = replay(judge.calls, recorded_histories(decided + vo), "fw", "sqlite", {})
    assert [v.to_json() for v in again] == [v.to_json() for v in decided + vo]


def test_a_race_path_gets_no_vo_from_one_trial() -> None:
    judge = Judge("fw", "sqlite", {})
    v = judge.effects_once("race:same-pause×2", crash_in_s2(), "a trial")
    raced = checker.Verdict(v.framework, v.backend, v.property, v.path, v.label, {**v.evidence, "race_decision": {}},
                            v.summary, v.doc, v.history)
    assert visibility_verdicts(judge, [raced]) == []
