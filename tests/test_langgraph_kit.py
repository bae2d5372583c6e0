"""LangGraph 1.2.9's stock SQLite saver under the kit (quick profile, the real framework).

What the paper's LangGraph campaign does not measure: the same pause answered again by
its checkpoint id, and a fork there, through the kit's protocols; labelled with the
statements the paper's campaign cites for the same properties.
"""

from __future__ import annotations

import pytest

from tests.installed import require

require("langgraph.checkpoint.sqlite")

from probes import campaigns  # noqa: E402
from probes.core.campaign import run_campaign  # noqa: E402


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    campaign = campaigns.get("langgraph_kit")
    params = campaign.resolve({"protocols": ["answers", "fork", "tamper"], "answers_n": [3]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("langgraph_kit"))
    assert run.harness_errors == []
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_a_checkpoint_answered_again_fires_the_gate_again_against_the_documented_claim(verdicts: dict) -> None:
    retry = verdicts[("CO", "retry:same-pause×3")]
    assert retry.evidence["gate_fires"] == 3
    assert retry.label.value == "✗" and retry.doc.source == "LG-15"


def test_a_fork_at_the_answered_pause_is_served_the_first_answer(verdicts: dict) -> None:
    fork = verdicts[("FD", "fork:same-pause")]
    assert fork.label.value == "✗" and "s2 served 'yes'" in fork.summary  # #6663: the first answer, not 'no'
    # Proposition 1's side: not a retry (the gated effect fired again), not a fork (the old outcome)
    assert fork.evidence["side"] == "neither: the gated effect fired again without the new answer's outcome"
    assert fork.evidence["side"] in fork.summary
    assert fork.doc.quote and fork.doc.stance == "claims"


def test_the_stock_savers_durable_state_is_not_a_json_document(verdicts: dict) -> None:
    assert verdicts[("CV", "tamper:structural")].label.value == "n/a"


def test_the_stock_savers_checkpoint_model_is_langgraphs_checkpoint_typeddict(tmp_path) -> None:
    """The state model is declared from LangGraph's own ``Checkpoint`` TypedDict (issue 24), and a
    checkpoint a real run wrote through the stock SQLite saver carries every key it declares required."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from probes.frameworks.langgraph.adapter import StockSaverAdapter, stock_saver

    class State(TypedDict):
        out: str

    saver = stock_saver("sqlite", str(tmp_path / "store.sqlite"))
    graph = StateGraph(State).add_node("s1", lambda state: {"out": "done"})
    graph = graph.add_edge(START, "s1").add_edge("s1", END).compile(checkpointer=saver)
    thread = {"configurable": {"thread_id": "t"}}
    graph.invoke({"out": ""}, thread)
    checkpoint = saver.get_tuple(thread).checkpoint  # the durable document, as the saver reads it back
    adapter = StockSaverAdapter(tmp_path, "sqlite", str(tmp_path / "store.sqlite"))
    declared = adapter.state_required(checkpoint)
    assert declared["model"] == "langgraph.checkpoint.base Checkpoint (TypedDict)"
    assert declared["required"] == ["channel_values", "channel_versions", "id", "ts", "updated_channels", "v",
                                    "versions_seen"]
    assert set(declared["required"]) <= set(checkpoint)


@pytest.fixture(scope="module")
def api_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The functional API's variant and LangGraph's other ways of addressing an answered pause, measured."""
    campaign = campaigns.get("langgraph_kit")
    params = campaign.resolve({"protocols": ["functional", "baseline", "answer_by_checkpoint", "crash", "fork_ways"],
                               "crash_points": ["s2.begin"], "crash_hows": ["kill"],
                               "recovery_modes": ["none-input", "resend-input"]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("langgraph_kit_api"))
    assert run.harness_errors == []
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_the_functional_api_answered_on_its_thread_runs_each_task_once(api_verdicts: dict) -> None:
    eo = api_verdicts[("EO", "functional:baseline:yes")]
    assert eo.label.value == "✓" and eo.evidence["effect_counts"] == {"e1": 1, "e2": 1}


def test_the_functional_api_answered_at_its_checkpoint_id_runs_the_finished_task_again(api_verdicts: dict) -> None:
    """Addressed by the pause's own checkpoint id, the entrypoint runs ``s1``'s finished task again; the
    graph API's node does not."""
    assert api_verdicts[("EO", "functional:answer-by-checkpoint")].evidence["effect_counts"]["e1"] == 2
    assert api_verdicts[("EO", "answer-by-checkpoint")].evidence["effect_counts"] == {"e1": 1, "e2": 1}


def test_sending_the_input_again_after_a_crash_runs_the_first_step_again(api_verdicts: dict) -> None:
    """The paper's "resubmit" recovery: s1 runs twice; the documented invoke(None) resumes after it."""
    for prefix in ("", "functional:"):
        assert api_verdicts[("EO", f"{prefix}crash:kill@s2.begin/resend-input")].evidence["effect_counts"]["e1"] == 2
        assert api_verdicts[("EO", f"{prefix}crash:kill@s2.begin/none-input")].evidence["effect_counts"]["e1"] == 1
    # the crash statement the graph API's path cites is cited for the functional API's path too
    assert api_verdicts[("EO", "functional:crash:kill@s2.begin/resend-input")].doc.source == "LG-4"


def test_each_way_of_forking_an_answered_pause_is_judged_against_the_new_answers_outcome(api_verdicts: dict) -> None:
    replay = api_verdicts[("FD", "fork:replay-then-resume")]
    assert replay.label.value == "✓" and "s2 served 'no'" in replay.summary
    assert "s2 served 'yes'" in api_verdicts[("FD", "fork:resume-map")].summary  # #6663 with a resume map too
    assert api_verdicts[("FD", "fork:update-state")].label.value == "✗"


def test_the_save_kill_cells_are_one_state_each_run(tmp_path, outside_basetemp) -> None:
    """Each save-kill cell kills at one state: LangGraph's pending writes submitted before a checkpoint
    ``put`` are durable when the hooked ``put`` is entered (``hook_checkpoint_put``), and a park point
    dies without letting another thread move (``nemesis.die_here``). Before both, the same cell gave ✓
    in one run and D in another (about one run in six for ``save.enter#3``): three runs agree."""
    from tests.kit_checks import run_probes

    camp = campaigns.get("langgraph")
    params = {**camp.resolve(), "backends": ["sqlite"]}
    (spec,) = [s for s in camp.plan(params) if s.id == "savekill.sqlite.rep1"]
    runs = []
    for n in range(3):
        (tmp_path / str(n)).mkdir()
        (outside_basetemp / str(n)).mkdir()
        ((_, result),) = run_probes(camp.run_probe, [spec], params, tmp_path / str(n), outside_basetemp / str(n))
        runs.append(sorted((v.property.value, v.path, v.label.value) for v in result.verdicts))
    assert runs[0] == runs[1] == runs[2] and any(path == "save-kill:save.enter#3" for _, path, _ in runs[0])
