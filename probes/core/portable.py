"""Receipts without the measuring machine's paths: one function that relativises them.

A receipt keeps what a child printed (tracebacks, stderr tails, error messages), and those
name the files they ran through by absolute path: the measuring clone, its virtualenv,
the interpreter's standard library, a side environment, the run's scratch directory. A
receipt must read the same wherever it was measured, so before a receipt is built every
string in it is passed through ``portable``, which rewrites each such prefix to a name:

* the project root           -> nothing: ``probes/kit/child.py``, relative to the checkout;
* the virtualenv (sys.prefix) -> ``<venv>``: ``<venv>/lib/python3.11/site-packages/...``;
* the side environments       -> ``<envs>``: ``<envs>/openai-agents-py311-<hash>/lib/...``
  (an environment's name says what it installs, so it is kept);
* the interpreter's prefix    -> ``<python>``: ``<python>/lib/python3.11/asyncio/runners.py``;
* the run's scratch directory -> ``<run>``: ``<run>/race.rep3/graph-run.json``;
* the temporary directory     -> ``<tmp>``, the home directory -> ``~`` (anything else).

Each prefix is matched as given and with its symlinks resolved (the clones' ``.venv`` is a
link to a shared one), the longest first, and only where a path starts (not inside a
longer name or a URL). Rewriting is idempotent. Tails of long text are cut at line ends
by ``tail`` (a count of lines, not of characters), so what is kept of a traceback does not
depend on how long the machine's paths were either.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from probes import PROJECT_ROOT

# The run's scratch directory, set by the campaign runner for the run (``run_directory``) and
# inherited by every child process, so text can be made portable where it is cut, too.
RUN_DIR_ENV = "RC_RUN_DIR"

# A prefix matches where a path starts: not after a character that continues a name or a URL.
_BEFORE = r"(?<![\w.~<>/-])"
_AFTER = r"(?=/|[^\w.-]|$)"


def _envs_dir() -> Path:  # as probes.core.envs computes it (that module imports more than this one may)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("RC_ENVS_DIR") or Path(cache) / "resume-contract" / "envs")


def anchors(run_dir: str | os.PathLike[str] | None = None) -> list[tuple[str, str]]:
    """(absolute prefix, its name), longest prefix first; the project root's name is empty."""
    run_dir = run_dir or os.environ.get(RUN_DIR_ENV)
    named: list[tuple[str | os.PathLike[str] | None, str]] = [
        (run_dir, "<run>"), (_envs_dir(), "<envs>"), (sys.prefix, "<venv>"), (sys.exec_prefix, "<venv>"),
        (PROJECT_ROOT, ""), (sys.base_prefix, "<python>"), (sys.base_exec_prefix, "<python>"),
        (tempfile.gettempdir(), "<tmp>"), (Path.home(), "~"),
    ]
    seen: dict[str, str] = {}
    for path, name in named:
        if not path:
            continue
        for form in (os.path.abspath(path), os.path.realpath(path)):
            if form != os.sep:
                seen.setdefault(form.rstrip(os.sep), name)
    return sorted(seen.items(), key=lambda item: -len(item[0]))


@lru_cache(maxsize=32)
def _pattern(table: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    alternatives = "|".join(re.escape(prefix) for prefix, _ in table)
    return re.compile(f"{_BEFORE}(?:{alternatives}){_AFTER}(/?)"), dict(table)


def portable_text(text: str, run_dir: str | os.PathLike[str] | None = None) -> str:
    """``text`` with every absolute prefix of this machine replaced by its name (see the module)."""
    pattern, names = _pattern(tuple(anchors(run_dir)))

    def name(match: re.Match[str]) -> str:
        prefix = match.group(0)[: len(match.group(0)) - len(match.group(1))]
        label = names[prefix]
        if label:
            return label + match.group(1)
        return "" if match.group(1) else "."  # the project root: a relative path, or "." alone

    return pattern.sub(name, text)


def portable(value: Any, run_dir: str | os.PathLike[str] | None = None) -> Any:
    """A JSON value (dicts, lists, strings, scalars) with ``portable_text`` applied to every string in it."""
    if isinstance(value, str):
        return portable_text(value, run_dir)
    if isinstance(value, dict):
        return {portable_text(k, run_dir) if isinstance(k, str) else k: portable(v, run_dir) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [portable(v, run_dir) for v in value]
    return value


@contextlib.contextmanager
def run_directory(path: str | os.PathLike[str]) -> Iterator[None]:
    """Name ``path`` ``<run>`` in this process and its children for the duration (``RC_RUN_DIR``)."""
    before = os.environ.get(RUN_DIR_ENV)
    os.environ[RUN_DIR_ENV] = os.fspath(path)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(RUN_DIR_ENV, None)
        else:
            os.environ[RUN_DIR_ENV] = before


def tail(text: str, lines: int, width: int = 1000) -> str:
    """The last ``lines`` lines of ``text``, each at most ``width`` characters (their start kept)."""
    kept = text.splitlines()[-lines:] if lines > 0 else []
    return "\n".join(line[:width] for line in kept)


# What a receipt may not contain: an absolute path of a measuring machine (or a part of one).
_ABSOLUTE = re.compile(r"(?<![\w.~<>-])/(?:work|root|tmp|home|usr|var|private|opt|Users)(?=/)")
_PACKAGES = re.compile(r"[^\s\"'()]*site-packages")  # a path through site-packages: fine only under a name
_NAMED = ("<venv>/", "<envs>/", "<python>/")


def absolute_paths(value: Any, root: str | os.PathLike[str] | None = PROJECT_ROOT) -> list[str]:
    """Every string in a JSON value that names an absolute path (or a site-packages directory
    not under ``<venv>``/``<envs>``/``<python>``), or contains ``root``: the receipt scan."""
    found: list[str] = []
    root_text = os.fspath(root) if root else None

    def walk(v: Any) -> None:
        if isinstance(v, str):
            unnamed = any(not m.group(0).startswith(_NAMED) for m in _PACKAGES.finditer(v))
            if unnamed or _ABSOLUTE.search(v) or (root_text and root_text in v):
                found.append(v)
        elif isinstance(v, dict):
            for k, item in v.items():
                walk(k)
                walk(item)
        elif isinstance(v, (list, tuple)):
            for item in v:
                walk(item)

    walk(value)
    return found


def receipts_with_absolute_paths(directory: str | os.PathLike[str]) -> dict[str, list[str]]:
    """Every JSON file under ``directory`` (receipts, views, indexes) naming a machine's path:
    its path relative to ``directory`` -> the offending strings (``absolute_paths``)."""
    import json

    base = Path(directory)
    found: dict[str, list[str]] = {}
    for path in sorted(base.rglob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue  # not a receipt: a malformed one is load_receipt's to report
        bad = absolute_paths(data)
        if bad:
            found[str(path.relative_to(base))] = bad
    return found
