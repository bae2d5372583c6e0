"""Executing a chapter notebook (papermill), shared by the reproduction driver and the book.

A chapter is executed from its notebook with a campaign's parameters, or re-rendered from a
finished run's receipts (``render_from``: measuring nothing). Both ``probes.reproduce`` and
``probes.book`` need it; it lives below both so neither imports the other.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

from probes import NOTEBOOKS_DIR, PROJECT_ROOT
from probes.core.atomic import atomic_write_bytes
from probes.core.errors import UsageError
from probes.core.portable import portable
from probes.core.runs import FIGURES


GENERATED_NOTEBOOKS = PROJECT_ROOT / ".cache" / "notebooks"


def notebook_path(name: str) -> Path:
    """A campaign's notebook: the committed ``notebooks/<name>.ipynb``, else the one its campaign
    generates from a template (every kit framework's chapter: one template, so a new parameter or
    cell is one change, not one per framework), written under ``.cache/notebooks/`` when its
    content changed (so its bytes, which a run's chapter stamp hashes, stay put)."""
    committed = NOTEBOOKS_DIR / f"{name}.ipynb"
    if committed.exists():
        return committed
    from probes import campaigns

    template = getattr(campaigns.get(name), "chapter_template", None) if name in campaigns.available() else None
    if template is None:
        return committed  # absent: the caller says so
    if template != "kit":
        raise ValueError(f"campaign {name} names an unknown chapter template {template!r}")
    from probes.kit.chapter import notebook

    generated = GENERATED_NOTEBOOKS / f"{name}.ipynb"
    text = json.dumps(notebook(name), indent=1, ensure_ascii=False) + "\n"
    if not generated.exists() or generated.read_text() != text:
        atomic_write_bytes(generated, text.encode())
    return generated


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


def running_kernels() -> list[int]:
    """The pids of the notebook kernels this process started (papermill's ipykernel children).

    jupyter_client starts each kernel in a session of its own, so a Ctrl-C or SIGTERM that
    reaches this process never reaches them: they must be stopped by name.
    """
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # the field after the parenthesised command name: state, then the parent's pid
            ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if ppid == me and b"ipykernel_launcher" in cmdline:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    """Running (an exited kernel stays a zombie until papermill's thread reaps it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def stop_kernels(grace_s: float = 20.0) -> list[int]:
    """Stop every kernel this process started, with what each was running.

    SIGINT first: the kernel turns it into KeyboardInterrupt inside the executing cell, so the
    campaign unwinds (its scratch directories, child processes and embedded PostgreSQL are
    stopped by their own ``finally`` blocks). Whatever is still alive after ``grace_s`` is
    SIGKILLed with its whole process group (the kernel's session). Returns the kernels' pids.
    """
    kernels = running_kernels()
    for pid in kernels:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(map(_alive, kernels)):
        time.sleep(0.1)
    for pid in kernels:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    return kernels
