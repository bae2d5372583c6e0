"""Shared fixtures: a sandbox so tests never touch the reference run or this machine's runs."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

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


def pytest_unconfigure(config: pytest.Config) -> None:
    """The session's runs and figures go with it (a mutation run starts thousands of sessions)."""
    shutil.rmtree(_SESSION_DIR, ignore_errors=True)


SELFTEST = ("selftest_a=tests.fixtures.selftest:CAMPAIGN_A,"
            "selftest_b=tests.fixtures.selftest:CAMPAIGN_B")


@pytest.fixture(scope="session")
def pg() -> Iterator[Any]:
    """One embedded PostgreSQL for the session's REMIT tests (each test takes a fresh database of it):
    started on first use, so a run that needs none starts none."""
    from probes.core.backends import postgres_service

    with postgres_service() as service:
        yield service


@pytest.fixture
def outside_basetemp() -> Iterator[Path]:
    """A scratch directory outside pytest's basetemp, for stores that may start an embedded PostgreSQL.

    initdb runs as the embedded_postgres user, which must reach the data directory; a
    second pytest session on the machine (a mutation run, a CI clone) resets
    /tmp/pytest-of-<user> to 0700 whenever it starts, and a server being created under
    it then fails with "Permission denied".
    """
    root = Path(tempfile.mkdtemp(prefix="rc-test-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


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
