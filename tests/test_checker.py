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
    lg = Subject("langgraph", "sqlite")
    exit_eo = lg.verdict(Property.EO, "crash:A/durability=exit/recover=resubmit", False, {}, "")
    assert exit_eo.label is Label.DOC and exit_eo.doc.source == "LG-8"
    assert "langgraph 1.2.9" in exit_eo.doc.version and exit_eo.doc.quote.startswith("…intermediate state")
    fd = lg.verdict(Property.FD, "second-resume:bare-command", False, {}, "")
    assert fd.label is Label.FAIL and fd.doc.source == "LG-16"
    assert lg.verdict(Property.CO, "cross-process k=2 jitter=0ms", False, {}, "").doc.source == "LG-28"
    assert lg.verdict(Property.CV, "pydantic:append-None", False, {}, "").label is Label.DOC
    # silent documentation stays U
    assert Subject("llamaindex").verdict(Property.CO, "double-answer", False, {}, "").label is Label.UNDOC
    assert Subject("autogen · tampered state").verdict(Property.CV, "tamper:x", False, {}, "").label is Label.UNDOC
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


def test_eo_a_run_that_never_completes_is_not_exactly_once() -> None:
    """The durability=exit shape: each effect at most once, but recovery never finished."""
    h = H(("start", "run"), ("effect", "run", "s1"), ("crash", "harness"), ("recover", "harness"),
          ("error", "recover", None, "EmptyInputError"))
    c = check_eo(h, EXPECT)
    assert not c.holds and c.evidence["completed"] is False and c.evidence["off"] == {"s2": 0}
    assert [e.kind for e in c.witness] == [Kind.CRASH, Kind.ERROR]
    # an expected effect that fired once each but no completion after the crash: still not EO
    h2 = H(("effect", "run", "s1"), ("effect", "run", "s2"), ("complete", "run", None, 1), ("crash", "harness"))
    c2 = check_eo(h2, EXPECT)
    assert not c2.holds and c2.evidence["off"] == {} and [e.kind for e in c2.witness] == [Kind.CRASH]
    assert check_eo(h2, Expectation(effects=("s1", "s2"), complete=False)).holds


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


def test_co_lost_answer_fails() -> None:
    """The gate that loses every answer: distribution {0: 3} must not be CO ✓."""
    h = H(("pause", "park"), ("answer", "r0"), ("answer", "r1"), ("answer", "r2"))
    c = check_co(h, GATE)
    assert not c.holds and c.evidence["lost_answer"] and not c.evidence["duplicate"]
    assert [e.incarnation for e in c.witness] == ["r0", "r1", "r2"]
    assert every([c, check_co(h, GATE)]).holds is False


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
    assert c.evidence == {"completed": False, "crashes": 1, "stopped_by": ["crash", "refuse"]}
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
    bad = check_eo(H(("effect", "a", "s1")), EXPECT)
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
    assert [w["incarnation"] for w in v.evidence["witness"]] == ["a", "b"]
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
    [t] = tlc_checks("violated", "TypeOK", INVARIANTS, ())
    assert t.property is Property.CV and not t.holds
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
