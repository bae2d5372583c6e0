"""The R8 headline compares the unreduced scaled search with the published counts.

The published R8 counts (1.47x10^7 generated / 7.4x10^6 distinct, depth 24) are those of a
complete search with no state-space reduction; the campaign's default R8_scaled search uses VIEW
+ value symmetry, whose counts are of equivalence classes and so are "not comparable". With
``scaled_unreduced`` the same search also runs without reduction, and the headline compares that
run's counts at the published rounding. Most tests build the unreduced run's receipt by hand
(no TLC: the real unreduced search takes minutes) and go through the paper layer's ``headlines`` and
``probes.headline.compare``, so the wiring and the computed status are both checked; the last runs
the cell with real TLC at small scaled bounds (seconds).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from probes import campaigns
from probes.core.receipt import Receipt, load_campaign
from probes.paper import tla as tla_paper
from probes.headline import (DIFFERS, MAGNITUDES, NOT_COMPARABLE, REPRODUCED, HeadlineRow, Measured, compare,
                             load_published)
from probes.tla.campaign import R8_TOLERANCE, UNREDUCED_R8
from tests.conftest import ROOT

REFERENCE = ROOT / "data" / "reference" / "tlc"


def _published(hid: str) -> dict[str, Any]:
    return next(e for e in load_published() if e["id"] == hid)


def _reference_receipts() -> list[Receipt]:
    """The committed reference run without any unreduced receipt (each test adds its own)."""
    return [r for r in load_campaign(REFERENCE, verify=False) if r.probe != "scaled.unreduced"]


def _unreduced(receipts: list[Receipt], generated: int, distinct: int, depth: int, result: str = "holds",
               seconds: float = 300.0) -> Receipt:
    """A hand-made ``scaled.unreduced`` receipt: the reference's R8_scaled run with its reduction removed."""
    clean = next(r for r in receipts if r.probe == "scaled.clean")
    run = copy.deepcopy(clean.observations["runs"]["R8_scaled"])
    run.update({"config": UNREDUCED_R8, "result": result, "generated": generated, "distinct": distinct,
                "depth": depth, "search_depth": depth, "module": "ResumePlane",
                "tags": {"group": "scaled", "fault": "none", "reduction": "none"}})
    run["constants"] = {k: v for k, v in run["constants"].items() if k != "VSet"}
    return Receipt("tlc", "scaled.unreduced", {"group": "scaled", "key": "unreduced", "configs": [UNREDUCED_R8]},
                   clean.manifest, {"group": "scaled", "key": "unreduced", "runs": {UNREDUCED_R8: run}}, [],
                   {UNREDUCED_R8: {"seconds": seconds, "workers": 2}}, [])


def _row(receipts: list[Receipt]) -> tuple[Measured, HeadlineRow]:
    measured = tla_paper.headlines(receipts)["tlc.r8_scale"]
    return measured, compare(_published("tlc.r8_scale"), measured, "")


def test_without_the_unreduced_run_the_reduced_counts_are_not_comparable() -> None:
    measured, row = _row(_reference_receipts())
    assert measured.conditions["reduction"] == "view+symmetry"
    assert row.status == NOT_COMPARABLE
    assert "reduction: view+symmetry here vs none published" in row.explanation
    assert "the search without reduction, whose counts would compare" in measured.why


def test_unreduced_counts_that_differ_are_compared_and_the_difference_is_computed() -> None:
    receipts = _reference_receipts()
    measured, row = _row(receipts + [_unreduced(receipts, 24_292_501, 8_233_341, 24)])
    assert measured.conditions["reduction"] == "none" and measured.tolerance == R8_TOLERANCE
    assert row.status == MAGNITUDES  # the verdict (holds) agrees, the counts do not
    assert "distinct: 8,233,341 here vs 7,400,000 published (+11.3%)" in row.explanation
    assert "generated: 24,292,501 here vs 14,700,000 published (+65.3%)" in row.explanation
    assert "depth" not in row.difference  # 24 = 24
    # the reduced search is reported beside it, never compared
    reduced = measured.value["reduced_search"]
    assert reduced["reduction"] == "view+symmetry" and reduced["distinct"] == 338_253
    assert "338,253 equivalence classes" in measured.why and "not compared" in measured.why
    assert {k.key for k in row.keys} == set(_published("tlc.r8_scale")["published"])


def test_unreduced_counts_within_the_published_rounding_reproduce() -> None:
    receipts = _reference_receipts()
    # 7,449,999 and 14,749,999 print as 7.4x10^6 and 1.47x10^7; 7,460,000 does not
    _, row = _row(receipts + [_unreduced(receipts, 14_749_999, 7_449_999, 24)])
    assert row.status == REPRODUCED, row.explanation
    assert "against ±0.676%" in row.explanation  # the tolerance as made, not rounded to 1%
    _, row = _row(receipts + [_unreduced(receipts, 14_700_000, 7_460_000, 24)])
    assert row.status == MAGNITUDES and "distinct: 7,460,000 here vs 7,400,000 published (+0.8%)" in row.explanation
    _, row = _row(receipts + [_unreduced(receipts, 14_700_000, 7_400_000, 25)])
    assert row.status == MAGNITUDES and "depth: 25 here vs 24 published" in row.explanation


def test_a_tolerance_below_a_percent_is_printed_as_made() -> None:
    from probes.headline import tolerance_text

    assert [tolerance_text(t) for t in (0.1, 0.15, 0.0, 0.125)] == ["10%", "15%", "0%", "12.5%"]
    assert tolerance_text(R8_TOLERANCE) == "0.676%" and abs(R8_TOLERANCE - 0.05 / 7.4) < 1e-15


def test_an_unreduced_violation_differs_and_names_the_disagreement() -> None:
    receipts = _reference_receipts()
    measured, row = _row(receipts + [_unreduced(receipts, 9_000_000, 4_000_000, 19, result="violated")])
    assert row.status == DIFFERS
    assert "result: violated here vs holds published" in row.explanation
    assert "the two searches disagree (violated without reduction, holds with view+symmetry)" in measured.why


def test_a_clean_search_run_without_reduction_is_itself_the_compared_one() -> None:
    receipts = _reference_receipts()
    clean = next(r for r in receipts if r.probe == "scaled.clean")
    run = clean.observations["runs"]["R8_scaled"]
    unreduced_clean = copy.deepcopy(clean)
    unreduced_clean.observations["runs"]["R8_scaled"] = dict(copy.deepcopy(run), tags={"group": "scaled",
                                                                                       "fault": "none"},
                                                             generated=14_700_000, distinct=7_400_000)
    measured, row = _row([unreduced_clean if r is clean else r for r in receipts])
    assert measured.conditions["reduction"] == "none" and "reduced_search" not in measured.value
    assert row.status == REPRODUCED, row.explanation


@pytest.mark.parametrize("unreduced, reduction, expected", [
    (True, "view+symmetry", ["scaled.unreduced", "scaled.clean", "scaled.ForkIgnore", "scaled.DoubleConsume"]),
    (False, "view+symmetry", ["scaled.clean", "scaled.ForkIgnore", "scaled.DoubleConsume"]),
    (True, "none", ["scaled.clean", "scaled.ForkIgnore", "scaled.DoubleConsume"]),  # clean is already unreduced
])
def test_the_unreduced_cell_is_planned_once(unreduced: bool, reduction: str, expected: list[str]) -> None:
    campaign = campaigns.get("tlc")
    params = campaign.resolve({"configurations": ["reference"], "include_scaled": True, "scaled_unreduced": unreduced,
                               "scaled_reduction": reduction})
    specs = campaign.plan(params)
    assert [s.id for s in specs if s.id.startswith("scaled.")] == expected
    assert specs[0].id == expected[0]  # the longest searches first: they run beside the other campaigns
    if unreduced and reduction != "none":
        from probes.tla.campaign import _configs

        (cfg,) = _configs("scaled", "unreduced", params)
        assert cfg.name == UNREDUCED_R8 and cfg.view is None and cfg.symmetry is None
        assert cfg.module == "ResumePlane" and cfg.tags["reduction"] == "none"
        from probes.tla import configs as c

        assert cfg.render().split("\n", 1)[1] == c.scaled(c.SCALED_BOUNDS).render().split("\n", 1)[1]


def test_quick_profile_leaves_the_unreduced_search_out() -> None:
    campaign = campaigns.get("tlc")
    quick = campaign.resolve({}, quick=True)
    assert quick["scaled_unreduced"] is False
    assert "scaled.unreduced" not in [s.id for s in campaign.plan(quick)]


def test_the_unreduced_cell_runs_tlc_and_records_its_counts(tmp_path: Path) -> None:
    """Real TLC at small scaled bounds (seconds): the unreduced cell's receipt records result,
    counts, depth and time, gives no verdicts, explores more states than the reduced search, and
    its counts are what the R8 headline shows (not comparable here: other bounds than the paper's)."""
    from probes.core.campaign import run_campaign

    campaign = campaigns.get("tlc")
    small = [4, 2, 2, 3, 1, 1]
    params = campaign.resolve({"configurations": ["reference"], "include_scaled": True, "scaled_bounds": small,
                               "workers": 1, "scaled_unreduced": True}, quick=True)
    run = run_campaign(campaign, params, receipts_root=tmp_path, render_only=False)
    assert not run.harness_errors
    by_probe = {r.probe: r for r in run.receipts}
    unreduced = by_probe["scaled.unreduced"]
    assert unreduced.verdicts == []  # the reduced search gives the scaled-bounds verdicts
    entry = unreduced.observations["runs"][UNREDUCED_R8]
    assert entry["result"] == "holds" and entry["tags"]["reduction"] == "none"
    assert entry["module"] == "ResumePlane" and entry["constants"]["N"] == 4
    assert entry["depth"] == entry["search_depth"] > 0 and entry["generated"] >= entry["distinct"] > 0
    assert unreduced.metrics[UNREDUCED_R8]["seconds"] > 0
    reduced = by_probe["scaled.clean"].observations["runs"]["R8_scaled"]
    assert reduced["tags"]["reduction"] == "view+symmetry"
    assert entry["distinct"] > reduced["distinct"]
    measured = tla_paper.headlines(run.receipts)["tlc.r8_scale"]
    assert measured.value["distinct"] == entry["distinct"] and measured.value["generated"] == entry["generated"]
    row = compare(_published("tlc.r8_scale"), measured, "")
    assert row.status == NOT_COMPARABLE and "N: 4 here vs 10 published" in row.explanation
