"""Build the Jupyter Book (1.x, offline) from receipts and executed chapters.

For every campaign the book shows one run (``probes.core.runs.shown_run``): the newest
complete run measured on this machine, else the committed reference run. Its chapter
is copied into ``book/chapters/`` with a provenance banner (measured here or taken from
the reference run: date, duration, commit, clean or not, Python, platform, and the
parameters of a variant); its receipts and figures are staged under ``book/_results/``,
which the HTML build serves at its root (``receipts/<campaign>/<probe>.json``,
``figures/<name>.png``). All three are generated and git-ignored.

Generated here, from receipts only: the conformance matrix page, the headline page
and the table of contents (chapters appear once their notebook has been executed).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from probes import BOOK_DIR, DATA_DIR, campaigns
from probes.core.atomic import atomic_write_bytes
from probes.core.receipt import INDEX_NAME, VIEW_NAME
from probes.core.runs import RunInfo, newer_unfinished, shown_run
from probes.headline import HeadlineRow, headline_rows
from probes.matrix import load_all_verdicts, render_markdown

CHAPTERS_DIR = BOOK_DIR / "chapters"
RESULTS_DIR = BOOK_DIR / "_results"

GENERATED = BOOK_DIR / "generated"
STATUS_MARK = {"reproduced": "✓ reproduced", "differs": "⚠ differs", "not run here": "○ not run here"}


def _fmt(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, dict):
        return "<br>".join(f"{k}: {_fmt(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|")


def headline_markdown(rows: list[HeadlineRow]) -> str:
    counts = {s: sum(r.status == s for r in rows) for s in STATUS_MARK}
    out = [
        "---",
        "html_theme.sidebar_secondary.remove: true",
        "---",
        "# Headline numbers",
        "",
        "Every headline number of the paper, beside the value *this checkout* measured. "
        "Published values come from one reference file, `data/published.json`, and are never used as "
        "results; measured values come from the receipts of the run each chapter shows (this machine's "
        "newest complete run, else the committed reference run). The status is computed "
        "by comparing the two; *why* explains a difference from the evidence.",
        "",
        f"**{counts['reproduced']} reproduced, {counts['differs']} differ, "
        f"{counts['not run here']} not run here** (of {len(rows)}).",
        "",
        "| headline | published | measured | status, difference and why |",
        "|---|---|---|---|",
    ]
    for r in rows:
        # raw anchors: MyST would turn a relative link to a non-document into a dead "#" anchor
        links = " ".join(f'<a href="../{p}">{Path(p).stem}</a>' for p in r.receipts[:3])
        detail = [f"**{STATUS_MARK[r.status]}**"]
        if r.status == "differs":
            detail.append(f"difference: {_fmt(r.difference)}")
        if r.why:
            detail.append(r.why.replace("|", "\\|").replace("\n", " "))
        if links:
            detail.append(f"receipts: {links}")
        out.append(f"| `{r.id}`<br>{r.what} | {_fmt(r.published)} | {_fmt(r.measured)} | {'<br>'.join(detail)} |")
    out.append("")
    return "\n".join(out)


def matrix_markdown() -> str:
    head = [
        "---",
        "html_theme.sidebar_secondary.remove: true",
        "---",
        "# Conformance matrix",
        "",
        "Generated from the receipts of the run each chapter shows (the `verdicts.json` view of each campaign). "
        "Labels: ✓ conforms on every tested path; ✗ violates it and the framework's documentation "
        "claims the property; D documented deviation; U violates it and no documentation addresses it "
        "(a ✗ with no documented excuse); n/a no operation the property speaks about. A cell whose paths "
        "disagree shows each label with its number of paths, worst first (`U×3 · ✓×2`); the tables below "
        "give every path, its evidence and a link to its receipt. Tampered-state probes and REMIT without "
        "its effect ledger have rows of their own.",
        "",
    ]
    return "\n".join(head) + render_markdown(load_all_verdicts(RESULTS_DIR / "receipts")) + "\n"


def provenance_banner(run: RunInfo) -> str:
    """The line a chapter opens with: where its numbers came from."""
    campaign = campaigns.get(run.campaign)
    lines = [f"**Provenance.** {run.describe()}."]
    if run.profile != "default":
        changed = {k: v for k, v in run.params.items() if campaign.resolve().get(k) != v}
        shown = ", ".join(f"`{k}={v!r}`" for k, v in changed.items())
        lines.append(f"This is a **{run.profile}** run, not the paper's parameters ({shown}); "
                     "compare it with the default run on the reproduction report, not with the paper.")
    if run.harness_errors:
        lines.append(f"**{run.harness_errors} harness error(s)**: some probes could not be measured; "
                     "their cells are missing, not verdicts.")
    pending = newer_unfinished(run.campaign, run)
    if pending:
        lines.append("Newer runs on this machine that did not finish, not shown: " + "; ".join(pending) + ".")
    return "\n\n".join(lines)


def _with_banner(chapter: Path, banner: str) -> bytes:
    """The chapter with the banner right under its title (the first ``# `` heading)."""
    nb = json.loads(chapter.read_text())
    cells = nb.get("cells", [])
    for cell in cells:
        if cell.get("cell_type") != "markdown":
            continue
        lines = "".join(cell.get("source", "")).split("\n")
        at = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
        if at is not None:
            cell["source"] = "\n".join(lines[:at + 1] + ["", banner, ""] + lines[at + 1:])
            break
    else:
        cells.insert(0, {"cell_type": "markdown", "metadata": {}, "source": banner})
    return json.dumps(nb, indent=1, ensure_ascii=False).encode()


def render_chapter(name: str, run: RunInfo) -> None:
    """Execute a campaign's notebook over ``run``'s receipts (measuring nothing) into its chapter."""
    from probes.reproduce import execute_notebook, notebook_path

    if notebook_path(name).exists():
        execute_notebook(name, run.params, run.chapter, render_from=run.directory)


def stage_runs() -> dict[str, RunInfo]:
    """Copy each campaign's shown run into the book: chapter (with banner), receipts, figures."""
    for directory in (CHAPTERS_DIR, RESULTS_DIR):
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
    (RESULTS_DIR / "figures").mkdir()
    shutil.copy2(DATA_DIR / "published.json", RESULTS_DIR / "published.json")
    shown: dict[str, RunInfo] = {}
    for name in campaigns.available():
        run = shown_run(name)
        if run is None:
            continue
        shown[name] = run
        target = RESULTS_DIR / "receipts" / name
        target.mkdir(parents=True)
        index = json.loads((run.directory / INDEX_NAME).read_text())
        for probe in index.get("receipts", {}):
            shutil.copy2(run.directory / f"{probe}.json", target / f"{probe}.json")
        for extra in (INDEX_NAME, VIEW_NAME):
            shutil.copy2(run.directory / extra, target / extra)
        if run.figures.is_dir():
            for figure in run.figures.iterdir():
                shutil.copy2(figure, RESULTS_DIR / "figures" / figure.name)
        if not run.chapter.exists() and not run.is_reference:
            render_chapter(name, run)  # measured by `python -m probes run`: render it from its receipts
        if run.chapter.exists():
            atomic_write_bytes(CHAPTERS_DIR / f"{name}.ipynb", _with_banner(run.chapter, provenance_banner(run)))
    return shown


def write_toc() -> list[str]:
    chapters = [n for n in campaigns.available() if (CHAPTERS_DIR / f"{n}.ipynb").exists()]
    lines = ["format: jb-book", "root: intro", "parts:",
             "  - caption: The contract", "    chapters:", "      - file: contract",
             "      - file: generated/headline", "      - file: generated/matrix"]
    if chapters:
        lines += ["  - caption: Campaigns", "    chapters:"]
        lines += [f"      - file: chapters/{n}" for n in chapters]
    if (BOOK_DIR / "remit-api.md").exists():
        lines += ["  - caption: Reference implementation", "    chapters:", "      - file: remit-api"]
    atomic_write_bytes(BOOK_DIR / "_toc.yml", ("\n".join(lines) + "\n").encode())
    return chapters


def generate_pages() -> None:
    GENERATED.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(GENERATED / "headline.md", headline_markdown(headline_rows(RESULTS_DIR / "receipts")).encode())
    atomic_write_bytes(GENERATED / "matrix.md", matrix_markdown().encode())


def build_book(quiet: bool = True) -> tuple[Path, dict[str, str]]:
    """Stage the shown runs, generate the pages and run ``jupyter-book build``.

    Returns the path of index.html and, per campaign, which run the book shows.
    """
    shown = stage_runs()
    generate_pages()
    write_toc()
    cmd = [sys.executable, "-m", "jupyter_book", "build", str(BOOK_DIR), "--path-output", str(BOOK_DIR)]
    jb = Path(sys.executable).with_name("jupyter-book")
    if jb.exists():
        cmd = [str(jb), "build", str(BOOK_DIR), "--path-output", str(BOOK_DIR)]
    proc = subprocess.run(cmd, capture_output=quiet, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout or "")[-3000:] + (proc.stderr or "")[-3000:]
        raise RuntimeError(f"jupyter-book build failed (exit {proc.returncode}):\n{tail}")
    sources = {name: f"{'this machine' if not r.is_reference else 'reference run'} ({r.profile}, run {r.run_id})"
               for name, r in shown.items()}
    return BOOK_DIR / "_build" / "html" / "index.html", sources
