"""The headline page: every published number beside the value this checkout measured.

Published values come only from ``data/published.json`` (the one reference file).
Measured values come only from receipts, through each campaign's ``headlines``
function, which returns ``Measured`` entries keyed by headline id. The status is
computed by comparing the two here -- never typed in.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from probes import DATA_DIR, campaigns
from probes.core.campaign import campaign_dir
from probes.core.receipt import load_campaign, read_index

PUBLISHED_PATH = DATA_DIR / "published.json"


@dataclass
class Measured:
    """A measured headline value, with how it compares and why it may differ.

    ``value`` uses the same keys as the published entry where they mean the same
    thing. ``tolerance`` is relative, for numbers; ``why`` explains a difference from
    the evidence (encoding, protocol, machine), and is shown when the values differ.
    ``compare_keys`` limits the comparison to keys both sides measure. A campaign's
    ``headlines`` may map an id to a string instead: "not run here", and why.
    """

    value: Mapping[str, Any]
    why: str = ""
    tolerance: float = 0.0
    compare_keys: tuple[str, ...] | None = None
    receipts: tuple[str, ...] = field(default_factory=tuple)


@dataclass
class HeadlineRow:
    id: str
    campaign: str
    what: str
    published: Mapping[str, Any]
    measured: Mapping[str, Any] | None
    difference: str
    status: str  # "reproduced" | "differs" | "not run here"
    why: str
    receipts: tuple[str, ...] = ()


def load_published(path: Path = PUBLISHED_PATH) -> list[dict[str, Any]]:
    return json.loads(Path(path).read_text())["headlines"]


def _close(a: Any, b: Any, tol: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        # relative tolerance; below 1 the same number as an absolute one (above 1 it is implied)
        return math.isclose(a, b, rel_tol=tol, abs_tol=tol)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], tol) for k in a)
    return a == b


def _difference(published: Mapping[str, Any], measured: Mapping[str, Any], keys: list[str]) -> str:
    parts = []
    for k in keys:
        p, m = published.get(k), measured.get(k)
        if isinstance(p, (int, float)) and isinstance(m, (int, float)) and not isinstance(p, bool) and p:
            parts.append(f"{k}: {m - p:+.4g} ({(m - p) / abs(p):+.1%})")
        elif not _close(p, m, 0):
            parts.append(f"{k}: {m!r} vs {p!r}")
    return "; ".join(parts) or "none"


def compare(entry: Mapping[str, Any], measured: Measured | None, not_run_why: str) -> HeadlineRow:
    published = entry["published"]
    if measured is None:
        return HeadlineRow(entry["id"], entry["campaign"], entry["what"], published, None, "-", "not run here",
                           not_run_why)
    keys = list(measured.compare_keys or [k for k in published if k in measured.value])
    same = bool(keys) and all(_close(published[k], measured.value[k], measured.tolerance) for k in keys)
    return HeadlineRow(
        entry["id"], entry["campaign"], entry["what"], published, dict(measured.value),
        _difference(published, measured.value, keys) if keys else "not comparable",
        "reproduced" if same else "differs",
        measured.why if same else (measured.why or "no explanation recorded"),
        tuple(_receipt_path(entry["campaign"], r) for r in measured.receipts),
    )


def _receipt_path(campaign: str, receipt: str) -> str:
    """A probe id or a path -> the receipt's path relative to the data root (as the book serves it)."""
    if receipt.endswith(".json"):
        return receipt
    return f"receipts/{campaign}/{receipt}.json"


def headline_rows(receipts_root: Path | None = None) -> list[HeadlineRow]:
    """One row per published headline; measured from ``<receipts_root>/<campaign>/``, or
    (no root) from each campaign's shown run."""
    rows = []
    cache: dict[str, dict[str, Measured | str] | str] = {}
    for entry in load_published():
        name = entry["campaign"]
        if name not in cache:
            cache[name] = _measure(name, receipts_root)
        got = cache[name]
        if isinstance(got, str):
            rows.append(compare(entry, None, got))
        else:
            value = got.get(entry["id"])
            if isinstance(value, str):  # the campaign ran and says why this one was not measured
                rows.append(compare(entry, None, value))
            else:
                rows.append(compare(entry, value, f"campaign {name} ran but produced no value for this headline"))
    return rows


def _measure(name: str, receipts_root: Path | None) -> dict[str, Measured | str] | str:
    if name not in campaigns.available():
        return f"campaign {name} is not implemented yet"
    if receipts_root is None:
        from probes.core.runs import shown_run

        run = shown_run(name)
        directory = run.directory if run else Path("/nonexistent")
    else:
        directory = campaign_dir(name, receipts_root)
    if read_index(directory) is None:
        hint = "needs API keys: run with a provider key set" if name == "live" else f"run ./reproduce.sh --only {name}"
        return f"no complete receipts for {name} ({hint})"
    campaign = campaigns.get(name)
    if campaign.headlines is None:
        return f"campaign {name} defines no headline extractor"
    return campaign.headlines(load_campaign(directory))
