"""Tables every campaign chapter shows, built from receipts only (no framework import)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from probes.core.receipt import Receipt


def verdict_table(receipts: list[Receipt]):
    """One row per (property, path): the labels over all repetitions and one summary."""
    import pandas as pd

    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for r in sorted(receipts, key=lambda r: r.probe):
        for v in r.verdicts:
            g = groups.setdefault((v.property.value, v.path), {"labels": defaultdict(int), "summary": v.summary,
                                                                "doc": v.doc.page if v.doc else ""})
            g["labels"][v.label.value] += 1
    rows = [{"property": p, "path": path,
             "verdict": " / ".join(f"{lab}×{n}" for lab, n in sorted(g["labels"].items())),
             "observed (first rep)": g["summary"], "documentation": g["doc"]}
            for (p, path), g in sorted(groups.items(), key=lambda kv: (kv[0][1].startswith("tamper:"), kv[0]))]
    return pd.DataFrame(rows)


def harness_table(receipts: list[Receipt]):
    import pandas as pd

    return pd.DataFrame([{"probe": r.probe, "harness error": e} for r in receipts for e in r.harness_errors])


def timing_table(receipts: list[Receipt]):
    import pandas as pd

    return pd.DataFrame([{"probe": r.probe, "seconds": r.manifest.get("probe_seconds")}
                         for r in sorted(receipts, key=lambda r: r.probe)])
