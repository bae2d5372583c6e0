"""Google ADK 2.13.0 under the kit, in its side environment (created once, cached).

The first run creates ``google-adk-py311-<hash>`` in the user cache with pip (a few minutes on two
cores); later runs reuse it.
"""

from __future__ import annotations

from pathlib import Path

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


@pytest.fixture(scope="module")
def tamper_receipts(tmp_path_factory: pytest.TempPathFactory) -> list:
    campaign = campaigns.get("google_adk")
    params = campaign.resolve({"protocols": ["tamper"], "tamper_limit": 1, "backends": ["sqlite"]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("adk-tamper"))
    assert run.harness_errors == []
    return run.receipts


def test_the_event_state_model_is_adks_pydantic_event(tamper_receipts: list) -> None:
    """A session event is read back with ``Event.model_validate_json``, and every field of ADK's
    ``Event`` has a default (issue 24): the tamper probe declares that model, so an emptied event is a
    valid document whose outcome goes to the undetected-forgery row, not an invalid edit taken blind."""
    tampered = [r for r in tamper_receipts if r.probe.startswith("tamper.")]
    assert len(tampered) == 2
    for receipt in tampered:
        assert receipt.observations["state_model"] == {"model": "google.adk Event", "required": []}
    empty = next(v for r in tampered for v in r.verdicts if v.property.value == "CV" and v.path == "tamper:empty-object")
    assert empty.framework.endswith(" · undetected forgery") and empty.evidence["invalid_edit"] is False


def test_a_node_that_asks_twice_is_rerun_and_fires_the_first_answers_effect_again(tmp_path: Path) -> None:
    """The step that asks twice is one ``rerun_on_resume=True`` node (ADK's single-node request input):
    ADK reruns it on the second answer, so the code between the questions fires ``e2`` again, as the
    ``rerun_on_resume`` documentation says (D); the run completes with the second answer's result."""
    campaign = campaigns.get("google_adk")
    run = run_campaign(campaign, campaign.resolve({"protocols": ["pause_twice"], "backends": ["sqlite"]}, quick=True),
                       tmp_path)
    assert run.harness_errors == [] and len(run.receipts) == 1
    got = run.receipts[0]
    assert got.observations["pause_twice"] == {"after_first": "paused", "after_second": "completed",
                                               "effects": {"e1": 1, "e2": 2, "e2b": 1}}
    labels = {v.property.value: (v.label.value, v.doc.source if v.doc else None) for v in got.verdicts}
    rerun = "google.adk.workflow._function_node:FunctionNode.__init__"
    assert labels == {"EO": ("D", rerun), "CO": ("D", rerun), "LV": ("✓", None), "VO": ("✓", None)}
