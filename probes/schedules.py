"""Schedule records: when each campaign of one ``./reproduce.sh`` measurement started and ended.

Why: with ``--jobs`` campaigns run side by side and the timing-sensitive ones alone, so adding up
the campaigns' run times (what each run directory records) does not give the time a reviewer
waits; the wall time of the whole measurement does. ``probes.reproduce.measure`` writes one record
per measurement under ``runs/_reproduce/`` (atomically, an interrupted one too, said so);
``./reproduce.sh promote`` copies the newest record of the default run measured end to end into
``data/reference/_reproduce/``; the book's timing page shows it as a timeline, against the budget.

A record holds what the driver saw and nothing typed in: per campaign the seconds from the start of
the measurement at which its notebook started and ended, its wave, whether it ran alone, its
profile and run id, and whether it was measured, skipped (complete already) or failed; the
measurement's jobs, the cores it could use, the commit and the machine. The book build is not in
it. A record of the default run *end to end* measured every campaign of the default run at the
default profile, none skipped, none failed, not interrupted: only such a record is a reproduction's
time.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from pathlib import Path
from typing import Any, Iterable, Mapping

from probes.core.atomic import atomic_write_json
from probes.core.runs import REFERENCE_DIR, RUNS_DIR

SCHEMA = 1
DIRNAME = "_reproduce"
MEASURED, SKIPPED, FAILED = "measured", "skipped", "failed"


def cores() -> int:
    """The cores this process may use (its CPU affinity), as ``--jobs`` defaults to."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def new_record(selection: str, jobs: int, waves: list[list[str]], profiles: Mapping[str, str],
               alone: Iterable[str]) -> dict[str, Any]:
    """A record for a measurement about to start: ``selection`` is ``default`` (no ``--only``, no
    ``--all``), ``all`` or ``only``; ``waves`` as ``probes.reproduce.schedule`` made them."""
    from probes.core.manifest import project_commit

    commit = project_commit()
    alone = set(alone)
    return {"schema": SCHEMA, "selection": selection, "jobs": jobs, "cores": cores(),
            "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "commit": commit.removesuffix("-dirty"), "clean": not commit.endswith("-dirty"),
            "python": platform.python_version(), "platform": platform.platform(), "machine": platform.machine(),
            "campaigns": {name: {"wave": i, "alone": name in alone, "profile": profiles[name]}
                          for i, wave in enumerate(waves) for name in wave},
            "interrupted": False, "elapsed_s": None}


def write(record: dict[str, Any], root: Path | None = None) -> Path:
    """Write (or rewrite) ``record`` under ``root`` (the runs directory), named by its start and jobs."""
    stamp = record["started"].replace(":", "").replace("-", "").replace("+0000", "Z")
    path = Path(root or RUNS_DIR) / DIRNAME / f"{stamp}-jobs{record['jobs']}.json"
    atomic_write_json(path, record)
    return path


def records(root: Path) -> list[dict[str, Any]]:
    """Every readable record under ``root`` (a runs or reference directory), oldest first."""
    out = []
    for path in sorted((Path(root) / DIRNAME).glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("schema") == SCHEMA:
            out.append({**data, "file": path.name})
    return sorted(out, key=lambda r: r["started"])


def end_to_end(record: Mapping[str, Any]) -> bool:
    """Whether ``record`` is the default run measured whole: see the module docstring."""
    slots = record.get("campaigns") or {}
    return (record.get("selection") == "default" and not record.get("interrupted") and bool(slots)
            and all(s.get("outcome") == MEASURED and s.get("profile") == "default" for s in slots.values()))


def newest_end_to_end(runs_root: Path | None = None, reference_root: Path | None = None
                      ) -> tuple[str, dict[str, Any]] | None:
    """("this machine" | "reference run", record): this machine's newest end-to-end record, else the reference's."""
    for source, root in (("this machine", runs_root or RUNS_DIR), ("reference run", reference_root or REFERENCE_DIR)):
        whole = [r for r in records(root) if end_to_end(r)]
        if whole:
            return source, whole[-1]
    return None


def promote_newest(runs_root: Path | None = None, reference_root: Path | None = None) -> Path | None:
    """Copy this machine's newest end-to-end record of a clean checkout into the reference, unless it is there."""
    mine = [r for r in records(runs_root or RUNS_DIR) if end_to_end(r) and r.get("clean")]
    if not mine:
        return None
    newest = {k: v for k, v in mine[-1].items() if k != "file"}
    target = Path(reference_root or REFERENCE_DIR) / DIRNAME / mine[-1]["file"]
    if target.exists():
        return None
    atomic_write_json(target, newest)
    return target


def lanes(record: Mapping[str, Any]) -> dict[str, int]:
    """A lane per campaign for drawing: each campaign takes the lowest lane free when it started
    (as many lanes as campaigns ever ran at once, at most the record's ``jobs``)."""
    ends: list[float] = []
    out: dict[str, int] = {}
    timed = [(s["start_s"], s["end_s"], n) for n, s in (record.get("campaigns") or {}).items()
             if s.get("start_s") is not None and s.get("end_s") is not None]
    for start, end, name in sorted(timed):
        lane = next((i for i, e in enumerate(ends) if e <= start + 1e-6), None)
        if lane is None:
            ends.append(end)
            lane = len(ends) - 1
        else:
            ends[lane] = end
        out[name] = lane
    return out


def figure(record: Mapping[str, Any], budget_s: float | None = None) -> Any:
    """The measurement as a timeline: one row per lane, a bar per campaign from its start to its end
    (minutes), campaigns that ran alone in their own colour, the budget as a vertical line."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    slots = record.get("campaigns") or {}
    lane_of = lanes(record)
    n_lanes = max(lane_of.values(), default=0) + 1
    fig, ax = plt.subplots(figsize=(9, 0.9 * n_lanes + 1.6))
    shared, alone, failed = "#4c78a8", "#f58518", "#c0392b"
    for name, lane in lane_of.items():
        s = slots[name]
        start, width = s["start_s"] / 60.0, (s["end_s"] - s["start_s"]) / 60.0
        colour = failed if s.get("outcome") == FAILED else (alone if s.get("alone") else shared)
        ax.barh(n_lanes - 1 - lane, width, left=start, color=colour, edgecolor="white", linewidth=1.0, height=0.7)
        if width >= 0.9:
            ax.text(start + width / 2, n_lanes - 1 - lane, f"{name}\n{width:.1f}", ha="center", va="center",
                    fontsize=7, color="white")
    elapsed = float(record.get("elapsed_s") or 0.0) / 60.0
    if budget_s:
        ax.axvline(budget_s / 60.0, color="0.3", linestyle="--", linewidth=1)
        ax.text(budget_s / 60.0, n_lanes - 0.45, f" budget {budget_s / 60:.0f} min", fontsize=8, va="bottom")
    ax.set_yticks(range(n_lanes), [f"lane {n_lanes - i}" for i in range(n_lanes)])
    ax.set_xlim(0, max(elapsed, (budget_s or 0) / 60.0) * 1.03 or 1)
    ax.set_xlabel(f"minutes from the start (whole measurement: {elapsed:.1f} min with --jobs {record.get('jobs')} "
                  f"on {record.get('cores')} cores)")
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=shared, label="beside others"), Patch(color=alone, label="alone (timing)")]
              + ([Patch(color=failed, label="failed")] if any(s.get("outcome") == FAILED for s in slots.values())
                 else []), loc="lower right", fontsize=8, frameon=False)
    ax.set_title("The default run, campaign by campaign")
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig
