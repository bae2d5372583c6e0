"""Tables and figures for the chapter, built from receipts only (no framework import)."""

from __future__ import annotations

from typing import Any

from probes.core.receipt import Receipt
from probes.report import harness_table, timing_table, verdict_table  # noqa: F401 -- the chapter calls them here


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
