"""The TLC chapter's tables and figures (the ``tlc`` campaign's notebook calls one per table or figure).

Presentation only: each function reads the run's receipts (``probes.tla.campaign``), displays what it
shows and says so itself when that part of the campaign was not run in this profile.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from probes import chapter
from probes.figures import save_figure
from probes.headline import load_published
from probes.tla import configs as C

# The order the footprint comparison lists a fault's measured properties in.
FOOTPRINT_ORDER = ("EO", "PC", "FD", "CV", "CO", "RD")

# Where our encoding differs from the paper's: why state counts are not comparable (prose, not measured).
ENCODING = [
    {"aspect": "forks", "ours": "any time after the consume (also after completion or a crash); every resume kept in order, so <<1,2>> and <<2,1>> are different states"},
    {"aspect": "retries", "ours": "a later resume may also be a RETRY (the caller's intent travels on the wire, FI), so each later resume has |V| + 1 choices"},
    {"aspect": "mechanisms", "ours": "resume writes keyed per branch and a next-task pointer are state too; faults change what they are keyed by or who reads them (NondetRecovery's RD witness is one state deeper)"},
    {"aspect": "recovery history", "ours": "a set of [f |-> frontier seen, d |-> <<continue at, gate re-armed>>] records"},
    {"aspect": "schema-invalid records", "ours": "an environment choice at every task (so the CV witness is at task 1, depth 2)"},
    {"aspect": "crashes", "ours": "allowed after completion too (Replay then re-runs a completed run, as CrewAI does)"},
    {"aspect": "completed run", "ours": "idles (Finished step) so TLC's deadlock check only flags runs stuck before completion"},
    {"aspect": "consume race", "ours": "only the racers and the shared interrupt record, two racers; not embedded in the plane"},
    {"aspect": "inductive invariant", "ours": "tight (pc, log and effects are functions of the frontier); our own three constant sets"},
]

# heatmap colours: holds, error, violated (grid values 0, 0.5, 1)
HOLDS, ERROR, VIOLATED = "#b7e4c7", "#d9d9d9", "#f4a6a6"


def runs_of(run: Any) -> dict[str, dict[str, Any]]:
    """Every TLC run of the campaign by configuration name: its observation, the probe that ran it, its seconds."""
    runs = {}
    for r in run.receipts:
        for name, obs in r.observations.get("runs", {}).items():
            runs[name] = dict(obs, probe=r.probe, seconds=r.metrics.get(name, {}).get("seconds"))
    return runs


def summary(run: Any) -> None:
    """How much TLC ran, and whether the harness failed anywhere (never hidden)."""
    print(f"{len(runs_of(run))} TLC runs in {len(run.receipts)} receipts; harness errors: {len(run.harness_errors)}")


def _configuration_frame(runs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """One row per TLC run (the configurations table, and the sizes the states figure plots)."""
    rows = []
    for name, o in runs.items():
        rows.append({"configuration": name, "group": o["tags"].get("group"), "module": o["module"],
                     "checks": " ".join(o["invariants"] + o["properties"]), "result": o["result"],
                     "violated": o["violated"] or "", "depth": o["depth"], "generated": o["generated"],
                     "distinct": o["distinct"], "seconds": o["seconds"]})
    return pd.DataFrame(rows)


def configurations(run: Any) -> None:
    """Every TLC run: what it checks, what TLC said, and how large the search was."""
    columns = ["configuration", "result", "violated", "depth", "generated", "distinct", "seconds", "group", "module",
               "checks"]
    display(chapter.table(_configuration_frame(runs_of(run)), columns))


def _fault_rows(runs: dict[str, dict[str, Any]]) -> list[str]:
    """The fault switches whose footprint cells were run."""
    return [f for f in C.FAULTS if f"{C.FAULT_RUN_ID[f]}_{f}.PC" in runs]


def _cell(o: dict[str, Any] | None) -> tuple[float, str]:
    """One heatmap cell: its colour value (0 holds, 0.5 error, 1 violated) and its label."""
    if o is None:
        return np.nan, ""
    if o["result"] == "violated":
        return 1.0, f"✗ d={o['depth']}"
    if o["result"] == "holds":
        return 0.0, "✓"
    return 0.5, "error"


def _matrix(runs: dict[str, dict[str, Any]], row_names: Sequence[str],
            cell_name: Callable[[str, str], str]) -> tuple[np.ndarray, list[list[str]]]:
    """One heatmap panel: a grid value and a label per (row, property) cell."""
    cells = [[_cell(runs.get(cell_name(row, p))) for p in C.PROPERTIES] for row in row_names]
    return np.array([[v for v, _ in row] for row in cells]), [[t for _, t in row] for row in cells]


def footprint_figure(run: Any) -> None:
    """Which properties each fault switch and each separation fault breaks: every one, not only the first."""
    runs, params = runs_of(run), dict(run.params)
    sep_rows = [s for s in C.SEPARATIONS if f"sep.{s}.PC" in runs]
    panels = [(_fault_rows(runs), lambda f, p: f"{C.FAULT_RUN_ID[f]}_{f}.{p}", "fault switches (ResumePlane)"),
              (sep_rows, lambda s, p: f"sep.{s}.{p}", "separations (one property each)")]
    panels = [pn for pn in panels if pn[0]]
    if not panels:
        print("footprint not run in this profile")
        return
    height = 1.2 + 0.5 * sum(len(p[0]) for p in panels) + 0.8 * len(panels)
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, height),
                             gridspec_kw={"height_ratios": [len(p[0]) for p in panels]}, squeeze=False)
    for ax, (names, cell, title) in zip(axes[:, 0], panels):
        grid, labels = _matrix(runs, names, cell)
        ax.imshow(grid, cmap=ListedColormap([HOLDS, ERROR, VIOLATED]), vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(len(C.PROPERTIES)), C.PROPERTIES)
        ax.set_yticks(range(len(names)), names)
        for i, row in enumerate(labels):
            for j, text in enumerate(row):
                ax.text(j, i, text, ha="center", va="center", fontsize=9)
        ax.set_title(title, fontsize=10)
    fig.legend(handles=[Patch(color=HOLDS, label="✓ holds"),
                        Patch(color=VIOLATED, label="✗ violated (d = counterexample length)"),
                        Patch(color=ERROR, label="error")], loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    save_figure(fig, "tlc-footprint",
                "Which property invariants each fault switch (top) and each separation fault (bottom) violates, "
                "one TLC run per cell; ✗ d=k: violated with a counterexample of k states, ✓: holds over the "
                "whole state space.", {k: params[k] for k in ("bounds", "footprint")})
    plt.show()


def footprint_published(run: Any) -> None:
    """Our footprint beside the one CONTRACT.md publishes: does each fault break the same properties?"""
    runs = runs_of(run)
    published = {e["id"]: e for e in load_published()}
    pub_fp = published["tlc.footprint"]["published"]
    fp_rows = []
    for f in _fault_rows(runs):
        ours = [p for p in FOOTPRINT_ORDER if runs[f"{C.FAULT_RUN_ID[f]}_{f}.{p}"]["result"] == "violated"]
        fp_rows.append({"fault": f, "measured": ", ".join(ours), "published": ", ".join(pub_fp.get(f, [])),
                        "same": set(ours) == set(pub_fp.get(f, []))})
    display(chapter.table(fp_rows))


def no_intent(run: Any) -> None:
    """The wire switch NoIntent against every contract invariant: which ones a wire without intent breaks."""
    runs = runs_of(run)
    fp_wire = [f"R10_NoIntent.{p}" for p in C.CONTRACT_INVARIANTS]
    if not all(n in runs for n in fp_wire):
        print("the NoIntent cells were not run in this profile (configurations without proposition1)")
        return
    display(chapter.table(pd.DataFrame([{"configuration": n, "result": runs[n]["result"],
                                         "violated": runs[n]["violated"] or "", "depth": runs[n]["depth"],
                                         "distinct": runs[n]["distinct"]} for n in fp_wire])))


def refinement(run: Any) -> None:
    """Whether the reference refines the abstract specification, and which fault switches break the refinement."""
    runs = runs_of(run)
    ref_rows = [{"configuration": n, "fault": runs[n]["tags"].get("fault"),
                 "checks": " ".join(runs[n]["properties"]),
                 "result": runs[n]["result"], "violated": runs[n]["violated"] or "", "depth": runs[n]["depth"],
                 "generated": runs[n]["generated"], "distinct": runs[n]["distinct"]}
                for n in runs if runs[n]["tags"].get("group") == "refinement"]
    if not ref_rows:
        print("refinement not run in this profile")
        return
    ref_table = pd.DataFrame(ref_rows)
    held = ref_table[ref_table["fault"] == "none"]["result"].tolist()
    broken = ref_table[(ref_table["fault"] != "none") & (ref_table["result"] == "violated")]["fault"].tolist()
    print(f"reference: {', '.join(held)}; refinement broken by {len(broken)} of "
          f"{len(ref_table) - len(held)} fault switches ({', '.join(broken)})")
    display(ref_table)


def proposition1(run: Any) -> None:
    """Proposition 1 per wire: how many deterministic responders TLC tried, and whether any conforms."""
    runs = runs_of(run)
    p1 = {runs[n]["tags"]["arm"]: runs[n] for n in runs if runs[n]["tags"].get("group") == "proposition1"
          and "arm" in runs[n]["tags"]}
    if not p1:
        print("proposition1 not run in this profile")
        return
    rows = []
    for arm, o in p1.items():
        conforming = ("none" if o["result"] == "holds" else
                      "at least one (TLC's counterexample)" if o["result"] == "violated" else o["result"])
        rows.append({"wire": arm.replace("_", " "), "responders (initial states)": o["initial"],
                     "NoneConforms": o["result"], "responders that conform": conforming,
                     "distinct states": o["distinct"], "generated": o["generated"]})
    display(chapter.table(pd.DataFrame(rows)))
    w = p1.get("discriminator")
    if w and w["result"] == "violated":
        print("a conforming responder with the discriminator:", w["trace"][0]["values"]["resp"])


def reference_verdicts(run: Any) -> None:
    """The verdicts of the tla-reference row, each computed from a TLC result."""
    display(chapter.table(pd.DataFrame([{"property": v.property.value, "path": v.path, "label": v.label.value,
                                         "summary": v.summary} for r in run.receipts for v in r.verdicts])))


def reduction(run: Any) -> None:
    """How much each sound reduction shrinks the reference's state space, at the same verdict."""
    runs = runs_of(run)
    red = [n for n in runs if runs[n]["tags"].get("group") == "reduction"]
    if not red:
        print("reduction not run in this profile")
        return
    full = next(runs[n]["distinct"] for n in red if runs[n]["tags"]["reduction"] == "full")
    display(chapter.table(pd.DataFrame([
        {"reduction": runs[n]["tags"]["reduction"], "bounds": runs[n]["tags"]["bounds"], "result": runs[n]["result"],
         "distinct": runs[n]["distinct"], "generated": runs[n]["generated"], "depth": runs[n]["depth"],
         "fewer states (x)": round(full / runs[n]["distinct"], 2) if runs[n]["distinct"] else None,
         "seconds": runs[n]["seconds"]} for n in red])))


def distributed(run: Any) -> None:
    """Distributed TLC: how the search split over the workers, and each worker's throughput."""
    dist_rows = []
    for r in run.receipts:
        if r.observations.get("group") not in ("distributed", "large"):
            continue
        for n, o in r.observations["runs"].items():
            m = r.metrics.get(n, {})
            for w in m.get("per_worker", []):
                dist_rows.append({"configuration": n, "bounds": [o["constants"][k] for k in C.BOUND_NAMES],
                                  "result": o["result"], "distinct": o["distinct"], "generated": o["generated"],
                                  "seconds": m.get("seconds"), "worker": w["worker"], "states computed": w["computed"],
                                  "states/s (this worker)": w["states_per_second"]})
    if not dist_rows:
        print("distributed TLC not run in this profile")
        return
    display(chapter.table(pd.DataFrame(dist_rows)))


def _step_table(o: dict[str, Any]) -> pd.DataFrame:
    """One row per state: the action that led to it, then each variable's value where it changed."""
    names = sorted({k for s in o["trace"] for k in s["values"]})
    out, prev = [], {}
    for s in o["trace"]:
        row = {"step": s["index"], "action": s["action"]}
        row.update({k: (v if prev.get(k) != v else "") for k, v in s["values"].items()})
        out.append(row)
        prev = s["values"]
    return pd.DataFrame(out, columns=["step", "action"] + names).set_index("step").fillna("")


def counterexamples(run: Any) -> None:
    """Each violation TLC found, step by step: how the mechanism leads to the broken property."""
    runs = runs_of(run)
    shown = [n for n in runs if runs[n]["result"] == "violated" and (
        runs[n]["tags"].get("invariant") == "all"
        or runs[n]["tags"].get("group") in ("langgraph_fork", "consume_race", "separations", "scaled"))]
    for name in shown:
        o = runs[name]
        display(Markdown(f"**{name}** ({o['title']}): `{o['violated']}` violated, {o['depth']} states"))
        display(chapter.table(_step_table(o), collapse=False))


def encoding() -> None:
    """Where our encoding differs from the paper's, so which of the numbers beside the published ones compare."""
    display(chapter.table(ENCODING))


def states_figure(run: Any) -> None:
    """The size of every search, log scale: the complete ones against those stopped at a violation."""
    params = dict(run.params)
    frame = _configuration_frame(runs_of(run))
    if frame.empty:
        print("no TLC run in this profile")
        return
    sizes = frame.dropna(subset=["distinct"]).sort_values(["distinct", "configuration"])  # ties by name: one order
    if not len(sizes):
        return
    fig, ax = plt.subplots(figsize=(7.5, max(3, 0.24 * len(sizes))))
    colors = ["#c0392b" if r == "violated" else "#27ae60" if r == "holds" else "#7f8c8d" for r in sizes["result"]]
    ax.barh(sizes["configuration"], sizes["distinct"], color=colors)
    ax.set_xscale("log"); ax.set_xlabel("distinct states explored (log)"); ax.tick_params(axis="y", labelsize=8)
    ax.legend(handles=[Patch(color="#27ae60", label="holds (whole state space)"),
                       Patch(color="#c0392b", label="violated (stopped at the first)"),
                       Patch(color="#7f8c8d", label="other")], fontsize=8, loc="lower right")
    fig.tight_layout()
    save_figure(fig, "tlc-states", "Distinct states TLC explored per configuration (green: holds over the whole "
                "state space; red: stopped at the first violation).",
                {k: params[k] for k in ("bounds", "scaled_bounds", "include_scaled")})
    plt.show()


def scaled(run: Any) -> None:
    """The scaled-bounds searches: the reference still holds, the counterexamples get deeper, at what speed."""
    runs = runs_of(run)
    names = [n for n in runs if n.startswith("R8_scaled")]
    if not names:
        print("scaled bounds not run in this profile (include_scaled=False)")
        return
    display(chapter.table(pd.DataFrame([
        {"configuration": n, "reduction": runs[n]["tags"].get("reduction", "none"), "result": runs[n]["result"],
         "violated": runs[n]["violated"] or "", "depth": runs[n]["depth"], "generated": runs[n]["generated"],
         "distinct": runs[n]["distinct"], "seconds": runs[n]["seconds"],
         "distinct states / s": round(runs[n]["distinct"] / runs[n]["seconds"]) if runs[n]["seconds"] else None}
        for n in names])))
