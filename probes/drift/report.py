"""Pin vs newest, per property and per path, from drift receipts only (no framework imports)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

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


def property_rows(receipts: Iterable[Receipt]) -> list[dict[str, Any]]:
    """One row per (campaign, verdict framework): per property the pin and newest cell, and whether they differ."""
    rows = []
    for name, sides in sorted(pairs(receipts).items()):
        pin, new = sides.get("pin"), sides.get("newest")
        if pin is None or new is None or "verdicts" not in pin.observations or "verdicts" not in new.observations:
            continue
        a, b = _labels(pin.observations["verdicts"]), _labels(new.observations["verdicts"])
        for fw in sorted({k[0] for k in a} | {k[0] for k in b}):
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
