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


def kill_figure(receipts: list[Receipt]):
    """Per kill point and turn: how often each order was charged after recovery (contract: 1)."""
    import matplotlib.pyplot as plt

    cells: dict[tuple[str, int], dict[str, int]] = {}
    for r in receipts:
        for v in r.verdicts:
            if v.path.startswith("kill:") and v.property.value == "EO":
                cells.setdefault((v.path[5:], v.evidence["killed_turn"]), v.evidence["effect_counts"])
    keys = sorted(cells, key=lambda k: (k[1], k[0]))
    fig, ax = plt.subplots(figsize=(8, 3.2))
    width = 0.25
    for i, order in enumerate(("charge:o1", "charge:o2", "charge:o3")):
        ax.bar([j + (i - 1) * width for j in range(len(keys))], [cells[k].get(order, 0) for k in keys], width,
               label=order)
    ax.axhline(1, color="black", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(keys)), [f"turn {t}\n{p}" for p, t in keys], fontsize=8)
    ax.set_ylabel("charges after recovery")
    ax.set_title("AutoGen AgentChat: SIGKILL per turn, recover from the last save_state")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
