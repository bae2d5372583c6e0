"""./reproduce.sh end to end on the self-test campaigns: options, SIGKILL and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from probes.core.oracle import Ledger
from tests.conftest import ROOT, full_env

REPRODUCE = str(ROOT / "reproduce.sh")


def _run(args: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([REPRODUCE, *args], env=full_env(env), capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--frobnicate"], "unknown option or argument: --frobnicate"),
        (["--only", "nosuch"], "unknown campaign 'nosuch'"),
        (["--only", "selftest_a", "-p", "jitter", "3"], "unknown parameter 'jitter'"),
        (["--only", "selftest_a", "-p", "probes", "many"], "parameter probes must be int"),
        (["--book-only", "--quick"], "--book-only runs nothing"),
    ],
)
def test_bad_input_is_one_line_usage_and_exit_2(sandbox: dict, args: list[str], message: str) -> None:
    proc = _run(args, sandbox)
    assert proc.returncode == 2
    first = proc.stderr.splitlines()[0]
    assert first.startswith("error: ") and message in first
    assert "usage: ./reproduce.sh" in proc.stderr


def _wait_for(path: Path, proc: subprocess.Popen, limit: float = 240) -> None:
    """Barrier: the probe writes the marker, then blocks until killed."""
    deadline = time.monotonic() + limit
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"reproduce.sh ended (exit {proc.returncode}) before reaching the kill point")
        if time.monotonic() > deadline:
            raise AssertionError("kill point not reached in time")
        time.sleep(0.05)


@pytest.mark.slow
def test_sigkill_then_rerun_resumes_without_rerunning_or_double_counting(sandbox: dict) -> None:
    receipts = Path(sandbox["RC_RECEIPTS_DIR"])
    chapters = Path(sandbox["RC_CHAPTERS_DIR"])
    env = dict(sandbox, RC_SELFTEST_BLOCK_AT="b2")
    proc = subprocess.Popen([REPRODUCE, "--only", "selftest_a,selftest_b", "--no-book"], env=full_env(env),
                            cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        _wait_for(Path(sandbox["RC_SELFTEST_MARKER"]), proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole run: bash, driver, papermill, kernel
        proc.wait()

    # After the kill: campaign a complete, b partial; every file on disk is whole.
    assert (receipts / "selftest_a" / "_campaign.json").exists()
    assert not (receipts / "selftest_b" / "_campaign.json").exists()
    for path in receipts.rglob("*.json"):
        json.loads(path.read_text())
    assert (chapters / "selftest_a.ipynb").exists() and not (chapters / "selftest_b.ipynb").exists()
    assert sorted(p.name for p in (receipts / "selftest_b").glob("b*.json")) == ["b1.json"]

    rerun = _run(["--only", "selftest_a,selftest_b", "--no-book"], sandbox)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "selftest_a: complete for these parameters and versions, skipped" in rerun.stdout
    assert "selftest_b: done" in rerun.stdout

    starts = {}
    for effect, probe, _ in Ledger(sandbox["RC_SELFTEST_LEDGER"]).rows():
        starts[probe] = starts.get(probe, 0) + 1
    # a1..a3 and b1 ran once; b2 was killed mid-probe and ran again; b3 ran once.
    assert starts == {"a1": 1, "a2": 1, "a3": 1, "b1": 1, "b2": 2, "b3": 1}
    index = json.loads((receipts / "selftest_b" / "_campaign.json").read_text())
    assert sorted(index["receipts"]) == ["b1", "b2", "b3"]
    assert sorted(p.name for p in (receipts / "selftest_b").glob("b*.json")) == ["b1.json", "b2.json", "b3.json"]
    assert not list(receipts.rglob("*.tmp"))

    # A third run has nothing left to do.
    again = _run(["--only", "selftest_a,selftest_b", "--no-book"], sandbox)
    assert again.stdout.count("skipped") == 2
