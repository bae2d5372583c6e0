"""pydantic-graph 1.107.1 campaign: what ``iter_from_persistence`` does after a crash.

Safety (no re-execution) and liveness (the durable state can be resumed to the end)
are measured separately: a framework that refuses to resume satisfies every safety
property vacuously, which is why the contract has LV. Every protocol step runs in a
fresh interpreter; SIGKILLs are barrier-synchronised at named park points.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.checker import (
    Expectation,
    Property,
    Subject,
    check_eo,
    check_lv,
    check_pc,
    collapse,
    at_most_once,
    completes,
    effects_once,
    invalid_state_refused,
)
from probes.core.errors import HarnessError
from probes.core.history import Kind
from probes.core.oracle import cross_check
from probes.core.steps import ProtocolSteps
from probes.core.receipt import ProbeResult, Receipt

NAME = "pydantic_graph"
SUBJECT = Subject("pydantic-graph", "file")
# Tampered durable state is behaviour the paper did not measure: its own matrix row.
TAMPERED = Subject("pydantic-graph · tampered state", "file")
WORKLOAD = "probes.pydantic_graph.workload"
CHILD_TIMEOUT = 180.0
# crash kinds: exception inside NodeB, SIGKILL inside NodeB before / after its effect, SIGKILL between nodes
CRASHES = ("exception", "sigkill-before-effect", "sigkill-after-effect", "between-nodes")
FAMILIES = ("crash", "stray", "race", "claimed-pause", "invalid-write", "tamper")
TAMPERS = ("truncated-file", "wrong-type", "status-reset")

PARAMS = (
    Param("seed", "int", 0, 0, "campaign seed (recorded; the protocols use no randomness)"),
    Param("reps", "int", 3, 1, "repetitions of every protocol", minimum=1),
    Param("crashes", "list[str]", list(CRASHES), list(CRASHES), "crash kinds", CRASHES),
    Param("families", "list[str]", list(FAMILIES), list(FAMILIES), "protocol families", FAMILIES),
)


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    specs = []
    for rep in range(1, params["reps"] + 1):
        for family in FAMILIES:
            if family not in params["families"]:
                continue
            if family == "crash":
                specs += [ProbeSpec(f"crash.{c}.rep{rep}", {"family": family, "crash": c, "rep": rep})
                          for c in CRASHES if c in params["crashes"]]
            else:
                specs.append(ProbeSpec(f"{family}.rep{rep}", {"family": family, "rep": rep}))
    return sorted(specs, key=lambda s: s.id)


class _Probe(ProtocolSteps):
    def __init__(self, ctx: ProbeContext) -> None:
        self.file = ctx.workdir / "graph-run.json"
        self.fail_dir = ctx.workdir / "fail-markers"
        super().__init__(WORKLOAD, ctx.workdir, CHILD_TIMEOUT, common={"path": str(self.file)})

    def statuses(self) -> list[list[str]]:
        from probes.pydantic_graph.workload import statuses

        return statuses(str(self.file))


def _etype(info: Mapping[str, Any] | None) -> str | None:
    return None if not info else info["type"]


def _recovery_verdicts(p: _Probe, path: str, crashed: dict[str, Any], rec: dict[str, Any]) -> list:
    """EO (each of A, B once, and the run completed), PC and LV over the recorded history."""
    after = p.ledger.counts("recover")
    done = rec["error"] is None and rec["outcome"] is not None
    if done:
        p.log.append(Kind.COMPLETE, "recover", value=rec["outcome"])
    else:
        p.log.append(Kind.REFUSE, "recover", value=_etype(rec["error"]) or f"returned {rec['outcome']!r}")
    history = p.history()
    from probes.pydantic_graph.workload import RESULT

    eo = check_eo(history, Expectation(effects=("A", "B")))
    pc = check_pc(history, Expectation(prefix=("A",)))
    lv = check_lv(history, Expectation(result=RESULT))
    detail = (f"iter_from_persistence finished with output {rec['outcome']}" if done else
              f"iter_from_persistence raised {_etype(rec['error'])}: {rec['error']['message'] if rec['error'] else ''}")
    return [
        eo.verdict(SUBJECT, f"crash:{path}",
                   (f"recovered to output {rec['outcome']}; " if done else "recovery never completed (LV); ")
                   + f"effects {eo.evidence['effect_counts']}"
                   + ("" if eo.holds else f", off {eo.evidence['off']}"), recovered=done),
        pc.verdict(SUBJECT, f"crash:{path}", f"NodeA ran {after.get('A', 0)} time(s) during recovery"),
        lv.verdict(SUBJECT, f"crash:{path}", detail + f"; snapshot statuses after the crash {crashed['statuses']}",
                   detail=detail, statuses_after_crash=crashed["statuses"], outcome=rec["outcome"]),
    ]


def _crash(p: _Probe, crash: str) -> list:
    p.log.append(Kind.START, "first")
    if crash == "exception":
        crashed = p.child("start", "first", fail_dir=str(p.fail_dir)).result
        if _etype(crashed["error"]) != "InjectedCrash":
            raise HarnessError(f"the injected exception did not surface: {crashed['error']}")
        p.log.append(Kind.CRASH, "first", detail={"how": "exception", "where": "NodeB"})
    elif crash in ("sigkill-before-effect", "sigkill-after-effect"):
        p.child("start", "first", park_at=f"nodeB.{crash.split('-', 1)[1]}")
        p.log.append(Kind.CRASH, "first", detail={"how": "SIGKILL", "where": f"nodeB.{crash.split('-', 1)[1]}"})
        crashed = {"statuses": p.statuses()}
    else:
        p.child("start", "first", park_at="between", pause_after_a=True)
        p.log.append(Kind.CRASH, "first", detail={"how": "SIGKILL", "where": "between"})
        crashed = {"statuses": p.statuses()}
    p.log.append(Kind.RECOVER, "recover")
    rec = p.child("recover", "recover").result
    return _recovery_verdicts(p, crash, crashed, rec)


def _stray(p: _Probe) -> list:
    first = p.child("start", "first").result
    from probes.pydantic_graph.workload import RESULT

    if first["outcome"] != RESULT:
        raise HarnessError(f"the clean run did not end with {RESULT}: {first}")
    rec = p.child("recover", "stray").result
    total = p.ledger.counts()
    ok, ev = effects_once(total, ["A", "B"], completed=True)  # the first run completed (checked above)
    ev = {**ev, "stray_error": _etype(rec["error"]), "stray_outcome": rec["outcome"]}
    return [SUBJECT.not_applicable(
        Property.FI, "stray-after-completion",
        "iter_from_persistence resumes the one persisted run from its next snapshot; there is no operation that "
        "answers a pause with a value, so no resume that could declare FORK or RETRY"),
            SUBJECT.verdict(Property.CO, "stray-after-completion", ok, ev,
                            f"iter_from_persistence on the completed run: "
                            f"{'raised ' + _etype(rec['error']) if rec['error'] else 'ran again'}; effects {total}")]


def _race(p: _Probe) -> list:
    """Pause after NodeA; two processes call iter_from_persistence together (a barrier releases them)."""
    from probes.core.worker import WorkerPool

    p.child("start", "first", pause_after_a=True)
    with WorkerPool(f"{WORKLOAD}:Racer", 2, log_dir=p.file.parent / "workers") as pool:
        race = pool.race([{"ledger": str(p.ledger_path), "incarnation": f"racer-{i}", "path": str(p.file)}
                          for i in range(2)], timeout=CHILD_TIMEOUT)
    p.observations["race"] = [{"status": o.status, "value": o.value, "error": o.error[-600:],
                               "release_spread_s": race.release_spread_s} for o in race.outcomes]
    if not race.released or race.failures:
        raise HarnessError(f"racers were not released or failed: {[(o.status, o.error[-300:]) for o in race.outcomes]}")
    for i, o in enumerate(race.outcomes):
        cross_check(o.value["counter"], p.ledger, f"racer-{i}")
    from probes.pydantic_graph.workload import RESULT

    total = p.ledger.counts()
    ok, ev = at_most_once(total)  # CO: neither racer fired an effect the other already fired
    finished = sum(1 for o in race.outcomes if o.value["error"] is None)
    outcomes = [o.value.get("outcome") for o in race.outcomes]
    ev = {**ev, "racers_finished": finished,
          "racer_errors": sorted(str(_etype(o.value["error"])) for o in race.outcomes)}
    completed = any(o.value["error"] is None and o.value.get("outcome") is not None for o in race.outcomes)
    done = next((x for x in outcomes if x is not None), None)
    lv_ok, lv_ev = completes(completed, f"racer outcomes {outcomes}", outcome=done, result=RESULT,
                             lost=total.get("B", 0) == 0)
    path = "cross-process:two-resumers"
    return [SUBJECT.verdict(Property.CO, path, ok, ev,
                            f"two processes resumed the paused file together: {finished} finished, errors "
                            f"{ev['racer_errors']}; effects {total}"),
            SUBJECT.verdict(Property.LV, path, lv_ok, {**lv_ev, "effect_counts": total},
                            f"two resumers: {lv_ev['why'] or f'one completed with {done}'}")]


def _claimed(p: _Probe) -> list:
    """Pause after NodeA; a process claims the paused snapshot and dies; can another take over?"""
    p.child("start", "first", pause_after_a=True)
    p.child("recover", "claimer", park_at="claimed", claim_only=True)
    claimed = p.statuses()
    rec = p.child("recover", "recover").result
    from probes.pydantic_graph.workload import RESULT

    done = rec["error"] is None and rec["outcome"] is not None
    detail = (f"took over and finished with output {rec['outcome']}" if done else
              f"iter_from_persistence raised {_etype(rec['error'])}: {rec['error']['message']}")
    ok, ev = completes(done, detail, outcome=rec["outcome"], result=RESULT)
    ev = {**ev, "statuses_after_claim": claimed, "effect_counts": p.ledger.counts()}
    return [SUBJECT.verdict(Property.LV, "claimed-pause", ok, ev,
                            f"paused after NodeA, claimed by a process that was SIGKILLed (status "
                            f"{claimed[-1][2] if claimed else '?'}): {detail}")]


def _invalid_write(p: _Probe) -> list:
    """NodeA writes a str into the declared int counter: refused before persistence?"""
    first = p.child("start", "first", pause_after_a=True, invalid_state=True).result
    raw = Path(p.file).read_text() if Path(p.file).exists() else ""
    durable = '"eleven"' in raw
    rec = p.child("recover", "recover").result
    ok, ev = invalid_state_refused(first["error"] is not None, durable, _etype(first["error"]))
    ev = {**ev, "recovery_error": _etype(rec["error"]), "recovered": rec["error"] is None}
    return [SUBJECT.verdict(Property.CV, "write:invalid-state", ok, ev,
                            ("refused at write" if ok else "a str in the declared int field was persisted without "
                             f"an error (a serializer warning only); recovery then raised {_etype(rec['error'])}"))]


def _tamper(p: _Probe) -> list:
    """Edit the durable file while paused (or after a mid-node kill) and restore."""
    verdicts = []
    for kind in TAMPERS:
        inc = f"tamper-{kind}"
        if Path(p.file).exists():
            Path(p.file).unlink()
        if kind == "status-reset":
            # The hand repair an operator would try after a kill inside NodeB after its effect.
            p.child("start", f"first-{kind}", park_at="nodeB.after-effect")
        else:
            p.child("start", f"first-{kind}", pause_after_a=True)
        data = Path(p.file).read_text()
        if kind == "truncated-file":
            Path(p.file).write_text(data[: len(data) // 2])
        elif kind == "wrong-type":
            snaps = json.loads(data)
            snaps[-1]["state"]["counter"] = "not-a-number"
            Path(p.file).write_text(json.dumps(snaps))
        else:
            snaps = json.loads(data)
            snaps[-1]["status"] = "created"
            Path(p.file).write_text(json.dumps(snaps))

        def restore(inc: str = inc) -> tuple[str | None, str, Any]:
            rec = p.child("recover", inc).result
            return _etype(rec["error"]), "recover", rec["outcome"]

        verdicts.append(p.tampered_restore(TAMPERED, kind, inc, restore,
                                           lambda: {"B_in_all": p.ledger.counts().get("B", 0)}))
    return verdicts


def _persistence_missing() -> str | None:
    """Why the installed release has no state persistence to resume from, or None.

    pydantic-graph 2.0 removed ``pydantic_graph.persistence`` and
    ``Graph.iter_from_persistence`` (the graph API became the former ``beta``
    builder); every protocol here restores from persistence, so on such a release
    each cell is not applicable -- decided from what is installed, not assumed.
    """
    import importlib.metadata
    import importlib.util

    if importlib.util.find_spec("pydantic_graph.persistence") is not None:
        return None
    return (f"pydantic-graph {importlib.metadata.version('pydantic-graph')} has no state persistence "
            f"(no pydantic_graph.persistence module, no Graph.iter_from_persistence): nothing to resume from")


def _not_applicable(spec: ProbeSpec, why: str) -> list:
    """The cells the probe would have decided, each n/a for ``why``."""
    family = spec.args["family"]
    if family == "crash":
        return [SUBJECT.not_applicable(prop, f"crash:{spec.args['crash']}", why)
                for prop in (Property.EO, Property.PC, Property.LV)]
    if family == "tamper":
        return [TAMPERED.not_applicable(Property.CV, f"tamper:{kind}", why) for kind in TAMPERS]
    if family == "race":
        return [SUBJECT.not_applicable(prop, "cross-process:two-resumers", why) for prop in (Property.CO, Property.LV)]
    prop, path = {"stray": (Property.CO, "stray-after-completion"),
                  "claimed-pause": (Property.LV, "claimed-pause"),
                  "invalid-write": (Property.CV, "write:invalid-state")}[family]
    return [SUBJECT.not_applicable(prop, path, why)]


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    missing = _persistence_missing()
    if missing:  # the newest release (version drift) may lack the API the protocols drive
        return ProbeResult(observations={"persistence": missing}, verdicts=_not_applicable(spec, missing))
    p = _Probe(ctx)
    result = ProbeResult(observations=p.observations)
    family = spec.args["family"]
    try:
        if family == "crash":
            result.verdicts = _crash(p, spec.args["crash"])
        else:
            result.verdicts = {"stray": _stray, "race": _race, "claimed-pause": _claimed, "invalid-write": _invalid_write,
                               "tamper": _tamper}[family](p)
    except HarnessError as exc:
        result.verdicts = []
        result.harness_errors.append(str(exc))
    p.observations["ledger_rows"] = [list(r) for r in p.ledger.rows()]
    p.observations["final_statuses"] = p.statuses()
    result.metrics["child_seconds"] = {k: v["seconds"] for k, v in p.observations["children"].items()}
    return result


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    from probes.headline import Measured

    mid = ("crash:exception", "crash:sigkill-before-effect", "crash:sigkill-after-effect")
    lv = [v.label for r in receipts for v in r.verdicts if v.path in mid and v.property is Property.LV]
    safety = [v for r in receipts for v in r.verdicts if v.path in mid and v.property in (Property.EO, Property.PC)]
    if not lv:
        return {"pydantic_graph.liveness": "no mid-node crash probe in these receipts"}
    worst_safety = collapse(v.label for v in safety)
    # the behaviour behind the labels, read from the evidence of every mid-node crash path
    lv_evidence = [v.evidence for r in receipts for v in r.verdicts if v.path in mid and v.property is Property.LV]
    counts = [n for v in safety if v.property is Property.EO for n in (v.evidence.get("effect_counts") or {}).values()]
    value = {"LV": collapse(lv).value, "safety": worst_safety.value if worst_safety else "not measured",
             "effect_fired_twice": any(n > 1 for n in counts) if counts else None,
             "restore_refused": all("refuse" in (e.get("stopped_by") or ()) for e in lv_evidence),
             "completed": any(bool(e.get("completed")) for e in lv_evidence),
             "mid_node_crash_probes": len(lv)}
    unfinished = sorted({v.path for r in receipts for v in r.verdicts
                         if v.path in mid and v.property is Property.LV and v.evidence.get("completed") is False})
    docs = sorted({f"{v.doc.source} ({'documents the deviation' if v.doc.stance == 'deviation' else 'claims'})"
                   for r in receipts for v in r.verdicts
                   if v.path in mid and v.property is Property.LV and v.doc is not None})
    why = f"LV {value['LV']} rests on {', '.join(docs)} in ../shared/DOCS.md. " if docs else ""
    if unfinished:
        counts = sorted({str(v.evidence.get("effect_counts")) for v in safety
                         if v.property is Property.EO and v.path in unfinished})
        why += (f"The runs on {', '.join(unfinished)} never completed (LV {value['LV']}) with effect counts "
                f"{', '.join(counts)}; safety (EO at most once, PC) {value['safety']}"
                + (": the non-completion is a liveness failure only" if value["safety"] == "✓" else ""))
    return {"pydantic_graph.liveness": Measured(value, why=why, compare_keys=("LV", "safety"),
                                                receipts=tuple(r.probe for r in receipts))}


CAMPAIGN = Campaign(
    name=NAME,
    title="pydantic-graph: file persistence after crashes inside and between nodes",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    headlines=headlines,
    packages=('pydantic-graph', 'pydantic'),
    description=__doc__ or "",
)
