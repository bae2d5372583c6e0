"""The cells every chapter shares, written once: what a reader sees of a campaign run.

A chapter notebook is thin: its ``parameters`` cell (papermill), one call
``run = chapter.start(name, globals())`` that measures (or, with ``RC_RENDER_FROM``,
loads) the campaign and shows its parameters once, then cells that render *receipts*
with the helpers below. Every table goes through ``table``: it renders as an HTML
table (a table emitted as markdown from a cell stays a paragraph of pipes), inside its
own horizontally scrolling box with the key columns first, with long text shortened
(the full text one click away) and repeated rows collapsed to one row with a count and
a link to every receipt. Nothing here imports a framework.
"""

from __future__ import annotations

import html
import json
import os
import warnings
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from probes.core.receipt import Receipt

SHORT = 140  # characters of a table cell shown before "more"
RECEIPT_PREFIX = "../"  # a chapter page (chapters/<name>.html) -> the HTML root, where receipts/ is served


@dataclass(frozen=True)
class Raw:
    """A table value that is already HTML (a link, a label with markup): not escaped."""

    html: str

    def __str__(self) -> str:
        return self.html


class HTML:
    """Rich display of an HTML fragment (``text/html``), with a plain-text fallback that
    is readable rather than a repr."""

    def __init__(self, fragment: str, text: str = "") -> None:
        self.fragment, self.text = fragment, text

    def _repr_html_(self) -> str:
        return self.fragment

    def __repr__(self) -> str:
        return self.text or "(table: see the HTML rendering)"


# --- starting a chapter ---------------------------------------------------------------

def quiet() -> None:
    """Keep library chatter out of chapters: a chapter shows results, not a kernel log.

    Harness errors are never silenced (they are printed by ``run_notebook`` and shown in
    the chapter); these are deprecation notices and environment hints from libraries.
    """
    for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category)
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    warnings.filterwarnings("ignore", message=".*not supported as a fill value.*")
    try:
        import pandas as pd

        pd.set_option("display.max_colwidth", SHORT)
        pd.set_option("display.width", 160)
    except ImportError:  # pragma: no cover
        pass


def start(name: str, namespace: Mapping[str, Any]):
    """Run (or resume, or load) campaign ``name`` with the notebook's parameters, then
    show them once, as a box. Returns the ``CampaignRun``."""
    quiet()
    from IPython.display import display

    from probes import campaigns
    from probes.notebook import run_notebook

    run = run_notebook(name, namespace)  # also tells probes.figures where figures go and their provenance
    display(parameters_box(campaigns.get(name), run.params))
    display(run_summary(run))
    return run


def parameters_box(campaign: Any, params: Mapping[str, Any]) -> HTML:
    """The parameters this chapter ran with: name, value, default, meaning (from the
    campaign's ``Param`` declarations). Values that differ from the default are marked."""
    rows = []
    for p in campaign.params:
        value = params.get(p.name, p.default)
        changed = value != p.default
        cls = ' class="rc-changed"' if changed else ""
        rows.append(
            f"<tr{cls}><td><code>{_e(p.name)}</code></td>"
            f"<td><code>{_e(_compact(value))}</code>{' <strong>(changed)</strong>' if changed else ''}</td>"
            f"<td><code>{_e(_compact(p.default))}</code></td><td>{_e(p.doc)}{_range(p)}</td></tr>")
    changed = [p.name for p in campaign.params if params.get(p.name, p.default) != p.default]
    note = ("the paper's parameters (the default profile)" if not changed
            else f"{len(changed)} parameter(s) differ from the paper's: {', '.join(changed)}")
    fragment = (f'<details class="rc-params" open><summary><strong>Parameters of this run</strong> — {_e(note)}. '
                f"Rerun with others: <code>./reproduce.sh --only {_e(campaign.name)} -p NAME VALUE</code></summary>"
                '<div class="rc-table-wrap"><table class="rc-table"><thead><tr><th>name</th><th>value</th>'
                "<th>default</th><th>meaning</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></div></details>")
    return HTML(fragment, "parameters: " + ", ".join(f"{k}={v!r}" for k, v in params.items()))


def _range(param: Any) -> str:
    describe = getattr(param, "describe_range", None)
    bounds = describe() if callable(describe) else ""
    return f' <span class="rc-where">[{_e(bounds)}]</span>' if bounds else ""


def run_summary(run: Any) -> HTML:
    """One line: how many receipts, how many harness errors (listed, never hidden)."""
    errors = list(getattr(run, "harness_errors", []))
    text = (f"{len(run.receipts)} receipts, {len(errors)} harness error(s) "
            "(a harness error is a measurement that could not be taken, never a verdict).")
    body = f"<p><strong>{len(run.receipts)} receipts, {len(errors)} harness error(s)</strong> " \
           "(a harness error is a measurement that could not be taken, never a verdict).</p>"
    if errors:
        body += "<ul>" + "".join(f"<li><code>{_e(_short(e, 400))}</code></li>" for e in errors) + "</ul>"
    return HTML(body, text)


# --- tables ---------------------------------------------------------------------------

def receipt_href(receipt: str, campaign: str | None = None) -> str:
    """A probe id or a ``receipts/…json`` path -> the link from a chapter page."""
    if receipt.endswith(".json"):
        rel = receipt
    else:
        rel = f"receipts/{campaign}/{receipt}.json"
    return RECEIPT_PREFIX + rel


def receipt_links(receipts: Sequence[str], campaign: str | None = None) -> Raw:
    """One link per receipt: ``json`` for one, ``1 2 3`` for several (each its own receipt)."""
    receipts = list(dict.fromkeys(r for r in receipts if r))
    if not receipts:
        return Raw("")
    if len(receipts) == 1:
        return Raw(f'<a href="{_e(receipt_href(receipts[0], campaign))}" title="{_e(receipts[0])}">json</a>')
    return Raw(" ".join(f'<a href="{_e(receipt_href(r, campaign))}" title="{_e(r)}">{i}</a>'
                        for i, r in enumerate(receipts, 1)))


def table(rows: Any, columns: Sequence[str] | None = None, *, receipt: str = "receipt",
          campaign: str | None = None, collapse: bool = True, short: int = SHORT,
          caption: str = "", empty: str = "nothing to show for this run", merge: str | None = None,
          cls: str = "") -> HTML:
    """Rows (dicts or a DataFrame) as an HTML table in its own scrolling box.

    ``columns`` gives the order (key columns first); without it, every key of the first
    row but ``receipt``. Rows that agree on every shown column collapse into one, with
    a ``×n`` count and a link to each of their receipts (``receipt`` holds a probe id or
    a path, or a list of them). With ``merge`` (e.g. ``"backend"``), rows that agree on
    every other column become one row listing the merged column's values. Text longer than ``short`` characters is cut, with the
    full text in a disclosure beside it.
    """
    records = _records(rows)
    if columns is None:
        columns = [c for c in (records[0] if records else {}) if c != receipt]
    columns = list(columns)
    if not records:
        return HTML(f"<p><em>{_e(empty)}</em></p>", empty)
    groups: dict[tuple, dict[str, Any]] = {}
    order: list[tuple] = []
    for i, rec in enumerate(records):
        key = tuple(_plain(rec.get(c)) for c in columns if c != merge) if collapse or merge else (i,)
        if key not in groups:
            groups[key] = {"row": dict(rec), "n": 0, "receipts": [], "merged": []}
            order.append(key)
        if merge:
            groups[key]["merged"].append(_compact(rec.get(merge)))
            groups[key]["row"][merge] = ", ".join(dict.fromkeys(groups[key]["merged"]))
        else:
            groups[key]["n"] += 1
        got = rec.get(receipt)
        groups[key]["receipts"] += list(got) if isinstance(got, (list, tuple)) else [got] if got else []
    counted = any(g["n"] > 1 for g in groups.values())
    has_receipts = any(g["receipts"] for g in groups.values())
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    if counted:
        head += "<th>rows</th>"
    if has_receipts:
        head += "<th>receipt</th>"
    body = []
    for key in order:
        g = groups[key]
        cells = "".join(f"<td>{_cell(g['row'].get(c), short)}</td>" for c in columns)
        if counted:
            cells += f"<td class=\"rc-count\">{'×' + str(g['n']) if g['n'] > 1 else ''}</td>"
        if has_receipts:
            cells += f"<td class=\"rc-receipt\">{receipt_links(g['receipts'], campaign)}</td>"
        body.append(f"<tr>{cells}</tr>")
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    fragment = (f'<div class="rc-table-wrap"><table class="rc-table {_e(cls)}">{cap}<thead><tr>{head}</tr></thead>'
                f"<tbody>{''.join(body)}</tbody></table></div>")
    text = f"table: {len(order)} row(s) of {', '.join(columns)}"
    return HTML(fragment, text)


def verdict_rows(receipts: Iterable[Receipt], framework: str | None = None) -> list[dict[str, Any]]:
    """One row per (property, path): its labels over every backend and repetition (per
    backend when the backends disagree), what was observed (first receipt) and the
    documentation the label rests on; every receipt of the row is linked."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for r in sorted(receipts, key=lambda r: r.probe):
        for v in r.verdicts:
            if framework and v.framework != framework:
                continue
            g = groups.setdefault((v.property.value, v.path), {
                "labels": defaultdict(lambda: defaultdict(int)), "summary": v.summary,
                "doc": Raw(_doc_link(v.doc)) if v.doc else v.evidence.get("citation", ""), "receipts": []})
            g["labels"][v.backend][v.label.value] += 1
            g["receipts"].append(f"receipts/{r.campaign}/{r.probe}.json")
    rows = []
    for (prop, path), g in sorted(groups.items(), key=lambda kv: (kv[0][1].startswith("tamper:"), kv[0])):
        per_backend = {b: dict(c) for b, c in sorted(g["labels"].items())}
        backends = ", ".join(per_backend)
        if len({tuple(sorted(c)) for c in per_backend.values()}) == 1:
            total: dict[str, int] = defaultdict(int)
            for c in per_backend.values():
                for lab, n in c.items():
                    total[lab] += n
            verdict = label_counts(total).html
        else:  # backends that agree share one entry: "postgres, sqlite: U×3 · memory: n/a×3"
            same: dict[tuple, list[str]] = defaultdict(list)
            for b, c in per_backend.items():
                same[tuple(sorted(c.items()))].append(b)
            ordered = sorted(same.items(), key=lambda kv: -max(_SEVERITY.get(lab, 5) for lab, _ in kv[0]))
            verdict = " · ".join(f"{_e(', '.join(bs))}: {label_counts(dict(key)).html}" for key, bs in ordered)
        rows.append({"property": prop, "path": path, "verdict": Raw(verdict), "backends": backends,
                     "observed (first receipt)": g["summary"], "documentation": g["doc"],
                     "receipt": g["receipts"]})
    return rows


def verdicts(receipts: Iterable[Receipt], framework: str | None = None) -> HTML:
    """The chapter's verdict table (see ``verdict_rows``)."""
    rows = verdict_rows(receipts, framework)
    return table(rows, ["property", "path", "verdict", "backends", "observed (first receipt)", "documentation"],
                 collapse=False)


def _severities() -> dict[str, int]:
    """Label -> severity (higher is worse), from the checker's one ordering (``WORST_FIRST``)."""
    from probes.core.checker import WORST_FIRST

    return {lab.value: len(WORST_FIRST) - 1 - i for i, lab in enumerate(WORST_FIRST)}


_SEVERITY = _severities()


def label_counts(counts: Mapping[str, int]) -> Raw:
    """``U×2 · ✓×1`` (worst first), coloured; a single label shows its count only if > 1."""
    ordered = sorted(counts, key=lambda lab: (-_SEVERITY.get(lab, 5), lab))
    parts = [f'<span class="rc-label rc-label-{_label_class(lab)}">{_e(lab)}</span>'
             + (f"×{counts[lab]}" if counts[lab] > 1 or len(counts) > 1 else "") for lab in ordered]
    return Raw(" · ".join(parts))


def _label_class(label: str) -> str:
    return {"✓": "pass", "✗": "fail", "D": "doc", "U": "undoc", "?": "undecided", "n/a": "na"}.get(label, "other")


def _doc_link(doc: Any) -> str:
    """The statement a label rests on, shortened, with its source and the version it was read for."""
    page = getattr(doc, "page", "")
    quote = getattr(doc, "quote", "")
    read = "; ".join(x for x in (getattr(doc, "source", ""), getattr(doc, "version", "")) if x)
    text = (_e(_short(quote, 80)) if quote else _e(page)) + (f" <small>[{_e(read)}]</small>" if read else "")
    if page.startswith("http"):
        return f'<a href="{_e(page)}" title="{_e(quote)}">{text}</a>'
    return text


# --- measured next to published ----------------------------------------------------------

def published(run: Any, name: str | None = None) -> HTML:
    """This run's headline values beside the published ones, with the status computed by
    ``probes.headline`` (the same as on the headline page)."""
    from probes import campaigns
    from probes.headline import STATUS_TEXT, chapter_rows

    name = name or run.campaign
    rows = chapter_rows(campaigns.get(name), run)
    if not rows:
        return HTML("<p><em>The paper publishes no headline number for this campaign.</em></p>", "")
    out = []
    for r in rows:
        out.append({"headline": Raw(f"<code>{_e(r.id)}</code><br>{_e(r.what)}"),
                    "published": Raw(format_value(r.published)),
                    "this run": Raw(format_measured(r.measured, r.published)),
                    "status": Raw(f'<span class="rc-status rc-status-{r.status_class}">{_e(STATUS_TEXT[r.status])}'
                                  "</span>"),
                    "why (from the measured values)": r.explanation,
                    "receipt": list(r.receipts)})
    return table(out, ["headline", "status", "why (from the measured values)", "published", "this run"],
                 collapse=False, short=400, cls="rc-published")


def format_value(value: Any, limit: int = 12) -> str:
    """A headline value as compact HTML: ``key: value`` lines, long maps cut with a count."""
    if value is None:
        return "—"
    if isinstance(value, Mapping):
        items = list(value.items())
        lines = [f"<code>{_e(k)}</code>: {_e(_compact(v, 120))}" for k, v in items[:limit]]
        if len(items) > limit:
            lines.append(f"<em>… {len(items) - limit} more in the receipt</em>")
        return "<br>".join(lines)
    return _e(_compact(value))


def format_measured(measured: Any, published: Any, limit: int = 12) -> str:
    """This run's headline value with the fields the published value names first, and whatever else the
    paper layer recorded (backends, per-backend splits, the re-implementation's numbers) behind a
    disclosure: a row is then as tall as its comparison, and nothing measured is hidden for good."""
    if not (isinstance(measured, Mapping) and isinstance(published, Mapping)):
        return format_value(measured, limit)
    compared = {k: v for k, v in measured.items() if k in published}
    rest = {k: v for k, v in measured.items() if k not in published}
    if not compared or not rest:
        return format_value(measured, limit)
    return (format_value(compared, limit) + f'<details class="rc-fields"><summary>{len(rest)} more measured '
            f'field{"s" if len(rest) > 1 else ""}</summary>{format_value(rest, limit)}</details>')


# --- prose from receipts -----------------------------------------------------------------

def machine(receipts: Iterable[Receipt]) -> str:
    """The measuring machine as its receipts record it (platform, cores if recorded)."""
    manifests = [r.manifest for r in receipts if r.manifest]
    if not manifests:
        return "the machine that measured this run"
    last = manifests[-1]
    cpus = last.get("cpus") or last.get("cpu_count")
    where = str(last.get("platform") or last.get("machine") or "an unrecorded platform")
    return f"{where}{f', {cpus} CPU(s)' if cpus else ''}"


def timings(run: Any) -> HTML:
    """Harness errors (listed) and probe wall times (collapsed: the total is shown)."""
    errors = [{"probe": r.probe, "harness error": e} for r in run.receipts for e in r.harness_errors]
    parts = [table(errors, ["probe", "harness error"]).fragment if errors else "<p><em>No harness errors.</em></p>"]
    rows = [{"probe": r.probe, "seconds": (r.manifest or {}).get("probe_seconds")}
            for r in sorted(run.receipts, key=lambda r: r.probe)]
    total = total_seconds(run.receipts)
    parts.append(f'<details class="rc-params"><summary>Probe wall times: {len(rows)} probes, <strong>{total:.0f} s</strong> '
                 f"in total on {_e(machine(run.receipts))}</summary>{table(rows, ['probe', 'seconds']).fragment}</details>")
    return HTML("".join(parts), f"{len(errors)} harness error(s); {total:.0f} s of probe time")


def total_seconds(receipts: Iterable[Receipt]) -> float:
    return float(sum((r.manifest or {}).get("probe_seconds") or 0 for r in receipts))


# --- small helpers ---------------------------------------------------------------------

def _records(rows: Any) -> list[dict[str, Any]]:
    if rows is None:
        return []
    if hasattr(rows, "to_frame") and not hasattr(rows, "columns"):  # a Series
        rows = rows.to_frame()
    if hasattr(rows, "to_dict"):  # a DataFrame: a meaningful index (named, or not 0..n-1) is data
        import pandas as pd

        index = rows.index
        plain = isinstance(index, pd.RangeIndex) and all(n is None for n in index.names)
        frame = rows if plain else rows.reset_index()
        frame = frame.rename(columns={c: (" / ".join(str(x) for x in c if x != "") if isinstance(c, tuple) else str(c))
                                      for c in frame.columns})
        return [dict(r) for r in frame.to_dict(orient="records")]
    return [dict(r) for r in rows]


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _compact(value: Any, limit: int | None = None) -> str:
    """Values as a reader writes them: no quotes around keys, no Python reprs."""
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif value is None:
        text = "—"
    elif isinstance(value, float):
        text = "—" if value != value else (f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}")
    elif isinstance(value, int) and abs(value) >= 10_000:
        text = f"{value:,}"
    elif isinstance(value, Mapping):
        text = ", ".join(f"{k}: {_compact(v)}" for k, v in value.items()) or "{}"
    elif isinstance(value, (list, tuple, set)):
        text = "[" + ", ".join(_compact(v) for v in value) + "]"
    else:
        text = str(value)
    return _short(text, limit) if limit else text


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _plain(value: Any) -> str:
    if isinstance(value, Raw):
        return value.html
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _cell(value: Any, short: int) -> str:
    if isinstance(value, Raw):
        return value.html
    text = _compact(value)
    if len(text) <= short:
        return _e(text)
    return (f'<details class="rc-more"><summary>{_e(_short(text, short))}</summary>'
            f"<div>{_e(text)}</div></details>")


def render_only() -> bool:
    """True when the chapter is rendered from existing results (nothing measured)."""
    return bool(os.environ.get("RC_RENDER_FROM"))
