"""`python -m probes` exit codes, the matrix from receipts, and the real PostgreSQL backend."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from probes.core.backends import StoreFactory, postgres_service
from probes.core.errors import UsageError
from probes.headline import Measured, compare
from tests.conftest import ROOT, full_env


def _probes(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "probes", *args], cwd=ROOT, env=full_env(env),
                          capture_output=True, text=True, timeout=300)


def test_cli_run_then_matrix(sandbox: dict) -> None:
    ran = _probes(["run", "selftest_a", "--param", "probes=2"], sandbox)
    assert ran.returncode == 0, ran.stderr
    assert "2 receipts (2 run, 0 reused)" in ran.stdout
    matrix = _probes(["matrix"], sandbox)
    assert matrix.returncode == 0
    assert "selftest" in matrix.stdout and "✓" in matrix.stdout


def test_cli_exit_codes(sandbox: dict) -> None:
    failed = _probes(["run", "selftest_a"], dict(sandbox, RC_SELFTEST_HARNESS_ERROR="1"))
    assert failed.returncode == 1 and "harness error: a1: simulated harness failure" in failed.stderr
    unknown = _probes(["run", "selftest_a", "--param", "speed=3"], sandbox)
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: unknown parameter 'speed'")
    [receipt] = Path(sandbox["RC_RUNS_DIR"]).glob("selftest_a/*/a1.json")  # the local run directory
    receipt.write_text("not json")
    broken = _probes(["run", "selftest_a"], sandbox)
    assert broken.returncode == 2 and broken.stderr.count("\n") == 1 and "malformed receipt" in broken.stderr


def test_headline_status_is_computed_not_typed() -> None:
    entry = {"id": "x", "campaign": "c", "what": "w", "published": {"depth": 4, "distinct": 59},
             "sources": [{"file": "CAMPAIGNS.md", "line": 1, "quote": "depth 4, 59 distinct"}]}
    same = compare(entry, Measured({"depth": 4, "distinct": 59}, why="same encoding"), "")
    assert same.status == "reproduced"
    # a campaign cannot narrow the comparison to the keys that agree: every published key counts
    narrowed = compare(entry, Measured({"depth": 4, "distinct": 70}, why="other encoding", compare_keys=("depth",)), "")
    assert narrowed.status == "differs" and narrowed.why == "other encoding"
    assert "distinct: 70 here vs 59 published" in narrowed.explanation
    differs = compare(entry, Measured({"depth": 5, "distinct": 59}, why="deeper trace"), "")
    assert differs.status == "differs" and differs.why == "deeper trace" and "depth: 5 here vs 4 published" in differs.difference
    missing = compare(entry, None, "needs API keys")
    assert missing.status == "not run here" and missing.why == "needs API keys"


def test_embedded_postgres_is_started_and_stopped_by_the_harness(outside_basetemp: Path, monkeypatch) -> None:
    monkeypatch.delenv("RC_POSTGRES_DSN", raising=False)
    with postgres_service(outside_basetemp / "pg") as service:
        dsn_a, dsn_b = service.fresh_dsn("a"), service.fresh_dsn("b")
        assert dsn_a != dsn_b
        with psycopg.connect(dsn_a, autocommit=True) as conn:
            conn.execute("CREATE TABLE t (x int)")
        with psycopg.connect(dsn_b, autocommit=True) as conn:  # a fresh database: no table t
            assert conn.execute("SELECT to_regclass('t')").fetchone()[0] is None
        base = service.base_dsn
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(base, connect_timeout=3)


def test_store_factory_rejects_unknown_backend(tmp_path: Path) -> None:
    with contextlib.ExitStack() as stack:
        stores = StoreFactory(tmp_path, stack)
        assert stores.fresh("sqlite", "x").location.endswith(".sqlite")
        with pytest.raises(UsageError, match="unknown backend 'oracle'"):
            stores.fresh("oracle", "x")


def test_bad_dsn_is_one_clear_line(monkeypatch) -> None:
    monkeypatch.setenv("RC_POSTGRES_DSN", "mysql://nope")
    with pytest.raises(UsageError, match="not a postgresql:// URI"):
        with postgres_service():
            pass


@pytest.mark.parametrize("dsn", ["mysql://nope", "postgresql://host:notaport/db", "postgresql://"])
def test_malformed_dsn_is_a_usage_error_before_any_probe(sandbox: dict, dsn: str) -> None:
    """exit 2, one line saying what to do, nothing measured or written."""
    got = _probes(["run", "selftest_a"], dict(sandbox, RC_POSTGRES_DSN=dsn))
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and "RC_POSTGRES_DSN" in got.stderr, got.stderr
    assert "fix or unset it" in got.stderr
    assert not list(Path(sandbox["RC_RUNS_DIR"]).glob("selftest_a/*/*.json"))
    assert not Path(sandbox["RC_SELFTEST_LEDGER"]).exists()


def test_matrix_cli_lists_campaigns_without_a_complete_run(sandbox: dict) -> None:
    got = _probes(["matrix"], sandbox)
    assert got.returncode == 0
    assert "not in the matrix: selftest_b: no complete run" in got.stdout
