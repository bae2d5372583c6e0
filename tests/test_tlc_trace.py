"""Trace validation with the real TLC: hand-built histories of known behaviours.

Each history encodes a behaviour whose explanation is known (a fork served the first
answer -> ForkIgnore; the restored flow starts over -> Replay; ...). The test fails if
TLC accepts a history under the wrong setting, stops accepting a reference behaviour,
or explains the unexplainable one.
"""

from __future__ import annotations

from typing import Any

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
    # the reference, each switch, pairs of faults, each fault + NonAtomicStep, NonAtomicStep + ConcurrentResume
    assert len(names) == 1 + 9 + 15 + 6 + 1
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


def _kit_history(*tail: tuple) -> "History":
    """A kit-shaped history: s1 fires e1, s2 pauses, then ``tail`` (kind, incarnation, fields)."""
    from probes.core.history import Event, History, Kind

    events = [Event(Kind.START, "harness"), Event(Kind.STEP_BEGIN, "run/start", step="s1"),
              Event(Kind.EFFECT, "run/start", step="s1", effect="e1"), Event(Kind.STEP_END, "run/start", step="s1"),
              Event(Kind.PERSIST, "run/start", detail={"what": "save"}), Event(Kind.STEP_BEGIN, "run/start", step="s2"),
              Event(Kind.PAUSE, "run/start", step="s2")]
    events += [Event(Kind(kind), inc, **fields) for kind, inc, fields in tail]
    return History(tuple(events))


ANSWERED = (("answer", "harness", {"value": "yes"}), ("consume", "run/answer", {"step": "s2", "value": "yes"}),
            ("effect", "run/answer", {"step": "s2", "effect": "e2"}), ("step_end", "run/answer", {"step": "s2"}),
            ("persist", "run/answer", {"detail": {"what": "save"}}), ("complete", "run/answer", {"value": "f(yes)"}))


def test_a_second_answer_after_completion_is_a_stray_whose_consume_is_its_own() -> None:
    """The kit's N-answer protocol: the stray's consume and effect belong to the stray, so a
    re-fired gate is DoubleConsume (before the fix, its effect became a separate task run)."""
    again = tuple((k, inc.replace("run/answer", "run/answer-2"), f) for k, inc, f in ANSWERED)
    trace = T.observations(_kit_history(*ANSWERED, *again), "twice")
    assert [o.kind for o in trace.observations] == ["exec", "interrupt", "consume", "stray"]
    assert trace.observations[-1].effects == (1, 2)
    assert T.explain([trace])["twice"].explained_by == ["DoubleConsume"]


def test_a_fork_note_and_its_delivery_are_one_fork() -> None:
    """The kit's fork protocol notes FORK, then delivers the answer: one fork observation, whose
    branch consumed its own value -- a behaviour of the reference (not a stray)."""
    fork = (("fork", "harness", {"value": "no"}), ("answer", "harness", {"value": "no"}),
            ("consume", "run/fork", {"step": "s2", "value": "no"}), ("effect", "run/fork", {"step": "s2", "effect": "e2"}),
            ("complete", "run/fork", {"value": "f(no)"}))
    trace = T.observations(_kit_history(*ANSWERED, *fork), "fork")
    assert [o.kind for o in trace.observations][-1] == "fork" and trace.observations[-1].out == 2  # "no"
    assert T.explain([trace])["fork"].explained_by == ["reference"]


def _recorded(history: Any, family: str = "crash", labels: dict | None = None) -> T.Recorded:
    return T.Recorded("fw/p", "fw", "fw", family, history, labels=labels or {})


def test_why_no_setting_admits_a_history_is_read_off_the_history() -> None:
    killed_after_effect = _kit_history(("answer", "harness", {"value": "yes"}),
                                       ("consume", "run/answer", {"step": "s2", "value": "yes"}),
                                       ("effect", "run/answer", {"step": "s2", "effect": "e2"}),
                                       ("crash", "harness", {"detail": {"victim": "run/answer", "at": "s2.effect"}}))
    assert "after the victim's last durable save" in _recorded(killed_after_effect).gap
    absorbed = _kit_history(("crash", "harness", {"detail": {"victim": "run/start", "at": "s1.effect",
                                                             "framework_status": "paused"}}))
    assert "absorbed the injected exception at s1.effect" in _recorded(absorbed).gap
    assert "ConcurrentResume" in _recorded(_kit_history(("answer", "harness", {"detail": {"racers": 2}})), "race").gap
    from probes.core.history import Event, History, Kind
    no_pause = History((Event(Kind.RESUME, "p", value=True), Event(Kind.EFFECT, "p", step="gate", effect="gate")))
    assert "no pause" in _recorded(no_pause, "lg").gap
    tampered = _kit_history(("tamper", "harness", {"detail": {"edit": "drop:x"}}))
    assert _recorded(tampered).outside_model and not _recorded(killed_after_effect).outside_model


def test_a_step_redone_after_a_save_that_did_not_record_it_and_a_restarted_run_are_named() -> None:
    """Two shapes seen in the kit's histories (OpenAI Agents and ADK save-kills; AutoGen and
    LlamaIndex strays). ResumePlane admits neither under any of its settings, and the gap says which;
    the extension with a split step (ResumePlaneSteps) admits the first -- the save after the effect
    (a session append) was not the step's record, which the crash lost -- and still not the second."""
    redone = _kit_history(*ANSWERED[:4], ("persist", "run/answer", {"detail": {"what": "session.append"}}),
                          ("crash", "harness", {"detail": {"victim": "run/answer", "at": "save.enter#2"}}),
                          ("recover", "harness", {}), *((k, "run/recover", f) for k, _, f in ANSWERED[1:]))
    restarted = _kit_history(*ANSWERED, ("answer", "harness", {"value": "no", "detail": {"addressed": False}}),
                             ("step_begin", "run/stray", {"step": "s1"}),
                             ("effect", "run/stray", {"step": "s1", "effect": "e1"}),
                             ("step_end", "run/stray", {"step": "s1"}), ("pause", "run/stray", {"step": "s2"}))
    traces = [T.observations(redone, "redone"), T.observations(restarted, "restarted")]
    explained = {name: v.explained_by for name, v in T.explain(traces).items()}
    assert explained == {"redone": ["NonAtomicStep"], "restarted": []}
    plane_only = [s for s in T.DEFAULT_SETTINGS if T.STEP_SWITCH not in s]
    assert all(not v.explained_by for v in T.explain(traces, plane_only).values())
    assert _recorded(redone).gap.startswith("the recovery fired e2 again although the victim had saved after "
                                            "firing it (session.append)")
    assert _recorded(restarted, "stray").gap.startswith("a stray answer after the run completed started the "
                                                        "workflow again (e1 fired again)")


def test_conformant_means_every_measured_verdict_passes() -> None:
    h = _kit_history()
    assert _recorded(h, labels={"EO": "✓", "FI": "n/a"}).conformant
    assert not _recorded(h, labels={"EO": "✓", "PC": "U"}).conformant
    assert not _recorded(h, labels={"FI": "n/a"}).conformant and not _recorded(h).conformant


def test_tables_count_what_admits_each_history() -> None:
    rows = [{"name": "fw/a", "campaign": "fw", "framework": "fw", "family": "crash", "conformant": True,
             "verdicts": {"EO": "✓"}, "explained_by": ["reference"]},
            {"name": "fw/b", "campaign": "fw", "framework": "fw", "family": "crash", "conformant": True,
             "verdicts": {"EO": "✓"}, "explained_by": [], "gap": "why b"},
            {"name": "fw/c", "campaign": "fw", "framework": "fw", "family": "crash", "conformant": False,
             "verdicts": {"EO": "U"}, "explained_by": ["Replay", "PrefixReplay"]},
            {"name": "fw/d", "campaign": "fw", "framework": "fw", "family": "tamper", "conformant": True,
             "verdicts": {"CV": "✓"}, "outside_model": "edited"}]
    crash, tamper = T.family_table(rows)
    assert (crash["histories"], crash["reference"], crash["by a fault"], crash["unexplained"]) == (3, 1, 1, 1)
    assert crash["faults that explain"] == "PrefixReplay, Replay"
    assert (crash["all verdicts ✓"], crash["of them reference"]) == (2, 1)
    assert (tamper["outside the model"], tamper["reference"]) == (1, 0)
    assert [f["history"] for f in T.conformant_findings(rows)] == ["fw/b"]
    assert T.unexplained_table(rows) == [{"class": T.UNCLASSIFIED, "campaign": "fw", "histories": 1,
                                          "why no setting admits them": "why b", "e.g.": "b"}]
    classed = rows + [{**rows[1], "name": "fw/e", "gap_class": T.RAN_AGAIN, "gap": "why e"}]
    assert [r["class"] for r in T.unexplained_table(classed)] == [T.RAN_AGAIN, T.UNCLASSIFIED]  # GAP_CLASSES' order
    assert T.gap_class_counts(classed) == {T.RAN_AGAIN: 1, T.UNCLASSIFIED: 1}
    hand_built = classed + [{**rows[1], "name": "known/skips", "campaign": T.KNOWN, "gap": ""}]  # its own table
    assert T.unexplained_table(hand_built) == T.unexplained_table(classed)
    assert T.gap_class_counts(hand_built) == T.gap_class_counts(classed)


def test_a_trace_repeated_under_other_names_is_checked_once_and_each_copy_gets_its_verdict(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorded histories repeat a few dozen behaviours hundreds of times; TLC's work must
    follow the distinct behaviours, and every copy must still get the verdict of its question."""
    sent: list[list[str]] = []
    real_check = T.check

    def counting_check(traces: Any, *args: Any, **kw: Any) -> Any:
        sent.append([t.name for t in traces])
        return real_check(traces, *args, **kw)

    monkeypatch.setattr(T, "check", counting_check)
    traces = [T.observations(HISTORIES[source], name=f"{source}/{i}", steps=STEPS, gate=GATE)
              for source in ("clean", "fork_sees_first") for i in range(3)]
    verdicts = T.explain(traces)
    assert sorted(len(group) for group in sent) == [2]  # one TLC run, two distinct traces
    for i in range(3):
        assert verdicts[f"clean/{i}"].explained_by == EXPECTED["clean"]
        assert verdicts[f"fork_sees_first/{i}"].explained_by == EXPECTED["fork_sees_first"]


def test_a_stalled_worker_beside_its_takeover_is_outside_the_model() -> None:
    from probes.core.history import Event, History, Kind

    def recorded(detail: dict) -> T.Recorded:
        events = (Event(Kind.START, "harness"), Event(Kind.RECOVER, "harness", detail=detail))
        return T.Recorded("fw/stall", "fw", "fw", "stall", History(events))

    assert "concurrent resumes" in recorded({"mode": "latest", "stopped": "run/answer", "at": "s2.effect"}).outside_model
    assert recorded({"mode": "latest"}).outside_model is None  # an ordinary recovery after a crash


def test_the_extension_with_its_switches_off_is_resume_plane() -> None:
    """ResumePlaneSteps leaves ResumePlane untouched: with NonAtomicStep and ConcurrentResume
    FALSE, SSpec reaches exactly ResumePlane's states and every invariant holds; with racers on,
    CO and EO break (a racer consumes the answered interrupt again)."""
    from probes.tla import configs
    from probes.tla.runner import run_tlc

    bounds = configs.REFERENCE_BOUNDS
    plane = run_tlc(configs.reference(bounds))

    def steps(**switches: bool) -> configs.TlcConfig:
        consts = configs.plane_constants(bounds) + tuple(
            (name, switches.get(name, False)) for name in (T.STEP_SWITCH, T.RACE_SWITCH)) + (("MaxRacers", 1),)
        return configs.TlcConfig("steps", "ResumePlaneSteps", consts, ("TypeOK",) + configs.CONTRACT_INVARIANTS,
                                 specification="SSpec")

    off = run_tlc(steps())
    assert plane.result == off.result == "holds", (plane.error, off.error)
    assert (off.distinct, off.generated) == (plane.distinct, plane.generated)
    raced = run_tlc(steps(ConcurrentResume=True))
    assert (raced.result, raced.violated) in (("violated", "EO"), ("violated", "CO"))


def test_an_absorbed_exception_is_also_a_crash_where_it_was_raised() -> None:
    """The framework caught the injected exception after the gated effect and ran the step again in
    the same process; the harness noted it when the operation returned. A copy of the note at
    s2.effect makes the re-run a recovery: admitted by a split step, not left unexplained."""
    from probes.core.history import Event, Kind

    history = _kit_history(("answer", "harness", {"value": "yes"}),
                           ("consume", "run/answer", {"step": "s2", "value": "yes"}),
                           ("effect", "run/answer", {"step": "s2", "effect": "e2"}),
                           ("step_begin", "run/answer", {"step": "s2"}),
                           ("consume", "run/answer", {"step": "s2", "value": "yes"}),
                           ("effect", "run/answer", {"step": "s2", "effect": "e2"}),
                           ("step_end", "run/answer", {"step": "s2"}),
                           ("complete", "run/answer", {"value": "f(yes)"}),
                           ("crash", "harness", {"detail": {"victim": "run/answer", "at": "s2.effect#1",
                                                            "framework_status": "completed"}}))
    placed = T.placed_where_raised(list(history))
    kinds = [e.kind for e in placed]
    assert len(placed) == len(history) + 1 and kinds[-1] is Kind.CRASH
    assert kinds[kinds.index(Kind.EFFECT, 3) + 1] is Kind.CRASH  # right after s2's first effect
    trace = T.observations(history, "absorbed")
    assert [o.kind for o in trace.observations][:4] == ["exec", "interrupt", "consume", "crash"]
    assert T.explain([trace])["absorbed"].explained_by == ["NonAtomicStep"]
    # a note whose point the victim never reached adds nothing
    unplaced = [Event(Kind.CRASH, "harness", detail={"victim": "x", "at": "s9.effect", "framework_status": "paused"})]
    assert T.placed_where_raised(unplaced) == unplaced


def test_racers_explain_only_a_history_with_answers_delivered_together() -> None:
    """The same effects -- e2 twice after one pause -- are a race when the history shows two
    processes answering at once, and no race when one process answered and a crash followed."""
    raced = T.observations(_kit_history(("answer", "harness", {"value": "yes", "detail": {"racers": 2}}),
                                        ("consume", "run/racer-0", {"step": "s2", "value": "yes"}),
                                        ("effect", "run/racer-0", {"step": "s2", "effect": "e2"}),
                                        ("consume", "run/racer-1", {"step": "s2", "value": "yes"}),
                                        ("effect", "run/racer-1", {"step": "s2", "effect": "e2"})), "raced")
    assert raced.racers == 1
    twice = T.observations(_kit_history(("answer", "harness", {"value": "yes"}),
                                        ("consume", "run/answer", {"step": "s2", "value": "yes"}),
                                        ("effect", "run/answer", {"step": "s2", "effect": "e2"}),
                                        ("effect", "run/answer", {"step": "s2", "effect": "e2"})), "twice")
    assert twice.racers == 0
    verdicts = T.explain([raced, twice], settings=((), (T.RACE_SWITCH,)))
    assert verdicts["raced"].explained_by == ["ConcurrentResume"]
    assert verdicts["twice"].explained_by == []


def test_an_rd_history_is_validated_once_per_recovered_copy() -> None:
    """``rd`` recovers two byte-identical copies of the crashed store, one after the other, into one history:
    joined, it reads as one run answered twice (no setting admits it); split, each copy's recovery is one
    crash-recovery of the run, which the reference semantics admits."""
    from probes.core.checker import Property, Verdict
    from probes.core.history import Event, History, Kind
    from probes.core.receipt import Receipt

    def recovered(copy: str) -> list[Event]:
        inc = f"{copy}/recover"
        return [Event(Kind.RECOVER, "harness", detail={"copy": copy, "mode": "m", "of": "run"}),
                Event(Kind.STEP_BEGIN, inc, step="s2"), Event(Kind.PAUSE, inc, step="s2"),
                Event(Kind.ANSWER, "harness", value="yes"),
                Event(Kind.CONSUME, f"{inc}-answer", step="s2", value="yes"),
                Event(Kind.EFFECT, f"{inc}-answer", step="s2", effect="e2"),
                Event(Kind.COMPLETE, f"{inc}-answer", value="f(yes)")]

    crashed = [Event(Kind.START, "harness"), Event(Kind.STEP_BEGIN, "run/start", step="s1"),
               Event(Kind.EFFECT, "run/start", step="s1", effect="e1"), Event(Kind.STEP_END, "run/start", step="s1"),
               Event(Kind.PERSIST, "run/start", detail={"what": "save"}), Event(Kind.STEP_BEGIN, "run/start", step="s2"),
               Event(Kind.CRASH, "harness", detail={"at": "s2.begin", "how": "SIGKILL", "victim": "run/start"})]
    joined = History(tuple(crashed + recovered("copy-1") + recovered("copy-2"))).to_json()
    path = "rd:kill@s2.begin/m/copies=2"
    verdict = Verdict.from_json({"framework": "fw", "backend": "file", "property": Property.RD.value, "path": path,
                                 "label": "✓", "evidence": {}, "summary": "s"})
    receipt = Receipt("fw", "rd.s2.begin.m.file.rep1", {}, {}, {"workflow": {"steps": ["s1", "s2"], "gate": "s2"}},
                      [verdict], {}, [], histories={path: joined})
    recorded, _ = T.recorded_histories("fw", [receipt])
    assert [r.name for r in recorded] == [f"fw/rd.s2.begin.m.file.rep1/{path}/copy-{i}" for i in (1, 2)]
    assert all(len(r.history.of(Kind.RECOVER)) == 1 for r in recorded)
    assert all(r.labels == {"RD": "✓"} for r in recorded)
    whole = T.observations(T.with_steps(History.from_json(joined)), "joined", ("s1", "s2"), "s2")
    split = [T.observations(r.history, r.name, r.steps, r.gate) for r in recorded]
    verdicts = T.explain([whole, *split])
    assert not verdicts["joined"].reference
    assert all(verdicts[r.name].explained_by == ["reference"] for r in recorded)


def test_answers_consumed_at_two_steps_are_outside_the_model() -> None:
    """LangGraph's fan-out (two branches paused, one resume map answering both) and its sequential
    interrupts (one pause, then another) consume answers at two steps; ResumePlane has one gated task
    per run, so no setting can admit them. Read off the history: a step answered twice is one pause."""
    fanned = _kit_history(("answer", "harness", {"value": "yes"}),
                          ("consume", "run/answer", {"step": "s2", "value": "yes"}),
                          ("consume", "run/answer", {"step": "b1", "value": "yes"}))
    assert _recorded(fanned).outside_model.startswith("parallel branches (s2, b1) paused at once")
    one_then_other = _kit_history(("answer", "harness", {"value": "yes"}),
                                  ("consume", "run/answer-1", {"step": "s2", "value": "yes"}),
                                  ("pause", "run/answer-1", {"step": "s3"}), ("answer", "harness", {"value": "no"}),
                                  ("consume", "run/answer-2", {"step": "s3", "value": "no"}))
    assert "paused at 2 steps one after the other (s2, then s3)" in _recorded(one_then_other).outside_model
    again = tuple((k, inc.replace("run/answer", "run/answer-2"), f) for k, inc, f in ANSWERED)
    assert _recorded(_kit_history(*ANSWERED, *again)).outside_model is None  # one step answered twice


def test_work_run_again_without_a_crash_is_named_and_no_setting_admits_it() -> None:
    """What the LlamaIndex, LangGraph-functional, AutoGen and CrewAI histories show and ResumePlane
    lacks: an answer that re-runs the steps before the pause; a completed run restored (no harness
    event), recovered or answered into running again, or pausing again; a pause before an earlier
    step ran. TLC confirms no setting admits the first (the gap's claim), and the gap names each."""
    rerun = ("step_begin", "run/answer", {"step": "s1"}), ("effect", "run/answer", {"step": "s1", "effect": "e1"})
    prefix_again = _kit_history(ANSWERED[0], *rerun, *ANSWERED[1:])
    assert T.explain([T.observations(prefix_again, "prefix")])["prefix"].explained_by == []
    assert _recorded(prefix_again).why_unadmitted[0] == T.PREFIX_RERUN
    assert _recorded(prefix_again).gap.startswith("the answer re-ran work done before the pause (e1 fired again, "
                                                  "no crash between)")
    restored = _kit_history(*ANSWERED, ("effect", "run/restore", {"step": "s1", "effect": "e1"}))
    assert _recorded(restored).gap.startswith("a restore of its saved state after the run completed started the "
                                              "workflow again (e1 fired again)")
    recovered = _kit_history(*ANSWERED, ("recover", "harness", {}),
                             ("effect", "run/recover", {"step": "s1", "effect": "e1"}),
                             ("effect", "run/recover", {"step": "s2", "effect": "e2"}))
    assert _recorded(recovered).gap.startswith("a recovery after the run completed started the workflow again "
                                               "(e1, e2 fired again)")
    repaused = _kit_history(*ANSWERED, ("answer", "harness", {"value": "no", "detail": {"addressed": False}}),
                            ("pause", "run/stray", {"step": "s2"}))
    assert _recorded(repaused).gap.startswith("a stray answer after the run completed opened a pause again (at s2)")
    crashed_between = _kit_history(ANSWERED[0], ("crash", "harness", {"detail": {"victim": "run/answer"}}),
                                   ("recover", "harness", {}), *rerun)
    assert not _recorded(crashed_between).gap.startswith("the answer re-ran")  # a crash re-enters: not this class
    from probes.core.history import Event, History, Kind
    early = History((Event(Kind.START, "harness"), Event(Kind.STEP_BEGIN, "run/start", step="b1"),
                     Event(Kind.PAUSE, "run/start", step="s2"), Event(Kind.ANSWER, "harness", value="yes"),
                     Event(Kind.REFUSE, "run/answer")))
    assert T.Recorded("fw/p", "fw", "fw", "fanout", early, ("b1", "s2"), "s2").gap.startswith(
        "the run paused at s2 before b1, ordered before it, had fired its effect")
