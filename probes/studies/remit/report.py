"""The REMIT chapter (``notebooks/remit.ipynb``), built from receipts only: stock LangGraph beside
LangGraph + REMIT, the cross-process race, and the verification of REMIT where it runs (the
reference model, Hypothesis, the stateful test of the real saver, LangGraph's conformance suite,
the core's contract properties, the equivalent mutants). Also what the REMIT chapters share
(``bullet_list``); the benchmark's and the counted cost's reports are ``bench_report`` and
``cost_report``."""

from __future__ import annotations

import json
from typing import Any

from IPython.display import Markdown, display

from probes import PROJECT_ROOT, chapter
from probes.core.campaign import CampaignRun
from probes.core.checker import Label, collapse
from probes.core.race import bound_text
from probes.core.receipt import Receipt, load_campaign
from probes.core.runs import shown_run
from probes.figures import save_figure

ROW_CAPTION = ("Stock LangGraph 1.2.9 beside LangGraph + REMIT, worst label per property and backend over every "
               "measured path (green: conforms; red: violates; grey: not applicable or not measured).")
ROW_PARAMS = ("backends", "langgraph_kinds", "crash_points", "crash_hows", "recovery_modes", "ledger_points", "racers",
              "seed")


def bullet_list(lines: list[str]) -> None:
    """Sentences computed from a run's tables, shown as one Markdown list (a REMIT chapter's targets
    and findings, each line a claim the reader can check against the table above it)."""
    display(Markdown("\n".join(f"- {line}" for line in lines)))


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


def _row(run: CampaignRun) -> Any:
    """``row_matrix`` of this run beside the LangGraph results the book shows (this machine's, else
    the reference; none if neither is in this checkout)."""
    stock_run = shown_run("langgraph")
    return row_matrix(run.receipts, load_campaign(stock_run.directory) if stock_run else [])


def row_table(run: CampaignRun) -> None:
    """What REMIT changes: for each property and backend, stock LangGraph's worst label beside each
    REMIT build's."""
    display(chapter.table(_row(run)))


def _row_plot(m: Any) -> Any:
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    colors = {"✓": 1.0, "n/a": 0.5, "": 0.5}
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(m.columns), 0.5 * len(m) + 1.2))
    grid = [[colors.get(v, 0.0) for v in row] for row in m.values]
    ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    for i, row in enumerate(m.values):
        for j, v in enumerate(row):
            ax.text(j, i, v, ha="center", va="center")
    ax.set_xticks(range(len(m.columns)), m.columns, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(m)), [f"{a} / {b}" for a, b in m.index], fontsize=8)
    cmap = plt.get_cmap("RdYlGn")
    ax.legend(handles=[Patch(color=cmap(1.0), label="✓ conforms"), Patch(color=cmap(0.0), label="✗ / D / U violates"),
                       Patch(color=cmap(0.5), label="n/a or not measured")], loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def row_figure(run: CampaignRun) -> None:
    """The same comparison as colours (green conforms, red violates): which property REMIT turns
    green on which backend is visible at a glance."""
    m = _row(run)
    if len(m):
        save_figure(_row_plot(m), "remit-row", ROW_CAPTION, {k: run.params[k] for k in ROW_PARAMS})


def race_table(run: CampaignRun) -> None:
    """Each cross-process race cell with the trials it took and the bound it reached: a ✓ here is a
    stated confidence (violation rate under the threshold), not one lucky race."""
    rows = []
    for r in run.receipts:
        race = r.observations.get("race") if isinstance(r.observations, dict) else None
        if not isinstance(race, dict) or "rule" not in race:
            continue  # the in-memory n/a cell, or a receipt measured before race cells stated a bound
        for v in r.verdicts:
            rows.append({"racers": r.args["k"], "backend": v.backend, "property": v.property.value,
                         "verdict": v.label.value, "trials, bound": bound_text(v.evidence),
                         "threshold": f"{100 * race['rule']['threshold']:g} %", "stopped": race["stopped"],
                         "receipt": r.probe})
    rows.sort(key=lambda row: (row["racers"], row["backend"], row["property"]))
    display(chapter.table(rows, ["racers", "backend", "property", "verdict", "trials, bound", "threshold", "stopped"],
                          collapse=False, empty="no race cell with stated confidence in this run"))


def _observations(run: CampaignRun) -> dict[str, Any]:
    """probe id -> its observations (the verification probes report there, not in verdicts)."""
    return {r.probe: r.observations for r in run.receipts}


def _verified(run: CampaignRun, prefix: str) -> list[dict[str, Any]]:
    """The observations of the verification probes named ``prefix<backend>``, in probe order."""
    return [o for k, o in sorted(_observations(run).items()) if k.startswith(prefix)]


def model_check(run: CampaignRun) -> None:
    """The reference model's state space beside the one the core generates, and how many of the core's
    decisions were compared with the model's: the core decides as the reference semantics does."""
    obs = _observations(run)
    if "verify.model" not in obs:
        return
    o = obs["verify.model"]
    display(chapter.table([{"check": check, "distinct states": o[space]["distinct"],
                            "generated": o[space]["generated"], "depth": o[space]["depth"],
                            "invariants holding": ", ".join(o[space]["holds"])}
                           for check, space in (("reference space (BFS)", "reference_space"),
                                                ("space the core generates", "core_space"))]))
    c = o["conformance"]
    display(Markdown(f"Core vs model: **{c['checks']} decisions compared in {c['states']} reachable states, "
                     f"{c['mismatches']} mismatches** (bounds {o['bounds']}); per decision: {c['checks_by_decision']}."))


def tlc_cross_check(run: CampaignRun) -> None:
    """TLC on this project's TLA+ module beside the BFS: two encodings of the reference semantics
    agree on the state count (TLC counts depth in states, one more than transitions)."""
    try:
        tlc = {r.probe: r.observations for r in load_campaign(shown_run("tlc").directory)}
        r0 = tlc["reference"]["runs"]["R0_reference"]
        space = _observations(run)["verify.model"]["reference_space"]
        display(chapter.table([
            {"source": "TLC, tla/ResumePlane.tla R0", "distinct": r0["distinct"], "generated": r0["generated"],
             "depth (states)": r0["depth"], "result": r0["result"]},
            {"source": "this BFS (probes/studies/remit/model.py)", "distinct": space["distinct"],
             "generated": space["generated"], "depth (states)": space["depth"] + 1,
             "result": "holds" if not space["violations"] else "violated"},
        ]))
    except Exception as exc:  # no TLC run in this checkout, or one without the R0 reference run
        display(Markdown(f"*TLC results unavailable ({type(exc).__name__}).*"))


def hypothesis_result(run: CampaignRun) -> None:
    """How many random interleavings Hypothesis drove through the core, with which actions, and whether
    the six invariants held after every step."""
    obs = _observations(run)
    if "verify.hypothesis" in obs:
        h = obs["verify.hypothesis"]
        display(Markdown(f"{h['runs']} runs, {h['steps']} steps (examples {h['examples']}, up to {h['max_steps']} "
                         f"steps each, derandomized); actions {h['actions']}; result: "
                         f"**{'all invariants held' if h['holds'] else h['failure']}**."))


def stateful_table(run: CampaignRun) -> None:
    """Per backend, the model-based test of the real saver: steps checked against the model, races,
    tampered writes and inspections, and whether the saver kept to the model throughout."""
    import pandas as pd

    rows = [{"backend": o["backend"], "examples": o["examples"], "steps checked": o["steps"], "races": o["races"],
             "tampered writes": o["tampers"], "inspections": o["inspections"],
             "result": "holds" if o["holds"] else o["failure"]} for o in _verified(run, "verify.stateful.")]
    display(chapter.table(pd.DataFrame(rows)) if rows else Markdown("*No stateful-test receipts.*"))


def stateful_coverage(run: CampaignRun) -> None:
    """How often each model action and each decision case of ``remit_ref.core`` was reached per backend
    while the real saver ran: what the stateful test exercised, and what it did not."""
    import pandas as pd

    cov: dict[tuple[str, str], dict[str, int]] = {}
    for o in _verified(run, "verify.stateful."):
        for kind, counts in (("model action", o["model_actions"]), ("core decision case", o["decision_cases"])):
            for a, n in counts.items():
                cov.setdefault((kind, a), {})[o["backend"]] = n
    if cov:
        display(chapter.table(pd.DataFrame.from_dict(cov, orient="index").fillna(0).astype(int)))


def lg_conformance(run: CampaignRun) -> None:
    """LangGraph's checkpointer conformance suite per backend, stock saver beside ``wrap(...)``: REMIT
    passes every capability its base passes (a line per backend names any regression)."""
    import pandas as pd

    rows = []
    for o in _verified(run, "verify.lg_conformance."):
        rows += [{"backend": o["backend"], "capability": cap["capability"],
                  "stock": f"{cap['stock_passed']} ({cap['stock_tests']})",
                  "REMIT": f"{cap['remit_passed']} ({cap['remit_tests']})"} for cap in o["capabilities"]]
        display(Markdown(f"**{o['backend']}**: stock {o['stock_level']}, REMIT {o['remit_level']}; capabilities where "
                         f"REMIT fails but stock passes: {o['regressions'] or 'none'}."))
    if rows:
        display(chapter.table(pd.DataFrame(rows)))


def contracts(run: CampaignRun) -> None:
    """The core's contract properties checked on every input of their finite domains (failures must
    be 0), and the z3 proof of the gate's truth table."""
    import pandas as pd

    obs = _observations(run)
    if "verify.contracts" not in obs:
        return
    v = obs["verify.contracts"]
    display(chapter.table(pd.DataFrame([{"property": k, "inputs checked": x["inputs"], "failures": x["failures"]}
                                        for k, x in v["finite"].items()])))
    z3 = v["z3_gate"]
    display(Markdown(f"z3 gate: mutual exclusion {z3['mutual_exclusion']}, progress {z3['progress']}, winner "
                     f"consumes {z3['winner_consumes']} → proved: **{z3['proved']}** (unsat = no counterexample)."))


def equivalent_mutants() -> None:
    """The surviving cosmic-ray mutants accepted as equivalent, each with its reason: every other
    mutant of ``remit_ref/`` must be killed by the tests."""
    import pandas as pd

    eq = json.loads((PROJECT_ROOT / "mutation" / "remit_ref.equivalent.json").read_text())
    display(chapter.table(pd.DataFrame(eq, columns=["operator", "definition", "code", "mutant", "why"])))
