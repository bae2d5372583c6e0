"""Microsoft Agent Framework 1.23.0 under the kit (quick profile, the real framework).

Asserts what the kit measured on this release; a change here is a behaviour change
of the framework (or of the kit) worth a look, not noise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.installed import require

require("agent_framework")

from probes import campaigns  # noqa: E402
from probes.core.campaign import run_campaign  # noqa: E402


@pytest.fixture(scope="module")
def receipts(tmp_path_factory: pytest.TempPathFactory) -> list:
    campaign = campaigns.get("maf")
    params = campaign.resolve({"protocols": ["parkkill", "stray", "answers", "race", "tamper", "savekill",
                                             "pause_twice"],
                               "tamper_limit": 2, "race_min_trials": 3}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("maf"))
    assert run.harness_errors == []
    return run.receipts


@pytest.fixture(scope="module")
def verdicts(receipts: list) -> dict:
    return {(v.property.value, v.path): v for r in receipts for v in r.verdicts}


def test_park_kill_and_stray_answer_are_survived(verdicts: dict) -> None:
    assert verdicts[("EO", "park-kill")].label.value == "✓"
    assert verdicts[("CO", "stray-after-completion")].evidence["gate_fires"] == 1
    assert verdicts[("EO", "stray-after-completion")].label.value == "✓"  # and nothing else fires again


def test_an_answered_checkpoint_answered_again_fires_the_gated_effect_again(verdicts: dict) -> None:
    retry = verdicts[("CO", "retry:same-pause×3")]
    assert retry.evidence["gate_fires"] == 3 and retry.label.value == "U"
    race = verdicts[("CO", "race:same-pause×2")]
    # three fresh races (the quick budget); the verdict is the worst trial's, and every trial's count is kept
    by_trial = race.evidence["gate_fires_by_trial"]
    assert len(by_trial) == 3 == race.evidence["trials"] and all(n >= 1 for n in by_trial)
    assert race.evidence["gate_fires"] == max(by_trial)
    # a duplicate in any trial decides; three clean trials (bound 56 %) are undecided, never ✓
    assert race.label.value == ("?" if max(by_trial) == 1 else "U")
    assert len([e for e in race.history if e.kind.value == "answer"]) == 1  # one trial's history, not all


def test_a_checkpoint_emptied_of_its_fields_is_refused_before_any_effect(verdicts: dict) -> None:
    v = verdicts[("CV", "tamper:empty-object")]
    assert v.label.value == "✓" and v.evidence["effects_before_refusal"] == {}


def test_the_checkpoint_state_model_is_the_frameworks_dataclass(verdicts: dict, receipts: list) -> None:
    """The tamper probe reads the state model from agent-framework's ``WorkflowCheckpoint``
    dataclass (issue 24): its two fields without a default are required, so emptying the
    checkpoint is an invalid edit judged on the framework's CV row, not taken as invalid blind."""
    for receipt in (r for r in receipts if r.probe.startswith("tamper.")):
        assert receipt.observations["state_model"] == {"model": "agent_framework WorkflowCheckpoint",
                                                       "required": ["graph_signature_hash", "workflow_name"]}
    v = verdicts[("CV", "tamper:empty-object")]
    assert v.framework == "agent-framework" and v.evidence["invalid_edit"] is True
    assert "no default for ['graph_signature_hash', 'workflow_name']" in v.summary


def test_kills_inside_the_checkpoint_write(verdicts: dict) -> None:
    kills = {path: v for (prop, path), v in verdicts.items() if prop == "EO" and path.startswith("save-kill:")}
    assert len(kills) >= 4  # the clean run saves at least four checkpoints
    # the write after s1 never landed: recovery starts from the checkpoint before s1 and runs it again
    assert any(v.evidence["effect_counts"].get("e1") == 2 for v in kills.values())
    # every recovery completes; one that completes without the workflow's result (None) is no LV ✓
    assert all(verdicts[("LV", path)].label.value == "✓" or "not the workflow's own result" in
               verdicts[("LV", path)].evidence["why"] for path in kills)


def test_an_executor_that_asks_twice_goes_on_from_its_second_request(verdicts: dict, receipts: list) -> None:
    """The pausing executor's response handler takes the first answer and issues a second
    ``request_info``; the checkpoint holds that pending request, so the second answer, in a fresh
    process, reaches the handler alone: the code between the two requests does not run again."""
    (receipt,) = [r for r in receipts if r.probe.startswith("pause_twice.")]
    assert receipt.observations["pause_twice"] == {"after_first": "paused", "after_second": "completed",
                                                   "effects": {"e1": 1, "e2": 1, "e2b": 1}}
    path = "pause-twice:one-answer-at-a-time"
    assert {prop: verdicts[(prop, path)].label.value for prop in ("EO", "CO", "LV")} == \
        {"EO": "✓", "CO": "✓", "LV": "✓"}
