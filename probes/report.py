"""Tables every campaign chapter shows, built from receipts only (no framework import)."""

from __future__ import annotations

from typing import Any

from probes.core.receipt import Receipt


def verdict_table(receipts: list[Receipt]):
    """One row per (property, path): the labels over all repetitions (``checker.cell_text``), the
    first repetition's summary, and the documentation statement a ✗ or D rests on."""
    import pandas as pd

    from probes.core.checker import cell_text
    from probes.matrix import citation

    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for r in sorted(receipts, key=lambda r: r.probe):
        for v in r.verdicts:
            g = groups.setdefault((v.property.value, v.path), {"labels": [], "summary": v.summary, "doc": None})
            g["labels"].append(v.label)
            g["doc"] = g["doc"] or v.doc
    rows = [{"property": p, "path": path, "verdict": cell_text(g["labels"]),
             "observed (first rep)": g["summary"], "documentation": citation(g["doc"]).replace("\\|", "|")}
            for (p, path), g in sorted(groups.items(), key=lambda kv: (kv[0][1].startswith("tamper:"), kv[0]))]
    return pd.DataFrame(rows)


def harness_table(receipts: list[Receipt]):
    import pandas as pd

    return pd.DataFrame([{"probe": r.probe, "harness error": e} for r in receipts for e in r.harness_errors])


def timing_table(receipts: list[Receipt]):
    import pandas as pd

    return pd.DataFrame([{"probe": r.probe, "seconds": r.manifest.get("probe_seconds")}
                         for r in sorted(receipts, key=lambda r: r.probe)])
