"""probes.timing: family rule, totals and rendering, on synthetic and reference receipts."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes import timing
from probes.core.receipt import Receipt

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"


def _receipt(probe: str, seconds: float | None) -> Receipt:
    manifest = {} if seconds is None else {"probe_seconds": seconds}
    return Receipt("c", probe, {}, manifest, {}, [], {}, [])


def test_family_is_the_prefix_shared_by_siblings_cut_before_values():
    ids = ["dose.sqlite.stock.k4.j0.g0", "dose.postgres.gate.k4.j0.g0", "co.race.k8.sqlite.rep1",
           "co.dead_owner.postgres", "eo.ledger.exc.sqlite", "eo.ledger.kill.postgres",
           "version.1.0.10", "version.1.2.9", "scaled.clean", "consume_race"]
    fam = timing.families(ids)
    assert fam["dose.sqlite.stock.k4.j0.g0"] == fam["dose.postgres.gate.k4.j0.g0"] == "dose"
    assert fam["co.race.k8.sqlite.rep1"] == fam["co.dead_owner.postgres"] == "co"
    assert fam["eo.ledger.exc.sqlite"] == "eo.ledger"
    assert fam["version.1.0.10"] == fam["version.1.2.9"] == "version"
    assert fam["scaled.clean"] == "scaled.clean"  # no siblings: its own family
    assert fam["consume_race"] == "consume_race"
    assert timing.families(ids, depth=2)["dose.sqlite.stock.k4.j0.g0"] == "dose.sqlite"
    with pytest.raises(ValueError):
        timing.families(ids, depth=0)


def test_family_totals_sum_and_order():
    receipts = [_receipt("a.x", 1.0), _receipt("a.y", 3.0), _receipt("b.z", 2.5), _receipt("b.w", None)]
    totals = timing.family_totals(receipts)
    assert [f.family for f in totals] == ["a", "b"]
    a, b = totals
    assert (a.probes, a.seconds, a.median_s, a.slowest, a.slowest_s) == (2, 4.0, 2.0, "a.y", 3.0)
    assert (b.probes, b.seconds, b.untimed) == (2, 2.5, 1)


def test_set_up_only_from_a_real_wall_duration():
    fams = tuple(timing.family_totals([_receipt("a.x", 4.0)]))
    real = timing.CampaignTime("c", "", 4.0, 10.0, fams)
    summed = timing.CampaignTime("c", "", 4.0, timing.recorded_wall({"provenance": {"duration_s": 4.0,
                                                                             "duration_note": "sum"}}), fams)
    assert real.setup_s == 6.0 and real.total_s == 10.0
    assert summed.setup_s is None and summed.total_s == 4.0


@pytest.mark.skipif(not (REFERENCE / "consume_race" / "_campaign.json").exists(), reason="no reference run")
def test_reference_run_every_receipt_timed_and_rendered():
    times = [timing.campaign_time(d) for d in sorted(REFERENCE.iterdir()) if (d / "_campaign.json").exists()]
    assert times
    for t in times:
        assert all(f.untimed == 0 for f in t.families), t.campaign
        assert abs(sum(f.seconds for f in t.families) - t.probes_s) < 1e-6
    df = timing.table(times, top=3)
    assert set(df["campaign"]) == {t.campaign for t in times}
    fig = timing.figure(times)
    assert len(fig.axes[0].get_yticklabels()) == len(times)


def test_compare_two_runs_per_family():
    before = timing.CampaignTime("c", "", 6.0, None, tuple(timing.family_totals(
        [_receipt("a.x", 3.0), _receipt("a.z", 1.0), _receipt("b.y", 2.0)])))
    after = timing.CampaignTime("c", "", 3.0, None, tuple(timing.family_totals(
        [_receipt("a.x", 0.5), _receipt("a.z", 0.5), _receipt("b.y", 2.0)])))
    df = timing.compare(before, after).set_index("family")
    assert df.loc["a", "after/before"] == 0.25 and df.loc["b.y", "after/before"] == 1.0
    assert df.loc["(all probes)", "after s"] == 3.0
