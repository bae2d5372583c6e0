"""The kit's judge on hand-made histories: each rule of issue 24 pinned, no framework needed.

EO is at most once, exactly once on a completed run; a run that never completes is LV's,
with its reason; a lost answer holds CO and fails LV by name; LV needs the workflow's own
result; a tamper edit has one of four named outcomes, and only an edit invalid under the
framework's declared state model is a CV question. Each test fails against the mutants the
issue names (an EO check that drops the expected set, a durable prefix cut to one step).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from probes.core.checker import UNSET, DocRef, Label, Property, TamperOutcome
from probes.core.history import Event, History, Kind
from probes.kit.adapter import required_fields
from probes.kit.judge import FORGERY_ROW, Judge, durable_prefix
from probes.kit.protocols import edit_invalid

RESULT = "s2 served 'yes'"
CLAIM = DocRef(page="https://example.invalid", quote="state is validated on load", stance="claims", source="X-1",
              version="1.0")


def H(*events: tuple) -> History:
    """(kind, incarnation, step-or-effect, value) tuples; effect names start with 'e'."""
    out = []
    for kind, inc, *rest in events:
        name = rest[0] if rest else None
        value = rest[1] if len(rest) > 1 else None
        if kind is Kind.EFFECT:
            out.append(Event(kind, inc, step=None, effect=name, value=value))
        elif kind is Kind.TAMPER:
            out.append(Event(kind, inc, detail={"edit": name}))
        else:
            out.append(Event(kind, inc, step=name, value=value))
    return History.of_events(out)


def judge(citations: dict[str, Any] | None = None) -> Judge:
    return Judge("fw", "file", citations or {})


START = ((Kind.START, "harness"), (Kind.STEP_BEGIN, "run/start", "s1"), (Kind.EFFECT, "run/start", "e1"),
         (Kind.STEP_END, "run/start", "s1"), (Kind.PERSIST, "run/start"), (Kind.PAUSE, "run/start", "s2"))


# --- EO -------------------------------------------------------------------------------------


def test_a_completed_run_that_skipped_an_effect_fails_eo() -> None:
    """Kills the mutant ``Expectation(effects=())`` in ``Judge.effects_once``."""
    h = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.COMPLETE, "run/answer", None, RESULT))
    v = judge().effects_once("baseline:yes", h, "no fault")
    assert v.label is Label.UNDOC and v.evidence["skipped"] == {"e2": 0} and v.evidence["completed"] is True
    assert "completed True" in v.summary
    # the same run with e2 fired holds; a declined answer expects only e1
    ok = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.EFFECT, "run/answer", "e2"),
           (Kind.COMPLETE, "run/answer", None, RESULT))
    assert judge().effects_once("baseline:yes", ok, "no fault").label is Label.PASS
    assert judge().effects_once("baseline:no", h, "declined", ("e1",)).label is Label.PASS


def test_an_incomplete_run_with_no_duplicate_holds_eo_and_fails_lv_naming_why() -> None:
    h = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.CRASH, "harness"), (Kind.RECOVER, "harness"),
          (Kind.REFUSE, "run/recover", None, "GraphRuntimeError"))
    eo = judge().effects_once("crash:kill@s2/latest", h, "killed")
    assert eo.label is Label.PASS and eo.evidence["completed"] is False
    lv = judge().live("crash:kill@s2/latest", h, "killed", RESULT)
    assert lv.label is Label.UNDOC
    assert lv.evidence["why"] == ("lost answer: the answer was accepted, its gated effect never fired and no run "
                                  "completed")
    # with e2 fired before the crash it is no lost answer: the reason is the refusal
    fired = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.EFFECT, "run/answer", "e2"),
              (Kind.CRASH, "harness"), (Kind.RECOVER, "harness"), (Kind.REFUSE, "run/recover", None, "E"))
    lv2 = judge().live("crash", fired, "killed", RESULT)
    assert lv2.label is Label.UNDOC and lv2.evidence["why"] == "the run never completed (stopped by crash, refuse E)"
    assert "never completed" in lv2.summary
    # a duplicate on a run that never completed is still an EO failure
    dup = H(*START, (Kind.CRASH, "harness"), (Kind.RECOVER, "harness"), (Kind.EFFECT, "run/recover", "e1"),
            (Kind.ERROR, "run/recover", None, "X"))
    assert judge().effects_once("crash", dup, "killed").evidence["duplicated"] == {"e1": 2}


def test_a_lost_answer_holds_co_and_fails_lv_as_a_lost_answer() -> None:
    h = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.REFUSE, "run/racer-0", None, "Busy"),
          (Kind.REFUSE, "run/racer-1", None, "Busy"))
    co = judge().gated_once("race:same-pause×2", h, "2 concurrent answers")
    assert co.label is Label.PASS and co.evidence["lost_answer"] is True and co.evidence["gate_fires"] == 0
    lv = judge().live("race:same-pause×2", h, "2 concurrent answers", RESULT)
    assert lv.label is Label.UNDOC and lv.evidence["lost_answer"] is True and "lost answer" in lv.summary


def test_a_completion_with_an_error_outcome_fails_lv() -> None:
    err = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.EFFECT, "run/answer", "e2"),
            (Kind.COMPLETE, "run/answer", None, "Error: the tool raised"))
    lv = judge().live("baseline:yes", err, "no fault", RESULT)
    assert lv.label is Label.UNDOC and lv.evidence["outcome"] == "Error: the tool raised"
    assert "not the workflow's own result" in lv.summary
    good = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.EFFECT, "run/answer", "e2"),
             (Kind.COMPLETE, "run/answer", None, RESULT))
    assert judge().live("baseline:yes", good, "no fault", RESULT).label is Label.PASS
    assert judge().live("baseline:no", err, "declined", UNSET).label is Label.PASS  # no expectation: any completion


# --- PC: the durable prefix ---------------------------------------------------------------


def test_durable_prefix_longer_than_one_step() -> None:
    """Kills the mutant that returns nothing for prefixes longer than one step."""
    h = H((Kind.STEP_END, "a", "s1"), (Kind.PERSIST, "a"), (Kind.STEP_END, "a", "s2"), (Kind.PERSIST, "a"),
          (Kind.CRASH, "harness"), (Kind.RECOVER, "harness"), (Kind.STEP_BEGIN, "b", "s2"))
    assert durable_prefix(h, h.of(Kind.CRASH)[0]) == ["s1", "s2"]
    pc = judge().prefix("save-kill:save.exit#2", h)
    assert pc.label is Label.UNDOC and pc.evidence["durable_prefix"] == ["s1", "s2"]
    assert pc.evidence["reentered"] == {"s2": 1}


def test_the_prefix_of_a_run_restored_after_it_completed_is_taken_at_the_recovery() -> None:
    """A restore with no crash before it (CrewAI's ``@persist`` restore of a completed flow): ``at="recover"``
    takes the durable prefix at the recovery, so both steps begun again are PC violations, where the plain
    call finds no crash and an empty prefix, as before. The call records ``at`` only when it is given, so a
    replay decides both the same; a variant's judge names the path after its variant."""
    import json

    from probes.core.receipt import recorded_histories
    from probes.kit.judge import VariantJudge, replay

    h = H((Kind.STEP_END, "a", "s1"), (Kind.PERSIST, "a"), (Kind.STEP_END, "a", "s2"), (Kind.PERSIST, "a"),
          (Kind.COMPLETE, "a"), (Kind.RECOVER, "harness"), (Kind.STEP_BEGIN, "b", "s1"), (Kind.STEP_BEGIN, "b", "s2"))
    j = judge()
    plain = j.prefix("p", h)
    assert plain.label is Label.PASS and plain.evidence["durable_prefix"] == []
    restored = VariantJudge(j, "counter:").prefix("restore", h, at="recover")
    assert restored.path == "counter:restore" and restored.label is Label.UNDOC
    assert restored.summary == ("durable prefix ['s1', 's2'] at the recovery; re-entered after recovery: "
                                "{'s1': 1, 's2': 1}")
    assert j.calls == [{"call": "prefix", "path": "p"}, {"call": "prefix", "path": "counter:restore", "at": "recover"}]
    again = replay(json.loads(json.dumps(j.calls)), json.loads(json.dumps(recorded_histories([plain, restored]))),
                   "fw", "file", {})
    assert [v.to_json() for v in again] == [plain.to_json(), restored.to_json()]
    with pytest.raises(ValueError, match="at the crash or at the recovery"):
        j.prefix("p", h, at="pause")


# --- tamper: four named outcomes ------------------------------------------------------------


def _tampered(*after: tuple) -> History:
    return H(*START, (Kind.TAMPER, "harness", "drop:x"), (Kind.ANSWER, "harness", None, "yes"), *after)


def test_refused_loudly() -> None:
    h = _tampered((Kind.REFUSE, "run/answer", None, "ValidationError"))
    [cv] = judge().tampered("tamper:drop:x", h, True, RESULT, "m")
    assert (cv.framework, cv.property, cv.label) == ("fw", Property.CV, Label.PASS)
    assert cv.evidence["outcome"] == TamperOutcome.REFUSED.value and "refused loudly (ValidationError)" in cv.summary
    # a type-valid edit refused: the forgery was detected, in the forgery row, and no LV is decided
    [fv] = judge().tampered("tamper:plus-one:x", h, False, RESULT, "m")
    assert fv.framework == f"fw · {FORGERY_ROW}" and fv.label is Label.PASS


def test_accepted_behaviour_unchanged_is_an_undetected_forgery_not_a_safety_pass() -> None:
    h = _tampered((Kind.EFFECT, "run/answer", "e2"), (Kind.COMPLETE, "run/answer", None, RESULT))
    fv, lv = judge({"CV tamper:*": CLAIM}).tampered("tamper:plus-one:steps", h, False, RESULT, "m")
    assert fv.framework == f"fw · {FORGERY_ROW}" and fv.property is Property.CV
    assert fv.label is Label.UNDOC and fv.doc is None  # the framework's CV citation is not about forgeries
    assert fv.evidence["outcome"] == TamperOutcome.UNCHANGED.value and fv.evidence["changed"] == []
    assert (lv.framework, lv.property, lv.label) == ("fw", Property.LV, Label.PASS)
    assert "witness" in lv.evidence  # an LV decided on a tampered run shows its witness


def test_accepted_behaviour_changed_names_the_effect_and_the_state() -> None:
    h = _tampered((Kind.EFFECT, "run/answer", "e1"), (Kind.EFFECT, "run/answer", "e2"),
                  (Kind.COMPLETE, "run/answer", None, "s2 served 'no'"))
    fv, lv = judge().tampered("tamper:other-string:answer", h, False, RESULT, "m")
    assert fv.evidence["outcome"] == TamperOutcome.CHANGED.value and fv.framework.endswith(FORGERY_ROW)
    assert fv.evidence["changed"] == ["e1 fired 1 time(s) after the edit, not 0",
                                      "completed with \"s2 served 'no'\", not \"s2 served 'yes'\""]
    assert "e1 fired 1 time(s)" in fv.summary
    assert lv.label is Label.UNDOC and "not the workflow's own result" in lv.summary


def test_accepted_although_invalid_is_cv_on_the_framework_row() -> None:
    h = _tampered((Kind.EFFECT, "run/answer", "e2"), (Kind.COMPLETE, "run/answer", None, RESULT))
    cv, lv = judge({"CV tamper:*": CLAIM}).tampered("tamper:drop:x", h, True, RESULT, "m")
    assert (cv.framework, cv.property, cv.label) == ("fw", Property.CV, Label.FAIL)
    assert cv.evidence["outcome"] == TamperOutcome.INVALID.value and cv.doc.quote == CLAIM.quote
    assert lv.label is Label.PASS
    # an invalid edit refused only after an effect ran on it is no ✓
    late = _tampered((Kind.EFFECT, "run/answer", "e2"), (Kind.REFUSE, "run/answer", None, "E"))
    [bad] = judge().tampered("tamper:drop:x", late, True, RESULT, "m")
    assert bad.label is Label.UNDOC and bad.evidence["outcome"] == TamperOutcome.REFUSED.value


def test_edit_validity_follows_the_declared_state_model() -> None:
    assert edit_invalid("drop:steps", []) is False  # every field has a default: the document is still valid
    assert edit_invalid("empty-object", []) is False
    assert edit_invalid("drop:state", ["node", "state"]) is True
    assert edit_invalid("drop:duration", ["node", "state"]) is False
    assert edit_invalid("empty-object", ["state"]) is True
    assert edit_invalid("scalar-for:done", []) is True  # a list replaced by 0 breaks its type
    assert edit_invalid("not-an-object", []) is True
    assert edit_invalid("plus-one:steps", ["steps"]) is False
    assert edit_invalid("drop:steps", None) is True  # no model declared: taken as invalid (and said so)
    with pytest.raises(ValueError):
        edit_invalid("rename:x", [])


def test_required_fields_are_read_from_the_model() -> None:
    from pydantic import BaseModel, Field

    class Model(BaseModel):
        a: int
        b: int = 0
        c: list[str] = Field(default_factory=list)
        d: str = Field(alias="D")

    @dataclasses.dataclass
    class Plain:
        x: int
        y: int = 1
        z: list[int] = dataclasses.field(default_factory=list)

    assert required_fields(Model) == ["D", "a"]
    assert required_fields(Plain) == ["x"]
    with pytest.raises(TypeError):
        required_fields(dict)


# --- what the mutation run of probes/kit/judge.py showed untested -------------------------


def test_a_violation_carries_its_witness_events() -> None:
    """CO, LV and EO verdicts keep the events that decided them (the witness) in their evidence."""
    fired_twice = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.EFFECT, "run/answer", "e2"),
                    (Kind.EFFECT, "run/again", "e2"), (Kind.COMPLETE, "run/again", None, RESULT))
    co = judge().gated_once("retry:same-pause×2", fired_twice, "twice")
    assert co.label is Label.UNDOC and [w["kind"] for w in co.evidence["witness"]] == ["effect", "effect"]
    stopped = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.CRASH, "harness"))
    lv = judge().live("crash:kill@s2.begin/latest", stopped, "killed", RESULT)
    assert lv.label is Label.UNDOC and [w["kind"] for w in lv.evidence["witness"]] == ["crash"]
    eo = judge().effects_once("x", fired_twice, "twice")
    assert eo.evidence["witness"]


def test_a_prefix_summary_says_empty_and_nothing_in_words() -> None:
    h = H((Kind.STEP_BEGIN, "a", "s1"), (Kind.CRASH, "harness"), (Kind.RECOVER, "harness"),
          (Kind.STEP_BEGIN, "b", "s1"), (Kind.STEP_END, "b", "s1"))
    pc = judge().prefix("crash:kill@s1.begin/latest", h)
    assert pc.label is Label.PASS and pc.summary == "durable prefix empty at the crash; re-entered after recovery: nothing"
    again = H((Kind.STEP_END, "a", "s1"), (Kind.PERSIST, "a"), (Kind.CRASH, "harness"), (Kind.RECOVER, "harness"),
              (Kind.STEP_BEGIN, "b", "s1"))
    assert judge().prefix("p", again).summary == "durable prefix ['s1'] at the crash; re-entered after recovery: {'s1': 1}"


def test_a_detected_forgery_cites_nothing_and_an_undetected_one_its_forgery_statement() -> None:
    forged = {"CV forgery:tamper:*": CLAIM}
    refused = _tampered((Kind.REFUSE, "run/answer", None, "ValidationError"))
    [detected] = judge(forged).tampered("tamper:plus-one:x", refused, False, RESULT, "m")
    assert detected.label is Label.PASS and detected.doc is None
    accepted = _tampered((Kind.EFFECT, "run/answer", "e2"), (Kind.COMPLETE, "run/answer", None, RESULT))
    undetected, _ = judge(forged).tampered("tamper:plus-one:x", accepted, False, RESULT, "m")
    assert undetected.label is Label.FAIL and undetected.doc.quote == CLAIM.quote


def test_the_durable_prefix_reads_only_steps_and_writes_before_the_crash() -> None:
    """Events at or after the crash do not count; only STEP_END ends a step and only PERSIST makes
    the ended steps durable (other kinds, whatever their names, do neither)."""
    after = H((Kind.STEP_END, "a", "s1"), (Kind.PERSIST, "a"), (Kind.CRASH, "harness"),
              (Kind.STEP_END, "b", "s2"), (Kind.PERSIST, "b"))
    assert durable_prefix(after, after.of(Kind.CRASH)[0]) == ["s1"]
    crash_first = H((Kind.CRASH, "harness"), (Kind.STEP_END, "b", "s1"), (Kind.PERSIST, "b"))
    assert durable_prefix(crash_first, crash_first.of(Kind.CRASH)[0]) == []
    # s2 ended with no write after it; the events that follow are of kinds that sort before and after
    # "persist" and "step_end" by name, and none of them is a durable write or a step's end
    h = H((Kind.STEP_END, "a", "s1"), (Kind.PERSIST, "a"), (Kind.STEP_BEGIN, "a", "s2"), (Kind.STEP_END, "a", "s2"),
          (Kind.PAUSE, "a", "s2"), (Kind.TAMPER, "harness", "x"), (Kind.STEP_BEGIN, "a", "s3"), (Kind.CRASH, "harness"))
    assert durable_prefix(h, h.of(Kind.CRASH)[0]) == ["s1"]
    tampered = H((Kind.STEP_END, "a", "s1"), (Kind.TAMPER, "harness", "x"), (Kind.PERSIST, "a"), (Kind.CRASH, "harness"))
    assert durable_prefix(tampered, tampered.of(Kind.CRASH)[0]) == ["s1"]


# --- replay: the same verdicts again from what a receipt stores ---------------------------------


def test_replaying_the_recorded_calls_over_stored_histories_gives_the_same_verdicts() -> None:
    """Every deciding call is written down (arguments, no history) and ``replay`` makes it again
    over the histories a receipt keeps, each argument mattering: ``what``, ``expected``, ``witness``,
    ``result``, ``invalid``, ``model`` and ``cite_as``."""
    import json

    from probes.core.receipt import recorded_histories
    from probes.kit.judge import replay

    citations = {"EO crash:*": CLAIM, "LV tamper:*": CLAIM, "CV forgery:*": CLAIM,
                 "PC save-kill:s1": DocRef("p", "q", "deviation", "X-2", "1.0")}
    j = judge(citations)
    done = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.COMPLETE, "run/answer", None, RESULT))
    crashed = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.EFFECT, "run/answer", "e2"),
                (Kind.EFFECT, "run/answer", "e2"), (Kind.CRASH, "harness"), (Kind.RECOVER, "harness"),
                (Kind.STEP_BEGIN, "run/recover", "s1"), (Kind.COMPLETE, "run/recover", None, "other"))
    accepted = _tampered((Kind.EFFECT, "run/answer", "e2"), (Kind.COMPLETE, "run/answer", None, "forged"))
    exhaustive = Judge("fw", "file", citations, calls=j.calls, cite_as=("exhaustive:kill@s1#3/latest", "save-kill:s1"))
    made = [j.not_applicable(Property.CV, "tamper:none", "no document"),
            j.effects_once("baseline:no", done, "declined", ("e1",)),
            j.effects_once("crash:kill@s2/latest", crashed, "killed in s2"),
            j.gated_once("answers:x2", crashed, "answered twice", witness=False),
            j.prefix("crash:kill@s2/latest", crashed),
            j.live("crash:kill@s2/latest", crashed, "killed in s2", RESULT),
            j.live("baseline:no", done, "declined"),
            j.fork(done, "s2 served 'no'"),
            *j.tampered("tamper:plus-one:x", accepted, False, RESULT, "model A"),
            *j.tampered("tamper:drop:x", accepted, True, RESULT, "model B"),
            exhaustive.prefix("exhaustive:kill@s1#3/latest", crashed),
            exhaustive.effects_once("exhaustive:kill@s1#3/latest", crashed, "point 3")]
    assert len(j.calls) == 12  # tampered's own LV is part of its call, not a call of its own
    assert j.unrecorded().live("x", done, "quiet") and len(j.calls) == 12
    assert {v.label for v in made} >= {Label.NA, Label.PASS, Label.FAIL, Label.DOC, Label.UNDOC}

    stored_calls = json.loads(json.dumps(j.calls))
    stored_histories = json.loads(json.dumps(recorded_histories(made)))
    again = replay(stored_calls, stored_histories, "fw", "file", citations)
    as_stored = [json.dumps(v.to_json(), sort_keys=True) for v in made]
    assert [json.dumps(json.loads(json.dumps(v.to_json())), sort_keys=True) for v in again] == \
        [json.dumps(json.loads(s), sort_keys=True) for s in as_stored]
    # each recorded argument decides something: change one and the verdicts differ
    for i, key, value in [(1, "expected", ["e1", "e2"]), (2, "what", "elsewhere"), (3, "witness", True),
                          (5, "result", "s2 served 'no'"), (8, "invalid", True), (8, "model", "model C"),
                          (10, "cite_as", ["exhaustive:kill@s1#3/latest", "crash:kill@s1"])]:
        bent = json.loads(json.dumps(stored_calls))
        bent[i][key] = value
        assert replay(bent, stored_histories, "fw", "file", citations) != again, (i, key)


def test_a_frameworks_own_fork_is_decided_and_replayed_on_its_own_path() -> None:
    """``Judge.fork`` with a path of a framework's own protocol (DBOS's ``fork_workflow``): the verdict
    is on that path and cited by it, the log names the path and ``replay`` decides it there again;
    the kit's own fork logs no path, so the calls of receipts measured before read as they did."""
    import json

    from probes.core.receipt import recorded_histories
    from probes.kit.judge import FORK_PATH, replay

    citations = {"FD *": CLAIM, "FD fork:same-pause": dataclasses.replace(CLAIM, stance="deviation")}
    j = judge(citations)
    forked = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.COMPLETE, "run/answer", None, RESULT),
               (Kind.FORK, "harness", None, "no"), (Kind.COMPLETE, "run/fork", None, "s2 served 'no'"))
    ignored = H(*START, (Kind.ANSWER, "harness", None, "yes"), (Kind.COMPLETE, "run/answer", None, RESULT),
                (Kind.FORK, "harness", None, "no"), (Kind.COMPLETE, "run/fork", None, RESULT))
    made = [j.fork(forked, "s2 served 'no'", path="fork:fork_workflow"), j.fork(ignored, "s2 served 'no'")]
    assert [(v.path, v.label) for v in made] == [("fork:fork_workflow", Label.PASS), (FORK_PATH, Label.DOC)]
    assert j.calls == [{"call": "fork", "expected": "s2 served 'no'", "path": "fork:fork_workflow"},
                       {"call": "fork", "expected": "s2 served 'no'"}]
    again = replay(json.loads(json.dumps(j.calls)), json.loads(json.dumps(recorded_histories(made))), "fw", "file",
                   citations)
    assert [json.dumps(v.to_json(), sort_keys=True) for v in again] == \
        [json.dumps(json.loads(json.dumps(v.to_json())), sort_keys=True) for v in made]
