"""The headline page: every published number beside the values this project measured.

Published values come only from ``data/published.json`` (the one reference file); each
entry names the line it was read from (``sources``: a line of ``paper-summary.txt``,
``CAMPAIGNS.md`` or ``CONTRACT.md`` in ``../shared``, with the words quoted). Measured
values come only from receipts, through the paper layer's function for the campaign
(``probes.paper.EXTRACTORS``), which returns ``Measured`` entries keyed by headline id. The status is computed here, over
**every** published key (a campaign cannot narrow the comparison to the keys that
happen to agree), and never typed in:

* **reproduced** -- every published value is measured and matches;
* **verdict reproduced, magnitudes differ** -- every verdict-bearing value (a result,
  a label, a yes/no; or the keys a published entry names in ``verdict_keys``) matches,
  some magnitude (a state count, a depth, a latency, a sample size) does not;
* **behaviour reproduced, labels differ** -- every published value that describes
  behaviour (a count, a yes/no, a result that is not a conformance label) matches
  and only conformance labels (✓ ✗ D U) differ: the framework did what the paper saw
  and the two judges label it differently;
* **not comparable** -- the verdict agrees but the published counts were made under
  conditions (constants, a state-space reduction) that this run's receipts show it did
  not share, or that the source does not state: the entry's ``conditions`` against the
  ``Measured.conditions`` the campaign read from its receipts;
* **reproduced in part** -- everything measured matches, some published value is not
  measured by this campaign (the explanation says which, and where it is measured);
* **differs** -- a verdict-bearing value differs, or (with no verdict value) a
  magnitude does;
* **contradicted by this project's evidence** -- the campaign's own receipts show
  behaviour that contradicts the published claim;
* **measured on a re-implementation** -- the entry names the build the paper measured
  (``build``) and the receipts measured another one (``Measured.build``): the
  comparison of the values is given, but it is not a reproduction of the paper's build;
* **published sources disagree** -- the entry has several readings (two source lines
  that give different values, ``readings``) and the measurement compares differently
  with each; every reading is shown with its own status;
* **published value without a source** -- no source line: shown, never scored;
* **not measured here** -- the campaign ran, but none of its protocols measures this
  (``NotMeasured``, with the reason computed from its receipts);
* **not run here** -- no receipts (and why);
* **variant** -- the run used other parameters than the paper's: reported with its
  parameters, never scored against the paper.

Numbers are compared by **relative difference**, ``|measured - published| / |published|``,
against the campaign's stated tolerance (``Measured.tolerance``, 0 = exactly), element by
element in lists and maps. A published 0 has no relative scale: it matches only a
measured 0. A published ``null`` inside a list is an element the source does not state
(not compared). A published key listed in the entry's ``unsourced`` has no source line:
shown, never compared. The explanation of every status is built from the compared values
(which key, both values, the relative difference, the tolerance); a campaign's own note
(``Measured.why``) follows it as context.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from probes import DATA_DIR, campaigns
from probes.core.receipt import load_campaign, read_index
from probes.paper import extractor

PUBLISHED_PATH = DATA_DIR / "published.json"
LABELS = frozenset({"✓", "✗", "D", "U", "n/a"})
SOURCE_FILES = ("paper-summary.txt", "CAMPAIGNS.md", "CONTRACT.md")  # in ../shared

REPRODUCED = "reproduced"
MAGNITUDES = "verdict reproduced, magnitudes differ"
BEHAVIOUR = "behaviour reproduced, labels differ"
NOT_COMPARABLE = "not comparable"
PARTIAL = "reproduced in part"
DIFFERS = "differs"
CONTRADICTED = "contradicted"
REIMPLEMENTATION = "measured on a re-implementation"
DISAGREE = "published sources disagree"
UNSOURCED = "unsourced"
NOT_MEASURED = "not measured here"
NOT_RUN = "not run here"
VARIANT = "variant"
STATUSES = (REPRODUCED, MAGNITUDES, BEHAVIOUR, NOT_COMPARABLE, PARTIAL, DIFFERS, CONTRADICTED, REIMPLEMENTATION,
            DISAGREE, UNSOURCED, NOT_MEASURED, NOT_RUN, VARIANT)
STATUS_TEXT = {
    REPRODUCED: "✓ reproduced",
    MAGNITUDES: "≈ verdict reproduced, magnitudes differ",
    BEHAVIOUR: "≈ behaviour reproduced, labels differ",
    NOT_COMPARABLE: "⊘ verdict reproduced, counts not comparable",
    PARTIAL: "◐ reproduced in part",
    DIFFERS: "⚠ differs",
    CONTRADICTED: "✗ contradicted by this project's own evidence",
    REIMPLEMENTATION: "◑ measured on a re-implementation, not the paper's build",
    DISAGREE: "⇄ published sources disagree",
    UNSOURCED: "? published value without a source (not compared)",
    NOT_MEASURED: "○ not measured here",
    NOT_RUN: "○ not run here",
    VARIANT: "◇ variant run (not compared with the paper)",
}
STATUS_CLASS = {REPRODUCED: "reproduced", MAGNITUDES: "magnitudes", BEHAVIOUR: "labels",
                NOT_COMPARABLE: "notcomparable", PARTIAL: "partial", DIFFERS: "differs",
                CONTRADICTED: "contradicted", REIMPLEMENTATION: "reimplementation", DISAGREE: "disagree",
                UNSOURCED: "unsourced", NOT_MEASURED: "notmeasured", NOT_RUN: "notrun", VARIANT: "variant"}


@dataclass
class Measured:
    """A measured headline value, with how it compares and the campaign's note.

    ``value`` uses the same keys as the published entry where they mean the same
    thing. ``tolerance`` is relative, for numbers. ``why`` is the campaign's note on
    what moves the value (shown after the computed explanation). ``contradicted_by``
    names evidence in this campaign's receipts that contradicts the published claim
    (paths, probes), with ``contradiction`` saying how, from the measured values.
    ``conditions`` are what the receipts record the counts were made under (constants,
    reduction), compared with the entry's ``conditions``; ``build`` is the build of the
    measured implementation as the receipts record it, compared with the entry's
    ``build``. ``samples`` names the keys that are samples of reps (outcome -> reps), compared by
    ``sample_consistency`` instead of equality. ``compare_keys`` is kept for the campaigns' chapters (the keys they
    consider the claim); the status is computed over every published key regardless.
    An extractor may map an id to a string instead: "not run here", and
    why; or to ``NotMeasured``: it ran, and no protocol of it measures this.
    """

    value: Mapping[str, Any]
    why: str = ""
    tolerance: float = 0.0
    compare_keys: tuple[str, ...] | None = None
    receipts: tuple[str, ...] = field(default_factory=tuple)
    contradicted_by: tuple[str, ...] = ()
    contradiction: str = ""
    conditions: Mapping[str, Any] | None = None
    build: str = ""
    samples: tuple[str, ...] = ()  # keys whose values count reps per outcome (``sample_consistency``)


@dataclass(frozen=True)
class NotMeasured:
    """The campaign ran, and none of its protocols measures this published value (``why``,
    computed from its receipts)."""

    why: str


@dataclass
class KeyComparison:
    key: str
    published: Any
    measured: Any
    kind: str  # "verdict" | "magnitude"
    outcome: str  # "match" | "differs" | "unmeasured" | "not comparable" | "unsourced"
    detail: str = ""
    label: bool = False  # the published value is a conformance label (or labels)


@dataclass
class Reading:
    """One source's reading of a published entry and how the measurement compares with it."""

    name: str
    sources: list[Mapping[str, Any]]
    published: Mapping[str, Any]
    status: str
    explanation: str


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
    sources: list[Mapping[str, Any]] = field(default_factory=list)
    readings: list[Reading] = field(default_factory=list)  # more than one when the sources disagree

    @property
    def status_class(self) -> str:
        return STATUS_CLASS[self.status]


def load_published(path: Path = PUBLISHED_PATH) -> list[dict[str, Any]]:
    return json.loads(Path(path).read_text())["headlines"]


def cite(sources: list[Mapping[str, Any]] | None) -> str:
    """``paper-summary.txt line 33; CAMPAIGNS.md line 90`` -- where a published value was read."""
    return "; ".join(f"{s['file']} line {s['line']}" for s in sources or ()) or "no source"


def relative_difference(published: float, measured: float) -> float:
    """``|measured - published| / |published|``; a published 0 has no scale: 0 or infinite."""
    if measured == published:
        return 0.0
    if published == 0 or math.isnan(published) or math.isnan(measured):
        return math.inf
    return abs(measured - published) / abs(published)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _close(published: Any, measured: Any, tol: float) -> bool:
    """Equal, or numbers within relative tolerance ``tol``; a published ``None`` inside a
    list or map is an element the source does not state (not compared)."""
    if isinstance(published, bool) or isinstance(measured, bool):
        return published == measured
    if _is_number(published) and _is_number(measured):
        return relative_difference(published, measured) <= tol * (1 + 1e-9)
    if isinstance(published, list) and isinstance(measured, list):
        return len(published) == len(measured) and all(
            p is None or _close(p, m, tol) for p, m in zip(published, measured))
    if isinstance(published, dict) and isinstance(measured, dict):
        return published.keys() == measured.keys() and all(
            published[k] is None or _close(published[k], measured[k], tol) for k in published)
    return published == measured


SAMPLE_LEVEL = 0.05  # two samples of reps match unless an exact test rejects their sameness at this level


def sample_consistency(published: Mapping[str, int], measured: Mapping[str, int]) -> float:
    """The p-value of Fisher's exact test (Freeman-Halton, two-sided) that two samples of reps, each
    a map outcome -> reps, were drawn from one distribution: the probability, with the table's margins
    fixed, of a split of the reps at most as likely as the one observed. Exact (every split is
    enumerated; the samples here are tens of reps over a few outcomes), so a status never depends on
    a random draw of the test itself."""
    from itertools import product

    from scipy.stats import multivariate_hypergeom

    outcomes = sorted(set(published) | set(measured))
    first = [int(published.get(o, 0)) for o in outcomes]
    columns = [a + int(measured.get(o, 0)) for a, o in zip(first, outcomes)]
    split = multivariate_hypergeom(m=columns, n=sum(first))
    observed = split.pmf(first)
    total = sum(p for x in product(*(range(c + 1) for c in columns)) if sum(x) == sum(first)
                if (p := split.pmf(list(x))) <= observed * (1 + 1e-7))
    return min(1.0, float(total))


def _is_counts(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                           for v in value.values())


def _number_pairs(key: str, published: Any, measured: Any) -> Iterator[tuple[str, float, float]]:
    """Every (where, published, measured) pair of numbers at the same place in both values."""
    if _is_number(published) and _is_number(measured):
        yield key, published, measured
    elif isinstance(published, list) and isinstance(measured, list) and len(published) == len(measured):
        for i, (p, m) in enumerate(zip(published, measured)):
            yield from _number_pairs(f"{key}[{i}]", p, m)
    elif isinstance(published, dict) and isinstance(measured, dict):
        for k in published:
            if k in measured:
                yield from _number_pairs(f"{key}[{k}]", published[k], measured[k])


def _is_verdict_value(value: Any) -> bool:
    """Results, labels and yes/no carry a verdict; numbers are magnitudes."""
    if isinstance(value, (str, bool)):
        return True
    if isinstance(value, list):
        return bool(value) and all(_is_verdict_value(v) for v in value)
    if isinstance(value, dict):
        return bool(value) and all(_is_verdict_value(v) for v in value.values())
    return False


def _is_label_value(value: Any) -> bool:
    """A conformance label (✓ ✗ D U n/a), or a list / map of them only."""
    if isinstance(value, str):
        return value in LABELS
    if isinstance(value, list):
        return bool(value) and all(_is_label_value(v) for v in value)
    if isinstance(value, dict):
        return bool(value) and all(_is_label_value(v) for v in value.values())
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
    if isinstance(x, list):  # a None element: one the source does not state
        return "[" + ", ".join("—" if v is None else _num(v) for v in x) + "]"
    if isinstance(x, bool):
        return "yes" if x else "no"
    return _num(x) if isinstance(x, (int, float)) else str(x)


def _pct(published: float, measured: float) -> str:
    """The signed relative difference in words: ``+20.0%``, ``×3``, or why there is none."""
    if measured == published:
        return "equal"
    if published == 0:
        return "a published 0 matches only a measured 0"
    ratio = measured / published
    return f"×{ratio:.3g}" if ratio >= 2 or ratio <= 0.5 else f"{(ratio - 1):+.1%}"


def describe_difference(key: str, published: Any, measured: Any) -> str:
    """``key``: both values and, for numbers, the relative difference -- in words a reader can check."""
    if _is_number(published) and _is_number(measured):
        return f"{key}: {_num(measured)} here vs {_num(published)} published ({_pct(published, measured)})"
    return f"{key}: {_text(measured)} here vs {_text(published)} published"


def tolerance_text(tol: float) -> str:
    """A relative tolerance as a percentage, never rounded to another value: ``10%``, ``0.676%``
    (a tolerance below a whole percent printed as ``1%`` would state a looser comparison than
    the one made)."""
    pct = tol * 100
    return f"{pct:.0f}%" if abs(pct - round(pct)) < 1e-9 else f"{pct:.3g}%"


def _beyond(key: str, published: Any, measured: Any, tol: float) -> str:
    """For a list or map of numbers: the elements outside the tolerance, each with its difference."""
    if _is_number(published) or (isinstance(published, dict) and isinstance(measured, dict)
                                 and published.keys() != measured.keys()):
        return ""
    out = [f"{where} {_num(m)} vs {_num(p)} ({_pct(p, m)})" for where, p, m in _number_pairs(key, published, measured)
           if relative_difference(p, m) > tol * (1 + 1e-9)]
    if out and tol:
        return f" (beyond ±{tolerance_text(tol)}: {', '.join(out)})"
    return f" ({', '.join(out)})" if out else ""


def _largest(keys: list[KeyComparison]) -> str:
    """The largest relative difference among the matching numbers, in words."""
    pairs = [(relative_difference(p, m), where, p, m) for k in keys if k.outcome == "match" and k.kind == "magnitude"
             for where, p, m in _number_pairs(k.key, k.published, k.measured)]
    pairs = [x for x in pairs if x[0] > 0]
    if not pairs:
        return "all equal"
    _, where, p, m = max(pairs, key=lambda x: x[0])
    return f"largest {where}: {_num(m)} vs {_num(p)}, {_pct(p, m)}"


def _tolerance_sentence(tol: float, keys: list[KeyComparison], all_match: bool) -> str:
    largest = _largest(keys)
    tail = (f"; {largest}" if all_match else f"; among the matching numbers {largest}") \
        if largest != "all equal" else ""
    return (f" (numbers compared by relative difference |here − published| / |published| against "
            f"±{tolerance_text(tol)}, the campaign's stated tolerance{tail})")


def incomparable(published_conditions: Mapping[str, Any] | None,
                 measured_conditions: Mapping[str, Any] | None) -> list[str]:
    """Why counts made under ``published_conditions`` cannot be set beside this run's: a
    condition the source does not state (``None``), one this run does not record, or a
    different value. Empty: comparable (or the entry names no conditions)."""
    reasons = []
    for name, pub in (published_conditions or {}).items():
        if pub is None:
            reasons.append(f"{name}: not stated by the source")
        elif measured_conditions is None or name not in measured_conditions:
            reasons.append(f"{name}: not recorded by this run")
        elif measured_conditions[name] != pub:
            reasons.append(f"{name}: {_text(measured_conditions[name])} here vs {_text(pub)} published")
    return reasons


def _compare_key(key: str, published: Any, measured: Mapping[str, Any], tol: float,
                 verdict_keys: set[str] | None, unsourced: Mapping[str, str] | None = None,
                 not_comparable: list[str] | None = None, samples: tuple[str, ...] = ()) -> KeyComparison:
    kind = "verdict" if (key in verdict_keys if verdict_keys is not None else _is_verdict_value(published)) \
        else "magnitude"
    label = _is_label_value(published)
    got = measured.get(key)
    if unsourced and key in unsourced:
        return KeyComparison(key, published, got, kind, "unsourced",
                             f"{key}: published {_text(published)} has no source line ({unsourced[key]}); not compared",
                             label)
    if key not in measured or got is None:
        return KeyComparison(key, published, None, kind, "unmeasured", f"{key}: not measured by this campaign", label)
    if isinstance(published, str) and published in LABELS and isinstance(got, str) and got not in LABELS:
        return KeyComparison(key, published, got, kind, "unmeasured", f"{key}: {got}", label)  # e.g. "measured by …"
    if kind == "magnitude" and not_comparable:
        return KeyComparison(key, published, got, kind, "not comparable", describe_difference(key, published, got),
                             label)
    if key in samples and _is_counts(published) and _is_counts(got) and published != got:
        p = sample_consistency(published, got)
        test = (f"Fisher's exact test of {sum(published.values())} published reps against {sum(got.values())} here, "
                f"p = {p:.2f}")
        if p >= SAMPLE_LEVEL:
            return KeyComparison(key, published, got, kind, "match", describe_difference(key, published, got)
                                 + f": two samples an exact test cannot tell apart ({test} ≥ {SAMPLE_LEVEL:g})", label)
        return KeyComparison(key, published, got, kind, "differs", describe_difference(key, published, got)
                             + f": the samples differ ({test} < {SAMPLE_LEVEL:g})", label)
    key_tol = tol if kind == "magnitude" else 0.0
    if _close(published, got, key_tol):
        return KeyComparison(key, published, got, kind, "match", label=label)
    return KeyComparison(key, published, got, kind, "differs",
                         describe_difference(key, published, got) + _beyond(key, published, got, key_tol), label)


def _readings(entry: Mapping[str, Any]) -> list[tuple[str, list[Mapping[str, Any]], Mapping[str, Any]]]:
    """(name, sources, published) of every reading: the entry's own first, then ``readings``."""
    first = (entry.get("reading", cite(entry.get("sources"))), list(entry.get("sources") or []), entry["published"])
    return [first] + [(r["reading"], list(r.get("sources") or []), r["published"]) for r in entry.get("readings", ())]


def compare(entry: Mapping[str, Any], measured: Measured | NotMeasured | None, not_run_why: str,
            variant: str = "") -> HeadlineRow:
    """Compare one published entry with one measured value; ``variant`` (the changed
    parameters) marks a run with other parameters than the paper's. With several
    readings each is compared; the row's status is theirs when they agree, else
    "published sources disagree"."""
    readings = _readings(entry)
    rows = [_compare_reading(entry, published, sources, measured, not_run_why, variant)
            for _, sources, published in readings]
    row = rows[0]
    if len(rows) == 1:
        return row
    row.readings = [Reading(name, sources, published, r.status, r.explanation)
                    for (name, sources, published), r in zip(readings, rows)]
    statuses = {r.status for r in rows}
    if statuses <= {NOT_RUN, NOT_MEASURED, VARIANT}:
        return row
    each = "; ".join(f"reading “{rd.name}” ({cite(rd.sources)}): {STATUS_TEXT[rd.status]} — {rd.explanation}"
                     for rd in row.readings)
    if len(statuses) > 1:
        row.status = DISAGREE
        row.explanation = f"the published sources give different values, and the measurement compares differently " \
                          f"with each: {each}"
    else:
        row.explanation = f"every reading of the published sources: {each}"
    row.difference = " | ".join(r.difference for r in rows)
    return row


def _compare_reading(entry: Mapping[str, Any], published: Mapping[str, Any], sources: list[Mapping[str, Any]],
                     measured: Measured | NotMeasured | None, not_run_why: str, variant: str) -> HeadlineRow:
    base = dict(id=entry["id"], campaign=entry["campaign"], what=entry["what"], published=published,
                sources=sources)
    if measured is None:
        return HeadlineRow(**base, measured=None, difference="-", status=NOT_RUN, why=not_run_why,
                           explanation=not_run_why)
    if isinstance(measured, NotMeasured):
        return HeadlineRow(**base, measured=None, difference="-", status=NOT_MEASURED, why=measured.why,
                           explanation=measured.why)
    vk = set(entry["verdict_keys"]) if "verdict_keys" in entry else None
    why_not = incomparable(entry.get("conditions"), measured.conditions)
    keys = [_compare_key(k, published[k], measured.value, measured.tolerance, vk, entry.get("unsourced"), why_not,
                         measured.samples) for k in published]
    receipts = tuple(_receipt_path(entry["campaign"], r) for r in measured.receipts)
    differing = [k for k in keys if k.outcome == "differs"]
    unmeasured = [k for k in keys if k.outcome == "unmeasured"]
    apart = [k for k in keys if k.outcome == "not comparable"]
    unsourced = [k for k in keys if k.outcome == "unsourced"]
    verdict_keys = [k for k in keys if k.kind == "verdict" and k.outcome != "unsourced"]
    tol = _tolerance_sentence(measured.tolerance, keys, not differing) if measured.tolerance else ""
    agreeing = f"the verdict agrees ({', '.join(f'{k.key}: {_text(k.measured)}' for k in verdict_keys)}); "
    if variant:
        status = VARIANT
        explanation = (f"measured with other parameters than the paper's ({variant}); compare it with this "
                       "project's default run on the reproduction report, not with the published value")
    elif not sources:
        status = UNSOURCED
        explanation = ("no line of the paper summary, CAMPAIGNS.md or CONTRACT.md gives this value: shown beside the "
                       "measurement, never scored")
    elif measured.contradicted_by:
        status = CONTRADICTED
        explanation = (measured.contradiction or "this campaign's receipts contradict the published claim") + \
            f" (evidence: {', '.join(measured.contradicted_by)})"
        agree = [k.key for k in keys if k.outcome == "match"]
        if agree:
            explanation += f"; the published value itself ({', '.join(agree)}) matches"
    elif any(k.kind == "verdict" for k in differing):
        # every non-label key matching leaves only labels among the differing keys
        behaviour = [k for k in keys if not k.label and k.outcome != "unsourced"]
        if behaviour and all(k.outcome == "match" for k in behaviour):
            status = BEHAVIOUR
            explanation = (f"the behaviour the paper reports is measured ("
                           f"{', '.join(f'{k.key}: {_text(k.measured)}' for k in behaviour)}); only the labels "
                           f"differ: " + "; ".join(k.detail for k in differing))
        else:
            status = DIFFERS
            explanation = "; ".join(k.detail for k in differing)
    elif differing:
        status = MAGNITUDES if verdict_keys and all(k.outcome == "match" for k in verdict_keys) else DIFFERS
        explanation = "; ".join(k.detail for k in differing)
        if status == MAGNITUDES:
            explanation = agreeing + explanation
        explanation += tol
    elif apart:
        status = NOT_COMPARABLE if all(k.outcome == "match" for k in verdict_keys) else DIFFERS
        explanation = (agreeing if verdict_keys else "") + \
            f"the counts were made under other conditions ({'; '.join(why_not)}" + \
            (f"; {entry['conditions_note']}" if entry.get("conditions_note") else "") + \
            "), so they are shown, not compared: " + "; ".join(k.detail for k in apart)
    elif unmeasured:
        status = PARTIAL
        explanation = ("everything measured agrees; " + "; ".join(k.detail for k in unmeasured))
    else:
        status = REPRODUCED
        sampled = [k.detail for k in keys if k.outcome == "match" and k.detail]
        explanation = f"every {'sourced ' if unsourced else ''}published value matches" + (
            f": {'; '.join(sampled)}" if sampled else tol or " exactly")
    if status not in (VARIANT, CONTRADICTED, UNSOURCED):
        if (differing or apart) and unmeasured:
            explanation += "; " + "; ".join(k.detail for k in unmeasured)
        if differing and apart and status != NOT_COMPARABLE:
            explanation += f"; not comparable ({'; '.join(why_not)}): " + "; ".join(k.detail for k in apart)
        if unsourced:
            explanation += "; " + "; ".join(k.detail for k in unsourced)
    if "build" in entry and measured.build != entry["build"] and status not in (VARIANT, UNSOURCED):
        explanation = (f"the paper measured {entry['build']}; these receipts measured "
                       f"{measured.build or 'a build they do not record'}, so this is not a reproduction of the "
                       f"paper's build. On that build: {STATUS_TEXT[status]} — {explanation}")
        status = REIMPLEMENTATION
    return HeadlineRow(**base, measured=dict(measured.value), difference="; ".join(k.detail for k in differing) or "none",
                       status=status, why=measured.why, receipts=receipts, explanation=explanation, keys=keys,
                       tolerance=measured.tolerance)


def recorded_build(receipts: Any, package: str, own: str) -> str:
    """The build these receipts measured, as their manifests record it: ``package version``
    when every receipt's fingerprint inputs include that package at one version, else
    this project's own code ``own`` at the code fingerprint the receipts record."""
    manifests = [r.manifest or {} for r in receipts]
    versions = {(m.get("fingerprint_inputs") or {}).get("packages", {}).get(package) for m in manifests}
    if len(versions) == 1 and None not in versions:
        return f"{package} {versions.pop()}"
    return own_build(own, receipts)


def own_build(own: str, receipts: Any) -> str:
    """This project's code ``own`` as the measured build, at the code fingerprint the receipts record."""
    codes = sorted({str(((r.manifest or {}).get("fingerprint_inputs") or {}).get("code")) for r in receipts})
    return f"{own}, this project's re-implementation (code fingerprint {', '.join(codes) or 'not recorded'})"


def _receipt_path(campaign: str, receipt: str) -> str:
    """A probe id or a path -> the receipt's path relative to the book's root."""
    if receipt.endswith(".json"):
        return receipt
    return f"receipts/{campaign}/{receipt}.json"


def measure_directory(name: str, directory: Path | None) -> dict[str, Measured | NotMeasured | str] | str:
    """Campaign ``name``'s headline values from the complete results in ``directory``."""
    if name not in campaigns.available():
        return f"campaign {name} is not implemented yet"
    if directory is None or read_index(Path(directory)) is None:
        hint = "needs API keys: run with a provider key set" if name == "live" else f"run ./reproduce.sh --only {name}"
        return f"no complete results for {name} ({hint})"
    extract = extractor(name)
    if extract is None:
        return f"the paper layer has no extractor for campaign {name} (probes/paper)"
    return extract(load_campaign(Path(directory)))


def rows_for(directories: Mapping[str, Path | None], variants: Mapping[str, str] | None = None) -> list[HeadlineRow]:
    """Every published headline against the results in ``directories[campaign]``."""
    rows = []
    cache: dict[str, dict[str, Measured | NotMeasured | str] | str] = {}
    for entry in load_published():
        name = entry["campaign"]
        if name not in cache:
            cache[name] = measure_directory(name, directories.get(name))
        rows.append(_row(entry, cache[name], (variants or {}).get(name, "")))
    return rows


def _row(entry: Mapping[str, Any], got: dict[str, Measured | NotMeasured | str] | str,
         variant: str = "") -> HeadlineRow:
    name = entry["campaign"]
    if isinstance(got, str):
        return compare(entry, None, got)
    value = got.get(entry["id"])
    if isinstance(value, str):  # the campaign ran and says why this one was not measured
        return compare(entry, None, value)
    if value is None:
        return compare(entry, NotMeasured(f"campaign {name} ran, and none of its protocols measures this yet"), "")
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

    extract = extractor(campaign)
    got = extract(list(run.receipts)) if extract and run.receipts else \
        f"no receipts for {campaign.name} in this run"
    variant = ""
    if profile_of(campaign, run.params) != "default":
        defaults = campaign.resolve()
        variant = ", ".join(f"{k}={v!r}" for k, v in run.params.items() if defaults.get(k) != v)
    return [_row(e, got, variant) for e in load_published() if e["campaign"] == campaign.name]
