"""Figures for citation: PNG + SVG under a stable name, with caption, label and parameters."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from probes import PROJECT_ROOT
from probes.core.atomic import atomic_write_json

FIGURES_DIR = Path(os.environ.get("RC_FIGURES_DIR", PROJECT_ROOT / "book" / "figures"))
_directory: Path | None = None  # set by probes.notebook.run_notebook: the run's own figures/
_provenance: dict[str, Any] = {}  # ... and where the figure's numbers come from


def set_directory(directory: Path, provenance: Mapping[str, Any] | None = None) -> None:
    """Where figures of the current notebook go, and the provenance their sidecars record."""
    global _directory, _provenance
    _directory = Path(directory)
    _provenance = dict(provenance or {})


def save_figure(fig: Any, name: str, caption: str, params: Mapping[str, Any],
                directory: Path | None = None) -> dict[str, str]:
    """Save ``fig`` as ``<name>.png`` and ``<name>.svg`` plus a ``<name>.json`` sidecar.

    Goes to the current run's ``figures/`` (see ``probes.notebook``) unless ``directory``
    is given. Returns the paths; in a notebook, also displays the caption under the figure.
    """
    directory = Path(directory or _directory or FIGURES_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    png, svg = directory / f"{name}.png", directory / f"{name}.svg"
    import matplotlib

    fig.savefig(png, dpi=150, bbox_inches="tight", metadata={"Software": None})
    # matplotlib draws random SVG element ids unless salted: salt with the name, so the
    # same data gives the same bytes.
    with matplotlib.rc_context({"svg.hashsalt": name}):
        fig.savefig(svg, bbox_inches="tight", metadata={"Date": None, "Creator": None})
    label = f"fig-{name}"
    atomic_write_json(directory / f"{name}.json", {"name": name, "label": label, "caption": caption,
                                                   "params": dict(params), "files": [png.name, svg.name],
                                                   **_provenance})
    try:
        from IPython.display import Markdown, display

        shown = ", ".join(f"`{k}={v!r}`" for k, v in params.items())
        display(Markdown(f"**Figure `{label}`.** {caption}  \n*Parameters:* {shown}. "
                         f"*Files:* `book/figures/{png.name}`, `book/figures/{svg.name}`."))
    except ImportError:  # pragma: no cover
        pass
    return {"png": str(png), "svg": str(svg), "label": label}
