"""CrewAI 1.15.2 Flows under the kit (quick profile, the real framework; about a minute).

The old campaign answers the human-feedback pause at most twice and never edits its
durable state; here the kit answers it again by its flow id, races two answers and
tampers the ``pending_feedback`` row that ``Flow.from_pending`` rehydrates. A change in
what is asserted is a behaviour change of the framework (or of the kit) worth a look.
"""

from __future__ import annotations

import pytest

from tests.installed import require

require("crewai")

from probes.core.campaign import run_campaign  # noqa: E402
from probes import campaigns  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    campaign = campaigns.get("crewai_kit")
    params = campaign.resolve({"protocols": ["answers", "race", "tamper", "pause_twice"], "answers_n": [2],
                               "race_k": [2], "tamper_limit": 1}, quick=True)
    result = run_campaign(campaign, params, tmp_path_factory.mktemp("crewai-kit"))
    assert result.harness_errors == []
    versions = {r.observations["framework_versions"]["crewai"] for r in result.receipts
                if "framework_versions" in r.observations}  # tamper's runs keep theirs per sub-run
    assert versions == {"1.15.2"}
    return result


@pytest.fixture(scope="module")
def verdicts(run) -> dict:
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_an_answered_pause_is_gone_so_a_second_answer_is_refused(run, verdicts: dict) -> None:
    retry = verdicts[("CO", "retry:same-pause×2")]
    assert retry.label.value == "✓" and retry.evidence["gate_fires"] == 1
    receipt = next(r for r in run.receipts if r.probe.startswith("answers."))
    second = receipt.observations["children"]["run/answer-2"]["result"]
    assert second["status"] == "raised" and second["error"] == "ValueError"  # "No pending feedback found"


def test_concurrent_answers_are_not_deduplicated(verdicts: dict) -> None:
    race = verdicts[("CO", "race:same-pause×2")]
    assert race.evidence["gate_fires"] >= 1
    # two answers that both loaded the pause both fire the gated effect: D, the docs ask for idempotency;
    # clean trials within the quick budget leave the cell undecided, never ✓
    assert race.label.value == ("D" if race.evidence["gate_fires"] > 1 else "?")
    assert race.evidence["trials"] == len(race.evidence["gate_fires_by_trial"])


def test_a_step_that_asks_twice_goes_on_from_its_second_feedback_point(run, verdicts: dict) -> None:
    """The step that asks twice is two chained ``@human_feedback`` methods (one method pauses once):
    the first answer's ``resume`` runs the listener that takes it and pauses again, persisting a new
    ``pending_feedback`` row; the second answer, in a fresh process, settles that row and runs on from
    it, so the code between the two pauses does not run again."""
    (receipt,) = [r for r in run.receipts if r.probe.startswith("pause_twice.")]
    assert receipt.observations["pause_twice"] == {"after_first": "paused", "after_second": "completed",
                                                   "effects": {"e1": 1, "e2": 1, "e2b": 1}}
    path = "pause-twice:one-answer-at-a-time"
    assert {prop: verdicts[(prop, path)].label.value for prop in ("EO", "CO", "LV")} == \
        {"EO": "✓", "CO": "✓", "LV": "✓"}
    assert verdicts[("LV", path)].evidence["outcome"] == "s2 served 'yes'"


@pytest.fixture(scope="module")
def crash_run(tmp_path_factory: pytest.TempPathFactory):
    campaign = campaigns.get("crewai_kit")
    params = campaign.resolve({"protocols": ["crash"], "crash_points": ["s2.begin"], "crash_hows": ["raise"],
                               "recovery_modes": ["latest-checkpoint"]}, quick=True)
    result = run_campaign(campaign, params, tmp_path_factory.mktemp("crewai-kit-crash"))
    assert result.harness_errors == []
    return result


def test_a_recovery_with_no_checkpoint_yet_is_no_prefix_verdict(crash_run) -> None:
    """Checkpoints are taken at the pause: a crash before it leaves nothing for latest-checkpoint
    to restore. The kit starts the run over, says so, and decides no PC on that path."""
    run = crash_run
    verdicts = {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}
    path = "crash:raise@s2.begin/latest-checkpoint"
    pc = verdicts[("PC", path)]
    assert pc.label.value == "n/a" and pc.summary.startswith("nothing durable to resume from: no CheckpointConfig")
    receipt = next(r for r in run.receipts if r.probe.startswith("crash.raise.s2.begin"))
    assert "no CheckpointConfig checkpoint" in receipt.observations["nothing_durable"]
    history = receipt.histories[path]
    restart = [e for e in history if e["kind"] == "start" and e.get("detail", {}).get("after")]
    assert len(restart) == 1 and restart[0]["seq"] > next(e["seq"] for e in history if e["kind"] == "recover")
    assert verdicts[("LV", path)].label.value == "✓"  # started over, it completes


def test_an_emptied_pending_state_is_valid_so_no_cv_failure(run, verdicts: dict) -> None:
    """Every field of the flow's state model has a default, so the emptied state validates: accepting
    it is no CV violation (issue 24; it was ✗ against CR-11). It goes to the forgery row, by outcome."""
    v = verdicts[("CV", "tamper:empty-object")]
    assert v.framework == "crewai · undetected forgery" and not v.evidence["refused"]
    assert v.evidence["outcome"] == "accepted, behaviour unchanged" and v.evidence["invalid_edit"] is False
    assert v.label.value == "U" and v.doc is None  # CR-11 is about validation, not about forgeries
    assert "no default for no field" in v.summary  # computed from the flow's pydantic state model
    receipt = next(r for r in run.receipts if r.probe.startswith("tamper.structural"))
    assert receipt.observations["state_model"] == {"model": "crewai_kit KitState", "required": []}
    assert not any(x.property.value == "CV" and x.framework == "crewai" and x.label.violates
                   for r in run.receipts for x in r.verdicts)
    # a type-valid edit is no CV question: its outcome is in the undetected-forgery row, never a safety ✓
    forged = verdicts[("CV", "tamper:other-string:id")]
    assert forged.framework.endswith(" · undetected forgery")
    assert forged.evidence["outcome"] in ("accepted, behaviour unchanged", "accepted, behaviour changed")
    assert forged.label.value == "U" and verdicts[("LV", "tamper:other-string:id")].framework == forged.framework.split(" · ")[0]
