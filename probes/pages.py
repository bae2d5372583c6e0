"""The book's generated pages, as MyST markdown with HTML tables (receipts only).

``probes.book`` stages the runs and writes these files; everything a reader sees on a
generated page is decided here:

* ``provenance_banner(run)`` -- the line every chapter (and the headline page) opens
  with: measured on this machine or taken from the reference run, when, how long,
  which commit, clean or not, Python, platform; the parameters of a variant;
* ``headline_page()`` -- every published number beside the reference run and this
  machine, with a status computed by ``probes.headline`` (it cannot overclaim);
* ``matrix_page(cells)`` -- the framework × property matrix and every measured path,
  repetitions and backends collapsed into one entry with a count and a link to each
  receipt;
* ``report_page(results_root)`` -- the reproduction report: per campaign, this
  machine's run against the reference run (verdict views identical, or the changed
  cells with both labels and receipt links), per headline published / reference /
  this machine, and variant runs reported as variants;
* ``timing_page(figures_dir)`` -- where the time goes: per campaign and probe family,
  of the runs the book shows, against the time budget of the default run;
* ``cite_page(figures_dir)`` -- how to cite the artifact, the paper and one figure;
* ``tidy_chapter(nb)`` -- an executed chapter made readable: code hidden behind a
  toggle, the raw parameters cells removed (the parameters box replaces them), kernel
  warnings dropped.

HTML inside MyST must not contain blank lines (a blank line ends an HTML block), so
every table here is one block.
"""

from __future__ import annotations

import functools
import html
import json
import re
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Mapping

from probes import campaigns, cite, schedules
from probes.chapter import format_value, label_counts
from probes.core.atomic import atomic_write_json
from probes.core.receipt import VIEW_NAME
from probes.core.runs import (RunInfo, campaign_fingerprint, latest_local, local_runs, newer_unfinished,
                              reference_run, shown_run)
from probes.headline import (BEHAVIOUR, CONTRADICTED, DIFFERS, DISAGREE, MAGNITUDES, NOT_COMPARABLE, NOT_MEASURED,
                             NOT_RUN, PARTIAL, REIMPLEMENTATION, REPRODUCED, STATUS_CLASS, STATUS_TEXT, UNSOURCED,
                             VARIANT, cite as cite_sources,
                             HeadlineRow, load_published, measure_directory, _row)

PAGE_HEAD = "---\nhtml_theme.sidebar_secondary.remove: true\n---\n"
REPOSITORY_URL = ""  # no public repository is recorded in this checkout; CITATION.cff holds it once published


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _table(head: list[str], rows: list[list[str]], cls: str = "") -> str:
    """One HTML table in a scrolling box; cells are HTML already. No blank lines."""
    thead = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (f'<div class="rc-table-wrap"><table class="rc-table {cls}"><thead><tr>{thead}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _oneline(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text)


# --- provenance -------------------------------------------------------------------------

def provenance_banner(run: RunInfo, crate_link: str | None = None) -> str:
    """The line a chapter opens with: where its numbers came from (``RunInfo.describe``), and,
    with ``crate_link``, a link to the run's machine-readable record (its RO-Crate)."""
    campaign = campaigns.get(run.campaign)
    kind = "here" if run.source == "this machine" else "reference"
    lines = [f'<div class="rc-provenance rc-provenance-{kind}"><strong>Provenance.</strong> {_e(run.describe())}.']
    if run.profile != "default":
        changed = ", ".join(f"<code>{_e(k)}={_e(repr(v))}</code>"
                            for k, v in campaign.changed_params(run.params).items())
        lines.append(f" This is a <strong>{_e(run.profile)}</strong> run, not the paper's parameters ({changed}); "
                     "compare it with the default run on the reproduction report, not with the paper.")
    if run.harness_errors:
        lines.append(f" <strong>{run.harness_errors} harness error(s)</strong>: some probes could not be measured; "
                     "their cells are missing, not verdicts.")
    if crate_link:
        lines.append(f' Machine-readable provenance (commit, parameters, package versions, machine, receipts, '
                     f'figures): <a class="rc-crate" href="{_e(crate_link)}">RO-Crate</a> '
                     f'(<code>ro-crate-metadata.json</code>, Workflow Run Crate profile).')
    stale = stale_reason(run)
    if stale:
        lines.append(f" <strong>Measured by other code:</strong> {_e(stale)}.")
    pending = newer_unfinished(run.campaign, run)
    if pending:
        lines.append(" Newer runs on this machine that did not finish, not shown: " + _e("; ".join(pending)) + ".")
    lines.append("</div>")
    return "".join(lines)


def stale_reason(run: RunInfo) -> str:
    """Why a reference run no longer matches this checkout (its fingerprint against the one its
    parameters give now: sources, package versions or the runs it reads changed), or "" if it does.
    Its numbers stand as measured at its commit; the reader is told they are not this code's."""
    if not run.is_reference or not run.fingerprint:
        return ""
    current = campaign_fingerprint(campaigns.get(run.campaign), run.params)
    if current == run.fingerprint:
        return ""
    return (f"this reference's fingerprint is {run.fingerprint}, the current code's and versions' is {current}; "
            f"./reproduce.sh --only {run.campaign} measures it again")


def _sources_line(runs: Mapping[str, RunInfo | None]) -> str:
    here = sorted(n for n, r in runs.items() if r is not None and not r.is_reference)
    ref = sorted(n for n, r in runs.items() if r is not None and r.is_reference)
    commits = sorted({(r.provenance.get("commit") or "?")[:12] for r in runs.values() if r is not None and r.is_reference})
    dates = sorted({r.provenance.get("date") or "?" for r in runs.values() if r is not None and r.is_reference})
    parts = []
    if ref:
        parts.append(f"{len(ref)} campaign(s) taken from the reference run (commit(s) {', '.join(commits)}, "
                     f"measured {', '.join(dates)})")
    if here:
        parts.append(f"{len(here)} measured on this machine ({', '.join(here)})")
    missing = sorted(n for n, r in runs.items() if r is None)
    if missing:
        parts.append(f"{len(missing)} without results ({', '.join(missing)})")
    return ('<div class="rc-provenance"><strong>Provenance.</strong> ' + _e("; ".join(parts) or "no results yet")
            + ". Each chapter's first line gives its run's date, duration, commit, Python and platform.</div>")


# --- headline page -------------------------------------------------------------------------

def _variant_of(run: RunInfo | None) -> str:
    if run is None or run.profile == "default":
        return ""
    changed = campaigns.get(run.campaign).changed_params(run.params)
    return ", ".join(f"{k}={v!r}" for k, v in changed.items()) or run.profile


def headline_rows_by_source() -> tuple[list[dict[str, Any]], dict[str, RunInfo | None]]:
    """For every published headline: the row against the reference run, against this
    machine's newest default run (if any), and the run the book shows."""
    entries = load_published()
    names = sorted({e["campaign"] for e in entries})
    available = set(campaigns.available())
    ref = {n: reference_run(n) if n in available else None for n in names}
    here = {n: latest_local(n, profile="default") if n in available else None for n in names}
    shown = {n: shown_run(n) if n in available else None for n in names}
    cache: dict[tuple[str, str], Any] = {}

    def measured(name: str, run: RunInfo | None) -> Any:
        key = (name, str(run.directory) if run else "")
        if key not in cache:
            cache[key] = measure_directory(name, run.directory if run else None)
        return cache[key]

    out = []
    for e in entries:
        n = e["campaign"]
        out.append({
            "entry": e,
            "reference": _row(e, measured(n, ref[n])),
            "here": _row(e, measured(n, here[n])) if here[n] else None,
            "shown": shown[n], "reference_run": ref[n], "here_run": here[n],
        })
    return out, shown


def _status_html(row: HeadlineRow, where: str) -> str:
    return (f'<span class="rc-status rc-status-{row.status_class}">{_e(STATUS_TEXT[row.status])}</span>'
            f'<br><span class="rc-where">{_e(where)}</span>')


def _sources_html(sources: list[Any]) -> str:
    """``paper-summary.txt line 33`` links whose title is the quoted words of that line."""
    if not sources:
        return '<span class="rc-unsourced">no source line</span>'
    return ", ".join(f'<span class="rc-source" title="{_e(s["quote"])}">{_e(cite_sources([s]))}</span>' for s in sources)


def _published_html(entry: Mapping[str, Any], row: HeadlineRow) -> str:
    """The published values with the lines they were read from; every reading when the sources disagree,
    each with the status of the measurement against it; unsourced keys marked."""
    unsourced = entry.get("unsourced") or {}

    def values(published: Mapping[str, Any]) -> str:
        shown = format_value({k: v for k, v in published.items() if k not in unsourced})
        marked = "".join(f'<br><code>{_e(k)}</code>: {format_value(published[k])} '
                         f'<span class="rc-unsourced" title="{_e(unsourced[k])}">(no source; not compared)</span>'
                         for k in published if k in unsourced)
        return shown + marked

    if not row.readings:
        return (values(entry["published"])
                + f'<br><span class="rc-where">source: {_sources_html(entry.get("sources", []))}</span>')
    parts = []
    for rd in row.readings:
        parts.append(f'<div class="rc-reading"><strong>{_e(rd.name)}</strong> '
                     f'<span class="rc-status rc-status-{STATUS_CLASS[rd.status]}">'
                     f'{_e(STATUS_TEXT[rd.status])}</span><br>{values(rd.published)}'
                     f'<br><span class="rc-where">source: {_sources_html(rd.sources)}</span></div>')
    return "".join(parts)


def _receipts_html(row: HeadlineRow, run: RunInfo | None, results_root: Path | None, limit: int = 6) -> str:
    """Links to the receipts of the run the row was measured on (staged into the book)."""
    if run is None:
        return ""
    links = [f'<a href="{_stage(run, Path(p).stem, results_root)}" title="{_e(Path(p).stem)}">{i}</a>'
             for i, p in enumerate(row.receipts[:limit], 1)]
    more = f" (+{len(row.receipts) - limit} in the chapter)" if len(row.receipts) > limit else ""
    return ("receipts: " + " ".join(links) + more) if links else ""


def headline_page(results_root: Path | None = None) -> str:
    """The headline page: published / reference run / this machine, and a computed status."""
    rows, shown = headline_rows_by_source()
    counted = [r["here"] or r["reference"] for r in rows]
    counts = {s: sum(1 for r in counted if r.status == s) for s in STATUS_TEXT}
    summary = ", ".join(f"{n} {STATUS_TEXT[s].split(' ', 1)[1]}" for s, n in counts.items() if n)
    out = [PAGE_HEAD, "# Headline numbers", "", _sources_line(shown), "",
           "Every headline number of the paper beside the value this project measured: in the committed "
           "**reference run** and, once you have run `./reproduce.sh`, on **this machine**. Published values come "
           "from one reference file, `data/published.json`, and are never used as results. The status compares "
           "*every* published value (this machine's default run where there is one, else the reference run):",
           "",
           f"- **{STATUS_TEXT[REPRODUCED]}** — every published value is measured and matches: numbers by their "
           "relative difference |here − published| / |published| within the campaign's stated tolerance (the "
           "explanation gives it and the largest difference), a published 0 only by a measured 0, and a race's "
           "reps per outcome (the published value is itself one sample of reps) when Fisher's exact test cannot "
           "tell the two samples apart (p ≥ 0.05, given in the explanation);",
           f"- **{STATUS_TEXT[MAGNITUDES]}** — the published verdict (a result, a label, a count of violations) "
           "matches, some magnitude (state counts, depths, latencies, sample sizes) does not; the explanation "
           "names each one with both values;",
           f"- **{STATUS_TEXT[BEHAVIOUR]}** — what the framework did (counts, yes/no, results) is what the paper "
           "reports, and only the conformance labels (✓ ✗ D U) differ;",
           f"- **{STATUS_TEXT[NOT_COMPARABLE]}** — the verdict matches, but the published counts were made under "
           "conditions (constants, a state-space reduction) that the run's receipts show it did not share, or that "
           "the source does not state: the counts are shown, not compared;",
           f"- **{STATUS_TEXT[PARTIAL]}** — what is measured matches, some published value is not measured by "
           "this campaign;",
           f"- **{STATUS_TEXT[DIFFERS]}** — a verdict differs (or, for a purely numeric claim, a number does);",
           f"- **{STATUS_TEXT[CONTRADICTED]}** — the published value may match, but this project's own receipts "
           "show behaviour that contradicts the published claim;",
           f"- **{STATUS_TEXT[REIMPLEMENTATION]}** — the paper measured one build (REMIT: `remit-contract` 0.1.2) "
           "and the receipts record another (this project's `remit_ref`): the comparison is given, but it is not "
           "a reproduction of the paper's build;",
           f"- **{STATUS_TEXT[DISAGREE]}** — two source lines give different values; each reading is shown in the "
           "published column with the status of the measurement against it;",
           f"- **{STATUS_TEXT[UNSOURCED]}** — no source line gives the value: shown, never scored (a key without "
           "a source inside an entry is marked the same way);",
           f"- **{STATUS_TEXT[NOT_MEASURED]}** — the campaign ran, and none of its protocols measures this (the "
           f"reason is computed from its receipts); **{STATUS_TEXT[NOT_RUN]}** — no results, and why; "
           f"**{STATUS_TEXT[VARIANT]}** — other parameters.",
           "",
           "Every published value names the line it was read from (`../shared/paper-summary.txt`, "
           "`../shared/CAMPAIGNS.md` or `../shared/CONTRACT.md`; hover a source for the quoted words).",
           "",
           f"**{summary}** (of {len(rows)}).", ""]
    head = ["headline", "status, and why (computed from the values)", "published", "reference run", "this machine"]
    body = []
    for r in rows:
        e, ref, here = r["entry"], r["reference"], r["here"]
        main = here or ref
        where = "this machine's default run" if here else "reference run"
        anchor = f'<span id="h-{_e(e["id"])}"></span>'
        why = _e(main.explanation)
        if main.why and main.status not in (NOT_RUN, NOT_MEASURED, REPRODUCED):  # a note explains a difference
            why += f'<br><span class="rc-note">Campaign note: {_e(_short(main.why, 600))}</span>'
        links = _receipts_html(main, r["here_run"] if here else r["reference_run"], results_root)
        if links:
            why += f"<br>{links}"
        body.append([
            f'{anchor}<code>{_e(e["id"])}</code><br>{_e(e["what"])}',
            f"{_status_html(main, where)}<br>{why}",
            _published_html(e, main),
            format_value(ref.measured) if ref.measured is not None else f"<em>{_e(ref.why)}</em>",
            (format_value(here.measured) if here and here.measured is not None
             else "<em>not measured on this machine yet</em>"),
        ])
    out.append(_table(head, body, "rc-headline"))
    variants = _variant_sections()
    if variants:
        out += ["", "## Variant runs on this machine", "",
                "Runs with other parameters than the paper's, reported as variants with their parameters and never "
                "scored against the paper; the reproduction report compares them with this project's default run.",
                ""] + variants
    return "\n".join(out) + "\n"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _variant_sections() -> list[str]:
    out = []
    for name in campaigns.available():
        for run in local_runs(name):
            if run.profile == "default":
                continue
            out.append(f"- **{_e(name)}**, {_e(run.profile)} run `{_e(run.run_id)}`: {_e(_variant_of(run))} "
                       f"({_e(run.describe())})")
    return out


# --- matrix page ----------------------------------------------------------------------------

MATRIX_FIGURE = "conformance-matrix"


def matrix_figure(cells: list[Any], figures_dir: Path, page_link: str = "", files_prefix: str = "../figures/") -> str:
    """The matrix as Figure 1 (``probes.matrix_figure``), saved beside the book's figures with its
    sidecar, as HTML; ``page_link`` is the matrix page as seen from where the figure is shown."""
    from probes import matrix_figure as mf
    from probes.core.manifest import project_commit
    from probes.figures import figure_html, save_figure
    from probes.matrix import COLUMNS, grid

    rows = grid(cells)
    caption = mf.caption(rows)
    params = {"frameworks": len(rows), "properties": len(COLUMNS)}
    files = save_figure(mf.figure(rows, COLUMNS, page_link), MATRIX_FIGURE, caption, params,
                        directory=figures_dir)
    import matplotlib.pyplot as plt

    plt.close("all")
    sidecar = Path(figures_dir) / f"{MATRIX_FIGURE}.json"
    atomic_write_json(sidecar, {**json.loads(sidecar.read_text()), "number": 1, "campaign": "matrix",
                                "commit": project_commit(), "regenerate": "./reproduce.sh --book-only"})
    return figure_html(MATRIX_FIGURE, 1, caption, params, Path(files["png"]).read_bytes(),
                       svg=Path(files["svg"]).read_text(), files_prefix=files_prefix)


def protocol_table(cells: list[Any]) -> list[str]:
    """The kit's protocols (rows) on each framework (columns), a heading and a table: the worst label
    over every verdict a protocol gave on a framework (its variants, backends and properties); its
    title lists each label with its number of paths, or an n/a's reason."""
    from probes.core.checker import Label
    from probes.matrix import protocol_grid, race_bound, summarise, worst

    rows = protocol_grid(cells)
    if not rows:
        return []
    frameworks = sorted({f for by in rows.values() for f in by})
    body = []
    for protocol, by in rows.items():
        line = [f"<code>{_e(protocol)}</code>"]
        for f in frameworks:
            got = by.get(f, [])
            if not got:
                line.append('<span title="not run on this framework">–</span>')
                continue
            measured = [c for c in got if c.label is not Label.NA]
            title = summarise(measured) if measured else _short(got[0].summary, 300)
            # a ✓ or ? that rests on races states its largest bound (``race < 9.9 %``), as the matrix does
            text = " ".join(filter(None, (worst(c.label for c in measured).value, race_bound(measured)))) \
                if measured else Label.NA.value
            line.append(f'<a href="#m-{_slug(f)}" title="{_e(title)}">{_e(text)}</a>')
        body.append(line)
    return ["", "## By protocol", "",
            "Each protocol of the kit (rows) on each framework it runs on (columns): the worst label over every "
            "verdict the protocol gave there, over its workflow variants, backends and properties (hover: each "
            "label with its number of paths, or why the protocol does not apply); – where the framework's "
            "campaign did not run it. Protocols a framework's package registers for itself are in its chapter.",
            "", _table(["protocol"] + [_e(f) for f in frameworks], body, "rc-protocols")]


def matrix_page(cells: list[Any], link_prefix: str = "../", figures_dir: Path | None = None) -> str:
    """The conformance matrix (a figure, then the count table), then every measured path grouped
    by framework, property and label: a path measured on several backends or repetitions is one
    entry with its count and a link to each receipt (title: what was observed)."""
    from probes.core.checker import Label, Property
    from probes.matrix import COLUMNS, citation, grid, not_live, summarise
    from probes.matrix_figure import anchor as cell_anchor

    out = [PAGE_HEAD, "# Conformance matrix", "",
           "Generated from the receipts of the run each chapter shows (the `verdicts.json` view of each campaign). "
           "Labels: ✓ conforms on every tested path; ✗ violates it and the framework's documentation claims the "
           "property; D documented deviation; U violates it and no documentation addresses it (a ✗ with no "
           "documented excuse); ? a race still undecided when its budget of trials or seconds was spent (no violation "
           "seen, but the Wilson 95 % upper bound of its per-trial violation rate above the threshold; never a ✓); "
           "a ✓ that rests on races states the largest such bound (`✓ race < 9.9 %`); n/a no operation the property "
           "speaks about. A cell whose paths disagree shows each "
           "label with its number of paths, worst first (`U×3 · ✓×2`). Tampered-state probes and REMIT without "
           "its effect ledger have rows of their own. The columns are the six properties, fork intent (FI) and "
           "liveness (LV) of [the contract](../contract.md), and visibility order (VO, beyond the paper: an effect "
           "seen before the durable record that caused it, a write by a superseded owner, a read of a superseded "
           "branch), read off every recorded history but a race's.", ""]
    missing = list(getattr(cells, "missing", []))
    if missing:  # a campaign without a complete run is named, never silently absent
        out += ["**Not in the matrix:** " + "; ".join(_e(m) for m in missing), ""]
    if not cells:
        return "\n".join(out) + "*No receipts yet.*\n"
    rows = grid(cells)
    if figures_dir is not None:
        out += [matrix_figure(cells, figures_dir), ""]
    head = ["framework"] + [p.value for p in COLUMNS]
    body = []
    for framework, props in rows.items():
        anchor = _slug(framework)
        body.append([f'<a href="#m-{anchor}">{_e(framework)}</a>']
                    + [_e(summarise(props.get(p, []))) for p in COLUMNS])
    out.append(_table(head, body, "rc-matrix"))
    out += protocol_table(cells)
    out += ["", "## Every path, with its receipts", "",
            "One line per framework and property; each label's paths fold behind their count. Each path is "
            "listed once with how many receipts measured it (`×6`: e.g. 2 backends × 3 repetitions); the numbers "
            "after it link to each receipt, and hovering shows what was observed.", ""]
    body = []
    cited: dict[str, int] = {}
    unlive = not_live(cells)  # an EO ✓ path whose run did not complete shows its LV label beside it
    for framework, props in rows.items():
        first = True
        for p in COLUMNS:
            got = props.get(p, [])
            if not got:
                continue
            by_label: dict[str, list[Any]] = defaultdict(list)
            for c in got:
                by_label[c.label.value].append(c)
            blocks, counts = [], {}
            for label in sorted(by_label, key=_severity):
                paths: dict[str, list[Any]] = defaultdict(list)
                for c in sorted(by_label[label], key=lambda c: (c.path, c.backend, c.receipt)):
                    paths[c.path].append(c)
                counts[label] = len(paths)
                chips = []
                for path, cs in paths.items():
                    links = " ".join(f'<a href="{link_prefix}{_e(c.receipt)}" title="{_e(c.backend)}: '
                                     f'{_e(_short(c.summary, 300))}">{i}</a>' for i, c in enumerate(cs, 1))
                    backends = sorted({c.backend for c in cs})
                    count = f" ×{len(cs)}" if len(cs) > 1 else ""
                    bounds = sorted({c.bound for c in cs if c.bound})  # a race: its trials and bound
                    stated = f' <span class="rc-bound">({_e("; ".join(bounds))})</span>' if bounds else ""
                    beside = (f' <span class="rc-beside">LV {_e(unlive[(framework, path)].value)}</span>'
                              if p is Property.EO and label == Label.PASS.value and (framework, path) in unlive else "")
                    chips.append(f'<span class="rc-chip" title="{_e(", ".join(backends))}"><code>{_e(path)}</code>'
                                 f'{count}{stated}{beside} <span class="rc-links">{links}</span></span>')
                if len(paths) > 1:  # a list folds behind its count; the citation stays in view
                    chips = [f'<details class="rc-fold"><summary>{_e(label)}: {len(paths)} paths</summary>'
                             f'{" ".join(chips)}</details>']
                else:
                    chips = [f"<strong>{_e(label)}</strong>"] + chips
                cites = {citation(c.doc): c.doc.source or "documentation" for c in by_label[label] if c.doc}
                refs = []
                for text, source in sorted(cites.items()):  # quoted once below the table; rows carry its number
                    number = cited.setdefault(text, len(cited) + 1)
                    refs.append(f'<a href="#cite-{number}" title="{_e(text)}">[{number}] {_e(source)}</a>')
                if refs:
                    chips.append(f'<span class="rc-cite">cited: {", ".join(refs)}</span>')
                blocks.append(" ".join(chips))
            fw = (f'<span id="m-{_slug(framework)}"></span><strong>{_e(framework)}</strong>' if first else "")
            first = False
            body.append([fw, f'<span id="{cell_anchor(framework, p)}"></span>{_e(p.value)}', str(label_counts(counts)),
                         " · ".join(blocks)])
    out.append(_table(["framework", "property", "label (paths)", "paths and receipts"], body, "rc-paths"))
    if cited:
        out += ["", "## Documentation cited", "",
                "The statement behind each ✗ (the documentation claims the property) and D (it documents the "
                "deviation), with its source and the version it was read for.", ""]
        out.append(f'<details class="rc-fold"><summary>{len(cited)} statements (each ✗ and D above links to '
                   "its own)</summary>" + "".join(f'<p class="rc-cite" id="cite-{n}">[{n}] {_e(text)}</p>' for text, n in cited.items())
                   + "</details>")
    return "\n".join(out) + "\n"


def _severity(label: str) -> int:
    from probes.core.checker import WORST_FIRST

    return next((i for i, lab in enumerate(WORST_FIRST) if lab.value == label), -1)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# --- the reproduction report ----------------------------------------------------------------

def _view(run: RunInfo) -> dict[tuple[str, str, str, str, str], str]:
    try:
        data = json.loads((run.directory / VIEW_NAME).read_text())
    except (OSError, ValueError):
        return {}
    cells = {}
    for probe, entry in data.get("probes", {}).items():
        for v in entry.get("verdicts", []):
            cells[(probe, v["framework"], v["backend"], v["property"], v["path"])] = v["label"]
    return cells


def _stage(run: RunInfo, probe: str, results_root: Path | None) -> str:
    """Copy one receipt of ``run`` into the book and return its link from generated/."""
    sub = f"reference/{run.campaign}" if run.is_reference else f"runs/{run.campaign}/{run.run_id}"
    if results_root is not None:
        src = run.directory / f"{probe}.json"
        dst = Path(results_root) / sub / f"{probe}.json"
        if src.exists() and not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    return f"../{sub}/{probe}.json"


def _run_name(run: RunInfo) -> str:
    if run.is_reference:
        return "the reference run"
    return f"this machine's {run.profile} run"


def compare_views(a: RunInfo, b: RunInfo, results_root: Path | None = None, limit: int = 40) -> tuple[str, int]:
    """Verdict views of two runs: "identical (n cells)" or the changed cells, both labels
    and a link to each receipt. Compares labels only (counts do not depend on reps)."""
    va, vb = _view(a), _view(b)
    common = va.keys() & vb.keys()
    changed = sorted(k for k in common if va[k] != vb[k])
    only_a, only_b = sorted(va.keys() - vb.keys()), sorted(vb.keys() - va.keys())
    if not changed and not only_a and not only_b:
        return f"verdict view **identical** ({len(common)} verdict cells).", 0
    lines = [f"verdict view: **{len(changed)} changed cell(s)** of {len(common)} in common"
             + (f", {len(only_a)} only in {_run_name(a)}" if only_a else "")
             + (f", {len(only_b)} only in {_run_name(b)}" if only_b else "") + "."]
    rows = []
    for key in changed[:limit]:
        probe, fw, backend, prop, path = key
        rows.append([f"<code>{_e(probe)}</code>", _e(fw), _e(backend), _e(prop), f"<code>{_e(path)}</code>",
                     f'{_e(va[key])} <a href="{_stage(a, probe, results_root)}">receipt</a>',
                     f'{_e(vb[key])} <a href="{_stage(b, probe, results_root)}">receipt</a>'])
    if rows:
        lines.append(_table(["probe", "framework", "backend", "property", "path", _run_name(a), _run_name(b)], rows))
    if len(changed) > limit:
        lines.append(f"… and {len(changed) - limit} more changed cells (compare the two `verdicts.json`).")
    if only_a or only_b:
        lines.append("Probes measured in only one of the two runs: "
                     + _e(", ".join(sorted({k[0] for k in only_a + only_b})[:30])) + ".")
    return "\n".join(lines), len(changed)


def report_page(results_root: Path | None = None) -> str:
    """This machine against the reference run, per campaign and per headline number."""
    out = [PAGE_HEAD, "# Reproduction report", "",
           "What this machine measured against the committed **reference run** (`data/reference/`), campaign by "
           "campaign, and every headline number three ways: published, reference run, this machine. A run with "
           "other parameters (a *variant* or a *quick* run) is compared with like — its verdict labels against the "
           "default run's on the paths both measured, never its raw counts — and never counts as differing from "
           "the paper.", ""]
    names = campaigns.available()
    summary_rows = []
    sections = []
    for name in names:
        ref = reference_run(name)
        here = latest_local(name, profile="default")
        others = [r for r in local_runs(name) if r.profile != "default"]
        sec = [f"## {name}", ""]
        sec.append(f"- **Reference run:** {_e(ref.describe()) if ref else 'none committed'}.")
        if here:
            sec.append(f"- **This machine:** {_e(here.describe())}.")
        else:
            sec.append(f"- **This machine:** not measured yet (`./reproduce.sh --only {name}` measures it).")
        status = "not measured here"
        if ref and here:
            text, n = compare_views(ref, here, results_root)
            sec += ["", text]
            status = "identical" if n == 0 and "identical" in text else f"{n} changed"
        for v in others:
            sec.append("")
            sec.append(f"- **{_e(v.profile.capitalize())} run** `{_e(v.run_id)}` ({_e(_variant_of(v))}): "
                       f"{_e(v.describe())}.")
            base = here or ref
            if base:
                text, _ = compare_views(base, v, results_root)
                sec.append("  Against the " + ("default run on this machine" if here else "reference run")
                           + " (labels on common paths): " + _oneline(text.replace("verdict view: ", "")))
        sections += sec + [""]
        summary_rows.append([f'<a href="#{_slug(name)}">{_e(name)}</a>',
                             _e(ref.provenance.get("date", "?")) if ref else "—",
                             _e(here.provenance.get("date", "?")) if here else "—",
                             _e(status), _e(len(others))])
    out.append(_table(["campaign", "reference run", "this machine (default)", "verdict view", "variant runs"],
                      summary_rows))
    out += [""] + sections
    rows, _ = headline_rows_by_source()
    out += ["## Every headline number, three ways", ""]
    body = []
    for r in rows:
        e, ref, here = r["entry"], r["reference"], r["here"]
        body.append([f'<code>{_e(e["id"])}</code>', format_value(e["published"]),
                     f"{format_value(ref.measured)}<br>{_status_html(ref, 'reference vs paper')}",
                     (f"{format_value(here.measured)}<br>{_status_html(here, 'this machine vs paper')}" if here
                      else "<em>not measured on this machine yet</em>")])
    out.append(_table(["headline", "published", "reference run", "this machine"], body, "rc-threeway"))
    return "\n".join(out) + "\n"


# --- trace validation, beside a framework's verdicts -------------------------------------------

def _admitted_by(row: Mapping[str, Any]) -> str:
    if "outside_model" in row:
        return "outside the model"
    if "mapping_error" in row:
        return "not mapped"
    return ", ".join(row.get("explained_by") or []) or "no setting"


@functools.lru_cache(maxsize=4)
def _trace_rows(traces_receipt: Path) -> tuple[dict[str, Any], ...]:
    """The rows of the traces run's receipt (read once per book build)."""
    from probes.core.receipt import load_receipt

    if not traces_receipt.exists():
        return ()
    return tuple(load_receipt(traces_receipt).observations.get("traces", []))


def trace_section(campaign: str) -> str:
    """A framework chapter's closing section: each history its probes recorded, checked by
    TLC against ResumePlane (the traces run the book shows) -- which setting of the model
    admits it: the reference semantics, a fault switch, or none. Empty when that run
    validated no history of this campaign."""
    from probes.tla.validation import PROBE

    run = shown_run("traces")
    if run is None or campaign in ("tlc", "traces"):
        return ""
    rows = [r for r in _trace_rows(run.directory / f"{PROBE}.json") if r.get("campaign") == campaign]
    if not rows:
        return ""
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[_admitted_by(r)] += 1
    tally = "; ".join(f"{_e(k)}: {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    body = [[f"<code>{_e(r['name'].split('/', 1)[-1])}</code>",
             _e(" ".join(f"{k} {v}" for k, v in (r.get("verdicts") or {}).items()) or "—"), _e(_admitted_by(r)),
             _e(r.get("observations", "—")),
             _e(r.get("outside_model") or r.get("gap") or r.get("mapping_error") or "; ".join(r.get("notes") or [])
                or "")] for r in rows]
    return "\n".join([
        "## Against the TLA+ model", "",
        f"Each history this chapter's probes recorded, checked by TLC as a constrained behaviour of "
        f"`ResumePlane` (run `{_e(run.run_id)}` of the trace-validation chapter): which setting of the "
        f"model admits it — the reference semantics, a fault switch, or no setting (a finding about the model "
        f"or the harness). {len(rows)} histories; {tally}. A history the harness edited (tampered durable state) "
        f"is outside the model: ResumePlane has no step that edits durable state, so only the verdict layer "
        f"judges it.", "",
        _table(["history (probe / verdict path)", "verdicts on it", "admitted by", "model steps",
                "why no setting admits it / notes"], body), ""])


# --- where the time goes --------------------------------------------------------------------

PAPER_BUDGET_S = 30 * 60  # issue 29: the paper's campaigns (the default run) end to end on 2 cores


def _minutes(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds / 60:.1f} min"


def _phases(record: Mapping[str, Any]) -> str:
    """Minutes spent with campaigns side by side and with one running alone, from a schedule record."""
    slots = [s for s in record["campaigns"].values() if s.get("end_s") is not None]
    alone = sum(s["end_s"] - s["start_s"] for s in slots if s.get("alone"))
    return f"{(record['elapsed_s'] - alone) / 60:.1f} + {alone / 60:.1f} min"


def timing_page(figures_dir: Path) -> str:
    """Per campaign: wall time of the run shown and its largest probe families (from receipts); the
    default run measured end to end against the budget, every such measurement and its timeline (from
    schedule records, ``probes.schedules``); and the sums of the runs shown, one after another."""
    from probes import timing
    from probes.figures import figure_html, save_figure

    names = campaigns.available()
    runs = {n: shown_run(n) for n in names}
    times = {n: timing.campaign_time(run.directory, source=run.describe()) for n, run in runs.items() if run}
    out = [PAGE_HEAD, "# Where the time goes", "",
           "Re-measuring is the default, so the default run's wall time is what every reviewer pays. Each "
           "receipt records how long its probe took and each run its wall time; this page adds them up for "
           "the run the book shows per campaign (a probe *family* is the probe id up to its first varying "
           "part, e.g. `dose` or `crash`). Nothing here is timed by the page itself.", ""]
    rows, groups = [], {"paper": 0.0, "default": 0.0, "all": 0.0}
    mixed = set()
    for name in names:
        t, run = times.get(name), runs.get(name)
        if t is None or run is None:
            rows.append([_e(name), "—", "—", "—", "not run"])
            continue
        campaign = campaigns.get(name)
        paper = name in campaigns.REGISTRY
        groups["all"] += t.total_s
        if campaign.in_default_run:
            groups["default"] += t.total_s
        if paper:
            groups["paper"] += t.total_s
        if run.profile != "default":
            mixed.add(name)
        fams = ", ".join(f"{_e(f.family)} {f.seconds / 60:.1f}" for f in t.families[:3])
        where = f"{'this machine' if not run.is_reference else 'reference run'}, {run.profile}"
        measured_by = "default run" if campaign.in_default_run else "<code>--all</code>"
        rows.append([_e(name), _minutes(t.total_s), measured_by + (" (the paper's)" if paper else ""),
                     fams + (" (min)" if fams else ""), _e(where) + ("" if t.wall_s is not None
                                                                   else "; sum of probe times")])
    out.append(_table(["campaign", "time", "measured by", "largest families", "run shown"], rows))
    whole = schedules.newest_end_to_end()
    out += ["", "## Against the budget", "",
            "A reviewer waits for the default run end to end, not for the sum of its campaigns: with `--jobs` they "
            "run side by side, the timing-sensitive ones alone. Each `./reproduce.sh` that measures writes a "
            "schedule record (`runs/_reproduce/`: when each campaign's notebook started and ended), and "
            "`./reproduce.sh promote` keeps the newest record of the default run measured whole "
            "(`data/reference/_reproduce/`). The sums below add up the runs shown, one after another, each "
            "measured whenever it was (beside other runs or not).", ""]
    budget = []
    if whole is not None:
        source, record = whole
        budget.append([f"the default run end to end ({_e(source)}, {_e(record['started'][:16].replace('T', ' '))}, "
                       f"<code>--jobs {record['jobs']}</code> on {record['cores']} cores)",
                       _minutes(record["elapsed_s"]), _minutes(PAPER_BUDGET_S),
                       "within" if record["elapsed_s"] <= PAPER_BUDGET_S else "over"])
    else:
        budget.append(["the default run end to end", "—", _minutes(PAPER_BUDGET_S),
                       "no record yet: <code>./reproduce.sh</code> writes one"])
    budget += [["the default run's campaigns, one after another", _minutes(groups["default"]), "—", "—"],
               ["the paper's campaigns (the default run and <code>remit_cost</code>), one after another",
                _minutes(groups["paper"]), "—", "—"],
               ["everything (<code>--all</code>), one after another", _minutes(groups["all"]), "—", "—"]]
    out.append(_table(["what", "time", "budget", ""], budget))
    every = schedules.end_to_end_records()
    if every:
        out += ["", "Every record of the default run measured end to end (the timing-sensitive campaigns run alone "
                "with any `--jobs`; the rest side by side):", "",
                _table(["where", "started (UTC)", "commit", "--jobs", "cores", "end to end", "side by side, then alone"],
                       [[_e(source), _e(r["started"][:16].replace("T", " ")),
                         f"<code>{_e(r['commit'][:12])}</code>" + ("" if r.get("clean") else " (local changes)"),
                         str(r["jobs"]), str(r["cores"]), _minutes(r["elapsed_s"]), _e(_phases(r))]
                        for source, r in every])]
    if mixed:
        out += ["", f"Runs with other parameters are part of these sums: {_e(', '.join(sorted(mixed)))} "
                "(a quick or variant run is shown for them); the sums are not a default run's time."]
    from probes.core.manifest import project_commit

    number = 0
    if whole is not None:
        source, record = whole
        number += 1
        caption = (f"The default run end to end ({source}, started {record['started']}, commit "
                   f"{record['commit'][:12]}): each campaign from its notebook's start to its end, "
                   f"{record['elapsed_s'] / 60:.1f} min in all; the dashed line is the 30-minute budget.")
        params = {"jobs": record["jobs"], "cores": record["cores"]}
        files = save_figure(schedules.figure(record, PAPER_BUDGET_S), "default-run-timeline", caption, params,
                            directory=figures_dir)
        sidecar = Path(figures_dir) / "default-run-timeline.json"
        atomic_write_json(sidecar, {**json.loads(sidecar.read_text()), "number": number, "commit": project_commit(),
                                    "schedule": f"{source}: {schedules.DIRNAME}/{record['file']}",
                                    "regenerate": "./reproduce.sh --book-only"})
        out += ["", figure_html("default-run-timeline", number, caption, params, Path(files["png"]).read_bytes())]
    shown = [times[n] for n in names if n in times]
    if shown:
        number += 1
        fig = timing.figure(shown)
        caption = "Wall time per campaign of the runs the book shows, split by probe family (largest three)."
        files = save_figure(fig, "where-the-time-goes", caption, {"campaigns": len(shown)}, directory=figures_dir)
        sidecar = Path(figures_dir) / "where-the-time-goes.json"
        atomic_write_json(sidecar, {**json.loads(sidecar.read_text()), "number": number, "commit": project_commit(),
                                    "runs": {n: runs[n].run_id for n in names if n in times},
                                    "regenerate": "./reproduce.sh --book-only"})
        out += ["", figure_html("where-the-time-goes", number, caption, {"campaigns": len(shown)},
                                Path(files["png"]).read_bytes())]
    return "\n".join(out) + "\n"


# --- cite page -------------------------------------------------------------------------------

def figure_index(figures_dir: Path) -> list[dict[str, Any]]:
    """Every figure the book shows, from the sidecars staged with it."""
    out = []
    for path in sorted(Path(figures_dir).glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if "name" in data:
            out.append(data)
    return out


def remit_releases_fragment() -> str:
    """The REMIT API page's statement of the LangGraph releases REMIT is tested on (from the pins:
    ``probes.studies.remit.releases``, where the newer release is named once)."""
    from probes.studies.remit.releases import tested_on

    return (f"{tested_on()} The newer release runs REMIT's own tests in a side environment "
            f"(`tests/test_remit_newer_langgraph.py`).\n")


def cite_page(figures_dir: Path | None = None, commit: str = "") -> str:
    from probes.core.manifest import project_commit

    meta = cite.load_cff()
    commit = commit or project_commit()
    url = meta.get("repository-code") or REPOSITORY_URL
    out = [PAGE_HEAD, "# How to cite", "",
           "Cite the **paper** for the contract and its published results, and this **artifact** for every "
           "regenerated verdict, number or figure — naming the commit you used (every receipt's manifest and every "
           "figure's JSON sidecar records the commit it was produced from).", "",
           "## The artifact", "",
           "```bibtex", cite.artifact_bibtex(meta, commit), "```", "",
           "`CITATION.cff` at the repository root holds the same metadata (GitHub reads it) and `.zenodo.json` the "
           "same for Zenodo's archive, derived from it (`python -m probes.cite`)."
           + ("" if url else " It records no repository URL yet: this checkout has no public remote."), "",
           "## The paper", "",
           "```bibtex", cite.paper_bibtex(meta), "```", "",
           "## One figure", "",
           "Every figure is numbered within its chapter and has a stable anchor and file name. Cite it by chapter, "
           "number, anchor and commit, e.g.:", "",
           "> *Resume Means Resume — reproduction artifact*, chapter `langgraph`, Figure 1 "
           f"(`chapters/langgraph.html#fig-langgraph-verdicts`), commit `{commit[:12]}`; "
           "data: `figures/langgraph-verdicts.json`.", "",
           "The figure's JSON sidecar records its caption, the parameters it was drawn with, the run and commit it "
           "came from, and the one command that regenerates it.", ""]
    figs = figure_index(figures_dir) if figures_dir else []
    if figs:
        out += ["## Every figure in this book", ""]
        rows = []
        for f in sorted(figs, key=lambda f: (f.get("campaign", ""), f.get("number", 0), f["name"])):
            chapter = f.get("campaign") or f["name"].split("-")[0]
            anchor = f"../chapters/{chapter}.html#{f.get('label', 'fig-' + f['name'])}"
            rows.append([f'<a href="{_e(anchor)}">{_e(chapter)}, Figure {_e(f.get("number", "?"))}</a>',
                         f"<code>#{_e(f.get('label', ''))}</code>", _e(_short(f.get("caption", ""), 220)),
                         " · ".join(f'<a href="../figures/{_e(f["name"])}.{x}">{x.upper()}</a>'
                                    for x in ("png", "svg", "json")),
                         f"<code>{_e((f.get('commit') or '?')[:12])}</code>"])
        out.append(_table(["figure", "anchor", "caption", "files", "commit"], rows))
    return "\n".join(out) + "\n"


# --- chapters -----------------------------------------------------------------------------------

_NOISE = re.compile(r"(Warning:|warnings\.warn|XDG_RUNTIME_DIR)")


def tidy_chapter(nb: dict[str, Any]) -> dict[str, Any]:
    """An executed chapter as a reader should see it.

    The page drops the in-page contents column (chapters are mostly tables). Code
    cells get ``hide-input`` (the source sits behind a "show code" toggle); the
    ``parameters`` and papermill's ``injected-parameters`` cells are removed (the
    parameters box of ``probes.chapter.start`` shows them once, readably); stderr
    streams that are library warnings are dropped. Nothing else is changed.
    """
    # chapters are mostly tables: give them the width the in-page contents column would take
    nb.setdefault("metadata", {})["html_theme.sidebar_secondary.remove"] = True
    cells = nb.get("cells", [])
    # the title on a cell of its own, so that the provenance banner follows it directly
    first = next((i for i, c in enumerate(cells) if c.get("cell_type") == "markdown"), None)
    if first is not None:
        text = "".join(cells[first].get("source", ""))
        head, sep, rest = text.lstrip().partition("\n")
        if head.startswith("# ") and rest.strip():
            cells[first]["source"] = head + "\n"
            cells.insert(first + 1, {"cell_type": "markdown", "id": f"{cells[first].get('id', 'title')}-intro",
                                     "metadata": {}, "source": rest.lstrip("\n")})
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "parameters" in tags or "injected-parameters" in tags:
            if "remove-cell" not in tags:
                tags.append("remove-cell")
            continue
        if not {"hide-input", "remove-input", "remove-cell"} & set(tags):
            tags.append("hide-input")
        cell["outputs"] = [o for o in cell.get("outputs", [])
                           if not (o.get("output_type") == "stream" and o.get("name") == "stderr"
                                   and _NOISE.search("".join(o.get("text", ""))))]
    return nb


def figure_files(figures: Iterable[Path]) -> list[str]:
    return sorted(p.name for p in figures)
