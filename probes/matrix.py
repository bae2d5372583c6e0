"""The framework x property conformance matrix, generated from receipts only."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from probes import campaigns
from probes.core import checker, race
from probes.core.checker import DocRef, Label, Property
from probes.core.receipt import load_campaign, read_index

COLUMNS = list(Property)  # the contract's properties in their declared order, VO last
# Campaigns whose verdicts are about other releases than the pinned ones (the regression
# atlas runs every LangGraph release): they have their own chapters, not matrix rows.
NOT_IN_MATRIX = campaigns.OTHER_RELEASES  # their own chapters


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
    # a race cell's trials and, beside a ✓ or ?, the Wilson 95 % bound of its violation rate
    bound: str = ""
    rate_bound: float | None = None
    protocol: str | None = None  # the kit protocol that measured it (``kit_protocol``); None outside the kit


def kit_protocol(args: Mapping[str, Any]) -> str | None:
    """The kit protocol a receipt's cell ran (its arguments' ``protocol``), or for a workflow variant's
    cell (``protocol`` the variant's name, e.g. LangGraph's ``functional``) the protocol it ran on the
    variant (``of``). A protocol an adapter package registers for itself keeps its own name."""
    from probes.kit.protocols import PROTOCOLS

    name, of = args.get("protocol"), args.get("of")
    return of if name not in PROTOCOLS and of in PROTOCOLS else name


class Cells(list):
    """The matrix's cells, plus the campaigns that are not in it and why (never dropped silently)."""

    def __init__(self, cells: Iterable[Cell] = (), missing: Iterable[str] = ()) -> None:
        super().__init__(cells)
        self.missing: list[str] = list(missing)


def _display_path(path: Path) -> str:
    """A path as a reader of this checkout would type it: relative to the project root when inside it
    (an absolute path would put this machine's temporary directories on the book's pages)."""
    from probes import PROJECT_ROOT

    try:
        return Path(path).resolve().relative_to(PROJECT_ROOT).as_posix()
    except ValueError:
        return Path(path).name


def load_all_verdicts(receipts_root: Path | None = None) -> Cells:
    """Every verdict of ``<receipts_root>/<campaign>/``, or (no root) of each campaign's
    shown run: this machine's newest complete run, else the reference run.

    A campaign with no complete run (no ``_campaign.json`` index: interrupted, still
    running, or never run) is listed in ``Cells.missing`` with the reason.
    """

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
        from probes.schedules import DIRNAME  # the schedule records beside the campaigns' runs: no campaign

        root = Path(receipts_root)
        found = sorted(p for p in root.iterdir() if p.is_dir() and p.name != DIRNAME) if root.is_dir() else []
        directories = []
        for p in found:
            if read_index(p) is None:
                cells.missing.append(f"{p.name}: no campaign index ({_display_path(p)}/_campaign.json): the run is incomplete "
                                     f"or was interrupted; rerun it to complete it")
            else:
                directories.append((p.name, p))
        present = {p.name for p in found}
        shown_root = _display_path(root)
        cells.missing += [f"{name}: no results in {shown_root}" for name in campaigns.available()
                          if name not in present and name not in NOT_IN_MATRIX]
    for name, directory in directories:
        if name in NOT_IN_MATRIX:
            continue
        for receipt in load_campaign(directory):
            rel = f"receipts/{name}/{receipt.probe}.json"
            for v in receipt.verdicts:
                cells.append(Cell(v.framework, v.backend, v.property, v.path, v.label, v.summary, rel, v.doc,
                                  race.bound_text(v.evidence), v.evidence.get("violation_rate_upper95")
                                  if "race_decision" in v.evidence else None, kit_protocol(receipt.args)))
    return cells


def worst(labels: Iterable[Label]) -> Label:
    """The cell's label (``probes.core.checker.collapse``); a cell with no labels is an error."""
    top = checker.collapse(labels)
    if top is None:
        raise ValueError("worst() of no labels: the cell was not measured")
    return top


def summarise(cells: list[Cell]) -> str:
    """One matrix cell in words (``probes.core.checker.cell_text``): the label if every measured
    path agrees, else each label with its path count, worst first (``U×3 · ✓×2``); a ✓ or ?
    that rests on races carries their largest bound (``✓ race < 9.9 %``)."""
    text = checker.cell_text(c.label for c in cells)
    bound = race_bound(cells)
    return f"{text} {bound}" if bound else text


def race_bound(cells: list[Cell]) -> str:
    """``race < 9.9 %``: the largest Wilson bound of the cell's race paths, when the cell's label
    is ✓ or ? (a violated cell states its counts per path instead); "" otherwise."""
    top = checker.collapse(c.label for c in cells)
    bounds = [c.rate_bound for c in cells if c.rate_bound is not None and c.label in (Label.PASS, Label.UNDECIDED)]
    if top not in (Label.PASS, Label.UNDECIDED) or not bounds:
        return ""
    return f"race < {100 * max(bounds):.1f} %"


def grid(cells: list[Cell]) -> dict[str, dict[Property, list[Cell]]]:
    rows: dict[str, dict[Property, list[Cell]]] = defaultdict(lambda: defaultdict(list))
    for c in cells:
        rows[c.framework][c.property].append(c)
    return {k: dict(v) for k, v in sorted(rows.items())}


def protocol_grid(cells: list[Cell]) -> dict[str, dict[str, list[Cell]]]:
    """Kit protocol -> framework -> the cells it measured there: the kit's protocols in their registered
    order, each framework's own row (no tampered-state or saver-only rows, whose protocols are the
    framework's). Cells measured outside the kit, and protocols an adapter package registers for itself
    (its chapter shows them), are left out."""
    from probes.kit.judge import FORGERY_ROW
    from probes.kit.protocols import PROTOCOLS
    from probes.studies.remit.verdicts import saver_only

    rows: dict[str, dict[str, list[Cell]]] = {p: defaultdict(list) for p in PROTOCOLS}
    for c in cells:
        if c.protocol in rows and not c.framework.endswith((f" · {FORGERY_ROW}", saver_only(""))):
            rows[c.protocol][c.framework].append(c)
    return {p: dict(sorted(fw.items())) for p, fw in rows.items() if fw}


def not_live(cells: list[Cell]) -> dict[tuple[str, str], Label]:
    """(framework, path) -> the worst LV label of each path whose LV is violated.

    EO is at most once, so a run that never completed can be EO ✓ on the very path whose
    LV fails; the matrix shows the two side by side (``render_text``, the book's per-path
    list) so that neither hides the other.
    """
    worst_lv: dict[tuple[str, str], list[Label]] = defaultdict(list)
    for c in cells:
        if c.property is Property.LV:
            worst_lv[(c.framework, c.path)].append(c.label)
    out = {}
    for key, labels in worst_lv.items():
        top = checker.collapse(labels)
        if top is not None and top.violates:
            out[key] = top
    return out


def eo_beside_lv(cells: list[Cell]) -> dict[str, list[str]]:
    """framework -> the paths that are EO ✓ (every measurement) and fail LV: safe, but not live."""
    failing = not_live(cells)
    eo: dict[tuple[str, str], list[Label]] = defaultdict(list)
    for c in cells:
        if c.property is Property.EO:
            eo[(c.framework, c.path)].append(c.label)
    out: dict[str, list[str]] = defaultdict(list)
    for (framework, path), labels in sorted(eo.items()):
        if checker.collapse(labels) is Label.PASS and (framework, path) in failing:
            out[framework].append(path)
    return dict(out)


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
    races: list[str] = []
    for framework, props in rows.items():
        labels = []
        for p in COLUMNS:
            label = worst(c.label for c in props[p]).value if p in props else ""
            if p in props and race_bound(props[p]):
                label += "*"
                races += [f"  {framework} {p.value} {c.path} ({c.backend}): {c.label.value} {c.bound}"
                          for c in sorted(props[p], key=lambda c: (c.path, c.backend)) if c.bound]
            labels.append(label)
        lines.append(framework.ljust(width) + " | ".join(lab.center(9) for lab in labels))
    lines.append("")
    lines.append("worst label per cell shown (? = a race undecided within its budget, never ✓); per-path detail: "
                 "the book's matrix page or the receipts.")
    if races:
        lines += ["* rests on races; trials and the Wilson 95 % upper bound of the per-trial violation rate:"] + races
    for framework, paths in eo_beside_lv(cells).items():
        lines.append(f"{framework}: EO ✓ beside an LV failure (nothing fired twice; the run did not complete) on "
                     f"{len(paths)} path(s): {', '.join(paths)}")
    return "\n".join(lines + missing)


def citation(doc: DocRef | None) -> str:
    """The documentation statement beside a ✗ or D label: source, quote, page and version."""
    if doc is None:
        return ""
    text = f"{doc.source + ': ' if doc.source else ''}“{doc.quote}” ({doc.page}" + (f"; {doc.version})" if doc.version
                                                                                      else ")")
    return text.replace("\n", " ")


