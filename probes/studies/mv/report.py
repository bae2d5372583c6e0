"""What the cross-version cells say: one outcome per (framework, from, to), a grid, a table.

The outcome of a cell is read from its verdicts (the kit's judge decided them) and from
what the resuming process returned:

* ``as same-release``: EO, CO and LV all ✓, as the control X->X of a working release is;
* ``refused loudly``: the resuming release raised, and no effect fired twice (EO and CO ✓):
  the property allows it (a refusal is not silent), though the run did not complete (LV);
* ``misbehaved``: anything else -- an effect again, a lost answer, a wrong outcome, a run
  that neither completed nor refused;
* ``n/a``: no pair (no other release, or the release lacks the adapter's API).

A pair is read against its controls: where X->X itself misbehaved, X->Y inherits nothing to
blame on the version change, and the table says so.
"""

from __future__ import annotations

from typing import Any

from probes.core.receipt import Receipt

OUTCOMES = ("as same-release", "refused loudly", "misbehaved", "n/a")
COLOURS = {"as same-release": "#4c9a5b", "refused loudly": "#8fa9c9", "misbehaved": "#c8553d", "n/a": "#eeeeee"}
SYMBOLS = {"as same-release": "✓", "refused loudly": "R", "misbehaved": "✗", "n/a": "–"}


def _version(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split(".") if part.isdigit())


def outcome(receipt: Receipt) -> str:
    labels = {v.property.value: v.label.value for v in receipt.verdicts}
    if not labels or all(label == "n/a" for label in labels.values()):
        return "n/a"
    if all(label == "✓" for label in labels.values()):
        return "as same-release"
    status = receipt.observations.get("mv", {}).get("status")
    if status == "raised" and labels.get("EO") == "✓" and labels.get("CO") == "✓":
        return "refused loudly"
    return "misbehaved"


def cells(receipts: list[Receipt]) -> list[dict[str, Any]]:
    """One row per measured cell, the controls' outcomes beside it."""
    rows = []
    for r in receipts:
        if r.harness_errors:
            continue
        args = r.args
        mv = r.observations.get("mv", {})
        rows.append({"framework": args["campaign"], "from": args["from"], "to": args["to"], "outcome": outcome(r),
                     "status": mv.get("status") or "", "error": mv.get("error") or "",
                     **{v.property.value: v.label.value for v in r.verdicts},
                     "summary": next((v.summary for v in r.verdicts if v.property.value == "LV"), ""),
                     "receipt": r.probe})
    by_key = {(row["framework"], row["from"], row["to"]): row["outcome"] for row in rows}
    for row in rows:
        controls = {by_key.get((row["framework"], x, x)) for x in (row["from"], row["to"])}
        row["controls"] = "as same-release" if controls == {"as same-release"} else (
            "a control misbehaved" if "misbehaved" in controls else "/".join(sorted(filter(None, controls))) or "—")
    return rows


def summary(receipts: list[Receipt]) -> str:
    rows = cells(receipts)
    pairs = [r for r in rows if r["from"] != r["to"]]
    counts = {o: sum(r["outcome"] == o for r in pairs) for o in OUTCOMES}
    errors = sum(bool(r.harness_errors) for r in receipts)
    paired = {r["framework"] for r in pairs}
    single = sorted({r["framework"] for r in rows} - paired)
    return (f"**{len(pairs)} cross-version cells** over {len(paired)} frameworks with more than one release "
            f"(beside {sum(r['from'] == r['to'] for r in rows if r['framework'] in paired)} same-release controls), "
            f"{errors} harness errors: " + ", ".join(f"{counts[o]} {o}" for o in OUTCOMES) + "."
            + (f" No release other than the pin: {', '.join(single)}." if single else ""))


def figure(receipts: list[Receipt]) -> Any:
    """Per framework with a pair, a from × to grid coloured by outcome."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    rows = cells(receipts)
    frameworks = [fw for fw in dict.fromkeys(r["framework"] for r in rows)
                  if any(r["from"] != r["to"] for r in rows if r["framework"] == fw)]
    if not frameworks:
        fig, ax = plt.subplots(figsize=(5, 1.2))
        ax.axis("off")
        ax.text(0.5, 0.5, "no cross-version pair measured", ha="center", va="center")
        return fig
    sizes = [len({r["from"] for r in rows if r["framework"] == fw}) for fw in frameworks]
    fig, axes = plt.subplots(1, len(frameworks), figsize=(max(7.5, sum(0.75 * n + 1.6 for n in sizes)), 0.75 *
                                                          max(sizes) + 1.8),
                             gridspec_kw={"width_ratios": sizes}, squeeze=False)
    for ax, fw in zip(axes[0], frameworks):
        mine = [r for r in rows if r["framework"] == fw]
        rel = sorted({r["from"] for r in mine}, key=_version)
        grid = {(r["from"], r["to"]): r["outcome"] for r in mine}
        for i, a in enumerate(rel):
            for j, b in enumerate(rel):
                o = grid.get((a, b), "n/a")
                ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor=COLOURS[o], edgecolor="white", linewidth=2))
                ax.text(j + 0.5, i + 0.5, SYMBOLS[o], ha="center", va="center", fontsize=11,
                        color="white" if o in ("as same-release", "misbehaved") else "#333333")
        ax.set_xlim(0, len(rel))
        ax.set_ylim(len(rel), 0)
        ax.set_xticks([k + 0.5 for k in range(len(rel))], rel, rotation=45, ha="right", fontsize=8)
        ax.set_yticks([k + 0.5 for k in range(len(rel))], rel, fontsize=8)
        ax.set_xlabel("answered under")
        ax.set_ylabel("paused under")
        ax.set_title(fw, fontsize=10)
        ax.set_aspect("equal")
        for side in ax.spines.values():
            side.set_visible(False)
    fig.legend(handles=[Patch(facecolor=COLOURS[o], label=f"{SYMBOLS[o]} {o}") for o in OUTCOMES],
               loc="lower center", ncol=len(OUTCOMES), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def caption(receipts: list[Receipt]) -> str:
    rows = cells(receipts)
    bad = [f"{r['framework']} {r['from']}→{r['to']}" for r in rows if r["outcome"] == "misbehaved"]
    return ("Cross-version resume: each square a run paused under the row's release and answered under the "
            "column's (the diagonal: same-release controls), coloured by its outcome. "
            + (f"Misbehaved: {', '.join(bad)}." if bad else "No cell misbehaved."))


def show_figure(receipts: list[Receipt], params: Any) -> Any:
    from probes.figures import save_figure

    return save_figure(figure(receipts), "mv-grid", caption(receipts), dict(params))
