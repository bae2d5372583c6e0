"""The atlas tables and figures, one per framework, built from receipts only (no framework imports).

Per (behaviour, release) the status combines the backends it was measured on:
present on any backend -> ``present`` (the backends are named); otherwise ``absent`` if
measured absent somewhere; otherwise ``not reproduced``; otherwise ``n/a``. "Fixed in"
is the first release, in version order, where the behaviour is absent after one where
it was present; "last present" is the newest release where it was present; "first bad"
the oldest present release after a measured release without it. A boundary is exact
when its two measured releases are neighbours in the distribution's release list
(``releases.json``), else the table shows the interval the bisection left.

A verdict belongs to the row of its framework (``Verdict.framework``) and reference
(``#<ref> @ <release>``); every function takes the framework (LangGraph by default).
"""

from __future__ import annotations

from typing import Any, Iterable

from probes.studies.atlas.bugs import LANGGRAPH, Bug, of
from probes.studies.atlas.decide import ABSENT, NA, NOT_REPRODUCED, PRESENT, status
from probes.core.receipt import Receipt

CAMPAIGN = "atlas"
SYMBOL = {PRESENT: "●", ABSENT: "○", NA: "–", NOT_REPRODUCED: "?"}
COLOUR = {PRESENT: "#c0392b", ABSENT: "#27ae60", NA: "#bdc3c7", NOT_REPRODUCED: "#f1c40f"}


def link(probe: str) -> str:
    return f"receipts/{CAMPAIGN}/{probe}.json"


def release_key(release: str) -> tuple[Any, ...]:
    """Version order (pre-releases before their final release, ``releases.key``); local builds
    after every numbered release."""
    from probes.studies.atlas import releases

    try:
        return (0, releases.key(release))
    except ValueError:
        return (1, release)


def cells(receipts: Iterable[Receipt], fw: str | None = LANGGRAPH) -> list[dict[str, Any]]:
    """One row per measured cell of ``fw`` (every framework when None): behaviour, release, backend,
    status, label, what was observed."""
    out = []
    for r in receipts:
        for v in r.verdicts:
            if fw is not None and v.framework != fw:
                continue
            ref, _, release = v.path.lstrip("#").partition(" @ ")
            out.append({"framework": v.framework, "ref": ref, "release": release, "backend": v.backend,
                        "status": status(v),
                        "label": v.label.value, "property": v.property.value, "summary": v.summary,
                        "probe": r.probe, "receipt": link(r.probe)})
    return sorted(out, key=lambda c: (c["framework"], c["ref"], release_key(c["release"]), c["backend"]))


def combine(statuses: dict[str, str]) -> str:
    values = set(statuses.values())
    for s in (PRESENT, ABSENT, NOT_REPRODUCED):
        if s in values:
            return s
    return NA


def frameworks(receipts: Iterable[Receipt]) -> list[str]:
    """The frameworks with measured cells, in the order of probes/studies/atlas/frameworks.py."""
    from probes.studies.atlas.frameworks import FRAMEWORKS

    seen = {v.framework for r in receipts for v in r.verdicts}
    return [f for f in FRAMEWORKS if f in seen]


def grid(receipts: Iterable[Receipt], fw: str = LANGGRAPH) -> tuple[list[str], dict[str, dict[str, dict[str, Any]]]]:
    """(releases in version order, {ref: {release: {"status", "backends": {backend: status}, "receipts"}}})."""
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    releases: set[str] = set()
    for c in cells(receipts, fw):
        releases.add(c["release"])
        slot = rows.setdefault(c["ref"], {}).setdefault(c["release"], {"backends": {}, "receipts": {}})
        slot["backends"][c["backend"]] = c["status"]
        slot["receipts"][c["backend"]] = c["receipt"]
    for per_release in rows.values():
        for slot in per_release.values():
            slot["status"] = combine(slot["backends"])
    return sorted(releases, key=release_key), rows


def fixed_in(statuses: list[tuple[str, str]]) -> tuple[str | None, str | None]:
    """(first release absent after a present one, last release present) over ordered (release, status)."""
    fixed = last = None
    seen_present = False
    for release, s in statuses:
        if s == PRESENT:
            seen_present, last, fixed = True, release, None
        elif s == ABSENT and seen_present and fixed is None:
            fixed = release
    return fixed, last


def first_bad(statuses: list[tuple[str, str]]) -> str | None:
    """The oldest present release of the newest stretch of present releases (None if never present)."""
    first = None
    previous = None
    for release, s in statuses:
        if s == PRESENT and previous != PRESENT:
            first = release
        previous = s
    return first


def _neighbours(dist: str, older: str, newer: str, listed: list[str] | None = None) -> bool:
    """``older`` and ``newer`` are adjacent in ``listed`` (default ``dist``'s release list; unknown list:
    not known to be)."""
    from probes.studies.atlas import releases

    try:
        listed = listed if listed is not None else releases.releases(dist)
    except KeyError:
        return False
    if older not in listed or newer not in listed:
        return False
    return listed.index(newer) - listed.index(older) == 1


def boundary(dist: str, statuses: list[tuple[str, str]], at: str | None, oldest: str | None = None,
             listed: list[str] | None = None) -> str:
    """``at`` as shown: the release, or ``A < … ≤ B`` (the measured release before it, exclusive) when
    the releases between them were not run; ``≤ B`` when ``at`` is the oldest measured release but
    not the oldest the sweep could run (``oldest``)."""
    if at is None:
        return "—"
    names = [r for r, _s in statuses]
    i = names.index(at)
    if i == 0:
        return at if oldest is None or oldest == at else f"≤ {at}"
    if _neighbours(dist, names[i - 1], at, listed):
        return at
    return f"{names[i - 1]} < … ≤ {at}"


def _oldest_candidate(bug: Bug) -> str | None:
    """The oldest release a swept row could run (None for LangGraph's fixed list)."""
    from probes.studies.atlas import releases, sweep

    if bug.fw == LANGGRAPH:
        return None
    try:
        found = sweep.candidates(bug.releases(), bug.since, releases.key)
    except KeyError:
        return None
    return found[0] if found else None


def _listed(bug: Bug) -> list[str] | None:
    """The releases a swept row chooses among (its pre-releases included); None for LangGraph's fixed list."""
    if bug.fw == LANGGRAPH:
        return None
    try:
        return bug.releases()
    except KeyError:
        return None


def summary_rows(receipts: Iterable[Receipt], fw: str = LANGGRAPH) -> list[dict[str, Any]]:
    """The atlas table: one row per behaviour, one column per release, plus fixed-in / last present."""
    releases, rows = grid(receipts, fw)
    out = []
    for bug in of(fw):
        if bug.ref not in rows:
            continue
        per = rows[bug.ref]
        row: dict[str, Any] = {"ref": f"#{bug.ref}", "property": bug.prop, "behaviour": bug.title,
                               "cite": bug.cite}
        ordered = []
        for release in releases:
            slot = per.get(release)
            if slot is None:
                row[release] = ""
                continue
            ordered.append((release, slot["status"]))
            row[release] = _cell_text(slot)
        fixed, last = fixed_in(ordered)
        row["fixed in"] = fixed or "—"
        row["last present"] = last or "—"
        listed = _listed(bug)
        row["first bad"] = boundary(bug.framework.dist, ordered, first_bad(ordered), _oldest_candidate(bug), listed)
        row["first fixed"] = boundary(bug.framework.dist, ordered, fixed, listed=listed)
        row["never reproduced"] = bool(ordered) and not any(s == PRESENT for _r, s in ordered)
        out.append(row)
    return out


def _cell_text(slot: dict[str, Any]) -> str:
    s = slot["status"]
    backends = slot["backends"]
    text = f"{SYMBOL[s]} {s}"
    if len(backends) > 1 and len(set(backends.values())) > 1:
        text += " (" + ", ".join(f"{b}: {backends[b]}" for b in sorted(backends)) + ")"
    return text


def markdown(receipts: list[Receipt], fw: str = LANGGRAPH) -> str:
    """The table as Markdown, every cell linked to its receipt(s)."""
    releases, rows = grid(receipts, fw)
    table = summary_rows(receipts, fw)
    ends = ["fixed in", "last present"] if fw == LANGGRAPH else ["first bad", "first fixed"]
    head = ["behaviour", *releases, *ends]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in table:
        ref = row["ref"].lstrip("#")
        bug = next(b for b in of(fw) if b.ref == ref)
        parts = [f"[{bug.cite}]({bug.url}) {bug.prop}: {bug.title}"]
        for release in releases:
            slot = rows[ref].get(release)
            if slot is None:
                parts.append("")
                continue
            links = " ".join(f"[{b}]({u})" for b, u in sorted(slot["receipts"].items()))
            parts.append(f"{_cell_text(slot)} {links}")
        parts += [row[k] for k in ends]
        lines.append("| " + " | ".join(parts) + " |")
    return "\n".join(lines)


def figure(receipts: list[Receipt], link_prefix: str = "../", fw: str = LANGGRAPH) -> Any:
    """Bug x release grid of ``fw``: colour = status, marker = symbol; in the SVG each cell links to
    its receipt (``<link_prefix>receipts/atlas/<probe>.json``: from the book's ``figures/``)."""
    from probes.studies.atlas.frameworks import framework

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    releases, rows = grid(receipts, fw)
    bugs: list[Bug] = [b for b in of(fw) if b.ref in rows]
    rotate = len(releases) > 8
    fig, ax = plt.subplots(figsize=(2.2 + 0.9 * len(releases), 1.2 + 0.42 * len(bugs) + (1.0 if rotate else 0)))
    for y, bug in enumerate(bugs):
        for x, release in enumerate(releases):
            slot = rows[bug.ref].get(release)
            if slot is None:
                continue
            s = slot["status"]
            rect = plt.Rectangle((x - 0.45, y - 0.4), 0.9, 0.8, color=COLOUR[s], lw=0)
            rect.set_url(link_prefix + slot["receipts"][sorted(slot["receipts"])[0]])
            ax.add_patch(rect)
            mixed = len(set(slot["backends"].values())) > 1
            ax.text(x, y, SYMBOL[s] + ("*" if mixed else ""), ha="center", va="center", fontsize=9)
    ax.set_xlim(-0.5, len(releases) - 0.5)
    ax.set_ylim(len(bugs) - 0.5, -0.5)
    ax.set_xticks(range(len(releases)), releases, rotation=60 if rotate else 0)
    ax.tick_params(labeltop=True)
    ax.set_yticks(range(len(bugs)), [f"#{b.ref} {b.prop}" for b in bugs])
    ax.set_xlabel(f"{framework(fw).title} release ({framework(fw).dist})")
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.legend(handles=[Patch(color=COLOUR[s], label=f"{SYMBOL[s]} {s}") for s in (PRESENT, ABSENT, NOT_REPRODUCED, NA)],
              loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, fontsize=8)
    fig.tight_layout()
    return fig


def caption(receipts: list[Receipt], fw: str = LANGGRAPH) -> str:
    """The caption, with the figure's own counts (newest release, fixed, never reproduced)."""
    from probes.studies.atlas.frameworks import framework

    releases, _rows = grid(receipts, fw)
    rows = summary_rows(receipts, fw)
    newest = releases[-1] if releases else "?"
    open_now = [r["ref"] for r in rows if str(r.get(newest, "")).startswith(SYMBOL[PRESENT])]
    fixed = [f"{r['ref']} in {r['fixed in']}" for r in rows if r["fixed in"] != "—"]
    never = [r["ref"] for r in rows if r["never reproduced"]]
    return (f"Regression atlas: {len(rows)} reported {framework(fw).title} resume behaviours (rows) on {len(releases)} releases "
            f"(columns). {SYMBOL[PRESENT]} red = present, {SYMBOL[ABSENT]} green = absent, {SYMBOL[NOT_REPRODUCED]} "
            f"yellow = could not reproduce, {SYMBOL[NA]} grey = feature missing; * = backends disagree. "
            f"Present on the newest ({newest}): {len(open_now)}; fixed within the measured range: "
            f"{', '.join(fixed) or 'none'}; never reproduced: {len(never)}. Click a cell (SVG) for its receipt.")


def figure_name(fw: str = LANGGRAPH) -> str:
    return "atlas-grid" if fw == LANGGRAPH else f"atlas-grid-{fw}"


def show_figure(receipts: list[Receipt], params: Any, fw: str = LANGGRAPH) -> Any:
    """``fw``'s atlas figure, saved and shown as a numbered figure (``probes.figures.save_figure``)."""
    from probes.figures import save_figure

    return save_figure(figure(receipts, fw=fw), figure_name(fw), caption(receipts, fw), dict(params))


# --- the chapter's report calls: one per table or statement (the notebook only calls these) ---------

def status_line(receipts: list[Receipt]) -> str:
    """How many cells ran, how many harness errors, and what each release's environment installed."""
    errors = sum(len(r.harness_errors) for r in receipts)
    installed = sorted({(r.observations.get("release"), tuple(sorted((r.observations.get("versions") or {}).items())))
                        for r in receipts if r.observations.get("versions")})
    return (f"**{len(receipts)} cells, {errors} harness errors.** Installed per release: "
            + "; ".join(f"`{rel}`: " + ", ".join(f"{k} {v}" for k, v in pkgs if v) for rel, pkgs in installed))


def newest_release(receipts: list[Receipt]) -> str | None:
    """LangGraph's newest measured release (None when only other frameworks' rows ran)."""
    measured = grid(receipts)[0]
    return measured[-1] if measured else None


def fixes(receipts: list[Receipt]) -> list[dict[str, Any]]:
    """Per LangGraph behaviour: fixed in, last present, its cell on the newest release, never reproduced."""
    newest = newest_release(receipts)
    return [{"behaviour": r["ref"], "property": r["property"], "fixed in": r["fixed in"],
             "last present": r["last present"], "on the newest release": r.get(newest, "") if newest else "",
             "never reproduced": r["never reproduced"]} for r in summary_rows(receipts)]


def _never(receipts: list[Receipt]) -> list[str]:
    return [r["ref"] for r in summary_rows(receipts) if r["never reproduced"]]


def open_and_never(receipts: list[Receipt]) -> str:
    """Which behaviours are present on the newest release, and which no release reproduced."""
    newest = newest_release(receipts)
    open_now = [r["ref"] for r in summary_rows(receipts)
                if newest and r.get(newest, "").startswith(SYMBOL[PRESENT])]
    return (f"Present on the newest measured release ({newest}): {', '.join(open_now) or 'none'}. "
            f"Not reproduced on any measured release: {', '.join(_never(receipts)) or 'none'}.")


def never_tried(receipts: list[Receipt]) -> str:
    """For each behaviour no release reproduced: what its cell drove and saw on the newest release."""
    newest = newest_release(receipts)
    on_newest = {c["ref"]: c for c in cells(receipts) if c["release"] == newest}
    lines = [f"* **{ref}** ({c['backend']}): {c['summary']} ([receipt]({c['receipt']}))"
             for ref in _never(receipts) if (c := on_newest.get(ref.lstrip("#")))]
    return "\n".join(lines) or "Every behaviour was reproduced on some measured release."


def observed(receipts: list[Receipt]) -> list[dict[str, Any]]:
    """What each LangGraph cell observed, per release and backend."""
    keep = ("ref", "release", "backend", "status", "label", "summary", "receipt")
    return [{k: c[k] for k in keep} for c in cells(receipts)]


def cost(receipts: list[Receipt]) -> list[dict[str, Any]]:
    """Seconds per LangGraph release (the other frameworks' sweeps in one row): the cells' own time and
    the probes' (environment creation included), then the total."""
    per: dict[str, dict[str, Any]] = {}
    for r in receipts:
        release = r.observations.get("release") or "the other frameworks' sweeps"
        row = per.setdefault(release, {"release": release, "cells": 0, "cell_s": 0.0, "probe_s": 0.0})
        row["cells"] += 1
        row["cell_s"] = round(row["cell_s"] + (r.metrics.get("cell_seconds") or 0.0), 1)
        row["probe_s"] = round(row["probe_s"] + (r.manifest.get("probe_seconds") or 0.0), 1)
    rows = sorted(per.values(), key=lambda row: release_key(str(row["release"])))
    total = {"release": "total", "cells": sum(r["cells"] for r in rows),
             "cell_s": round(sum(r["cell_s"] for r in rows), 1), "probe_s": round(sum(r["probe_s"] for r in rows), 1)}
    return rows + [total] if rows else rows


def sweeps(receipts: list[Receipt]) -> list[dict[str, Any]]:
    """Every framework's rows: first bad and first fixed release of each reported behaviour."""
    return [{"framework": fw, "bug": row["cite"], "property": row["property"], "behaviour": row["behaviour"],
             "first bad": row["first bad"], "first fixed": row["first fixed"],
             "never reproduced": row["never reproduced"]}
            for fw in frameworks(receipts) for row in summary_rows(receipts, fw)]


def other_frameworks(receipts: list[Receipt]) -> list[str]:
    return [fw for fw in frameworks(receipts) if fw != LANGGRAPH]


def framework_heading(fw: str) -> str:
    from probes.studies.atlas.frameworks import FRAMEWORKS

    return f"### {FRAMEWORKS[fw].title} (`{FRAMEWORKS[fw].dist}`)"
