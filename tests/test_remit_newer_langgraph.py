"""REMIT's own tests, run again on the newer LangGraph release (``probes.studies.remit.releases.NEWER``).

The side environment (``probes.studies.remit.releases.newer_env``: a cached venv with exactly
the newer LangGraph and checkpoint packages, and the test tools at the lock's versions)
runs pytest over REMIT's tests -- the frame walk, the claim channel and the carried
write (units, carry, langgraph_reads: 1.2.24's second read when a run starts), fork intent, inspection that takes no claim, the stray resume,
racers after inspection and the refusal of misuse (ref, units, first use, race pool),
the decisions' contracts, the model-based stateful test and LangGraph's checkpointer
conformance suite -- against this checkout's ``remit_ref``. The environment is built
from PyPI on first use (``network``); if it cannot be built the test is skipped and says
why.
"""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from probes.core.errors import HarnessError
from probes.studies.remit import releases
from tests.conftest import ROOT

REMIT_TESTS = ("tests/test_remit_units.py", "tests/test_remit_ref.py", "tests/test_remit_carry.py",
               "tests/test_remit_core.py", "tests/test_remit_first_use.py", "tests/test_remit_race_pool.py",
               "tests/test_remit_stateful.py", "tests/test_remit_conformance.py", "tests/test_remit_langgraph_reads.py")


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_remit_tests_pass_on_the_newer_langgraph(tmp_path: Path) -> None:
    env = releases.newer_env()
    try:
        env.ensure()
    except (HarnessError, subprocess.TimeoutExpired, OSError) as exc:
        pytest.skip(f"the side environment {env.name} could not be built (it installs from PyPI): {exc}")
    assert env.versions(list(releases.LANGGRAPH_PACKAGES)) == releases.NEWER
    junit = tmp_path / "junit.xml"
    child_env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    child_env["PYTHONPATH"] = str(ROOT)  # remit_ref, probes and tests of this checkout; nothing of the main venv
    proc = subprocess.run([str(env.python), "-m", "pytest", "-q", f"--junitxml={junit}",
                           *REMIT_TESTS], cwd=ROOT, env=child_env, capture_output=True, text=True, timeout=3300)
    suite = ET.parse(junit).getroot().find("testsuite") if junit.exists() else None
    assert suite is not None, proc.stdout[-3000:] + proc.stderr[-3000:]
    counts = {key: int(suite.get(key, 0)) for key in ("tests", "failures", "errors", "skipped")}
    assert proc.returncode == 0 and counts["failures"] == counts["errors"] == 0, proc.stdout[-6000:]
    assert counts["tests"] - counts["skipped"] > 100, counts  # every file ran, none silently skipped away
    # it was this checkout's REMIT that ran there, on the newer LangGraph
    probe = subprocess.run([str(env.python), "-c", "import remit_ref, langgraph.version as v; "
                            "print(remit_ref.__file__); print(v.__version__)"],
                           cwd=ROOT, env=child_env, capture_output=True, text=True, timeout=120)
    where, version = probe.stdout.split()
    assert Path(where).parent == ROOT / "remit_ref" and version == releases.NEWER["langgraph"]


def test_the_book_states_the_tested_releases_once_from_the_pins() -> None:
    """The REMIT API page includes the generated sentence; no page restates a release by hand, and the
    pinned releases named are the ones this venv (where the rest of the suite runs) has installed."""
    import importlib.metadata as md
    import re

    from probes import pages

    text = pages.remit_releases_fragment()
    for versions in (releases.pinned(), releases.NEWER):
        for name, version in versions.items():
            assert f"{name} {version}" in text
    assert releases.pinned() == {name: md.version(name) for name in releases.LANGGRAPH_PACKAGES}
    api = (ROOT / "book" / "remit-api.md").read_text()
    assert "```{include} generated/remit-releases.md\n```" in api
    for page in (ROOT / "book" / "remit-api.md", ROOT / "remit" / "README.md", ROOT / "remit" / "CHANGELOG.md"):
        stated = {v for versions in (releases.pinned(), releases.NEWER) for v in versions.values()
                  if re.search(rf"(?<![\d.]){re.escape(v)}(?![\d.])", page.read_text())}
        assert not stated, (page.name, stated)
