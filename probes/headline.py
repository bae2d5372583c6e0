"""The headline page: every published number beside the values this project measured.

Published values come only from ``data/published.json`` (the one reference file).
Measured values come only from receipts, through each campaign's ``headlines``
function, which returns ``Measured`` entries keyed by headline id. The status is
computed here, over **every** published key (a campaign cannot narrow the comparison
to the keys that happen to agree), and never typed in:

* **reproduced** -- every published value is measured and matches (within the
  campaign's stated relative tolerance, shown with it);
* **verdict reproduced, magnitudes differ** -- every verdict-bearing value (a result,
  a label, a yes/no; or the keys a published entry names in ``verdict_keys``) matches,
  some magnitude (a state count, a depth, a latency, a sample size) does not;
* **reproduced in part** -- everything measured matches, some published value is not
  measured by this campaign (the explanation says which, and where it is measured);
* **differs** -- a verdict-bearing value differs, or (with no verdict value) a
  magnitude does;
* **contradicted by this project's evidence** -- the campaign's own receipts show
  behaviour that contradicts the published claim (e.g. forged state accepted silently
  beside a published "tampered state is rejected");
* **not run here** -- no receipts (and why);
* **variant** -- the run used other parameters than the paper's: reported with its
  parameters, never scored against the paper.

The explanation of every status is built from the compared values (which key, both
values, the ratio); a campaign's own note (``Measured.why``) follows it as context.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from probes import DATA_DIR, campaigns
from probes.core.receipt import load_campaign, read_index

PUBLISHED_PATH = DATA_DIR / "published.json"
LABELS = frozenset({"✓", "✗", "D", "U", "n/a"})

REPRODUCED = "reproduced"
MAGNITUDES = "verdict reproduced, magnitudes differ"
PARTIAL = "reproduced in part"
DIFFERS = "differs"
CONTRADICTED = "contradicted"
NOT_RUN = "not run here"
VARIANT = "variant"
STATUSES = (REPRODUCED, MAGNITUDES, PARTIAL, DIFFERS, CONTRADICTED, NOT_RUN, VARIANT)
STATUS_TEXT = {
    REPRODUCED: "✓ reproduced",
    MAGNITUDES: "≈ verdict reproduced, magnitudes differ",
    PARTIAL: "◐ reproduced in part",
    DIFFERS: "⚠ differs",
    CONTRADICTED: "✗ contradicted by this project's own evidence",
    NOT_RUN: "○ not run here",
    VARIANT: "◇ variant run (not compared with the paper)",
}
STATUS_CLASS = {REPRODUCED: "reproduced", MAGNITUDES: "magnitudes", PARTIAL: "partial", DIFFERS: "differs",
                CONTRADICTED: "contradicted", NOT_RUN: "notrun", VARIANT: "variant"}


@dataclass
class Measured:
    """A measured headline value, with how it compares and the campaign's note.

    ``value`` uses the same keys as the published entry where they mean the same
    thing. ``tolerance`` is relative, for numbers. ``why`` is the campaign's note on
    what moves the value (shown after the computed explanation). ``contradicted_by``
    names evidence in this campaign's receipts that contradicts the published claim
    (paths, probes), with ``contradiction`` saying how, from the measured values.
    ``compare_keys`` is kept for the campaigns' chapters (the keys they consider the
    claim); the status is computed over every published key regardless. A campaign's
    ``headlines`` may map an id to a string instead: "not run here", and why.
    """

    value: Mapping[str, Any]
    why: str = ""
    tolerance: float = 0.0
    compare_keys: tuple[str, ...] | None = None
    receipts: tuple[str, ...] = field(default_factory=tuple)
    contradicted_by: tuple[str, ...] = ()
    contradiction: str = ""


@dataclass
class KeyComparison:
    key: str
    published: Any
    measured: Any
    kind: str  # "verdict" | "magnitude"
    outcome: str  # "match" | "differs" | "unmeasured"
    detail: str = ""


@dataclass
class HeadlineRow:
    id: str
    campaign: str
    what: str
    published: Mapping[str, Any]
    measured: Mapping[str, Any] | None
    difference: str
    status: str
    why: str  # the campaign's note (or why it was not run)
    receipts: tuple[str, ...] = ()
    explanation: str = ""  # computed from the compared values
    keys: list[KeyComparison] = field(default_factory=list)
    tolerance: float = 0.0

    @property
    def status_class(self) -> str:
        return STATUS_CLASS[self.status]


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


def _is_verdict_value(value: Any) -> bool:
    """Results, labels and yes/no carry a verdict; numbers are magnitudes."""
    if isinstance(value, (str, bool)):
        return True
    if isinstance(value, list):
        return bool(value) and all(_is_verdict_value(v) for v in value)
    if isinstance(value, dict):
        return bool(value) and all(_is_verdict_value(v) for v in value.values())
    return False


def _num(x: Any) -> str:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return _text(x)
    if isinstance(x, float) and not x.is_integer():
        return f"{x:,.4g}" if abs(x) >= 1000 else f"{x:.4g}"
    return f"{int(x):,}"


def _text(x: Any) -> str:
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k}: {_num(v)}" for k, v in x.items()) + "}"
    if isinstance(x, list):
        return "[" + ", ".join(_num(v) for v in x) + "]"
    if isinstance(x, bool):
        return "yes" if x else "no"
    return _num(x) if isinstance(x, (int, float)) else str(x)


def describe_difference(key: str, published: Any, measured: Any) -> str:
    """``key``: both values and, for numbers, the ratio -- in words a reader can check."""
    if isinstance(published, (int, float)) and isinstance(measured, (int, float)) \
            and not isinstance(published, bool) and not isinstance(measured, bool):
        if published:
            ratio = measured / published
            rel = f"×{ratio:.3g}" if ratio >= 2 or ratio <= 0.5 else f"{(ratio - 1):+.1%}"
            return f"{key}: {_num(measured)} here vs {_num(published)} published ({rel})"
        return f"{key}: {_num(measured)} here vs {_num(published)} published"
    return f"{key}: {_text(measured)} here vs {_text(published)} published"


def _compare_key(key: str, published: Any, measured: Mapping[str, Any], tol: float,
                 verdict_keys: set[str] | None) -> KeyComparison:
    kind = "verdict" if (key in verdict_keys if verdict_keys is not None else _is_verdict_value(published)) \
        else "magnitude"
    if key not in measured or measured[key] is None:
        return KeyComparison(key, published, None, kind, "unmeasured", f"{key}: not measured by this campaign")
    got = measured[key]
    if isinstance(published, str) and published in LABELS and isinstance(got, str) and got not in LABELS:
        return KeyComparison(key, published, got, kind, "unmeasured", f"{key}: {got}")  # e.g. "measured by …"
    if _close(published, got, tol if kind == "magnitude" else 0.0):
        return KeyComparison(key, published, got, kind, "match")
    return KeyComparison(key, published, got, kind, "differs", describe_difference(key, published, got))


def compare(entry: Mapping[str, Any], measured: Measured | None, not_run_why: str,
            variant: str = "") -> HeadlineRow:
    """Compare one published entry with one measured value; ``variant`` (the changed
    parameters) marks a run with other parameters than the paper's."""
    published = entry["published"]
    base = dict(id=entry["id"], campaign=entry["campaign"], what=entry["what"], published=published)
    if measured is None:
        return HeadlineRow(**base, measured=None, difference="-", status=NOT_RUN, why=not_run_why,
                           explanation=not_run_why)
    vk = set(entry["verdict_keys"]) if "verdict_keys" in entry else None
    keys = [_compare_key(k, published[k], measured.value, measured.tolerance, vk) for k in published]
    receipts = tuple(_receipt_path(entry["campaign"], r) for r in measured.receipts)
    differing = [k for k in keys if k.outcome == "differs"]
    unmeasured = [k for k in keys if k.outcome == "unmeasured"]
    verdict_keys = [k for k in keys if k.kind == "verdict"]
    tol = f" (numbers within ±{measured.tolerance:.0%}, the campaign's stated tolerance)" if measured.tolerance else ""
    if variant:
        status = VARIANT
        explanation = (f"measured with other parameters than the paper's ({variant}); compare it with this "
                       "project's default run on the reproduction report, not with the published value")
    elif measured.contradicted_by:
        status = CONTRADICTED
        explanation = (measured.contradiction or "this campaign's receipts contradict the published claim") + \
            f" (evidence: {', '.join(measured.contradicted_by)})"
        agree = [k.key for k in keys if k.outcome == "match"]
        if agree:
            explanation += f"; the published value itself ({', '.join(agree)}) matches"
    elif any(k.kind == "verdict" for k in differing):
        status = DIFFERS
        explanation = "; ".join(k.detail for k in differing)
    elif differing:
        status = MAGNITUDES if verdict_keys and all(k.outcome == "match" for k in verdict_keys) else DIFFERS
        explanation = "; ".join(k.detail for k in differing)
        if status == MAGNITUDES:
            explanation = (f"the verdict agrees ({', '.join(f'{k.key}: {_text(k.measured)}' for k in verdict_keys)}); "
                           + explanation)
        explanation += tol
    elif unmeasured:
        status = PARTIAL
        explanation = ("everything measured agrees; " + "; ".join(k.detail for k in unmeasured))
    else:
        status = REPRODUCED
        explanation = "every published value matches" + (tol or " exactly")
    if differing and unmeasured and status not in (VARIANT, CONTRADICTED):
        explanation += "; " + "; ".join(k.detail for k in unmeasured)
    return HeadlineRow(**base, measured=dict(measured.value), difference="; ".join(k.detail for k in differing) or "none",
                       status=status, why=measured.why, receipts=receipts, explanation=explanation, keys=keys,
                       tolerance=measured.tolerance)


def _receipt_path(campaign: str, receipt: str) -> str:
    """A probe id or a path -> the receipt's path relative to the book's root."""
    if receipt.endswith(".json"):
        return receipt
    return f"receipts/{campaign}/{receipt}.json"


def measure_directory(name: str, directory: Path | None) -> dict[str, Measured | str] | str:
    """Campaign ``name``'s headline values from the complete results in ``directory``."""
    if name not in campaigns.available():
        return f"campaign {name} is not implemented yet"
    if directory is None or read_index(Path(directory)) is None:
        hint = "needs API keys: run with a provider key set" if name == "live" else f"run ./reproduce.sh --only {name}"
        return f"no complete results for {name} ({hint})"
    campaign = campaigns.get(name)
    if campaign.headlines is None:
        return f"campaign {name} defines no headline extractor"
    return campaign.headlines(load_campaign(Path(directory)))


def rows_for(directories: Mapping[str, Path | None], variants: Mapping[str, str] | None = None) -> list[HeadlineRow]:
    """Every published headline against the results in ``directories[campaign]``."""
    rows = []
    cache: dict[str, dict[str, Measured | str] | str] = {}
    for entry in load_published():
        name = entry["campaign"]
        if name not in cache:
            cache[name] = measure_directory(name, directories.get(name))
        rows.append(_row(entry, cache[name], (variants or {}).get(name, "")))
    return rows


def _row(entry: Mapping[str, Any], got: dict[str, Measured | str] | str, variant: str = "") -> HeadlineRow:
    name = entry["campaign"]
    if isinstance(got, str):
        return compare(entry, None, got)
    value = got.get(entry["id"])
    if isinstance(value, str):  # the campaign ran and says why this one was not measured
        return compare(entry, None, value)
    if value is None:
        return compare(entry, None, f"campaign {name} ran but produced no value for this headline")
    return compare(entry, value, "", variant)


def headline_rows(receipts_root: Path | None = None) -> list[HeadlineRow]:
    """Against ``<receipts_root>/<campaign>/`` (the book's staged results), or against
    each campaign's shown run when no root is given."""
    if receipts_root is not None:
        return rows_for({e["campaign"]: Path(receipts_root) / e["campaign"] for e in load_published()})
    from probes.core.runs import shown_run

    dirs = {}
    for e in load_published():
        run = shown_run(e["campaign"]) if e["campaign"] in campaigns.available() else None
        dirs[e["campaign"]] = run.directory if run else None
    return rows_for(dirs)


def chapter_rows(campaign: Any, run: Any) -> list[HeadlineRow]:
    """The headline rows of one campaign for a chapter's own run (a ``CampaignRun``)."""
    from probes.core.runs import profile_of

    got = campaign.headlines(list(run.receipts)) if campaign.headlines and run.receipts else \
        f"no receipts for {campaign.name} in this run"
    variant = ""
    if profile_of(campaign, run.params) != "default":
        defaults = campaign.resolve()
        variant = ", ".join(f"{k}={v!r}" for k, v in run.params.items() if defaults.get(k) != v)
    return [_row(e, got, variant) for e in load_published() if e["campaign"] == campaign.name]
