"""DBOS 2.27.0 under the kit (quick profile, the real framework, SQLite system database).

Asserts what the kit measured on this release; a change here is a behaviour change of
the framework (or of the kit) worth a look, not noise.
"""

from __future__ import annotations

import pytest

from tests.installed import require

require("dbos")

from probes.core.campaign import run_campaign  # noqa: E402
from probes import campaigns  # noqa: E402


@pytest.fixture(scope="module")
def receipts(tmp_path_factory: pytest.TempPathFactory) -> list:
    campaign = campaigns.get("dbos_kit")
    params = campaign.resolve({"protocols": ["parkkill", "answers", "race", "tamper", "savekill", "pause_twice"],
                               "tamper_limit": 2}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("dbos_kit"))
    assert run.harness_errors == []
    return run.receipts


@pytest.fixture(scope="module")
def verdicts(receipts: list) -> dict:
    return {(v.property.value, v.path): v for r in receipts for v in r.verdicts}


def test_a_worker_killed_in_recv_is_recovered_at_the_next_launch(verdicts: dict) -> None:
    assert all(verdicts[(p, "park-kill")].label.value == "✓" for p in ("EO", "PC", "LV"))


def test_answers_resent_to_the_answered_workflow_stay_inert(verdicts: dict) -> None:
    retry = verdicts[("CO", "retry:same-pause×3")]
    assert retry.label.value == "✓" and retry.evidence["gate_fires"] == 1


def test_concurrent_clients_answer_one_executor_whose_workflow_consumes_once(verdicts: dict) -> None:
    # DBOS as deployed: one executor runs the pending workflow, k DBOSClient processes send the
    # answer; recv consumes one message, the others stay unconsumed (DB-6): the gate fires once
    race = verdicts[("CO", "race:same-pause×2")]
    assert race.evidence["gate_fires_by_trial"] == [1] * race.evidence["trials"] and race.evidence["trials"] >= 1
    assert race.label.value in ("✓", "?") and race.evidence["race_decision"] in ("holds", "undecided")
    workflow = [e for e in race.history if e.kind.value in ("consume", "effect", "step_begin", "step_end")
                and e.incarnation != "run/start"]
    assert workflow and {e.incarnation for e in workflow} == {"run/executor"}  # no client executed a step
    assert sorted(e.incarnation for e in race.history if e.kind.value == "complete") == [
        "run/client-0", "run/client-1", "run/executor"]  # every client was served the outcome
    assert verdicts[("LV", "race:same-pause×2")].evidence["violations"] == 0


def test_an_edited_step_output_is_replayed_without_a_check(verdicts: dict) -> None:
    empty = verdicts[("CV", "tamper:empty-object")]  # s1's recorded output replaced by {}
    assert empty.label.value == "U" and not empty.evidence["refused"]
    # no DBOS model constrains a step output (json.loads): {} is a valid document, its row the forgery row
    assert empty.framework.endswith(" · undetected forgery") and empty.evidence["invalid_edit"] is False
    # a type-valid edit is no CV question: its outcome is in the undetected-forgery row, never a safety ✓
    forged = verdicts[("CV", "tamper:other-string:s1")]
    assert forged.framework.endswith(" · undetected forgery")
    assert forged.evidence["outcome"] in ("accepted, behaviour unchanged", "accepted, behaviour changed")
    assert forged.label.value == "U" and verdicts[("LV", "tamper:other-string:s1")].framework == forged.framework.split(" · ")[0]


def test_a_step_output_has_no_state_model(receipts: list) -> None:
    """The newest document at the pause is ``s1``'s recorded output, which DBOS reads back with
    ``json.loads`` alone (issue 24): the adapter says so and requires nothing, rather than leaving
    the model undeclared (which would take every structural edit as invalid)."""
    for receipt in (r for r in receipts if r.probe.startswith("tamper.")):
        assert receipt.observations["state_model"] == {
            "model": "dbos step output: any JSON value (DBOSPortableJSONSerializer: json.loads, no schema)",
            "required": []}


def test_kills_inside_the_record_of_an_operation_output(verdicts: dict) -> None:
    kills = {path: v for (prop, path), v in verdicts.items() if prop == "EO" and path.startswith("save-kill:")}
    # the clean run records four operation outputs: s1, ask, recv's deadline (start) and s2 (answer)
    assert sorted(kills) == [f"save-kill:save.write#{n}" for n in (1, 2, 3, 4)]
    # s1's output never landed: recovery runs s1 again (at-least-once steps, documented: D)
    assert kills["save-kill:save.write#1"].evidence["effect_counts"] == {"e1": 2, "e2": 1}
    assert kills["save-kill:save.write#1"].label.value == "D"
    # ask's output or recv's deadline never landed: recovery replays s1 and waits again
    assert kills["save-kill:save.write#2"].label.value == kills["save-kill:save.write#3"].label.value == "✓"
    # s2's output never landed: recovery replays the consumed answer and runs s2 again
    assert kills["save-kill:save.write#4"].evidence["effect_counts"] == {"e1": 1, "e2": 2}
    assert all(verdicts[(p, path)].label.value == "✓" for path in kills for p in ("PC", "LV"))


def test_a_workflow_that_waits_in_recv_twice_records_the_first_answers_step_once(receipts: list,
                                                                                 verdicts: dict) -> None:
    """The pause-twice workflow: ``recv``, step ``s2``, ``recv`` again, step ``s2b``, each answer sent
    by a fresh process. After the first answer the workflow waits in its second ``recv`` (paused
    again); the second answer's recovery replays ``s2``'s recorded output instead of running it."""
    twice, = (r for r in receipts if r.probe.startswith("pause_twice."))
    assert twice.observations["pause_twice"] == {"after_first": "paused", "after_second": "completed",
                                                 "effects": {"e1": 1, "e2": 1, "e2b": 1}}
    path = "pause-twice:one-answer-at-a-time"
    assert {p: verdicts[(p, path)].label.value for p in ("EO", "CO", "LV")} == {"EO": "✓", "CO": "✓", "LV": "✓"}
    assert verdicts[("CO", path)].evidence["gate_fires"] == 1
