"""Tables and figures for the chapter, built from receipts only (no framework import)."""

from __future__ import annotations

from collections import defaultdict

from probes.core.receipt import Receipt
from probes.report import harness_table, timing_table, verdict_table  # noqa: F401 -- the chapter calls them here


def prefix_figure(receipts: list[Receipt]):
    """How many times the code before the pause ran, per path (the contract allows 1)."""
    import matplotlib.pyplot as plt

    runs: dict[str, list[int]] = defaultdict(list)
    for r in receipts:
        for v in r.verdicts:
            if v.property.value == "EO" and v.path in ("interrupt:split-steps", "wait:in-process", "wait:restore"):
                counts = v.evidence["effect_counts"]
                runs[v.path].append(counts.get("s1", counts.get("w.prefix", 0)))
    paths = sorted(runs)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.bar(paths, [max(runs[p]) for p in paths], color=["tab:green" if max(runs[p]) <= 1 else "tab:orange"
                                                        for p in paths])
    ax.axhline(1, color="black", linestyle="--", linewidth=1, label="contract: once")
    ax.set_ylabel("runs of the pre-pause code")
    ax.set_title("LlamaIndex Workflows: prefix runs per resume path")
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig
