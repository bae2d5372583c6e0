"""LlamaIndex Workflows 2.22.2 under the kit (quick profile, the real framework).

The durable state is the application's ``ctx.to_dict()`` snapshot (the framework has no
checkpointer). Asserts what the kit measured on this release: a change is a behaviour
change of the framework (or of the kit) worth a look, not noise.
"""

from __future__ import annotations

import pytest

from tests.installed import require

require("workflows")

from probes.core.campaign import run_campaign  # noqa: E402
from probes import campaigns  # noqa: E402


@pytest.fixture(scope="module")
def receipts(tmp_path_factory: pytest.TempPathFactory) -> list:
    campaign = campaigns.get("llamaindex_kit")
    params = campaign.resolve({"protocols": ["crash", "parkkill", "stray", "answers", "race", "tamper", "savekill",
                                             "pause_twice"],
                               "crash_points": ["s2.effect"], "crash_hows": ["kill"], "tamper_limit": 2},
                              quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("llamaindex_kit"))
    assert run.harness_errors == []
    assert {r.observations.get("framework_versions", {}).get("llama-index-workflows")
            for r in run.receipts} - {None} == {"2.22.2"}
    return run.receipts


@pytest.fixture(scope="module")
def verdicts(receipts: list) -> dict:
    return {(v.property.value, v.path): v for r in receipts for v in r.verdicts}


def test_a_snapshot_survives_a_kill_while_parked(verdicts: dict) -> None:
    v = verdicts[("EO", "park-kill")]
    assert v.label.value == "✓" and v.evidence["effect_counts"] == {"e1": 1, "e2": 1}


def test_a_restored_snapshot_keeps_no_record_that_it_was_answered(verdicts: dict) -> None:
    assert verdicts[("CO", "retry:same-pause×3")].evidence["gate_fires"] == 3
    assert verdicts[("CO", "race:same-pause×2")].evidence["gate_fires"] == 2
    # the ended context restores as a new run: the stray answer is consumed by it
    assert verdicts[("CO", "stray-after-completion")].evidence["gate_fires"] == 2
    # ...running the whole workflow again: s1's effect too
    assert verdicts[("EO", "stray-after-completion")].evidence["effect_counts"] == {"e1": 2, "e2": 2}


def test_a_kill_after_the_effect_re_runs_the_answered_step(verdicts: dict) -> None:
    v = verdicts[("EO", "crash:kill@s2.effect/latest-snapshot")]
    assert v.evidence["effect_counts"] == {"e1": 1, "e2": 2} and v.label.value == "D"  # LI-2


def test_an_empty_snapshot_is_a_fresh_run_and_a_flipped_flag_restarts(verdicts: dict) -> None:
    empty = verdicts[("CV", "tamper:empty-object")]
    assert empty.label.value == "U" and "accepted" in empty.summary  # every field has a default
    assert empty.framework.endswith(" · undetected forgery") and empty.evidence["invalid_edit"] is False
    flipped = verdicts[("CV", "tamper:flip:is_running")]  # type-valid: the undetected-forgery row
    assert flipped.framework.endswith(" · undetected forgery") and flipped.label.value == "U"
    assert flipped.evidence["outcome"] == "accepted, behaviour changed"  # a new run (LI-6): e1 again
    assert flipped.evidence["effects_after_edit"]["e1"] == 1


def test_the_snapshot_state_model_is_the_frameworks_serialized_context(receipts: list) -> None:
    """``Context.from_dict`` validates a versioned snapshot as the pydantic ``SerializedContext``,
    every field of which has a default (issue 24): the tamper probe declares it, so an emptied
    snapshot is a valid document (the forgery row above), not an invalid edit taken blind."""
    for receipt in (r for r in receipts if r.probe.startswith("tamper.")):
        assert receipt.observations["state_model"] == {"model": "workflows SerializedContext", "required": []}


def test_kills_inside_the_snapshot_write(verdicts: dict) -> None:
    first, second = verdicts[("EO", "save-kill:save.write#1")], verdicts[("EO", "save-kill:save.write#2")]
    assert first.evidence["effect_counts"] == {"e1": 2, "e2": 1}  # no pause snapshot landed: start over
    assert second.evidence["effect_counts"] == {"e1": 1, "e2": 2}  # the ended context never landed: re-answer
    assert verdicts[("LV", "save-kill:save.write#1")].label.value == "✓"


def test_a_step_that_waits_twice_replays_once_per_wait_on_the_second_answer(receipts: list) -> None:
    """Two ``ctx.wait_for_event`` calls in one step: each answer replays the step from its top (LI-3),
    and the second answer also matches the first wait, whose record stays until the step returns, so
    the step replays twice then and the first answer's effect fires three times in all."""
    got = next(r for r in receipts if r.probe.startswith("pause_twice."))
    assert got.observations["pause_twice"] == {"after_first": "paused", "after_second": "completed",
                                               "effects": {"e1": 1, "e2": 3, "e2b": 1}}
    labels = {v.property.value: (v.label.value, v.doc.source if v.doc else None) for v in got.verdicts}
    assert labels == {"EO": ("D", "LI-3"), "CO": ("D", "LI-3"), "LV": ("✓", None), "VO": ("✓", None)}
