"""Side environments: a framework release that cannot share the main venv gets its own.

Used wherever a probe must run against another release than the pinned one (the
LangGraph version sweep, the regression atlas, version drift) or against a framework
whose newest release does not co-resolve with the pinned lock. An environment is
named by what it installs: ``.cache/envs/<name>-<sha256(requirements)[:12]>``
(git-ignored), created once with the ordinary ``venv`` and ``pip`` and reused by every
later run; a ``.complete`` marker is written last, so an interrupted install is
redone, never used half-built. Delete the directory to rebuild it.

They live in the user's cache (``$XDG_CACHE_HOME/resume-contract/envs``, else
``~/.cache/resume-contract/envs``; ``RC_ENVS_DIR`` overrides), not in the checkout: an
environment is named by exactly what it installs, so every clone on the machine -- a
CI run's fresh clone included -- reuses it instead of installing it again.

The project root is put on the side interpreter's ``PYTHONPATH`` so that a probe
running there can import the harness core (``probes.core`` imports only the standard
library at module level) -- but nothing of the main venv's site-packages.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from probes import PROJECT_ROOT
from probes.core.errors import HarnessError

def _default_envs_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "resume-contract" / "envs"


ENVS_DIR = Path(os.environ.get("RC_ENVS_DIR") or _default_envs_dir())


@dataclass(frozen=True)
class SideEnv:
    """A cached venv with exactly ``requirements`` installed (pip requirement strings)."""

    name: str
    requirements: tuple[str, ...]

    @property
    def key(self) -> str:
        return hashlib.sha256("\n".join(self.requirements).encode()).hexdigest()[:12]

    @property
    def path(self) -> Path:
        # the interpreter's version is part of what is installed: another Python, another env
        return ENVS_DIR / f"{self.name}-py{sys.version_info[0]}{sys.version_info[1]}-{self.key}"

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def ready(self) -> bool:
        return (self.path / ".complete").exists()

    def ensure(self, timeout: float = 1800) -> "SideEnv":
        """Create the venv once (under a lock: parallel probes wait, never race)."""
        if self.ready:
            return self
        ENVS_DIR.mkdir(parents=True, exist_ok=True)
        with _locked(ENVS_DIR / f".{self.name}-{self.key}.lock"):
            if self.ready:
                return self
            shutil.rmtree(self.path, ignore_errors=True)  # a half-built one from a killed install
            steps = [[sys.executable, "-m", "venv", str(self.path)],
                     [str(self.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                      *self.requirements]]
            for cmd in steps:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
                if proc.returncode != 0:
                    raise HarnessError(f"installing side environment {self.name} ({' '.join(self.requirements)}) "
                                       f"failed: {proc.stderr.strip()[-600:]}")
            (self.path / ".complete").write_text(json.dumps(self.versions(), sort_keys=True))
        return self

    def versions(self, names: Sequence[str] | None = None) -> dict[str, str | None]:
        """Installed versions in this environment (all distributions, or ``names``)."""
        code = ("import importlib.metadata as m, json, sys\n"
                "names = json.loads(sys.argv[1])\n"
                "if names is None: names = sorted({d.metadata['Name'] for d in m.distributions()})\n"
                "out = {}\n"
                "for n in names:\n"
                "    try: out[n] = m.version(n)\n"
                "    except m.PackageNotFoundError: out[n] = None\n"
                "print(json.dumps(out, sort_keys=True))\n")
        proc = subprocess.run([str(self.python), "-c", code, json.dumps(list(names) if names else None)],
                              capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise HarnessError(f"side environment {self.name}: cannot list versions: {proc.stderr.strip()[-300:]}")
        return json.loads(proc.stdout)

    def run_json(self, module: str, args: Sequence[str] = (), cwd: Path | None = None,
                 timeout: float = 600, env: dict[str, str] | None = None) -> Any:
        """Run ``python -m module args`` here; its stdout's last line must be one JSON value."""
        self.ensure()
        child_env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
        child_env["PYTHONPATH"] = str(PROJECT_ROOT)
        child_env.update(env or {})
        proc = subprocess.run([str(self.python), "-m", module, *args], capture_output=True, text=True,
                              timeout=timeout, cwd=str(cwd) if cwd else None, env=child_env)
        if proc.returncode != 0:
            raise HarnessError(f"{module} in side environment {self.name} exited {proc.returncode}: "
                               f"{proc.stderr.strip()[-600:]}")
        lines = [line for line in proc.stdout.splitlines() if line.strip()]
        if not lines:
            raise HarnessError(f"{module} in side environment {self.name} printed nothing")
        return json.loads(lines[-1])


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
