"""Google ADK 2.13.0 under the kit, in its side environment (created once, cached).

The first run creates ``google-adk-py311-<hash>`` in the user cache with pip (a few minutes on two
cores); later runs reuse it.
"""

from __future__ import annotations

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    campaign = campaigns.get("google_adk")
    params = campaign.resolve({"protocols": ["baseline", "crash", "fork", "answers"], "crash_points": ["s1.effect"],
                               "crash_hows": ["kill"], "answers_n": [2]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("adk"))
    assert run.harness_errors == []
    assert {r.observations.get("framework_versions", {}).get("google-adk") for r in run.receipts} == {"2.13.0"}
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_a_clean_run_completes(verdicts: dict) -> None:
    assert verdicts[("EO", "baseline:yes")].evidence["effect_counts"] == {"e1": 1, "e2": 1}


def test_the_answered_interrupt_answered_again_is_inert(verdicts: dict) -> None:
    assert verdicts[("CO", "retry:same-pause×2")].evidence["gate_fires"] == 1
    fd = verdicts[("FD", "fork:same-pause")]
    assert fd.evidence["observed"] != fd.evidence["expected_f_v"]


def test_resuming_the_invocation_after_a_kill_inside_s1(verdicts: dict) -> None:
    v = verdicts[("EO", "crash:kill@s1.effect/resume-invocation")]
    assert v.evidence["effect_counts"]["e1"] == 2
    assert v.label.value == "D" and "at-least-once" in v.doc.quote
