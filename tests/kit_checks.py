"""Checks several frameworks' tests share: one kit protocol's cell run on the real framework."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.core.receipt import Receipt

# what the pause-twice protocol observes when each answer is taken once and the run completes
EACH_ANSWER_ONCE = {"after_first": "paused", "after_second": "completed", "effects": {"e1": 1, "e2": 1, "e2b": 1}}


def pause_twice(name: str, tmp_path: Path, **params: Any) -> Receipt:
    """The one receipt of campaign ``name``'s pause-twice cell (quick profile, ``params`` over it),
    measured without a harness error."""
    campaign = campaigns.get(name)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["pause_twice"], **params}, quick=True), tmp_path)
    assert run.harness_errors == [] and len(run.receipts) == 1
    return run.receipts[0]
