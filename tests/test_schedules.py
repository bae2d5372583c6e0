"""Schedule records (``probes.schedules``): which records are a reproduction's time, what promote copies,
and the timeline drawn from one. The records a real measurement writes are tested in test_reproduce.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes import schedules


def _record(**changes: object) -> dict:
    record = {"schema": schedules.SCHEMA, "selection": "default", "jobs": 2, "cores": 2, "clean": True,
              "started": "2026-12-05T01:00:00+00:00", "commit": "abc", "interrupted": False, "elapsed_s": 100.0,
              "campaigns": {"tlc": {"wave": 0, "alone": False, "profile": "default", "outcome": "measured",
                                    "start_s": 0.0, "end_s": 60.0},
                            "langgraph": {"wave": 0, "alone": False, "profile": "default", "outcome": "measured",
                                          "start_s": 0.0, "end_s": 20.0},
                            "crewai": {"wave": 0, "alone": False, "profile": "default", "outcome": "measured",
                                       "start_s": 20.0, "end_s": 50.0},
                            "consume_race": {"wave": 1, "alone": True, "profile": "default", "outcome": "measured",
                                             "start_s": 60.0, "end_s": 100.0}}}
    record.update(changes)
    return record


def test_only_the_default_run_measured_whole_is_a_reproductions_time() -> None:
    assert schedules.end_to_end(_record())
    assert not schedules.end_to_end(_record(selection="only"))
    assert not schedules.end_to_end(_record(interrupted=True))
    for key, value in (("outcome", "skipped"), ("outcome", "failed"), ("profile", "quick"), ("resumed_receipts", 3)):
        record = _record()
        record["campaigns"]["crewai"][key] = value
        assert not schedules.end_to_end(record), (key, value)


def test_promote_copies_the_newest_clean_end_to_end_record_once(tmp_path: Path) -> None:
    runs, reference = tmp_path / "runs", tmp_path / "reference"
    assert schedules.promote_newest(runs, reference) is None  # nothing measured yet
    schedules.write(_record(), runs)
    schedules.write(_record(started="2026-12-05T02:00:00+00:00", clean=False), runs)  # newer, but a dirty tree
    schedules.write(_record(started="2026-12-05T03:00:00+00:00", selection="only"), runs)  # newer, not whole
    copied = schedules.promote_newest(runs, reference)
    assert copied is not None and copied.name == "20261205T010000Z-jobs2.json"
    assert schedules.promote_newest(runs, reference) is None  # already there
    source, record = schedules.newest_end_to_end(tmp_path / "elsewhere", reference)
    assert source == "reference run" and record["started"] == "2026-12-05T01:00:00+00:00"
    assert schedules.newest_end_to_end(runs, reference)[0] == "this machine"
    # a later run with --jobs 1 on 2 cores does not take the place of the run as ./reproduce.sh runs by default
    schedules.write(_record(started="2026-12-05T04:00:00+00:00", jobs=1), reference)
    assert schedules.newest_end_to_end(tmp_path / "elsewhere", reference)[1]["jobs"] == 2
    assert [(src, r["started"][11:13]) for src, r in schedules.end_to_end_records(runs, reference)] == [
        ("this machine", "01"), ("this machine", "02"), ("reference run", "01"),  # a dirty tree's too; not --only
        ("reference run", "04")]


def test_the_timeline_draws_a_bar_per_campaign_in_start_order_and_the_budget() -> None:
    fig = schedules.figure(_record(), budget_s=90.0)
    ax = fig.axes[0]
    assert len(ax.patches) == 4  # one bar per campaign
    # in the order they started (the longer first where two started together)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["tlc", "langgraph", "crewai", "consume_race"]
    assert [p.get_width() for p in ax.patches] == pytest.approx([1.0, 20 / 60, 0.5, 40 / 60])  # minutes
    assert any(line.get_xdata()[0] == 1.5 for line in ax.get_lines())  # the budget: 90 s = 1.5 min
