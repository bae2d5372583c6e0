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
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.conftest import ROOT


def test_pip_install_gives_the_kit_the_command_and_the_ci_job(tmp_path: Path) -> None:
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
    package_files = _package_files(venv)
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
    assert verdicts[("FD", "fork:same-pause")]["label"] == "n/a"  # no FORK declared (its READDRESS reason stands for it)
    # this adapter saves only at the pause: a kill after e1 re-runs s1 on recovery
    assert verdicts[("EO", "crash:kill@s1.effect/latest")]["evidence"]["effect_counts"]["e1"] == 2

    # as a CI job: a JUnit report, and an exit status that reflects the verdicts
    ci = subprocess.run([str(venv / "bin" / "resume-contract"), "run", "mine", "--adapter", "my_adapter:PlainAdapter",
                         "--quick", "-p", 'protocols=["baseline","crash","fork"]', "-p", 'crash_hows=["kill"]',
                         "--fail-on", "x,U", "--junit-xml", "report.xml"],
                        cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert ci.returncode == 3, ci.stderr[-3000:]  # the two EO crash verdicts are U, and VO after the s2 kill
    assert "3 verdict(s) labelled U/✗ (--fail-on)" in ci.stderr
    suites = ET.parse(work / "report.xml").getroot()
    assert (suites.get("tests"), suites.get("failures"), suites.get("errors")) == ("15", "3", "0")  # 11 + 4 VO
    failed = [c for c in suites.iter("testcase") if c.find("failure") is not None]
    # the answer e2 fired on was not durable when the kill came (the adapter saves only at the pause): VO names it
    assert sorted(c.get("name") for c in failed) == ["EO crash:kill@s1.effect/latest [file]",
                                                     "EO crash:kill@s2.effect/latest [file]",
                                                     "VO crash:kill@s2.effect/latest [file]"]
    assert "effect-before-cause" in next(c for c in failed if c.get("name").startswith("VO")).find("failure").text
    assert "witness:" in failed[0].find("failure").text and "citation:" in failed[0].find("failure").text
    bad = subprocess.run([str(venv / "bin" / "resume-contract"), "run", "mine", "--adapter", "my_adapter:PlainAdapter",
                          "--fail-on", "maybe"], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --fail-on")

    # as a pytest plugin (entry point pytest11): one test per probe
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                          "pytest"], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-2000:]
    plugin = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "--resume-contract", "my_adapter:PlainAdapter", "--resume-contract-quick",
                             "--resume-contract-param", 'protocols=["baseline","crash","fork"]',
                             "--resume-contract-param", 'crash_hows=["kill"]', "--resume-contract-out", "plugin-out"],
                            cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert plugin.returncode == 1, plugin.stdout[-3000:]
    assert "2 failed, 2 passed, 1 skipped" in plugin.stdout, plugin.stdout[-3000:]
    assert (work / "plugin-out" / "my_adapter" / "verdicts.json").is_file()  # named after the module

    # nothing was written inside the installed package
    assert _package_files(venv) == package_files
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert not [p.name for p in site.iterdir() if p.name in ("runs", "kit-results", "plugin-out", "data")]


def _package_files(venv: Path) -> set[str]:
    site = next((venv / "lib").glob("python3*/site-packages"))
    return {p.relative_to(site).as_posix() for p in (site / "probes").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}
