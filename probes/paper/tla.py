"""The model checking's published values (R0–R9, the fault footprint, R8's scale), from the ``tlc`` campaign's receipts.

This was ``probes.tla.campaign``'s own until issue 25 moved it here: the campaign never imports this layer
(measurement does not know which of its cells the paper published)."""

from __future__ import annotations

from typing import Any, Mapping

from probes.core.receipt import Receipt
from probes.headline import Measured, tolerance_text
from probes.tla.campaign import R8_TOLERANCE, UNREDUCED_R8


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
