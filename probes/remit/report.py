"""Tables and figures of the REMIT chapters, built from receipts only."""

from __future__ import annotations

from typing import Any

from probes.core.checker import Label, collapse
from probes.core.receipt import Receipt

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
    """Per property x backend: the worst label over paths, stock LangGraph beside LangGraph+REMIT."""
    import pandas as pd

    cells: dict[tuple[str, str], dict[str, list[Label]]] = {}
    for arm, recs in (("langgraph", stock), ("langgraph+remit", remit)):
        for r in recs:
            for v in r.verdicts:
                if not v.framework.startswith(arm) or (arm == "langgraph" and v.framework != arm):
                    continue  # the REMIT arm includes its "saver only" crash cells
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


def mutant_table(receipts: list[Receipt]) -> Any:
    import pandas as pd

    rows = []
    for r in receipts:
        if not r.probe.startswith("mutant.") or r.probe == "mutant.baseline":
            continue
        o = r.observations
        rows.append({"mutant": o["mutant"], "function": o["function"], "what it breaks": o["what"],
                     "killed": o["killed"],
                     "caught by": "; ".join(f"{d}: {', '.join(f)}" for d, f in sorted(o["killed_by"].items()))
                     or "SURVIVED"})
    return pd.DataFrame(rows)


def mutant_figure(receipts: list[Receipt]) -> Any:
    import matplotlib.pyplot as plt

    dets = ("model", "contracts", "hypothesis", "langgraph")
    names, grid = [], []
    for r in receipts:
        if r.probe.startswith("mutant.") and r.probe != "mutant.baseline":
            names.append(r.observations["mutant"])
            grid.append([1 if d in r.observations["killed_by"] else 0 for d in dets])
    fig, ax = plt.subplots(figsize=(6.5, 0.32 * len(names) + 1.2))
    ax.imshow(grid, cmap="Greens", vmin=0, vmax=1.4, aspect="auto")
    ax.set_xticks(range(len(dets)), dets)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, "killed" if v else "", ha="center", va="center", fontsize=7)
    ax.set_title("Which detector catches each mutant of remit_ref.core")
    fig.tight_layout()
    return fig


def overhead_frame(table: dict[str, Any]) -> Any:
    import pandas as pd

    rows = []
    for arm, e in table["arms"].items():
        for phase in ("interrupt_ms", "resume_ms", "total_ms"):
            p = e[phase]
            rows.append({"arm": arm, "what": e["doc"], "phase": phase.replace("_ms", ""), "n": e["n"],
                         "p50 ms": p["p50"], "p95 ms": p["p95"], "baseline": e["baseline"],
                         "p50 vs baseline %": p.get("pct_vs_baseline"), "95% bootstrap %": p.get("pct_ci95")})
    return pd.DataFrame(rows)


def overhead_figure(table: dict[str, Any]) -> Any:
    import matplotlib.pyplot as plt

    arms = [a for a, e in table["arms"].items() if "pct_vs_baseline" in e["total_ms"]]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(arms) + 1.4))
    for i, arm in enumerate(arms):
        p = table["arms"][arm]["total_ms"]
        lo, hi = p["pct_ci95"]
        ax.errorbar(p["pct_vs_baseline"], i, xerr=[[p["pct_vs_baseline"] - lo], [hi - p["pct_vs_baseline"]]],
                    fmt="o", color="tab:green" if arm.startswith("remit") else "tab:purple", capsize=3)
    ax.axvline(0, color="k", lw=0.8)
    for x in (2, 5):
        ax.axvline(x, color="grey", lw=0.6, ls="--")
    ax.set_yticks(range(len(arms)), arms)
    ax.set_xlabel("p50 of the whole protocol vs its baseline (%), 95% bootstrap interval")
    ax.set_title("Interrupt-then-resume on SqliteSaver: overhead per arm")
    fig.tight_layout()
    return fig


def concurrency_figure(rows: list[dict[str, Any]]) -> Any:
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.4))
    for backend in sorted({r["backend"] for r in rows}):
        for arm, ls in (("stock", "--"), ("remit", "-")):
            cell = sorted((r for r in rows if r["backend"] == backend and r["arm"] == arm), key=lambda r: r["k"])
            if not cell:
                continue
            ks = [r["k"] for r in cell]
            a1.plot(ks, [r["throughput_per_s"] for r in cell], ls, marker="o", label=f"{backend} {arm}")
            a2.plot(ks, [r["median_ms"] for r in cell], ls, marker="o", label=f"{backend} {arm}")
    for ax, label in ((a1, "protocols / s"), (a2, "median protocol latency (ms)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("threads k")
        ax.set_ylabel(label)
    a1.legend(fontsize=7)
    fig.tight_layout()
    return fig
