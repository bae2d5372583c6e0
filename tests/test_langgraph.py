"""The paper's LangGraph campaign on the conformance kit against the real LangGraph 1.2.9 (no mocks).

The quick profile (SQLite, the paper's kill point A, both recoveries) is run once; the paper layer
(``probes.paper.langgraph``) reads its receipts. Every assertion is about something the framework, the
kit or the paper layer could get wrong.
"""

from __future__ import annotations

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.paper import extractor


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory):
    campaign = campaigns.get("langgraph")
    run = run_campaign(campaign, campaign.resolve(quick=True), tmp_path_factory.mktemp("langgraph"))
    assert run.harness_errors == []
    return campaign, run


def test_the_paper_campaign_is_a_kit_campaign_over_both_apis() -> None:
    campaign = campaigns.get("langgraph")
    ids = [s.id for s in campaign.plan(campaign.resolve())]
    assert len(ids) == len(set(ids))
    # the default profile: both savers, both APIs, both recoveries, three repetitions of every cell
    assert {s.args["backend"] for s in campaign.plan(campaign.resolve())} == {"sqlite", "postgres"}
    assert any(i.startswith("functional.crash.kill.s2.begin.resend-input.") for i in ids)
    assert not any(i.startswith("functional.savekill") for i in ids)  # the put_writes of tasks are not hooked
    assert {i.rsplit(".rep", 1)[1] for i in ids} == {"1", "2", "3"}


def test_the_published_values_come_from_the_kits_receipts(quick_run) -> None:
    campaign, run = quick_run
    values = extractor(campaign)(run.receipts)
    fd = values["langgraph.fd_outcome"]
    # #6663: the second answer ('no') at the answered checkpoint is served the first answer's outcome
    assert fd.value["served_answer"] == "yes" and fd.value["observed"] == 2 and fd.value["expected"] == 1
    s1 = values["langgraph.crash_s1_runs"]
    assert s1.value["s1_runs"] == 2  # sending the input again after a kill at A runs s1 again
    assert set(s1.value["s1_runs_by_point_none_input"].values()) == {1}  # invoke(None) resumes after s1
    row = values["langgraph.row"]
    assert row.value["FD"] == "✗" and row.value["EO crash"] == "✗"
    assert row.value["EO interrupt"] == "✓" and row.value["PC"] == "✓"
    # both APIs measured each key the paper's campaign measured on both
    assert any(p.startswith("functional:") for p in row.value["labels"]["EO interrupt"])
    assert row.receipts and set(row.receipts) <= {r.probe for r in run.receipts}


def test_the_paper_campaign_runs_under_sync_durability_and_says_so(quick_run) -> None:
    """As the paper's crash sweep: every receipt names the configuration its processes ran under."""
    _, run = quick_run
    assert {tuple(r.observations.get("environ", {}).items()) for r in run.receipts} == {(("RC_LG_DURABILITY", "sync"),)}
