"""The framework x property conformance matrix, generated from receipts only."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from probes.core.checker import Label, Property
from probes.core.receipt import load_campaign

COLUMNS = [Property.PC, Property.EO, Property.FD, Property.CV, Property.CO, Property.RD, Property.FI, Property.LV]
_SEVERITY = {Label.UNDOC: 4, Label.FAIL: 3, Label.DOC: 2, Label.PASS: 1, Label.NA: 0}
# Campaigns whose verdicts are about other releases than the pinned ones (the regression
# atlas runs every LangGraph release): they have their own chapters, not matrix rows.
NOT_IN_MATRIX = ("atlas", "drift")


@dataclass(frozen=True)
class Cell:
    framework: str
    backend: str
    property: Property
    path: str
    label: Label
    summary: str
    receipt: str  # path relative to data/, e.g. receipts/langgraph/fd.bare.sqlite.json


def load_all_verdicts(receipts_root: Path | None = None) -> list[Cell]:
    """Every verdict of ``<receipts_root>/<campaign>/``, or (no root) of each campaign's
    shown run: this machine's newest complete run, else the reference run."""
    cells = []
    if receipts_root is None:
        from probes import campaigns
        from probes.core.runs import shown_run

        directories = [(name, run.directory) for name in campaigns.available() if (run := shown_run(name))]
    elif Path(receipts_root).is_dir():
        directories = [(p.name, p) for p in sorted(Path(receipts_root).iterdir()) if p.is_dir()]
    else:
        return cells
    for name, directory in directories:
        if name in NOT_IN_MATRIX:
            continue
        for receipt in load_campaign(directory):
            rel = f"receipts/{name}/{receipt.probe}.json"
            for v in receipt.verdicts:
                cells.append(Cell(v.framework, v.backend, v.property, v.path, v.label, v.summary, rel))
    return cells


def worst(labels: Iterable[Label]) -> Label:
    return max(labels, key=lambda lab: _SEVERITY[lab])


def summarise(cells: list[Cell]) -> str:
    """One matrix cell: the label if every path agrees, else each label with its path count.

    Worst first, so "U×3 · ✓×2" reads "violated on 3 paths, held on 2"; the per-path
    table under the matrix says which.
    """
    if not cells:
        return ""
    counts: dict[Label, int] = defaultdict(int)
    for c in cells:
        counts[c.label] += 1
    if len(counts) > 1:
        counts.pop(Label.NA, None)  # paths with nothing to measure; listed in the per-path table
    if len(counts) == 1:
        return next(iter(counts)).value
    ordered = sorted(counts, key=lambda lab: -_SEVERITY[lab])
    return " · ".join(f"{lab.value}×{counts[lab]}" for lab in ordered)


def grid(cells: list[Cell]) -> dict[str, dict[Property, list[Cell]]]:
    rows: dict[str, dict[Property, list[Cell]]] = defaultdict(lambda: defaultdict(list))
    for c in cells:
        rows[c.framework][c.property].append(c)
    return {k: dict(v) for k, v in sorted(rows.items())}


def render_text(cells: list[Cell]) -> str:
    if not cells:
        return "no receipts yet: run ./reproduce.sh or python -m probes run CAMPAIGN"
    rows = grid(cells)
    width = max(len(r) for r in rows) + 2
    lines = ["framework".ljust(width) + " | ".join(p.value.center(9) for p in COLUMNS)]
    for framework, props in rows.items():
        labels = [worst(c.label for c in props[p]).value if p in props else "" for p in COLUMNS]
        lines.append(framework.ljust(width) + " | ".join(lab.center(9) for lab in labels))
    lines.append("")
    lines.append("worst label per cell shown; per-path detail: the book's matrix page or the receipts.")
    return "\n".join(lines)


def render_markdown(cells: list[Cell], link_prefix: str = "../") -> str:
    """The book's matrix: summary table, then every cell with its path and receipt link.

    ``link_prefix`` leads from the page to the HTML root, where ``data/`` is copied.
    """
    if not cells:
        return "*No receipts yet.*\n"
    rows = grid(cells)
    out = ["| framework | " + " | ".join(p.value for p in COLUMNS) + " |",
           "|---|" + "---|" * len(COLUMNS)]
    for framework, props in rows.items():
        out.append(f"| {framework} | " + " | ".join(summarise(props.get(p, [])) for p in COLUMNS) + " |")
    out.append("")
    out.append("## Every cell, with its evidence\n")
    for framework, props in rows.items():
        out.append(f"### {framework}\n")
        out.append("| property | path | backend | verdict | what was observed | receipt |")
        out.append("|---|---|---|---|---|---|")
        for p in COLUMNS:
            for c in sorted(props.get(p, []), key=lambda c: (c.path, c.backend)):
                summary = c.summary.replace("|", "\\|").replace("\n", " ")
                out.append(f"| {p.value} | {c.path} | {c.backend} | {c.label.value} | {summary} | "
                           f'<a href="{link_prefix}{c.receipt}">json</a> |')
        out.append("")
    return "\n".join(out)
