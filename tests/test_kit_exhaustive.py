"""Exhaustive crash points (``probes.kit.exhaustive``): the points come from a traced baseline.

The enumeration's rules on made-up traces; then the protocol on a framework-free adapter (step
boundaries only: it hooks no save), on the real Microsoft Agent Framework (every save's enter,
write and exit) and on LangGraph's stock SQLite saver (checkpoints written on a background
thread), each with a small cap. What the baseline recorded (its saves) decides how many save
points there are; a known verdict sits at a known point.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from probes.core.campaign import run_campaign
from probes.core.checker import Property
from probes.kit import exhaustive as ex
from probes.kit.adapter import Capability
from tests.installed import require


def _points(start: list[str], answer: list[str]) -> list[ex.Point]:
    return ex.enumerate_points({"start": [(n, n != "kit.paused") for n in start],
                                "answer": [(n, True) for n in answer]})


def test_points_are_numbered_over_the_run_and_listed_lane_by_lane() -> None:
    # a checkpoint writer on another thread: its points interleave with the steps' in the trace
    pts = _points(["save.enter", "s1.begin", "save.exit", "s1.effect", "save.enter", "save.exit", "kit.paused"],
                  ["save.enter", "s2.consumed", "save.exit"])
    assert [p.label for p in pts] == ["s1.begin#1", "s1.effect#1", "save.enter#1", "save.exit#1", "save.enter#2",
                                      "save.exit#2", "kit.paused#1", "s2.consumed#1", "save.enter#3", "save.exit#3"]
    third = next(p for p in pts if p.label == "save.enter#3")
    assert (third.phase, third.address, third.step) == ("answer", "save.enter#1", 0)  # addressed in its process
    assert [p.index for p in pts] == list(range(len(pts)))
    assert not next(p for p in pts if p.name == "kit.paused").raisable


def test_the_cap_spreads_its_points_from_the_first_to_the_last() -> None:
    pts = _points([f"s{i}" for i in range(10)], [])
    assert [p.name for p in ex.select(pts, 4)] == ["s0", "s3", "s6", "s9"]
    assert ex.select(pts, 1) == pts[:1] and ex.select(pts, 99) == pts


def test_each_point_is_cited_as_the_hand_picked_protocol_measuring_the_same_experiment() -> None:
    pts = {p.label: p for p in _points(["s1.effect", "save.write", "save.write"], [])}
    assert ex.cited_as(pts["save.write#2"], "kill", "latest", "latest") == "save-kill:save.write#2"
    assert ex.cited_as(pts["save.write#2"], "raise", "latest", "latest") == "crash:raise@save.write#2/latest"
    assert ex.cited_as(pts["s1.effect#1"], "kill", "other", "latest") == "crash:kill@s1.effect/other"


def test_a_faulted_run_off_the_baselines_path_is_named() -> None:
    base = [(n, True) for n in ("s1.begin", "save.enter", "s1.effect", "save.exit", "s2.begin")]
    at = next(p for p in ex.enumerate_points({"start": base}) if p.label == "s2.begin#1")
    assert ex.off_path(base, [(n, True) for n in ("save.enter", "s1.begin", "s1.effect", "s2.begin")], at) is None
    assert "never reached" in ex.off_path(base, base[:3], at)
    assert "steps lane reached ['s1.effect']" in ex.off_path(base, [("s1.effect", True), ("s2.begin", True)], at)


def test_a_lane_reached_off_the_main_thread_is_named() -> None:
    traces = {"start": [("s1.begin", True, True), ("save.enter", True, False)], "answer": [("s2.effect", True, True)]}
    assert ex.off_main_thread(traces) == ["save"]
    assert ex.off_main_thread({"start": [("save.enter", True, True)]}) == []
    # handed to a thread and awaited (MAF) is sequential; a step inside an open save is not (LangGraph async)
    assert ex.steps_in_save([("save.enter", True, False), ("save.exit", True, False), ("s1.begin", True, True)]) == []
    assert ex.steps_in_save([("save.enter", True, False), ("s1.begin", True, True), ("save.exit", True, False),
                             ("kit.paused", False, True)]) == ["s1.begin"]


def test_without_recovery_every_property_is_not_applicable(tmp_path: Path) -> None:
    from probes.kit.protocols import Probe, Target
    from tests.fixtures.plain_adapter import PlainAdapter

    class NoRecover(PlainAdapter):
        capabilities = PlainAdapter.capabilities - {Capability.RECOVER}
        missing = {Capability.RECOVER: "test: nothing to recover from"}

    probe = Probe(Target("tests:none", NoRecover, "file"), tmp_path, lambda label: None)
    out = ex.exhaustive(probe, {"how": "kill", "mode": "latest", "cap": 3})
    assert [(v.property, v.label.value) for v in out] == [(p, "n/a") for p in ex.PROPERTIES]
    assert "nothing to recover from" in out[0].summary and not (tmp_path / "baseline").exists()


def _measure(name: str, adapter: str | None, out: Path, **params: Any) -> tuple[Any, dict]:
    from probes import campaigns
    from probes.kit.suite import kit_campaign

    campaign = kit_campaign(name, name, adapter) if adapter else campaigns.get(name)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["exhaustive"], **params}, quick=True), out)
    assert run.harness_errors == []
    verdicts = {(v.property, v.path): v for r in run.receipts for v in r.verdicts}
    return run, verdicts


def _enumeration(run: Any) -> dict[str, Any]:
    return run.receipts[0].observations["exhaustive"]


def test_without_a_save_hook_the_step_boundaries_are_the_points(tmp_path: Path) -> None:
    """A framework-free adapter (one JSON file): every boundary crashed, byte-identical twice."""
    runs = [_measure("plain_exhaustive", "tests.fixtures.plain_adapter:PlainAdapter", tmp_path / str(i),
                     crash_hows=["kill"], exhaustive_cap=100) for i in (1, 2)]
    run, verdicts = runs[0]
    enum = _enumeration(run)
    assert [(p["phase"], p["label"]) for p in enum["points"]] == [
        ("start", "s1.begin#1"), ("start", "s1.effect#1"), ("start", "s2.begin#1"), ("start", "kit.paused#1"),
        ("answer", "s2.consumed#1"), ("answer", "s2.effect#1")]
    assert enum["measured"] == [p["label"] for p in enum["points"]] and enum["saves"] == 2
    assert enum["off_main_thread"] == [] and enum["interleaved"] == []  # one thread: the same history every run
    # killed after e1 fired and before the state file was written: recovery starts over, e1 again
    eo = verdicts[(Property.EO, "exhaustive:kill@s1.effect#1/latest")]
    assert eo.label.value == "U" and eo.evidence["effect_counts"] == {"e1": 2, "e2": 1}
    assert verdicts[(Property.EO, "exhaustive:kill@kit.paused#1/latest")].label.value == "✓"
    first, second = ((d / "plain_exhaustive" / "verdicts.json").read_bytes() for d in (tmp_path / "1", tmp_path / "2"))
    assert first == second


@pytest.fixture(scope="module")
def maf(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict]:
    require("agent_framework")
    return _measure("maf", None, tmp_path_factory.mktemp("maf-exhaustive"), crash_hows=["kill", "raise"],
                    exhaustive_cap=4)


def test_maf_save_points_are_the_saves_the_baseline_recorded(maf: tuple[Any, dict]) -> None:
    run, _ = maf
    enum = _enumeration(run)
    names = [p["name"] for p in enum["points"]]
    assert enum["saves"] >= 4 and all(names.count(pt) == enum["saves"] for pt in ("save.enter", "save.write",
                                                                                   "save.exit"))
    assert enum["interleaved"] == []  # its saves are awaited: no step is reached while one is open
    assert [n for n in names if not n.startswith("save.")] == ["s1.begin", "s1.effect", "s2.begin", "kit.paused",
                                                               "s2.consumed", "s2.effect"]
    points = [ex.Point(**{k: v for k, v in p.items() if k not in ("label", "address", "lane")})
              for p in enum["points"]]
    assert enum["measured"] == [p.label for p in ex.select(points, 4)]
    raised = next(r for r in run.receipts if r.observations["exhaustive"]["how"] == "raise")
    assert raised.observations["exhaustive"]["candidates"] == len(points) - 1  # not at kit.paused


def test_maf_killed_writing_the_checkpoint_after_s1_runs_s1_again(maf: tuple[Any, dict]) -> None:
    _, verdicts = maf
    eo = verdicts[(Property.EO, "exhaustive:kill@save.write#2/latest-checkpoint")]
    assert eo.label.value == "U" and eo.evidence["effect_counts"] == {"e1": 2, "e2": 1}
    assert verdicts[(Property.EO, "exhaustive:kill@s1.begin#1/latest-checkpoint")].label.value == "✓"


def test_langgraph_sqlite_checkpoints_are_the_puts_the_baseline_recorded(tmp_path: Path) -> None:
    require("langgraph.checkpoint.sqlite")
    run, verdicts = _measure("langgraph_kit", None, tmp_path, backends=["sqlite"], crash_hows=["kill"],
                             exhaustive_cap=4)
    enum = _enumeration(run)
    names = [p["name"] for p in enum["points"]]
    assert names.count("save.enter") == names.count("save.exit") == enum["saves"] >= 3
    assert "save.write" not in names  # the adapter hooks put() and no lower-level write
    assert enum["off_main_thread"] == ["save"]  # durability="async": put() runs on a background thread
    assert len(enum["measured"]) == 4 and enum["measured"][0] == "s1.begin#1"
    # killed parked at the pause (every checkpoint of the start written): s1 is durable and is not run again
    assert "kit.paused#1" in enum["measured"]
    pc = verdicts[(Property.PC, "exhaustive:kill@kit.paused#1/none-input")]
    assert pc.label.value == "✓" and "durable prefix ['s1']" in pc.summary


def test_a_process_that_hangs_after_its_injected_exception_crashed_and_a_hang_without_one_is_the_harness(
        tmp_path: Path) -> None:
    from probes.core.errors import HarnessError
    from probes.core.history import Kind
    from probes.kit.protocols import Probe, Target
    from tests.fixtures.hanging_adapter import SwallowingAdapter

    target = Target("tests.fixtures.hanging_adapter:SwallowingAdapter", SwallowingAdapter, "file", timeout=8.0)
    probe = Probe(target, tmp_path, lambda label: None)
    run = probe.run("run")
    assert run.start(fail_at="s1.effect") == {"status": "hung"}
    (crash,) = probe.read().of(Kind.CRASH)
    assert crash.detail["framework_status"] == "hung" and crash.detail["at"] == "s1.effect"
    assert "did not end within 8 s" in crash.detail["then"]
    assert run.recover("recover", "latest", "yes")["status"] == "paused"  # the fault fires once: recovery runs
    with pytest.raises(HarnessError, match="ended timeout"):
        run.answer("answer", None, "hang")
    run.hang_is_behaviour = True  # a run whose hang is the framework's (probes.studies.mv: a resume by another release)
    assert run.answer("again", None, "hang") == {"status": "hung"}
    assert probe.read().of(Kind.ERROR)[-1].value == "hung"
