"""One function per probe kind: drive the protocol, read the oracles, ask the checker.

Verdict evidence holds only run-stable facts (counts, outcomes, error types); the
run-varying facts (durations, op logs with ids, stderr) go to observations/metrics.
A child that dies where it should not, a park point never reached or two oracles that
disagree become ``harness_errors`` and the affected verdict is not emitted.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import time
from pathlib import Path
from typing import Any, Iterator

from probes.core import checker
from probes.core import oracle as oracle_mod
from probes.core.campaign import ProbeContext, ProbeSpec
from probes.core.checker import Property, Subject
from probes.core.errors import HarnessError
from probes.core.history import HistoryLog, Kind
from probes.core.nemesis import run_child
from probes.core.oracle import Ledger, cross_check
from probes.core.receipt import ProbeResult
from probes.langgraph import workloads
from probes.langgraph.savers import framework_name

TARGET = "probes.langgraph.workloads:child_step"
CHILD_TIMEOUT = 240.0

# Kill points of the crash path: name -> park target in the victim process.
KILL_POINTS: dict[str, str] = {
    "A": "s2:before_effect",  # inside s2, before its effect
    "B": "before:put#2",  # inside the saver's put that follows the first put_writes
    "C": "s1:after_effect",  # inside s1, after its effect
    "K1": "op#1",  # after the 1st persistence operation became durable
    "K2": "op#2",
    "K3": "op#3",
    "K4": "op#4",
    "K5": "op#5",
    "window": "s2:after_effect",  # s2's effect committed, its write not yet durable
}
CRASH_POINTS = ("exc",) + tuple(KILL_POINTS)
RECOVERY_MODES = ("none", "resubmit")
NO_KILL_IN_MEMORY = ("InMemorySaver keeps checkpoints in the process's memory: a SIGKILL erases them, "
                     "so there is nothing durable to recover from in a fresh process")


def _cross_checked(errors: list[str]) -> dict[str, int] | None:
    """This process's effect counts, cross-checked with its ledger rows; on a mismatch the
    harness error goes to ``errors`` and the caller measures nothing (``None``)."""
    try:
        return oracle_mod.current().cross_check()
    except HarnessError as exc:
        errors.append(str(exc))
        return None


def _subject(spec: ProbeSpec, backend: str) -> Subject:
    """Who the probe's verdicts are about: the arm's framework, or the subject the plan names."""
    return Subject(spec.args.get("framework") or framework_name(spec.args.get("arm", "stock")), backend)


def _store(ctx: ProbeContext, backend: str, label: str) -> tuple[str, str]:
    store = ctx.stores.fresh(backend, label)
    return store.backend, store.location


def _child(ctx: ProbeContext, errors: list[str], ledger: Path, incarnation: str, step: str,
           store: tuple[str, str], arm: str, remit_options: dict[str, Any], *, park_at: str | None = None,
           expect: str = "ok", **kwargs: Any) -> Any:
    """Run one protocol step in a fresh interpreter; return its result (or None on a harness error)."""
    args = {"step": step, "backend": store[0], "location": store[1], "arm": arm, "ledger": str(ledger),
            "incarnation": incarnation, "remit_options": remit_options, **kwargs}
    outcome = run_child(TARGET, args, park_at=park_at, timeout=CHILD_TIMEOUT)
    try:
        if expect == "killed":
            outcome.require_killed()
            return {"killed_at": outcome.parked_at, "seconds": round(outcome.seconds, 3)}
        result = outcome.require_ok()
        cross_check(result["counter"], Ledger(ledger), incarnation)
        result["seconds"] = round(outcome.seconds, 3)
        return result
    except HarnessError as exc:
        errors.append(f"{incarnation} ({step}): {exc}")
        return None


def _remit(spec: ProbeSpec) -> tuple[str, dict[str, Any]]:
    return spec.args.get("arm", "stock"), dict(spec.args.get("remit_options", {}))


@contextlib.contextmanager
def _inproc_saver(spec: ProbeSpec, ctx: ProbeContext, backend: str, label: str) -> Iterator[Any]:
    """A fresh store's saver (stock or REMIT, as the spec says) for a probe run in this process."""
    from probes.langgraph.savers import make_saver

    arm, remit_options = _remit(spec)
    store = ctx.stores.fresh(backend, label)
    oracle_mod.install(ctx.workdir / "ledger.sqlite", "inproc")
    with make_saver(store, arm, **remit_options) as saver:
        yield saver


# --- FD ---------------------------------------------------------------------------------

FD_PATHS = {
    "bare": "second-resume:bare-command",
    "map": "second-resume:resume-map",
    "update_state": "fork:update_state",
    "replay": "fork:replay-then-resume",
}


def probe_fd(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    backend, variant = spec.args["backend"], spec.args["variant"]
    res = ProbeResult()
    with _inproc_saver(spec, ctx, backend, "fd") as saver:
        obs = workloads.fd_protocol(saver, variant)
    counts = _cross_checked(res.harness_errors)
    if counts is None:
        return res
    res.observations = {**obs, "effect_counts": counts}
    expected = 1  # f(False) for input 1
    holds, ev = checker.fork_outcome(obs["second_outcome"], expected, obs["first_outcome"])
    ev.update({"second_resume_error": obs["second"].get("error"), "gate_runs": counts.get("gate", 0)})
    if variant == "replay":
        ev["replay_output"] = obs["replay_output"]
    how = {"bare": "Command(resume=False) addressed to the interrupt checkpoint",
           "map": "Command(resume={interrupt_id: False}) addressed to the interrupt checkpoint",
           "update_state": "update_state fork of the interrupt checkpoint, then Command(resume=False)",
           "replay": "replay from the interrupt checkpoint (invoke(None, cfg)), then Command(resume=False)"}[variant]
    summary = (f"{how}: outcome {obs['second_outcome']!r}, f(False) = {expected}"
               + (" -- the first answer (True) was served again" if ev["served_first_outcome"] else ""))
    res.verdicts.append(_subject(spec, backend).verdict(Property.FD, FD_PATHS[variant], holds, ev, summary))
    return res


# --- CV ---------------------------------------------------------------------------------


def probe_cv(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    backend = spec.args["backend"]
    res = ProbeResult()
    with _inproc_saver(spec, ctx, backend, "cv") as saver:
        obs = workloads.cv_protocol(saver)
    res.observations = obs
    became_durable = obs["became_durable"]
    # Refused at write = the run failed *and* no durable checkpoint holds the invalid value.
    refused = (not obs["invoke"]["ok"]) and not became_durable
    holds, ev = checker.invalid_state_refused(refused, became_durable, obs["invoke"].get("error"))
    reads = {k: (obs[k]["ok"], obs[k].get("error")) for k in ("get_state", "history", "resume", "invoke_none")}
    ev.update({"reads_after": {k: {"ok": ok, "error": err} for k, (ok, err) in reads.items()},
               "wedged": not any(ok for ok, _ in reads.values())})
    failing = [k for k, (ok, _) in reads.items() if not ok]
    summary = (f"None appended to items: list[str]; {'persisted' if became_durable else 'not persisted'}; "
               f"{'the run raised ' + (obs['invoke'].get('error') or '').split(':')[0] if not obs['invoke']['ok'] else 'the run did not raise'}"
               f"; afterwards failing: {', '.join(failing) or 'none'}")
    res.verdicts.append(_subject(spec, backend).verdict(Property.CV, "pydantic:append-None", holds, ev, summary))
    return res


# --- CO ---------------------------------------------------------------------------------


def probe_co_stray(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """A stray resume on a finished thread: in-process, or from a fresh process."""
    backend, where = spec.args["backend"], spec.args["where"]
    arm, remit_options = _remit(spec)
    subject = _subject(spec, backend)
    res = ProbeResult()
    path = f"stray:{where}"
    if where == "process" and backend == "memory":
        res.verdicts.append(subject.not_applicable(Property.CO, path, NO_KILL_IN_MEMORY.replace(
            "a SIGKILL erases them", "a second process cannot see them")))
        return res
    ledger = ctx.workdir / "ledger.sqlite"
    if where == "inprocess":
        store = ctx.stores.fresh(backend, "co")
        oracle_mod.install(ledger, "inproc")
        from probes.langgraph.savers import make_saver

        with make_saver(store, arm, **remit_options) as saver:
            obs = workloads.stray_protocol(saver, "graph")
        if _cross_checked(res.harness_errors) is None:
            return res
        stray = obs["stray"]
    else:
        store = _store(ctx, backend, "co")
        first = _child(ctx, res.harness_errors, ledger, "run-resume", "run_resume", store, arm, remit_options,
                       app="graph")
        second = _child(ctx, res.harness_errors, ledger, "stray", "resume", store, arm, remit_options, app="graph")
        if first is None or second is None:
            return res
        obs = {"first": first, "stray_process": second}
        stray = second["resume"]
    counts = Ledger(ledger).counts()
    res.observations = {**obs, "effect_counts": counts}
    holds, ev = checker.gate_once(counts.get("gate", 0))
    ev.update({"stray_raised": not stray["ok"], "stray_error": stray.get("error")})
    summary = (f"stray Command(resume=True) on the finished thread ({where}): gate fired {counts.get('gate', 0)}x, "
               f"{'raised ' + str(stray.get('error')).split(':')[0] if not stray['ok'] else 'silent (no error)'}")
    res.verdicts.append(subject.verdict(Property.CO, path, holds, ev, summary))
    return res


def probe_co_sequential(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Two sequential interrupts; with a restart (fresh process) before each answer."""
    backend = spec.args["backend"]
    arm, remit_options = _remit(spec)
    subject = _subject(spec, backend)
    res = ProbeResult()
    ledger = ctx.workdir / "ledger.sqlite"
    if backend == "memory":
        store = ctx.stores.fresh(backend, "seq")
        oracle_mod.install(ledger, "inproc")
        from probes.langgraph.savers import make_saver

        with make_saver(store, arm, **remit_options) as saver:
            obs = workloads.sequential_protocol(saver)
        if _cross_checked(res.harness_errors) is None:
            return res
        final = obs["steps"][-1]
        path = "sequential:in-process"
    else:
        store = _store(ctx, backend, "seq")
        steps = []
        for i, (step, kw) in enumerate((("start", {}), ("resume", {"value": "a1"}), ("resume", {"value": "a2"}))):
            out = _child(ctx, res.harness_errors, ledger, f"proc-{i + 1}", step, store, arm, remit_options,
                         app="sequential", **kw)
            if out is None:
                return res
            steps.append(out)
        obs = {"steps": steps}
        final = steps[-1]["resume"]
        path = "sequential:restart-between"
    counts = Ledger(ledger).counts()
    res.observations = {**obs, "effect_counts": counts}
    holds, ev = checker.at_most_once({g: counts.get(g, 0) for g in ("g1", "g2")})  # each interrupt's gate at most once
    ev["final_output"] = final.get("output") if final["ok"] else final.get("error")
    summary = f"two interrupts answered in turn: g1 {counts.get('g1', 0)}x, g2 {counts.get('g2', 0)}x; final {ev['final_output']}"
    res.verdicts.append(subject.verdict(Property.CO, path, holds, ev, summary))
    lv_ok, lv_ev = checker.completes(bool(final["ok"]), "the second answer ran the thread to its end",
                                     lost=not counts.get("g1", 0) or not counts.get("g2", 0))
    res.verdicts.append(subject.verdict(Property.LV, path, lv_ok, lv_ev, lv_ev["why"] or "both answers consumed; "
                                        "the thread completed"))
    return res


def probe_co_fanout(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    backend = spec.args["backend"]
    res = ProbeResult()
    with _inproc_saver(spec, ctx, backend, "fanout") as saver:
        obs = workloads.fanout_protocol(saver)
    counts = _cross_checked(res.harness_errors)
    if counts is None:
        return res
    res.observations = obs
    holds, ev = checker.at_most_once({b: counts.get(b, 0) for b in ("b1", "b2")})  # each interrupt's gate at most once
    lv_ok, lv_ev = checker.completes(bool(obs["resumed"]["ok"]), "the resume map ran the thread to its end",
                                     lost=not counts.get("b1", 0) or not counts.get("b2", 0))
    out = obs["resumed"].get("output") if obs["resumed"]["ok"] else obs["resumed"].get("error")
    ev.update({"resumed_output": out, "stray_map_raised": not obs["stray"]["ok"]})
    summary = f"two parallel interrupts, one resume map, then the same map again: b1 {counts.get('b1', 0)}x, b2 {counts.get('b2', 0)}x"
    res.verdicts.append(_subject(spec, backend).verdict(Property.CO, "fan-out:resume-map", holds, ev, summary))
    res.verdicts.append(_subject(spec, backend).verdict(Property.LV, "fan-out:resume-map", lv_ok, lv_ev,
                                                        lv_ev["why"] or "one resume map answered both interrupts"))
    return res


# --- FI ----------------------------------------------------------------------------------

NO_INTENT_ON_THE_WIRE = (
    "stock LangGraph carries no fork/retry discriminator: Command(resume=...) has only the value (and an "
    "interrupt-id map), the config only the thread and checkpoint; a resume at an answered interrupt cannot "
    "declare whether it is a FORK or a RETRY (forks are made by update_state or replay: the FD column). "
    "REMIT adds one (configurable['remit_intent'])")



def probe_fi(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Declared intent: a RETRY must not fire the gate again nor change the outcome; a FORK with
    False must observe f(False) = 1. Judged by ``checker.check_fi`` over the recorded history."""
    backend = spec.args["backend"]
    subject = _subject(spec, backend)
    res = ProbeResult()
    path = "second-resume:declared-intent"
    if spec.args.get("arm", "stock") == "stock":
        res.verdicts.append(subject.not_applicable(Property.FI, path, NO_INTENT_ON_THE_WIRE))
        return res
    with _inproc_saver(spec, ctx, backend, "fi") as saver:
        obs = workloads.fi_protocol(saver, spec.args.get("arm", "remit"))
    if _cross_checked(res.harness_errors) is None:
        return res
    history = oracle_mod.current().ledger.history()
    res.observations = {**obs, "history": history.to_json()}
    fi = checker.check_fi(history, checker.Expectation(gate="gate", outcome=1))
    # an error's message carries interrupt and checkpoint ids: only its type is run-stable
    outcomes = [st.get("output", {}).get("value") if st["ok"] else st["error"].split(":", 1)[0]
                for st in obs["steps"]]
    gate = history.effect_counts().get("gate", 0)
    res.verdicts.append(fi.verdict(
        subject, path,
        f"answered True (outcome {outcomes[0]!r}), then a declared RETRY of True (outcome {outcomes[1]!r}) and a "
        f"declared FORK with False (outcome {outcomes[2]!r}, f(False) = 1); the gated effect fired {gate}x"
        + ("" if fi.holds else " -- a declaration was not honoured"),
        outcomes=outcomes, gate_fires=gate))
    return res


# --- EO / PC, interrupt path and park-kill -------------------------------------------------


def probe_eo_interrupt(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    backend, api = spec.args["backend"], spec.args["api"]
    res = ProbeResult()
    with _inproc_saver(spec, ctx, backend, "eo") as saver:
        obs = workloads.interrupt_eo_protocol(saver, api)
    counts = _cross_checked(res.harness_errors)
    if counts is None:
        return res
    res.observations = obs
    subject = _subject(spec, backend)
    holds, ev = checker.effects_once(counts, ["s1", "gate", "s3"], completed=bool(obs["resumed"]["ok"]))
    path = f"interrupt:{api}"
    res.verdicts.append(subject.verdict(
        Property.EO, path, holds, ev,
        f"{api} API, s1 -> interrupt -> s3, resumed thread-only: s1 {counts.get('s1', 0)}x, gate {counts.get('gate', 0)}x, s3 {counts.get('s3', 0)}x"))
    holds, ev = checker.prefix_not_reentered(obs["runs_after_resume"], ["s1"])
    res.verdicts.append(subject.verdict(
        Property.PC, path, holds, ev, f"after the resume s1 ran {obs['runs_after_resume'].get('s1', 0)}x more"))
    return res


def probe_parkkill(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Run to a durable interrupt, SIGKILL while parked, resume fresh, stray from a third process."""
    backend, api = spec.args["backend"], spec.args["api"]
    arm, remit_options = _remit(spec)
    subject = _subject(spec, backend)
    res = ProbeResult()
    path = f"park-kill:{api}"
    if backend == "memory":
        for prop in (Property.EO, Property.PC, Property.CO, Property.LV):
            res.verdicts.append(subject.not_applicable(prop, path, NO_KILL_IN_MEMORY))
        return res
    ledger = ctx.workdir / "ledger.sqlite"
    store = _store(ctx, backend, "park")
    killed = _child(ctx, res.harness_errors, ledger, "park", "start", store, arm, remit_options,
                    park_at="parked", expect="killed", app=api, park_after=True)
    resumed = _child(ctx, res.harness_errors, ledger, "resume", "resume", store, arm, remit_options, app=api) \
        if killed else None
    stray = _child(ctx, res.harness_errors, ledger, "stray", "resume", store, arm, remit_options, app=api) \
        if resumed else None
    if stray is None:
        return res
    ledger_obj = Ledger(ledger)
    counts = ledger_obj.counts()
    res.observations = {"killed": killed, "resumed": resumed, "stray": stray, "effect_counts": counts}
    done = bool(resumed["resume"]["ok"])
    holds, ev = checker.effects_once(counts, ["s1", "gate", "s3"], completed=done)
    ev["resumed_output"] = resumed["resume"].get("output") if done else resumed["resume"].get("error")
    res.verdicts.append(subject.verdict(
        Property.EO, path, holds, ev,
        f"killed while parked at the interrupt, resumed in a fresh process, stray from a third: "
        f"s1 {counts.get('s1', 0)}x, gate {counts.get('gate', 0)}x, s3 {counts.get('s3', 0)}x"))
    after = ledger_obj.counts("resume")
    holds, ev = checker.prefix_not_reentered(after, ["s1"])
    res.verdicts.append(subject.verdict(Property.PC, path, holds, ev,
                                        f"the fresh-process resume re-ran s1 {after.get('s1', 0)}x"))
    lv_ok, lv_ev = checker.completes(done, "the fresh-process resume ran the thread to its end",
                                     lost=counts.get("gate", 0) == 0)
    res.verdicts.append(subject.verdict(Property.LV, path, lv_ok, lv_ev,
                                        lv_ev["why"] or "the fresh-process resume completed the run"))
    stray_counts = ledger_obj.counts("stray")
    holds, ev = checker.gate_once(counts.get("gate", 0))
    ev.update({"stray_fired": stray_counts, "stray_raised": not stray["resume"]["ok"]})
    res.verdicts.append(subject.verdict(Property.CO, path, holds, ev,
                                        f"stray resume from a third process fired {sum(stray_counts.values())} effect(s)"))
    return res


# --- EO / PC, crash path ---------------------------------------------------------------------


CRASH_EFFECTS = ("s1", "s2")
CRASH_OUTPUT = {"s1": "s1-done", "s2": "s2-done"}  # what a completed s1 -> s2 run returns


def _record_recovery(log: HistoryLog, rec: dict[str, Any], mode: str) -> None:
    """What the recovery incarnation observably did, as history events (effects are already there)."""
    out = rec["recover"]
    if out["ok"] and out.get("output") == CRASH_OUTPUT:
        log.append(Kind.COMPLETE, "recover", value=out["output"])
    elif not out["ok"]:
        log.append(Kind.ERROR, "recover", value=out["error"].split(":", 1)[0])
    else:  # returned without running the workflow to its end (nothing durable to resume)
        log.append(Kind.REFUSE, "recover", value=f"returned {out.get('output')!r}")


def _crash_once(ctx: ProbeContext, spec: ProbeSpec, rep: int, errors: list[str], point: str, mode: str,
                durability: str, drop: str = "nothing") -> dict[str, Any] | None:
    """One crash-and-recover execution on a fresh store; returns its history and what was durable."""
    backend = spec.args["backend"]
    arm, remit_options = _remit(spec)
    work = ctx.workdir / f"rep{rep}"
    work.mkdir(parents=True, exist_ok=True)
    ledger = work / "ledger.sqlite"
    log = HistoryLog(ledger)
    store = _store(ctx, backend, f"crash{rep}")
    log.append(Kind.START, "run", value=1, detail={"durability": durability})
    if point == "exc":
        run = _child(ctx, errors, ledger, "run", "crash_run", store, arm, remit_options, durability=durability,
                     fail_dir=str(work / "fail"), drop=drop)
        if run is not None and run["run"]["ok"]:
            errors.append("run: the injected exception did not surface")
            return None
        how = {"how": "exception", "where": "s2"}
    else:
        run = _child(ctx, errors, ledger, "run", "crash_run", store, arm, remit_options,
                     park_at=KILL_POINTS[point], expect="killed", park_ops=True, durability=durability, drop=drop)
        how = {"how": "SIGKILL", "where": KILL_POINTS[point]}
    if run is None:
        return None
    log.append(Kind.CRASH, "run", detail=how)
    log.append(Kind.RECOVER, "recover", detail={"mode": mode})
    rec = _child(ctx, errors, ledger, "recover", "crash_recover", store, arm, remit_options,
                 durability=durability, mode=mode)
    if rec is None:
        return None
    _record_recovery(log, rec, mode)
    return _crash_facts(Ledger(ledger), run, rec)


def _crash_facts(ledger: Ledger, run: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
    counts = ledger.counts()
    return {
        "counts": {"s1": counts.get("s1", 0), "s2": counts.get("s2", 0)},
        "durable_prefix": rec["durable_before"]["done"],
        "durable_checkpoint": rec["durable_before"]["checkpoint"],
        "recovered": rec["recover"]["ok"],
        "recovery_output": rec["recover"].get("output") if rec["recover"]["ok"] else rec["recover"].get("error"),
        "_history": ledger.history(),
        "_run": run,
        "_recover": rec,
    }


def _stable(fact: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fact.items() if not k.startswith("_")}


def probe_crash(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Crash in s1 -> s2 at one point, recover in a fresh interpreter, ``reps`` times.

    Each repetition is one recorded history; EO (at most once; exactly once when the run completed), PC and
    LV are judged on every repetition by the history checkers and must hold on all.
    """
    backend, point, mode = spec.args["backend"], spec.args["point"], spec.args["mode"]
    durability, reps = spec.args.get("durability", "sync"), int(spec.args.get("reps", 1))
    subject = _subject(spec, backend)
    res = ProbeResult()
    dur = "" if spec.args.get("durability_path") is None else f"/durability={durability}"
    path = f"crash:{point}{dur}/recover={mode}"
    if backend == "memory" and point != "exc":
        for prop in (Property.EO, Property.PC, Property.LV):
            res.verdicts.append(subject.not_applicable(prop, path, NO_KILL_IN_MEMORY))
        return res
    facts = []
    started = time.monotonic()
    for rep in range(reps):
        if backend == "memory":
            fact = _crash_memory(ctx, spec, rep, res.harness_errors, mode, durability)
        else:
            fact = _crash_once(ctx, spec, rep, res.harness_errors, point, mode, durability)
        if fact is None:
            return res
        facts.append(fact)
    res.metrics = {"seconds_per_rep": round((time.monotonic() - started) / reps, 3), "reps": reps}
    res.observations = {"reps": [{**_stable(f), "run": f["_run"], "recover": f["_recover"],
                                  "history": f["_history"].to_json()} for f in facts]}
    stable = [_stable(f) for f in facts]
    identical = all(s == stable[0] for s in stable)
    histories = [f["_history"] for f in facts]
    worst_counts = {k: max(s["counts"][k] for s in stable) for k in CRASH_EFFECTS}
    how = "invoke(None, cfg)" if mode == "none" else "the original input re-submitted"
    where = "an exception in s2" if point == "exc" else f"SIGKILL at {point}"
    reps_text = f"{reps} rep{'s' if reps > 1 else ''}, {'identical' if identical else 'NOT identical'}"
    eo = checker.every([checker.check_eo(h, checker.Expectation(effects=CRASH_EFFECTS)) for h in histories])
    lv = checker.every([checker.check_lv(h, checker.Expectation(result=CRASH_OUTPUT)) for h in histories])
    completed = [checker.completed_after_last_crash(h)[0] for h in histories]
    res.verdicts.append(eo.verdict(
        subject, path,
        f"{where}, recovered with {how}: s1 {worst_counts['s1']}x, s2 {worst_counts['s2']}x ({reps_text})"
        + ("" if all(completed) else f"; the run did not complete: {stable[0]['recovery_output']}"),
        effect_counts=worst_counts, per_rep=[s["counts"] for s in stable], identical_across_reps=identical,
        recovered=[s["recovered"] for s in stable], completed=completed))
    pcs = [checker.check_pc(h, checker.Expectation(prefix=tuple(s["durable_prefix"])))
           for h, s in zip(histories, stable)]
    pc = checker.every(pcs)
    reentered = sorted({k for c in pcs for k in c.evidence["reentered"]})
    res.verdicts.append(pc.verdict(
        subject, path,
        f"durable prefix {stable[0]['durable_prefix'] or '[]'}; recovery re-ran {reentered or 'none of it'}",
        durable_prefix=stable[0]["durable_prefix"], identical_across_reps=identical))
    res.verdicts.append(lv.verdict(
        subject, path,
        f"{where}, recovered with {how}: " + ("the run completed" if lv.holds else
                                              f"the run never completed ({stable[0]['recovery_output']})"),
        identical_across_reps=identical))
    return res


def _crash_memory(ctx: ProbeContext, spec: ProbeSpec, rep: int, errors: list[str], mode: str,
                  durability: str) -> dict[str, Any] | None:
    """InMemorySaver: the exception path in one process (the saver cannot outlive it)."""
    from probes.langgraph.savers import make_saver
    from probes.core.backends import Store

    arm, remit_options = _remit(spec)
    work = ctx.workdir / f"rep{rep}"
    ledger = work / "ledger.sqlite"
    log = HistoryLog(ledger)
    log.append(Kind.START, "run", value=1, detail={"durability": durability})
    with make_saver(Store("memory", ""), arm, **remit_options) as saver:
        oracle_mod.install(ledger, "run")
        run = workloads._step_crash_run(saver, durability, str(work / "fail"))
        if _cross_checked(errors) is None:
            return None
        log.append(Kind.CRASH, "run", detail={"how": "exception", "where": "s2"})
        log.append(Kind.RECOVER, "recover", detail={"mode": mode})
        oracle_mod.install(ledger, "recover")
        rec = workloads._step_crash_recover(saver, durability, mode)
        _record_recovery(log, rec, mode)
        if _cross_checked(errors) is None:
            return None
    if run["run"]["ok"]:
        errors.append("run: the injected exception did not surface")
        return None
    return _crash_facts(Ledger(ledger), run, rec)


def probe_ops(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Which persistence operations a clean s1 -> s2 run performs (the K sweep's domain)."""
    backend = spec.args["backend"]
    arm, remit_options = _remit(spec)
    res = ProbeResult()
    ops: dict[str, list[str]] = {}
    for durability in spec.args["durability_modes"]:
        ledger = ctx.workdir / f"ledger-{durability}.sqlite"
        store = _store(ctx, backend, f"ops-{durability}")
        out = _child(ctx, res.harness_errors, ledger, "clean", "crash_run", store, arm, remit_options,
                     durability=durability)
        if out is None:
            return res
        ops[durability] = out["ops"]
    res.observations = {"ops": ops}
    return res


# --- RD ------------------------------------------------------------------------------------


def _copy_store(ctx: ProbeContext, backend: str, location: str, n: int, errors: list[str]) -> list[str]:
    """Byte-identical copies of a crashed store (files for SQLite, TEMPLATE databases for Postgres)."""
    copies = []
    if backend == "sqlite":
        src = Path(location)
        digests = set()
        for i in range(n):
            dst = src.with_name(f"{src.stem}-copy{i + 1}.sqlite")
            for suffix in ("", "-wal", "-shm"):
                if Path(str(src) + suffix).exists():
                    shutil.copyfile(str(src) + suffix, str(dst) + suffix)
            digests.add(hashlib.sha256(dst.read_bytes()).hexdigest())
            copies.append(str(dst))
        if len(digests) != 1:
            errors.append("sqlite copies of the crashed store are not byte-identical")
        return copies
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    src_db = str(conninfo_to_dict(location)["dbname"])
    admin = make_conninfo(location, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        # the killed client's backend may still be exiting: end it before copying
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                     (src_db,))
        for i in range(n):
            name = f"{src_db[:50]}_c{i + 1}"
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{src_db}"')
            copies.append(make_conninfo(location, dbname=name))
    return copies


def probe_rd(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Crash s2 (SIGKILL at A) under a saver that drops a class of writes; recover copies of the store."""
    backend, drop = spec.args["backend"], spec.args["drop"]
    copies_n = int(spec.args.get("copies", 2))
    arm, remit_options = _remit(spec)
    subject = _subject(spec, backend)
    res = ProbeResult()
    path = f"crash:A/drop={drop}/reflexive-copies"
    if backend == "memory":
        res.verdicts.append(subject.not_applicable(Property.RD, path, NO_KILL_IN_MEMORY))
        return res
    store = _store(ctx, backend, "rd")
    ledger = ctx.workdir / "ledger.sqlite"
    run = _child(ctx, res.harness_errors, ledger, "run", "crash_run", store, arm, remit_options,
                 park_at=KILL_POINTS["A"], expect="killed", park_ops=True, drop=drop, durability="sync")
    if run is None:
        return res
    try:
        copies = _copy_store(ctx, backend, store[1], copies_n, res.harness_errors)
    except Exception as exc:  # a failed copy is the harness's failure, not LangGraph's
        res.harness_errors.append(f"copying the crashed store failed: {exc}")
        return res
    decisions: dict[str, Any] = {}
    obs = []
    for i, location in enumerate(copies):
        inc = f"recover-copy{i + 1}"
        rec = _child(ctx, res.harness_errors, ledger, inc, "crash_recover", (backend, location), arm,
                     remit_options, durability="sync", mode="none")
        if rec is None:
            return res
        decisions[f"copy{i + 1}"] = {
            "durable_prefix": rec["durable_before"]["done"],
            "re_ran": Ledger(ledger).counts(inc),
            "output": rec["recover"].get("output") if rec["recover"]["ok"] else rec["recover"].get("error"),
        }
        obs.append(rec)
    res.observations = {"run": run, "recoveries": obs}
    holds, ev = checker.same_decision(decisions)
    first = decisions["copy1"]
    res.verdicts.append(subject.verdict(
        Property.RD, path, holds, ev,
        f"saver dropping {drop.replace('_', ' ')}; {copies_n} byte-identical copies of the crashed store: "
        f"{'same' if holds else 'different'} recovery decision (re-ran {first['re_ran'] or 'nothing'})"))
    return res


KINDS = {
    "fd": probe_fd,
    "fi": probe_fi,
    "cv": probe_cv,
    "co_stray": probe_co_stray,
    "co_sequential": probe_co_sequential,
    "co_fanout": probe_co_fanout,
    "eo_interrupt": probe_eo_interrupt,
    "parkkill": probe_parkkill,
    "crash": probe_crash,
    "ops": probe_ops,
    "rd": probe_rd,
}
