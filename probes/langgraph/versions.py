"""The version sweep: FD and CV on other LangGraph releases, each in its own venv.

A release runs in the same cached side environment the regression atlas uses
(``probes.atlas.envs.side_env``: ``~/.cache/resume-contract/envs/langgraph-<version>-py<XY>-<hash>``, created once
with pip by ``probes.core.envs.SideEnv`` and reused), where ``version_script.py`` runs
in a fresh interpreter. Delete the directory to rebuild it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from probes.core.errors import HarnessError, UsageError

SCRIPT = Path(__file__).with_name("version_script.py")


def ensure_env(version: str) -> Path:
    """Create (once) the environment with ``langgraph==version`` and savers that fit it."""
    from probes.atlas.envs import side_env

    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise UsageError(f"versions: {version!r} is not a release number like 1.0.5; run `pip index versions langgraph`")
    return side_env(version).ensure().path


def run_version_probe(version: str, workdir: Path) -> dict[str, Any]:
    env = ensure_env(version)
    proc = subprocess.run([str(env / "bin" / "python"), str(SCRIPT)], capture_output=True, text=True, timeout=300,
                          cwd=workdir)
    if proc.returncode != 0:
        raise HarnessError(f"version probe for langgraph {version} failed: {proc.stderr.strip()[-600:]}")
    out = json.loads(proc.stdout)
    if out.get("langgraph") != version:
        raise HarnessError(f"venv for {version} has langgraph {out.get('langgraph')}")
    return out
