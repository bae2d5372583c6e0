"""A REMIT race cell measured by the real campaign harness is decided again from its receipt,
byte-identically (``probes.studies.remit.race.rejudge`` through ``python -m probes.rejudge``)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from probes.core.atomic import canonical_json
from probes.core.campaign import run_campaign
from probes.core.errors import UsageError
from probes.core.race import wilson_upper
from probes.core.checker import Subject
from probes.core.receipt import Receipt, load_campaign
from probes.rejudge import main, rejudge_campaign, rejudge_receipt
from probes.studies.remit import race_worker
from probes.studies.remit.campaign import CAMPAIGN
from probes.studies.remit.race import rejudge
from probes.studies.remit.verdicts import FRAMEWORK


@pytest.fixture(scope="module")
def race_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The remit campaign's race cells only (k = 2 on SQLite, and the in-memory n/a cell), 1 to 3 trials."""
    races = dataclasses.replace(CAMPAIGN, plan=lambda p: [s for s in CAMPAIGN.plan(p) if s.args["kind"] == "race"])
    params = CAMPAIGN.resolve({"backends": ["memory", "sqlite"], "racers": [2], "race_min_trials": 1,
                               "race_max_trials": 3}, quick=True)
    root = tmp_path_factory.mktemp("remit-race")
    try:
        run = run_campaign(races, params, receipts_root=root, render_only=False)
    finally:
        race_worker.close_pool()
    assert not run.harness_errors, run.harness_errors
    return root


def test_race_cell_states_trials_and_bound(race_run: Path) -> None:
    receipts = {r.probe: r for r in load_campaign(race_run / "remit")}
    assert sorted(receipts) == ["co.race.k2.sqlite", "co.race.memory"]
    r = receipts["co.race.k2.sqlite"]
    race = r.observations["race"]
    assert race["rule"] == {"threshold": 0.1, "min_trials": 1, "max_trials": 3, "max_seconds": 120.0}
    assert [t["trial"] for t in race["trials"]] == [1, 2, 3] and race["stopped"] == "trial budget of 3 spent"
    for v in r.verdicts:  # the gate holds in every trial, but 0 of 3 bounds the rate only by 56 %: undecided
        assert v.label.value == "?" and v.evidence["race_decision"] == "undecided"
        assert v.evidence["trials"] == 3 and v.evidence["violations"] == 0
        assert v.evidence["violation_rate_upper95"] == round(wilson_upper(0, 3), 4) and v.evidence["gate_fires_by_trial"] == [1, 1, 1]
        assert "0 of 3 trials violated it, rate < 56.1 %" in v.summary


def test_race_receipt_rejudged_byte_identical(race_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    receipt = {r.probe: r for r in load_campaign(race_run / "remit")}["co.race.k2.sqlite"]
    stored = json.loads(receipt.path.read_text())["verdicts"]
    again, reasons = rejudge_receipt("remit", receipt)
    assert canonical_json([v.to_json() for v in again]) == canonical_json(stored) and reasons == ["", ""]
    changes, before, after = rejudge_campaign(race_run / "remit")
    assert changes == [] and before == after
    assert main([str(race_run), "remit"]) == 0
    assert "## remit: 0 change(s)" in capsys.readouterr().out
    # a run directory as runs/remit/<run id> lays it out: the campaign is the one its _campaign.json names
    as_run = race_run / "runs-layout" / "quick-0123"
    shutil.copytree(race_run / "remit", as_run)
    assert main([str(as_run.parent)]) == 0
    assert "## quick-0123: 0 change(s)" in capsys.readouterr().out
    assert rejudge_campaign(as_run) == (changes, before, after)
    # a receipt missing a trial the rule ran, or holding one it never would, is refused
    trials = receipt.observations["race"]["trials"]
    receipt.observations["race"]["trials"] = trials[:2]
    with pytest.raises(ValueError, match="would have run another trial"):
        rejudge(receipt, _subject(receipt))
    receipt.observations["race"]["trials"] = trials + [dict(trials[0], trial=4)]
    with pytest.raises(ValueError, match="after the rule stopped"):
        rejudge(receipt, _subject(receipt))


def _subject(receipt):  # noqa: N802 - the subject the campaign judged the cell with
    from probes.core.checker import Subject

    return Subject(FRAMEWORK, receipt.args["backend"])


@pytest.mark.parametrize("bad, words", [
    ({"race_threshold": 1.0}, "race_threshold: 1.0 is out of range"),
    ({"race_max_seconds": 0}, "race_max_seconds: 0.0 is out of range"),
    ({"race_max_trials": 0}, "race_max_trials: 0 is out of range"),
    ({"race_min_trials": 50}, "race_min_trials (50) must not exceed race_max_trials (40)"),
])
def test_race_budgets_are_checked_before_any_work(bad: dict, words: str) -> None:
    with pytest.raises(UsageError, match=words.replace("(", r"\(").replace(")", r"\)")):
        CAMPAIGN.resolve(bad, quick=True)


def test_default_profile_keeps_the_papers_ten_repetitions() -> None:
    """The paper's REMIT race was 10 repetitions per cell ({1:10}): no cell decides on fewer trials."""
    params = CAMPAIGN.resolve()
    assert params["race_min_trials"] >= 10 and params["race_max_trials"] >= 35  # 0 of 35: rate < 9.9 %
    specs = [s for s in CAMPAIGN.plan(params) if s.args["kind"] == "race" and s.args["backend"] != "memory"]
    assert sorted(s.id for s in specs) == sorted(f"co.race.k{k}.{b}" for k in (2, 4, 8) for b in ("sqlite", "postgres"))
