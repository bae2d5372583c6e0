"""Tables and figures of the consume-race chapter, built from receipts only.

Kept out of the notebook so that the notebook stays a thin driver (one ``show_*`` call per
table or figure, each taking the run) and the same functions can be tested. Nothing here
imports LangGraph.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from IPython.display import Markdown, display

from probes import chapter
from probes.core.campaign import CampaignRun
from probes.core.receipt import Receipt
from probes.figures import save_figure
from probes.studies.consume_race.campaign import cells, window_estimates

SATURATED = 0.95  # a dose point counts as "inside the window" when >= this saturation
DOSE_GATES_MS = (0.0, 500.0, 2000.0)  # the gated-node durations the paper publishes a dose curve for
PUBLISHED_JITTER_MS = [0, 100, 500, 1000, 3000]  # the jitters of those published points


def frame(receipts: Sequence[Receipt]):
    """One row per measured cell."""
    import pandas as pd

    df = pd.DataFrame(cells(list(receipts)))
    if df.empty:
        return df
    df["dist"] = df["distribution"].map(lambda d: "{" + ", ".join(f"{k}:{v}" for k, v in d.items()) + "}")
    df["wilson95"] = df["saturation_wilson95"].map(lambda w: None if w is None else f"[{w[0]:.2f}, {w[1]:.2f}]")
    return df.sort_values(["series", "backend", "arm", "gate_ms", "k", "jitter_ms"]).reset_index(drop=True)


def grid_table(df):
    if df.empty:
        return df
    g = df[df.series == "grid"]
    return g[["backend", "arm", "k", "jitter_ms", "gate_ms", "dist", "saturation", "wilson95", "duplicate_reps",
              "lost_reps", "harness_errors"]].reset_index(drop=True)


def dose_table(df):
    if df.empty:
        return df
    d = df[df.series == "dose"]
    return d[["backend", "arm", "k", "gate_ms", "jitter_ms", "dist", "saturation", "wilson95", "lost_reps",
              "harness_errors"]].reset_index(drop=True)


def window_edges(df) -> list[dict[str, Any]]:
    """Per backend, arm and gated-node duration: the last jitter still saturated.

    "Window edge" = the largest dose jitter whose saturation is >= 0.95 (every racer
    still consumed the answer) and the first jitter below it -- the window closes
    between the two. A step, not a fit: the dose levels are coarse.
    """
    out = []
    if df.empty:
        return out
    d = df[df.series == "dose"]
    for (backend, arm, gate), grp in d.groupby(["backend", "arm", "gate_ms"]):
        grp = grp.sort_values("jitter_ms")
        inside = [j for j, s in zip(grp.jitter_ms, grp.saturation) if s is not None and s >= SATURATED]
        outside = [j for j, s in zip(grp.jitter_ms, grp.saturation) if s is not None and s < SATURATED]
        last_in = max(inside) if inside else None
        first_out = min((j for j in outside if last_in is None or j > last_in), default=None)
        out.append({"backend": backend, "arm": arm, "gate_ms": gate, "last_saturated_jitter_ms": last_in,
                    "first_unsaturated_jitter_ms": first_out})
    return out


def timing_table(receipts: Sequence[Receipt]):
    """Wall time per cell and how it scales with k (main grid, jitter 0)."""
    import pandas as pd

    rows = []
    for r in receipts:
        cell = r.observations.get("cell")
        if not cell:
            continue
        rows.append({**{k: cell[k] for k in ("series", "backend", "arm", "k", "jitter_ms", "gate_ms")},
                     "cell_s": r.metrics.get("cell_seconds"), "rep_median_s": r.metrics.get("rep_seconds_median"),
                     "release_spread_median_ms": r.metrics.get("release_spread_ms_median"),
                     "probe_s": r.manifest.get("probe_seconds")})
    return pd.DataFrame(rows)


def heatmap_figure(df, arm: str = "stock"):
    """Saturation over k x jitter, one panel per backend."""
    import matplotlib.pyplot as plt
    import numpy as np

    g = df[(df.series == "grid") & (df.arm == arm)]
    backends = sorted(g.backend.unique())
    fig, axes = plt.subplots(1, max(1, len(backends)), figsize=(4.6 * max(1, len(backends)), 3.8), squeeze=False)
    for ax, backend in zip(axes[0], backends):
        b = g[(g.backend == backend)].groupby(["k", "jitter_ms"])["saturation"].mean().unstack()
        im = ax.imshow(b.values.astype(float), vmin=0, vmax=1, cmap="viridis", origin="lower", aspect="auto")
        ax.set_xticks(range(len(b.columns)), [f"{j:g}" for j in b.columns])
        ax.set_yticks(range(len(b.index)), [str(i) for i in b.index])
        ax.set_xlabel("jitter (ms)")
        ax.set_ylabel("racers k")
        ax.set_title(f"{backend}, {arm}")
        for (i, j), v in np.ndenumerate(b.values.astype(float)):
            if not np.isnan(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="white" if v < 0.6 else "black",
                        fontsize=8)
    fig.colorbar(im, ax=axes[0].tolist(), label="saturation = mean fires / k")
    return fig


def dose_figure(df, published: Mapping[float, Sequence[float]] | None = None,
                published_jitter: Sequence[float] | None = None, arm: str = "stock"):
    """Saturation vs jitter, one line per gated-node duration, Wilson 95 % shaded."""
    import matplotlib.pyplot as plt

    d = df[(df.series == "dose") & (df.arm == arm)]
    backends = sorted(d.backend.unique())
    fig, axes = plt.subplots(1, max(1, len(backends)), figsize=(5.2 * max(1, len(backends)), 3.8), squeeze=False,
                             sharey=True)
    for ax, backend in zip(axes[0], backends):
        b = d[d.backend == backend]
        for i, (gate, grp) in enumerate(sorted(b.groupby("gate_ms"), key=lambda t: t[0])):
            grp = grp.sort_values("jitter_ms")
            color = f"C{i}"
            ax.plot(grp.jitter_ms, grp.saturation, "o-", color=color, label=f"gate {gate:g} ms")
            lo = [w[0] if w else None for w in grp.saturation_wilson95]
            hi = [w[1] if w else None for w in grp.saturation_wilson95]
            ax.fill_between(grp.jitter_ms, lo, hi, color=color, alpha=0.18, linewidth=0)
            if published and published_jitter and gate in published:
                ax.plot(published_jitter, published[gate], linestyle="none", marker="x", color=color, alpha=0.7,
                        label=f"published, gate {gate:g} ms")
        ax.set_xscale("symlog", linthresh=100)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("jitter (ms, symlog)")
        ax.set_title(f"{backend}, {arm}, k={int(b.k.iloc[0]) if len(b) else '?'}")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("saturation = mean fires / k")
    axes[0][-1].legend(fontsize=7, loc="lower left")
    return fig


def arms_figure(df):
    """Stock vs gate side by side: mean fires per rep at jitter 0, per k and backend."""
    import matplotlib.pyplot as plt
    import numpy as np

    g = df[(df.series == "grid") & (df.jitter_ms == 0)]
    backends = sorted(g.backend.unique())
    fig, axes = plt.subplots(1, max(1, len(backends)), figsize=(4.6 * max(1, len(backends)), 3.6), squeeze=False,
                             sharey=True)
    for ax, backend in zip(axes[0], backends):
        b = g[g.backend == backend]
        ks = sorted(b.k.unique())
        x = np.arange(len(ks))
        for i, arm in enumerate(["stock", "gate"]):
            a = b[b.arm == arm].groupby("k")["saturation"].mean()
            mean_fires = [a.get(k) * k if k in a.index and a.get(k) is not None else np.nan for k in ks]
            ax.bar(x + (i - 0.5) * 0.38, mean_fires, width=0.38, label=arm, color="C3" if arm == "stock" else "C2")
        ax.plot(x, ks, "k_", markersize=18, label="k (every racer fired)")
        ax.axhline(1, color="grey", linestyle=":", linewidth=1)
        ax.set_xticks(x, [str(k) for k in ks])
        ax.set_xlabel("racers k (jitter 0)")
        ax.set_title(backend)
    axes[0][0].set_ylabel("gated effect fires per rep (mean)")
    axes[0][-1].legend(fontsize=8)
    return fig


# --- what the chapter shows: one call per table or figure, each from the run --------------------

GATE_COLUMNS = ["series", "backend", "k", "jitter_ms", "gate_ms", "dist", "lost_reps", "errors_raised",
                "racer_outcomes", "harness_errors"]


def _params(run: CampaignRun, keys: Sequence[str]) -> dict[str, Any]:
    """The run's values of the parameters a figure depends on (printed under the figure)."""
    return {key: run.params[key] for key in keys}


def _measured(df, arm: str, series: str | None = None) -> bool:
    """Whether the run measured cells of ``arm`` (and cells of ``series``, if given)."""
    return bool(len(df) and (series is None or (df.series == series).any()) and (df.arm == arm).any())


def show_measured_cells(run: CampaignRun) -> None:
    """How many cells the chapter rests on, after one line per arm that could not run here,
    so that a missing arm reads as unavailable rather than as a clean result."""
    for u in (r.observations for r in run.receipts if r.observations.get("available") is False):
        display(Markdown(f"**The {u['arm']} arm was not available in this run:** `{u['why']}`. "
                         "No verdict was derived for it."))
    display(Markdown(f"{len(frame(run.receipts))} measured cells."))


def show_grid_table(run: CampaignRun) -> None:
    """The main grid cell by cell: how often the one answer was consumed per rep, and the
    saturation with its interval, so each heatmap square can be traced to its counts."""
    display(chapter.table(grid_table(frame(run.receipts))))


def show_heatmap(run: CampaignRun) -> None:
    """Stock saturation over racers k and jitter: how wide the window is in which every
    racing resume consumes the same answer, per shared saver."""
    df = frame(run.receipts)
    if _measured(df, "stock", "grid"):
        save_figure(heatmap_figure(df, arm="stock"), "consume_race-heatmap",
                    "Stock LangGraph 1.2.9: saturation (mean gated-effect fires per rep / k) over racers k and "
                    "jitter, per shared saver. 1.0 = every racing resume consumed the same answer.",
                    _params(run, ("k", "jitter_ms", "gate_ms", "reps", "backends", "seed")))


def show_dose_table(run: CampaignRun) -> None:
    """The dose-response cell by cell: saturation per jitter and gated-node duration, the
    counts behind the dose figure."""
    display(chapter.table(dose_table(frame(run.receipts))))


def published_dose() -> dict[float, Sequence[float]]:
    """The paper's dose-response saturations per gated-node duration (``data/published.json``),
    drawn as crosses beside the measured curves."""
    from probes.headline import load_published

    pub = {e["id"]: e["published"] for e in load_published()}
    return {g: pub[f"consume_race.dose_gate{g:g}"]["saturation"] for g in DOSE_GATES_MS
            if f"consume_race.dose_gate{g:g}" in pub}


def show_dose_figure(run: CampaignRun) -> None:
    """Stock saturation against jitter per gated-node duration, with the published points:
    the window widens with how long the gated node works before its effect is committed."""
    df = frame(run.receipts)
    if _measured(df, "stock", "dose"):
        save_figure(dose_figure(df, published=published_dose(), published_jitter=PUBLISHED_JITTER_MS, arm="stock"),
                    "consume_race-dose",
                    "Dose-response, stock LangGraph 1.2.9: saturation vs jitter, one line per gated-node duration "
                    "(Wilson 95 % shaded); crosses: published values.",
                    _params(run, ("dose_k", "dose_jitter_ms", "dose_gate_ms", "reps", "backends", "seed")))


def show_window_edges(run: CampaignRun) -> None:
    """Stock only: between which two dose jitters the window closes, per gated-node duration."""
    display(chapter.table([e for e in window_edges(frame(run.receipts)) if e["arm"] == "stock"]))


def show_window_estimates(run: CampaignRun) -> None:
    """The same window read off the recorded racer offsets instead of the coarse dose levels,
    as a check on the step estimate above."""
    display(Markdown("The same window read off the recorded offsets (stock, every cell with jitter > 0): each "
                     "racer's delay after the earliest racer of its rep, split by whether it fired. The edge lies "
                     "between the latest racers that still fired and the earliest that missed; scheduling blurs "
                     "both tails, so percentiles are shown next to the extremes."))
    display(chapter.table(window_estimates(list(run.receipts))))


def show_gate_table(run: CampaignRun) -> None:
    """The gate arm cell by cell: one fire per rep, the losers raising, no rep losing the
    answer; or the line that says the arm was not run."""
    df = frame(run.receipts)
    if not _measured(df, "gate"):
        display(Markdown("The gate arm was not run."))
        return
    display(chapter.table(df[df.arm == "gate"][GATE_COLUMNS].reset_index(drop=True)))


def loser_errors(receipts: Sequence[Receipt]) -> dict[str, str]:
    """The first message of each error type a gate-arm racer raised, in receipt order."""
    examples: dict[str, str] = {}
    for r in receipts:
        if r.observations.get("cell", {}).get("arm") != "gate":
            continue
        for rep in r.observations["reps"]:
            for o in rep.get("racers", []):
                if o.get("error"):
                    examples.setdefault(o["error"]["type"], o["error"]["message"])
    return examples


def show_loser_errors(run: CampaignRun) -> None:
    """What a losing racer sees under the gate: the error it fails loudly with, quoted."""
    if _measured(frame(run.receipts), "gate"):
        for kind, message in loser_errors(run.receipts).items():
            display(Markdown(f"A losing racer's error: `{kind}`: {message}"))


def show_arms_figure(run: CampaignRun) -> None:
    """Stock beside gate at jitter 0: the gate holds every k at one fire per rep."""
    df = frame(run.receipts)
    if _measured(df, "gate"):
        save_figure(arms_figure(df), "consume_race-arms",
                    "Stock vs REMIT consumption gate at jitter 0: mean gated-effect fires per rep for k racing "
                    "processes (dashes: k). The gate arm stays at one.",
                    _params(run, ("k", "reps", "backends", "arms", "seed")))


def show_probe_time(run: CampaignRun) -> None:
    """What the run cost: total probe time and its split per series, backend and arm."""
    t = timing_table(run.receipts)
    if len(t):
        display(Markdown(f"Total probe time **{t.probe_s.sum():.0f} s** over {len(t)} cells on "
                         f"{chapter.machine(run.receipts)}."))
        display(chapter.table(t.groupby(["series", "backend", "arm"])["probe_s"].sum().rename("seconds").to_frame()))


def show_rep_time(run: CampaignRun) -> None:
    """How one repetition's time and the racers' release spread scale with k (grid, jitter 0):
    the spread says how tightly the barrier released the racers."""
    t = timing_table(run.receipts)
    if len(t):
        display(chapter.table(t[(t.series == "grid") & (t.jitter_ms == 0)].groupby(["backend", "arm", "k"])[
            ["rep_median_s", "release_spread_median_ms"]].median()))


def show_harness_errors(run: CampaignRun) -> None:
    """Measurements that could not be taken, listed (never verdicts); nothing when there are none."""
    if run.harness_errors:
        print("harness errors (measurement problems, never verdicts):")
        for e in run.harness_errors:
            print("  ", e[:400])
