"""``pip install`` of this repository gives the kit and its command, without any framework.

A fresh virtual environment gets the repository installed (no dependencies are pulled:
the kit imports only the standard library), then runs the kit on a stranger's adapter
that uses no framework at all, from outside the checkout.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_pip_install_gives_the_kit_and_the_command(tmp_path: Path) -> None:
    # what an sdist of the repository carries for the package (a copy: the build must not write
    # build/ or *.egg-info into the checkout)
    src = tmp_path / "src"
    shutil.copytree(ROOT / "probes", src / "probes", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                          "--disable-pip-version-check", str(src)], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-2000:]
    listed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
                            capture_output=True, text=True, check=True).stdout
    names = {d["name"].lower() for d in json.loads(listed)}
    assert "resume-contract" in names
    assert not names & {"langgraph", "crewai", "dbos", "agent-framework-core", "pydantic"}, names
    work = tmp_path / "user"
    work.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "plain_adapter.py", work / "my_adapter.py")
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "RC_NO_PROGRESS": "1", "HOME": str(tmp_path)}
    run = subprocess.run([str(venv / "bin" / "resume-contract"), "run", "mine", "--adapter", "my_adapter:PlainAdapter",
                          "--quick", "-p", 'protocols=["baseline","crash","fork"]', "-p", 'crash_hows=["kill"]'],
                         cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    view = json.loads((work / "kit-results" / "mine" / "verdicts.json").read_text())
    verdicts = {(v["property"], v["path"]): v for p in view["probes"].values() for v in p["verdicts"]}
    assert verdicts[("EO", "baseline:yes")]["label"] == "✓"
    assert verdicts[("FD", "fork:same-pause")]["label"] == "n/a"  # no READDRESS declared
    # this adapter saves only at the pause: a kill after e1 re-runs s1 on recovery
    assert verdicts[("EO", "crash:kill@s1.effect/latest")]["evidence"]["effect_counts"]["e1"] == 2
