"""Tables and the figure of the live chapter, built from receipts (and, for the
published side only, from ``data/published.json``).

Why a module: the notebook stays thin (one ``show_*`` call per table or figure, each
taking the run), and the tests can check the very tables the book shows (e.g. that the
published Claude fork count renders as 80/80 with its Wilson interval, and that it is
labelled "published, not rerun here" when nothing ran).
"""

from __future__ import annotations

from typing import Any

from IPython.display import Markdown, display

from probes import chapter
from probes.core.campaign import CampaignRun
from probes.core.receipt import Receipt
from probes.figures import save_figure
from probes.studies.live.stats import Tally, pooled, wilson

PUBLISHED_LABEL = "published, not rerun here"


def live_cells(receipts: list[Receipt]) -> list[Receipt]:
    """Cells that talked to a real model API (the scripted plumbing model is not live)."""
    return [r for r in receipts if r.observations.get("status") == "ran" and r.observations.get("live")]


def ran_cells(receipts: list[Receipt]) -> list[Receipt]:
    return [r for r in receipts if r.observations.get("status") == "ran"]


def status_line(receipts: list[Receipt]) -> str:
    """One line: what ran and what did not, and why."""
    not_run = [r for r in receipts if r.observations.get("status") == "not run: no key"]
    live = live_cells(receipts)
    scripted = [r for r in ran_cells(receipts) if not r.observations.get("live")]
    parts = []
    if live:
        parts.append(f"{len(live)} live cell(s) measured")
    if scripted:
        parts.append(f"{len(scripted)} cell(s) with the offline scripted model (plumbing only, not live)")
    for r in not_run:
        parts.append(f"{r.observations['provider']}: not run: no key ({r.observations['key_env']} unset), "
                     f"{len(r.observations['cells_not_run'])} cell(s) skipped, no request sent")
    if not receipts:
        return "No live receipts on disk (run the campaign)."
    return "; ".join(parts) + "."


def _fmt_ci(ci: tuple[float, float] | list[float] | None) -> str:
    return f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "-"


def published_rows() -> list[dict[str, Any]]:
    """The paper's live counts with Wilson intervals computed here (display only)."""
    from probes.headline import load_published

    rows = []
    for entry in load_published():
        if entry["campaign"] != "live":
            continue
        pub = entry["published"]
        if "successes" in pub:
            per_model = list(pub.get("per_model", []))
            each = pub["trials"] // len(per_model) if per_model else None  # equal split, as the entry states
            for i, k in enumerate(per_model, 1):
                rows.append({"id": entry["id"], "what": f"{entry['what']} -- model {i}",
                             "count": f"{k}/{each}", "wilson95": _fmt_ci(wilson(k, each))})
            rows.append({"id": entry["id"], "what": f"{entry['what']} -- pooled",
                         "count": f"{pub['successes']}/{pub['trials']}",
                         "wilson95": _fmt_ci(wilson(pub["successes"], pub["trials"]))})
        else:
            rows.append({"id": entry["id"], "what": entry["what"],
                         "count": f"{pub['harness_errors']} harness errors in {pub['runs']} runs",
                         "wilson95": _fmt_ci(wilson(pub["harness_errors"], pub["runs"]))})
    return rows


def published_table(receipts: list[Receipt]) -> Any:
    """Published counts; labelled 'published, not rerun here' unless a live cell ran."""
    import pandas as pd

    frame = pd.DataFrame(published_rows())
    frame.insert(0, "source", "published" if live_cells(receipts) else PUBLISHED_LABEL)
    return frame


def _tally(r: Receipt) -> Tally:
    m = r.metrics
    return Tally(m["violations"], m["trials"], m["harness_errors"], dict(m.get("error_kind_counts", {})))


def cell_records(receipts: list[Receipt]) -> list[dict[str, Any]]:
    return [{"provider": r.observations["provider"], "model": r.observations["model"],
             "protocol": r.observations["protocol"], "tally": _tally(r),
             "agree": r.metrics["agree_with_control"], "control_violation": r.metrics["control_violation"],
             "calls": r.metrics["calls"], "tokens": r.metrics["input_tokens"] + r.metrics["output_tokens"]}
            for r in ran_cells(receipts)]


def cell_table(receipts: list[Receipt]) -> Any:
    """Per cell: violations / valid trials, Wilson 95 %, harness errors, agreement with control."""
    import pandas as pd

    rows = []
    for c in cell_records(receipts):
        row = {"provider": c["provider"], "model": c["model"], "protocol": c["protocol"], **c["tally"].row()}
        row["control (scripted) violated"] = c["control_violation"]
        row["agree with control"] = f"{c['agree']}/{c['tally'].trials}"
        row["calls"], row["tokens"] = c["calls"], c["tokens"]
        rows.append(row)
    return pd.DataFrame(rows)


def pooled_tables(receipts: list[Receipt]) -> dict[str, Any]:
    """Violations pooled per provider x protocol; agreement with the control pooled per model."""
    import pandas as pd

    cells = cell_records(receipts)
    by_provider = pd.DataFrame(pooled(cells, ("provider", "protocol")))
    agree_cells = [{"provider": c["provider"], "model": c["model"],
                    "tally": Tally(c["agree"], c["tally"].trials, c["tally"].harness_errors)} for c in cells]
    by_model = pd.DataFrame(pooled(agree_cells, ("provider", "model")))
    if not by_model.empty:
        by_model = by_model.rename(columns={"violations": "agree_with_control", "rate": "agreement"})
    return {"per provider x protocol (violations)": by_provider,
            "per model, all protocols (live verdict agrees with the scripted control)": by_model}


def comparison_table(receipts: list[Receipt]) -> Any:
    """Measured beside published for the three headline ids, with the headline page's status."""
    import json

    import pandas as pd

    from probes.headline import compare, load_published
    from probes.paper.live import headlines

    measured = headlines(receipts)
    rows = []
    for entry in load_published():
        if entry["campaign"] != "live":
            continue
        got = measured.get(entry["id"])
        row = compare(entry, None if isinstance(got, str) else got, got if isinstance(got, str) else "")
        rows.append({"id": row.id, "published": json.dumps(row.published),
                     "measured": json.dumps(row.measured) if row.measured is not None else "-",
                     "status": row.status, "why": row.why})
    return pd.DataFrame(rows)


def figure(receipts: list[Receipt]) -> Any:
    """Violation rate with Wilson 95 % intervals: published counts, and measured cells if any."""
    import matplotlib.pyplot as plt

    items: list[tuple[str, int, int, str]] = []
    for row in published_rows():
        if "/" in row["count"] and "harness" not in row["count"]:
            k, n = (int(x) for x in row["count"].split("/"))
            items.append((f"published: {row['what'].replace('Live: ', '')}", k, n, "0.55"))
    for c in cell_records(receipts):
        if c["tally"].trials:
            tag = "measured" if c["provider"] != "scripted" else "scripted (offline)"
            items.append((f"{tag}: {c['provider']}/{c['model']} {c['protocol']}", c["tally"].successes,
                          c["tally"].trials, "C0" if c["provider"] != "scripted" else "C2"))
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(items) + 1.2))
    for y, (label, k, n, colour) in enumerate(reversed(items)):
        lo, hi = wilson(k, n) or (0.0, 0.0)
        ax.plot([lo, hi], [y, y], color=colour, lw=3)
        ax.plot([k / n], [y], "o", color=colour)
        ax.text(1.03, y, f"{k}/{n}", va="center", fontsize=8)
    ax.set_yticks(range(len(items)), [i[0] for i in reversed(items)], fontsize=8)
    ax.set_xlim(-0.02, 1.12)
    ax.set_xlabel("violation rate (Wilson 95 % interval)")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


# --- what the chapter shows: one call per table or figure, each from the run --------------------

def show_status(run: CampaignRun) -> None:
    """What this run measured and, per provider without a key, that nothing was sent to it."""
    display(Markdown("**This run:** " + status_line(run.receipts)))


def show_published_table(run: CampaignRun) -> None:
    """The paper's counts with intervals computed here, headed by whether this run measured
    anything to set beside them."""
    display(Markdown("### " + ("Published (the measured values follow below)" if live_cells(run.receipts)
                               else "Published, not rerun here (no API key in this run)")))
    display(chapter.table(published_table(run.receipts)))


def show_cell_table(run: CampaignRun) -> None:
    """Per cell: the violations among valid trials and the harness errors beside them; or the
    line that says no cell ran."""
    cells = cell_table(run.receipts)
    if len(cells):
        display(chapter.table(cells))
    else:
        print("No cell ran in this run (see the status line above): nothing measured to show.")


def show_pooled_tables(run: CampaignRun) -> None:
    """The cells pooled per provider and protocol, and the agreement with the scripted control
    pooled per model: whether real models move the deterministic verdict."""
    if ran_cells(run.receipts):
        for title, frame in pooled_tables(run.receipts).items():
            display(Markdown(f"**Pooled {title}**"))
            display(chapter.table(frame))


def show_figure(run: CampaignRun) -> None:
    """Published and measured violation rates on one axis, each with its Wilson interval, titled
    by whether anything was rerun here."""
    fig = figure(run.receipts)
    fig.axes[0].set_title("published, not rerun here" if not live_cells(run.receipts)
                          else "published (grey) and measured", fontsize=9)
    save_figure(fig, "live-wilson",
                "Violation rate with Wilson 95 % intervals. Grey: published counts (intervals computed here). "
                "Blue: cells measured against a model API in this run. Green: the offline scripted model "
                "(plumbing only). Fork violation is FD, approval is CO/EO, session restore is EO/PC/LV.",
                {k: run.params[k] for k in ("provider", "models", "protocols", "trials", "seed")})


def show_verdicts(run: CampaignRun) -> None:
    """The verdict table, or the line that says no cell ran (and so no verdict exists)."""
    display(chapter.verdicts(run.receipts) if any(r.verdicts for r in run.receipts)
            else Markdown("*No verdicts: no cell ran.*"))


def show_harness_errors(run: CampaignRun) -> None:
    """Trials that could not be driven, counted and listed (the first 40): never verdicts."""
    if run.harness_errors:
        print(f"{len(run.harness_errors)} harness error(s) (measurement problems, never verdicts):")
        for e in run.harness_errors[:40]:
            print("  ", e[:300])
    else:
        print("harness errors: 0")


def show_model_spend(run: CampaignRun) -> None:
    """Model calls and tokens this run spent, beside the caps it ran under; nothing if no cell ran."""
    spent = [(r.metrics.get("calls", 0), r.metrics.get("input_tokens", 0) + r.metrics.get("output_tokens", 0))
             for r in ran_cells(run.receipts)]
    if spent:
        print(f"model calls: {sum(s[0] for s in spent)}, tokens: {sum(s[1] for s in spent)} "
              f"(cap per run: {run.params['max_calls']} calls, {run.params['max_tokens']} tokens)")
