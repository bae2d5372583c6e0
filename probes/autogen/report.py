"""Tables and figures for the chapter, built from receipts only (no framework import)."""

from __future__ import annotations


from probes.core.receipt import Receipt
from probes.report import harness_table, timing_table, verdict_table  # noqa: F401 -- the chapter calls them here


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
