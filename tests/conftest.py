"""Shared fixtures: a sandbox so tests never touch the committed receipts or chapters."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Hermetic by default: no test writes into the committed receipts, chapters or figures.
# (Set before any test module imports probes, which reads these at import time.)
_SESSION_DIR = Path(tempfile.mkdtemp(prefix="rc-tests-"))
HERMETIC = {
    "RC_RECEIPTS_DIR": str(_SESSION_DIR / "receipts"),
    "RC_CHAPTERS_DIR": str(_SESSION_DIR / "chapters"),
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
        "RC_RECEIPTS_DIR": str(tmp_path / "receipts"),
        "RC_CHAPTERS_DIR": str(tmp_path / "chapters"),
        "RC_SELFTEST_LEDGER": str(tmp_path / "runs.sqlite"),
        "RC_SELFTEST_MARKER": str(tmp_path / "blocked"),
        "RC_NO_PROGRESS": "1",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
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
