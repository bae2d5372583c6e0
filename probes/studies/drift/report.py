"""Every release against the pin, per verdict and per property, from drift receipts only (no framework imports).

A *cell* is one verdict of a framework campaign: (probe, verdict framework, backend,
property, path). For every campaign, each side measured besides the pin (the newest
patch of the pinned minor, the newest release) is compared with the pin cell by cell;
a property's matrix cell (the worst label over its paths) is compared the same way.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Iterator

from probes.core.checker import Label, Property, cell_text  # the matrix's own cell text
from probes.core.receipt import Receipt

PROPS = tuple(p.value for p in Property)
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


def status_line(receipts: Iterable[Receipt]) -> str:
    """How many runs, how many harness errors, and each error (cut to 300 characters), as Markdown."""
    receipts = list(receipts)
    errors = [(r.probe, e) for r in receipts for e in r.harness_errors]
    return (f"**{len(receipts)} runs, {len(errors)} harness errors**"
            + "".join(f"\n* `{probe}`: {e[:300]}" for probe, e in errors))


def adapter_notes() -> str:
    """What changed in the adapters for other releases (``targets.ADAPTER_NOTES``), as a Markdown list."""
    from probes.studies.drift.targets import ADAPTER_NOTES

    return "\n".join(f"* **{k}**: {v}" for k, v in ADAPTER_NOTES.items()) or "none"


def measured_properties(rows: list[dict[str, Any]]) -> list[str]:
    """The properties some row of ``property_rows`` measured, in the matrix's order."""
    return [p for p in PROPS if any(r[p] for r in rows)]
