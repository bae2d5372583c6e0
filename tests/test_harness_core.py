"""The harness core: oracles, nemesis, atomic writes, receipts, the campaign runner."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest

from probes.core import checker
from probes.core.atomic import atomic_write_json, remove_stale_temp_files
from probes.core.campaign import Param, parse_value, run_campaign, seed_for
from probes.core.checker import DocRef, Label, Property, Subject
from probes.core.errors import HarnessError, ReceiptError, UsageError
from probes.core.nemesis import ChildOutcome, FailOnce, InjectedCrash, PausedChild, run_child
from probes.core.history import Kind
from probes.core.oracle import LATE, Ledger, Oracle, cross_check
from probes.core.receipt import load_receipt, view_bytes
from tests.fixtures.selftest import CAMPAIGN_A


def test_sigkill_at_park_point_keeps_committed_effects_only(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite"
    out = run_child("tests.child_targets:fire_then_park",
                    {"ledger": str(ledger), "incarnation": "victim", "effects": ["a", "b", "c"], "park_after": 2},
                    park_at="mid", timeout=60)
    out.require_killed()
    assert out.parked_at == "mid#1"
    assert Ledger(ledger).counts() == {"a": 1, "b": 1}


def test_unreached_park_point_is_a_harness_error(tmp_path: Path) -> None:
    out = run_child("tests.child_targets:fire_then_park",
                    {"ledger": str(tmp_path / "l.sqlite"), "incarnation": "v", "effects": ["a"], "park_after": 5},
                    park_at="mid", timeout=60)
    assert out.status == "ok"
    with pytest.raises(HarnessError, match="park point was never reached"):
        out.require_killed()


def test_child_exception_is_reported_with_stderr() -> None:
    out = run_child("tests.child_targets:crash", timeout=60)
    assert out.status == "error"
    assert "boom in child" in out.stderr_tail
    with pytest.raises(HarnessError):
        out.require_ok()


def test_a_child_that_ended_in_error_says_its_exit_status_or_signal() -> None:
    assert ChildOutcome("error", returncode=-signal.SIGKILL).ended == "error (signal SIGKILL)"
    assert ChildOutcome("error", returncode=3, forked=True).ended == "error (exit 3, forked from the fork server)"
    assert ChildOutcome("timeout").ended == "timeout"


def test_oracles_disagreeing_is_a_harness_error_not_a_verdict(tmp_path: Path) -> None:
    ledger = tmp_path / "l.sqlite"
    result = run_child("tests.child_targets:lie_about_counter", {"ledger": str(ledger), "incarnation": "liar"}).require_ok()
    with pytest.raises(HarnessError, match="oracles disagree"):
        cross_check(result["counter"], Ledger(ledger), "liar")


def test_oracle_agrees_with_itself(tmp_path: Path) -> None:
    oracle = Oracle(tmp_path / "l.sqlite", "p")
    oracle.fire("x")
    oracle.fire("x")
    assert oracle.cross_check() == {"x": 2}


def test_a_report_waits_for_an_effect_in_flight_and_a_later_one_is_late(tmp_path: Path) -> None:
    """A framework thread may fire while the process reports: the report never sees an effect half
    fired (counted, not yet in the ledger), and one fired after it is in the ledger as late."""
    oracle = Oracle(tmp_path / "l.sqlite", "p")
    entered, release = threading.Event(), threading.Event()
    record = oracle.ledger.record

    def slow_record(*a: object, **k: object) -> None:  # the ledger write of the effect in flight, held
        entered.set()
        release.wait(5)
        record(*a, **k)

    oracle.ledger.record = slow_record  # type: ignore[method-assign]
    firing = threading.Thread(target=oracle.fire, args=("e2",))
    firing.start()
    entered.wait(5)
    reported: list[dict[str, int]] = []
    reporter = threading.Thread(target=lambda: reported.append(oracle.report()))
    reporter.start()
    reporter.join(0.2)
    assert reporter.is_alive() and not reported  # the report waits for the ledger row
    release.set()
    firing.join(5)
    reporter.join(5)
    assert reported == [{"e2": 1}]
    assert cross_check(reported[0], oracle.ledger, "p") == {"e2": 1}
    oracle.fire("e3")  # after the report
    assert cross_check(reported[0], oracle.ledger, "p") == {"e2": 1}
    assert oracle.ledger.counts(f"p{LATE}") == {"e3": 1}
    assert [(e.incarnation, e.effect) for e in oracle.ledger.history().of(Kind.EFFECT)] == [("p", "e2"), (f"p{LATE}", "e3")]


def test_fail_once_fails_once_across_instances(tmp_path: Path) -> None:
    with pytest.raises(InjectedCrash):
        FailOnce(tmp_path).maybe_fail("s2")
    FailOnce(tmp_path).maybe_fail("s2")  # a recovery in a fresh object (or process) does not fail again


def test_atomic_write_killed_before_rename_leaves_old_file(tmp_path: Path) -> None:
    target = tmp_path / "receipt.json"
    atomic_write_json(target, {"version": 1})
    out = run_child("probes.core.atomic:atomic_write_json", {"path": str(target), "obj": {"version": 2}},
                    park_at="atomic-write:before-rename")
    out.require_killed()
    assert json.loads(target.read_text()) == {"version": 1}
    assert remove_stale_temp_files(tmp_path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["receipt.json"]


def test_labels_follow_the_documentation() -> None:
    s = Subject("fw", "sqlite")
    claim = DocRef("https://example.invalid/docs", "resumes without re-running completed work", "claims")
    deviation = DocRef("module.py: docstring", "the step is re-run", "deviation")
    assert s.verdict(Property.EO, "p", True, {}, "").label is Label.PASS
    assert s.verdict(Property.EO, "p", False, {}, "").label is Label.UNDOC
    assert s.verdict(Property.EO, "p", False, {}, "", doc=claim).label is Label.FAIL
    assert s.verdict(Property.PC, "p", False, {}, "", doc=deviation).label is Label.DOC
    assert checker.comparable("U") == checker.comparable("✗") == "violates"


def test_property_checks() -> None:
    assert checker.at_most_once({"a": 1, "b": 2})[0] is False
    assert checker.exactly_once({"a": 1}, ["a", "b"])[1]["off"] == {"b": 0}
    assert checker.prefix_not_reentered({"s1": 1}, ["s1"])[0] is False
    holds, ev = checker.fork_outcome(observed=2, expected=1, first_outcome=2)
    assert not holds and ev["served_first_outcome"]
    assert checker.invalid_state_refused(False, True, None)[0] is False
    assert checker.same_decision({"a": 3, "b": 3})[0] is True


def test_params_validate_and_unknown_names_fail() -> None:
    assert CAMPAIGN_A.resolve({"probes": 5})["probes"] == 5
    with pytest.raises(UsageError, match="unknown parameter 'jitter'"):
        CAMPAIGN_A.resolve({"jitter": 3})
    with pytest.raises(UsageError, match="must be int"):
        CAMPAIGN_A.resolve({"probes": "many"})
    assert Param("j", "list[float]", [0.0], [0.0], "jitter").validate([0, 50]) == [0.0, 50.0]
    assert parse_value("[0, 50]") == [0, 50] and parse_value("true") is True and parse_value("sqlite") == "sqlite"


def test_seeds_differ_per_cell() -> None:
    assert seed_for(1, "k=4", "jitter=0") != seed_for(1, "k=4", "jitter=100")
    assert seed_for(1, "x") == seed_for(1, "x")


def test_campaign_resumes_and_view_is_byte_identical(sandbox: dict, tmp_path: Path) -> None:
    receipts = Path(sandbox["RECEIPTS"])
    params = CAMPAIGN_A.resolve({"probes": 3})
    first = run_campaign(CAMPAIGN_A, params, receipts)
    assert first.ran == ["a1", "a2", "a3"] and not first.harness_errors
    view = (receipts / "selftest_a" / "verdicts.json").read_bytes()
    second = run_campaign(CAMPAIGN_A, params, receipts)
    assert second.ran == [] and second.reused == ["a1", "a2", "a3"]
    assert view_bytes(second.receipts) == view
    runs = Ledger(sandbox["RC_SELFTEST_LEDGER"]).counts()
    assert runs == {"started": 3}
    # other parameters in the same explicit directory: the old receipts are set aside
    # (kept under _superseded/), never mixed in and never deleted
    third = run_campaign(CAMPAIGN_A, CAMPAIGN_A.resolve({"probes": 2}), receipts)
    assert third.ran == ["a1", "a2"]
    assert sorted(p.name for p in (receipts / "selftest_a").glob("a*.json")) == ["a1.json", "a2.json"]
    assert sorted(p.name for p in (receipts / "selftest_a" / "_superseded").glob("a*.json")) == \
        ["a1.json", "a2.json", "a3.json"]


def test_receipt_manifest_records_what_made_it(sandbox: dict) -> None:
    run = run_campaign(CAMPAIGN_A, CAMPAIGN_A.resolve(), Path(sandbox["RECEIPTS"]))
    manifest = run.receipts[0].manifest
    assert {"packages", "python", "platform", "params", "seed", "commit", "fingerprint"} <= manifest.keys()
    assert manifest["packages"]["langgraph"] == "1.2.9"
    assert manifest["seed"] == seed_for(7, "selftest_a", "a1")


def test_malformed_receipt_is_one_clear_error(sandbox: dict) -> None:
    path = Path(sandbox["RECEIPTS"]) / "selftest_a" / "a1.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"schema": "resume-contract-receipt/1", "campaign": ')
    with pytest.raises(ReceiptError, match=r"malformed receipt .*a1.json.*delete"):
        load_receipt(path)
    with pytest.raises(ReceiptError):
        run_campaign(CAMPAIGN_A, CAMPAIGN_A.resolve(), Path(sandbox["RECEIPTS"]))


def test_a_second_concurrent_run_of_a_campaign_is_refused(sandbox: dict) -> None:
    from probes.core.campaign import campaign_dir, exclusive

    directory = campaign_dir("selftest_a", Path(sandbox["RECEIPTS"]))
    directory.mkdir(parents=True)
    with exclusive(directory, "selftest_a"):
        with pytest.raises(UsageError, match="another run of campaign selftest_a is in progress"):
            run_campaign(CAMPAIGN_A, CAMPAIGN_A.resolve(), Path(sandbox["RECEIPTS"]))
    assert run_campaign(CAMPAIGN_A, CAMPAIGN_A.resolve(), Path(sandbox["RECEIPTS"])).ran == ["a1", "a2", "a3"]


def test_a_paused_child_is_stopped_at_its_pause_point_and_goes_on_when_resumed() -> None:
    with PausedChild("tests.child_targets:pause_then_return", {"name": "here"}, pause_at="here") as child:
        assert child.stop() == "here#1"
        with open(f"/proc/{child.proc.pid}/stat") as fh:
            assert fh.read().rsplit(")", 1)[1].split()[0] == "T"  # the kernel has it stopped
        child.resume()
        outcome = child.finish(timeout=120)
    assert outcome.status == "ok" and outcome.result["went_on"] is True, outcome
    assert outcome.result["pid"] == child.proc.pid and not os.path.exists(f"/proc/{child.proc.pid}")


def test_a_paused_child_left_stopped_is_killed_when_the_block_ends() -> None:
    try:
        with PausedChild("tests.child_targets:pause_then_return", {"name": "here"}, pause_at="here") as child:
            child.stop()
            raise RuntimeError("a failing test")
    except RuntimeError:
        pass
    assert child.proc.returncode == -signal.SIGKILL


def _open_and_record(path: str, barrier, errors) -> None:
    barrier.wait()  # every process opens the brand-new file at the same instant
    try:
        Ledger(path).record("opened", str(os.getpid()))
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        errors.put(repr(exc))


def test_processes_opening_a_new_ledger_at_once_all_record(tmp_path: Path) -> None:
    """Before the preparation was serialized this failed within the first 30 trials on
    every try ("database is locked": SQLite does not wait on a concurrent switch to WAL),
    which had ended a `--jobs 2` run of the self-test campaigns before its kill point in CI."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    for trial in range(150):
        path = str(tmp_path / f"trial{trial}" / "ledger.sqlite")
        barrier, errors = context.Barrier(5), context.Queue()
        workers = [context.Process(target=_open_and_record, args=(path, barrier, errors)) for _ in range(5)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        assert errors.empty(), f"trial {trial}: {errors.get()}"
        assert sum(Ledger(path).counts().values()) == 5
