"""Pin vs newest, per property and per path, from drift receipts only (no framework imports)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Iterator

from probes.core.checker import Label, cell_text  # the matrix's own split-cell text
from probes.core.receipt import Receipt

PROPS = ("PC", "EO", "FD", "CV", "CO", "RD", "FI", "LV")


def link(probe: str) -> str:
    return f"receipts/drift/{probe}.json"


def _labels(view: dict[str, Any]) -> dict[tuple[str, str], list[Label]]:
    """(verdict framework, property) -> every label over the view's paths."""
    out: dict[tuple[str, str], list[Label]] = defaultdict(list)
    for probe in view.values():
        for v in probe["verdicts"]:
            out[(v["framework"], v["property"])].append(Label(v["label"]))
    return out


def pairs(receipts: Iterable[Receipt]) -> dict[str, dict[str, Receipt]]:
    out: dict[str, dict[str, Receipt]] = defaultdict(dict)
    for r in receipts:
        out[r.args["campaign"]][r.args["side"]] = r
    return dict(out)


def _framework_sides(receipts: Iterable[Receipt]) -> Iterator[tuple[str, str, Receipt, Receipt, Any, Any]]:
    """(campaign, verdict framework, pin receipt, newest receipt, pin labels, newest labels) for every
    campaign measured on both sides, frameworks in name order."""
    for name, sides in sorted(pairs(receipts).items()):
        pin, new = sides.get("pin"), sides.get("newest")
        if pin is None or new is None or "verdicts" not in pin.observations or "verdicts" not in new.observations:
            continue
        a, b = _labels(pin.observations["verdicts"]), _labels(new.observations["verdicts"])
        for fw in sorted({k[0] for k in a} | {k[0] for k in b}):
            yield name, fw, pin, new, a, b


def property_rows(receipts: Iterable[Receipt]) -> list[dict[str, Any]]:
    """One row per (campaign, verdict framework): per property the pin and newest cell, and whether they differ."""
    rows = []
    for name, fw, pin, new, a, b in _framework_sides(receipts):
        row: dict[str, Any] = {"campaign": name, "framework": fw, "pin": pin.observations.get("release"),
                               "newest": new.observations.get("release")}
        changed = []
        for prop in PROPS:
            left, right = cell_text(a.get((fw, prop), [])), cell_text(b.get((fw, prop), []))
            row[prop] = left if left == right else f"{left or '—'} → {right or '—'}"
            if left != right:
                changed.append(prop)
        row["changed"] = ", ".join(changed) or "—"
        row["receipts"] = f"[pin]({link(pin.probe)}) [newest]({link(new.probe)})"
        rows.append(row)
    return rows


def path_changes(receipts: Iterable[Receipt]) -> list[dict[str, Any]]:
    """Every (probe, property, path) whose label differs between pin and newest, or exists on one side only."""
    out = []
    for name, sides in sorted(pairs(receipts).items()):
        pin, new = sides.get("pin"), sides.get("newest")
        if pin is None or new is None:
            continue

        def flat(r: Receipt) -> dict[tuple[str, str, str, str, str], dict[str, Any]]:
            return {(p, v["framework"], v["backend"], v["property"], v["path"]): v
                    for p, probe in (r.observations.get("verdicts") or {}).items() for v in probe["verdicts"]}

        a, b = flat(pin), flat(new)
        for key in sorted(set(a) | set(b)):
            la, lb = a.get(key, {}).get("label", "—"), b.get(key, {}).get("label", "—")
            if la != lb:
                out.append({"campaign": name, "probe": key[0], "framework": key[1], "backend": key[2],
                            "property": key[3], "path": key[4], "pin": la, "newest": lb,
                            "newest summary": b.get(key, {}).get("summary", ""),
                            "pin summary": a.get(key, {}).get("summary", "")})
    return out


def versions_table(receipts: Iterable[Receipt]) -> list[dict[str, Any]]:
    rows = []
    for name, sides in sorted(pairs(receipts).items()):
        for side in ("pin", "newest"):
            r = sides.get(side)
            if r is None:
                continue
            rows.append({"campaign": name, "side": side, "release": r.observations.get("release"),
                         "installed": ", ".join(f"{k} {v}" for k, v in sorted((r.observations.get("installed") or {})
                                                                              .items()) if v),
                         "run_s": r.metrics.get("run_seconds"), "env_s": r.metrics.get("env_seconds"),
                         "harness errors": len(r.harness_errors)})
    return rows


# --- the figure -------------------------------------------------------------------------

RECEIPTS_FROM_FIGURES = "../receipts/drift/"  # a figure's SVG as the book serves it (figures/) -> the receipts


def grid(receipts: Iterable[Receipt]) -> tuple[list[str], list[dict[str, Any]]]:
    """(properties measured on either side, one row per (campaign, verdict framework) with,
    per property, the pin's and the newest's worst label and violating / measured paths)."""
    from probes.core.checker import collapse

    rows: list[dict[str, Any]] = []
    measured: set[str] = set()
    for name, fw, pin, new, a, b in _framework_sides(receipts):
        row: dict[str, Any] = {"campaign": name, "framework": fw, "pin": pin.observations.get("release"),
                               "newest": new.observations.get("release"),
                               "receipts": {"pin": pin.probe, "newest": new.probe}, "cells": {}}
        for prop in PROPS:
            halves = {}
            for side, labels in (("pin", a.get((fw, prop), [])), ("newest", b.get((fw, prop), []))):
                top = collapse(labels)
                if top is not None:
                    real = [x for x in labels if x is not Label.NA]
                    halves[side] = {"label": top, "violating": sum(x.violates for x in real), "paths": len(real)}
            if halves:
                measured.add(prop)
                row["cells"][prop] = halves
        rows.append(row)
    return [p for p in PROPS if p in measured], rows


def figure(receipts: Iterable[Receipt], link_prefix: str = RECEIPTS_FROM_FIGURES) -> Any:
    """Framework (rows, with pin → newest release) × property (columns); each cell split in two,
    pin left, newest right, one symbol and colour each (the matrix's); a changed cell is framed.
    In the SVG each half links to its side's receipt."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    from probes.matrix_figure import COLOURS, LEGEND

    props, rows = grid(receipts)
    fig, ax = plt.subplots(figsize=(2.6 + 1.0 * len(props), 1.2 + 0.5 * len(rows)))
    for i, row in enumerate(rows):
        for j, prop in enumerate(props):
            halves = row["cells"].get(prop, {})
            if not halves:
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor="#ffffff", edgecolor="#d0d7de", lw=0.8))
                continue
            for k, side in enumerate(("pin", "newest")):
                half = halves.get(side)
                x = j + 0.5 * k
                if half is None:  # measured on one side only
                    ax.add_patch(Rectangle((x, i), 0.5, 1, facecolor="#ffffff", edgecolor="#d0d7de", lw=0.8))
                    ax.text(x + 0.25, i + 0.45, "—", ha="center", va="center", fontsize=10, color="#546e7a")
                    continue
                fill, ink = COLOURS[half["label"]]
                rect = Rectangle((x, i), 0.5, 1, facecolor=fill, edgecolor="#ffffff", lw=1.2)
                rect.set_url(f"{link_prefix}{row['receipts'][side]}.json")
                ax.add_patch(rect)
                ax.text(x + 0.25, i + 0.42, half["label"].value, ha="center", va="center", fontsize=10,
                        fontweight="bold", color=ink)
                if half["label"] is not Label.NA:
                    ax.text(x + 0.25, i + 0.8, f"{half['violating']}/{half['paths']}", ha="center", va="center",
                            fontsize=5.5, color=ink)
            if {s: h["label"] for s, h in halves.items()}.get("pin") != {s: h["label"] for s, h in halves.items()}.get("newest"):
                ax.add_patch(Rectangle((j + 0.03, i + 0.03), 0.94, 0.94, fill=False, edgecolor="#000000", lw=2.2))
    ax.set_xlim(0, len(props))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([j + 0.5 for j in range(len(props))], props, fontsize=9)
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.5 for i in range(len(rows))],
                  [f"{r['framework']}  {r['pin']} → {r['newest']}" for r in rows], fontsize=8)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    handles = [Patch(facecolor=COLOURS[lab][0], edgecolor="#999999", label=text) for lab, text in LEGEND.items()]
    handles.append(Patch(facecolor="#ffffff", edgecolor="#000000", lw=2, label="framed: label changed pin → newest"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=2, fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def caption(receipts: Iterable[Receipt]) -> str:
    """The caption, with the figure's own counts."""
    props, rows = grid(receipts)
    cells = [(r, p) for r in rows for p in props if p in r["cells"]]
    changed = [f"{r['framework']} {p}" for r, p in cells
               if r["cells"][p].get("pin", {}).get("label") != r["cells"][p].get("newest", {}).get("label")]
    return (f"Version drift: {len(rows)} frameworks (rows, pinned release → newest release) × {len(props)} properties "
            "(columns); each cell is split, the pin on the left, the newest release on the right, each half the worst "
            "label over its paths and violating / measured paths. "
            f"{len(changed)} of {len(cells)} cells changed their label" + (f" ({', '.join(changed)})" if changed else "")
            + ". Click a half (SVG) for its receipt.")


def show_figure(receipts: list[Receipt], params: Any) -> Any:
    """The drift figure, saved and shown as a numbered figure (``probes.figures.save_figure``)."""
    from probes.figures import save_figure

    return save_figure(figure(receipts), "drift-grid", caption(receipts), dict(params))
