"""The guide's example CI job runs, as written, against one real framework.

``book/add-a-framework.md`` gives a framework maintainer a GitHub Actions job to copy. This
test takes that YAML block from the page itself (so the page and the test cannot drift
apart) and executes its ``run:`` steps in order, with bash as the runner does, in a fresh
virtual environment and a directory outside this checkout that plays the maintainer's
repository. Only what the page marks as a placeholder is replaced:

* ``git+<this repository>`` is this checkout as an sdist carries it (a copy, so the build
  writes nothing into the checkout);
* the maintainer's repository (``actions/checkout``, then ``pip install -e .``) is a tiny
  package ``my_package`` that depends on one real framework, Microsoft Agent Framework at
  the pin of ``env/requirements.lock``, and whose ``my_package/kit_adapter.py`` is the
  page's own example adapter (its ``my_maf_adapter.py`` block) exported as ``MyAdapter``:
  so the job's ``my_fw`` and ``my_package.kit_adapter:MyAdapter`` run verbatim.

MAF is the framework because it is the cheapest hermetic one: it runs in-process on the
``file`` backend (no server, no side environment). The page's pytest-plugin command runs
in the same environment afterwards. What is asserted is what the issue's done-when asks:
the exit status follows ``--fail-on`` (computed independently from ``verdicts.json``), the
JUnit file holds one case per property x path x backend, the plugin reports one test per
probe, results land under ``kit-results/``, and nothing is written inside site-packages.

Needs PyPI (``network``): the framework, pytest and the build backend are installed from it
(pip's cache is used).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

pytestmark = [pytest.mark.network, pytest.mark.slow]

GUIDE = ROOT / "book" / "add-a-framework.md"
LOCK = ROOT / "env" / "requirements.lock"
FRAMEWORK = "agent-framework-core"
REPOSITORY = "git+<this repository>"  # the page's placeholder for this repository
# The job's `uses:` steps, and what each stands for here (an unknown one fails the test: the
# page changed and this test must learn what the new step means).
KNOWN_ACTIONS = ("actions/checkout", "actions/setup-python", "actions/upload-artifact")
FAILING = {"✗", "U"}  # the labels of the job's --fail-on 'x,U'


def _fenced(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, re.M | re.S)


def example_job() -> dict[str, Any]:
    """The page's GitHub Actions workflow: the one fenced YAML block under "Run it in your CI"."""
    section = GUIDE.read_text().split("## Run it in your CI", 1)[1].split("\n## ", 1)[0]
    [block] = _fenced(section, "yaml")
    return yaml.safe_load(block)


def plugin_command() -> str:
    """The page's pytest-plugin command, from its "As tests in your own pytest suite" section."""
    section = GUIDE.read_text().split("### As tests in your own pytest suite", 1)[1].split("\n#", 1)[0]
    [command] = [c for c in re.findall(r"`([^`]+)`", section.replace("\n", " ")) if c.startswith("pytest ")]
    return command


def example_adapter() -> str:
    """The page's complete example adapter (its ``# file: my_maf_adapter.py`` block)."""
    [body] = [b for b in _fenced(GUIDE.read_text(), "python") if b.startswith("# file: my_maf_adapter.py\n")]
    return body


def locked(distribution: str) -> str:
    """``NAME==VERSION`` of a distribution as env/requirements.lock pins it."""
    for line in LOCK.read_text().splitlines():
        name, _, version = line.split(";")[0].strip().partition("==")
        if name.lower() == distribution.lower():
            return f"{name}=={version.strip()}"
    raise AssertionError(f"{distribution} is not pinned in {LOCK}")


def _repository_source(dest: Path) -> Path:
    """What an sdist of this repository carries for the kit (as tests/test_kit_install.py builds it)."""
    shutil.copytree(ROOT / "probes", dest / "probes", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    return dest


def _maintainer_repository(dest: Path) -> Path:
    """The maintainer's repository the job checks out: a package with one real framework and its adapter."""
    package = dest / "my_package"
    package.mkdir(parents=True)
    (dest / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "my-package"\nversion = "0.0.1"\ndependencies = ["{locked(FRAMEWORK)}"]\n\n'
        '[tool.setuptools]\npackages = ["my_package"]\n')
    (package / "__init__.py").write_text('"""A framework maintainer\'s package (the CI example\'s stand-in)."""\n')
    (package / "kit_adapter.py").write_text(
        example_adapter() + "\n\nMyAdapter = GuideAdapter  # the name the example job uses\n")
    return dest


def _site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def _snapshot(site: Path) -> dict[str, tuple[int, int]]:
    """Every file of site-packages (bytecode caches aside) with its size and mtime."""
    return {p.relative_to(site).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in site.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def _interpreter(version: str) -> str:
    """The Python the job's setup-python step asks for."""
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return sys.executable
    found = shutil.which(f"python{version}")
    assert found, f"the example job asks for Python {version}, which this machine does not have"
    return found


def _job_env(tmp: Path, venv: Path) -> dict[str, str]:
    """The runner's environment after setup-python: the venv's bin first, a HOME of its own.
    pip's cache, index and proxy settings are passed on (CI and this machine reach PyPI through them)."""
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp / "home"), "RC_NO_PROGRESS": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR")
           or str(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pip")}
    env.update({k: v for k, v in os.environ.items()
                if (k.startswith("PIP_") and k not in env) or k.lower() in ("http_proxy", "https_proxy", "no_proxy")})
    return env


def _verdicts(results: Path) -> dict[str, list[dict[str, Any]]]:
    view = json.loads((results / "verdicts.json").read_text())
    return {probe: entry["verdicts"] for probe, entry in view["probes"].items()}


def test_the_guides_example_job_runs_end_to_end_on_agent_framework(tmp_path: Path) -> None:
    job = example_job()
    [conformance] = job["jobs"].values()
    steps = conformance["steps"]
    assert [s["uses"].split("@")[0] for s in steps if "uses" in s] == list(KNOWN_ACTIONS)
    runs = [s["run"] for s in steps if "run" in s]
    assert sum(REPOSITORY in r for r in runs) == 1, runs
    assert "pip install -e ." in runs, runs

    source = _repository_source(tmp_path / "src")
    work = _maintainer_repository(tmp_path / "checkout")  # actions/checkout
    (tmp_path / "home").mkdir()
    [python] = [s["with"]["python-version"] for s in steps if s.get("uses", "").startswith("actions/setup-python")]
    venv = tmp_path / "venv"  # actions/setup-python: a fresh interpreter with pip on PATH
    subprocess.run([_interpreter(str(python)), "-m", "venv", str(venv)], check=True, timeout=300)
    env = _job_env(tmp_path, venv)
    site = _site_packages(venv)

    # the run: steps, in order, as the runner runs them (bash -e); after a failing step only
    # `if: always()` steps run
    before_kit: dict[str, tuple[int, int]] | None = None
    failed: subprocess.CompletedProcess[str] | None = None
    kit_step: subprocess.CompletedProcess[str] | None = None
    artifact: dict[str, Any] | None = None
    for step in steps:
        if failed is not None and step.get("if") != "always()":
            continue
        if "uses" in step:
            if step["uses"].startswith("actions/upload-artifact"):
                artifact = step["with"]
            continue
        script = step["run"].replace(REPOSITORY, str(source))
        if script.startswith("resume-contract "):
            before_kit = _snapshot(site)
        proc = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=env, capture_output=True, text=True,
                              timeout=1800)
        if script.startswith("resume-contract "):
            kit_step = proc
        elif proc.returncode != 0:
            pytest.fail(f"step {script!r} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
        if proc.returncode != 0:
            failed = proc
    assert kit_step is not None and before_kit is not None, "the job has no resume-contract step"
    assert _snapshot(site) == before_kit, "the job's run wrote inside site-packages"

    # only the kit and the one framework (with its own dependencies): no other framework of the paper
    listed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"], env=env,
                            capture_output=True, text=True, check=True).stdout
    names = {d["name"].lower(): d["version"] for d in json.loads(listed)}
    assert {"resume-contract", FRAMEWORK, "my-package"} <= set(names)
    assert names[FRAMEWORK] == locked(FRAMEWORK).split("==")[1]
    assert not set(names) & {"langgraph", "crewai", "dbos", "google-adk", "openai-agents", "strands-agents",
                             "agno", "temporalio", "autogen-agentchat", "llama-index-workflows"}, names

    # the exit status follows --fail-on 'x,U': 3 when a verdict is ✗ or U, else 0 (never a harness error)
    assert kit_step.returncode in (0, 3), kit_step.stdout[-2000:] + kit_step.stderr[-3000:]
    args = shlex.split(kit_step.args[-1])
    name, out = args[2], work / "kit-results" / args[2]
    verdicts = _verdicts(out)
    assert verdicts, kit_step.stderr[-3000:]
    bad = [v for vs in verdicts.values() for v in vs if v["label"] in FAILING]
    # the page's own account: the kill at s2.effect makes e2 fire twice, uncited (U) -- so the
    # smoke profile has a failing verdict and the job exercises --fail-on's exit status 3
    assert ("EO", "crash:kill@s2.effect/latest-checkpoint") in {(v["property"], v["path"]) for v in bad}
    assert kit_step.returncode == (3 if bad else 0), kit_step.stdout[-2000:] + kit_step.stderr[-3000:]
    if bad:
        assert f"{len(bad)} verdict(s) labelled U/✗ (--fail-on)" in kit_step.stderr, kit_step.stderr[-3000:]
    assert name == "my_fw" and (out / "_campaign.json").is_file()

    # the JUnit report: one test case per property x path x backend, failures exactly the --fail-on ones
    junit = work / args[args.index("--junit-xml") + 1]
    assert junit.is_file()
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    expected = [f"{v['property']} {v['path']} [{v['backend']}]" for vs in verdicts.values() for v in vs]
    assert len(expected) == len(set(expected))  # smoke: one repetition, so no case hides another
    assert sorted(c.get("name") for c in cases) == sorted(expected)
    assert sorted(c.get("name") for c in cases if c.find("failure") is not None) == sorted(
        f"{v['property']} {v['path']} [{v['backend']}]" for v in bad)
    assert not [c for c in cases if c.find("error") is not None]

    # the artifact step uploads what the job wrote: the results directory and the JUnit report
    assert artifact is not None
    uploaded = {(work / line.strip()).resolve() for line in artifact["path"].splitlines() if line.strip()}
    assert uploaded == {(work / "kit-results").resolve(), junit.resolve()}, artifact

    # the page's pytest-plugin command, in the same environment (pytest at the lock's pin)
    subprocess.run(["bash", "-e", "-c", f"pip install --quiet '{locked('pytest')}'"], cwd=work, env=env,
                   check=True, capture_output=True, timeout=600)
    before_plugin = _snapshot(site)
    plugin = subprocess.run(["bash", "-e", "-c", plugin_command()], cwd=work, env=env, capture_output=True,
                            text=True, timeout=1800)
    adapter = next(a for a in shlex.split(plugin_command()) if ":" in a)
    probes = _verdicts(work / "kit-results" / adapter.partition(":")[0].split(".")[-1])
    assert set(probes) == set(verdicts)  # the same profile: the same probes as the job's run
    failing = sum(any(v["label"] in FAILING for v in vs) for vs in probes.values())
    skipped = sum(bool(vs) and all(v["label"] == "n/a" for v in vs) for vs in probes.values())
    passed = len(probes) - failing - skipped
    assert plugin.returncode == (1 if failing else 0), plugin.stdout[-3000:]
    summary = ", ".join(f"{n} {word}" for n, word in ((failing, "failed"), (passed, "passed"), (skipped, "skipped"))
                        if n)
    assert summary in plugin.stdout.splitlines()[-1], plugin.stdout[-3000:]

    # results only under the job's kit-results/ (nothing inside site-packages: asserted after each run)
    assert _snapshot(site) == before_plugin, "the plugin's run wrote inside site-packages"
    assert not (work / "runs").exists() and not (tmp_path / "home" / "runs").exists()
