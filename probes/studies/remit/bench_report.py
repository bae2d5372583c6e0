"""The benchmark chapter (``notebooks/remit_bench.ipynb``): what REMIT costs on the
interrupt-then-resume protocol, per arm and phase, and under concurrency, with the targets read off
the run. Built from receipts only (``probes/studies/remit/bench.py`` turns them into tables)."""

from __future__ import annotations

from typing import Any

from IPython.display import display

from probes import chapter
from probes.core.campaign import CampaignRun
from probes.figures import save_figure
from probes.studies.remit.bench import PHASES, concurrency_table, overhead_table
from probes.studies.remit.report import bullet_list

# Issue 16's cost targets: total p50 ratio to stock, gate off / gate on.
TARGETS = {"remit_default": 1.01, "remit_gate": 1.03}
THROUGHPUT_TARGET = 0.95  # issue 16: throughput within 5 % of stock at every k, on both backends


def overhead_frame(table: dict[str, Any]) -> Any:
    """One row per (arm, phase): p50 / p95 and the ratios to stock with their bootstrap intervals."""
    import pandas as pd

    rows = []
    for arm, e in table["arms"].items():
        for phase in (p for p in PHASES if p in e):
            p = e[phase]
            rows.append({"arm": arm, "what": e["doc"], "phase": phase.replace("_ms", ""), "n": e["n"],
                         "p50 ms": p["p50"], "p95 ms": p["p95"], "p50 ratio to stock": p.get("ratio"),
                         "95% bootstrap": p.get("ratio_ci95"), "median paired ratio": p.get("paired_ratio"),
                         "95% bootstrap (paired)": p.get("paired_ratio_ci95")})
    return pd.DataFrame(rows)


def _overhead_plot(table: dict[str, Any]) -> Any:
    import matplotlib.pyplot as plt

    arms = [a for a, e in table["arms"].items() if "ratio" in e["total_ms"]]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(arms) + 1.4))
    for i, arm in enumerate(arms):
        p = table["arms"][arm]["total_ms"]
        lo, hi = p["ratio_ci95"]
        ax.errorbar(p["ratio"], i, xerr=[[p["ratio"] - lo], [hi - p["ratio"]]],
                    fmt="o", capsize=3, color=("tab:green" if arm.startswith("remit") else "tab:grey"
                                             if arm.startswith("stock") else "tab:purple"))
    ax.axvline(1, color="k", lw=0.8)
    for x in (1.01, 1.03):
        ax.axvline(x, color="grey", lw=0.6, ls="--")
    ax.set_yticks(range(len(arms)), arms)
    ax.set_xlabel("p50 of the whole protocol / stock p50 (same process), 95% bootstrap interval")
    ax.set_title("Interrupt-then-resume on SqliteSaver: cost per arm")
    fig.tight_layout()
    return fig


def _ratio(table: dict[str, Any], arm: str, phase: str = "total_ms") -> tuple[float, list[float]] | None:
    p = table["arms"].get(arm, {}).get(phase, {})
    return (p["ratio"], p["ratio_ci95"]) if "ratio" in p else None


def cost_findings(table: dict[str, Any]) -> list[str]:
    """The cost targets, read off one run's overhead table: met or missed, and where the cost sits.

    Every sentence is computed from the table (ratios of paired medians to stock and
    differences of p50s between arms of the same run); an arm the run did not measure
    gives no sentence.
    """
    out = []
    arms = table["arms"]
    for arm, target in TARGETS.items():
        got = _ratio(table, arm)
        if got is None:
            continue
        ratio, (lo, hi) = got
        verdict = ("met" if hi <= target else "met at the median, not over the whole interval" if ratio <= target
                   else "missed")
        total = arms[arm]["total_ms"]
        paired = (f" (median of the paired ratios {total['paired_ratio']:.3f} [{total['paired_ratio_ci95'][0]:.3f}, "
                  f"{total['paired_ratio_ci95'][1]:.3f}])" if "paired_ratio" in total else "")
        out.append(f"`{arm}`: total p50 {ratio:.3f}x stock [{lo:.3f}, {hi:.3f}]{paired}, target <= {target}: "
                   f"{verdict}.")
    noise = _ratio(table, "stock_again")
    if noise is not None:
        ratio, (lo, hi) = noise
        out.append(f"Noise floor: `stock_again`, the stock protocol as an arm of its own, measures {ratio:.3f}x stock "
                   f"[{lo:.3f}, {hi:.3f}] in this run, where the true ratio is 1: a difference within "
                   f"{max(1 - lo, hi - 1) * 100:.1f} % of stock is not resolved by this run.")
    parts = [(a, _ratio(table, a)) for a in ("remit_bare", "remit_fork", "remit_validator")]
    if all(r is not None for _a, r in parts):
        out.append("Gate off, feature by feature (total p50 x stock): " + ", ".join(
            f"`{a}` {r[0]:.3f}" for a, r in parts) + ".")  # type: ignore[index]
    if all(a in arms for a in ("remit_default", "remit_gate")):
        default, gate = (arms[a]["resume_ms"]["p50"] for a in ("remit_default", "remit_gate"))
        out.append(f"The gate adds {(gate - default) * 1000:+.0f} us to the resume p50 ({default:.3f} -> "
                   f"{gate:.3f} ms).")
    cpu = {a: arms[a]["cpu_ms"] for a in ("stock", "remit_default", "remit_gate") if "cpu_ms" in arms.get(a, {})}
    if "stock" in cpu and len(cpu) > 1:
        out.append("CPU time per protocol (every thread, no waiting for the disk), p50: stock "
                   f"{cpu['stock']['p50']:.3f} ms; " + "; ".join(
                       f"`{a}` {c['p50'] - cpu['stock']['p50']:+.3f} ms, {c['paired_ratio']:.3f}x paired "
                       f"[{c['paired_ratio_ci95'][0]:.3f}, {c['paired_ratio_ci95'][1]:.3f}]"
                       for a, c in cpu.items() if a != "stock") + ".")
    for pair, p in table.get("pairs", {}).items():
        ratio, (lo, hi) = p["ratio"], p["ratio_ci95"]
        side = "slower" if lo > 1 else "faster" if hi < 1 else "not distinguishable"
        out.append(f"`{pair}`: {ratio:.3f} [{lo:.3f}, {hi:.3f}], REMIT {side}.")
    return out


def throughput_findings(rows: list[dict[str, Any]]) -> list[str]:
    """The throughput target per (backend, arm), read off the concurrency table.

    A cell is below target when its median ratio to stock is; whether the run can tell
    it apart from the target is its interval's: a cell whose interval reaches 0.95 is
    not distinguishable from the target at this run's size.
    """
    out = []
    cells = [r for r in rows if r.get("throughput_vs_stock") is not None]
    for backend, arm in sorted({(r["backend"], r["arm"]) for r in cells}):
        mine = sorted((r for r in cells if (r["backend"], r["arm"]) == (backend, arm)), key=lambda r: r["k"])
        below = [r for r in mine if r["throughput_vs_stock"] < THROUGHPUT_TARGET]
        clearly = [r for r in below if r["throughput_vs_stock_ci95"][1] < THROUGHPUT_TARGET]
        ratios = ", ".join(f"k={r['k']} {r['throughput_vs_stock']:.3f}" for r in mine)
        verdict = ("met at every k" if not below else
                   f"below at {len(below)} of {len(mine)} k ({', '.join(str(r['k']) for r in below)}), "
                   + (f"clearly (interval under {THROUGHPUT_TARGET}) at k={', '.join(str(r['k']) for r in clearly)}"
                      if clearly else f"each interval reaching {THROUGHPUT_TARGET}"))
        exact = sum(1 for r in mine if r["exactly_once"])
        out.append(f"{backend} `{arm}`: throughput x stock {ratios}; target >= {THROUGHPUT_TARGET}: {verdict}; "
                   f"exactly-once in {exact} of {len(mine)} cells.")
    return out


def _concurrency_plot(rows: list[dict[str, Any]]) -> Any:
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.4))
    for backend in sorted({r["backend"] for r in rows}):
        for arm in sorted({r["arm"] for r in rows}):
            cell = sorted((r for r in rows if r["backend"] == backend and r["arm"] == arm), key=lambda r: r["k"])
            if not cell:
                continue
            ls = "--" if arm == "stock" else "-"
            ks = [r["k"] for r in cell]
            a1.plot(ks, [r["throughput_per_s"] for r in cell], ls, marker="o", label=f"{backend} {arm}")
            a2.plot(ks, [r["median_ms"] for r in cell], ls, marker="o", label=f"{backend} {arm}")
    for ax, label in ((a1, "protocols / s"), (a2, "median protocol latency (ms)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("threads k")
        ax.set_ylabel(label)
    a1.legend(fontsize=6)
    fig.tight_layout()
    return fig


# ---- what the chapter shows, one call per cell ---------------------------------------------------------------

OVERHEAD_CAPTION = ("Overhead of REMIT arms (green), remit-contract 0.1.2 (purple) and a second stock arm (grey, the "
                    "run's noise) on the whole interrupt-then-resume protocol, SqliteSaver, fresh database each: ratio "
                    "of paired p50s to the same process's stock arm, with 95% bootstrap intervals; dashed lines at the "
                    "targets, +1% (gate off) and +3% (gate on).")
CONCURRENCY_CAPTION = ("k threads sharing one saver, stock (dashed) vs the other arms (solid): throughput and median "
                       "protocol latency per k.")
_overhead_tables: dict[tuple[Any, ...], dict[str, Any]] = {}


def _overhead(run: CampaignRun) -> dict[str, Any]:
    """The run's overhead table, with the run's bootstrap and seed. Four cells read it and its
    bootstrap takes tens of seconds, so it is computed once per run (the last run's is kept)."""
    key = (str(run.directory), run.fingerprint, tuple(r.probe for r in run.receipts))
    if key not in _overhead_tables:
        _overhead_tables.clear()
        _overhead_tables[key] = overhead_table(run.receipts, bootstrap=run.params["bootstrap"],
                                               seed=run.params["seed"])
    return _overhead_tables[key]


def overhead_by_phase(run: CampaignRun) -> None:
    """Per arm and phase, p50 / p95 and the ratio to the same process's stock: which phase of the
    protocol (invoke, resume) carries an arm's cost, and how sure the run is of it."""
    display(chapter.table(overhead_frame(_overhead(run))))


def against_contract(run: CampaignRun) -> None:
    """Each REMIT arm over its remit-contract 0.1.2 counterpart, paired: whether this build is ever
    slower than the published one in the arms both have."""
    import pandas as pd

    pairs = _overhead(run)["pairs"]
    display(chapter.table(pd.DataFrame([{"REMIT arm / remit-contract arm": k, **v} for k, v in pairs.items()])))


def overhead_figure(run: CampaignRun) -> None:
    """The whole protocol's cost per arm against the +1 % and +3 % targets, with the noise arm beside
    them: a reader sees at once which intervals clear a target and how wide the run's noise is."""
    table = _overhead(run)
    if table["arms"]:
        save_figure(_overhead_plot(table), "remit-overhead", OVERHEAD_CAPTION,
                    {k: run.params[k] for k in ("overhead_n", "overhead_block", "arms", "bootstrap", "seed")})


def cost_targets(run: CampaignRun) -> None:
    """The cost targets met or missed in this run, as sentences computed from the overhead table."""
    bullet_list(cost_findings(_overhead(run)))


def concurrency(run: CampaignRun) -> None:
    """k threads sharing one saver: exactly-once per protocol (a verdict) and throughput and latency
    against stock at the same k (this machine's metrics), then the throughput target per arm."""
    import pandas as pd

    rows = concurrency_table(run.receipts)
    display(chapter.table(pd.DataFrame(rows)))
    bullet_list(throughput_findings(rows))


def concurrency_figure(run: CampaignRun) -> None:
    """Throughput and median latency against k per backend and arm: how REMIT scales beside stock."""
    rows = concurrency_table(run.receipts)
    if rows:
        save_figure(_concurrency_plot(rows), "remit-concurrency", CONCURRENCY_CAPTION,
                    {k: run.params[k] for k in ("concurrency_k", "concurrency_n", "concurrency_arms",
                                                "concurrency_backends", "seed")})
