"""Tables and headline values built from LangGraph receipts only (no framework imports).

The notebook and the headline page both call these functions, so the chapter's row,
the crash matrix and the headline numbers cannot drift apart.
"""

from __future__ import annotations

from typing import Any, Iterable

from probes.core.checker import Label, Verdict, collapse
from probes.core.receipt import Receipt
from probes.matrix import worst

CAMPAIGN = "langgraph"


def link(probe: str, campaign: str = CAMPAIGN) -> str:
    """The relative receipt link every verdict in the book carries."""
    return f"receipts/{campaign}/{probe}.json"


def cells(receipts: Iterable[Receipt]) -> list[dict[str, Any]]:
    """One row per verdict: property, path, backend, label, summary, receipt link."""
    out = []
    for r in sorted(receipts, key=lambda r: r.probe):
        for v in r.verdicts:
            out.append({"property": v.property.value, "path": v.path, "backend": v.backend, "label": v.label.value,
                        "framework": v.framework, "summary": v.summary, "probe": r.probe, "receipt": link(r.probe)})
    return out


def _verdicts(receipts: Iterable[Receipt]) -> list[tuple[Receipt, Verdict]]:
    return [(r, v) for r in receipts for v in r.verdicts]


def _class(labels: list[Label]) -> str:
    """Collapse labels into the published row's vocabulary: ✗ for any violation (✗, D, U)."""
    w = collapse(labels)
    if w is None:
        return "not measured"
    return "✗" if w.violates else w.value


# Which verdicts make up each published row key. CO cross-process (racing resumers) is
# measured by the consume_race campaign, not here.
ROW_KEYS: dict[str, Any] = {
    "PC": lambda v: v.property.value == "PC" and v.path.startswith(("interrupt:", "park-kill:")),
    "EO interrupt": lambda v: v.property.value == "EO" and v.path.startswith(("interrupt:", "park-kill:")),
    "EO crash": lambda v: v.property.value == "EO" and v.path.startswith("crash:"),
    "FD": lambda v: v.property.value == "FD",
    "CV": lambda v: v.property.value == "CV",
    "CO sequential": lambda v: v.property.value == "CO",
    "RD": lambda v: v.property.value == "RD",
}
EXTRA_KEYS: dict[str, Any] = {
    "PC crash (recover=none)": lambda v: v.property.value == "PC" and v.path.startswith("crash:") and v.path.endswith("recover=none"),
    "PC crash (recover=resubmit)": lambda v: v.property.value == "PC" and v.path.startswith("crash:") and v.path.endswith("recover=resubmit"),
    "EO crash (recover=none)": lambda v: v.property.value == "EO" and v.path.startswith("crash:") and v.path.endswith("recover=none"),
    "EO crash (recover=resubmit)": lambda v: v.property.value == "EO" and v.path.startswith("crash:") and v.path.endswith("recover=resubmit"),
}


def row(receipts: list[Receipt], framework: str = "langgraph") -> dict[str, Any]:
    """The LangGraph row in the published vocabulary, plus per-recovery-mode crash cells."""
    pairs = [(r, v) for r, v in _verdicts(receipts) if v.framework == framework and r.args.get("kind") != "version"]
    out: dict[str, Any] = {}
    for key, pred in {**ROW_KEYS, **EXTRA_KEYS}.items():
        out[key] = _class([v.label for _, v in pairs if pred(v)])
    return out


def row_labels(receipts: list[Receipt], framework: str = "langgraph") -> dict[str, dict[str, str]]:
    """Per row key, the exact label of every path (worst over backends)."""
    pairs = [(r, v) for r, v in _verdicts(receipts) if v.framework == framework and r.args.get("kind") != "version"]
    out: dict[str, dict[str, str]] = {}
    for key, pred in {**ROW_KEYS, **EXTRA_KEYS}.items():
        by_path: dict[str, list[Label]] = {}
        for _, v in pairs:
            if pred(v):
                by_path.setdefault(v.path, []).append(v.label)
        out[key] = {p: worst(labs).value for p, labs in sorted(by_path.items())}
    return out


def crash_matrix(receipts: list[Receipt]) -> list[dict[str, Any]]:
    """Kill point x recovery mode x backend: s1/s2 run counts, per rep, and the labels."""
    rows = []
    for r in sorted(receipts, key=lambda r: r.probe):
        if r.args.get("kind") != "crash":
            continue
        eo = next((v for v in r.verdicts if v.property.value == "EO"), None)
        pc = next((v for v in r.verdicts if v.property.value == "PC"), None)
        if eo is None:
            continue
        na = eo.label is Label.NA
        ev = eo.evidence
        rows.append({
            "point": r.args["point"],
            "durability": r.args.get("durability", "sync"),
            "recovery": r.args["mode"],
            "backend": r.args["backend"],
            "s1_runs": None if na else ev["effect_counts"]["s1"],
            "s2_runs": None if na else ev["effect_counts"]["s2"],
            "per_rep": None if na else " ".join(f"{c['s1']}/{c['s2']}" for c in ev["per_rep"]),
            "identical": None if na else ev["identical_across_reps"],
            "recovered": None if na else all(ev["recovered"]),
            "durable_prefix": None if (pc is None or pc.label is Label.NA) else ",".join(pc.evidence["durable_prefix"]) or "-",
            "completed": None if na else all(ev.get("completed", ev["recovered"])),
            "EO": eo.label.value,
            "PC": pc.label.value if pc else "",
            "LV": next((v.label.value for v in r.verdicts if v.property.value == "LV"), ""),
            "receipt": link(r.probe),
            "probe": r.probe,
            "why_na": ev.get("why") if na else "",
        })
    return rows


def _probe_values(receipts: list[Receipt], prefix: str, key: str) -> dict[str, Any]:
    return {r.args.get("backend", r.probe): r.observations.get(key) for r in receipts
            if r.probe.startswith(prefix) and not r.harness_errors and r.observations}


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    """Measured values for data/published.json ids langgraph.* (see probes/headline.py)."""
    from probes.headline import Measured

    out: dict[str, Any] = {}
    stock = [r for r in receipts if r.args.get("arm", "stock") == "stock"]

    fd = _probe_values(stock, "fd.bare.", "second_outcome")
    if fd:
        values = sorted(set(fd.values()), key=repr)
        observed = values[0] if len(values) == 1 else "differs by backend"
        out["langgraph.fd_outcome"] = Measured(
            {"observed": observed, "expected": 1, "per_backend": dict(sorted(fd.items()))},
            why="backends disagree; see the per_backend values" if len(values) > 1 else "",
            compare_keys=("observed", "expected"),
            receipts=tuple(link(r.probe) for r in stock if r.probe.startswith("fd.bare.")))
    else:
        out["langgraph.fd_outcome"] = "no fd.bare receipt without harness errors"

    measured_row = row(stock)
    labels = row_labels(stock)
    out["langgraph.row"] = Measured(
        {**measured_row, "CO cross-process": "measured by the consume_race campaign", "labels": labels},
        why=("The row collapses each key to ✓ / ✗ (any of ✗, D, U counts as ✗; the exact labels are under 'labels'). "
             "'EO crash' is the worst over both recovery modes: with the documented invoke(None, cfg) recovery only "
             "the insert-to-persist windows (kill point C, the window point and K-points inside them) duplicate an "
             "effect, while re-submitting the input re-runs s1 at every point -- see the per-mode keys."),
        compare_keys=tuple(k for k in ROW_KEYS),
        receipts=tuple(sorted({link(r.probe) for r in stock if r.verdicts})))

    matrix = [m for m in crash_matrix(stock) if m["s1_runs"] is not None and m["durability"] == "sync"]
    paper_points = ("A", "B", "C")
    by_mode: dict[str, dict[str, Any]] = {}
    for m in matrix:
        by_mode.setdefault(m["recovery"], {})[f"{m['point']}/{m['backend']}"] = m["s1_runs"]
    resub = [m["s1_runs"] for m in matrix if m["recovery"] == "resubmit" and m["point"] in paper_points]
    if resub:
        s1 = resub[0] if len(set(resub)) == 1 else sorted(set(resub))
        out["langgraph.crash_s1_runs"] = Measured(
            {"s1_runs": s1, "recovery_mode": "resubmit (the original input re-submitted, as published)",
             "s1_runs_by_point_resubmit": by_mode.get("resubmit", {}),
             "s1_runs_by_point_none": by_mode.get("none", {})},
            why=("s1_runs is taken over kill points A, B, C with the input re-submitted (the published protocol); "
                 "a list means the points disagree. With invoke(None, cfg) see s1_runs_by_point_none."),
            compare_keys=("s1_runs",),
            receipts=tuple(m["receipt"] for m in matrix if m["point"] in paper_points))
    else:
        out["langgraph.crash_s1_runs"] = "no resubmit crash cell at kill points A/B/C on a durable backend was run"
    return out
