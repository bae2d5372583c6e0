"""Tables and figures of the REMIT chapters, built from receipts only."""

from __future__ import annotations

from typing import Any

from probes.core.checker import Label, collapse
from probes.core.receipt import Receipt
from probes.studies.remit.bench import PHASES

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


# ---- the counted part (probes/studies/remit/counted.py) -------------------------------------------------------


def counted_frame(table: dict[str, Any]) -> Any:
    """One row per (backend, arm): instructions per protocol (median of runs), ratio to stock with the
    runs' range, and the traced syscalls per protocol (medians), all from receipts."""
    import pandas as pd

    from probes.studies.remit.counted import COUNT_ARMS, TRACED

    order = {a: i for i, a in enumerate(COUNT_ARMS)}
    rows = []
    for backend, arms in sorted(table.items()):
        for arm, e in sorted(arms.items(), key=lambda kv: order.get(kv[0], 99)):
            lo, hi = e.get("ratio_range", [None, None])
            rows.append({"backend": backend, "arm": arm, "runs x protocols": f"{e['runs']} x {e['protocols']}",
                         "instructions / protocol (M)": round(e["instructions"]["median"] / 1e6, 4),
                         "x stock": round(e["ratio"], 4) if "ratio" in e else None,
                         "range x stock": f"{lo:.4f} – {hi:.4f}" if lo is not None else None,
                         **{f"{n} / protocol": e["syscalls"].get(n) for n in TRACED}})
    return pd.DataFrame(rows)


def counted_findings(table: dict[str, Any]) -> list[str]:
    """The counted targets per backend: met or missed (by how much), and durable writes against stock."""
    from probes.studies.remit.counted import DURABLE, INSTRUCTION_TARGETS

    out = []
    for backend, arms in sorted(table.items()):
        if "stock" not in arms:
            continue
        for arm, target in INSTRUCTION_TARGETS.items():
            e = arms.get(arm)
            if e is None:
                continue
            lo, hi = e["ratio_range"]
            if hi <= target:
                verdict = "met in every run"
            elif e["ratio"] <= target:
                verdict = f"met at the median, not in every run (highest run {hi:.4f})"
            else:
                extra = (e["ratio"] - target) * arms["stock"]["instructions"]["median"]
                verdict = (f"missed by {(e['ratio'] - target) * 100:.2f} points of stock "
                           f"({extra / 1e3:,.0f} k instructions per protocol over the target)")
            out.append(f"{backend} `{arm}`: {e['ratio']:.4f}x stock instructions [{lo:.4f}, {hi:.4f}] over "
                       f"{e['runs']} runs of {e['protocols']} protocols, target <= {target}: {verdict}.")
        # More than stock: every run of the arm above every run of stock; a higher median inside the
        # runs' spread (SQLite's page writes move by a fraction per protocol between runs) is said as such.
        stock = arms["stock"]
        worse, spread = [], []
        for arm, e in sorted(arms.items()):
            for n in DURABLE:
                lo = e.get("syscalls_range", {}).get(n, [0, 0])[0]
                hi_stock = stock.get("syscalls_range", {}).get(n, [0, 0])[1]
                text = f"`{arm}` {n} {e['syscalls'].get(n, 0):g} vs {stock['syscalls'].get(n, 0):g}"
                if lo > hi_stock:
                    worse.append(text)
                elif e["syscalls"].get(n, 0) > stock["syscalls"].get(n, 0):
                    spread.append(text)
        line = (f"no arm makes more durable-write syscalls per protocol than stock ({', '.join(DURABLE)})"
                if not worse else "more durable-write syscalls per protocol than stock in every run: " + "; ".join(worse))
        if spread:
            line += "; a higher median within the runs' spread of stock: " + "; ".join(spread)
        out.append(f"{backend}: {line}.")
    return out


def counted_annotation(table: dict[str, Any], backend: str, arm: str, top: int = 12) -> Any:
    """Where an arm's extra instructions go: cachegrind's per-function counts (cg_annotate), per protocol,
    this arm minus stock, largest first (CPython's C functions: cachegrind does not see Python's)."""
    import pandas as pd

    from probes.studies.remit.counted import function_delta

    delta = function_delta(table, backend, arm)
    extra = table[backend][arm]["instructions"]["median"] - table[backend]["stock"]["instructions"]["median"]
    rows = [{"function (file:function)": fn, "instructions / protocol over stock": round(v),
             "share of the arm's extra": f"{v / extra * 100:.1f} %" if extra > 0 else ""}
            for fn, v in list(delta.items())[:top]]
    return pd.DataFrame(rows)


def counted_bytecodes(table: dict[str, Any], backend: str, arm: str, top: int = 12) -> Any:
    """Where the wrapper's own work is, at the level of its Python code: the bytecodes each of its
    functions executes per protocol (every thread, one traced session), largest first; None for a
    receipt measured before the count existed."""
    import pandas as pd

    counted = table[backend][arm].get("bytecodes")
    if not counted or not counted["own"]:
        return None
    stock = (table[backend].get("stock") or {}).get("bytecodes") or {}
    rows = [{"function (file:function)": fn, "bytecodes / protocol": v,
             "share of the wrapper's own": f"{v / counted['own_total'] * 100:.1f} %"}
            for fn, v in list(counted["own"].items())[:top]]
    rows.append({"function (file:function)": "all of the wrapper's own functions", "bytecodes / protocol":
                 counted["own_total"], "share of the wrapper's own": (
                     f"{counted['own_total'] / stock['total'] * 100:.2f} % of stock's {stock['total']:,.0f} in all"
                     if stock.get("total") else "")})
    return pd.DataFrame(rows)


def counted_explained(table: dict[str, Any]) -> list[tuple[str, str]]:
    """The (backend, arm) pairs the annotation explains: each targeted arm that misses its target in any
    run; where none does, the gate (the costliest targeted arm) on each backend."""
    from probes.studies.remit.counted import INSTRUCTION_TARGETS

    missed = [(b, a) for b, arms in sorted(table.items()) for a, t in INSTRUCTION_TARGETS.items()
              if a in arms and "ratio_range" in arms[a] and arms[a]["ratio_range"][1] > t]
    if missed:
        return missed
    return [(b, "remit_gate") for b, arms in sorted(table.items()) if "ratio" in arms.get("remit_gate", {})]


# (arm, baseline arm): what one feature adds on top of another, in instructions per protocol
FEATURE_STEPS = (("remit_bare", "stock"), ("remit_fork", "remit_bare"), ("remit_validator", "remit_bare"),
                 ("remit_gate_alone", "remit_bare"), ("remit_default", "remit_bare"), ("remit_gate", "remit_default"))


def counted_features(table: dict[str, Any]) -> list[str]:
    """REMIT's instructions feature by feature: the difference of the arms' medians, per backend."""
    out = []
    for backend, arms in sorted(table.items()):
        steps = [f"`{a}` − `{b}` {(arms[a]['instructions']['median'] - arms[b]['instructions']['median']) / 1e3:+,.1f} k"
                 for a, b in FEATURE_STEPS if a in arms and b in arms]
        if steps:
            stock = arms.get("stock", {}).get("instructions", {}).get("median")
            base = f" (stock: {stock / 1e6:.3f} M per protocol)" if stock else ""
            out.append(f"{backend}, instructions per protocol feature by feature{base}: " + "; ".join(steps) + ".")
    return out
