"""./reproduce.sh end to end: options, validation before any work, SIGKILL and resume,
variants beside the default run, harness errors, and promotion to the reference run."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import time
import types
from pathlib import Path

import pytest

from probes import campaigns
from probes.core.campaign import Param, run_campaign
from probes.core.errors import UsageError
from probes.core.oracle import Ledger
from tests.conftest import ROOT, full_env

REPRODUCE = str(ROOT / "reproduce.sh")
BOTH = "selftest_a,selftest_b"


def _run(args: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([REPRODUCE, *args], env=full_env(env), capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def _snapshot(*roots: Path) -> dict[str, str]:
    """sha256 of every file under ``roots``: 'byte-identical' made checkable."""
    out = {}
    for root in roots:
        for path in sorted(Path(root).rglob("*")) if Path(root).exists() else []:
            if path.is_file():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout


def _run_dirs(sandbox: dict, name: str) -> list[Path]:
    root = Path(sandbox["RC_RUNS_DIR"]) / name
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []


@pytest.mark.parametrize(
    "args, message",
    [
        (["--frobnicate"], "unknown option or argument: --frobnicate"),
        (["--only", "nosuch"], "unknown campaign 'nosuch'"),
        (["--only", "selftest_a", "-p", "jitter", "3"], "unknown parameter 'jitter'"),
        (["--only", "selftest_a", "-p", "probes", "many"], "parameter probes must be int"),
        (["--only", "selftest_a", "-p", "probes", "0"], "parameter probes: 0 is out of range; it must be ≥ 1"),
        (["--book-only", "--quick"], "--book-only runs nothing"),
        (["--only", "selftest_a", "--jobs", "0"], "--jobs must be >= 1"),
        (["--only", "selftest_a", "--jobs", "two"], "--jobs takes a whole number"),
        (["promote", "--quick"], "promote takes only --only"),
    ],
)
def test_bad_input_is_one_line_usage_and_exit_2(sandbox: dict, args: list[str], message: str) -> None:
    proc = _run(args, sandbox)
    assert proc.returncode == 2
    first = proc.stderr.splitlines()[0]
    assert first.startswith("error: ") and message in first
    assert "usage: ./reproduce.sh" in proc.stderr


def test_a_shared_parameter_without_only_names_the_campaigns_it_would_change(sandbox: dict) -> None:
    proc = _run(["-p", "probes", "2", "--no-book"], sandbox)
    assert proc.returncode == 2
    first = proc.stderr.splitlines()[0]
    assert "-p probes would change 2 campaigns (selftest_a, selftest_b)" in first and "--only" in first
    assert not Path(sandbox["RC_RUNS_DIR"]).exists()  # nothing ran


def test_a_malformed_postgres_dsn_is_a_usage_error_before_any_probe(sandbox: dict) -> None:
    proc = _run(["--only", "selftest_a", "--no-book"], dict(sandbox, RC_POSTGRES_DSN="postgresql://host:notaport/db"))
    assert proc.returncode == 2 and "RC_POSTGRES_DSN" in proc.stderr.splitlines()[0]
    assert not Path(sandbox["RC_RUNS_DIR"]).exists()


def _bad_value(param: Param) -> object:
    """A value this parameter must refuse: below its range, an empty list, or off its choices."""
    if param.minimum is not None:
        low = param.minimum - 1 if param.kind.endswith("int]") or param.kind == "int" else param.minimum - 0.5
        if param.exclusive:
            low = param.minimum
        low = int(low) if "int" in param.kind else float(low)
        return [low] if param.kind.startswith("list[") else low
    if param.kind.startswith("list[") and not param.allow_empty:
        return []
    if param.choices is not None:
        return ["no-such-choice"] if param.kind.startswith("list[") else "no-such-choice"
    return None


def test_every_campaign_refuses_a_bad_parameter_before_touching_anything(sandbox: dict, capsys) -> None:
    """For one parameter of every campaign: exit 2, one line, every result byte-identical."""
    from probes.core import runs
    from probes.reproduce import main

    reference = ROOT / "data" / "reference"
    before, status = _snapshot(reference, Path(sandbox["RC_RUNS_DIR"])), _git_status()
    tried = {}
    for name in campaigns.available():
        if name.startswith("selftest"):
            continue
        campaign = campaigns.get(name)
        param = next(p for p in campaign.params if _bad_value(p) is not None)
        value = _bad_value(param)
        assert main(["--only", name, "-p", param.name, json.dumps(value), "--no-book"]) == 2, (name, param.name)
        err = capsys.readouterr().err.splitlines()
        assert err[0].startswith(f"error: parameter {param.name}"), (name, err[0])
        tried[name] = param.name
    assert len(tried) >= 11
    assert _snapshot(reference, Path(sandbox["RC_RUNS_DIR"])) == before
    assert _git_status() == status
    assert runs.RUNS_DIR == Path(sandbox["RC_RUNS_DIR"])  # the sandbox really was the target


def test_every_profile_value_is_valid_for_its_own_parameter() -> None:
    for name in campaigns.available():
        for p in campaigns.get(name).params:
            p.validate(p.default)
            p.validate(p.quick)


def test_the_paper_ranges_are_enforced() -> None:
    race = campaigns.get("consume_race")
    with pytest.raises(UsageError, match="must be ≥ 2"):
        race.resolve({"k": [0]})
    with pytest.raises(UsageError, match="must be > 0"):
        race.resolve({"racer_timeout_s": 0})
    with pytest.raises(UsageError, match="must be ≥ 1"):
        campaigns.get("tlc").resolve({"parallel": 0})
    with pytest.raises(UsageError, match="must not be an empty list"):
        campaigns.get("langgraph").resolve({"backends": []})


def _wait_for(path: Path, proc: subprocess.Popen, limit: float = 240) -> None:
    """Barrier: the probe writes the marker, then blocks until killed."""
    deadline = time.monotonic() + limit
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"reproduce.sh ended (exit {proc.returncode}) before reaching the kill point:\n"
                                 f"{proc.stdout.read()[-3000:] if proc.stdout else ''}")
        if time.monotonic() > deadline:
            raise AssertionError("kill point not reached in time")
        time.sleep(0.05)


def _kill_at(sandbox: dict, probe: str, args: list[str]) -> None:
    """Start ./reproduce.sh, SIGKILL its whole process group when ``probe`` is reached."""
    env = dict(sandbox, RC_SELFTEST_BLOCK_AT=probe)
    proc = subprocess.Popen([REPRODUCE, *args], env=full_env(env), cwd=ROOT, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_for(Path(sandbox["RC_SELFTEST_MARKER"]), proc)
    finally:
        with contextlib.suppress(ProcessLookupError):  # the group is gone if the run ended by itself
            os.killpg(proc.pid, signal.SIGKILL)  # the whole run: bash, driver, papermill, kernel
        proc.wait()
    Path(sandbox["RC_SELFTEST_MARKER"]).unlink()


@pytest.mark.slow
def test_sigkill_then_rerun_resumes_without_rerunning_or_double_counting(sandbox: dict) -> None:
    # one campaign after the other (--jobs 1), so that a kill inside b leaves a complete
    _kill_at(sandbox, "b2", ["--only", BOTH, "--no-book", "--jobs", "1"])

    # After the kill: campaign a complete, b partial; every file on disk is whole.
    [run_a], [run_b] = _run_dirs(sandbox, "selftest_a"), _run_dirs(sandbox, "selftest_b")
    assert run_a.name.startswith("default-") and run_b.name.startswith("default-")
    assert (run_a / "_campaign.json").exists() and (run_a / "chapter.ipynb").exists()
    assert not (run_b / "_campaign.json").exists() and not (run_b / "chapter.ipynb").exists()
    for path in Path(sandbox["RC_RUNS_DIR"]).rglob("*.json"):
        json.loads(path.read_text())
    assert sorted(p.name for p in run_b.glob("b*.json")) == ["b1.json"]

    rerun = _run(["--only", BOTH, "--no-book", "--jobs", "1"], sandbox)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"selftest_a: complete on this machine (run {run_a.name}), skipped" in rerun.stdout
    assert "selftest_b: done" in rerun.stdout

    starts = {}
    for effect, probe, _ in Ledger(sandbox["RC_SELFTEST_LEDGER"]).rows():
        starts[probe] = starts.get(probe, 0) + 1
    # a1..a3 and b1 ran once; b2 was killed mid-probe and ran again; b3 ran once.
    assert starts == {"a1": 1, "a2": 1, "a3": 1, "b1": 1, "b2": 2, "b3": 1}
    index = json.loads((run_b / "_campaign.json").read_text())
    assert sorted(index["receipts"]) == ["b1", "b2", "b3"]
    assert index["profile"] == "default" and index["provenance"]["duration_s"] >= 0
    assert not list(Path(sandbox["RC_RUNS_DIR"]).rglob("*.tmp"))
    latest = json.loads((Path(sandbox["RC_RUNS_DIR"]) / "selftest_b" / "latest.json").read_text())
    assert latest["run"] == run_b.name

    # A third run has nothing left to do.
    again = _run(["--only", BOTH, "--no-book"], sandbox)
    assert again.stdout.count("skipped") == 2


@pytest.mark.slow
def test_a_killed_variant_leaves_the_default_run_and_the_reference_untouched(sandbox: dict) -> None:
    first = _run(["--only", "selftest_b", "--no-book"], sandbox)
    assert first.returncode == 0, first.stdout + first.stderr
    [default] = _run_dirs(sandbox, "selftest_b")
    reference = Path(sandbox["RC_REFERENCE_DIR"])
    (reference / "selftest_b").mkdir(parents=True)
    (reference / "selftest_b" / "verdicts.json").write_text('{"kept": true}\n')
    before = _snapshot(default, reference)

    _kill_at(sandbox, "b3", ["--only", "selftest_b", "-p", "probes", "4", "--no-book"])
    assert _snapshot(default, reference) == before
    variant = next(d for d in _run_dirs(sandbox, "selftest_b") if d != default)
    assert variant.name.startswith("variant-") and not (variant / "_campaign.json").exists()

    rerun = _run(["--only", "selftest_b", "-p", "probes", "4", "--no-book"], sandbox)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "variant profile: probes=4" in rerun.stdout
    assert sorted(json.loads((variant / "_campaign.json").read_text())["receipts"]) == ["b1", "b2", "b3", "b4"]
    assert _snapshot(default, reference) == before
    starts = [probe for _, probe, _ in Ledger(sandbox["RC_SELFTEST_LEDGER"]).rows()]
    # default b1-b3 once; the variant's b1, b2 once, its b3 twice (killed), b4 once
    assert starts.count("b1") == 2 and starts.count("b3") == 3 and starts.count("b4") == 1


def test_harness_errors_are_retried_and_the_clean_run_stays_shown(sandbox: dict) -> None:
    from probes.core import runs

    campaign = campaigns.get("selftest_a")
    clean = run_campaign(campaign, campaign.resolve())
    assert not clean.harness_errors
    os.environ["RC_SELFTEST_HARNESS_ERROR"] = "1"
    try:
        broken = run_campaign(campaign, campaign.resolve({"probes": 2}))
    finally:
        del os.environ["RC_SELFTEST_HARNESS_ERROR"]
    assert broken.harness_errors and broken.directory != clean.directory
    assert runs.shown_run("selftest_a").directory == clean.directory  # the failure does not hide it
    assert "harness errors: 2" in runs.newer_unfinished("selftest_a", runs.shown_run("selftest_a"))[0]
    retried = run_campaign(campaign, campaign.resolve({"probes": 2}))
    assert retried.ran == ["a1", "a2"] and not retried.harness_errors
    assert runs.shown_run("selftest_a").directory == retried.directory


def test_promote_refuses_what_is_not_a_reference_and_copies_what_is(sandbox: dict, tmp_path: Path) -> None:
    from probes.core import runs
    from probes.core.manifest import working_tree_clean

    campaign = campaigns.get("selftest_a")
    with pytest.raises(UsageError, match="no complete default-profile run"):
        runs.promote(campaign, require_clean_tree=False)
    run_campaign(campaign, campaign.resolve())
    directory = runs.latest_local("selftest_a").directory
    index = json.loads((directory / "_campaign.json").read_text())
    if not index["provenance"]["clean"]:  # measured from a tree with local changes: refused as such
        with pytest.raises(UsageError, match="measured with local changes"):
            runs.promote(campaign, require_clean_tree=False)
        index["provenance"]["clean"] = True
        (directory / "_campaign.json").write_text(json.dumps(index))
    with pytest.raises(UsageError, match="no executed chapter"):
        runs.promote(campaign, require_clean_tree=False)
    (directory / "chapter.ipynb").write_text("{}")
    index["fingerprint"] = "0" * 16
    (directory / "_campaign.json").write_text(json.dumps(index))
    with pytest.raises(UsageError, match="does not match the current code"):
        runs.promote(campaign, require_clean_tree=False)
    index["fingerprint"] = runs.campaign_fingerprint(campaign, campaign.resolve())
    index["harness_errors"] = 1
    (directory / "_campaign.json").write_text(json.dumps(index))
    with pytest.raises(UsageError, match="harness error"):
        runs.promote(campaign, require_clean_tree=False)
    index["harness_errors"] = 0
    (directory / "_campaign.json").write_text(json.dumps(index))
    promoted = runs.promote(campaign, require_clean_tree=False)
    assert promoted.is_reference and promoted.directory == Path(sandbox["RC_REFERENCE_DIR"]) / "selftest_a"
    assert (promoted.directory / "a1.json").read_bytes() == (directory / "a1.json").read_bytes()

    repo = tmp_path / "repo"  # a real git tree with a local change is refused
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "f").write_text("1")
    subprocess.run(["git", "-C", str(repo), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "f"],
                   check=True)
    assert working_tree_clean(repo)
    (repo / "f").write_text("2")
    assert not working_tree_clean(repo)


def test_fingerprint_covers_only_the_campaigns_own_inputs(monkeypatch) -> None:
    from probes.core import runs

    tlc, crewai = campaigns.get("tlc"), campaigns.get("crewai")
    inputs = runs.fingerprint_inputs(crewai, crewai.resolve())
    assert set(inputs["packages"]) == set(crewai.packages) and "crewai" in inputs["packages"]
    assert "crewai" not in runs.fingerprint_inputs(tlc, tlc.resolve())["packages"]
    assert "tla" in runs.campaign_sources(tlc) and "probes/tla" in runs.campaign_sources(tlc)
    monkeypatch.setenv("RC_POSTGRES_DSN", "postgresql://u:secret@db.example:6543/rc")
    identity = runs.backend_identity()
    assert identity == {"postgres": "db.example:6543/rc"} and "secret" not in json.dumps(identity)
    assert runs.fingerprint_of(runs.fingerprint_inputs(tlc, tlc.resolve())) != \
        runs.fingerprint_of(dict(runs.fingerprint_inputs(tlc, tlc.resolve()), backend={"postgres": "embedded"}))


def test_a_campaign_that_reads_others_runs_after_them_and_its_fingerprint_names_what_it_read(monkeypatch) -> None:
    from probes.core import runs
    from probes.reproduce import after_what_they_read

    tlc = campaigns.get("traces")  # trace validation reads every framework campaign; model checking nothing
    assert "langgraph" in tlc.reads and not campaigns.get("tlc").reads
    assert after_what_they_read(["traces", "tlc", "langgraph", "crewai"]) == ["tlc", "langgraph", "crewai", "traces"]
    before = runs.fingerprint_inputs(tlc, tlc.resolve())
    assert set(before["reads"]) == set(tlc.reads)
    real = runs.shown_run
    monkeypatch.setattr(runs, "shown_run", lambda name: (
        types.SimpleNamespace(run_id="default-0000000000000000") if name == "langgraph" else real(name)))
    after = runs.fingerprint_inputs(tlc, tlc.resolve())
    assert after["reads"]["langgraph"] == "default-0000000000000000"
    assert runs.fingerprint_of(after) != runs.fingerprint_of(before)


def test_promote_checks_every_campaign_before_copying_any(sandbox: dict, monkeypatch) -> None:
    """One refusal leaves the whole reference as it was; when all can be promoted, all are
    (the first copy does not count as a local change that refuses the rest)."""
    from probes.core import manifest, runs
    from probes.reproduce import promote_runs

    monkeypatch.setattr(manifest, "working_tree_clean", lambda *a: True)
    for name in ("selftest_a", "selftest_b"):
        campaign = campaigns.get(name)
        run_campaign(campaign, campaign.resolve())
        directory = runs.latest_local(name).directory
        index = json.loads((directory / "_campaign.json").read_text())
        index["provenance"]["clean"] = True
        (directory / "_campaign.json").write_text(json.dumps(index))
        (directory / "chapter.ipynb").write_text("{}")
    with pytest.raises(UsageError, match="selftest_b has no executed chapter"):
        (runs.latest_local("selftest_b").directory / "chapter.ipynb").unlink()
        promote_runs(["selftest_a", "selftest_b"])
    assert runs.reference_run("selftest_a") is None and runs.reference_run("selftest_b") is None
    (runs.latest_local("selftest_b").directory / "chapter.ipynb").write_text("{}")
    assert promote_runs(["selftest_a", "selftest_b"]) == 0
    assert runs.reference_run("selftest_a") is not None and runs.reference_run("selftest_b") is not None


def test_jobs_schedule_keeps_readers_after_what_they_read_and_timing_sensitive_ones_alone(monkeypatch) -> None:
    from types import SimpleNamespace

    from probes import reproduce

    spec = {"a": ((), ""), "b": ((), "times things"), "c": ((), ""), "r": (("a", "c"), ""), "d": ((), "")}
    monkeypatch.setattr(reproduce.campaigns, "get", lambda n: SimpleNamespace(reads=spec[n][0], runs_alone=spec[n][1],
                                                                              in_default_run=True))
    assert reproduce.schedule(list(spec), 1) == [["a"], ["b"], ["c"], ["r"], ["d"]]
    # c and d share a's wave (they read nothing); r reads a and c, so it follows their wave
    assert reproduce.schedule(list(spec), 2) == [["a", "c", "d"], ["b"], ["r"]]
    assert reproduce.schedule(["b", "a"], 4) == [["b"], ["a"]]
    # within a wave the longest expected campaign starts first, the unknown ones last in their order
    assert reproduce.schedule(list(spec), 2, {"c": 60.0, "d": 600.0}) == [["d", "c", "a"], ["b"], ["r"]]
    assert reproduce.schedule(list(spec), 1, {"c": 60.0, "d": 600.0}) == [["a"], ["b"], ["c"], ["r"], ["d"]]


def test_expected_seconds_are_the_reference_runs_recorded_wall_durations() -> None:
    from probes import reproduce
    from probes.core.runs import reference_run

    expected = reproduce.expected_seconds(["tlc", "consume_race", "no_such_campaign"])
    assert set(expected) == {"tlc", "consume_race"}
    assert expected["tlc"] == reference_run("tlc").provenance["duration_s"] > 0


def test_campaigns_beyond_the_paper_wait_for_its_timing_sensitive_ones(monkeypatch) -> None:
    """--all: the paper's benchmarks run alone right after the paper's shared wave, not after hours of
    campaigns beyond the paper that would otherwise join that wave."""
    from types import SimpleNamespace

    from probes import reproduce

    spec = {"a": ((), "", True), "b": ((), "times things", True), "c": ((), "", True), "x": ((), "", False),
            "y": ((), "", False), "r": (("a", "x"), "", True)}
    monkeypatch.setattr(reproduce.campaigns, "get", lambda n: SimpleNamespace(
        reads=spec[n][0], runs_alone=spec[n][1], in_default_run=spec[n][2]))
    assert reproduce.schedule(list(spec), 2) == [["a", "c"], ["b"], ["x", "y"], ["r"]]


def test_jobs_two_measures_both_campaigns_side_by_side(sandbox: dict) -> None:
    proc = _run(["--only", BOTH, "--jobs", "2", "--no-book"], sandbox)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "measuring up to 2 campaigns at once" in proc.stdout
    for name in ("selftest_a", "selftest_b"):
        assert f"{name}: done in" in proc.stdout
        [run] = _run_dirs(sandbox, name)
        assert (run / "_campaign.json").is_file()
    # the measurement's schedule: both campaigns, when each ran, the whole measurement's wall time
    from probes import schedules

    [record] = schedules.records(Path(sandbox["RC_RUNS_DIR"]))
    assert (record["selection"], record["jobs"], record["interrupted"]) == ("only", 2, False)
    slots = record["campaigns"]
    assert sorted(slots) == ["selftest_a", "selftest_b"]
    for slot in slots.values():
        assert slot["outcome"] == "measured" and 0 <= slot["start_s"] <= slot["end_s"] <= record["elapsed_s"]
    assert not schedules.end_to_end(record)  # --only: not the default run
    rerun = _run(["--only", BOTH, "--jobs", "2", "--no-book"], sandbox)
    assert rerun.returncode == 0 and "schedule of this measurement" in rerun.stdout
    assert [s["outcome"] for s in schedules.records(Path(sandbox["RC_RUNS_DIR"]))[-1]["campaigns"].values()] == [
        "skipped", "skipped"]


@pytest.mark.slow
def test_sigkill_during_a_parallel_run_then_rerun_completes_both(sandbox: dict) -> None:
    _kill_at(sandbox, "b2", ["--only", BOTH, "--no-book", "--jobs", "2"])
    for path in Path(sandbox["RC_RUNS_DIR"]).rglob("*.json"):
        json.loads(path.read_text())  # every file on disk is whole
    rerun = _run(["--only", BOTH, "--no-book", "--jobs", "2"], sandbox)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    for name, probes in (("selftest_a", ["a1", "a2", "a3"]), ("selftest_b", ["b1", "b2", "b3"])):
        [run] = _run_dirs(sandbox, name)
        assert sorted(json.loads((run / "_campaign.json").read_text())["receipts"]) == probes
    starts: dict[str, int] = {}
    for _, probe, _ in Ledger(sandbox["RC_SELFTEST_LEDGER"]).rows():
        starts[probe] = starts.get(probe, 0) + 1
    assert starts["b2"] == 2 and all(1 <= n <= 2 for n in starts.values()), starts  # a killed probe runs again
    assert not list(Path(sandbox["RC_RUNS_DIR"]).rglob("*.tmp"))
    # the rerun's schedule says selftest_b resumed (b1 was reused), so its times are not a whole measurement's
    from probes import schedules

    slots = schedules.records(Path(sandbox["RC_RUNS_DIR"]))[-1]["campaigns"]
    assert slots["selftest_b"]["resumed_receipts"] == 1, slots


def _processes_with_environ(needle: str) -> list[str]:
    """Live processes whose environment holds ``needle`` (a zombie's environment reads empty)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and needle.encode() in (entry / "environ").read_bytes():
                command = (entry / "cmdline").read_bytes().replace(bytes(1), b" ").decode(errors="replace")
                found.append(f"{entry.name}: {command[:120]}")
        except OSError:
            continue
    return found


@pytest.mark.slow
@pytest.mark.parametrize("how, jobs", [("SIGTERM", "2"), ("SIGINT", "2"), ("SIGTERM", "1"), ("SIGTERM twice", "2")])
def test_sigterm_or_ctrl_c_stops_the_run_and_every_process_it_started(sandbox: dict, how: str, jobs: str) -> None:
    """Campaigns run in threads and their kernels in sessions of their own: a SIGTERM to the driver
    (or Ctrl-C, SIGINT to the terminal's foreground group) must still end the run and its kernels.
    ``SIGTERM twice``: the kernel takes 3 s to stop and a second SIGTERM comes meanwhile; it must not
    cut the stopping short (it once did, and the run then waited on a TLC kernel for good)."""
    env = dict(sandbox, RC_SELFTEST_BLOCK_AT="b2", **({"RC_SELFTEST_SLOW_STOP": "3"} if how.endswith("twice") else {}))
    # As from a terminal: Ctrl-C's default action. A test runner started in the background (``cmd &``
    # in a non-interactive shell) ignores SIGINT, and a child inherits that; Python then never
    # raises KeyboardInterrupt, and the run would rightly go on.
    proc = subprocess.Popen([REPRODUCE, "--only", BOTH, "--no-book", "--jobs", jobs], env=full_env(env), cwd=ROOT,
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        _wait_for(Path(sandbox["RC_SELFTEST_MARKER"]), proc)
        if how.startswith("SIGTERM"):
            os.kill(proc.pid, signal.SIGTERM)  # reproduce.sh execs the driver: this is the driver alone
            if how.endswith("twice"):
                time.sleep(1)  # inside the kernel's 3 s of stopping
                os.kill(proc.pid, signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode != 0, out
    assert re.search(r"interrupted: stopped [12] running campaign kernel", out), out[-2000:]
    deadline = time.monotonic() + 10
    while (left := _processes_with_environ(sandbox["RC_SELFTEST_MARKER"])) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == [], left
    for path in Path(sandbox["RC_RUNS_DIR"]).rglob("*.json"):
        json.loads(path.read_text())  # every file on disk is whole


def test_a_chapter_rendered_from_a_run_draws_its_figures_into_that_run(tmp_path: Path, monkeypatch) -> None:
    """A run measured by `python -m probes run` gets its chapter at book time: its figures must land in
    the run's figures/ (where the book stages them from), not in a scratch directory. A real kernel."""
    import nbformat

    from probes import execute

    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import os\nprint(os.environ['RC_RENDER_FROM'], os.environ['RC_FIGURES_DIR'])")]
    nbformat.write(nb, notebooks / "tiny.ipynb")
    monkeypatch.setattr(execute, "NOTEBOOKS_DIR", notebooks)
    monkeypatch.delenv("RC_FIGURES_DIR", raising=False)
    run = tmp_path / "run"
    run.mkdir()
    execute.execute_notebook("tiny", {}, run / "chapter.ipynb", render_from=run)
    out = nbformat.read(run / "chapter.ipynb", as_version=4).cells[0].outputs[0]["text"]
    # the kernel saw the run's directories; the stored chapter names them as a receipt does
    assert out.split() == ["<run>", "<run>/figures"]
    stored = (run / "chapter.ipynb").read_text()
    assert str(tmp_path) not in stored and '"input_path": "' in stored
    assert "RC_FIGURES_DIR" not in os.environ and "RC_RENDER_FROM" not in os.environ  # restored


def test_a_plain_run_measures_the_papers_campaigns_and_remits() -> None:
    """What ./reproduce.sh measures without --all: the paper's campaigns (CAMPAIGNS.md) and REMIT's
    conformance and wall-clock benchmark; the atlas, drift, cross-version resume, REMIT's counted cost
    and the kit's framework campaigns are beyond the paper (--all)."""
    from probes import campaigns

    plain = [n for n in campaigns.available() if campaigns.get(n).in_default_run]
    assert plain == ["tlc", "langgraph", "consume_race", "crewai", "llamaindex", "pydantic_graph", "autogen", "dbos",
                     "remit", "remit_bench", "live", "traces"]
