"""Cross-version resume (``probes.studies.mv``): the plan, its checks, the outcome rule, and real runs.

The real run pauses the kit's workflow under LangGraph 1.2.9 (the pin, main environment) and
answers it under 1.2.24 (drift's side environment: a minute or two to create cold), and the
other way round, with both same-release controls; the receipts must record the release each
process actually ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.core.checker import Property, Verdict
from probes.core.errors import UsageError
from probes.core.receipt import Receipt
from probes.studies.mv import report

CAMPAIGN = campaigns.get("mv")


def test_the_default_plan_pairs_six_langgraph_releases_and_each_other_framework_pin_and_newest() -> None:
    specs = CAMPAIGN.plan(CAMPAIGN.resolve({}, quick=False))
    langgraph = [s for s in specs if s.args["campaign"] == "langgraph_kit"]
    assert len(langgraph) == 36 and sum(s.args["from"] == s.args["to"] for s in langgraph) == 6
    dbos = sorted((s.args["from"], s.args["to"]) for s in specs if s.args["campaign"] == "dbos_kit")
    assert dbos == [("2.27.0", "2.27.0"), ("2.27.0", "3.4.0"), ("3.4.0", "2.27.0"), ("3.4.0", "3.4.0")]
    (maf,) = [s for s in specs if s.args["campaign"] == "maf"]  # no release newer than the pin
    assert maf.args.get("na") and maf.id == "maf.only-1.23.0"


@pytest.mark.parametrize("releases, message", [(["1.2.9"], "at least two"), (["1.2.9", "main"], "not a release")])
def test_bad_releases_are_refused_before_any_work(releases: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        CAMPAIGN.check(CAMPAIGN.resolve({"langgraph_releases": releases}, quick=True))


def _cell(labels: dict[str, str], status: str) -> Receipt:
    verdicts = [{"framework": "fw", "backend": "sqlite", "property": p, "path": "mv:a->b", "label": label,
                 "evidence": {}, "summary": "s"} for p, label in labels.items()]
    return Receipt("mv", "fw.a-to-b", {"campaign": "fw", "from": "a", "to": "b"}, {}, {"mv": {"status": status}},
                   [Verdict.from_json(v) for v in verdicts], {}, [])


def test_a_refusal_is_loud_only_when_no_effect_fired_twice() -> None:
    assert report.outcome(_cell({"EO": "✓", "CO": "✓", "LV": "✓"}, "completed")) == "as same-release"
    assert report.outcome(_cell({"EO": "✓", "CO": "✓", "LV": "✗"}, "raised")) == "refused loudly"
    assert report.outcome(_cell({"EO": "✗", "CO": "✓", "LV": "✗"}, "raised")) == "misbehaved"
    assert report.outcome(_cell({"EO": "✓", "CO": "✓", "LV": "✗"}, "paused")) == "misbehaved"  # silent
    assert report.outcome(_cell({"EO": "n/a", "CO": "n/a", "LV": "n/a"}, "")) == "n/a"


@pytest.mark.slow
@pytest.mark.parametrize("other", ["1.2.24", "1.0.10"])  # the newest, and the atlas's oldest
def test_langgraph_pin_and_another_release_resume_each_others_runs(tmp_path: Path, other: str) -> None:
    """The oldest release builds the kit's workflow too (a handler-only import once broke every cell)."""
    run = run_campaign(CAMPAIGN, CAMPAIGN.resolve({"langgraph_releases": ["1.2.9", other]}, quick=True), tmp_path)
    assert run.harness_errors == []
    cells = {(r.args["from"], r.args["to"]): r for r in run.receipts}
    assert set(cells) == {("1.2.9", "1.2.9"), ("1.2.9", other), (other, "1.2.9"), (other, other)}
    for (a, b), r in cells.items():
        ran = r.observations["mv"]["ran"]
        assert (ran["start"]["langgraph"], ran["answer"]["langgraph"]) == (a, b)
        assert {v.property for v in r.verdicts} == {Property.EO, Property.CO, Property.LV}
    assert report.outcome(cells[("1.2.9", "1.2.9")]) == "as same-release"
