"""Every release against the pin, per verdict and per property, from drift receipts only (no framework imports).

A *cell* is one verdict of a framework campaign: (probe, verdict framework, backend,
property, path). For every campaign, each side measured besides the pin (the newest
patch of the pinned minor, the newest release) is compared with the pin cell by cell;
a property's matrix cell (the worst label over its paths) is compared the same way.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Iterator

from probes.core.checker import Label, cell_text, collapse  # the matrix's own cell folding
from probes.core.receipt import Receipt

PROPS = ("PC", "EO", "FD", "CV", "CO", "RD", "FI", "LV")
SIDES = ("pin", "patch", "newest")
Key = tuple[str, str, str, str, str]  # probe, verdict framework, backend, property, path


def pairs(receipts: Iterable[Receipt]) -> dict[str, dict[str, Receipt]]:
    """campaign -> side -> its receipt, campaigns in name order."""
    out: dict[str, dict[str, Receipt]] = defaultdict(dict)
    for r in receipts:
        out[r.args["campaign"]][r.args["side"]] = r
    return dict(sorted(out.items()))


def release(r: Receipt) -> str:
    return str(r.observations.get("release") or r.args.get("release") or "?")


def status(r: Receipt) -> str:
    """``ran`` (a verdict view), ``n/a`` (the release lacks the campaign's API) or ``harness error``."""
    if r.observations.get("na"):
        return "n/a"
    return "ran" if "verdicts" in r.observations else "harness error"


def cells(r: Receipt) -> dict[Key, dict[str, Any]]:
    return {(p, v["framework"], v["backend"], v["property"], v["path"]): v
            for p, probe in (r.observations.get("verdicts") or {}).items() for v in probe["verdicts"]}


def _labels(r: Receipt) -> dict[tuple[str, str], list[Label]]:
    """(verdict framework, property) -> every label over the receipt's paths."""
    out: dict[tuple[str, str], list[Label]] = defaultdict(list)
    for key, v in cells(r).items():
        out[(key[1], key[3])].append(Label(v["label"]))
    return out


def _compared(receipts: Iterable[Receipt]) -> Iterator[tuple[str, str, Receipt, Receipt]]:
    """(campaign, side, pin receipt, side receipt) for every side besides the pin that ran beside a pin that ran."""
    for name, sides in pairs(receipts).items():
        pin = sides.get("pin")
        if pin is None or status(pin) != "ran":
            continue
        for side in SIDES[1:]:
            other = sides.get(side)
            if other is not None and status(other) == "ran":
                yield name, side, pin, other


def cell_changes(receipts: Iterable[Receipt]) -> list[dict[str, Any]]:
    """Every cell whose label differs between the pin and another release, or exists on one side only."""
    out = []
    for name, side, pin, other in _compared(receipts):
        a, b = cells(pin), cells(other)
        for key in sorted(set(a) | set(b)):
            la, lb = a.get(key, {}).get("label", "—"), b.get(key, {}).get("label", "—")
            if la != lb:
                out.append({"campaign": name, "side": side, "releases": f"{release(pin)} → {release(other)}",
                            "probe": key[0], "framework": key[1], "backend": key[2], "property": key[3],
                            "path": key[4], "pin": la, side: lb, "label": f"{la} → {lb}",
                            # a kit race cell is decided by trials (probes.core.race): it may move by chance
                            "race": key[0].startswith("race."),
                            "summary": b.get(key, {}).get("summary", ""),
                            "pin summary": a.get(key, {}).get("summary", ""), "receipt": [pin.probe, other.probe]})
    return out


path_changes = cell_changes  # the earlier name


def property_rows(receipts: Iterable[Receipt]) -> list[dict[str, Any]]:
    """One row per (campaign, side besides the pin, verdict framework): per property the pin's and that
    release's matrix cell (``a → b`` where they differ), which properties and how many cells moved."""
    moved = defaultdict(int)
    for c in cell_changes(receipts):
        moved[(c["campaign"], c["side"], c["framework"])] += 1
    rows = []
    for name, side, pin, other in _compared(receipts):
        a, b = _labels(pin), _labels(other)
        for fw in sorted({k[0] for k in a} | {k[0] for k in b}):
            row: dict[str, Any] = {"campaign": name, "framework": fw, "side": side, "pin": release(pin),
                                   "release": release(other)}
            changed = []
            for prop in PROPS:
                left, right = cell_text(a.get((fw, prop), [])), cell_text(b.get((fw, prop), []))
                row[prop] = left if left == right else f"{left or '—'} → {right or '—'}"
                if left != right:
                    changed.append(prop)
            row["changed"] = ", ".join(changed) or "—"
            row["cells moved"] = moved[(name, side, fw)]
            row["receipt"] = [pin.probe, other.probe]
            rows.append(row)
    return rows


def versions_table(receipts: Iterable[Receipt]) -> list[dict[str, Any]]:
    """Every (campaign, side): the release, what it measured or why not, the versions installed, the times."""
    rows = []
    for name, sides in pairs(receipts).items():
        for side in SIDES:
            r = sides.get(side)
            if r is None:
                continue
            st = status(r)
            rows.append({"campaign": name, "side": side, "release": release(r),
                         "status": r.observations["na"] if st == "n/a" else st,
                         "cells": len(cells(r)),
                         "installed": ", ".join(f"{k} {v}" for k, v in sorted((r.observations.get("installed") or {})
                                                                              .items()) if v),
                         "run_s": r.metrics.get("run_seconds"), "env_s": r.metrics.get("env_seconds"),
                         "harness errors": len(r.harness_errors), "receipt": r.probe})
    return rows


def not_applicable(receipts: Iterable[Receipt]) -> list[dict[str, Any]]:
    return [{"campaign": name, "side": side, "release": release(r), "why": r.observations["na"], "receipt": r.probe}
            for name, sides in pairs(receipts).items() for side, r in sides.items() if status(r) == "n/a"]


# --- the figure -------------------------------------------------------------------------

RECEIPTS_FROM_FIGURES = "../receipts/drift/"  # a figure's SVG as the book serves it (figures/) -> the receipts


def grid(receipts: Iterable[Receipt]) -> tuple[list[str], list[dict[str, Any]]]:
    """(properties measured anywhere, one row per (campaign, verdict framework, side)). A row holds its
    status and, per property, the worst label, violating / measured paths and how many of its cells
    moved against the pin (None on the pin's own row); a row that measured nothing holds its reason."""
    receipts = list(receipts)
    moved: dict[tuple[str, str, str, str], int] = defaultdict(int)
    for c in cell_changes(receipts):
        moved[(c["campaign"], c["side"], c["framework"], c["property"])] += 1
    rows: list[dict[str, Any]] = []
    measured: set[str] = set()
    for name, sides in pairs(receipts).items():
        pin = sides.get("pin")
        pin_labels = _labels(pin) if pin is not None and status(pin) == "ran" else {}
        frameworks = sorted({k[0] for r in sides.values() for k in _labels(r)}) or [""]
        for fw in frameworks:
            for side in SIDES:
                r = sides.get(side)
                if r is None or status(r) != "ran" and fw != frameworks[0]:  # one band per release that did not run
                    continue
                row: dict[str, Any] = {"campaign": name, "framework": fw, "side": side, "release": release(r),
                                       "receipt": r.probe, "status": status(r), "cells": {},
                                       "why": r.observations.get("na") or "; ".join(r.harness_errors)[:200]}
                labels = _labels(r)
                for prop in PROPS:
                    got = labels.get((fw, prop), [])
                    top = collapse(got)
                    if top is None:
                        continue
                    measured.add(prop)
                    real = [x for x in got if x is not Label.NA]
                    compared = side != "pin" and bool(pin_labels)  # else nothing to compare with
                    row["cells"][prop] = {
                        "label": top, "violating": sum(x.violates for x in real), "paths": len(real),
                        "pin": collapse(pin_labels.get((fw, prop), [])) if compared else None,
                        "moved": moved[(name, side, fw, prop)] if compared else None}
                rows.append(row)
    return [p for p in PROPS if p in measured], rows


def changed(rows: list[dict[str, Any]], props: list[str]) -> list[tuple[dict[str, Any], str]]:
    """(row, property) of every cell of a release besides the pin whose worst label or any path moved."""
    return [(r, p) for r in rows for p in props if p in r["cells"] and r["cells"][p]["moved"] is not None
            and (r["cells"][p]["moved"] or r["cells"][p]["pin"] != r["cells"][p]["label"])]


def figure(receipts: Iterable[Receipt], link_prefix: str = RECEIPTS_FROM_FIGURES) -> Any:
    """Framework × release (rows: each campaign's pin, then its other releases) × property (columns).
    A cell is the worst label over its paths (the matrix's symbol and colour) with violating /
    measured paths; on a release's row, a cell that moved against the pin is framed (solid: its
    label changed; dashed: the label held but some paths moved) and counts the cells that moved
    (Δn). A release that measured nothing is one band with the reason. In the SVG each row links
    to its receipt."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    from probes.matrix_figure import COLOURS, LEGEND

    props, rows = grid(receipts)
    width = max(len(props), 1)
    fig, ax = plt.subplots(figsize=(4.2 + 0.85 * width, 1.6 + 0.36 * len(rows)))
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
            ax.text(0.08, i + 0.5, text if len(text) <= 28 + 14 * width else text[:25 + 14 * width] + "…",
                    ha="left", va="center", fontsize=6.5, color=ink)
            continue
        moved_row = 0
        for j, prop in enumerate(props):
            cell = row["cells"].get(prop)
            if cell is None:
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor="#ffffff", edgecolor="#d0d7de", lw=0.8))
                continue
            fill, ink = COLOURS[cell["label"]]
            rect = Rectangle((j, i), 1, 1, facecolor=fill, edgecolor="#ffffff", lw=1.2)
            rect.set_url(url)
            ax.add_patch(rect)
            ax.text(j + 0.5, i + 0.45, cell["label"].value, ha="center", va="center", fontsize=9,
                    fontweight="bold", color=ink)
            if cell["label"] is not Label.NA:
                ax.text(j + 0.5, i + 0.82, f"{cell['violating']}/{cell['paths']}", ha="center", va="center",
                        fontsize=5, color=ink)
            if cell["moved"] is not None:
                moved_row += cell["moved"]
                if cell["pin"] != cell["label"] or cell["moved"]:
                    ax.add_patch(Rectangle((j + 0.04, i + 0.06), 0.92, 0.88, fill=False, edgecolor="#000000",
                                           lw=2.0, ls="-" if cell["pin"] != cell["label"] else "--"))
                    ax.text(j + 0.93, i + 0.2, f"Δ{cell['moved']}", ha="right", va="center", fontsize=5.5,
                            color="#000000", fontweight="bold")
        if row["side"] != "pin":
            ax.text(width + 0.1, i + 0.5, "no pin to compare" if not any(c["moved"] is not None for c in
                                                                         row["cells"].values())
                    else "unchanged" if not moved_row else f"{moved_row} cell(s) moved",
                    ha="left", va="center", fontsize=6.5, color="#000000" if moved_row else "#607d8b",
                    fontweight="bold" if moved_row else "normal")
    ax.set_xlim(0, width + 1.3)
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([j + 0.5 for j in range(len(props))], props, fontsize=9)
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.5 for i in range(len(rows))],
                  [f"{r['campaign']}" + (f" [{r['framework']}]" if r["framework"] and r["framework"] not in
                                         r["campaign"].replace("_", "-") else "") + f"  {r['side']} {r['release']}"
                   if r["side"] == "pin" else f"{r['side']} {r['release']}" for r in rows], fontsize=7)
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


def caption(receipts: Iterable[Receipt]) -> str:
    """The caption, with the figure's own counts."""
    receipts = list(receipts)
    props, rows = grid(receipts)
    others = [r for r in rows if r["side"] != "pin"]
    compared = [(r, p) for r in others for p in props if p in r["cells"] and r["cells"][p]["moved"] is not None]
    moved = changed(rows, props)
    names = [f"{r['campaign']} {r['release']} {p}" for r, p in moved]
    skipped = [f"{r['campaign']} {r['release']} ({r['status']})" for r in others if r["status"] != "ran"]
    frameworks = len({r["campaign"] for r in rows})
    return (f"Version drift: {frameworks} framework campaigns × their releases (rows: the pin, then the newest patch "
            f"of the pinned minor where that is another release, then the newest) × {len(props)} properties "
            "(columns); each cell is the worst label over its paths with violating / measured paths. "
            f"{len(moved)} of {len(compared)} cells compared with the pin moved"
            + (f" ({', '.join(names)})" if names else "") + f"; {len(cell_changes(receipts))} verdicts changed label"
            + (f"; measured nothing: {', '.join(skipped)}" if skipped else "") + ". Click a row (SVG) for its receipt.")


def show_figure(receipts: list[Receipt], params: Any) -> Any:
    """The drift figure, saved and shown as a numbered figure (``probes.figures.save_figure``)."""
    from probes.figures import save_figure

    return save_figure(figure(receipts), "drift-grid", caption(receipts), dict(params))
