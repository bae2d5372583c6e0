"""The fork server (probes.core.forkserver): children forked after the imports behave like fresh
interpreters for the harness -- results, park-point kills, stderr, environment, distinct random
state -- it falls back to a fresh interpreter where forking is unsafe, and leaves no process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from probes.core import forkserver
from probes.core.nemesis import run_child
from probes.core.oracle import Ledger

PRELOAD = ("tests.child_targets", "json.tool")


@pytest.fixture(autouse=True)
def _servers_stopped():
    yield
    forkserver.stop_all()


def test_a_forked_child_returns_its_result_from_a_process_of_its_own() -> None:
    a = run_child("tests.child_targets:identity", preload=PRELOAD, env={"RC_TEST_MARK": "one"}).require_ok()
    b = run_child("tests.child_targets:identity", preload=PRELOAD, env={"RC_TEST_MARK": "one"}).require_ok()
    assert a["preloaded"] and b["preloaded"]  # json.tool came from the server's imports
    assert a["ppid"] == b["ppid"] != os.getpid()  # both forked by one server, not by this process
    assert a["pid"] != b["pid"] and a["random"] != b["random"]  # random reseeded at fork
    assert a["env"] == "one"


def test_another_environment_gets_another_server() -> None:
    a = run_child("tests.child_targets:identity", preload=PRELOAD, env={"RC_TEST_MARK": "one"}).require_ok()
    b = run_child("tests.child_targets:identity", preload=PRELOAD, env={"RC_TEST_MARK": "two"}).require_ok()
    assert (a["env"], b["env"]) == ("one", "two") and a["ppid"] != b["ppid"]


def test_sigkill_at_a_park_point_in_a_forked_child(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite"
    out = run_child("tests.child_targets:fire_then_park",
                    {"ledger": str(ledger), "incarnation": "victim", "effects": ["a", "b", "c"], "park_after": 2},
                    park_at="mid", timeout=60, preload=PRELOAD)
    out.require_killed()
    assert out.parked_at == "mid#1" and out.returncode == -9
    assert Ledger(ledger).counts() == {"a": 1, "b": 1}


def test_a_forked_childs_exception_reaches_stderr() -> None:
    out = run_child("tests.child_targets:crash", timeout=60, preload=PRELOAD)
    assert out.status == "error" and out.returncode == 1
    assert "boom in child" in out.stderr_tail


def test_a_threaded_import_falls_back_to_a_fresh_interpreter() -> None:
    preload = ("tests.child_targets", "tests.fixtures.threaded_import")
    server = forkserver.server_for(forkserver.sys.executable, preload, dict(os.environ), Path.cwd())
    assert server is None
    out = run_child("tests.child_targets:identity", preload=preload).require_ok()
    assert out["ppid"] == os.getpid() and not out["preloaded"]  # Popen'd by this process, nothing preloaded


def test_a_framework_that_imports_numpy_is_served_with_its_home_inside_the_run(tmp_path: Path) -> None:
    """numpy's BLAS pool would leave the server threaded (SERVER_ONLY keeps it at one thread), and
    CrewAI writes a key file into its home when imported: under the adapter's ``environment`` that
    home is inside the run, and the server's import wrote it there."""
    from probes.frameworks.crewai.adapter import CrewAIAdapter

    env = CrewAIAdapter.environment(tmp_path)
    preload = ("tests.child_targets", "numpy", "crewai.flow")
    out = run_child("tests.child_targets:identity", preload=preload, env=env)
    assert out.forked and out.require_ok()["ppid"] != os.getpid()
    assert list(tmp_path.glob("home/.local/share/crewai/credentials/*"))


def test_turned_off_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(forkserver.OFF_ENV, "0")
    out = run_child("tests.child_targets:identity", preload=PRELOAD).require_ok()
    assert out["ppid"] == os.getpid() and not out["preloaded"]


def test_stopping_leaves_no_server_process() -> None:
    run_child("tests.child_targets:identity", preload=PRELOAD).require_ok()
    servers = [s for s in forkserver._servers.values() if not s.unsafe]
    assert servers and all(s.proc.poll() is None for s in servers)
    forkserver.stop_all()
    assert all(s.proc.poll() is not None for s in servers)


def test_a_server_leaves_when_its_parent_dies(tmp_path: Path) -> None:
    """The parent SIGKILLed (no atexit): the server sees its control socket close and leaves."""
    import subprocess
    import sys
    import time

    script = ("import os, sys; from probes.core import forkserver; from probes.core.nemesis import run_child;"
              f"run_child('tests.child_targets:identity', preload={PRELOAD!r}).require_ok();"
              "print(*[s.proc.pid for s in forkserver._servers.values()], flush=True); os.kill(os.getpid(), 9)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    [pid] = map(int, out.stdout.split())
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or "zombie" in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split("\n")[0]
    except (OSError, IndexError):
        return "gone"


def test_kit_verdicts_are_the_same_forked_or_fresh(tmp_path: Path, outside_basetemp: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork-server child is the same process for the framework as a fresh interpreter: LangGraph's
    verdicts on a clean run, a kill inside a step and a park-kill are identical both ways."""
    from probes import campaigns
    from tests.kit_checks import run_probes

    camp = campaigns.get("langgraph_kit")
    params = {**camp.resolve(quick=True), "backends": ["sqlite"]}
    wanted = {"baseline.a0.sqlite.rep1", "crash.kill.s2.effect.none-input.sqlite.rep1", "parkkill.sqlite.rep1"}
    specs = [s for s in camp.plan(params) if s.id in wanted]
    assert {s.id for s in specs} == wanted

    def verdicts(mode: str) -> list:
        monkeypatch.setenv(forkserver.OFF_ENV, mode)
        (tmp_path / mode).mkdir()
        return [[v.to_json() for v in res.verdicts]
                for _, res in run_probes(camp.run_probe, specs, params, tmp_path / mode, outside_basetemp / mode)]

    assert verdicts("1") == verdicts("0")


def test_servers_beyond_the_cap_are_stopped_least_recently_used_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forkserver, "MAX_SERVERS", 2)
    for mark in ("a", "b", "c"):
        run_child("tests.child_targets:identity", preload=PRELOAD, env={"RC_TEST_MARK": mark}).require_ok()
    marks = [dict(k[2]).get("RC_TEST_MARK") for k in forkserver._servers]
    assert marks == ["b", "c"]


def test_stopping_a_server_kills_and_reaps_the_children_it_forked(tmp_path: Path) -> None:
    """stop_all() returns only when the server's running children are gone too (not left to PDEATHSIG)."""
    server = forkserver.server_for(forkserver.sys.executable, PRELOAD, dict(os.environ), Path.cwd())
    assert server is not None
    ready_r, ready_w = os.pipe()
    hold_r, hold_w = os.pipe()
    (tmp_path / "args.json").write_text("{}")
    with open(tmp_path / "stderr.txt", "wb") as stderr:
        child = server.spawn("tests.child_targets:sleep_forever", {"RC_ARGS_PATH": str(tmp_path / "args.json"),
                                                                     "RC_RESULT_PATH": str(tmp_path / "r.json")},
                             stderr.fileno(), ready_w, hold_r)
    for fd in (ready_w, hold_r):
        os.close(fd)
    assert Path(f"/proc/{child.pid}").exists()
    forkserver.stop_all()
    assert not Path(f"/proc/{child.pid}").exists(), Path(f"/proc/{child.pid}/status").read_text()[:400]  # reaped
    assert child.wait(timeout=10) == -9
    for fd in (ready_r, hold_w):
        os.close(fd)
