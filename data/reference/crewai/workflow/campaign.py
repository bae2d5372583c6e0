"""CrewAI 1.15.2 Flows: @persist restore, CheckpointConfig restore, the human-feedback pause.

Every protocol step runs in its own fresh interpreter (``run_child``) with a temporary
HOME and telemetry/tracing off, so crashes are real process deaths and recovery never
sees in-memory state. The parent only reads the effect ledger and the children's
reports and hands them to the checker.
"""

from __future__ import annotations

from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.checker import (
    Property,
    Subject,
    completes,
    effects_once,
    fork_outcome,
    gate_once,
    prefix_not_reentered,
)
from probes.core.errors import HarnessError
from probes.core.nemesis import ChildOutcome, run_child
from probes.core.oracle import Ledger, cross_check
from probes.core.receipt import ProbeResult, Receipt

W = "probes.crewai.workload"
CHILD_TIMEOUT = 240.0

PERSIST = Subject("crewai", "sqlite")  # @persist with SQLiteFlowPersistence
CHECKPOINT = Subject("crewai", "json")  # CheckpointConfig with the default JsonProvider

PARAMS = (
    Param("seed", "int", 0, 0, "campaign seed (recorded; the protocols are deterministic)"),
    Param("reps", "int", 3, 1, "repetitions of each crash path (@persist exception and SIGKILL, CheckpointConfig "
          "exception)", minimum=1),
    Param("race_reps", "int", 3, 1, "repetitions of the concurrent human-feedback answer race", minimum=1),
    Param("racers", "int", 2, 2, "processes that load the same pause and answer it concurrently", minimum=2),
)


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    if params["reps"] < 1 or params["race_reps"] < 1 or params["racers"] < 2:
        from probes.core.errors import UsageError

        raise UsageError("crewai needs reps >= 1, race_reps >= 1 and racers >= 2; fix the --param values")
    specs = []
    for rep in range(params["reps"]):
        specs.append(ProbeSpec(f"persist.exception.rep{rep}", {"crash": "exception", "rep": rep}))
        specs.append(ProbeSpec(f"persist.sigkill.rep{rep}", {"crash": "sigkill", "rep": rep}))
        specs.append(ProbeSpec(f"checkpoint.exception.rep{rep}", {"crash": "exception", "rep": rep}))
    specs.append(ProbeSpec("persist.completed", {}))
    specs.append(ProbeSpec("feedback.once", {"answers": 1}))
    specs.append(ProbeSpec("feedback.twice", {"answers": 2}))
    for rep in range(params["race_reps"]):
        specs.append(ProbeSpec(f"feedback.concurrent.rep{rep}", {"racers": params["racers"], "rep": rep}))
    return specs


def _env(ctx: ProbeContext) -> dict[str, str]:
    from probes.crewai.workload import HERMETIC_ENV

    home = ctx.workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    return dict(HERMETIC_ENV, HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"))


def _child(ctx: ProbeContext, func: str, args: dict[str, Any], park_at: str | None = None) -> ChildOutcome:
    return run_child(f"{W}:{func}", args, park_at=park_at, timeout=CHILD_TIMEOUT, env=_env(ctx))


def _checked(out: ChildOutcome, ledger: Ledger, incarnation: str) -> dict[str, Any]:
    """A child that had to finish: its report, after the two oracles agree."""
    result = out.require_ok()
    cross_check(result["oracle"], ledger, incarnation)
    return {k: v for k, v in result.items() if k not in ("oracle", "flow_id")}


def _paths(ctx: ProbeContext) -> dict[str, str]:
    return {
        "ledger": str(ctx.workdir / "ledger.sqlite"),
        "marker_dir": str(ctx.workdir / "markers"),
    }


# --- @persist -------------------------------------------------------------------------


def _persist_crash(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    res = ProbeResult()
    p = _paths(ctx)
    db = str(ctx.workdir / "flows.db")
    ledger = Ledger(p["ledger"])
    crash = spec.args["crash"]
    try:
        if crash == "exception":
            first = _child(ctx, "persist_first_run", dict(p, persist_db=db, fail_s2=True))
            flow_id = first.require_ok()["flow_id"]
            res.observations["first"] = _checked(first, ledger, "first")
        else:
            first = _child(ctx, "persist_first_run", dict(p, persist_db=db, fail_s2=False), park_at="crewai.s2")
            first.require_killed()
            res.observations["first"] = {"killed_at": first.parked_at}
            from probes.crewai.workload import persist_find_flow_id  # sqlite3 only, no CrewAI import

            flow_id = persist_find_flow_id(db)
            if flow_id is None:
                raise HarnessError("the killed run left no @persist state to restore")
        res.observations["ledger_after_crash"] = ledger.counts()
        restore = _child(ctx, "persist_restore", dict(p, persist_db=db, flow_id=flow_id, incarnation="restore"))
        res.observations["restore"] = _checked(restore, ledger, "restore")
    except HarnessError as exc:
        res.harness_errors.append(str(exc))
        return res
    counts = ledger.counts()
    res.observations["ledger"] = counts
    rest = res.observations["restore"]
    before = rest["counter_before"]
    path = f"@persist restore after {'s2 raised once' if crash == 'exception' else 'SIGKILL inside s2'}"
    # s1 is in the durable prefix iff the state persisted after s1 shows its +1.
    durable = ["s1"] if before is not None and before >= 1 else []
    holds, ev = prefix_not_reentered(ledger.counts("restore"), durable)
    res.verdicts.append(PERSIST.verdict(
        Property.PC, path, holds, ev,
        "restore by id re-entered the durable prefix: s1 ran again" if not holds else "s1 not re-run",
    ))
    holds, ev = effects_once(counts, ["s1", "s2"], completed=rest["counter"] is not None)
    expected = None if before is None else before + 10
    ev = dict(ev, counter=rest["counter"], exactly_once_predicts=expected, persisted_before_restore=before)
    res.verdicts.append(PERSIST.verdict(
        Property.EO, path, holds and rest["counter"] == expected, ev,
        f"counter {rest['counter']} where exactly-once predicts {expected}; s1 effect fired {counts.get('s1', 0)} times",
    ))
    res.verdicts.append(PERSIST.verdict(
        Property.LV, path, *completes(rest["counter"] is not None, "restore by id ran the flow to completion"),
        "the restored flow completed",
    ))
    return res


def _persist_completed(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    res = ProbeResult()
    p = _paths(ctx)
    db = str(ctx.workdir / "flows.db")
    ledger = Ledger(p["ledger"])
    try:
        first = _child(ctx, "persist_first_run", dict(p, persist_db=db, fail_s2=False))
        flow_id = first.require_ok()["flow_id"]
        res.observations["first"] = _checked(first, ledger, "first")
        restore = _child(ctx, "persist_restore", dict(p, persist_db=db, flow_id=flow_id, incarnation="restore"))
        res.observations["restore"] = _checked(restore, ledger, "restore")
    except HarnessError as exc:
        res.harness_errors.append(str(exc))
        return res
    counts = ledger.counts()
    res.observations["ledger"] = counts
    rest = res.observations["restore"]
    path = "@persist restore of a completed flow"
    holds, ev = prefix_not_reentered(ledger.counts("restore"), ["s1", "s2"])
    res.verdicts.append(PERSIST.verdict(
        Property.PC, path, holds, ev, "restoring a completed flow by id ran s1 and s2 again" if not holds else "nothing re-ran",
    ))
    holds, ev = effects_once(counts, ["s1", "s2"], completed=True)  # the first run completed; so did the restore
    ev = dict(ev, counter_before=rest["counter_before"], counter=rest["counter"])
    res.verdicts.append(PERSIST.verdict(
        Property.EO, path, holds, ev,
        f"counter {rest['counter_before']} -> {rest['counter']}; every effect fired again",
    ))
    return res


# --- CheckpointConfig -----------------------------------------------------------------


def _checkpoint(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    res = ProbeResult()
    p = _paths(ctx)
    location = str(ctx.workdir / "checkpoints")
    ledger = Ledger(p["ledger"])
    try:
        first = _child(ctx, "checkpoint_first_run", dict(p, location=location))
        res.observations["first"] = _checked(first, ledger, "first")
        restore = _child(ctx, "checkpoint_restore", dict(p, location=location))
        res.observations["restore"] = _checked(restore, ledger, "restore")
    except HarnessError as exc:
        res.harness_errors.append(str(exc))
        return res
    rest = res.observations["restore"]
    if rest.get("checkpoint") is None:
        res.harness_errors.append("CheckpointConfig(on_events=['*']) wrote no checkpoint file")
        return res
    counts = ledger.counts()
    res.observations["ledger"] = counts
    cp = rest["checkpoint"]
    path = "CheckpointConfig restore from the newest checkpoint after s2 raised once"
    durable = list(cp["completed_methods"])
    holds, ev = prefix_not_reentered(ledger.counts("restore"), durable)
    ev = dict(ev, checkpoint_counter=cp["counter"])
    res.verdicts.append(CHECKPOINT.verdict(
        Property.PC, path, holds, ev,
        "the checkpoint records s1 completed, yet the restored run executed s1 again" if not holds else "s1 not re-run"
    ))
    holds, ev = effects_once(counts, ["s1", "s2"], completed=rest["counter"] is not None)
    ev = dict(ev, counter=rest["counter"], checkpoint_counter=cp["counter"])
    res.verdicts.append(CHECKPOINT.verdict(
        Property.EO, path, holds, ev,
        f"counter {rest['counter']} but s1's effect fired {counts.get('s1', 0)} times: completed work re-ran, "
        "invisible in the state" if not holds else "each effect once"
    ))
    return res


# --- @human_feedback pause ---------------------------------------------------------------


def _feedback(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    res = ProbeResult()
    p = _paths(ctx)
    db = str(ctx.workdir / "flows.db")
    ledger = Ledger(p["ledger"])
    racers = int(spec.args.get("racers", 0))
    try:
        pause = _child(ctx, "feedback_pause", {"ledger": p["ledger"], "persist_db": db})
        flow_id = pause.require_ok()["flow_id"]
        res.observations["pause"] = _checked(pause, ledger, "park")
        if not res.observations["pause"]["paused"]:
            raise HarnessError(f"the flow did not pause at @human_feedback: {res.observations['pause']}")
        answers: list[dict[str, Any]] = []
        if racers:
            from probes.core.barrier import run_racers

            def launch(i: int, sock: str) -> ChildOutcome:
                return _child(ctx, "feedback_answer", {"ledger": p["ledger"], "persist_db": db, "flow_id": flow_id,
                                                       "answer": f"answer-{i}", "incarnation": f"racer-{i}",
                                                       "barrier": sock})

            outs = run_racers(racers, launch, timeout=CHILD_TIMEOUT)
            answers = [_checked(o, ledger, f"racer-{i}") for i, o in enumerate(outs)]
        else:
            for i in range(spec.args["answers"]):
                out = _child(ctx, "feedback_answer", {"ledger": p["ledger"], "persist_db": db, "flow_id": flow_id,
                                                      "answer": f"answer-{i}", "incarnation": f"answer-{i}"})
                answers.append(_checked(out, ledger, f"answer-{i}"))
        res.observations["answers"] = answers
    except HarnessError as exc:
        res.harness_errors.append(str(exc))
        return res
    counts = ledger.counts()
    res.observations["ledger"] = counts
    res.observations["gate_answers"] = [d for e, _, d in ledger.rows() if e == "gate"]
    gate = {"gate": counts.get("gate", 0)}
    if racers:
        path = f"human-feedback pause loaded by {racers} processes, answered concurrently"
        summary_tail = "each racer's answer fired the gated effect" if gate["gate"] > 1 else "one answer won"
    elif spec.args["answers"] == 2:
        path = "human-feedback pause answered twice in sequence"
        summary_tail = "the second answer was refused" if not answers[1].get("resumed") else "the second answer was served"
    else:
        path = "human-feedback pause answered once"
        summary_tail = "answered once"
    holds, ev = gate_once(gate["gate"])  # at most once; a lost answer is LV's (below)
    resumed = [bool(a.get("resumed")) for a in answers]
    ev = dict(ev, resumed=resumed, refused=[a.get("refused") for a in answers])
    res.verdicts.append(PERSIST.verdict(
        Property.CO, path, holds, ev, f"gated effect fired {gate['gate']} time(s); {summary_tail}",
    ))
    if racers or spec.args["answers"] == 2:  # answered once: LV is decided on the EO/PC path below
        lv_ok, lv_ev = completes(any(resumed), f"answers resumed the flow: {resumed}", lost=gate["gate"] == 0)
        res.verdicts.append(PERSIST.verdict(
            Property.LV, path, lv_ok, lv_ev, lv_ev["why"] or "an answer resumed the flow to completion",
        ))
    if not racers and spec.args["answers"] == 2:
        fd_path = "human-feedback pause: second answer with another value after the first was applied"
        if answers[1].get("resumed"):
            by_answer = {inc: [d for e, i, d in ledger.rows() if e == "gate" and i == inc]
                         for inc in ("answer-0", "answer-1")}
            served, ev = fork_outcome(by_answer["answer-1"][-1:] or None, ["answer-1"], by_answer["answer-0"][-1:])
            res.verdicts.append(PERSIST.verdict(
                Property.FD, fd_path, served, {**ev, "gate_answers": res.observations["gate_answers"]},
                "the second answer was served its own outcome" if served else "the second answer got the first outcome",
            ))
        else:
            res.verdicts.append(PERSIST.not_applicable(
                Property.FI, fd_path,
                "Flow.from_pending(flow_id) + resume(feedback) carry the answer only: no FORK/RETRY discriminator, "
                "and the pause is deleted once answered, so a second answer has nothing to declare an intent for",
            ))
            res.verdicts.append(PERSIST.not_applicable(
                Property.FD, fd_path,
                "from_pending/resume address a pause by flow id only and the pause is deleted once answered; "
                "a second answer is refused (No pending feedback found), so there is no fork operation at the pause",
            ))
    if not racers and spec.args["answers"] == 1:
        holds, ev = effects_once(counts, ["s1", "review", "gate"], completed=bool(answers[0].get("resumed")))
        res.verdicts.append(PERSIST.verdict(
            Property.EO, "human-feedback pause (from_pending + resume in a fresh process)", holds, ev,
            "each effect exactly once across pause and answer" if holds else "an effect fired more than once",
        ))
        holds, ev = prefix_not_reentered(ledger.counts("answer-0"), ["s1", "review"])
        res.verdicts.append(PERSIST.verdict(
            Property.PC, "human-feedback pause (from_pending + resume in a fresh process)", holds, ev,
            "the answer did not re-run s1 or the reviewed method" if holds else "the answer re-ran the durable prefix",
        ))
        res.verdicts.append(PERSIST.verdict(
            Property.LV, "human-feedback pause (from_pending + resume in a fresh process)",
            *completes(bool(answers[0].get("resumed")), "from_pending + resume completed the flow",
                       lost=counts.get("gate", 0) == 0),
            "the paused flow completed after one answer" if answers[0].get("resumed") else "the pause could not be answered",
        ))
    return res


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    if spec.id.startswith("persist.completed"):
        return _persist_completed(spec, ctx)
    if spec.id.startswith("persist."):
        return _persist_crash(spec, ctx)
    if spec.id.startswith("checkpoint."):
        return _checkpoint(spec, ctx)
    return _feedback(spec, ctx)


# --- headlines (receipts only; no framework import) -----------------------------------


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    from probes.headline import Measured

    by = {r.probe: r for r in receipts}
    out: dict[str, Any] = {}
    exc = [r for r in receipts if r.probe.startswith("persist.exception.") and "restore" in r.observations]
    if exc:
        counters = sorted({r.observations["restore"]["counter"] for r in exc})
        predicted = sorted({r.observations["restore"]["counter_before"] + 10 for r in exc})
        value = {"counter": counters[0] if len(counters) == 1 else counters,
                 "expected": predicted[0] if len(predicted) == 1 else predicted,
                 "reps": len(exc)}
        note = "the counter differs across reps: see the receipts" if len(counters) > 1 else ""
        out["crewai.persist_counter"] = Measured(value, note,
                                                 compare_keys=("counter", "expected"),
                                                 receipts=tuple(r.probe for r in exc))
    else:
        out["crewai.persist_counter"] = "no persist.exception receipt without harness errors"
    done = by.get("persist.completed")
    if done is not None and "restore" in done.observations:
        rest = done.observations["restore"]
        out["crewai.completed_restore"] = Measured(
            {"counter": rest["counter"], "counter_before": rest["counter_before"]},
            "restoring the completed flow by id re-ran it from its persisted counter",
            compare_keys=("counter",), receipts=("persist.completed",))
    else:
        out["crewai.completed_restore"] = "persist.completed did not produce a restore observation"
    cps = [r for r in receipts if r.probe.split(".rep")[0] == "checkpoint.exception" and "ledger" in r.observations]
    if cps:  # measured over the campaign's reps like every crash path; a value that varies is listed
        counters = sorted({r.observations["restore"]["counter"] for r in cps})
        s1_runs = sorted({r.observations["ledger"].get("s1", 0) for r in cps})
        varies = [name for name, got in (("counter", counters), ("s1 runs", s1_runs)) if len(got) > 1]
        out["crewai.checkpointconfig"] = Measured(
            {"counter": counters[0] if len(counters) == 1 else counters,
             "s1_runs": s1_runs[0] if len(s1_runs) == 1 else s1_runs, "reps": len(cps)},
            f"the {' and '.join(varies)} differ across the {len(cps)} reps: see the receipts" if varies
            else f"the same in each of {len(cps)} rep(s)", compare_keys=("counter", "s1_runs"),
            receipts=tuple(r.probe for r in cps))
    else:
        out["crewai.checkpointconfig"] = "no checkpoint.exception receipt produced observations"
    return out


CAMPAIGN = Campaign(
    name="crewai",
    title="CrewAI 1.15.2 Flows: @persist, CheckpointConfig, human-feedback pause",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    headlines=headlines,
    packages=('crewai', 'pydantic'),
)
