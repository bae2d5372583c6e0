"""Shared fixtures: a sandbox so tests never touch the reference run or this machine's runs."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Hermetic by default: no test writes into runs/ (this machine's runs) or figures; the
# reference run in data/reference/ is only ever read.
# (Set before any test module imports probes, which reads these at import time.)
_SESSION_DIR = Path(tempfile.mkdtemp(prefix="rc-tests-"))
HERMETIC = {
    "RC_RUNS_DIR": str(_SESSION_DIR / "runs"),
    "RC_FIGURES_DIR": str(_SESSION_DIR / "figures"),
}
os.environ.update(HERMETIC)
SELFTEST = ("selftest_a=tests.fixtures.selftest:CAMPAIGN_A,"
            "selftest_b=tests.fixtures.selftest:CAMPAIGN_B")


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment for running the driver against the self-test campaigns in tmp_path."""
    env = {
        "RC_EXTRA_CAMPAIGNS": SELFTEST,
        "RC_NOTEBOOKS_DIR": str(ROOT / "tests" / "fixtures" / "notebooks"),
        "RC_RUNS_DIR": str(tmp_path / "runs"),
        "RC_REFERENCE_DIR": str(tmp_path / "reference"),
        "RECEIPTS": str(tmp_path / "receipts"),  # an explicit results root for run_campaign(..., root)
        "RC_SELFTEST_LEDGER": str(tmp_path / "runs.sqlite"),
        "RC_SELFTEST_MARKER": str(tmp_path / "blocked"),
        "RC_NO_PROGRESS": "1",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    import probes.core.runs as runs  # already imported by now: point it at the sandbox too
    monkeypatch.setattr(runs, "RUNS_DIR", Path(env["RC_RUNS_DIR"]))
    monkeypatch.setattr(runs, "REFERENCE_DIR", Path(env["RC_REFERENCE_DIR"]))
    return env


def full_env(extra: dict[str, str], committed: bool = False) -> dict[str, str]:
    """Environment for a subprocess; ``committed=True`` reads the repository's own receipts."""
    env = dict(os.environ)
    if committed:
        for key in HERMETIC:
            env.pop(key, None)
    env.update(extra)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    return env
