"""Framework releases -> cached side environments (``probes.core.envs.SideEnv``).

Every release of a framework (``frameworks.py``) runs its cells in an environment
holding that release and the framework's companions; a framework whose pin the main
environment already holds (``Framework.main_env``) runs the pin there (:class:`MainEnv`).

A release is either a version number from PyPI (``1.2.9``) or a local path: a built
wheel (``dist/langgraph-1.2.25-py3-none-any.whl``) or a source checkout (the
directory holding LangGraph's ``pyproject.toml``, e.g. ``~/langgraph/libs/langgraph``),
so a maintainer can run the atlas on a fix before releasing it. The checkpoint
packages are not pinned: pip picks the newest ones each release resolves with (what a
user installing that release today gets); the receipts record what was installed.

A local path's environment is named by a hash of its contents, so editing the
checkout gives a new environment instead of silently reusing a stale one.
"""

from __future__ import annotations

import hashlib
import importlib
import re
from pathlib import Path

import sys
from dataclasses import dataclass

from probes.studies.atlas.frameworks import Framework, framework
from probes.core.envs import SideEnv
from probes.core.errors import UsageError

# The saver packages every LangGraph cell may need, besides LangGraph itself.
COMPANIONS = framework("langgraph").companions
_VERSION = re.compile(r"\d+(\.\d+)+([a-z]+\d+)?(\.post\d+)?(\.dev\d+)?")


def is_local(release: str) -> bool:
    return not _VERSION.fullmatch(release)


def check_release(release: str, dist: str = "langgraph") -> None:
    """Usage error (before any work) for something that is neither a version nor a usable path."""
    if not is_local(release):
        return
    path = Path(release).expanduser()
    if path.is_file() and path.suffix == ".whl":
        return
    if path.is_dir() and (path / "pyproject.toml").exists():
        return
    raise UsageError(f"versions: {release!r} is neither a release number like 1.2.9 (see `pip index versions "
                     f"{dist}`) nor a {dist} wheel or checkout directory with a pyproject.toml")


def _content_hash(path: Path) -> str:
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(
        p for p in path.rglob("*") if p.is_file() and p.suffix in (".py", ".toml", ".cfg", ".txt", ".typed")
        and "__pycache__" not in p.parts and ".git" not in p.parts)
    for f in files:
        digest.update(str(f.relative_to(path) if f != path else f.name).encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class MainEnv:
    """The main environment, for a release the lock already installs (same interface as SideEnv)."""

    name: str = "main"

    @property
    def path(self) -> Path:
        return Path(sys.prefix)

    @property
    def python(self) -> Path:
        return Path(sys.executable)

    def ensure(self, timeout: float = 0) -> "MainEnv":
        return self


def side_env(release: str, fw: str | Framework = "langgraph") -> SideEnv | MainEnv:
    """The cached environment that runs ``fw``'s atlas cells for ``release``."""
    f = framework(fw) if isinstance(fw, str) else fw
    check_release(release, f.dist)
    if f.main_env and release == f.pin:
        return MainEnv()
    if f.pin_env and release == f.pin:  # the framework's own campaign already built it: reuse, don't reinstall
        module, _, name = f.pin_env.partition(":")
        try:
            return getattr(importlib.import_module(module), name)
        except ModuleNotFoundError as exc:  # a checkout without that campaign: the atlas's own environment
            if not module.startswith(exc.name or "\0"):
                raise
    if not is_local(release):
        return SideEnv(f"{f.name}-{release}", f.requirements(release))
    path = Path(release).expanduser().resolve()
    return SideEnv(f"{f.name}-local-{_content_hash(path)}", (str(path), *f.companions))


def label(release: str) -> str:
    """The column label: the version, or ``local:<name>`` for a path."""
    return release if not is_local(release) else f"local:{Path(release).name}"
