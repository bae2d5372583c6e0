"""pydantic-ai 2.68.0 durable execution (dbos 3.4.0) under the kit, in its side environment (created once, cached).

The first run creates ``pydantic-ai-py311-<hash>`` in the user cache with pip (about half a minute from
the local package index); later runs reuse it. Every probe runs the real agent, DBOS and SQLite.
"""

from __future__ import annotations

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from tests.kit_checks import EACH_ANSWER_ONCE, pause_twice


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    campaign = campaigns.get("pydantic_ai")
    params = campaign.resolve({"protocols": ["baseline", "crash", "fork", "answers"], "crash_points": ["s1.effect"],
                               "crash_hows": ["kill", "raise"], "answers_n": [2]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("pai"))
    assert run.harness_errors == []
    versions = {tuple(sorted(r.observations.get("framework_versions", {}).items())) for r in run.receipts}
    assert versions == {(("dbos", "3.4.0"), ("pydantic-ai-slim", "2.68.0"))}
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_a_clean_run_approves_the_deferred_tool_with_the_answer(verdicts: dict) -> None:
    assert verdicts[("EO", "baseline:yes")].evidence["effect_counts"] == {"e1": 1, "e2": 1}
    lv = verdicts[("LV", "baseline:no")]  # the answer reached s2 as its argument (ToolApproved override_args)
    assert lv.label.value == "✓" and lv.evidence["outcome"] == "s2 served 'no'"


def test_the_answered_pause_answered_again_is_inert(verdicts: dict) -> None:
    assert verdicts[("CO", "retry:same-pause×2")].evidence["gate_fires"] == 1
    fd = verdicts[("FD", "fork:same-pause")]
    assert fd.evidence["observed"] == "s2 served 'yes'" != fd.evidence["expected_f_v"]
    assert fd.label.value == "D" and fd.doc.source == "dbos._dbos:DBOS.fork_workflow"
    assert fd.doc.version == "dbos 3.4.0"


def test_a_kill_inside_the_step_s1_fires_its_effect_again_and_no_installed_docstring_says_so(verdicts: dict) -> None:
    v = verdicts[("EO", "crash:kill@s1.effect/launch")]
    assert v.evidence["effect_counts"] == {"e1": 2, "e2": 1}
    assert v.label.value == "U" and v.doc is None
    assert verdicts[("LV", "crash:kill@s1.effect/launch")].label.value == "✓"  # the launch recovered it


def test_a_workflow_that_raised_is_not_recovered_as_dbos_says(verdicts: dict) -> None:
    v = verdicts[("LV", "crash:raise@s1.effect/launch")]
    assert v.label.value == "D" and "terminalized as ERROR" in v.doc.quote
    assert v.doc.version == "dbos 3.4.0"
    assert verdicts[("EO", "crash:raise@s1.effect/launch")].evidence["effect_counts"] == {"e1": 1, "e2": 0}


@pytest.fixture(scope="module")
def tamper_receipts(tmp_path_factory: pytest.TempPathFactory) -> list:
    campaign = campaigns.get("pydantic_ai")
    params = campaign.resolve({"protocols": ["tamper"], "tamper_limit": 1, "backends": ["sqlite"]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("pai-tamper"))
    assert run.harness_errors == []
    return run.receipts


def test_a_recorded_step_output_has_no_state_model(tamper_receipts: list) -> None:
    """The document the kit edits is ``s1``'s pickled output, which DBOS reads back with ``pickle.loads``
    alone (issue 24): the adapter says so and requires nothing, so an emptied output is a valid
    document whose outcome goes to the undetected-forgery row, not an invalid edit taken blind."""
    tampered = [r for r in tamper_receipts if r.probe.startswith("tamper.")]
    assert len(tampered) == 2
    for receipt in tampered:
        assert receipt.observations["state_model"] == {
            "model": "dbos step output: any pickled value (DefaultSerializer: pickle.loads, no schema)", "required": []}
    empty = next(v for r in tampered for v in r.verdicts if v.property.value == "CV" and v.path == "tamper:empty-object")
    assert empty.framework.endswith(" · undetected forgery") and empty.evidence["invalid_edit"] is False


def test_two_approvals_answered_one_at_a_time_run_each_tool_once(tmp_path) -> None:
    """The pause-twice workflow as pydantic-ai offers it (two approval-gated tool calls, the workflow
    parked in ``recv`` for each in turn, each answer from a fresh process): the first answer leaves the
    run paused at the second approval, and DBOS's recorded ``s2`` is not run again by the second."""
    got = pause_twice("pydantic_ai", tmp_path)
    assert got.observations["pause_twice"] == EACH_ANSWER_ONCE
    assert {v.property.value: v.label.value for v in got.verdicts} == {"EO": "✓", "CO": "✓", "LV": "✓", "VO": "✓"}
