"""The consume race's published values (the dose-response, REMIT's gate, the concurrency series), from its receipts.

This was ``probes.studies.consume_race.campaign``'s own until issue 25 moved it here: the campaign never imports this layer
(measurement does not know which of its cells the paper published)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

from probes.studies.consume_race.campaign import ARMS, BACKENDS, _num, cells, window_estimates
from probes.core.receipt import Receipt
from probes.headline import Measured, NotMeasured, own_build, recorded_build


def _builds(receipts: list[Receipt], probes: set[str]) -> tuple[str, str]:
    """(remit-contract's build as the cells' receipts record it, this project's remit_ref build)."""
    recs = [r for r in receipts if r.probe in probes]
    theirs = recorded_build(recs, "remit-contract", "remit_ref")
    if not theirs.startswith("remit-contract "):
        theirs = "remit-contract (version not recorded in these receipts)"
    return theirs, own_build("remit_ref", recs)


def _gate_distribution(cells_: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, int]]:
    """The cell the published value is compared with (grid, largest k, jitter 0, SQLite first) and the
    distribution summed over every cell."""
    best = max(cells_, key=lambda c: (c["series"] == "grid", c["k"], c["jitter_ms"] == 0.0, c["backend"] == "sqlite"))
    total: Counter = Counter()
    for c in cells_:
        for f, n in c["distribution"].items():
            total[f] += n
    return best, {f: total[f] for f in sorted(total, key=int)}


def gate_fix_headline(receipts: list[Receipt], contract: list[dict[str, Any]], ours: list[dict[str, Any]]) -> Any:
    """``consume_race.gate_fix`` on the paper's build (remit-contract's gate, arm ``contract``) when it
    ran, with this project's gate (arm ``gate``, remit_ref) beside it as ``reimplementation``; on
    remit_ref alone otherwise, whose build then says it is a re-implementation."""
    scored = contract or ours
    best, total = _gate_distribution(scored)
    theirs_build, own = _builds(receipts, {c["probe"] for c in scored})
    value: dict[str, Any] = {"distribution": best["distribution"], "cell": best["probe"], "all_gate_cells": total,
                             "gate_cells": len(scored)}
    if contract and ours:
        o_best, o_total = _gate_distribution(ours)
        value["reimplementation"] = {"distribution": o_best["distribution"], "cell": o_best["probe"],
                                     "all_gate_cells": o_total, "gate_cells": len(ours)}
    who = ("remit-contract's cross-process gate (the paper's build)" if contract else
           "remit_ref's gate (this project's re-implementation; the contract arm was not run)")
    return Measured(value, f"{who} is measured in every cell it runs; the published value is one cell of 10 reps"
                    + ("; 'reimplementation' is remit_ref's gate over the same cells, shown, not scored"
                       if contract and ours else ""),
                    compare_keys=("distribution",), receipts=(best["probe"],),
                    build=theirs_build if contract else own)


def concurrency_headlines(receipts: list[Receipt], conc: list[dict[str, Any]]) -> dict[str, Any]:
    """``remit.concurrency`` and ``remit.stock_duplicates`` from the concurrency protocol's cells:
    k clients resume the *same* thread's interrupt at a barrier, trial after trial."""
    if not conc:
        why = "the concurrency protocol was not run (concurrency_arms / concurrency_trials)"
        return {"remit.concurrency": why, "remit.stock_duplicates": why}

    def arm_figures(arm: str) -> dict[str, Any]:
        cells_ = [c for c in conc if c["arm"] == arm and c["reps_measured"]]
        by = {c["backend"]: {"duplicate_trials": c["duplicate_reps"], "lost_trials": c["lost_reps"],
                             "trials": c["reps_measured"], "k": c["k"],
                             "duplicate_rate_wilson95": c["duplicate_rep_wilson95"]} for c in cells_}
        return {"cells": cells_, "by_backend": by,
                "violations": sum(c["duplicate_reps"] + c["lost_reps"] for c in cells_),
                "trials": sum(c["reps_measured"] for c in cells_)}

    out: dict[str, Any] = {}
    figures = {arm: arm_figures(arm) for arm in ARMS}
    scored_arm = "contract" if figures["contract"]["cells"] else "gate" if figures["gate"]["cells"] else None
    if scored_arm is None:
        out["remit.concurrency"] = "no REMIT arm ran the concurrency protocol (concurrency_arms)"
    else:
        f = figures[scored_arm]
        theirs_build, own = _builds(receipts, {c["probe"] for c in f["cells"]})
        value: dict[str, Any] = {"violations": f["violations"], "trials": f["trials"], "by_backend": f["by_backend"]}
        for arm in ARMS:
            if arm != scored_arm and figures[arm]["cells"]:
                value[{"stock": "stock", "gate": "reimplementation", "contract": "remit_contract"}[arm]] = \
                    {"violations": figures[arm]["violations"], "trials": figures[arm]["trials"],
                     "by_backend": figures[arm]["by_backend"]}
        out["remit.concurrency"] = Measured(
            value, why=("k clients (processes released at a barrier) resume the same thread's interrupt in every "
                        "trial; a violation is a trial that fired the gated effect twice or never. The published "
                        "6,400 protocol executions are the size of the paper's benchmark grid, a different protocol: "
                        "not measured here. Scored: " + ("remit-contract's gate (the paper's build)"
                                                         if scored_arm == "contract" else "remit_ref's gate")
                        + "; the other arms are shown beside it"),
            compare_keys=("violations",), receipts=tuple(c["probe"] for c in f["cells"]),
            build=theirs_build if scored_arm == "contract" else own)
    s = figures["stock"]
    if s["cells"]:
        dup = sum(c["duplicate_reps"] for c in s["cells"])
        out["remit.stock_duplicates"] = Measured(
            {"stock_duplicates": dup > 0, "duplicate_trials": dup, "trials": s["trials"],
             "by_backend": s["by_backend"]},
            why="stock LangGraph through the same concurrency protocol (k clients resuming one thread's interrupt "
                "at a barrier): trials that fired the gated effect more than once, k of n per backend",
            compare_keys=("stock_duplicates",), receipts=tuple(c["probe"] for c in s["cells"]))
    else:
        out["remit.stock_duplicates"] = "the stock arm did not run the concurrency protocol (concurrency_arms)"
    return out


RACE_WHY = ("a race: how many racers get in before the first commit depends on scheduling on the measuring "
            "machine; the published value is one run of 10 reps")


def _spread_sentence(grid: list[dict[str, Any]], windows: Mapping[tuple[str, float], Mapping[str, Any]]) -> str:
    """Which jitters spread racers past the measured window edge -- computed, not assumed."""
    edges = [w["fired_max_ms"] for (_, g), w in windows.items() if g == 0.0 and w.get("fired_max_ms") is not None]
    if not edges:
        return ""
    edge = max(edges)
    wider = sorted({c["jitter_ms"] for c in grid if c["jitter_ms"] > edge})
    if not wider:
        return f"; no jitter of this grid exceeds the latest racer that still fired ({edge} ms)"
    shown = ", ".join(f"{j:g}" for j in wider)
    return (f", so a jitter of {shown} ms spreads racers past the latest one that still fired ({edge} ms "
            "after the first)")


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    rows = cells(receipts)
    out: dict[str, Any] = {}

    def find(**want: Any) -> list[dict[str, Any]]:
        return [c for c in rows if all(c.get(key) == v for key, v in want.items())]

    def first(**want: Any) -> dict[str, Any] | None:
        got = find(**want)
        return got[0] if got else None

    c = first(series="grid", arm="stock", k=2, jitter_ms=0.0, gate_ms=0.0, backend="sqlite") or \
        first(series="grid", arm="stock", k=2, jitter_ms=0.0, gate_ms=0.0)
    out["consume_race.k2"] = (Measured({"distribution": c["distribution"], "backend": c["backend"],
                                        "reps": c["reps_measured"]}, RACE_WHY, compare_keys=("distribution",),
                                       receipts=(c["probe"],), samples=("distribution",))
                              if c else "no stock cell with k=2, jitter 0 in this run's grid")
    for backend in BACKENDS:
        c = first(series="grid", arm="stock", k=16, jitter_ms=0.0, gate_ms=0.0, backend=backend)
        out[f"consume_race.k16_{backend}"] = (
            Measured({"distribution": c["distribution"], "reps": c["reps_measured"]}, RACE_WHY,
                     compare_keys=("distribution",), receipts=(c["probe"],), samples=("distribution",))
            if c else f"no stock cell with k=16, jitter 0 on {backend} in this run's grid")
    grid = [c for c in find(series="grid", arm="stock", gate_ms=0.0) if c["saturation"] is not None]
    if grid:
        sats = [c["saturation"] for c in grid]
        short = [c for c in grid if c["saturation"] < 1.0]
        by_jitter = Counter(c["jitter_ms"] for c in short)
        windows = {(w["backend"], w["gate_ms"]): w for w in window_estimates(receipts)}
        w0 = [f"{b}: a tenth of the racers that missed had started only {w['missed_p10_ms']} ms after the first "
              f"racer, the latest one that still fired {w['fired_max_ms']} ms after it"
              for (b, g), w in sorted(windows.items()) if g == 0.0 and w["missed_p10_ms"] is not None]
        why = (f"{len(short)} cells fall short of 1.0, by jitter: "
               + ", ".join(f"{j:g} ms: {n}" for j, n in sorted(by_jitter.items()))
               + ". With a gated node that does no work, the window is only as long as one resume takes to "
               "commit the consumed checkpoint on this machine (" + ("; ".join(w0) or "not estimated")
               + ")" + _spread_sentence(grid, windows)
               + " (the published grid implies a wider window on the paper's machine); the dose-response shows the window "
               "growing with the gated node's duration, which is the paper's mechanism. " + RACE_WHY)
        out["consume_race.grid"] = Measured(
            {"saturated_cells": sum(1 for s in sats if s >= 1.0), "cells": len(grid), "min_saturation": min(sats),
             "unsaturated_by_jitter_ms": {f"{j:g}": n for j, n in sorted(by_jitter.items())}},
            why, tolerance=0.1, compare_keys=("saturated_cells", "cells", "min_saturation"),
            receipts=tuple(c["probe"] for c in grid))
    else:
        out["consume_race.grid"] = "no stock main-grid cells in this run"
    for gate in (0.0, 500.0, 2000.0):
        key = f"consume_race.dose_gate{_num(gate)}"
        curve = {}
        for backend in BACKENDS:
            pts = sorted(find(series="dose", arm="stock", gate_ms=gate, backend=backend), key=lambda c: c["jitter_ms"])
            if pts:
                curve[backend] = pts
        if not curve:
            out[key] = f"no stock dose-response cells with gate {_num(gate)} ms in this run"
            continue
        main = curve.get("sqlite") or next(iter(curve.values()))
        value = {"saturation": [c["saturation"] for c in main], "jitter_ms": [c["jitter_ms"] for c in main],
                 "backend": main[0]["backend"]}
        for backend, pts in curve.items():
            value[f"saturation_{backend}"] = [c["saturation"] for c in pts]
            inside = [c["jitter_ms"] for c in pts if c["saturation"] is not None and c["saturation"] >= 0.95]
            value[f"last_saturated_jitter_ms_{backend}"] = max(inside) if inside else None
        out[key] = Measured(value, RACE_WHY + "; the shape (window edge grows with the gated node's duration) is "
                            "the claim, single points move", tolerance=0.15, compare_keys=("saturation",),
                            receipts=tuple(c["probe"] for pts in curve.values() for c in pts))
    gate_cells = [c for c in find(arm="contract") if c["reps_measured"] and c["series"] != "concurrency"]
    ours = [c for c in find(arm="gate") if c["reps_measured"] and c["series"] != "concurrency"]
    unavailable = [r for r in receipts if r.observations.get("available") is False]
    if gate_cells or ours:
        out["consume_race.gate_fix"] = gate_fix_headline(receipts, gate_cells, ours)
        every_gate = gate_cells + ours
        hosts = sorted({str((r.manifest or {}).get("platform")) for r in receipts
                        if r.probe in {c["probe"] for c in every_gate}})
        out["consume_race.two_hosts"] = NotMeasured(
            f"every gate cell of this run raced on one machine (the {len(every_gate)} gate cells' receipts record "
            f"{len(hosts)} platform(s): {', '.join(hosts)}); no protocol of this campaign spans two hosts"
            if len(hosts) == 1 else
            f"the gate cells ran on {len(hosts)} platforms, but each cell's racers share one machine; no protocol "
            "of this campaign races across two hosts")
    elif unavailable:
        out["consume_race.gate_fix"] = "gate arm not available: " + unavailable[0].observations["why"]
    else:
        out["consume_race.gate_fix"] = "gate arm not run (arms parameter)"
    out.update(concurrency_headlines(receipts, find(series="concurrency")))
    return out
