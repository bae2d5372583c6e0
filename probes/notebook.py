"""What a campaign notebook calls: run the campaign with the notebook's parameters.

A notebook is thin: a ``parameters`` cell (papermill), one call to ``run_notebook``
and tables and figures built from the returned receipts.
"""

from __future__ import annotations

from typing import Any, Mapping

from probes import campaigns
from probes.core.campaign import CampaignRun, run_campaign


def run_notebook(name: str, namespace: Mapping[str, Any]) -> CampaignRun:
    """Run (or resume, or just load) campaign ``name`` with the parameters found in ``namespace``."""
    campaign = campaigns.get(name)
    overrides = {p.name: namespace[p.name] for p in campaign.params if p.name in namespace}
    params = campaign.resolve(overrides)
    result = run_campaign(campaign, params)
    if result.harness_errors:
        print(f"{len(result.harness_errors)} harness error(s) -- measurements, not verdicts:")
        for error in result.harness_errors:
            print("  ", error)
    return result
