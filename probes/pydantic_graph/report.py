"""Tables and figures for the chapter, built from receipts only (no framework import)."""

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


def crash_figure(receipts: list[Receipt]):
    """Per crash kind: effects A and B fired (all processes) and whether recovery completed."""
    import matplotlib.pyplot as plt
    import numpy as np

    rows: dict[str, dict[str, Any]] = {}
    for r in receipts:
        for v in r.verdicts:
            if v.path.startswith("crash:") and v.property.value == "EO":
                rows.setdefault(v.path[6:], {"counts": v.evidence["effect_counts"], "done": v.evidence["recovered"]})
    kinds = sorted(rows)
    x = np.arange(len(kinds))
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for i, eff in enumerate(("A", "B")):
        ax.bar(x + (i - 0.5) * 0.35, [rows[k]["counts"].get(eff, 0) for k in kinds], 0.35, label=f"effect {eff}")
    for xi, k in zip(x, kinds):
        ax.text(xi, 1.15, "completed" if rows[k]["done"] else "never resumes", ha="center", fontsize=8,
                color="tab:green" if rows[k]["done"] else "tab:red")
    ax.set_xticks(x, kinds, rotation=15)
    ax.set_ylim(0, 1.5)
    ax.set_ylabel("effect fires (all processes)")
    ax.set_title("pydantic-graph: crash, then iter_from_persistence")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    fig.tight_layout()
    return fig
