"""Recorded violations from the reference run, fed to the checkers: exact labels.

Fixtures: ``tests/fixtures/recorded/*.json`` (built by ``tests/fixtures/recorded/extract.py``
from ``data/reference`` receipts; each names its source). Every test asserts the exact
label and citation the verdict layer gives, including where the sound definitions
differ from what the reference run recorded (the ``recorded_label`` fields).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probes.citations import subject
from probes.studies.consume_race.verdict import co_verdict, eo_verdict, lv_verdict, rep_history
from probes.core.checker import (Expectation, Label, Property, check_cv, check_eo, check_lv, check_pc, every,
                                 tlc_checks)
from probes.core.errors import HarnessError
from probes.core.history import Event, History, Kind
from probes.core.receipt import Receipt
from probes.core.checker import Verdict
from probes.studies.remit.verdicts import FRAMEWORK, SAVER_ONLY, row

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "recorded"


def fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


# --- consume race -----------------------------------------------------------------------------


def test_stock_race_double_consumption_is_D_with_its_citation() -> None:
    f = fixture("consume_race_stock_k2_sqlite")
    reps = [History.from_json(h) for h in f["reps"]]
    v = co_verdict("sqlite", "stock", 2, 0.0, reps)
    assert (v.framework, v.property, v.path, v.label) == ("langgraph", Property.CO, "cross-process k=2 jitter=0ms",
                                                           Label.DOC)
    assert v.doc.source == "LG-28" and v.doc.stance == "deviation"
    assert v.evidence == {"k": 2, "jitter_ms": 0, "reps": len(reps), "duplicates_observed": True,
                          "unfired_observed": False}
    assert "more than once" in v.summary and "lost" not in v.summary
    assert v.summary.startswith("2 processes answered one interrupt together: ")
    fresh = "".join(["sto", "ck"])  # not the interned literal: the arm is compared by value
    assert co_verdict("sqlite", fresh, 2, 0.0, reps).summary == v.summary
    assert f["recorded_label"] == "U"  # the reference run had no citation for it


def test_gate_arm_race_holds_and_a_gate_that_loses_every_answer_does_not() -> None:
    f = fixture("consume_race_gate_k4_sqlite")
    reps = [History.from_json(h) for h in f["reps"]]
    v = co_verdict("postgres", "gate", 4, 0.0, reps)
    assert (v.framework, v.label, v.doc) == ("langgraph+remit", Label.PASS, None)
    assert v.evidence["duplicates_observed"] is False and v.evidence["unfired_observed"] is False
    assert v.summary == ("with the read-path consumption gate, 4 racing answers: the gated effect fired at most once "
                         "in every repetition")
    assert eo_verdict("postgres", "gate", 4, 0.0, reps).label is Label.PASS
    assert lv_verdict("postgres", "gate", 4, 0.0, reps).label is Label.PASS
    # The mutation the issue names: a gate that loses every answer (distribution {0: n}). No double
    # consume, so CO holds; the racer that returned without the gated effect completed having skipped
    # it (EO), and where no racer completes the answer is lost (LV).
    lost = [History(tuple(e for e in h if e.kind is not Kind.EFFECT)) for h in reps]
    co = co_verdict("sqlite", "gate", 4, 0.0, lost)
    assert co.label is Label.PASS and co.evidence["unfired_observed"] is True
    eo = eo_verdict("sqlite", "gate", 4, 0.0, lost)
    assert eo.label is Label.UNDOC and eo.evidence["skipped_observed"] is True and eo.evidence["duplicates_observed"] is False
    assert "completed without firing the gated effect" in eo.summary and "more than once" not in eo.summary
    refused = [History(tuple(e for e in h if e.kind not in (Kind.EFFECT, Kind.COMPLETE))) for h in reps]
    lv = lv_verdict("sqlite", "gate", 4, 0.0, refused)
    assert lv.label is Label.UNDOC and lv.evidence["lost_answers_observed"] is True and "lost answer" in lv.summary
    assert eo_verdict("sqlite", "gate", 4, 0.0, refused).label is Label.PASS  # nothing completed, nothing twice


def test_consume_race_paths_and_rep_slicing() -> None:
    reps = [History.from_json(h) for h in fixture("consume_race_stock_k2_sqlite")["reps"]]
    assert co_verdict("sqlite", "stock", 2, 500.0, reps).path == "cross-process k=2 jitter=0ms gate=500ms"
    assert co_verdict("sqlite", "stock", 2, 2.5, reps).path == "cross-process k=2 jitter=0ms gate=2p5ms"
    merged = History.of_events([e for h in reps for e in h])
    one = rep_history(merged, 1)
    assert {e.incarnation.split(".")[0] for e in one} == {"rep1"} and len(one) == len(reps[1])
    assert len(rep_history(merged, 11)) == 0  # rep1 does not swallow rep11
    assert [e.kind for e in one] == [e.kind for e in reps[1]]


def test_one_duplicate_rep_among_clean_ones_still_fails() -> None:
    clean = History.of_events([Event(Kind.PAUSE, "rep0.park"), Event(Kind.ANSWER, "rep0.racer0"),
                               Event(Kind.EFFECT, "rep0.racer0", effect="gate")])
    double = History.of_events([Event(Kind.ANSWER, "rep1.racer0"), Event(Kind.ANSWER, "rep1.racer1"),
                                Event(Kind.EFFECT, "rep1.racer0", effect="gate"),
                                Event(Kind.EFFECT, "rep1.racer1", effect="gate")])
    v = co_verdict("sqlite", "gate", 2, 0.0, [clean, double])
    assert v.label is Label.UNDOC and v.evidence["duplicates_observed"] and v.evidence["reps"] == 2
    assert co_verdict("sqlite", "gate", 2, 0.0, [clean, clean]).label is Label.PASS


# --- LangGraph crash path --------------------------------------------------------------------

LG = subject("langgraph", "sqlite")


def _lg(name: str) -> tuple[dict, list[History], list[dict]]:
    f = fixture(name)
    return f, [History.from_json(r["history"]) for r in f["reps"]], f["reps"]


def test_durability_exit_lost_run_holds_eo_and_is_not_live() -> None:
    """Nothing fired twice and the run never completed: EO ✓ (at most once, the model's invariant),
    LV D with the reason (issue 24: no EO failure rests on non-completion alone)."""
    f, hs, _ = _lg("langgraph_durability_exit_A_none_sqlite")
    assert f["recorded_labels"] == {"EO": "✓", "PC": "✓"}  # the at-most-once definition, again
    eo = every([check_eo(h, Expectation(effects=("s1", "s2"))) for h in hs]).verdict(LG, f["path"], "s")
    assert eo.label is Label.PASS and eo.doc is None
    assert eo.evidence["completed"] is False and eo.evidence["off"] == {} and eo.evidence["witness"] == []
    lv = every([check_lv(h) for h in hs]).verdict(LG, f["path"], "s")
    assert "never completed" in lv.evidence["why"]
    assert lv.label is Label.DOC and lv.doc.source == "LG-8" and lv.evidence["stopped_by"] == ["crash", "error"]


def test_window_duplicate_is_D_by_the_unfinished_task_statement() -> None:
    f, hs, _ = _lg("langgraph_crash_window_none_sqlite")
    eo = every([check_eo(h, Expectation(effects=("s1", "s2"))) for h in hs]).verdict(LG, f["path"], "s")
    assert eo.label is Label.DOC and eo.doc.source == "LG-5"
    assert eo.evidence["off"] == {"s2": 2} and eo.evidence["completed"] is True
    assert [(w["incarnation"], w["effect"]) for w in eo.evidence["witness"]] == [("run", "s2"), ("recover", "s2")]
    assert f["recorded_labels"]["EO"] == "U"


def test_resubmitted_input_reenters_the_prefix_D_indirect() -> None:
    f, hs, reps = _lg("langgraph_crash_A_resubmit_sqlite")
    pcs = [check_pc(h, Expectation(prefix=tuple(r["durable_prefix"]))) for h, r in zip(hs, reps)]
    pc = every(pcs).verdict(LG, f["path"], "s")
    assert pc.label is Label.DOC and pc.doc.source == "LG-3" and pc.evidence["reentered"] == {"s1": 1}
    eo = every([check_eo(h, Expectation(effects=("s1", "s2"))) for h in hs]).verdict(LG, f["path"], "s")
    assert eo.label is Label.DOC and eo.doc.source == "LG-3" and eo.evidence["off"] == {"s1": 2}
    assert every([check_lv(h) for h in hs]).verdict(LG, f["path"], "s").label is Label.PASS


def test_documented_recovery_after_a_kill_before_the_effect_conforms() -> None:
    f, hs, reps = _lg("langgraph_crash_A_none_sqlite")
    assert every([check_eo(h, Expectation(effects=("s1", "s2"))) for h in hs]).holds
    assert every([check_pc(h, Expectation(prefix=tuple(r["durable_prefix"]))) for h, r in zip(hs, reps)]).holds
    assert every([check_lv(h) for h in hs]).holds
    assert f["recorded_labels"] == {"EO": "✓", "PC": "✓"}


# --- pydantic-graph ------------------------------------------------------------------------------

PG = subject("pydantic-graph", "file")


def test_pydantic_kill_after_effect_never_completes() -> None:
    f = fixture("pydantic_crash_sigkill_after_effect")
    h = History.from_json(f["history"])
    assert f["recorded_labels"] == {"EO": "✓", "PC": "✓", "LV": "✗"}
    eo = check_eo(h, Expectation(effects=("A", "B"))).verdict(PG, "crash:sigkill-after-effect", "s")
    assert eo.label is Label.PASS and eo.evidence["completed"] is False and eo.evidence["off"] == {}
    lv = check_lv(h).verdict(PG, "crash:sigkill-after-effect", "s")
    assert lv.label is Label.DOC and lv.doc.source == "PG-2"  # the 1.107.1 status contract (DOCS.md)
    assert check_pc(h, Expectation(prefix=("A",))).holds


def test_pydantic_between_nodes_recovers() -> None:
    h = History.from_json(fixture("pydantic_crash_between_nodes")["history"])
    assert check_eo(h, Expectation(effects=("A", "B"))).holds and check_lv(h).holds
    assert check_pc(h, Expectation(prefix=("A",))).holds


def test_pydantic_tampers_one_check() -> None:
    f = fixture("pydantic_tamper")["tampers"]
    tampered = subject("pydantic-graph · tampered state", "file")
    got = {k: check_cv(History.from_json(t["history"])).verdict(tampered, f"tamper:{k}", "s").label.value
           for k, t in f.items()}
    assert got == {k: t["recorded_label"] for k, t in f.items()} == {
        "truncated-file": "✓", "wrong-type": "✓", "status-reset": "U"}


# --- TLC -------------------------------------------------------------------------------------------


def test_every_recorded_tlc_run_maps_to_verdicts() -> None:
    runs = fixture("tlc_runs")["runs"]
    mapped: dict[str, list[tuple[str, bool]]] = {}
    unmapped = []
    for name, r in sorted(runs.items()):
        try:
            mapped[name] = [(c.property.value, c.holds)
                            for c in tlc_checks(r["result"], r["violated"], r["invariants"], r["properties"])]
        except HarnessError:
            unmapped.append(name)
    assert mapped["R0_reference"] == [(p, True) for p in ("PC", "EO", "FD", "CV", "CO", "RD")]
    assert mapped["R6_liveness"] == [("LV", True)]
    assert mapped["R1_Replay"] == [("PC", False)]
    assert mapped["R2_ForkIgnore"] == [("FD", False)]
    assert mapped["R3_InvalidPersist"] == [("CV", False)]
    assert mapped["R5_DoubleConsume.CO"] == [("CO", False)]
    assert mapped["R5_DoubleConsume.FD"] == [("FD", True)]
    assert mapped["race.consume_only.ConsumeCount"] == [("CO", False)]
    assert mapped["sep.NondetRegate.RD"] == [("RD", False)]
    assert mapped["ind.set1.base"] == []  # Inv names no property: nothing to say, nothing dropped
    # every violated run yields exactly one failing verdict, except the fork model's own invariant
    for name, r in runs.items():
        if r["result"] == "violated" and name in mapped:
            assert [h for _, h in mapped[name]] == [False], name
    assert unmapped == []


def test_tlc_reference_verdicts_in_the_campaign() -> None:
    from probes.tla.campaign import _reference_verdicts

    class Cfg:
        name = "R0_reference"
        invariants = ("TypeOK", "PC", "EO", "FD", "CV", "CO", "RD")
        properties = ()
        constants = (("N", 3), ("IP", 2), ("NV", 2), ("MaxResumes", 2), ("MaxCrashes", 1), ("MaxStrays", 1))

    class Res:
        result, violated, generated, distinct, depth = "violated", "EO", 7, 7, 4

    [v] = _reference_verdicts(Cfg, Res, "reference bounds", True)
    assert (v.property, v.label, v.evidence["depth"]) == (Property.EO, Label.UNDOC, 4)
    Res.result, Res.violated = "deadlock", "deadlock"
    [d] = _reference_verdicts(Cfg, Res, "reference bounds", False)
    assert (d.property, d.label) == (Property.LV, Label.UNDOC) and "depth" not in d.evidence
    assert "deadlocks" in d.summary
    Res.result, Res.violated = "holds", None
    held = _reference_verdicts(Cfg, Res, "reference bounds", True)
    assert [(v.property.value, v.label.value) for v in held] == [(p, "✓") for p in Cfg.invariants[1:]]
    Res.result = "error"
    with pytest.raises(HarnessError):
        _reference_verdicts(Cfg, Res, "reference bounds", True)


# --- REMIT row --------------------------------------------------------------------------------------


def _receipt(verdicts: list[dict]) -> Receipt:
    vs = [Verdict.from_json({"backend": "sqlite", **v, "evidence": {}, "summary": ""}) for v in verdicts]
    return Receipt(campaign="remit", probe="p", args={}, manifest={}, observations={}, verdicts=vs, metrics={},
                   harness_errors=[], path=None)


def _saver_only(v: dict) -> dict:
    """The reference run relabelled these after the fact; the plan now names the subject up front."""
    if v["framework"] == FRAMEWORK and v["property"] in ("EO", "PC") and v["path"].startswith("crash") \
            and not v["path"].endswith("/ledger"):
        return {**v, "framework": SAVER_ONLY}
    return v


def test_remit_row_from_the_recorded_verdicts() -> None:
    verdicts = [_saver_only(v) for v in fixture("remit_verdicts")["verdicts"]]
    got = row([_receipt(verdicts)])
    assert got == {"CO": "✓", "CV": "✓", "EO": "✓", "EO crash (saver only)": "✗", "FD": "✓", "LV": "✓",
                   "PC": "✓", "PC crash (saver only)": "✗", "RD": "✓"}
    # one violating REMIT path anywhere flips its property; n/a alone says nothing
    flipped = [dict(v, label="U") if v["property"] == "FD" and v["framework"] == FRAMEWORK else v for v in verdicts]
    assert row([_receipt(flipped)])["FD"] == "✗"
    only_na = [{"framework": FRAMEWORK, "property": "FI", "path": "x", "label": "n/a"}]
    assert "FI" not in row([_receipt(verdicts + only_na)])
    other = [{"framework": "langgraph", "property": "FD", "path": "x", "label": "✗"}]
    assert row([_receipt(verdicts + other)])["FD"] == "✓"
    assert row([_receipt(other + verdicts)]) == got  # another framework's verdict first skips only itself
    saver = [{"framework": SAVER_ONLY, "property": "LV", "path": "crash:A", "label": "D"}]
    assert row([_receipt(saver)]) == {"LV crash (saver only)": "✗"}
    assert row([]) == {}
