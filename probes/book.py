"""Build the Jupyter Book (1.x, offline) from receipts and executed chapters.

For every campaign the book shows one run (``probes.core.runs.shown_run``): the newest
complete run measured on this machine, else the committed reference run. Its chapter
is copied into ``book/chapters/`` with a provenance banner (measured here or taken from
the reference run: date, duration, commit, clean or not, Python, platform, and the
parameters of a variant); its receipts and figures are staged under ``book/_results/``,
which the HTML build serves at its root (``receipts/<campaign>/<probe>.json``,
``figures/<name>.png``); each staged ``receipts/<campaign>/`` is an RO-Crate of its run
(``probes.core.crate.crate_copy``: the reference run is read-only, so its crate is
written into the copy), linked from the chapter's banner. All three are generated and
git-ignored.

Generated here, from receipts only: the conformance matrix page, the headline page
and the table of contents (chapters appear once their notebook has been executed); and,
from the pins, the REMIT API page's sentence naming the LangGraph releases REMIT is
tested on (``generated/remit-releases.md``, included by ``remit-api.md``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from probes import BOOK_DIR, DATA_DIR, campaigns
from probes.core.atomic import atomic_write_bytes
from probes.core.crate import CRATE_NAME, crate_copy
from probes.core.runs import RunInfo, shown_run
from probes.execute import execute_notebook, notebook_path
from probes import pages
from probes.matrix import load_all_verdicts

CHAPTERS_DIR = BOOK_DIR / "chapters"
RESULTS_DIR = BOOK_DIR / "_results"

GENERATED = BOOK_DIR / "generated"


def provenance_banner(run: RunInfo) -> str:
    """The line a chapter opens with: where its numbers came from (see probes.pages), with a
    link to the run's RO-Crate as ``stage_runs`` stages it."""
    return pages.provenance_banner(run, crate_link=f"../receipts/{run.campaign}/{CRATE_NAME}")


def _with_banner(chapter: Path, banner: str, closing: str = "", params_box: str = "") -> bytes:
    """The chapter made readable (``pages.tidy_chapter``), with the banner right under its
    title (the first ``# `` heading), ``closing`` markdown as its last cell, and the
    parameters box after the banner where the notebook did not show one itself (the kit's
    generated chapters)."""
    nb = pages.tidy_chapter(json.loads(chapter.read_text()))
    cells = nb.get("cells", [])
    if closing:
        cells.append({"cell_type": "markdown", "metadata": {}, "source": closing})
    if params_box and "Parameters of this run" not in json.dumps(nb, ensure_ascii=False):
        banner = f"{banner}\n\n{params_box}"
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


def _params_box(name: str, run: RunInfo) -> str:
    from probes.chapter import parameters_box

    return parameters_box(campaigns.get(name), run.params).fragment


def render_chapter(name: str, run: RunInfo) -> None:
    """Execute a campaign's notebook over ``run``'s receipts (measuring nothing) into its chapter."""

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
        if not run.chapter.exists() and not run.is_reference:
            render_chapter(name, run)  # measured by `python -m probes run`: render it from its receipts
        # receipts, index, view, chapter and figures, as an RO-Crate (the reference run is read-only,
        # so the crate is written into this copy; a local run's own crate is rewritten the same way)
        crate_copy(run.directory, RESULTS_DIR / "receipts" / name)
        if run.figures.is_dir():
            for figure in run.figures.iterdir():
                shutil.copy2(figure, RESULTS_DIR / "figures" / figure.name)
        if run.chapter.exists():
            atomic_write_bytes(CHAPTERS_DIR / f"{name}.ipynb", _with_banner(run.chapter, provenance_banner(run),
                                                                                  pages.trace_section(name),
                                                                                  _params_box(name, run)))
    return shown


# The book's parts (issue 25): the contract and its model, the frameworks (one entry each: the paper's
# campaign, its kit campaign nested under it), REMIT, and what goes beyond the paper. A campaign in none of
# these lists is a framework measured with the kit (its own entry in the frameworks' part).
MODEL_CHAPTERS = ("tlc", "traces")
REMIT_CHAPTERS = ("consume_race", "remit", "remit_bench", "remit_cost")
BEYOND_CHAPTERS = ("atlas", "drift", "mv", "live")
KIT_SUFFIX = "_kit"  # a paper framework's kit campaign: <paper campaign>_kit


def framework_entries(chapters: list[str]) -> list[tuple[str, list[str]]]:
    """The frameworks' part: (chapter, sections) per framework, the paper's campaigns first in reproduction
    order, then frameworks measured with the kit alone (by name); a paper campaign's ``<name>_kit`` chapter is
    its section, and a kit chapter whose paper campaign has no chapter stands as its own entry."""
    grouped = set(MODEL_CHAPTERS + REMIT_CHAPTERS + BEYOND_CHAPTERS)
    frameworks = [n for n in chapters if n not in grouped]
    entries: list[tuple[str, list[str]]] = []
    for name in frameworks:
        if name.endswith(KIT_SUFFIX) and name[:-len(KIT_SUFFIX)] in frameworks:
            continue  # shown under its paper campaign
        kit = name + KIT_SUFFIX
        entries.append((name, [kit] if kit in frameworks else []))
    return entries


def write_toc() -> list[str]:
    chapters = [n for n in campaigns.available() if (CHAPTERS_DIR / f"{n}.ipynb").exists()]

    def files(names: tuple[str, ...] | list[str]) -> list[str]:
        return [f"      - file: chapters/{n}" for n in names if n in chapters]

    lines = ["format: jb-book", "root: intro", "parts:",
             "  - caption: The contract and its model", "    chapters:", "      - file: contract",
             "      - file: generated/headline", "      - file: generated/matrix", *files(MODEL_CHAPTERS)]
    entries = framework_entries(chapters)
    if entries:
        lines += ["  - caption: The frameworks", "    chapters:"]
        for name, sections in entries:
            lines.append(f"      - file: chapters/{name}")
            if sections:
                lines += ["        sections:"] + [f"          - file: chapters/{s}" for s in sections]
    remit = files(REMIT_CHAPTERS) + (["      - file: remit-api"] if (BOOK_DIR / "remit-api.md").exists() else [])
    if remit:
        lines += ["  - caption: REMIT, the reference implementation", "    chapters:", *remit]
    lines += ["  - caption: Beyond the paper", "    chapters:", *files(BEYOND_CHAPTERS),
              "      - file: generated/report", "      - file: generated/timing"]
    if (BOOK_DIR / "add-a-framework.md").exists():
        lines += ["  - caption: Extending the suite", "    chapters:", "      - file: add-a-framework"]
    lines += ["  - caption: Citing", "    chapters:", "      - file: generated/cite"]
    atomic_write_bytes(BOOK_DIR / "_toc.yml", ("\n".join(lines) + "\n").encode())
    return chapters


def generate_pages() -> None:
    GENERATED.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(GENERATED / "headline.md", pages.headline_page(RESULTS_DIR).encode())
    cells = load_all_verdicts(RESULTS_DIR / "receipts")
    atomic_write_bytes(GENERATED / "matrix.md", pages.matrix_page(cells, figures_dir=RESULTS_DIR / "figures").encode())
    # the book's first page opens with the same figure (book/intro.md includes this file)
    atomic_write_bytes(GENERATED / "matrix-figure.md", (pages.matrix_figure(
        cells, RESULTS_DIR / "figures", page_link="generated/matrix.html", files_prefix="figures/") + "\n").encode())
    atomic_write_bytes(GENERATED / "report.md", pages.report_page(RESULTS_DIR).encode())
    atomic_write_bytes(GENERATED / "timing.md", pages.timing_page(RESULTS_DIR / "figures").encode())
    atomic_write_bytes(GENERATED / "cite.md", pages.cite_page(RESULTS_DIR / "figures").encode())
    atomic_write_bytes(GENERATED / "remit-releases.md", pages.remit_releases_fragment().encode())


def build_book(quiet: bool = True) -> tuple[Path, dict[str, str]]:
    """Stage the shown runs, generate the pages and run ``jupyter-book build``.

    Returns the path of index.html and, per campaign, which run the book shows. The
    build starts from nothing: an incremental Sphinx build keeps pages of chapters that
    are no longer in the book (a campaign whose run was removed), which would show
    results no run stands behind.
    """
    shutil.rmtree(BOOK_DIR / "_build", ignore_errors=True)
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
