"""Tables and figures of the REMIT chapters, built from receipts only."""

from __future__ import annotations

from typing import Any

from probes.core.checker import Label, collapse
from probes.core.receipt import Receipt
from probes.remit.bench import PHASES

PROPS = ("FD", "CV", "CO", "EO", "PC", "RD", "LV")


def verdict_table(receipts: list[Receipt]) -> Any:
    import pandas as pd

    rows = []
    for r in receipts:
        for v in r.verdicts:
            rows.append({"framework": v.framework, "backend": v.backend, "property": v.property.value,
                         "path": v.path, "label": v.label.value, "summary": v.summary, "probe": r.probe})
    if not rows:
        return pd.DataFrame(columns=["framework", "backend", "property", "path", "label", "summary", "probe"])
    return pd.DataFrame(rows).sort_values(["property", "path", "backend"]).reset_index(drop=True)


def row_matrix(remit: list[Receipt], stock: list[Receipt]) -> Any:
    """Per property x backend: the worst label over paths, stock LangGraph beside LangGraph+REMIT
    (this project's remit_ref) and LangGraph+remit-contract (the paper's build), each with its own
    "saver only" crash cells."""
    import pandas as pd

    cells: dict[tuple[str, str], dict[str, list[Label]]] = {}
    for arm, recs in (("langgraph", stock), ("langgraph+remit", remit), ("langgraph+remit-contract", remit)):
        for r in recs:
            for v in r.verdicts:
                if v.framework not in (arm, f"{arm} (saver only, no effect ledger)") or \
                        (arm == "langgraph" and v.framework != arm):
                    continue  # a REMIT arm includes its "saver only" crash cells
                prop = v.property.value
                if prop in ("EO", "PC") and v.path.startswith(("crash", "durability")):
                    prop = f"{prop} crash (ledger)" if v.path.endswith("/ledger") else f"{prop} crash (saver only)"
                elif prop in ("EO", "PC"):
                    prop = f"{prop} interrupt/park"
                if prop == "CO" and v.path.startswith("cross-process"):
                    prop = "CO cross-process"
                cells.setdefault((arm, v.backend), {}).setdefault(prop, []).append(v.label)
    collapsed = {key: {prop: collapse(labels).value for prop, labels in props.items()}
                 for key, props in cells.items()}
    df = pd.DataFrame.from_dict(collapsed, orient="index").sort_index()
    df.index = pd.MultiIndex.from_tuples(df.index, names=["arm", "backend"])
    return df.reindex(sorted(df.columns), axis=1).fillna("")


def overhead_frame(table: dict[str, Any]) -> Any:
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


def overhead_figure(table: dict[str, Any]) -> Any:
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


# Issue 16's cost targets: total p50 ratio to stock, gate off / gate on.
TARGETS = {"remit_default": 1.01, "remit_gate": 1.03}


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


THROUGHPUT_TARGET = 0.95  # issue 16: throughput within 5 % of stock at every k, on both backends


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


def concurrency_figure(rows: list[dict[str, Any]]) -> Any:
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
