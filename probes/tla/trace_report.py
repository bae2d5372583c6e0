"""The trace-validation chapter's tables (the ``traces`` campaign's notebook calls one per table).

Presentation only: each function reads the run's one receipt (``probes.tla.validation``) and
returns an HTML table; the rows come from ``probes.tla.trace``'s table functions.
"""

from __future__ import annotations

from typing import Any, Mapping

from probes import chapter
from probes.tla import trace as T

# short column names for the per-family table (the caption says what each means)
FAMILY_COLUMNS = {"histories": "n", "reference": "ref", "by a fault": "fault", "faults that explain": "explained by",
                  "unexplained": "no setting", "outside the model": "outside", "not mapped": "unmapped",
                  "all verdicts ✓": "all ✓", "of them reference": "all ✓ & ref"}


def _observations(run: Any) -> Mapping[str, Any]:
    return next((r.observations for r in run.receipts if r.observations.get("group") == "traces"),
                {"traces": [], "sources": {}})


def families(run: Any) -> chapter.HTML:
    """One line per probe family of every framework: which settings admit its histories."""
    rows = T.family_table(_observations(run)["traces"])
    several = {}
    for r in rows:  # name the framework only where a campaign has histories of several
        several.setdefault(r["campaign"], set()).add(r["framework"])
    out = []
    for r in rows:
        label = f"{r['campaign']} · {r['framework']}" if len(several[r["campaign"]]) > 1 else r["campaign"]
        out.append({"histories of": label, **{FAMILY_COLUMNS.get(k, k): v for k, v in r.items()
                                               if k not in ("campaign", "framework")}})
    return chapter.table(out, caption="n: histories; ref: admitted by the reference semantics; fault: admitted only "
                                      "with a fault switch (explained by: the smallest such settings); no setting: "
                                      "admitted by none (why: the table below); outside: tampered state; all ✓: "
                                      "every verdict on it conformant, & ref: of those, admitted by the reference")


def conformant_findings(run: Any) -> chapter.HTML:
    """Histories on which every verdict is ✓ but the reference semantics does not admit them."""
    rows = T.conformant_findings(_observations(run)["traces"])
    return chapter.table(rows, caption=f"histories with every verdict ✓ that the reference semantics does not "
                                       f"admit: {len(rows)}", empty="none: every all-✓ history is a reference one")


def unexplained(run: Any) -> chapter.HTML:
    """Histories no setting admits, grouped by what the model has no step for."""
    traces = _observations(run)["traces"]
    rows = T.unexplained_table(traces)
    classes = "; ".join(f"{name} {n}" for name, n in T.gap_class_counts(traces).items())
    return chapter.table(rows, caption=f"recorded histories no setting admits: {sum(r['histories'] for r in rows)}, "
                                       f"by class: {classes}", empty="none: some setting admits every history")


def known_behaviours(run: Any) -> chapter.HTML:
    """The hand-built histories: does the validator name the cause it should?"""
    rows = []
    for r in _observations(run)["traces"]:
        if r.get("campaign") != T.KNOWN:
            continue
        explained, expected = ", ".join(r.get("explained_by") or []), ", ".join(r["expected"])
        rows.append({"family": r["family"], "expected": expected or "no setting",
                     "explained by": explained or "no setting", "model steps": r.get("observations"),
                     "agrees": explained == expected})
    return chapter.table(rows, caption="known behaviours (probes/tla/known_histories.py): the settings expected "
                                       "to explain each, and those TLC found")


def sources(run: Any) -> chapter.HTML:
    """Where the histories came from: the run of each campaign the book shows."""
    src = _observations(run)["sources"]
    rows = [{"campaign": name, **s} for name, s in src.items()]
    total = sum(s.get("histories", 0) for s in src.values())
    without = sum(s.get("receipts_without_history", 0) for s in src.values())
    return chapter.table(rows, caption=f"recorded histories found: {total} (receipts without a history: {without})")
