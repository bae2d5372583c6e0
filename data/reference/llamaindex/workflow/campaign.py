"""LlamaIndex Workflows 2.22.2 campaign: split-step input, in-step waits, park-kill, CV, tamper.

Every protocol step runs in a fresh interpreter (``run_child``): the checkpoint is the
caller's ``ctx.to_dict()`` on disk, so recovery in another process is the honest test,
and a child keeps framework event loops out of the notebook kernel. Effects go to the
two oracles; each normally-exiting child's counter is cross-checked against its ledger
rows (a mismatch is a harness error, never a verdict).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.checker import (
    Property,
    collapse,
    Subject,
    completes,
    effects_once,
    fork_outcome,
    gate_once,
    invalid_state_refused,
    prefix_not_reentered,
)
from probes.core.errors import HarnessError
from probes.core.oracle import cross_check
from probes.core.steps import ProtocolSteps
from probes.core.receipt import ProbeResult, Receipt

NAME = "llamaindex"
SUBJECT = Subject("llamaindex", "json-file")
# Tampered durable state is behaviour the paper did not measure: its own matrix row.
TAMPERED = Subject("llamaindex · tampered state", "json-file")
WORKLOAD = "probes.llamaindex.workload"
FAMILIES = ("split", "fork", "double", "race", "wait", "parkkill", "cv", "tamper")
TAMPERS = ("wrong-version", "queue-not-a-list", "bad-state-value", "removed-state", "removed-workers",
           "not-running", "forged-answer")  # mirrors workload.TAMPERS (kept import-free)
CHILD_TIMEOUT = 180.0

PARAMS = (
    Param("seed", "int", 0, 0, "campaign seed (recorded; the protocols use no randomness)"),
    Param("reps", "int", 3, 1, "repetitions of every protocol", minimum=1),
    Param("families", "list[str]", list(FAMILIES), list(FAMILIES), "protocol families to run", FAMILIES),
    Param("tampers", "list[str]", list(TAMPERS), list(TAMPERS), "snapshot edits for the tamper family", TAMPERS),
)


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    specs = []
    for family in FAMILIES:
        if family not in params["families"]:
            continue
        for rep in range(1, params["reps"] + 1):
            args: dict[str, Any] = {"family": family, "rep": rep}
            if family == "tamper":
                args["tampers"] = [t for t in TAMPERS if t in params["tampers"]]
            specs.append(ProbeSpec(f"{family}.rep{rep}", args))
    return specs


# --- child plumbing ---------------------------------------------------------------


class _Probe(ProtocolSteps):
    """The split-step protocol's helpers on top of the shared step runner."""

    def __init__(self, ctx: ProbeContext) -> None:
        super().__init__(WORKLOAD, ctx.workdir, CHILD_TIMEOUT)
        self.snapshot = ctx.workdir / "snapshot.json"

    def park(self, flavor: str = "split") -> dict[str, Any]:
        out = self.child("park_at_input", "park", flavor=flavor, snapshot=str(self.snapshot))
        if not out.result["snapshot_written"]:
            raise HarnessError(f"no snapshot was written at the input request: {out.result['snapshot_error']}")
        return out.result

    def resume(self, incarnation: str, answers: list[str], flavor: str = "split", **kw: Any) -> dict[str, Any]:
        return self.child("resume", incarnation, flavor=flavor, snapshot=str(self.snapshot), answers=answers,
                          **kw).result


def _etype(info: Mapping[str, Any] | None) -> str | None:
    return None if not info else info["type"]


# --- the protocols ----------------------------------------------------------------


def _split(p: _Probe) -> list:
    """Snapshot at the input request, cancel, restore in a fresh process, answer, then a stray."""
    p.park()
    from probes.llamaindex.workload import outcome_of

    r = p.resume("resume", ["yes"], stray="no")
    total, after = p.counts(), p.counts("resume")
    eo_ok, eo_ev = effects_once(total, ["s1", "gate", "s3"], completed=r["outcome"] is not None)
    pc_ok, pc_ev = prefix_not_reentered({"s1": after.get("s1", 0)}, ["s1"])
    lv_ok, lv_ev = completes(r["outcome"] is not None, "the restored run, answered once, ran to its StopEvent",
                             outcome=r["outcome"], result=outcome_of("yes"), lost=total.get("gate", 0) == 0)
    co_ok, co_ev = gate_once(total.get("gate", 0))
    co_ev = {**co_ev, "stray_error": _etype(r.get("stray_error")), "outcome": r["outcome"]}
    return [
        SUBJECT.verdict(Property.EO, "interrupt:split-steps", eo_ok, {**eo_ev, "outcome": r["outcome"]},
                        f"restore from ctx.to_dict() in a fresh process, answer once: effect counts "
                        f"{eo_ev['effect_counts']}"),
        SUBJECT.verdict(Property.PC, "interrupt:split-steps", pc_ok, pc_ev,
                        f"s1 (durable prefix) ran {after.get('s1', 0)} time(s) after recovery"),
        SUBJECT.verdict(Property.LV, "interrupt:split-steps", lv_ok, lv_ev,
                        lv_ev["why"] or f"the restored run completed with {r['outcome']!r}"),
        SUBJECT.verdict(Property.CO, "stray-after-completion", co_ok, co_ev,
                        f"answer sent to the finished run: gate fired {total.get('gate', 0)} time(s) in all, "
                        f"error: {_etype(r.get('stray_error')) or 'none (silently inert)'}"),
    ]


def _fork(p: _Probe) -> list:
    """Restore the same snapshot twice, answering 'yes' then 'no': each answer must be served."""
    p.park()
    a = p.resume("branch-yes", ["yes"])
    b = p.resume("branch-no", ["no"])
    fd_ok, fd_ev = fork_outcome(b["outcome"], "f(no)", a["outcome"])
    per_branch = {inc: p.counts(inc) for inc in ("branch-yes", "branch-no")}
    done = {"branch-yes": a["outcome"] is not None, "branch-no": b["outcome"] is not None}
    eo_ok = all(effects_once(c, ["gate", "s3"], completed=done[inc])[0] and c.get("s1", 0) == 0
                for inc, c in per_branch.items())
    return [
        SUBJECT.verdict(Property.FD, "interrupt:split-steps", fd_ok, fd_ev,
                        f"second restore with 'no' observed {b['outcome']!r} (first branch {a['outcome']!r})"),
        SUBJECT.verdict(Property.EO, "fork:per-branch", eo_ok,
                        {"per_branch_counts": per_branch, "park_counts": p.counts("park")},
                        f"each branch ran gate and s3 once and did not re-run s1: {per_branch}"),
    ]


def _double(p: _Probe) -> list:
    """Two answers sent back to back to one restored run (a duplicate resume)."""
    p.park()
    r = p.resume("resume", ["yes", "no"])
    total = p.counts()
    ok, ev = gate_once(total.get("gate", 0))
    lv_ok, lv_ev = completes(r["outcome"] is not None, "the restored run, answered twice, ran to its StopEvent",
                             lost=total.get("gate", 0) == 0)
    ev = {**ev, "outcome": r["outcome"], "first_answer_won": r["outcome"] == "f(yes)",
          "ledger_gate_answers": [d for e, _, d in p.ledger.rows() if e == "gate"]}
    return [SUBJECT.not_applicable(
        Property.FI, "double-answer",
        "a restored run is answered with a HumanResponseEvent that carries the answer only: no FORK/RETRY "
        "discriminator; every restore of a snapshot is a new branch (FD), so a re-delivered answer cannot be told "
        "from a fork (CO)"), SUBJECT.verdict(
        Property.CO, "double-answer", ok, ev,
        f"two answers back to back: outcome {r['outcome']!r} (first answer "
        f"{'wins' if ev['first_answer_won'] else 'does not win'}), gated effect fired {total.get('gate', 0)} "
        f"time(s) (answers {ev['ledger_gate_answers']})"),
        SUBJECT.verdict(Property.LV, "double-answer", lv_ok, lv_ev, lv_ev["why"] or f"completed with {r['outcome']!r}")]


def _race(p: _Probe) -> list:
    """Two processes restore the same snapshot and send the same answer, released together."""
    from probes.core.worker import WorkerPool

    p.park()
    with WorkerPool(f"{WORKLOAD}:Racer", 2, log_dir=p.snapshot.parent / "workers") as pool:
        race = pool.race([{"ledger": str(p.ledger_path), "incarnation": f"racer-{i}", "snapshot": str(p.snapshot),
                           "flavor": "split", "answer": "yes"} for i in range(2)], timeout=CHILD_TIMEOUT)
    p.observations["race"] = [{"status": o.status, "value": o.value, "error": o.error[-600:],
                               "release_spread_s": race.release_spread_s} for o in race.outcomes]
    if not race.released or race.failures:
        raise HarnessError(f"racers were not released or failed: {[(o.status, o.error[-300:]) for o in race.outcomes]}")
    for i, o in enumerate(race.outcomes):
        cross_check(o.value["counter"], p.ledger, f"racer-{i}")
    from probes.llamaindex.workload import outcome_of

    total = p.counts()
    ok, ev = gate_once(total.get("gate", 0))
    outcomes = [o.value["outcome"] for o in race.outcomes]
    done = next((x for x in outcomes if x is not None), None)
    lv_ok, lv_ev = completes(done is not None, f"racer outcomes {sorted(map(str, outcomes))}", outcome=done,
                             result=outcome_of("yes"), lost=total.get("gate", 0) == 0)
    ev = {**ev, "outcomes": sorted(str(o.value["outcome"]) for o in race.outcomes),
          "errors": sorted(str(_etype(o.value["error"])) for o in race.outcomes)}
    return [SUBJECT.verdict(
        Property.CO, "cross-process:same-answer", ok, ev,
        f"two processes restored the same snapshot and answered 'yes' together: gated effect fired "
        f"{total.get('gate', 0)} time(s), outcomes {ev['outcomes']}. A restored snapshot keeps no record that its "
        f"input request was answered (which is also why forks work, FD), and the resume carries no fork/retry "
        f"discriminator"),
        SUBJECT.verdict(Property.LV, "cross-process:same-answer", lv_ok, lv_ev,
                        lv_ev["why"] or f"a racer completed with {done!r}")]


def _wait(p: _Probe) -> list:
    """ctx.wait_for_event inside a step: live answer, then snapshot/restore/answer."""
    in_process = p.child("answer_in_process", "live", flavor="wait", answers=["yes"]).result
    live = p.counts("live")
    p.park("wait")
    restored = p.resume("resume", ["yes"], flavor="wait")
    after = p.counts("resume")
    out = []
    for path, prefix_runs, counts, done in (
            ("wait:in-process", live.get("w.prefix", 0) - 1, live, in_process.get("outcome") is not None),
            ("wait:restore", after.get("w.prefix", 0), {
                "w.prefix": p.counts("park").get("w.prefix", 0) + after.get("w.prefix", 0),
                "w.gate": after.get("w.gate", 0)}, restored.get("outcome") is not None)):
        pc_ok, pc_ev = prefix_not_reentered({"w.prefix": prefix_runs}, ["w.prefix"])
        eo_ok, eo_ev = effects_once(counts, ["w.prefix", "w.gate"], completed=done)
        out.append(SUBJECT.verdict(Property.PC, path, pc_ok, pc_ev,
                                   f"the step's code before the wait re-ran {prefix_runs} time(s) after the pause"))
        out.append(SUBJECT.verdict(Property.EO, path, eo_ok, eo_ev,
                                   f"effect counts {eo_ev['effect_counts']}"))
    return out


def _parkkill(p: _Probe) -> list:
    """SIGKILL while parked with the snapshot on disk; two fresh processes restore it."""
    p.child("park_at_input", "park", park_at="parked", flavor="split", snapshot=str(p.snapshot), hold=True)
    if not Path(p.snapshot).exists():
        raise HarnessError("the killed process left no snapshot on disk")
    a = p.resume("branch-yes", ["yes"])
    b = p.resume("branch-no", ["no"])
    from probes.llamaindex.workload import outcome_of

    per_branch = {inc: p.counts(inc) for inc in ("branch-yes", "branch-no")}
    outcomes = {"branch-yes": a["outcome"], "branch-no": b["outcome"]}
    eo_ok = all(effects_once(c, ["gate", "s3"], completed=outcomes[inc] is not None)[0]
                for inc, c in per_branch.items())
    lv = {inc: completes(outcomes[inc] is not None, f"{inc} ran to its StopEvent", outcome=outcomes[inc],
                         result=outcome_of(inc.split("-", 1)[1]), lost=per_branch[inc].get("gate", 0) == 0)
          for inc in per_branch}
    pc_ok, pc_ev = prefix_not_reentered({"s1": sum(c.get("s1", 0) for c in per_branch.values())}, ["s1"])
    fd_ok, fd_ev = fork_outcome(b["outcome"], "f(no)", a["outcome"])
    park_counts = p.counts("park")
    return [
        SUBJECT.verdict(Property.EO, "park-kill", eo_ok, {"per_branch_counts": per_branch, "park_counts": park_counts},
                        f"killed while parked; each restored branch fired gate and s3 once: {per_branch}"),
        SUBJECT.verdict(Property.PC, "park-kill", pc_ok, pc_ev, "s1 was not re-run by either restored branch"
                        if pc_ok else "s1 re-ran after the restore"),
        SUBJECT.verdict(Property.FD, "park-kill", fd_ok, fd_ev,
                        f"branches observed {a['outcome']!r} and {b['outcome']!r}"),
        SUBJECT.verdict(Property.LV, "park-kill", all(ok for ok, _ in lv.values()),
                        {inc: ev for inc, (_, ev) in lv.items()},
                        "; ".join(f"{inc}: {ev['why'] or 'completed with its own result'}" for inc, (_, ev) in lv.items())),
    ]


def _cv(p: _Probe) -> list:
    """A value no serializer can encode in the store: ctx.to_dict() must refuse loudly."""
    out = p.child("park_at_input", "park", flavor="unserialisable", snapshot=str(p.snapshot)).result
    err = out["snapshot_error"]
    ok, ev = invalid_state_refused(err is not None, bool(out["snapshot_written"]), _etype(err))
    return [SUBJECT.verdict(Property.CV, "store:unserialisable", ok, ev,
                            f"asyncio.Lock in the store: ctx.to_dict() raised {_etype(err)}" if err else
                            "the unserialisable store was persisted without error")]


def _tamper(p: _Probe, kinds: list[str]) -> list:
    """Edit the serialized snapshot, restore, answer: is the edit refused loudly?"""
    p.park()
    verdicts = []
    for kind in kinds:
        inc = f"tamper-{kind}"

        def restore(kind: str = kind, inc: str = inc) -> tuple[str | None, str, Any]:
            r = p.resume(inc, ["yes"], tamper_kind=kind)
            return _etype(r["error"]), r["stage"], r["outcome"]

        verdicts.append(p.tampered_restore(TAMPERED, kind, inc, restore, {}))
    return verdicts


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    p = _Probe(ctx)
    family = spec.args["family"]
    result = ProbeResult(observations=p.observations)
    try:
        if family == "tamper":
            result.verdicts = _tamper(p, spec.args["tampers"])
        else:
            result.verdicts = {"split": _split, "fork": _fork, "double": _double, "race": _race, "wait": _wait,
                               "parkkill": _parkkill, "cv": _cv}[family](p)
    except HarnessError as exc:
        result.verdicts = []
        result.harness_errors.append(str(exc))
    p.observations["ledger_rows"] = [list(r) for r in p.ledger.rows()]
    result.metrics["child_seconds"] = {k: v["seconds"] for k, v in p.observations["children"].items()}
    return result


# --- headline ---------------------------------------------------------------------


def _worst(labels: list[str]) -> str:
    top = collapse(labels)
    return top.value if top is not None else "not measured"


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    from probes.headline import Measured

    split_paths = ("interrupt:split-steps", "fork:per-branch", "stray-after-completion", "double-answer", "park-kill")
    # cross-process:same-answer is an extra row (not in the paper's split-step cell), shown in the chapter
    split, wait, by_path = [], [], {}
    for r in receipts:
        for v in r.verdicts:
            key = f"{v.property.value} {v.path}"
            by_path.setdefault(key, set()).add(v.label.value)
            if v.path in split_paths:
                split.append(v.label.value)
            if v.path.startswith("wait:") and v.property is Property.PC:
                wait.append(v.label.value)
    value = {"split steps": _worst(split), "wait_for_event PC": _worst(wait)}
    why = ""
    if value["split steps"] != "✓":
        bad = sorted(k for k, s in by_path.items() if k.split(" ", 1)[1] in split_paths and s - {"✓"})
        why = "split-step cells that do not conform: " + ", ".join(bad) + "."
        co_double = [v for r in receipts for v in r.verdicts if v.path == "double-answer" and v.property is Property.CO]
        double = [v for v in co_double if v.label.value != "✓"]
        if double:
            ev = double[0].evidence
            why += (f" Two answers sent back to back to one restored run: the outcome was {ev['outcome']!r} "
                    f"(first answer won: {ev['first_answer_won']}), which is what the paper's 'first wins' looks "
                    f"at; but the gated effect fired {ev['effect_counts'].get('gate')} times (answers "
                    f"{ev['ledger_gate_answers']}) in {len(double)} of "
                    f"{len(co_double)} repetitions. "
                    f"The contract's CO counts the gated effect, not the outcome.")
    return {"llamaindex.row": Measured(value, why=why, compare_keys=("split steps", "wait_for_event PC"),
                                       receipts=tuple(r.probe for r in receipts))}


CAMPAIGN = Campaign(
    name=NAME,
    title="LlamaIndex Workflows: split-step input, in-step waits, snapshots on disk",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    headlines=headlines,
    packages=('llama-index-workflows', 'pydantic'),
    description=__doc__ or "",
)
