"""The kit chapter's section on exhaustive crash points: the enumeration and the verdict at each point.

Everything here is read from the receipts of the ``exhaustive`` protocol (``probes.kit.exhaustive``):
the points its traced baseline reached (``observations.exhaustive.points``), which of them each
probe measured, and the verdicts on the paths ``exhaustive:<how>@<point>/<mode>``. A run without
that protocol shows one sentence saying so.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from probes.core.checker import cell_text

PATH = re.compile(r"^exhaustive:(?P<how>[^@/]+)@(?P<point>[^/]+)/(?P<mode>.+)$")
PROPS = ("EO", "PC", "LV")


def receipts(run: Any) -> list[Any]:
    return [r for r in run.receipts if r.probe.startswith("exhaustive.")]


def _backend(r: Any) -> str:
    return r.probe.split(".")[-2]  # exhaustive.<how>.<mode>.<backend>.rep<k>


def enumeration(run: Any) -> dict[str, list[dict[str, Any]]]:
    """backend -> the points its traced baselines reached, in enumeration order (first seen first)."""
    out: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in receipts(run):
        for pt in (r.observations.get("exhaustive") or {}).get("points", []):
            out[_backend(r)].setdefault(pt["label"], pt)
    return {backend: list(points.values()) for backend, points in out.items()}


def grid(run: Any) -> tuple[list[tuple[str, str]], dict[tuple[str, str, str, str, str], list[str]]]:
    """The (how, mode) columns measured, and (backend, point, how, mode, property) -> labels (one per rep)."""
    cells: dict[tuple[str, str, str, str, str], list[str]] = defaultdict(list)
    columns: dict[tuple[str, str], None] = {}
    for r in receipts(run):
        for v in r.verdicts:
            m = PATH.match(v.path)
            if m:
                columns.setdefault((m["how"], m["mode"]), None)
                cells[(v.backend, m["point"], m["how"], m["mode"], v.property.value)].append(v.label.value)
    return sorted(columns, key=lambda c: (c[0] != "kill", c)), cells


def frame(run: Any):
    """One row per crash point (per backend), one column per (how/mode, property): the label measured
    there ('' where the cap left the point out, or an exception cannot be raised there)."""
    import pandas as pd

    columns, cells = grid(run)
    rows = []
    for backend, points in enumeration(run).items():
        for pt in points:
            row = {"backend": backend, "phase": pt["phase"], "lane": pt["lane"], "point": pt["label"]}
            for how, mode in columns:
                for prop in PROPS:
                    row[f"{how}/{mode} {prop}"] = cell_text(cells.get((backend, pt["label"], how, mode, prop), []))
            rows.append(row)
    return pd.DataFrame(rows)


def summary(run: Any) -> str:
    """Markdown: per backend, how many points the baseline reached, of which kind, and what each probe measured."""
    found = receipts(run)
    if not found:
        return "The exhaustive protocol was not run in this run (`protocols` does not list it)."
    lines = []
    for backend, points in enumeration(run).items():
        saves = {(r.observations.get("exhaustive") or {}).get("saves") for r in found if _backend(r) == backend}
        mixed = sorted({f"{r.probe.split('.')[1]} {x}" for r in found if _backend(r) == backend
                        for x in (r.observations.get("exhaustive") or {}).get("interleaved", [])})
        steps = sum(1 for p in points if p["lane"] != "save")
        lines.append(f"* **{backend}**: the traced baseline reached **{len(points)} crash points**: {steps} step "
                     f"boundaries (with the pause) and {len(points) - steps} points in the framework's own save "
                     f"(the baseline recorded {', '.join(str(s) for s in sorted(saves, key=str))} save(s))."
                     + (f" In {len(mixed)} traced process(es) a step boundary was reached while a save was "
                        "still open (the save runs on another thread and the steps do not wait for it): where "
                        "the other lane was at a crash is then the scheduler's choice, so a verdict is one "
                        "sample of the interleaving (each point's `cut` in the receipt says where it was)."
                        if mixed else ""))
    for r in found:
        ex = r.observations.get("exhaustive") or {}
        na = [v for v in r.verdicts if v.label.value == "n/a" and not PATH.match(v.path)]
        if na:
            lines.append(f"* `{r.probe}`: n/a: {na[0].summary}")
        elif ex:
            lines.append(f"* `{r.probe}`: {len(ex['measured'])} of {ex['candidates']} points measured (cap "
                         f"{ex['cap']}), {float(r.manifest.get('probe_seconds') or 0):.0f} s")
        for e in r.harness_errors:
            lines.append(f"* harness error in `{r.probe}`: {e[:300]}")
    return "\n".join(lines)


def figure(run: Any, name: str):
    """Crash point x (how/mode, property), each cell coloured by its label."""
    import matplotlib.pyplot as plt

    from probes.kit.chapter import LABEL_COLOURS

    data = frame(run)
    if data.empty:
        return None
    props = [c for c in data.columns if c not in ("backend", "phase", "lane", "point")]
    many = data["backend"].nunique() > 1
    names = [f"{b} {p}" if many else p for b, p in zip(data["backend"], data["point"])]
    fig, ax = plt.subplots(figsize=(0.9 * len(props) + 2.5, 0.26 * len(data) + 1.2))
    for i, row in data.iterrows():
        for j, p in enumerate(props):
            text = row[p]
            ax.add_patch(plt.Rectangle((j, i), 1, 1, color=LABEL_COLOURS.get(text.split("×")[0] if text else "",
                                                                              "#ffffff")))
            ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize=6)
    ax.set_xlim(0, len(props))
    ax.set_ylim(len(data), 0)
    ax.set_xticks([j + 0.5 for j in range(len(props))], props, rotation=60, ha="right", fontsize=7)
    ax.set_yticks([i + 0.5 for i in range(len(data))], names, fontsize=7)
    ax.tick_params(length=0)
    ax.set_title(f"{name}: the verdict at every crash point of the traced baseline", fontsize=9)
    fig.tight_layout()
    return fig
