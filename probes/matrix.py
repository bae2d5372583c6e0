"""The framework x property conformance matrix, generated from receipts only."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from probes.core import checker
from probes.core.checker import DocRef, Label, Property
from probes.core.receipt import load_campaign, read_index

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
    doc: DocRef | None = None  # the documentation statement a ✗ or D rests on


class Cells(list):
    """The matrix's cells, plus the campaigns that are not in it and why (never dropped silently)."""

    def __init__(self, cells: Iterable[Cell] = (), missing: Iterable[str] = ()) -> None:
        super().__init__(cells)
        self.missing: list[str] = list(missing)


def load_all_verdicts(receipts_root: Path | None = None) -> Cells:
    """Every verdict of ``<receipts_root>/<campaign>/``, or (no root) of each campaign's
    shown run: this machine's newest complete run, else the reference run.

    A campaign with no complete run (no ``_campaign.json`` index: interrupted, still
    running, or never run) is listed in ``Cells.missing`` with the reason.
    """
    from probes import campaigns

    cells = Cells()
    if receipts_root is None:
        from probes.core.runs import shown_run

        directories = []
        for name in campaigns.available():
            run = shown_run(name)
            if run is None:
                cells.missing.append(f"{name}: no complete run on this machine and no reference run")
            else:
                directories.append((name, run.directory))
    else:
        root = Path(receipts_root)
        found = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        directories = []
        for p in found:
            if read_index(p) is None:
                cells.missing.append(f"{p.name}: no campaign index ({p}/_campaign.json): the run is incomplete "
                                     f"or was interrupted; rerun it to complete it")
            else:
                directories.append((p.name, p))
        present = {p.name for p in found}
        cells.missing += [f"{name}: no results in {root}" for name in campaigns.available() if name not in present]
    for name, directory in directories:
        for receipt in load_campaign(directory):
            rel = f"receipts/{name}/{receipt.probe}.json"
            for v in receipt.verdicts:
                cells.append(Cell(v.framework, v.backend, v.property, v.path, v.label, v.summary, rel, v.doc))
    return cells


def worst(labels: Iterable[Label]) -> Label:
    """The cell's label (``probes.core.checker.collapse``); a cell with no labels is an error."""
    top = checker.collapse(labels)
    if top is None:
        raise ValueError("worst() of no labels: the cell was not measured")
    return top


def summarise(cells: list[Cell]) -> str:
    """One matrix cell in words (``probes.core.checker.cell_text``): the label if every measured
    path agrees, else each label with its path count, worst first (``U×3 · ✓×2``)."""
    return checker.cell_text(c.label for c in cells)


def grid(cells: list[Cell]) -> dict[str, dict[Property, list[Cell]]]:
    rows: dict[str, dict[Property, list[Cell]]] = defaultdict(lambda: defaultdict(list))
    for c in cells:
        rows[c.framework][c.property].append(c)
    return {k: dict(v) for k, v in sorted(rows.items())}


def _missing(cells: list[Cell]) -> list[str]:
    return list(getattr(cells, "missing", []))


def render_text(cells: list[Cell]) -> str:
    """The CLI matrix: one collapsed label per cell (``checker.collapse``, as the book's page)."""
    missing = [f"not in the matrix: {m}" for m in _missing(cells)]
    if not cells:
        return "\n".join(["no receipts yet: run ./reproduce.sh or python -m probes run CAMPAIGN"] + missing)
    rows = grid(cells)
    width = max(len(r) for r in rows) + 2
    lines = ["framework".ljust(width) + " | ".join(p.value.center(9) for p in COLUMNS)]
    for framework, props in rows.items():
        labels = [worst(c.label for c in props[p]).value if p in props else "" for p in COLUMNS]
        lines.append(framework.ljust(width) + " | ".join(lab.center(9) for lab in labels))
    lines.append("")
    lines.append("worst label per cell shown; per-path detail: the book's matrix page or the receipts.")
    return "\n".join(lines + missing)


def citation(doc: DocRef | None) -> str:
    """The documentation statement beside a ✗ or D label (markdown table cell)."""
    if doc is None:
        return ""
    text = f"{doc.source + ': ' if doc.source else ''}“{doc.quote}” ({doc.page}" + (f"; {doc.version})" if doc.version
                                                                                      else ")")
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(cells: list[Cell], link_prefix: str = "../") -> str:
    """The book's matrix: summary table, then every cell with its path and receipt link.

    ``link_prefix`` leads from the page to the HTML root, where ``data/`` is copied.
    """
    missing = _missing(cells)
    tail = ["", "## Not in the matrix\n"] + [f"- {m}" for m in missing] if missing else []
    if not cells:
        return "\n".join(["*No receipts yet.*"] + tail) + "\n"
    rows = grid(cells)
    out = ["| framework | " + " | ".join(p.value for p in COLUMNS) + " |",
           "|---|" + "---|" * len(COLUMNS)]
    for framework, props in rows.items():
        out.append(f"| {framework} | " + " | ".join(summarise(props.get(p, [])) for p in COLUMNS) + " |")
    out.append("")
    out.append("## Every cell, with its evidence\n")
    for framework, props in rows.items():
        out.append(f"### {framework}\n")
        out.append("| property | path | backend | verdict | what was observed | documentation | receipt |")
        out.append("|---|---|---|---|---|---|---|")
        for p in COLUMNS:
            for c in sorted(props.get(p, []), key=lambda c: (c.path, c.backend)):
                summary = c.summary.replace("|", "\\|").replace("\n", " ")
                out.append(f"| {p.value} | {c.path} | {c.backend} | {c.label.value} | {summary} | {citation(c.doc)} | "
                           f'<a href="{link_prefix}{c.receipt}">json</a> |')
        out.append("")
    return "\n".join(out + tail)
