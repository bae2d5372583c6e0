"""Schedule records: when each campaign of one ``./reproduce.sh`` measurement started and ended.

Why: with ``--jobs`` campaigns run side by side and the timing-sensitive ones alone, so adding up
the campaigns' run times (what each run directory records) does not give the time a reviewer
waits; the wall time of the whole measurement does. ``probes.reproduce.measure`` writes one record
per measurement under ``runs/_reproduce/`` (atomically, an interrupted one too, said so);
``./reproduce.sh promote`` copies the newest record of the default run measured end to end into
``data/reference/_reproduce/``; the book's timing page shows it as a timeline, against the budget.

A record holds what the driver saw and nothing typed in: per campaign the seconds from the start of
the measurement at which its notebook started and ended, its wave, whether it ran alone, its
profile and run id, how many receipts an interrupted earlier measurement had left for it to reuse
(``resumed_receipts``), and whether it was measured, skipped (complete already) or failed; the
measurement's jobs, the cores it could use, the commit and the machine. The book build is not in
it. A record of the default run *end to end* measured every campaign of the default run at the
default profile, none skipped, resumed or failed, not interrupted: only such a record is a reproduction's
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
    """The cores this process may use (its CPU affinity): the default of ``--jobs``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


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
            and all(s.get("outcome") == MEASURED and s.get("profile") == "default" and not s.get("resumed_receipts")
                    for s in slots.values()))


def end_to_end_records(runs_root: Path | None = None, reference_root: Path | None = None
                       ) -> list[tuple[str, dict[str, Any]]]:
    """Every end-to-end record as ("this machine" | "reference run", record), this machine's first, each oldest first."""
    return [(source, r) for source, root in (("this machine", runs_root or RUNS_DIR),
                                             ("reference run", reference_root or REFERENCE_DIR))
            for r in records(root) if end_to_end(r)]


def newest_end_to_end(runs_root: Path | None = None, reference_root: Path | None = None
                      ) -> tuple[str, dict[str, Any]] | None:
    """("this machine" | "reference run", record): this machine's newest end-to-end record, else the reference's;
    a record run as ``./reproduce.sh`` runs by default (``--jobs`` the machine's cores) before any other."""
    whole = end_to_end_records(runs_root, reference_root)
    as_default = [pair for pair in whole if pair[1].get("jobs") == pair[1].get("cores")]
    for pool in (as_default, whole):
        mine = [pair for pair in pool if pair[0] == "this machine"]
        if mine or pool:
            return (mine or pool)[-1]
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


def figure(record: Mapping[str, Any], budget_s: float | None = None) -> Any:
    """The measurement as a timeline: one row per campaign in the order they started, a bar from its
    start to its end (minutes, its length written beside it), the campaigns that ran alone in their own
    colour, the budget as a dashed line. Bars that overlap in time ran side by side."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    timed = sorted(((s["start_s"], s["end_s"], n, s) for n, s in (record.get("campaigns") or {}).items()
                    if s.get("start_s") is not None and s.get("end_s") is not None), key=lambda t: (t[0], -t[1]))
    fig, ax = plt.subplots(figsize=(9, 0.32 * max(len(timed), 3) + 1.4))
    shared, alone, failed = "#4c78a8", "#f58518", "#c0392b"
    for row, (start, end, name, slot) in enumerate(timed):
        colour = failed if slot.get("outcome") == FAILED else (alone if slot.get("alone") else shared)
        ax.barh(row, (end - start) / 60.0, left=start / 60.0, color=colour, height=0.7)
        ax.text(end / 60.0 + 0.15, row, f"{(end - start) / 60:.1f}", va="center", fontsize=7, color="0.25")
    elapsed = float(record.get("elapsed_s") or 0.0) / 60.0
    if budget_s:
        ax.axvline(budget_s / 60.0, color="0.3", linestyle="--", linewidth=1)
        ax.text(budget_s / 60.0, -0.9, f"budget {budget_s / 60:.0f} min", fontsize=8, ha="center")
    ax.set_yticks(range(len(timed)), [t[2] for t in timed], fontsize=8)
    ax.set_ylim(len(timed) - 0.4, -1.3)
    ax.set_xlim(0, max(elapsed, (budget_s or 0) / 60.0) * 1.05 or 1)
    ax.set_xlabel(f"minutes from the start (whole measurement: {elapsed:.1f} min with --jobs {record.get('jobs')} "
                  f"on {record.get('cores')} cores)")
    ax.legend(handles=[Patch(color=shared, label="beside others"), Patch(color=alone, label="alone (timing)")]
              + ([Patch(color=failed, label="failed")] if any(t[3].get("outcome") == FAILED for t in timed) else []),
              loc="lower left", fontsize=8, frameon=False)
    ax.set_title("The default run, campaign by campaign")
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig
