"""Executing a chapter notebook (papermill), shared by the reproduction driver and the book.

A chapter is executed from its notebook with a campaign's parameters, or re-rendered from a
finished run's receipts (``render_from``: measuring nothing). Both ``probes.reproduce`` and
``probes.book`` need it; it lives below both so neither imports the other.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

from probes import NOTEBOOKS_DIR, PROJECT_ROOT
from probes.core.atomic import atomic_write_bytes
from probes.core.errors import UsageError
from probes.core.portable import portable
from probes.core.runs import FIGURES


def notebook_path(name: str) -> Path:
    return NOTEBOOKS_DIR / f"{name}.ipynb"


@contextlib.contextmanager
def _environ(**values: str | None) -> Iterator[None]:
    """Set (a value) or leave alone (None) these environment variables for the block, then restore them."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update({k: v for k, v in values.items() if v is not None})
    try:
        yield
    finally:
        for k, v in before.items():
            if values[k] is None:
                continue
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def execute_notebook(name: str, params: dict[str, Any], target: Path, render_from: Path | None = None) -> None:
    """papermill into a temp file, then an atomic rename: a chapter is never half-written.

    ``render_from`` re-renders the chapter from the results in that directory, measuring
    nothing (``RC_RENDER_FROM``); its figures go to that run's ``figures/`` (``RC_FIGURES_DIR``),
    where the book stages them from.
    """
    import papermill

    source = notebook_path(name)
    if not source.exists():
        raise UsageError(f"campaign {name} has no notebook at {source}")
    rendering = render_from is not None
    with _environ(RC_RENDER_FROM=str(render_from) if rendering else None,
                  RC_FIGURES_DIR=str(Path(render_from) / FIGURES) if rendering else None):
        with tempfile.TemporaryDirectory(prefix="rc-nb-") as tmp:
            out = Path(tmp) / f"{name}.ipynb"
            # capture_fd_output=False: progress bars the campaign writes to the process's
            # stderr reach the terminal, not the chapter.
            papermill.execute_notebook(str(source), str(out), parameters=params, kernel_name="python3",
                                       progress_bar=False, cwd=str(PROJECT_ROOT),
                                       extra_arguments=["--IPKernelApp.capture_fd_output=False",
                                                        "--IPKernelApp.log_level=ERROR"])
            # papermill records its input and output paths, and cells may print this machine's paths
            # (warnings, tracebacks): the chapter names them as a receipt does (probes.core.portable)
            chapter = portable(json.loads(out.read_text()), Path(target).parent)
            atomic_write_bytes(target, (json.dumps(chapter, indent=1, ensure_ascii=False) + "\n").encode())
