"""The conformance matrix as a picture: framework × property, one symbol and colour per cell.

The answer to "which side effects can fire twice, where?" before any prose: each cell
shows the worst label over its measured paths (``probes.core.checker.collapse``, the
same fold as the count table), its colour, and how many of its paths violate the
property. Each cell of the SVG is a link to that framework and property's row of the
matrix page's path table, where every path and receipt is listed. Presentation only:
the cells come from ``probes.matrix`` (receipts), nothing is counted here twice.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from probes.core.checker import Label, Property, collapse

# label -> (fill colour, text colour); colour-blind-safe pairs, with the symbol carrying the meaning too
COLOURS: Mapping[Label, tuple[str, str]] = {
    Label.PASS: ("#c8e6c9", "#1b5e20"),
    Label.DOC: ("#ffe082", "#6d4c00"),
    Label.FAIL: ("#ef9a9a", "#7f0000"),
    Label.UNDOC: ("#b71c1c", "#ffffff"),
    Label.UNDECIDED: ("#bbdefb", "#0d47a1"),
    Label.NA: ("#eceff1", "#546e7a"),
}
LEGEND = {Label.PASS: "✓ holds on every measured path", Label.DOC: "D violated, deviation documented",
          Label.FAIL: "✗ violated, documentation claims it", Label.UNDOC: "U violated, documentation silent",
          Label.UNDECIDED: "? race undecided within its budget", Label.NA: "n/a nothing to measure"}


def anchor(framework: str, prop: Property | str) -> str:
    """The id of a framework and property's row on the matrix page (shared with ``probes.pages``)."""
    value = prop.value if isinstance(prop, Property) else prop
    return "m-" + re.sub(r"[^a-z0-9]+", "-", f"{framework}-{value}".lower()).strip("-")


def cell_facts(cells: list[Any]) -> dict[str, Any]:
    """What one matrix cell shows: its worst label and how many of its paths violate."""
    labels = [c.label for c in cells]
    top = collapse(labels)
    paths: dict[str, Label] = {}
    for c in cells:  # a path violates when any of its receipts does (backends, repetitions)
        prev = paths.get(c.path)
        paths[c.path] = c.label if prev is None else collapse([prev, c.label])  # type: ignore[assignment]
    measured = [lab for lab in paths.values() if lab is not Label.NA]
    return {"label": top, "paths": len(measured), "violating": sum(lab.violates for lab in measured)}


def figure(rows: Mapping[str, Mapping[Property, list[Any]]], columns: list[Property], link_prefix: str = "") -> Any:
    """The matrix figure; each measured cell links to ``<link_prefix>#<anchor>`` in the SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    names = list(rows)
    fig, ax = plt.subplots(figsize=(1.0 + 0.82 * len(columns), 0.9 + 0.42 * len(names)))
    for i, framework in enumerate(names):
        for j, prop in enumerate(columns):
            got = rows[framework].get(prop, [])
            if not got:
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor="#ffffff", edgecolor="#d0d7de", lw=0.8))
                continue
            facts = cell_facts(got)
            fill, ink = COLOURS[facts["label"]]
            rect = Rectangle((j, i), 1, 1, facecolor=fill, edgecolor="#ffffff", lw=1.5)
            rect.set_url(f"{link_prefix}#{anchor(framework, prop)}")
            ax.add_patch(rect)
            ax.text(j + 0.5, i + 0.42, facts["label"].value, ha="center", va="center", fontsize=12,
                    fontweight="bold", color=ink)
            if facts["label"] not in (Label.NA,):
                ax.text(j + 0.5, i + 0.8, f"{facts['violating']}/{facts['paths']}", ha="center", va="center",
                        fontsize=6.5, color=ink)
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(names), 0)
    ax.set_xticks([j + 0.5 for j in range(len(columns))], [p.value for p in columns], fontsize=9)
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.5 for i in range(len(names))], names, fontsize=8.5)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.legend(handles=[Patch(facecolor=COLOURS[lab][0], edgecolor="#999999", label=text)
                       for lab, text in LEGEND.items()], loc="upper center", bbox_to_anchor=(0.5, -0.01),
              ncol=2, fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def caption(rows: Mapping[str, Mapping[Property, list[Any]]]) -> str:
    """The caption, with the figure's own counts."""
    facts = [cell_facts(cells) for props in rows.values() for cells in props.values()]
    violated = sum(1 for f in facts if f["label"] is not None and f["label"].violates)
    return (f"Conformance matrix: {len(rows)} frameworks (rows) × properties (columns); each cell shows the worst "
            f"label over its measured paths and, below it, violating paths / measured paths. {violated} of "
            f"{len(facts)} measured cells are violated on at least one path. Click a cell (SVG) for its paths, "
            "receipts and citations.")
