"""Figures for citation: PNG + SVG under a stable name, with caption, label and parameters.

In a chapter, ``save_figure`` shows the figure once, as a numbered figure: an anchor
(``#fig-<name>``), "Figure N" (numbered in the order the chapter shows them), the
caption with the parameters it was drawn with, and links to its PNG, SVG and JSON
sidecar as the built book serves them (``figures/<name>.png`` at the HTML root).
"""

from __future__ import annotations

import base64
import html
import os
import re
from pathlib import Path
from typing import Any, Mapping

from probes import PROJECT_ROOT
from probes.core.atomic import atomic_write_json

FIGURES_DIR = Path(os.environ.get("RC_FIGURES_DIR", PROJECT_ROOT / "book" / "figures"))
BOOK_FIGURES = "../figures/"  # a chapter page (chapters/<name>.html) -> the figures the book serves
_directory: Path | None = None  # set by probes.notebook.run_notebook: the run's own figures/
_number = 0  # figures shown so far in this kernel (one kernel = one chapter)
_provenance: dict[str, Any] = {}  # ... and where the figure's numbers come from (probes.notebook)


class FigureFiles(dict):
    """The saved files (``png``, ``svg``, ``label``, ``number``); shows nothing when a
    notebook cell ends with ``save_figure(...)`` -- the numbered figure is already shown."""

    def _ipython_display_(self) -> None:
        return None


def set_directory(directory: Path, provenance: Mapping[str, Any] | None = None) -> None:
    """Where figures of the current notebook go, and the provenance their sidecars record."""
    global _directory, _provenance
    _directory = Path(directory)
    _provenance = dict(provenance or {})


def _params_text(params: Mapping[str, Any]) -> str:
    def short(v: Any) -> str:
        if isinstance(v, list):
            return "[" + ", ".join(short(x) for x in v) + "]"
        if isinstance(v, float):
            return f"{v:g}"
        return str(v)

    return ", ".join(f"{k} = {short(v)}" for k, v in params.items())


def inline_svg(svg: str) -> str:
    """An SVG file's markup to place in a page: no XML prolog, on one line (a blank line would end
    MyST's HTML block), scaling with the column."""
    start = svg.find("<svg")
    body = " ".join(svg[start:].split("\n"))
    return re.sub(r'<svg ([^>]*?)width="[^"]*" height="[^"]*"', r'<svg \1', body, count=1)


def source_links(provenance: Mapping[str, Any], files_prefix: str = BOOK_FIGURES) -> list[tuple[str, str]]:
    """(text, href) of what a figure was drawn from, computed from its sidecar's provenance:
    the executed notebook, the receipts (the run's index lists each with its sha256) and the
    run's RO-Crate, as the built book serves them (``receipts/<campaign>/``, beside ``figures/``)."""
    campaign = provenance.get("campaign")
    if not campaign:
        return []
    root = files_prefix[: -len("figures/")] if files_prefix.endswith("figures/") else files_prefix
    run = f"{root}receipts/{campaign}/"
    return [(f"the executed notebook of {campaign}", f"{run}chapter.ipynb"),
            (f"receipts of run {provenance.get('run', '?')}", f"{run}_campaign.json"),
            ("RO-Crate", f"{run}ro-crate-metadata.json")]


def figure_html(name: str, number: int, caption: str, params: Mapping[str, Any], png: bytes,
                svg: str | None = None, files_prefix: str = BOOK_FIGURES,
                provenance: Mapping[str, Any] | None = None) -> str:
    """The figure as a chapter shows it: image, number, anchor, caption, parameters, files,
    and (with the sidecar's ``provenance``) links to the notebook and receipts it reads.

    With ``svg`` the figure is drawn inline from its SVG, so links inside it (a matrix cell
    to its paths) work in the page; otherwise the PNG is embedded."""
    label = f"fig-{name}"
    e = html.escape
    files = " · ".join(f'<a href="{files_prefix}{name}.{ext}" download>{ext.upper()}</a>'
                       for ext in ("png", "svg", "json"))
    sources = " · ".join(f'<a href="{e(href)}">{e(text)}</a>' for text, href in source_links(provenance or {}, files_prefix))
    sources = f"<em>Drawn from:</em> {sources}. " if sources else ""
    if svg is not None:
        image = f'<div class="rc-svg" role="img" aria-label="Figure {number}: {e(caption)}">{inline_svg(svg)}</div>'
    else:
        data = base64.b64encode(png).decode()
        image = (f'<a href="{files_prefix}{name}.png"><img src="data:image/png;base64,{data}" '
                 f'alt="Figure {number}: {e(caption)}"></a>')
    return (f'<figure class="rc-figure" id="{label}">{image}'
            f'<figcaption><a class="rc-fignum" href="#{label}">Figure {number}</a>. {e(caption)}'
            f'<br><span class="rc-figmeta"><em>Parameters:</em> {e(_params_text(params))}. '
            f"{sources}<em>Files:</em> {files}. <em>Anchor:</em> <code>#{label}</code></span></figcaption></figure>")


def save_figure(fig: Any, name: str, caption: str, params: Mapping[str, Any],
                directory: Path | None = None) -> FigureFiles:
    """Save ``fig`` as ``<name>.png`` and ``<name>.svg`` plus a ``<name>.json`` sidecar,
    and show it in the chapter as a numbered figure (then close it, so the notebook
    backend does not show it a second time, unnumbered).

    Goes to the current run's ``figures/`` (see ``probes.notebook``) unless ``directory``
    is given. Returns the paths, the label and the figure's number in the chapter.
    """
    global _number
    directory = Path(directory or _directory or FIGURES_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    png, svg = directory / f"{name}.png", directory / f"{name}.svg"
    import matplotlib

    fig.savefig(png, dpi=150, bbox_inches="tight", metadata={"Software": None})
    # matplotlib draws random SVG element ids unless salted: salt with the name, so the
    # same data gives the same bytes.
    with matplotlib.rc_context({"svg.hashsalt": name}):
        fig.savefig(svg, bbox_inches="tight", metadata={"Date": None, "Creator": None})
    _number += 1
    label = f"fig-{name}"
    atomic_write_json(directory / f"{name}.json", {"name": name, "label": label, "number": _number,
                                                   "caption": caption, "params": dict(params),
                                                   "files": [png.name, svg.name], **_provenance})
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display

        if get_ipython() is not None:
            display(HTML(figure_html(name, _number, caption, params, png.read_bytes(), provenance=_provenance)))
            import matplotlib.pyplot as plt

            plt.close(fig)
    except ImportError:  # pragma: no cover
        pass
    return FigureFiles(png=str(png), svg=str(svg), label=label, number=str(_number))
