"""The counted-cost chapter (``notebooks/remit_cost.ipynb``): instructions and durable writes per
protocol for every REMIT arm, and where an arm's extra instructions go, built from receipts only
(``probes/studies/remit/counted.py`` turns them into the table every function here reads)."""

from __future__ import annotations

from typing import Any

from IPython.display import Markdown, display

from probes import chapter
from probes.core.campaign import CampaignRun
from probes.studies.remit.counted import COUNT_ARMS, DURABLE, INSTRUCTION_TARGETS, TRACED, counted_table, function_delta
from probes.studies.remit.report import bullet_list


def counted_frame(table: dict[str, Any]) -> Any:
    """One row per (backend, arm): instructions per protocol (median of runs), ratio to stock with the
    runs' range, and the traced syscalls per protocol (medians), all from receipts."""
    import pandas as pd

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


# ---- what the chapter shows, one call per cell ---------------------------------------------------------------


def instructions_and_writes(run: CampaignRun) -> None:
    """The counted table and its targets: whether each arm stays within its instruction budget over
    stock in every run, and whether any arm makes more durable writes than stock (neither depends on
    what else the machine was running)."""
    counted = counted_table(run.receipts)
    display(chapter.table(counted_frame(counted)))
    bullet_list(counted_findings(counted))


def where_instructions_go(run: CampaignRun) -> None:
    """For each arm the chapter explains (see ``counted_explained``): its C-level instruction difference
    to stock, function by function, then the wrapper's own Python functions by bytecodes; last, what
    each feature adds. This is where an arm that misses its target spends the excess."""
    counted = counted_table(run.receipts)
    for backend, arm in counted_explained(counted):
        display(Markdown(f"**{backend}, `{arm}`** ({counted[backend][arm]['ratio']:.4f}x stock)"))
        display(chapter.table(counted_annotation(counted, backend, arm)))
        own = counted_bytecodes(counted, backend, arm)
        if own is not None:
            display(chapter.table(own))
    bullet_list(counted_features(counted))
