"""The version sweep: FD and CV on other LangGraph releases, each in its own venv.

A release is installed on demand into ``.cache/langgraph-envs/<version>`` (gitignored)
with the ordinary pip client, then ``version_script.py`` runs there in a fresh
interpreter. The venv is reused by later runs; delete the directory to rebuild it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from probes import PROJECT_ROOT
from probes.core.errors import HarnessError, UsageError

ENVS = PROJECT_ROOT / ".cache" / "langgraph-envs"
SCRIPT = Path(__file__).with_name("version_script.py")


def _python(env: Path) -> Path:
    return env / "bin" / "python"


def ensure_env(version: str) -> Path:
    """Create (once) a venv with ``langgraph==version`` and a SQLite saver that fits it."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise UsageError(f"versions: {version!r} is not a release number like 1.0.5; run `pip index versions langgraph`")
    env = ENVS / version
    marker = env / ".complete"
    if marker.exists():
        return env
    env.parent.mkdir(parents=True, exist_ok=True)
    steps = [[sys.executable, "-m", "venv", "--clear", str(env)],
             [str(_python(env)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
              f"langgraph=={version}", "langgraph-checkpoint-sqlite", "pydantic"]]
    for cmd in steps:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise HarnessError(f"installing langgraph {version} failed: {proc.stderr.strip()[-600:]}")
    marker.write_text(version)
    return env


def run_version_probe(version: str, workdir: Path) -> dict[str, Any]:
    env = ensure_env(version)
    proc = subprocess.run([str(_python(env)), str(SCRIPT)], capture_output=True, text=True, timeout=300,
                          cwd=workdir)
    if proc.returncode != 0:
        raise HarnessError(f"version probe for langgraph {version} failed: {proc.stderr.strip()[-600:]}")
    out = json.loads(proc.stdout)
    if out.get("langgraph") != version:
        raise HarnessError(f"venv for {version} has langgraph {out.get('langgraph')}")
    return out
