"""Build the Jupyter Book (1.x, offline) from receipts and executed chapters.

Generated here, from receipts only: the conformance matrix page, the headline page
and the table of contents (chapters appear once their notebook has been executed).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from probes import BOOK_DIR, CHAPTERS_DIR, RECEIPTS_DIR, campaigns
from probes.core.atomic import atomic_write_bytes
from probes.headline import HeadlineRow, headline_rows
from probes.matrix import load_all_verdicts, render_markdown

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
        "results; measured values come from the receipts in `data/receipts/`. The status is computed "
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
        "Generated from the receipts in `data/receipts/` (the `verdicts.json` view of each campaign). "
        "Labels: ✓ conforms on every tested path; ✗ violates it and the framework's documentation "
        "claims the property; D documented deviation; U violates it and no documentation addresses it "
        "(a ✗ with no documented excuse); n/a no operation the property speaks about. A cell whose paths "
        "disagree shows each label with its number of paths, worst first (`U×3 · ✓×2`); the tables below "
        "give every path, its evidence and a link to its receipt. Tampered-state probes and REMIT without "
        "its effect ledger have rows of their own.",
        "",
    ]
    return "\n".join(head) + render_markdown(load_all_verdicts()) + "\n"


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
    atomic_write_bytes(GENERATED / "headline.md", headline_markdown(headline_rows(RECEIPTS_DIR)).encode())
    atomic_write_bytes(GENERATED / "matrix.md", matrix_markdown().encode())


def build_book(quiet: bool = True) -> Path:
    """Generate the pages and run ``jupyter-book build``; returns the path of index.html."""
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
    return BOOK_DIR / "_build" / "html" / "index.html"
