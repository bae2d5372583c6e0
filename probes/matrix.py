"""The framework x property conformance matrix, generated from receipts only."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from probes.core.checker import Label, Property, cell_text, collapse
from probes.core.receipt import load_campaign

COLUMNS = [Property.PC, Property.EO, Property.FD, Property.CV, Property.CO, Property.RD, Property.FI, Property.LV]


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
        for receipt in load_campaign(directory):
            rel = f"receipts/{name}/{receipt.probe}.json"
            for v in receipt.verdicts:
                cells.append(Cell(v.framework, v.backend, v.property, v.path, v.label, v.summary, rel))
    return cells


def worst(labels: Iterable[Label]) -> Label:
    """The cell's label (``probes.core.checker.collapse``); a cell with no labels is an error."""
    top = collapse(labels)
    if top is None:
        raise ValueError("worst() of no labels: the cell was not measured")
    return top


def summarise(cells: list[Cell]) -> str:
    """One matrix cell in words (``probes.core.checker.cell_text``): the label if every measured
    path agrees, else each label with its path count, worst first (``U×3 · ✓×2``)."""
    return cell_text(c.label for c in cells)


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
