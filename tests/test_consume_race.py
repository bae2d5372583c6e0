"""The consume race against real LangGraph processes (small grids; receipts go to tmp).

What is asserted is what can fail: stock LangGraph lets racing resumes fire the gated
effect more than once; the REMIT gate keeps it at exactly one with losers failing
loudly; a racer that crashes or hangs becomes a harness error with its stderr and the
campaign goes on; verdicts are byte-identical across runs; cells do not share offsets.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from probes.studies.consume_race import campaign as cr
from probes.paper import consume_race as cr_paper
from probes.studies.consume_race.racer import Racer, gate_arm_available
from probes.core.campaign import run_campaign
from probes.core.receipt import view_bytes

SMALL = {"k": [2], "jitter_ms": [0.0], "gate_ms": [0.0], "reps": 3, "backends": ["sqlite"], "arms": ["stock"],
         "dose_jitter_ms": [], "dose_gate_ms": [], "racer_timeout_s": 60.0, "concurrency_arms": []}


def _run(tmp_path: Path, name: str, **overrides: Any):
    params = cr.CAMPAIGN.resolve({**SMALL, **overrides}, quick=True)
    return run_campaign(cr.CAMPAIGN, params, receipts_root=tmp_path / name)


@pytest.fixture(autouse=True, scope="module")
def _stop_workers():
    yield
    cr.close_pools()


def test_stock_sqlite_k2_jitter0_fires_twice_and_verdicts_are_stable(tmp_path: Path) -> None:
    first = _run(tmp_path, "a", jitter_ms=[0.0, 5.0, 25.0])
    assert first.harness_errors == []
    by_id = {r.probe: r for r in first.receipts}
    cell = by_id["grid.sqlite.stock.k2.j0.g0"]
    reps = cell.observations["reps"]
    # Measured with LangGraph 1.2.9: both racers consume the same answer.
    assert any(r["fires"] > 1 for r in reps), reps
    assert all(r["fires"] <= 2 for r in reps)
    summary = cell.observations["summary"]
    assert summary["reps_measured"] == 3 and summary["max_fires"] == 2
    assert sum(int(f) * n for f, n in summary["distribution"].items()) == sum(r["fires"] for r in reps)
    low, high = summary["saturation_wilson95"]
    assert low <= summary["saturation"] <= high
    # Both racers saw the pending interrupt before the barrier, and resumed without error.
    assert all(o["saw_pending"] and o["outcome"] == "returned" for r in reps for o in r["racers"])
    assert [v.property.value for v in cell.verdicts] == ["CO", "EO", "LV"]
    verdict = cell.verdicts[0]
    assert (verdict.framework, verdict.backend, verdict.property.value, verdict.label.value) == \
        ("langgraph", "sqlite", "CO", "D")
    assert verdict.path == "cross-process k=2 jitter=0ms"
    assert verdict.evidence["duplicates_observed"] is True and verdict.evidence["unfired_observed"] is False
    # two fires on a completed run is an EO failure too; both racers completed: LV holds
    assert cell.verdicts[1].label.violates and cell.verdicts[2].label.value == "✓"
    assert verdict.doc.source == "LG-28" and "double-texting" in verdict.doc.page  # cited, not U
    # Only jitter-0 cells carry a verdict; the others are observations.
    assert not by_id["grid.sqlite.stock.k2.j25.g0"].verdicts
    # Offsets are recorded per rep and drawn per cell: j5 and j25 are not rescaled copies.
    off5 = [o for r in by_id["grid.sqlite.stock.k2.j5.g0"].observations["reps"] for o in r["offsets_ms"]]
    off25 = [o for r in by_id["grid.sqlite.stock.k2.j25.g0"].observations["reps"] for o in r["offsets_ms"]]
    assert len(off5) == len(off25) == 6
    assert all(0 <= o <= 5 for o in off5) and all(0 <= o <= 25 for o in off25)
    assert [round(o / 5, 2) for o in off5] != [round(o / 25, 2) for o in off25]
    # Same versions, same verdict view, although the fire counts may differ.
    second = _run(tmp_path, "b", jitter_ms=[0.0, 5.0, 25.0])
    assert second.harness_errors == []
    assert view_bytes(first.receipts) == view_bytes(second.receipts)
    heads = cr_paper.headlines(first.receipts)
    assert heads["consume_race.k2"].value["distribution"] == summary["distribution"]
    assert isinstance(heads["consume_race.k16_sqlite"], str)  # not in this grid: says so
    _render_chapter(first.directory.parent, tmp_path)


def _render_chapter(receipts_root: Path, tmp_path: Path) -> None:
    """The chapter renders from receipts alone (RC_RENDER_FROM), also for a grid without dose cells."""
    import nbformat
    import papermill

    from probes import NOTEBOOKS_DIR

    out = tmp_path / "chapter.ipynb"
    env = {"RC_RENDER_FROM": str(receipts_root / "consume_race"), "RC_FIGURES_DIR": str(tmp_path / "figs")}
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        papermill.execute_notebook(str(NOTEBOOKS_DIR / "consume_race.ipynb"), str(out), kernel_name="python3",
                                   progress_bar=False, cwd=str(Path(__file__).resolve().parent.parent))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    text = out.read_text()
    assert "reproduce.sh --only consume_race -p jitter_ms '[0, 50]' -p reps 5" in text
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert "grid.sqlite.stock.k2.j0.g0" in text
    assert (tmp_path / "figs" / "consume_race-heatmap.svg").exists()


@pytest.mark.skipif(not gate_arm_available()[0], reason="remit_ref consumption gate not importable")
def test_gate_arm_fires_exactly_once_and_losers_fail_loudly(tmp_path: Path) -> None:
    run = _run(tmp_path, "gate", k=[4], arms=["stock", "gate"], backends=["sqlite", "postgres"])
    assert run.harness_errors == []
    for backend in ("sqlite", "postgres"):
        gate = next(r for r in run.receipts if r.probe == f"grid.{backend}.gate.k4.j0.g0")
        s = gate.observations["summary"]
        assert s["distribution"] == {"1": 3}, s  # exactly one fire per rep: no double, no lost answer
        assert s["lost_reps"] == 0
        # The contract, not a timing: every racer either fired, conflicted loudly, or (late, the
        # thread already finished) found nothing pending and returned without firing.
        assert set(s["errors_raised"]) <= {"remit_ref.errors.ConsumeConflict"}, s
        for rep in gate.observations["reps"]:
            assert rep["fires"] == 1 and len(rep["fired_by"]) == 1, rep
            for o in rep["racers"]:
                fired = o["fired"] == 1
                conflicted = o["outcome"] == "raised" and o["error"]["type"] == "remit_ref.errors.ConsumeConflict"
                no_op = o["outcome"] == "returned" and o["fired"] == 0
                assert [fired, conflicted, no_op].count(True) == 1, (rep, o)
            assert sum(o["fired"] for o in rep["racers"]) == 1
        v = gate.verdicts[0]
        assert [x.label.value for x in gate.verdicts] == ["✓", "✓", "✓"]  # CO, EO, LV
        assert (v.framework, v.label.value) == ("langgraph+remit", "✓")
        assert v.evidence == {"k": 4, "jitter_ms": 0, "reps": 3, "duplicates_observed": False,
                              "unfired_observed": False}
        stock = next(r for r in run.receipts if r.probe == f"grid.{backend}.stock.k4.j0.g0")
        assert stock.observations["summary"]["max_fires"] > 1
    heads = cr_paper.headlines(run.receipts)
    assert heads["consume_race.gate_fix"].value["distribution"] == {"1": 3}


class CrashingRacer(Racer):
    """Real racer, except racer 1 dies in rep 1 and racer 0 hangs in rep 2 of the j0 cell."""

    def go(self) -> dict[str, Any]:
        inc, loc = self.task["incarnation"], self.task["location"]
        if inc == "rep1.racer1" and _first_cell(loc):
            print("racer 1: deliberate crash before resuming", flush=True)
            os._exit(9)
        if inc == "rep2.racer0" and _first_cell(loc):
            print("racer 0: deliberate hang", flush=True)
            time.sleep(3600)
        return super().go()


def _first_cell(location: str) -> bool:
    # The first store of a run is "<...>/cr_sqlite-1.sqlite" (StoreFactory numbering).
    return location.endswith("-1.sqlite")


def test_crashing_and_hanging_racers_are_harness_errors_and_the_campaign_continues(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cr, "RACER_TARGET", "tests.test_consume_race:CrashingRacer")
    run = _run(tmp_path, "broken", jitter_ms=[0.0, 1.0], reps=4, racer_timeout_s=5.0)
    by_id = {r.probe: r for r in run.receipts}
    assert set(by_id) == {"grid.sqlite.stock.k2.j0.g0", "grid.sqlite.stock.k2.j1.g0"}
    broken = by_id["grid.sqlite.stock.k2.j0.g0"]
    errors = "\n".join(broken.harness_errors)
    assert "rep 1 racer 1: crashed during go" in errors and "deliberate crash" in errors
    assert "rep 2 racer 0: timeout during go" in errors and "deliberate hang" in errors
    reps = broken.observations["reps"]
    assert [bool(r.get("harness_error")) for r in reps] == [False, True, True, False]
    # The broken reps are not counted; the verdict rests on the clean ones only.
    assert broken.observations["summary"]["reps_measured"] == 2
    assert [(v.property.value, v.evidence["duplicates_observed"]) for v in broken.verdicts if v.property.value != "LV"] \
        == [("CO", True), ("EO", True)]
    assert [v.evidence["reps"] for v in broken.verdicts] == [2, 2, 2]  # CO, EO, LV: the clean reps only
    # The next cell ran with fresh workers and no errors.
    assert by_id["grid.sqlite.stock.k2.j1.g0"].harness_errors == []
    assert by_id["grid.sqlite.stock.k2.j1.g0"].observations["summary"]["reps_measured"] == 4


def test_lanes_only_where_the_gated_node_sets_the_window() -> None:
    params = cr.CAMPAIGN.resolve({"dose_lanes": 4, "reps": 3})
    assert cr.lanes_for(params, "dose", 500.0) == 3  # never more lanes than reps
    assert cr.lanes_for(params, "dose", 0.0) == 1  # gate 0: the window is CPU time, one rep at a time
    assert cr.lanes_for(params, "grid", 500.0) == 1  # the main grid (verdicts) never overlaps reps
    assert cr.lanes_for(cr.CAMPAIGN.resolve({"dose_lanes": 1}), "dose", 2000.0) == 1


def test_dose_lanes_overlap_reps_with_own_stores_and_same_offsets(tmp_path: Path) -> None:
    """Two lanes: every rep measured once, in rep order, lane recorded; offsets as in one lane."""
    dose = {"k": [2], "jitter_ms": [0.0], "reps": 4, "dose_k": 2, "dose_jitter_ms": [50.0],
            "dose_gate_ms": [200.0], "backends": ["sqlite", "postgres"]}
    two = _run(tmp_path, "lanes2", **dose, dose_lanes=2)
    one = _run(tmp_path, "lanes1", **dose, dose_lanes=1)
    assert two.harness_errors == [] and one.harness_errors == []
    for backend in ("sqlite", "postgres"):
        pid = f"dose.{backend}.stock.k2.j50.g200"
        lanes2 = next(r for r in two.receipts if r.probe == pid)
        lanes1 = next(r for r in one.receipts if r.probe == pid)
        assert lanes2.metrics["lanes"] == 2 and lanes1.metrics["lanes"] == 1
        assert lanes2.observations["schedule"]["reps_by_lane"] == {"0": [0, 2], "1": [1, 3]}
        assert "schedule" not in lanes1.observations
        reps2 = lanes2.observations["reps"]
        assert [r["rep"] for r in reps2] == [0, 1, 2, 3]
        assert [r.get("lane", 0) for r in reps2] == [0, 1, 0, 1]
        # Offsets come from the cell's seed, not from the schedule.
        assert [r["offsets_ms"] for r in reps2] == [r["offsets_ms"] for r in lanes1.observations["reps"]]
        # Each rep counted only its own lane's ledger rows: between 1 and k fires, never the park.
        assert all(1 <= r["fires"] <= 2 and r["park_fires"] == 0 for r in reps2)
        assert lanes2.observations["summary"]["reps_measured"] == 4
    assert view_bytes(two.receipts) == view_bytes(one.receipts)
