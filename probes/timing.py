"""Where the time goes: per campaign and per probe family, from the receipts alone.

Why: re-measuring by default makes the default run's wall time what every reviewer
pays, so it has to be visible and attributable. Every receipt's manifest records
``probe_seconds`` (wall time of ``run_probe`` for that probe, measured by the campaign
runner), and a campaign index records the run's wall duration; nothing here times
anything itself or carries a number of its own.

**Probe family.** Probe ids are dot-separated, most general part first
(``dose.postgres.stock.k4.j0.g500``, ``crash.K3.none.sqlite``, ``version.1.2.9``). The
family of a probe is the longest dot-separated prefix of its id that every probe of
the same run sharing its *first* segment also has, cut before the first segment that
is a value (starts with a digit, like the ``1`` of ``version.1.2.9``) -- i.e. the id
up to the first part that varies. So ``dose.*`` cells form the family ``dose``,
``co.race.k8.*`` and ``co.dead_owner.*`` form ``co``, and a probe without siblings
is a family of its own (its whole id). ``depth=n`` instead cuts every id after its
first ``n`` segments (a finer split, e.g. ``depth=2`` separates ``dose.sqlite`` from
``dose.postgres``).

**Set-up.** A run's wall duration minus the sum of its probe times is what the
runner spent outside probes (starting PostgreSQL, planning, writing the index); it is
reported as such, and only when the run recorded a real wall duration (old reference
runs recorded the sum of probe times instead, said in their ``duration_note``).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from probes.core.receipt import Receipt, load_campaign

SEP = "."


def _common_prefix(ids: Sequence[list[str]]) -> list[str]:
    prefix = list(ids[0])
    for parts in ids[1:]:
        n = 0
        while n < min(len(prefix), len(parts)) and prefix[n] == parts[n]:
            n += 1
        prefix = prefix[:n]
    return prefix


def families(probe_ids: Iterable[str], depth: int | None = None) -> dict[str, str]:
    """``{probe id: family}`` under the rule in the module docstring."""
    ids = sorted(set(probe_ids))
    if depth is not None:
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        return {p: SEP.join(p.split(SEP)[:depth]) for p in ids}
    groups: dict[str, list[list[str]]] = {}
    for p in ids:
        parts = p.split(SEP)
        groups.setdefault(parts[0], []).append(parts)
    out: dict[str, str] = {}
    for members in groups.values():
        prefix = _common_prefix(members)
        cut = next((i for i, seg in enumerate(prefix) if i and seg[:1].isdigit()), len(prefix))
        family = SEP.join(prefix[:cut])
        for parts in members:
            out[SEP.join(parts)] = family
    return out


def probe_seconds(receipt: Receipt) -> float | None:
    """The runner-measured wall time of one probe, or None if the receipt predates it."""
    value = receipt.manifest.get("probe_seconds")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class FamilyTime:
    family: str
    probes: int
    seconds: float  # sum of probe_seconds
    median_s: float
    slowest: str  # the probe id with the largest time
    slowest_s: float
    untimed: int = 0  # receipts without probe_seconds (counted in probes, not in seconds)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def family_totals(receipts: Iterable[Receipt], depth: int | None = None) -> list[FamilyTime]:
    """Per-family totals of one campaign's receipts, largest first (ties by name)."""
    receipts = list(receipts)
    fam = families((r.probe for r in receipts), depth)
    buckets: dict[str, list[tuple[str, float | None]]] = {}
    for r in receipts:
        buckets.setdefault(fam[r.probe], []).append((r.probe, probe_seconds(r)))
    out = []
    for family, items in buckets.items():
        timed = [(p, s) for p, s in items if s is not None]
        secs = [s for _, s in timed]
        slow = max(timed, key=lambda x: (x[1], x[0])) if timed else ("", 0.0)
        out.append(FamilyTime(family, len(items), round(sum(secs), 3),
                              round(statistics.median(secs), 3) if secs else 0.0,
                              slow[0], round(slow[1], 3), len(items) - len(timed)))
    return sorted(out, key=lambda f: (-f.seconds, f.family))


@dataclass(frozen=True)
class CampaignTime:
    campaign: str
    source: str  # where the receipts came from (a run's describe() line, or a directory)
    probes_s: float  # sum of probe times
    wall_s: float | None  # the run's recorded wall duration, when it is a real measurement
    families: tuple[FamilyTime, ...]

    @property
    def setup_s(self) -> float | None:
        """Wall time outside probes (None when no real wall duration was recorded)."""
        return None if self.wall_s is None else round(self.wall_s - self.probes_s, 3)

    @property
    def total_s(self) -> float:
        return self.wall_s if self.wall_s is not None else self.probes_s


def recorded_wall(index: Mapping[str, Any] | None) -> float | None:
    """A run's wall duration as its campaign index recorded it, or None where that is no wall-clock
    measurement (an old run's sum of probe times, said in ``duration_note``)."""
    prov = (index or {}).get("provenance") or {}
    value = prov.get("duration_s")
    if prov.get("duration_note") or not isinstance(value, (int, float)):
        return None  # not a wall-clock measurement of the run
    return float(value)


def campaign_time(directory: Path, depth: int | None = None, source: str = "") -> CampaignTime:
    """Timing of the complete run in ``directory`` (a reference or local results dir)."""
    from probes.core.receipt import read_index

    directory = Path(directory)
    index = read_index(directory)
    receipts = load_campaign(directory)
    fams = family_totals(receipts, depth)
    name = (index or {}).get("campaign") or directory.name
    return CampaignTime(name, source or str(directory), round(sum(f.seconds for f in fams), 3), recorded_wall(index),
                        tuple(fams))


# --- rendering for the book ------------------------------------------------------------------


def table(times: Sequence[CampaignTime], top: int | None = None) -> Any:
    """A pandas DataFrame: one row per (campaign, family), campaigns by total time.

    ``top`` keeps each campaign's largest ``top`` families and folds the rest into one
    "(other families)" row, so the table stays small; a "(set-up)" row shows the wall
    time outside probes when the run recorded it.
    """
    import pandas as pd

    rows = []
    grand = sum(t.total_s for t in times) or 1.0
    for t in sorted(times, key=lambda t: (-t.total_s, t.campaign)):
        fams = list(t.families)
        shown, rest = (fams[:top], fams[top:]) if top else (fams, [])
        entries = [(f.family, f.probes, f.seconds, f.slowest, f.slowest_s) for f in shown]
        if rest:
            entries.append((f"(other {len(rest)} families)", sum(f.probes for f in rest),
                            round(sum(f.seconds for f in rest), 3), "", None))
        if t.setup_s is not None:
            entries.append(("(set-up, outside probes)", 0, t.setup_s, "", None))
        for family, n, secs, slowest, slowest_s in entries:
            rows.append({"campaign": t.campaign, "family": family, "probes": n, "seconds": round(secs, 1),
                         "share of campaign": round(secs / t.total_s, 3) if t.total_s else None,
                         "share of all": round(secs / grand, 3), "slowest probe": slowest,
                         "slowest probe s": None if slowest_s is None else round(slowest_s, 1)})
    return pd.DataFrame(rows, columns=["campaign", "family", "probes", "seconds", "share of campaign",
                                       "share of all", "slowest probe", "slowest probe s"])


def summary(times: Sequence[CampaignTime]) -> Any:
    """One row per campaign: wall time (or the probe sum, said so), probe sum, set-up."""
    import pandas as pd

    rows = [{"campaign": t.campaign, "seconds": round(t.total_s, 1),
             "measured as": "run wall time" if t.wall_s is not None else "sum of probe times",
             "probes": sum(f.probes for f in t.families), "in probes s": round(t.probes_s, 1),
             "set-up s": None if t.setup_s is None else round(t.setup_s, 1),
             "largest family": t.families[0].family if t.families else ""}
            for t in sorted(times, key=lambda t: (-t.total_s, t.campaign))]
    return pd.DataFrame(rows)


def figure(times: Sequence[CampaignTime], top: int = 3) -> Any:
    """Horizontal stacked bars: one bar per campaign, one segment per family (minutes)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ordered = sorted(times, key=lambda t: (t.total_s, t.campaign))
    fig, ax = plt.subplots(figsize=(8, 0.45 * max(len(ordered), 3) + 1.2))
    cmap = plt.get_cmap("tab10")
    for y, t in enumerate(ordered):
        left = 0.0
        fams = list(t.families)
        parts = [(f.family, f.seconds) for f in fams[:top]]
        rest = sum(f.seconds for f in fams[top:])
        if rest:
            parts.append(("other", rest))
        if t.setup_s:
            parts.append(("set-up", max(t.setup_s, 0.0)))
        for i, (family, secs) in enumerate(parts):
            width = secs / 60.0
            colour = "0.8" if family in ("other", "set-up") else cmap(i % 10)
            ax.barh(y, width, left=left, color=colour, edgecolor="white", linewidth=0.5)
            if width > 0.04 * max(x.total_s for x in ordered) / 60.0:
                ax.text(left + width / 2, y, family, ha="center", va="center", fontsize=7)
            left += width
    ax.set_yticks(range(len(ordered)), [t.campaign for t in ordered])
    ax.set_xlabel("minutes (sum of probe times, plus set-up where the run recorded its wall time)")
    ax.set_title("Where the time goes, per campaign and probe family")
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def compare(before: CampaignTime, after: CampaignTime) -> Any:
    """Per family of one campaign: seconds in two runs (say, the reference and this machine's)."""
    import pandas as pd

    b = {f.family: f for f in before.families}
    a = {f.family: f for f in after.families}
    rows = []
    for family in sorted(set(b) | set(a), key=lambda x: (-(b[x].seconds if x in b else 0.0), x)):
        sb = b[family].seconds if family in b else None
        sa = a[family].seconds if family in a else None
        rows.append({"family": family, "probes": (a.get(family) or b[family]).probes,
                     "before s": None if sb is None else round(sb, 1), "after s": None if sa is None else round(sa, 1),
                     "after/before": round(sa / sb, 3) if sa is not None and sb else None})
    rows.append({"family": "(all probes)", "probes": sum(f.probes for f in after.families),
                 "before s": round(before.probes_s, 1), "after s": round(after.probes_s, 1),
                 "after/before": round(after.probes_s / before.probes_s, 3) if before.probes_s else None})
    return pd.DataFrame(rows)
