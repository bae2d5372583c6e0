"""Shared fixtures: a sandbox so tests never touch the committed receipts or chapters."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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


def full_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    return env
