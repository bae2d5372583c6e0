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
    DocRef,
    Property,
    Subject,
    at_most_once,
    completes,
    exactly_once,
    invalid_state_refused,
    prefix_not_reentered,
)
from probes.core.errors import HarnessError
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

RESTORE_DOC = DocRef(
    page="pydantic_graph/graph.py: Graph.iter_from_persistence docstring (pydantic-graph 1.107.1)",
    quote=("This method has similar functionality to [`iter`][pydantic_graph.graph.Graph.iter], but instead of "
           "passing the node to run, it will restore the node and state from state persistence."),
    stance="claims",
)

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
    total, after = p.ledger.counts(), p.ledger.counts("recover")
    eo_ok, eo_ev = at_most_once(total)
    pc_ok, pc_ev = prefix_not_reentered({"A": after.get("A", 0)}, ["A"])
    done = rec["error"] is None and rec["outcome"] is not None
    detail = (f"iter_from_persistence finished with output {rec['outcome']}" if done else
              f"iter_from_persistence raised {_etype(rec['error'])}: {rec['error']['message'] if rec['error'] else ''}")
    lv_ok, lv_ev = completes(done, detail)
    lv_ev = {**lv_ev, "statuses_after_crash": crashed["statuses"], "outcome": rec["outcome"]}
    out = [
        SUBJECT.verdict(Property.EO, f"crash:{path}", eo_ok, {**eo_ev, "recovered": done},
                        f"effects in all after the crash and recovery attempt: {eo_ev['effect_counts']}"),
        SUBJECT.verdict(Property.PC, f"crash:{path}", pc_ok, pc_ev,
                        f"NodeA ran {after.get('A', 0)} time(s) during recovery"),
        SUBJECT.verdict(Property.LV, f"crash:{path}", lv_ok, lv_ev,
                        (detail + f"; snapshot statuses after the crash {crashed['statuses']}"),
                        doc=None if lv_ok else RESTORE_DOC),
    ]
    if done:
        ok, ev = exactly_once(total, ["A", "B"])
        out[0] = SUBJECT.verdict(Property.EO, f"crash:{path}", ok, {**ev, "recovered": True},
                                 f"recovered to output {rec['outcome']}; effects {ev['effect_counts']}")
    return out


def _crash(p: _Probe, crash: str) -> list:
    if crash == "exception":
        crashed = p.child("start", "first", fail_dir=str(p.fail_dir)).result
        if _etype(crashed["error"]) != "InjectedCrash":
            raise HarnessError(f"the injected exception did not surface: {crashed['error']}")
    elif crash in ("sigkill-before-effect", "sigkill-after-effect"):
        p.child("start", "first", park_at=f"nodeB.{crash.split('-', 1)[1]}")
        crashed = {"statuses": p.statuses()}
    else:
        p.child("start", "first", park_at="between", pause_after_a=True)
        crashed = {"statuses": p.statuses()}
    rec = p.child("recover", "recover").result
    return _recovery_verdicts(p, crash, crashed, rec)


def _stray(p: _Probe) -> list:
    first = p.child("start", "first").result
    if first["outcome"] != 11:
        raise HarnessError(f"the clean run did not end with 11: {first}")
    rec = p.child("recover", "stray").result
    total = p.ledger.counts()
    ok, ev = at_most_once(total)
    ev = {**ev, "stray_error": _etype(rec["error"]), "stray_outcome": rec["outcome"]}
    return [SUBJECT.verdict(Property.CO, "stray-after-completion", ok, ev,
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
    total = p.ledger.counts()
    ok, ev = at_most_once(total)
    finished = sum(1 for o in race.outcomes if o.value["error"] is None)
    ev = {**ev, "racers_finished": finished,
          "racer_errors": sorted(str(_etype(o.value["error"])) for o in race.outcomes)}
    return [SUBJECT.verdict(Property.CO, "cross-process:two-resumers", ok, ev,
                            f"two processes resumed the paused file together: {finished} finished, errors "
                            f"{ev['racer_errors']}; effects {total}")]


def _claimed(p: _Probe) -> list:
    """Pause after NodeA; a process claims the paused snapshot and dies; can another take over?"""
    p.child("start", "first", pause_after_a=True)
    p.child("recover", "claimer", park_at="claimed", claim_only=True)
    claimed = p.statuses()
    rec = p.child("recover", "recover").result
    done = rec["error"] is None and rec["outcome"] is not None
    detail = (f"took over and finished with output {rec['outcome']}" if done else
              f"iter_from_persistence raised {_etype(rec['error'])}: {rec['error']['message']}")
    ok, ev = completes(done, detail)
    ev = {**ev, "statuses_after_claim": claimed, "effect_counts": p.ledger.counts()}
    return [SUBJECT.verdict(Property.LV, "claimed-pause", ok, ev,
                            f"paused after NodeA, claimed by a process that was SIGKILLed (status "
                            f"{claimed[-1][2] if claimed else '?'}): {detail}", doc=None if ok else RESTORE_DOC)]


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
        rec = p.child("recover", inc).result
        counts = p.ledger.counts(inc)
        loud = rec["error"] is not None and not counts
        total_b = p.ledger.counts().get("B", 0)
        ev = {"error": _etype(rec["error"]), "effect_counts": counts, "outcome": rec["outcome"],
              "B_in_all": total_b}
        summary = (f"refused loudly ({_etype(rec['error'])}) before any effect" if loud else
                   f"accepted silently; output {rec['outcome']}, effects during recovery {counts}, "
                   f"B fired {total_b} time(s) in all")
        verdicts.append(TAMPERED.verdict(Property.CV, f"tamper:{kind}", loud, ev, summary))
    return verdicts


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
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

    order = {"U": 4, "✗": 3, "D": 2, "✓": 1, "n/a": 0}
    mid = ("crash:exception", "crash:sigkill-before-effect", "crash:sigkill-after-effect")
    lv = [v.label.value for r in receipts for v in r.verdicts if v.path in mid and v.property is Property.LV]
    safety = [v.label.value for r in receipts for v in r.verdicts
              if v.path in mid and v.property in (Property.EO, Property.PC)]
    if not lv:
        return {"pydantic_graph.liveness": "no mid-node crash probe in these receipts"}
    value = {"LV": max(lv, key=order.get), "safety": max(safety, key=order.get) if safety else "not measured",
             "mid_node_crash_probes": len(lv)}
    return {"pydantic_graph.liveness": Measured(value, why="", compare_keys=("LV", "safety"),
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
