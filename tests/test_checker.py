"""The verdict layer: history checkers, labels with citations, TLC mapping, cell collapsing.

Every test asserts an exact label or an exact witness, so a mutation that flips a
verdict (``./reproduce.sh mutate``) fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from probes.core import checker, oracle
from probes.core.checker import (Check, DocRef, Expectation, Label, Property, Subject, cell_text, check, check_co,
                                 check_cv, check_eo, check_fd, check_fi, check_lv, check_pc, check_rd, collapse,
                                 every, label_for, tlc_checks)
from probes.core.errors import HarnessError
from probes.core.history import Event, History, HistoryLog, Kind

CLAIM = DocRef("https://example.invalid/docs", "resumes without re-running completed work", "claims", "X-1", "x 1.0")
DEVIATION = DocRef("module.py: docstring", "the step is re-run", "deviation")


def H(*events: tuple) -> History:
    """A history from (kind, incarnation, effect-or-step, value, detail) tuples."""
    out = []
    for e in events:
        kind, inc = Kind(e[0]), e[1]
        name = e[2] if len(e) > 2 else None
        value = e[3] if len(e) > 3 else None
        detail = e[4] if len(e) > 4 else {}
        if kind is Kind.EFFECT:
            out.append(Event(kind, inc, effect=name, value=value, detail=detail))
        else:
            out.append(Event(kind, inc, step=name, value=value, detail=detail))
    return History.of_events(out)


# --- labels --------------------------------------------------------------------------------


def test_label_for_every_combination() -> None:
    assert label_for(True, None) is Label.PASS
    assert label_for(True, CLAIM) is Label.PASS
    assert label_for(False, None) is Label.UNDOC
    assert label_for(False, CLAIM) is Label.FAIL
    assert label_for(False, DEVIATION) is Label.DOC


def test_subject_verdict_cites_only_violations() -> None:
    s = Subject("fw", "sqlite")
    ok = s.verdict(Property.EO, "p", True, {"a": 1}, "fine", doc=CLAIM)
    assert ok.label is Label.PASS and ok.doc is None and ok.evidence == {"a": 1}
    bad = s.verdict(Property.EO, "p", False, {}, "bad", doc=CLAIM)
    assert bad.label is Label.FAIL and bad.doc == CLAIM
    assert s.verdict(Property.PC, "p", False, {}, "", doc=DEVIATION).label is Label.DOC
    assert s.verdict(Property.PC, "p", False, {}, "").label is Label.UNDOC  # "fw" has no citation rows
    na = s.not_applicable(Property.FI, "p", "why")
    assert na.label is Label.NA and na.evidence == {"why": "why"} and na.summary == "why"
    assert checker.comparable("U") == checker.comparable("✗") == checker.comparable("D") == "violates"
    assert checker.comparable("✓") == "holds" and checker.comparable("n/a") == "n/a"


def test_docref_round_trip_and_validation() -> None:
    v = Subject("fw").verdict(Property.CV, "p", False, {}, "s", doc=CLAIM)
    back = checker.Verdict.from_json(v.to_json())
    assert back == v and back.doc.source == "X-1" and back.doc.version == "x 1.0"
    assert checker.Verdict.from_json({**v.to_json(), "doc": None}).doc is None
    assert "X-1: " in CLAIM.cite() and "(x 1.0)" in CLAIM.cite() and CLAIM.page in CLAIM.cite()
    assert DEVIATION.cite().startswith('"the step')
    with pytest.raises(ValueError):
        DocRef("p", "q", "maybe")


def test_violations_take_their_citation_from_the_table() -> None:
    from probes.citations import subject

    lg = subject("langgraph", "sqlite")
    exit_eo = lg.verdict(Property.EO, "crash:A/durability=exit/recover=resubmit", False, {}, "")
    assert exit_eo.label is Label.DOC and exit_eo.doc.source == "LG-8"
    assert "langgraph 1.2.9" in exit_eo.doc.version and exit_eo.doc.quote.startswith("…intermediate state")
    fd = lg.verdict(Property.FD, "second-resume:bare-command", False, {}, "")
    assert fd.label is Label.FAIL and fd.doc.source == "LG-16"
    assert lg.verdict(Property.CO, "cross-process k=2 jitter=0ms", False, {}, "").doc.source == "LG-28"
    assert lg.verdict(Property.CV, "pydantic:append-None", False, {}, "").label is Label.DOC
    # silent documentation stays U
    assert subject("llamaindex").verdict(Property.CO, "double-answer", False, {}, "").label is Label.UNDOC
    assert subject("autogen · tampered state").verdict(Property.CV, "tamper:x", False, {}, "").label is Label.UNDOC
    # an explicit citation wins over the table
    assert lg.verdict(Property.FD, "second-resume:bare-command", False, {}, "", doc=DEVIATION).label is Label.DOC


# --- EO -------------------------------------------------------------------------------------

EXPECT = Expectation(effects=("s1", "s2"), prefix=("s1",))


def test_eo_holds_only_with_each_effect_once_and_completion() -> None:
    clean = H(("start", "run"), ("effect", "run", "s1"), ("effect", "run", "s2"), ("complete", "run", None, 2))
    c = check_eo(clean, EXPECT)
    assert c.holds and c.witness == () and c.evidence["completed"] is True
    assert c.evidence["effect_counts"] == {"s1": 1, "s2": 1} and c.evidence["off"] == {}


def test_eo_duplicate_names_the_incarnation_that_fired_it() -> None:
    h = H(("start", "run"), ("effect", "run", "s1"), ("crash", "harness", None, None, {"how": "SIGKILL"}),
          ("recover", "harness"), ("effect", "recover", "s1"), ("effect", "recover", "s2"),
          ("complete", "recover", None, 2))
    c = check_eo(h, EXPECT)
    assert not c.holds and c.evidence["off"] == {"s1": 2}
    assert [(e.incarnation, e.effect, e.seq) for e in c.witness] == [("run", "s1", 2), ("recover", "s1", 5)]


def test_eo_a_run_that_never_completes_holds_eo_and_fails_lv_naming_why() -> None:
    """The durability=exit shape: each effect at most once, recovery never finished. EO is at most
    once (the model's effects[t] <= 1): it holds; the non-completion is LV's, with the reason."""
    h = H(("start", "run"), ("effect", "run", "s1"), ("crash", "harness"), ("recover", "harness"),
          ("error", "recover", None, "EmptyInputError"))
    c = check_eo(h, EXPECT)
    assert c.holds and c.witness == () and c.evidence["completed"] is False
    assert c.evidence["off"] == {} and c.evidence["skipped"] == {} and c.evidence["effect_counts"] == {"s1": 1, "s2": 0}
    lv = check_lv(h)
    assert not lv.holds and [e.kind for e in lv.witness] == [Kind.CRASH, Kind.ERROR]
    assert lv.evidence["why"] == "the run never completed (stopped by crash, error EmptyInputError)"
    assert lv.evidence["lost_answer"] is False
    # effects once each, a completion before the crash but none after it: EO holds, LV fails
    h2 = H(("effect", "run", "s1"), ("effect", "run", "s2"), ("complete", "run", None, 1), ("crash", "harness"))
    assert check_eo(h2, EXPECT).holds and not check_lv(h2).holds
    # ...but a duplicate on a run that never completed still fails EO
    h3 = H(("effect", "run", "s1"), ("crash", "h"), ("recover", "h"), ("effect", "recover", "s1"),
           ("error", "recover", None, "X"))
    c3 = check_eo(h3, EXPECT)
    assert not c3.holds and c3.evidence["off"] == {"s1": 2} and c3.evidence["skipped"] == {}


def test_eo_a_completed_run_that_skipped_an_effect_fails() -> None:
    """A run that completed but silently never fired s2 is not exactly-once."""
    h = H(("start", "run"), ("effect", "run", "s1"), ("crash", "h"), ("recover", "h"),
          ("complete", "recover", None, 1))
    c = check_eo(h, EXPECT)
    assert not c.holds and c.evidence["completed"] is True
    assert c.evidence["off"] == {"s2": 0} and c.evidence["skipped"] == {"s2": 0} and c.evidence["duplicated"] == {}
    assert [(e.kind, e.seq) for e in c.witness] == [(Kind.COMPLETE, 5)]  # the completion that skipped it
    # the observation rule agrees, and only on completed runs
    assert checker.effects_once({"s1": 1}, ["s1", "s2"], completed=True)[0] is False
    assert checker.effects_once({"s1": 1}, ["s1", "s2"], completed=False)[0] is True
    assert checker.effects_once({"s1": 2}, ["s1", "s2"], completed=False)[1]["off"] == {"s1": 2}


def test_eo_unexpected_effect_twice_fails_once_is_fine() -> None:
    h = H(("effect", "a", "s1"), ("effect", "a", "s2"), ("effect", "a", "x"), ("complete", "a"))
    assert check_eo(h, EXPECT).holds
    h2 = H(("effect", "a", "s1"), ("effect", "a", "s2"), ("effect", "a", "x"), ("effect", "b", "x"), ("complete", "a"))
    c = check_eo(h2, EXPECT)
    assert not c.holds and c.evidence["off"] == {"x": 2} and [e.seq for e in c.witness] == [3, 4]


# --- CO -------------------------------------------------------------------------------------

GATE = Expectation(gate="gate")


def test_co_exactly_one_fire_per_answered_interrupt() -> None:
    one = H(("pause", "park"), ("answer", "r0", None, True), ("answer", "r1", None, True),
            ("effect", "r1", "gate", True), ("complete", "r1"))
    c = check_co(one, GATE)
    assert c.holds and c.witness == () and c.evidence == {"gate": "gate", "gate_fires": 1, "answers": 2,
                                                          "duplicate": False, "lost_answer": False}


def test_co_double_consumption_witnesses_both_fires() -> None:
    h = H(("answer", "r0"), ("answer", "r1"), ("effect", "r0", "gate"), ("effect", "r1", "gate"))
    c = check_co(h, GATE)
    assert not c.holds and c.evidence["duplicate"] and [e.incarnation for e in c.witness] == ["r0", "r1"]


def test_a_lost_answer_holds_co_and_fails_lv_as_a_lost_answer() -> None:
    """Answered, the gated effect never fired, no run completed: not a double consume (CO ✓);
    LV fails and says "lost answer"."""
    h = H(("pause", "park"), ("answer", "r0"), ("answer", "r1"), ("answer", "r2"),
          ("refuse", "r0", None, "Busy"))
    c = check_co(h, GATE)
    assert c.holds and c.witness == () and c.evidence["lost_answer"] is True and c.evidence["gate_fires"] == 0
    lv = check_lv(h, GATE)
    assert not lv.holds and lv.evidence["lost_answer"] is True
    assert lv.evidence["why"].startswith("lost answer:")
    v = lv.verdict(Subject("fw"), "race", f"two resumers: {lv.evidence['why']}")
    assert v.label is Label.UNDOC and "lost answer" in v.summary and v.evidence["lost_answer"] is True
    # without a gate in the expectation LV cannot tell, and says only that the run never completed
    assert check_lv(h).evidence["lost_answer"] is False and "never completed" in check_lv(h).evidence["why"]
    # a completed run did not lose its answer; one that fired the gate did not either
    assert check_lv(H(("answer", "a"), ("complete", "a")), GATE).evidence["lost_answer"] is False
    assert checker.lost_answer(H(("answer", "a"), ("effect", "a", "gate")), "gate") is False
    assert checker.lost_answer(h, "gate") is True and checker.lost_answer(h, None) is False
    # the observation rules: CO over a count holds at 0, LV names the loss
    assert checker.gate_once(0)[0] is True and checker.gate_once(2)[0] is False
    ok, ev = checker.completes(False, "d", lost=True)
    assert ok is False and ev["lost_answer"] is True and ev["why"].startswith("lost answer")


def test_lv_completed_with_an_error_outcome_fails() -> None:
    """A run that "completed" with an error string as its outcome is not live."""
    want = Expectation(result="s2 served 'yes'")
    good = H(("answer", "h"), ("complete", "a", None, "s2 served 'yes'"))
    assert check_lv(good, want).holds and check_lv(good, want).evidence["outcome"] == "s2 served 'yes'"
    bad = H(("answer", "h"), ("complete", "a", None, "Error: tool failed"))
    c = check_lv(bad, want)
    assert not c.holds and c.evidence["completed"] is True and [e.seq for e in c.witness] == [2]
    assert c.evidence["why"] == "completed with outcome 'Error: tool failed', not the workflow's own result " \
                                "\"s2 served 'yes'\""
    assert check_lv(bad).holds  # no expectation of the outcome: any completion
    # the outcome after the last crash is the one judged
    later = H(("complete", "a", None, "s2 served 'yes'"), ("crash", "h"), ("complete", "b", None, None))
    assert not check_lv(later, want).holds
    assert checker.completes(True, "d", outcome="err", result="ok")[0] is False
    assert checker.completes(True, "d", outcome="ok", result="ok")[0] is True


def test_co_no_answer_no_fire_holds_and_needs_a_gate() -> None:
    assert check_co(H(("pause", "park")), GATE).holds
    assert not check_co(H(("effect", "park", "gate")), GATE).holds  # fired before any answer
    with pytest.raises(ValueError):
        check_co(History(), Expectation())


# --- PC / LV --------------------------------------------------------------------------------


def test_pc_reentering_the_durable_prefix_after_recovery() -> None:
    h = H(("effect", "run", "s1"), ("crash", "h"), ("recover", "h"), ("effect", "recover", "s1"),
          ("effect", "recover", "s2"))
    c = check_pc(h, EXPECT)
    assert not c.holds and c.evidence["reentered"] == {"s1": 1} and [e.seq for e in c.witness] == [4]
    assert c.evidence["recovered"] is True
    ok = H(("effect", "run", "s1"), ("crash", "h"), ("recover", "h"), ("effect", "recover", "s2"))
    assert check_pc(ok, EXPECT).holds
    # before any recovery nothing counts; a resume starts recovery when there is no RECOVER
    assert check_pc(H(("effect", "run", "s1"), ("effect", "run", "s1")), EXPECT).holds
    resumed = H(("effect", "park", "s1"), ("resume", "h"), ("effect", "resume", "s1"))
    assert not check_pc(resumed, EXPECT).holds


def test_pc_uses_step_markers_when_recorded() -> None:
    h = H(("step_begin", "run", "s1"), ("crash", "h"), ("recover", "h"), ("step_begin", "recover", "s1"),
          ("effect", "recover", "other"))
    c = check_pc(h, EXPECT)
    assert not c.holds and [e.kind for e in c.witness] == [Kind.STEP_BEGIN]
    assert checker.recovery_decision(h) == (("step_begin", "s1"), ("effect", "other"))


def test_pc_recovery_starts_at_first_recover_before_resume() -> None:
    h = H(("resume", "h"), ("effect", "x", "s1"), ("recover", "h"), ("effect", "y", "s2"))
    assert check_pc(h, EXPECT).holds
    assert checker.recovery_start(h).kind is Kind.RECOVER


def test_lv_completion_after_the_last_crash() -> None:
    assert check_lv(H(("start", "a"), ("complete", "a"))).holds
    h = H(("complete", "a"), ("crash", "h"), ("recover", "h"), ("refuse", "b", None, "GraphNodeStatusError"))
    c = check_lv(h)
    assert not c.holds and [e.kind for e in c.witness] == [Kind.CRASH, Kind.REFUSE]
    assert c.evidence == {"completed": False, "crashes": 1, "stopped_by": ["crash", "refuse"], "lost_answer": False,
                          "why": "the run never completed (stopped by crash, refuse GraphNodeStatusError)"}
    assert check_lv(H(("crash", "h"), ("recover", "h"), ("complete", "b"))).holds
    assert not check_lv(H(("start", "a"), ("error", "a"))).holds


# --- FD / CV / RD / FI ---------------------------------------------------------------------


def test_fd_fork_served_the_first_outcome() -> None:
    h = H(("resume", "h", None, True), ("complete", "a", None, 2), ("fork", "h", None, False),
          ("complete", "a", None, 2))
    c = check_fd(h, Expectation(outcome=1))
    assert not c.holds and c.evidence["served_first_outcome"] and c.evidence["first_resume_outcome"] == 2
    assert [e.seq for e in c.witness] == [4]
    good = H(("resume", "h", None, True), ("complete", "a", None, 2), ("resume", "h", None, False),
             ("complete", "a", None, 1))
    g = check_fd(good, Expectation(outcome=1))
    assert g.holds and g.witness == () and not g.evidence["served_first_outcome"]
    # no fork at all, or a fork that never completed: not FD
    assert not check_fd(H(("resume", "h"), ("complete", "a", None, 1)), Expectation(outcome=1)).holds
    assert not check_fd(H(("resume", "h"), ("complete", "a", None, 2), ("fork", "h")), Expectation(outcome=1)).holds
    with pytest.raises(ValueError):
        check_fd(h, Expectation())


def test_cv_one_home_for_the_tamper_check() -> None:
    refused = H(("pause", "p"), ("tamper", "h", None, None, {"edit": "wrong-version"}),
                ("refuse", "t", None, "ValueError"))
    c = check_cv(refused)
    assert c.holds and c.evidence["error"] == "ValueError" and c.witness == ()
    silent = H(("pause", "p"), ("tamper", "h"), ("effect", "t", "gate"), ("complete", "t", None, "ok"))
    s = check_cv(silent)
    assert not s.holds and s.evidence["effects_before_refusal"] == {"gate": 1}
    assert [e.kind for e in s.witness] == [Kind.EFFECT]
    late = H(("tamper", "h"), ("effect", "t", "gate"), ("refuse", "t", None, "KeyError"))
    assert not check_cv(late).holds  # refused, but only after an effect ran on the edited state
    accepted = H(("tamper", "h"), ("complete", "t", None, "ok"))
    assert [e.kind for e in check_cv(accepted).witness] == [Kind.COMPLETE]


def test_cv_invalid_write_persisted() -> None:
    persisted = H(("effect", "a", "s1"), ("persist", "a", None, None, {"valid": False}), ("complete", "a"))
    c = check_cv(persisted)
    assert not c.holds and c.evidence["became_durable"] and [e.kind for e in c.witness] == [Kind.PERSIST]
    refused = H(("effect", "a", "s1"), ("refuse", "a", None, "ValidationError"))
    assert check_cv(refused).holds  # effects before the invalid write are not the write's fault
    assert not check_cv(H(("effect", "a", "s1"), ("persist", "a", None, None, {"valid": False}),
                           ("refuse", "a"))).holds


def test_rd_needs_two_equal_decisions() -> None:
    assert check_rd({"a": ("s2",), "b": ("s2",)}).holds
    c = check_rd({"a": ("s2",), "b": ("s1", "s2")})
    assert not c.holds and c.evidence["distinct"] == 2
    assert not check_rd({"a": ("s2",)}).holds


def test_fi_declared_intent_honoured() -> None:
    want = Expectation(gate="gate", outcome=1)
    honoured = H(("resume", "h", None, True), ("effect", "a", "gate"), ("complete", "a", None, 2),
                 ("resume", "h", None, True, {"mode": "retry"}), ("complete", "b", None, 2),
                 ("resume", "h", None, False, {"mode": "fork"}), ("effect", "c", "gate"), ("complete", "c", None, 1))
    c = check_fi(honoured, want)
    assert c.holds and c.evidence["declared"] == ["retry", "fork"]
    retry_fired = H(("resume", "h"), ("effect", "a", "gate"), ("resume", "h", None, None, {"mode": "retry"}),
                    ("effect", "b", "gate"))
    r = check_fi(retry_fired, want)
    assert not r.holds and [e.seq for e in r.witness] == [4]
    fork_wrong = H(("resume", "h"), ("complete", "a", None, 2), ("resume", "h", None, None, {"mode": "fork"}),
                   ("complete", "b", None, 2))
    assert [e.seq for e in check_fi(fork_wrong, want).witness] == [4]
    undeclared = H(("resume", "h"), ("complete", "a", None, 2), ("resume", "h"), ("complete", "b", None, 1))
    u = check_fi(undeclared, want)
    assert not u.holds and [e.seq for e in u.witness] == [3]
    assert not check_fi(H(("resume", "h")), want).holds  # no second resume: nothing declared
    fork_never_done = H(("resume", "h"), ("resume", "h", None, None, {"mode": "fork"}))
    assert [e.seq for e in check_fi(fork_never_done, want).witness] == [2]
    with pytest.raises(ValueError):
        check_fi(honoured, Expectation(gate="gate"))


def test_dispatch_and_every() -> None:
    h = H(("effect", "a", "s1"), ("effect", "a", "s2"), ("complete", "a"))
    assert check(Property.EO, h, EXPECT) == check_eo(h, EXPECT)
    assert check(Property.LV, h, EXPECT).holds
    with pytest.raises(ValueError):
        check(Property.RD, h, EXPECT)
    bad = check_eo(H(("effect", "a", "s1"), ("complete", "a")), EXPECT)  # completed, s2 skipped
    both = every([check_eo(h, EXPECT), bad])
    assert not both.holds and both.witness == bad.witness
    assert both.evidence == {**bad.evidence, "repetitions": 2, "held": 1}
    good = every([check_eo(h, EXPECT), check_eo(h, EXPECT)])
    assert good.holds and good.evidence == {**check_eo(h, EXPECT).evidence, "repetitions": 2, "held": 2}
    with pytest.raises(ValueError):
        every([])


def test_check_verdict_carries_the_witness() -> None:
    h = H(("effect", "a", "s1"), ("effect", "b", "s1"), ("complete", "b"))
    v = check_eo(h, EXPECT).verdict(Subject("fw"), "p", "summary", extra=1)
    assert v.label is Label.UNDOC and v.evidence["extra"] == 1
    # the duplicate's two fires, then the completion that skipped s2
    assert [(w["kind"], w["incarnation"]) for w in v.evidence["witness"]] == [("effect", "a"), ("effect", "b"),
                                                                              ("complete", "b")]
    assert "witness" not in check_eo(h, EXPECT).verdict(Subject("fw"), "p", "s", witness_in_evidence=False).evidence
    assert check_eo(h, EXPECT).label(DEVIATION) is Label.DOC


# --- the oracle writes the history -----------------------------------------------------------


def test_oracle_fires_into_the_history_and_cross_check_still_holds(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite"
    HistoryLog(ledger).append(Kind.START, "harness", value={"input": 1})
    o = oracle.install(ledger, "run")
    o.fire("s1", detail="pid=1")
    oracle.record(Kind.STEP_BEGIN, step="s2")
    o.fire("gate", value=True, step="s2")
    oracle.record(Kind.COMPLETE, value=2)
    assert o.cross_check() == {"gate": 1, "s1": 1}
    h = o.ledger.history()
    assert [(e.kind.value, e.incarnation, e.effect, e.value) for e in h] == [
        ("start", "harness", None, {"input": 1}), ("effect", "run", "s1", None), ("step_begin", "run", None, None),
        ("effect", "run", "gate", True), ("complete", "run", None, 2)]
    assert h.effect_counts() == o.ledger.counts()
    with pytest.raises(HarnessError):
        oracle.cross_check({"s1": 2}, o.ledger, "run")


# --- TLC results --------------------------------------------------------------------------------

INVARIANTS = ("TypeOK", "PC", "EO", "FD", "CV", "CO", "RD")


def test_tlc_holds_maps_each_checked_property() -> None:
    got = tlc_checks("holds", None, INVARIANTS, ())
    assert [(c.property, c.holds) for c in got] == [(Property(p), True) for p in INVARIANTS[1:]]
    only_eo = tlc_checks("holds", None, ("TypeOK", "EO"), ())
    assert [c.property for c in only_eo] == [Property.EO]
    live = tlc_checks("holds", None, (), ("EventuallyCompletes",))
    assert [(c.property, c.holds) for c in live] == [(Property.LV, True)]


def test_tlc_every_violation_maps_to_a_failing_check() -> None:
    for prop in ("PC", "EO", "FD", "CV", "CO", "RD"):
        [c] = tlc_checks("violated", prop, INVARIANTS, ())
        assert c.property is Property(prop) and not c.holds and c.evidence["violated"] == prop
    with pytest.raises(HarnessError, match="model itself is wrong"):
        tlc_checks("violated", "TypeOK", INVARIANTS, ())
    [lv] = tlc_checks("violated", "temporal properties", (), ("EventuallyCompletes",))
    assert lv.property is Property.LV and not lv.holds
    [dl] = tlc_checks("deadlock", "deadlock", INVARIANTS, ())
    assert dl.property is Property.LV and not dl.holds and dl.evidence["tlc_result"] == "deadlock"


def test_tlc_error_or_unknown_violation_is_never_dropped() -> None:
    with pytest.raises(HarnessError):
        tlc_checks("error", None, INVARIANTS, ())
    with pytest.raises(HarnessError):
        tlc_checks("violated", "SomethingElse", INVARIANTS, ())
    with pytest.raises(HarnessError):
        tlc_checks("violated", "EO", ("TypeOK", "PC"), ())  # not a checked invariant
    with pytest.raises(HarnessError):
        tlc_checks("violated", "TypeOK", ("EO",), ())


# --- collapsing a cell ---------------------------------------------------------------------------


def test_collapse_is_the_worst_measured_label() -> None:
    assert collapse([]) is None
    assert collapse(["n/a"]) is Label.NA
    assert collapse(["n/a", "✓"]) is Label.PASS
    assert collapse(["✓", "D"]) is Label.DOC
    assert collapse(["D", "✗", "✓"]) is Label.FAIL
    assert collapse(["✗", "U", "n/a"]) is Label.UNDOC
    assert collapse([Label.PASS, Label.PASS]) is Label.PASS
    order = [Label.NA, Label.PASS, Label.DOC, Label.FAIL, Label.UNDOC]
    for i, low in enumerate(order):
        for high in order[i:]:
            assert collapse([high, low]) is high and collapse([low, high]) is high


def test_cell_text_counts_paths_worst_first() -> None:
    assert cell_text([]) == ""
    assert cell_text(["✓", "✓"]) == "✓"
    assert cell_text(["n/a", "n/a"]) == "n/a"
    assert cell_text(["✓", "n/a"]) == "✓"
    assert cell_text(["✓", "U", "U", "U", "✓", "n/a"]) == "U×3 · ✓×2"
    assert cell_text(["D", "✗", "✗"]) == "✗×2 · D×1"


# --- edges a mutant would move -----------------------------------------------------------------


def test_eo_on_an_incomplete_run_has_no_stop_witness() -> None:
    h = H(("effect", "a", "s1"), ("effect", "a", "s2"), ("crash", "h"), ("error", "b", None, "X"))
    c = check_eo(h, Expectation(effects=("s1", "s2")))
    assert c.holds and c.witness == () and c.evidence["completed"] is False
    assert check_eo(H(("effect", "a", "s1"), ("complete", "a")), Expectation(effects=("s1",))).witness == ()


def test_fd_witness_is_the_last_completion_and_first_outcome_precedes_the_fork() -> None:
    h = H(("resume", "h", None, True), ("complete", "a", None, 2), ("resume", "h", None, False),
          ("complete", "a", None, 5), ("complete", "a", None, 2))
    c = check_fd(h, Expectation(outcome=1))
    assert [e.seq for e in c.witness] == [5] and c.evidence["observed"] == 2
    assert c.evidence["first_resume_outcome"] == 2 and c.evidence["served_first_outcome"] is True
    good = H(("resume", "h", None, True), ("complete", "a", None, 2), ("resume", "h", None, False),
             ("complete", "a", None, 1))
    g = check_fd(good, Expectation(outcome=1))
    assert g.evidence == {"expected_f_v": 1, "observed": 1, "first_resume_outcome": 2, "served_first_outcome": False,
                          "side": "fork: served the new answer"}
    forked = H(("complete", "x", None, 7), ("fork", "h"), ("resume", "h"), ("complete", "b", None, 1))
    f = check_fd(forked, Expectation(outcome=1))
    assert f.holds and f.evidence["first_resume_outcome"] == 7
    late = H(("resume", "h"), ("resume", "h"), ("complete", "b", None, 3))
    l2 = check_fd(late, Expectation(outcome=3))
    assert l2.holds and l2.evidence["first_resume_outcome"] is None  # no completion before the fork
    no_fork = check_fd(H(("complete", "a", None, 1)), Expectation(outcome=1))
    assert not no_fork.holds and no_fork.witness == () and no_fork.evidence["first_resume_outcome"] == 1
    assert no_fork.evidence["side"] is None
    assert no_fork.evidence["served_first_outcome"] is False


def test_fd_names_the_side_of_proposition_1_the_framework_took() -> None:
    """A second, different answer with no discriminator: served (fork side), refused loudly or
    ignored (retry side), or the gated effect fired again without the new outcome (neither)."""
    first = (("fork", "h", None, 2), ("effect", "a", "s2"), ("complete", "a", None, 1), ("fork", "h", None, 3))
    sides = {
        "fork": H(*first, ("effect", "b", "s2"), ("complete", "b", None, 3)),
        "refused": H(*first, ("refuse", "b", None, "already answered")),
        "ignored": H(*first, ("complete", "b", None, 1)),
        "refired": H(*first, ("effect", "b", "s2"), ("complete", "b", None, 1)),
        "other effect": H(*first, ("effect", "b", "s1"), ("complete", "b", None, 1)),
    }
    got = {k: check_fd(h, Expectation(outcome=3, gate="s2")).evidence["side"] for k, h in sides.items()}
    assert got == {"fork": "fork: served the new answer", "refused": "retry: refused loudly",
                   "ignored": "retry: ignored, the first outcome stands",
                   "refired": "neither: the gated effect fired again without the new answer's outcome",
                   "other effect": "retry: ignored, the first outcome stands"}
    # without a named gate every effect after the fork counts as firing again
    assert check_fd(sides["other effect"], Expectation(outcome=3)).evidence["side"].startswith("neither")
    # a refusal after the gated effect fired again is not a refusal
    late = H(*first, ("effect", "b", "s2"), ("error", "b", None, "boom"))
    assert check_fd(late, Expectation(outcome=3, gate="s2")).evidence["side"].startswith("neither")


def test_rd_three_arms() -> None:
    assert check_rd({"a": 1, "b": 1, "c": 1}).holds
    three = check_rd({"a": 1, "b": 2, "c": 3})
    assert not three.holds and three.evidence["distinct"] == 3
    assert three.evidence["decisions"] == {"a": 1, "b": 2, "c": 3}
    assert check_rd({"b": (1,), "a": (1,)}).evidence == {"decisions": {"a": (1,), "b": (1,)}, "distinct": 1}


def test_every_reports_the_first_repetition_when_all_hold() -> None:
    one = check_eo(H(("effect", "a", "s1"), ("effect", "a", "s2"), ("complete", "a")), EXPECT)
    two = check_eo(H(("effect", "a", "s1"), ("effect", "a", "s2"), ("effect", "a", "x"), ("complete", "a")), EXPECT)
    assert every([one, two]).evidence["effect_counts"] == one.evidence["effect_counts"]
    bad1 = check_eo(H(("effect", "a", "s1")), EXPECT)
    bad2 = check_eo(H(("effect", "a", "s2")), EXPECT)
    assert every([one, bad1, bad2]).evidence["off"] == bad1.evidence["off"]
    assert every([bad2, bad1]).witness == bad2.witness
    assert every([one, bad1]).property is Property.EO


def test_cv_effects_after_the_refusal_do_not_count_and_only_with_a_tamper() -> None:
    h = H(("tamper", "t"), ("refuse", "t", None, "E"), ("effect", "t", "gate"))
    c = check_cv(h)
    assert c.holds and c.evidence["effects_before_refusal"] == {}
    before = H(("tamper", "t"), ("effect", "t", "a"), ("effect", "t", "a"), ("refuse", "t", None, "E"),
               ("refuse", "t", None, "F"))
    b = check_cv(before)
    assert not b.holds and b.evidence["effects_before_refusal"] == {"a": 2} and b.evidence["error"] == "E"
    assert [e.seq for e in b.witness] == [2, 3]
    prior = H(("effect", "t", "a"), ("tamper", "t"), ("refuse", "t", None, "E"))
    assert check_cv(prior).holds  # effects before the edit are not on the edited state
    nothing = check_cv(H(("tamper", "t")))
    assert not nothing.holds and [e.kind for e in nothing.witness] == [Kind.TAMPER]
    assert nothing.evidence == {"refused": False, "became_durable": False, "effects_before_refusal": {},
                                "error": None}
    err = check_cv(H(("tamper", "t"), ("error", "t", None, "Boom")))
    assert not err.holds and [e.kind for e in err.witness] == [Kind.ERROR]
    valid = check_cv(H(("persist", "a", None, None, {"valid": True}), ("refuse", "a", None, "E")))
    assert valid.holds and valid.evidence["became_durable"] is False
    assert check_cv(H(("effect", "a", "s1"))).witness == ()


def test_fi_retry_window_ends_at_the_next_resume() -> None:
    want = Expectation(gate="gate", outcome=1)
    h = H(("resume", "h"), ("effect", "a", "gate"), ("resume", "h", None, None, {"mode": "retry"}),
          ("complete", "b", None, 2), ("resume", "h", None, False, {"mode": "fork"}), ("effect", "c", "gate"),
          ("complete", "c", None, 1), ("complete", "c", None, 1))
    c = check_fi(h, want)
    assert c.holds and c.witness == () and c.evidence == {"declared": ["retry", "fork"], "expected_fork_outcome": 1,
                                                          "honoured": True}
    fork_first = H(("resume", "h"), ("resume", "h", None, None, {"mode": "fork"}), ("complete", "b", None, 2),
                   ("resume", "h", None, None, {"mode": "retry"}), ("complete", "c", None, 1))
    f = check_fi(fork_first, want)
    assert not f.holds and [e.seq for e in f.witness] == [3]
    assert check_fi(H(("resume", "h")), want).witness[0].kind is Kind.RESUME
    assert check_fi(H(("resume", "h")), want).evidence["declared"] == []
    with pytest.raises(ValueError):
        check_fi(h, Expectation(outcome=1))


def test_observation_helpers() -> None:
    assert checker.at_most_once({"a": 1, "b": 2}) == (False, {"effect_counts": {"a": 1, "b": 2}, "duplicated": {"b": 2}})
    assert checker.at_most_once({"b": 1, "a": 0}) == (True, {"effect_counts": {"a": 0, "b": 1}, "duplicated": {}})
    assert checker.exactly_once({"a": 1}, ["a", "b"]) == (
        False, {"effect_counts": {"a": 1, "b": 0}, "expected_once": ["a", "b"], "off": {"b": 0}, "duplicated": {},
                "skipped": {"b": 0}, "completed": True})
    assert checker.exactly_once({"a": 1, "x": 1}, ["a"]) == (
        True, {"effect_counts": {"a": 1, "x": 1}, "expected_once": ["a"], "off": {}, "duplicated": {}, "skipped": {},
               "completed": True})
    assert checker.exactly_once({"a": 1, "x": 2}, ["a"])[1]["off"] == {"x": 2}
    assert checker.exactly_once({"a": 2}, ["a"])[1]["off"] == {"a": 2}
    assert checker.prefix_not_reentered({"s1": 1, "s2": 0}, ["s1", "s2"]) == (
        False, {"durable_prefix": ["s1", "s2"], "runs_after_recovery": {"s1": 1, "s2": 0}, "reentered": {"s1": 1}})
    assert checker.prefix_not_reentered({"s3": 1}, ["s1"])[0] is True
    assert checker.fork_outcome(2, 1, 2) == (False, {"expected_f_v": 1, "observed": 2, "first_resume_outcome": 2,
                                                     "served_first_outcome": True})
    assert checker.fork_outcome(1, 1, 1)[1]["served_first_outcome"] is False
    assert checker.fork_outcome(3, 1, 2) == (False, {"expected_f_v": 1, "observed": 3, "first_resume_outcome": 2,
                                                     "served_first_outcome": False})
    assert checker.invalid_state_refused(True, False, "E") == (
        True, {"refused_at_write": True, "became_durable": False, "error": "E"})
    assert checker.invalid_state_refused(True, True, "E")[0] is False
    assert checker.invalid_state_refused(False, False, None)[0] is False
    assert checker.same_decision({"b": 3, "a": 3}) == (True, {"decisions": {"a": 3, "b": 3}, "distinct": 1})
    assert checker.same_decision({"a": 3, "b": 4}) == (False, {"decisions": {"a": 3, "b": 4}, "distinct": 2})
    assert checker.completes(False, "d") == (False, {"completed": False, "detail": "d", "lost_answer": False,
                                                     "why": "the run never completed"})
    assert checker.completes(True, "d")[0] is True


def test_property_titles_and_dispatch_table() -> None:
    assert Property.EO.title == "effect exactly-once" and Property.FI.title == "fork intent"
    assert set(checker.PROPERTY_TITLES) == set(Property)
    assert set(checker.CHECKS) == set(Property) - {Property.RD}
    assert Label.NA.violates is False and Label.PASS.violates is False
    assert Label.UNDOC.violates and Label.DOC.violates and Label.FAIL.violates
    assert checker.WORST_FIRST == (Label.UNDOC, Label.FAIL, Label.DOC, Label.UNDECIDED, Label.PASS, Label.NA)
    assert Label.UNDECIDED.violates is False  # undecided is no violation, and never a ✓


def test_tlc_holds_details() -> None:
    [eo] = tlc_checks("holds", None, ("TypeOK", "EO"), ())
    assert eo.evidence == {"tlc_result": "holds", "invariant": "EO"} and eo.witness == ()
    checks = tlc_checks("holds", None, ("EO",), ("EventuallyCompletes", "X"))
    assert [(c.property, c.holds) for c in checks] == [(Property.EO, True), (Property.LV, True)]
    assert checks[1].evidence == {"tlc_result": "holds", "properties": ["EventuallyCompletes", "X"]}
    [v] = tlc_checks("violated", "CO", ("CO",), ("P",))
    assert v.property is Property.CO and v.evidence == {"tlc_result": "violated", "violated": "CO"}
    [c] = tlc_checks("violated", "ConsumeCount", ("TypeOK", "ConsumeCount"), ())
    assert c.property is Property.CO
    with pytest.raises(HarnessError):
        tlc_checks("violated", "ConsumeCount", ("TypeOK",), ())
    with pytest.raises(HarnessError):
        tlc_checks("violated", "EO", ("TypeOK",), ())  # no temporal property checked either
    with pytest.raises(HarnessError):
        tlc_checks("holds ", None, ("EO",), ())


def test_mutant_edges_round_two() -> None:
    # CO counts only the gated effect, not effects that sort after it
    h = H(("answer", "r0"), ("effect", "r0", "gate"), ("effect", "r0", "s1"), ("effect", "r0", "x"))
    c = check_co(h, GATE)
    assert c.holds and c.evidence["gate_fires"] == 1
    # FD / FI: only COMPLETE events are outcomes (an answer carrying a value is not)
    fd = H(("answer", "x", None, 9), ("resume", "h"), ("complete", "a", None, 2), ("resume", "h"),
           ("complete", "a", None, 1))
    assert check_fd(fd, Expectation(outcome=1)).evidence["first_resume_outcome"] == 2
    fork, retry = "".join(["fo", "rk"]), "".join(["re", "try"])  # as read back from SQLite: not interned
    fi = H(("resume", "h"), ("effect", "a", "gate"), ("complete", "a", None, 2),
           ("resume", "h", None, None, {"mode": retry}), ("complete", "b", None, 2),
           ("resume", "h", None, False, {"mode": fork}), ("effect", "c", "gate"), ("complete", "c", None, 1),
           ("answer", "d", None, 7))
    assert check_fi(fi, Expectation(gate="gate", outcome=1)).holds
    retry_fired = H(("resume", "h"), ("resume", "h", None, None, {"mode": retry}), ("effect", "b", "gate"))
    assert not check_fi(retry_fired, Expectation(gate="gate", outcome=1)).holds
    # TLC: an error is never a verdict, even with temporal properties checked
    with pytest.raises(HarnessError):
        tlc_checks("error", None, (), ("EventuallyCompletes",))
    # observation helpers at their boundaries
    assert checker.exactly_once({"a": 1, "x": 0}, ["a"])[0] is True
    assert checker.fork_outcome(0, 1, 2)[0] is False
    assert checker.at_most_once({"a": 0})[0] is True


def test_mutant_edges_round_three() -> None:
    # LV / EO: the *last* crash counts
    h = H(("crash", "h"), ("recover", "h"), ("complete", "a"), ("crash", "h"), ("recover", "h"))
    assert not check_lv(h).holds and [e.seq for e in check_lv(h).witness] == [4]
    # FD: the last FORK is the fork
    two = H(("complete", "a", None, 5), ("fork", "h"), ("complete", "a", None, 7), ("fork", "h"))
    f = check_fd(two, Expectation(outcome=7))
    assert not f.holds and [e.seq for e in f.witness] == [4] and f.evidence["first_resume_outcome"] == 5
    # served_first_outcome compares values, not identities; and needs the outcome to be wrong
    same = H(("resume", "h"), ("complete", "a", None, [1]), ("resume", "h"), ("complete", "a", None, [1]))
    assert check_fd(same, Expectation(outcome=[1])).evidence["served_first_outcome"] is False
    low = H(("resume", "h"), ("complete", "a", None, 0), ("resume", "h"), ("complete", "a", None, 0))
    assert check_fd(low, Expectation(outcome=1)).evidence["served_first_outcome"] is True
    # CV: only effects count as acting on the edited state
    assert check_cv(H(("tamper", "t"), ("step_begin", "t", "s"), ("refuse", "t", None, "E"))).holds
    # FI: outcomes compared by value
    fi = H(("resume", "h"), ("complete", "a", None, [2]), ("resume", "h", None, None, {"mode": "fork"}),
           ("complete", "b", None, [1]))
    assert check_fi(fi, Expectation(gate="gate", outcome=[1])).holds
    # every: counts
    ok = check_eo(H(("effect", "a", "s1"), ("effect", "a", "s2"), ("complete", "a")), EXPECT)
    bad = check_eo(H(("effect", "a", "s1"), ("complete", "a")), EXPECT)
    assert every([ok, ok, bad]).evidence["held"] == 2 and every([ok, ok, bad]).evidence["repetitions"] == 3
    # TLC: an unknown result is never a verdict
    with pytest.raises(HarnessError):
        tlc_checks("zombie", None, (), ("P",))
    # observation helpers: values, not identities; nothing decided from nothing
    assert checker.fork_outcome([1], [1], [1])[1]["served_first_outcome"] is False
    assert checker.same_decision({})[0] is False
    assert checker.prefix_not_reentered({}, ["s1"]) == (True, {"durable_prefix": ["s1"], "runs_after_recovery": {},
                                                              "reentered": {}})
    # labels from a citation read back from JSON (not the interned literals)
    stance = "".join(["devi", "ation"])
    assert label_for(False, DocRef("p", "q", stance)) is Label.DOC
    assert label_for(False, DocRef("p", "q", "".join(["cla", "ims"]))) is Label.FAIL


def test_mutant_edges_round_four() -> None:
    import dataclasses

    for obj, name in ((CLAIM, "quote"), (Expectation(), "gate"), (check_lv(H(("complete", "a"))), "holds"),
                      (Subject("fw"), "backend"),
                      (Subject("fw").verdict(Property.EO, "p", True, {}, ""), "label")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, name, None)
    # CO: effects that sort before the gate's name do not count either
    assert check_co(H(("answer", "r"), ("effect", "r", "a"), ("effect", "r", "gate")), GATE).holds
    # FD: outcomes compared by value
    same = H(("resume", "h"), ("complete", "a", None, [2]), ("resume", "h"), ("complete", "a", None, [1]))
    assert check_fd(same, Expectation(outcome=[1])).holds
    # CV: the first tamper and the first refusal
    two = H(("tamper", "t"), ("effect", "t", "a"), ("refuse", "t", None, "E"), ("tamper", "u"),
            ("refuse", "u", None, "F"))
    assert not check_cv(two).holds
    later = H(("tamper", "t"), ("refuse", "t", None, "E"), ("effect", "t", "a"), ("refuse", "t", None, "F"))
    assert check_cv(later).holds
    zero = H(("persist", "a", None, None, {"valid": 0}), ("refuse", "a", None, "E"))
    assert check_cv(zero).holds  # only an explicit valid=False marks an invalid write
    # FI: after the fork's completion, later events are not its outcome; a FORK with no completion
    fi = H(("resume", "h"), ("resume", "h", None, None, {"mode": "fork"}), ("complete", "b", None, 1),
           ("effect", "b", "s3"), ("answer", "x", None, 9))
    assert check_fi(fi, Expectation(gate="gate", outcome=1)).holds
    empty_fork = H(("resume", "h"), ("resume", "h", None, None, {"mode": "fork"}), ("effect", "b", "s3"))
    got = check_fi(empty_fork, Expectation(gate="gate", outcome=1))
    assert not got.holds and [e.seq for e in got.witness] == [2]
    retry_ok = H(("resume", "h"), ("resume", "h", None, None, {"mode": "retry"}), ("effect", "b", "s3"),
                 ("complete", "b", None, 5))
    assert check_fi(retry_ok, Expectation(gate="gate", outcome=1)).holds
    # TLC: results outside the four TLC gives are errors, whichever way they sort
    for result in ("abc", "zombie", "i"):
        with pytest.raises(HarnessError):
            tlc_checks(result, None, (), ("P",))
    assert checker.fork_outcome([1], [1], [2])[0] is True
    assert checker.comparable(Label.NA) == "n/a"


def test_mutant_edges_round_five() -> None:
    [dl] = tlc_checks("".join(["dead", "lock"]), "deadlock", INVARIANTS, ())  # as parsed: not interned
    assert dl.property is Property.LV and not dl.holds
    [v] = tlc_checks("".join(["vio", "lated"]), "".join(["E", "O"]), INVARIANTS, ())
    assert v.property is Property.EO
    assert len(tlc_checks("".join(["ho", "lds"]), None, INVARIANTS, ())) == 6
    assert checker.fork_outcome(0, 1, 0)[1]["served_first_outcome"] is True
    assert checker.fork_outcome([2], [1], [2])[1]["served_first_outcome"] is True
    assert checker.fork_outcome([1], [1], [1])[0] is True


def test_mutant_edges_round_six() -> None:
    # recovery starts at the *first* resume
    h = H(("resume", "h"), ("effect", "r", "s1"), ("resume", "h"))
    assert not check_pc(h, EXPECT).holds and checker.recovery_start(h).seq == 1
    # FD: a fork that completes below f(v) is not f(v); first outcome compared by value
    assert not check_fd(H(("resume", "h"), ("complete", "a", None, 2), ("resume", "h"), ("complete", "b", None, 0)),
                        Expectation(outcome=1)).holds
    served = H(("resume", "h"), ("complete", "a", None, [2]), ("resume", "h"), ("complete", "b", None, [2]))
    assert check_fd(served, Expectation(outcome=[1])).evidence["served_first_outcome"] is True
    # FI: the last completion of a fork window decides; the witness is that completion only
    want = Expectation(gate="gate", outcome=1)
    late_ok = H(("resume", "h"), ("resume", "h", None, None, {"mode": "fork"}), ("complete", "b", None, 5),
                ("complete", "b", None, 1))
    assert check_fi(late_ok, want).holds
    late_bad = H(("resume", "h"), ("resume", "h", None, None, {"mode": "fork"}), ("complete", "b", None, 1),
                 ("complete", "b", None, 5))
    assert [e.seq for e in check_fi(late_bad, want).witness] == [4]
    # FI: the second declared resume is judged on its own window
    second_bad = H(("resume", "h"), ("resume", "h", None, None, {"mode": "retry"}), ("complete", "b", None, 2),
                   ("resume", "h", None, None, {"mode": "fork"}), ("complete", "c", None, 2))
    assert [e.seq for e in check_fi(second_bad, want).witness] == [5]
    gate = "".join(["ga", "te"])  # as read back from SQLite: not the interned literal
    retry_fired = H(("resume", "h"), ("resume", "h", None, None, {"mode": "retry"}), ("effect", "b", gate))
    assert not check_fi(retry_fired, want).holds
    assert not check_co(H(("answer", "r"), ("effect", "r", gate), ("effect", "s", gate)), GATE).holds
    assert checker.fork_outcome(0, 1, 2)[1]["served_first_outcome"] is False
    assert checker.prefix_not_reentered({"s1": 0}, ["s1"])[1]["reentered"] == {}


def test_fi_fork_below_its_outcome_is_not_honoured() -> None:
    low = H(("resume", "h"), ("resume", "h", None, None, {"mode": "fork"}), ("complete", "b", None, 0))
    got = check_fi(low, Expectation(gate="gate", outcome=1))
    assert not got.holds and [e.seq for e in got.witness] == [3]


def test_receipt_keeps_the_history_a_verdict_was_decided_on(tmp_path: Path) -> None:
    """The receipt stores each path's history once (trace validation reads it); the stable
    verdict view never does (a race's event order varies between runs)."""
    from probes.core.receipt import Receipt, load_receipt, recorded_histories, verdict_view

    def run(*kinds: str) -> History:
        return History(tuple(Event(Kind(k), "i1", "s", "e_s" if k == "effect" else None, seq=i)
                             for i, k in enumerate(kinds)))

    twice, once = run("start", "effect", "effect", "complete"), run("start", "effect", "complete")
    subject = Subject("fw", "sqlite")
    eo = checker.check_eo(twice, Expectation(effects=("e_s",))).verdict(subject, "crash:A", "eo")
    lv = checker.check_lv(twice).verdict(subject, "crash:A", "lv")
    co = checker.check_co(once, Expectation(gate="e_s")).verdict(subject, "co:seq", "co")
    co_other = checker.check_eo(twice, Expectation(effects=("e_s",))).verdict(subject, "co:seq", "eo")
    assert eo.label is not Label.PASS and eo.history is twice
    assert "history" not in eo.to_json()
    histories = recorded_histories([eo, lv, co, co_other])
    assert histories["crash:A"] == twice.to_json()                       # one copy for EO and LV
    assert histories["co:seq#CO"] == once.to_json() and histories["co:seq#EO"] == twice.to_json()
    assert "co:seq" not in histories
    receipt = Receipt("c", "p", {}, {}, {}, [eo, lv], {}, [], histories=recorded_histories([eo, lv]))
    loaded = load_receipt(receipt.write(tmp_path))
    assert History.from_json(loaded.histories["crash:A"]) == twice
    assert "history" not in str(verdict_view([loaded]))


def test_the_history_is_carried_but_neither_compared_nor_printed() -> None:
    """Two verdicts (checks) that differ only in the history behind them are equal, and the
    history stays out of their repr: equality and logs are about labels and evidence."""
    h1 = History((Event(Kind.EFFECT, "i1", "s", "e_s", seq=1),))
    h2 = History((Event(Kind.EFFECT, "i2", "s", "e_s", seq=1), Event(Kind.EFFECT, "i2", "s", "e_s", seq=2)))
    a = checker.check_lv(h1)
    b = checker.check_lv(h2)
    assert a == b and a.history is h1 and "history" not in repr(a)
    subject = Subject("fw", "sqlite")
    va, vb = a.verdict(subject, "p", "s"), b.verdict(subject, "p", "s")
    assert va == vb and va.history is h1 and "history" not in repr(va)


# --- mutation survivors (issue 24 item 9): each test pins a value a surviving mutant changed ---


def test_a_subjects_citation_table_is_not_part_of_its_identity() -> None:
    """A subject is who a verdict is about (framework, backend); its citation table is data it
    is labelled from. Two subjects differing only in the table are equal and hash alike (a dict
    is unhashable, so a table in the hash would make such a subject unusable as a key), and the
    table stays out of the repr (logs name the subject, not its whole table)."""
    with_table, without = Subject("fw", "sqlite", {"EO crash:*": CLAIM}), Subject("fw", "sqlite")
    assert with_table == without
    assert hash(with_table) == hash(without)
    assert repr(with_table) == "Subject(framework='fw', backend='sqlite')"


def test_eo_a_skip_is_witnessed_by_the_last_completion_only() -> None:
    """A run that completed, crashed and completed again without s2: the completion that
    skipped it is the last one (seq 5), not the one before the crash too."""
    h = H(("effect", "run", "s1"), ("complete", "run", None, 1), ("crash", "h"), ("recover", "h"),
          ("complete", "recover", None, 1))
    c = check_eo(h, EXPECT)
    assert not c.holds and c.evidence["skipped"] == {"s2": 0}
    assert [e.seq for e in c.witness] == [5]


def test_a_lost_answer_needs_the_gate_by_value_and_by_name() -> None:
    """The gate fired under a name read back from storage (equal, not the same object): no
    lost answer. Another effect whose name sorts after the gate's is not the gate: lost."""
    gate = "".join(["ga", "te"])  # not the interned literal
    assert checker.lost_answer(H(("answer", "a"), ("effect", "a", gate)), "gate") is False
    assert checker.lost_answer(H(("answer", "a"), ("effect", "a", "x")), "gate") is True


def test_co_no_fire_is_no_duplicate() -> None:
    """``duplicate`` means more than one fire: none (a lost answer, or no answer) is not one."""
    assert check_co(H(("pause", "p")), GATE).evidence["duplicate"] is False
    lost = check_co(H(("answer", "a"), ("refuse", "a", None, "Busy")), GATE)
    assert lost.evidence["duplicate"] is False and lost.evidence["lost_answer"] is True


def test_lv_judges_the_last_completion_by_value() -> None:
    """LV compares the *last* completion's outcome with the result by value: an equal list
    read back from JSON is the result; an earlier wrong completion followed by the right one
    is live; two wrong completions are witnessed by the last alone."""
    assert checker.liveness_reason(True, (), [1], [1], False) is None
    assert check_lv(H(("complete", "a", None, [1])), Expectation(result=[1])).holds
    fixed = check_lv(H(("complete", "a", None, "err"), ("complete", "a", None, "ok")), Expectation(result="ok"))
    assert fixed.holds and fixed.evidence["outcome"] == "ok" and fixed.witness == ()
    wrong = check_lv(H(("complete", "a", None, "e1"), ("complete", "a", None, "e2")), Expectation(result="ok"))
    assert not wrong.holds and wrong.evidence["outcome"] == "e2" and [e.seq for e in wrong.witness] == [2]


def test_repeat_side_counts_only_the_gated_effect_by_value() -> None:
    """After the fork, the gate fired under an equal (not identical) name is a refire; another
    effect, even one whose name sorts after the gate's, is not; without a gate any effect is."""
    gate = "".join(["ga", "te"])
    assert checker.repeat_side(H(("effect", "b", gate)), False, "gate") is checker.RepeatSide.REFIRED
    assert checker.repeat_side(H(("effect", "b", "x")), False, "gate") is checker.RepeatSide.IGNORED
    assert checker.repeat_side(H(("effect", "b", "x")), False, None) is checker.RepeatSide.REFIRED


def _tamper(*events: tuple, invalid: bool = False, result: object = "ok") -> Check:
    """``tamper_outcome`` with the gate ``gate`` and the workflow result ``result``."""
    return checker.tamper_outcome(H(*events), Expectation(gate="gate", result=result), invalid)


def test_tamper_the_first_edit_starts_the_comparison() -> None:
    """Two edits: the behaviour is compared from the first one on (the gate fired once and the
    run completed with its result after it), not from the last (after which nothing ran)."""
    c = _tamper(("tamper", "h"), ("answer", "h"), ("effect", "a", "gate"), ("complete", "a", None, "ok"),
                ("tamper", "h"))
    assert c.evidence["outcome"] == checker.TamperOutcome.UNCHANGED.value and c.evidence["changed"] == []
    assert c.evidence["effects_after_edit"] == {"gate": 1}


def test_tamper_names_a_gate_that_never_fired_and_one_that_fired_twice() -> None:
    """The gate is due once after the edit: none (it fired only before the edit) and twice are
    both changes, each named with its count."""
    never = _tamper(("effect", "a", "gate"), ("tamper", "h"), ("answer", "h"), ("complete", "a", None, "ok"))
    assert never.evidence["outcome"] == checker.TamperOutcome.CHANGED.value
    assert never.evidence["changed"] == ["gate fired 0 time(s) after the edit, not 1"]
    twice = _tamper(("tamper", "h"), ("answer", "h"), ("effect", "a", "gate"), ("effect", "b", "gate"),
                    ("complete", "b", None, "ok"))
    assert twice.evidence["changed"] == ["gate fired 2 time(s) after the edit, not 1"]


def test_tamper_judges_the_last_completion_against_the_result_by_value() -> None:
    """The last completion after the edit is the one compared, by value; any outcome other than
    the result is a change, whichever way it sorts."""
    fixed = _tamper(("tamper", "h"), ("effect", "a", "gate"), ("complete", "a", None, "wrong"),
                    ("complete", "a", None, "ok"))
    assert fixed.evidence["changed"] == [] and fixed.evidence["outcome"] == checker.TamperOutcome.UNCHANGED.value
    as_read = _tamper(("tamper", "h"), ("effect", "a", "gate"), ("complete", "a", None, [1]), result=[1])
    assert as_read.evidence["changed"] == []
    above = _tamper(("tamper", "h"), ("effect", "a", "gate"), ("complete", "a", None, "x"),
                    ("complete", "a", None, "z"))
    assert above.evidence["changed"] == ["completed with 'z', not 'ok'"]


def test_tamper_witness_only_when_the_check_fails() -> None:
    """A type-valid edit refused (after an effect ran on it) is a detected forgery: it holds and
    has no witness, although CV's own check, which an invalid edit would use, fails on the
    effect. The same history with an invalid edit fails, witnessed by that effect."""
    events = (("tamper", "h"), ("effect", "a", "gate"), ("refuse", "a", None, "E"))
    forgery = _tamper(*events)
    assert forgery.holds and forgery.witness == () and forgery.evidence["outcome"] == "refused loudly"
    invalid = _tamper(*events, invalid=True)
    assert not invalid.holds and [(e.kind, e.seq) for e in invalid.witness] == [(Kind.EFFECT, 2)]


def test_every_reports_the_first_failing_repetition() -> None:
    """Of two failing repetitions the first one's evidence and witness are reported."""
    ok = check_eo(H(("effect", "a", "s1"), ("effect", "a", "s2"), ("complete", "a")), EXPECT)
    skipped = check_eo(H(("effect", "a", "s1"), ("complete", "a")), EXPECT)
    doubled = check_eo(H(("effect", "a", "s1"), ("effect", "b", "s1"), ("effect", "a", "s2"), ("complete", "a")),
                       EXPECT)
    got = every([ok, skipped, doubled])
    assert not got.holds and got.evidence["off"] == {"s2": 0} and [e.seq for e in got.witness] == [2]
    assert got.evidence["held"] == 1 and got.evidence["repetitions"] == 3


def test_gate_once_flags_a_lost_answer_only_at_zero_fires() -> None:
    """``lost_answer_is_lv`` says CO's ✓ at 0 fires hides a loss LV reports; 1 and 2 fires are
    no loss."""
    assert checker.gate_once(0)[1]["lost_answer_is_lv"] is True
    assert checker.gate_once(1)[1]["lost_answer_is_lv"] is False
    assert checker.gate_once(2)[1]["lost_answer_is_lv"] is False
