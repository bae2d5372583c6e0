"""LangGraph 1.2.9's stock SQLite saver under the kit (quick profile, the real framework).

What the paper's LangGraph campaign does not measure: the same pause answered again by
its checkpoint id, and a fork there, through the kit's protocols; labelled with the
statements the paper's campaign cites for the same properties.
"""

from __future__ import annotations

import pytest

from tests.installed import require

require("langgraph.checkpoint.sqlite")

from probes import campaigns  # noqa: E402
from probes.core.campaign import run_campaign  # noqa: E402


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    campaign = campaigns.get("langgraph_kit")
    params = campaign.resolve({"protocols": ["answers", "fork", "tamper"], "answers_n": [3]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("langgraph_kit"))
    assert run.harness_errors == []
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_a_checkpoint_answered_again_fires_the_gate_again_against_the_documented_claim(verdicts: dict) -> None:
    retry = verdicts[("CO", "retry:same-pause×3")]
    assert retry.evidence["gate_fires"] == 3
    assert retry.label.value == "✗" and retry.doc.source == "LG-15"


def test_a_fork_at_the_answered_pause_is_served_the_first_answer(verdicts: dict) -> None:
    fork = verdicts[("FD", "fork:same-pause")]
    assert fork.label.value == "✗" and "s2 served 'yes'" in fork.summary  # #6663: the first answer, not 'no'
    # Proposition 1's side: not a retry (the gated effect fired again), not a fork (the old outcome)
    assert fork.evidence["side"] == "neither: the gated effect fired again without the new answer's outcome"
    assert fork.evidence["side"] in fork.summary
    assert fork.doc.quote and fork.doc.stance == "claims"


def test_the_stock_savers_durable_state_is_not_a_json_document(verdicts: dict) -> None:
    assert verdicts[("CV", "tamper:structural")].label.value == "n/a"
