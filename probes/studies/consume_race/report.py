"""Tables and figures of the consume-race chapter, built from receipts only.

Kept out of the notebook so that the notebook stays a thin driver and the same
functions can be tested. Nothing here imports LangGraph.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from probes.studies.consume_race.campaign import cells
from probes.core.receipt import Receipt

SATURATED = 0.95  # a dose point counts as "inside the window" when >= this saturation


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
