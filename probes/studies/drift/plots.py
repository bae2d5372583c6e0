"""The drift chapter's two figures, from drift receipts only (``report.py`` does the comparing).

* **At a glance** (``glance_figure``): framework campaign (rows) × release (columns: pin,
  newest patch of the pinned minor, newest); each cell names the release and how many of
  its cells (verdicts) moved against the pin, and in which properties.
* **Per property** (``grid_figure``): campaign × release (rows) × property (columns), each
  cell the worst label over the campaign's paths, a moved cell framed.

In the SVGs every cell links to its receipt.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from probes.core.checker import Label, collapse
from probes.core.receipt import Receipt
from probes.studies.drift.report import PROPS, SIDES, cell_changes, cells, pairs, release, status

RECEIPTS_FROM_FIGURES = "../receipts/drift/"  # a figure's SVG as the book serves it (figures/) -> the receipts
SIDE_TITLES = {"pin": "pin", "patch": "newest patch of the pinned minor", "newest": "newest release"}


def _by_prop(r: Receipt) -> dict[str, list[Label]]:
    """property -> every label over the receipt's paths, all of its verdict frameworks together."""
    out: dict[str, list[Label]] = defaultdict(list)
    for key, v in cells(r).items():
        out[key[3]].append(Label(v["label"]))
    return out


def _moved(receipts: list[Receipt]) -> dict[tuple[str, str], dict[str, int]]:
    """(campaign, side) -> property -> how many of its cells moved against the pin."""
    out: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for c in cell_changes(receipts):
        out[(c["campaign"], c["side"])][c["property"]] += 1
    return out


def glance(receipts: Iterable[Receipt]) -> list[dict[str, Any]]:
    """One row per campaign: per side its release, status, receipt, and (besides the pin, when both ran)
    the cells that moved per property; ``None`` where there is nothing to compare."""
    receipts = list(receipts)
    moved = _moved(receipts)
    rows = []
    for name, sides in pairs(receipts).items():
        pin = sides.get("pin")
        first = next(iter(sides.values()))
        row: dict[str, Any] = {"campaign": name, "dist": first.observations.get("dist", ""),
                               "releases": first.observations.get("releases") or {}, "sides": {}}
        for side in SIDES:
            r = sides.get(side)
            if r is None:
                continue
            compared = side != "pin" and pin is not None and status(pin) == "ran" and status(r) == "ran"
            row["sides"][side] = {"release": release(r), "status": status(r), "receipt": r.probe,
                                  "same_as_pin": side != "pin" and pin is not None and release(r) == release(pin),
                                  "cells": len(cells(r)), "why": r.observations.get("na") or "; ".join(r.harness_errors),
                                  "moved": dict(moved[(name, side)]) if compared else None}
        rows.append(row)
    return rows


def glance_figure(receipts: Iterable[Receipt], link_prefix: str = RECEIPTS_FROM_FIGURES) -> Any:
    """Campaign × release: a moved release is orange with Δn and its properties, an unchanged one
    grey, n/a hatched with its reason, a harness error red; the pin cell counts its cells."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    rows = glance(receipts)
    fig, ax = plt.subplots(figsize=(9.5, 1.0 + 0.34 * len(rows)))
    for i, row in enumerate(rows):
        for j, side in enumerate(SIDES):
            cell = row["sides"].get(side)
            if cell is None:  # the patch of the pinned minor is the pin or the newest: no probe of its own
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor="#ffffff", edgecolor="#d0d7de", lw=0.6))
                rel = row["releases"].get(side)
                same = next((s for s in ("pin", "newest") if s != side and row["releases"].get(s) == rel), None)
                ax.text(j + 0.5, i + 0.5, f"{rel}: the {same}" if rel and same else "", ha="center", va="center",
                        fontsize=6.5, color="#90a4ae")
                continue
            moved = cell["moved"]
            hatch, weight = "", "normal"
            if cell["status"] == "n/a":
                fill, ink, hatch = "#eceff1", "#37474f", "////"
                text = f"{cell['release']}  n/a: the API is gone"
            elif cell["status"] != "ran":
                fill, ink, text = "#fde0dc", "#7f0000", f"{cell['release']}  harness error"
            elif side == "pin":
                fill, ink, text = "#ffffff", "#263238", f"{cell['release']}  ({cell['cells']} cells)"
            elif moved is None:
                fill, ink, text = "#ffffff", "#607d8b", f"{cell['release']}  (no pin to compare)"
            elif sum(moved.values()):
                fill, ink, weight = "#ffb74d", "#000000", "bold"
                text = f"{cell['release']}  Δ{sum(moved.values())}: {', '.join(p for p in PROPS if p in moved)}"
            else:
                fill, ink = "#eceff1", "#455a64"
                text = f"{cell['release']}  unchanged" + (" (= pin)" if cell["same_as_pin"] else "")
            rect = Rectangle((j, i), 1, 1, facecolor=fill, edgecolor="#ffffff", lw=1.2, hatch=hatch)
            rect.set_url(f"{link_prefix}{cell['receipt']}.json")
            ax.add_patch(rect)
            ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize=7, color=ink, fontweight=weight)
    ax.set_xlim(0, len(SIDES))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([j + 0.5 for j in range(len(SIDES))], [SIDE_TITLES[s] for s in SIDES], fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.5 for i in range(len(rows))],
                  [f"{r['campaign']} ({r['dist']})" if r["dist"] else r["campaign"] for r in rows], fontsize=8)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    handles = [Patch(facecolor="#ffb74d", label="Δn: n cells (verdicts) changed label against the pin, in these "
                                                "properties"),
               Patch(facecolor="#eceff1", label="unchanged: every cell has the pin's label"),
               Patch(facecolor="#eceff1", hatch="////", label="n/a: the release lacks the API the campaign uses"),
               Patch(facecolor="#fde0dc", label="harness error: not measured")]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.005), ncol=2, fontsize=6.5, frameon=False)
    fig.tight_layout()
    return fig


def glance_caption(receipts: Iterable[Receipt]) -> str:
    rows = glance(receipts)
    others = [(r["campaign"], s, c) for r in rows for s, c in r["sides"].items() if s != "pin"]
    compared = [(n, s, c) for n, s, c in others if c["moved"] is not None]
    moved = [f"{n} {c['release']} (Δ{sum(c['moved'].values())})" for n, s, c in compared if sum(c["moved"].values())]
    na = [f"{n} {c['release']}" for n, s, c in others if c["status"] == "n/a"]
    return (f"Version drift at a glance: {len(rows)} framework campaigns (rows) × release (columns: the pin, the "
            "newest patch of the pinned minor where that is another release, the newest release). "
            f"{len(moved)} of {len(compared)} releases compared with their pin moved"
            + (f": {', '.join(moved)}" if moved else "") + (f"; n/a: {', '.join(na)}" if na else "")
            + ". Click a cell (SVG) for its receipt.")


def grid(receipts: Iterable[Receipt]) -> tuple[list[str], list[dict[str, Any]]]:
    """(properties measured anywhere, one row per (campaign, side)). A row holds its status and, per
    property, the worst label over the campaign's paths (every verdict framework of it), violating /
    measured paths, the pin's label and how many cells moved (both None where not compared)."""
    receipts = list(receipts)
    moved = _moved(receipts)
    rows: list[dict[str, Any]] = []
    measured: set[str] = set()
    for name, sides in pairs(receipts).items():
        pin = sides.get("pin")
        pin_labels = _by_prop(pin) if pin is not None and status(pin) == "ran" else {}
        for side in SIDES:
            r = sides.get(side)
            if r is None:
                continue
            compared = side != "pin" and bool(pin_labels) and status(r) == "ran"  # else nothing to compare with
            row: dict[str, Any] = {"campaign": name, "side": side, "release": release(r), "receipt": r.probe,
                                   "status": status(r), "cells": {},
                                   "why": r.observations.get("na") or "; ".join(r.harness_errors)[:200],
                                   # every cell that moved, also one that exists on the pin's side only
                                   "moved": sum(moved[(name, side)].values()) if compared else None}
            for prop, got in _by_prop(r).items():
                top = collapse(got)
                if top is None:
                    continue
                measured.add(prop)
                real = [x for x in got if x is not Label.NA]
                row["cells"][prop] = {
                    "label": top, "violating": sum(x.violates for x in real), "paths": len(real),
                    "pin": collapse(pin_labels.get(prop, [])) if compared else None,
                    "moved": moved[(name, side)][prop] if compared else None}
            rows.append(row)
    return [p for p in PROPS if p in measured], rows


def changed(rows: list[dict[str, Any]], props: list[str]) -> list[tuple[dict[str, Any], str]]:
    """(row, property) of every compared cell whose worst label changed or some of whose paths moved."""
    return [(r, p) for r in rows for p in props if p in r["cells"] and r["cells"][p]["moved"] is not None
            and (r["cells"][p]["moved"] or r["cells"][p]["pin"] != r["cells"][p]["label"])]


def grid_figure(receipts: Iterable[Receipt], link_prefix: str = RECEIPTS_FROM_FIGURES) -> Any:
    """Campaign × release (rows: each campaign's pin, then its other releases) × property (columns).
    A cell is the worst label over its paths (the matrix's symbol and colour) with violating /
    measured paths; on a release's row, a cell that moved against the pin is framed (solid: its
    label changed; dashed: the label held but some paths moved) and counts the cells that moved
    (Δn). A release that measured nothing is one band with the reason."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    from probes.matrix_figure import COLOURS, LEGEND

    props, rows = grid(receipts)
    width = max(len(props), 1)
    fig, ax = plt.subplots(figsize=(3.4 + 0.75 * width, 1.6 + 0.3 * len(rows)))
    for i, row in enumerate(rows):
        url = f"{link_prefix}{row['receipt']}.json"
        if i and row["campaign"] != rows[i - 1]["campaign"]:
            ax.plot([-0.05, width + 1.3], [i, i], color="#37474f", lw=0.9, clip_on=False)
        if row["status"] != "ran":
            fill, ink = ("#eceff1", "#37474f") if row["status"] == "n/a" else ("#fde0dc", "#7f0000")
            band = Rectangle((0, i), width, 1, facecolor=fill, edgecolor="#ffffff", lw=1.2)
            band.set_url(url)
            ax.add_patch(band)
            text = f"{row['status']}: {row['why']}"
            cut = 20 + 12 * width
            ax.text(0.08, i + 0.5, text if len(text) <= cut else text[:cut - 1] + "…", ha="left", va="center",
                    fontsize=6, color=ink)
            continue
        for j, prop in enumerate(props):
            cell = row["cells"].get(prop)
            if cell is None:
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor="#ffffff", edgecolor="#d0d7de", lw=0.8))
                continue
            fill, ink = COLOURS[cell["label"]]
            rect = Rectangle((j, i), 1, 1, facecolor=fill, edgecolor="#ffffff", lw=1.2)
            rect.set_url(url)
            ax.add_patch(rect)
            ax.text(j + 0.5, i + 0.42, cell["label"].value, ha="center", va="center", fontsize=8.5,
                    fontweight="bold", color=ink)
            if cell["label"] is not Label.NA:
                ax.text(j + 0.5, i + 0.82, f"{cell['violating']}/{cell['paths']}", ha="center", va="center",
                        fontsize=5, color=ink)
            if cell["moved"] is not None:
                if cell["pin"] != cell["label"] or cell["moved"]:
                    ax.add_patch(Rectangle((j + 0.04, i + 0.06), 0.92, 0.88, fill=False, edgecolor="#000000",
                                           lw=2.0, ls="-" if cell["pin"] != cell["label"] else "--"))
                    ax.text(j + 0.93, i + 0.22, f"Δ{cell['moved']}", ha="right", va="center", fontsize=5.5,
                            color="#000000", fontweight="bold")
        if row["side"] != "pin":
            n = row["moved"]
            ax.text(width + 0.1, i + 0.5, "no pin to compare" if n is None else f"{n} cell(s) moved" if n
                    else "unchanged", ha="left", va="center", fontsize=6.5, color="#000000" if n else "#607d8b",
                    fontweight="bold" if n else "normal")
    ax.set_xlim(0, width + 1.3)
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([j + 0.5 for j in range(len(props))], props, fontsize=9)
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.5 for i in range(len(rows))],
                  [f"{r['campaign']}  {r['side']} {r['release']}" if r["side"] == "pin" else
                   f"{r['side']} {r['release']}" for r in rows], fontsize=7)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    handles = [Patch(facecolor=COLOURS[lab][0], edgecolor="#999999", label=text) for lab, text in LEGEND.items()]
    handles.append(Patch(facecolor="#ffffff", edgecolor="#000000", lw=2, label="framed: label changed against the pin"))
    handles.append(Patch(facecolor="#ffffff", edgecolor="#000000", lw=2, ls="--",
                         label="dashed: same label, Δn of its cells moved"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.005), ncol=2, fontsize=6.5, frameon=False)
    fig.tight_layout()
    return fig


def grid_caption(receipts: Iterable[Receipt]) -> str:
    """The caption, with the figure's own counts."""
    receipts = list(receipts)
    props, rows = grid(receipts)
    compared = [(r, p) for r in rows for p in props if p in r["cells"] and r["cells"][p]["moved"] is not None]
    names = [f"{r['campaign']} {r['release']} {p}" for r, p in changed(rows, props)]
    skipped = [f"{r['campaign']} {r['release']} ({r['status']})" for r in rows if r["status"] != "ran"]
    return (f"Version drift per property: {len({r['campaign'] for r in rows})} framework campaigns × their releases "
            f"(rows) × {len(props)} properties (columns); each cell is the worst label over the campaign's paths "
            "with violating / measured paths. "
            f"{len(names)} of {len(compared)} cells compared with the pin moved"
            + (f" ({', '.join(names)})" if names else "") + f"; {len(cell_changes(receipts))} verdicts changed label"
            + (f"; measured nothing: {', '.join(skipped)}" if skipped else "") + ". Click a cell (SVG) for its receipt.")


def show_glance(receipts: list[Receipt], params: Any) -> Any:
    """The at-a-glance figure, saved and shown as a numbered figure (``probes.figures.save_figure``)."""
    from probes.figures import save_figure

    return save_figure(glance_figure(receipts), "drift-glance", glance_caption(receipts), dict(params))


def show_grid(receipts: list[Receipt], params: Any) -> Any:
    from probes.figures import save_figure

    return save_figure(grid_figure(receipts), "drift-grid", grid_caption(receipts), dict(params))
