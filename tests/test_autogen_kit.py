"""AutoGen AgentChat 0.7.5 under the kit (quick profile, the real framework, no model).

A ``GraphFlow`` team paused by a handoff to the user; its ``save_state`` written by the
application after every run. Asserts what the kit measured on this release.
"""

from __future__ import annotations

import pytest

from tests.installed import require

require("autogen_agentchat")

from probes.core.campaign import run_campaign  # noqa: E402
from probes import campaigns  # noqa: E402


@pytest.fixture(scope="module")
def receipts(tmp_path_factory: pytest.TempPathFactory) -> list:
    campaign = campaigns.get("autogen_kit")
    params = campaign.resolve({"protocols": ["parkkill", "stray", "answers", "race", "fork", "tamper", "savekill"],
                               "answers_n": [8], "race_k": [4], "tamper_limit": 4,
                               "save_points": ["save.write", "save.exit"]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("autogen"))
    assert run.harness_errors == []
    versions = {r.observations.get("framework_versions", {}).get("autogen-agentchat") for r in run.receipts}
    assert versions - {None} == {"0.7.5"}  # (sub-runs of tamper and savekill keep theirs per run)
    return run.receipts


@pytest.fixture(scope="module")
def verdicts(receipts: list) -> dict:
    return {(v.property.value, v.path): v for r in receipts for v in r.verdicts}


def test_a_pause_survives_a_kill_and_a_fork_is_served_its_own_answer(verdicts: dict) -> None:
    assert verdicts[("EO", "park-kill")].label.value == "✓"
    fork = verdicts[("FD", "fork:same-pause")]
    assert fork.label.value == "✓" and fork.evidence["observed"] == "s2 served 'no'"


def test_a_saved_pause_is_answered_every_time_it_is_loaded(verdicts: dict) -> None:
    # the team state has no record that its handoff was answered: 8 loads, 8 gated effects
    assert verdicts[("CO", "retry:same-pause×8")].evidence["gate_fires"] == 8
    assert verdicts[("CO", "race:same-pause×4")].evidence["gate_fires"] == 4
    assert verdicts[("CO", "retry:same-pause×8")].label.value == "U"  # AG-8: silent


def test_a_stray_answer_restarts_a_completed_graph(verdicts: dict, receipts: list) -> None:
    assert verdicts[("CO", "stray-after-completion")].evidence["gate_fires"] == 1
    # the gated effect is not fired again, but the finished GraphFlow takes the answer as a new
    # task and runs s1 again, up to the next handoff to the user
    history = next(r.histories["stray-after-completion"] for r in receipts if "stray-after-completion" in r.histories)
    stray = [e for e in history if e["incarnation"] == "run/stray"]
    assert [(e["kind"], e.get("effect")) for e in stray if e["kind"] in ("effect", "pause")] == [
        ("effect", "e1"), ("pause", None)]
    eo = verdicts[("EO", "stray-after-completion")]  # ...so e1 fires twice: the EO checker sees it
    assert eo.label.value != "✓" and eo.evidence["effect_counts"] == {"e1": 2, "e2": 1}


def test_graph_manager_state_is_loaded_unvalidated(verdicts: dict) -> None:
    for edit in ("empty-object", "drop:current_turn", "drop:enqueued_any"):
        v = verdicts[("CV", f"tamper:{edit}")]
        assert v.label.value == "✓" and v.evidence["effects_before_refusal"] == {}
    # a scalar where the manager keeps a mapping loads silently; the run fails only at the graph's
    # completion, after the gated effect fired
    late = verdicts[("CV", "tamper:scalar-for:enqueued_any")]
    assert late.label.value == "U" and late.evidence["effects_before_refusal"] == {"e2": 1}
    # a type-valid edit is no CV question: its outcome is in the undetected-forgery row, never a safety ✓
    forged = verdicts[("CV", "tamper:plus-one:current_turn")]
    assert forged.framework.endswith(" · undetected forgery")
    assert forged.evidence["outcome"] in ("accepted, behaviour unchanged", "accepted, behaviour changed")
    assert forged.label.value == "U" and verdicts[("LV", "tamper:plus-one:current_turn")].framework == forged.framework.split(" · ")[0]


def test_the_manager_state_model_is_read_from_its_deserialiser(verdicts: dict, receipts: list) -> None:
    """AgentChat has no model for the graph manager's entry: ``GraphFlowManager.load_state`` reads
    five keys by subscript, with no default (issue 24). The tamper probe declares exactly those, so
    dropping one of them is invalid because the deserialiser needs it, not because nothing was declared."""
    keys = ["current_turn", "enqueued_any", "message_thread", "ready", "remaining"]
    for receipt in (r for r in receipts if r.probe.startswith("tamper.")):
        assert receipt.observations["state_model"] == {
            "model": "autogen_agentchat GraphFlowManager.load_state (plain dict, keys read by subscript)",
            "required": keys}
    dropped = verdicts[("CV", "tamper:drop:current_turn")]
    assert dropped.framework == "autogen" and dropped.evidence["invalid_edit"] is True
    assert f"no default for {keys}" in dropped.summary


def test_kills_inside_the_application_save_of_the_team_state(verdicts: dict) -> None:
    # the write at the pause never landed: recovery starts over and runs s1 again
    assert verdicts[("EO", "save-kill:save.write#1")].evidence["effect_counts"] == {"e1": 2, "e2": 1}
    # the write after the answer never landed: the pause is answered again, s2 runs again
    assert verdicts[("EO", "save-kill:save.write#2")].evidence["effect_counts"] == {"e1": 1, "e2": 2}
    assert verdicts[("PC", "save-kill:save.write#2")].evidence["durable_prefix"] == ["s1"]
    # killed after the completed state was written: recovery finds the run completed
    assert verdicts[("EO", "save-kill:save.exit#2")].label.value == "✓"
