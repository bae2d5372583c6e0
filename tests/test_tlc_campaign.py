"""The tlc campaign end to end (reference + liveness only, to stay fast)."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.core.errors import UsageError
from probes.core.receipt import VIEW_NAME
from probes.paper import tla as tla_paper


def test_reference_row_is_deterministic(tmp_path: Path) -> None:
    campaign = campaigns.get("tlc")
    params = campaign.resolve({"configurations": ["reference", "liveness"]}, quick=True)
    first = run_campaign(campaign, params, receipts_root=tmp_path / "a", render_only=False)
    second = run_campaign(campaign, params, receipts_root=tmp_path / "b", render_only=False)
    assert not first.harness_errors and not second.harness_errors
    verdicts = [v for r in first.receipts for v in r.verdicts]
    assert {(v.framework, v.property.value, v.label.value) for v in verdicts} == {
        ("tla-reference", p, "✓") for p in ("PC", "EO", "FD", "CV", "CO", "RD", "FI", "LV")}
    view_a = (tmp_path / "a" / "tlc" / VIEW_NAME).read_bytes()
    assert view_a == (tmp_path / "b" / "tlc" / VIEW_NAME).read_bytes()
    heads = tla_paper.headlines(first.receipts)
    assert heads["tlc.r0"].value["result"] == "holds"
    assert heads["tlc.r6_liveness"].value["result"] == "holds"
    assert isinstance(heads["tlc.r8_scale"], str)  # not run: says why


def test_bad_parameters_are_usage_errors() -> None:
    campaign = campaigns.get("tlc")
    with pytest.raises(UsageError, match="must be in 2..N"):
        campaign.plan(campaign.resolve({"bounds": [3, 4, 2, 2, 1, 1]}))
    with pytest.raises(UsageError, match="not allowed"):
        campaign.resolve({"configurations": ["nonsense"]})


def test_trace_validation_explains_the_known_behaviours(tmp_path: Path) -> None:
    from probes.tla.known_histories import EXPECTED

    campaign = campaigns.get("traces")
    params = campaign.resolve({"trace_campaigns": []}, quick=True)
    run = run_campaign(campaign, params, receipts_root=tmp_path, render_only=False)
    assert not run.harness_errors
    (receipt,) = run.receipts
    assert receipt.verdicts == []   # observations, never labels
    rows = {r["name"].removeprefix("known/"): r["explained_by"] for r in receipt.observations["traces"]}
    assert rows == EXPECTED
