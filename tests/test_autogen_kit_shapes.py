"""AutoGen AgentChat 0.7.5 under the kit's handler, callback and parallel protocols (quick profile, the real
framework, scripted agents, no model).

Each test runs the ``autogen_kit`` campaign restricted to one protocol, every cell of it, and asserts what the
kit measured: the effect counts per cell first, then the labels they give. AgentChat has no durable execution:
the adapter saves ``team.save_state()`` after every run (AG-3), so a kill inside a run leaves the newest saved
state the one before it, and the recovery (``latest-team-state``) loads that. The documentation has no
statement on tool errors, termination conditions or a graph's branches across a load (only AG-3's claim for
LV is cited), so what breaks EO or CO here is U.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.installed import require

require("autogen_agentchat")

from probes import campaigns  # noqa: E402
from probes.core.campaign import run_campaign  # noqa: E402
from probes.kit.adapter import Capability  # noqa: E402
from probes.kit.protocols import CALLBACK_CELLS, HANDLER_CELLS  # noqa: E402
from probes.kit.runtime import JOIN_POINTS  # noqa: E402
from tests.kit_checks import cited_labels  # noqa: E402

MODE = "latest-team-state"


def _run(tmp_path: Any, **params: Any) -> Any:
    """The ``autogen_kit`` campaign, quick profile, with ``params`` (the protocol and its cells)."""
    campaign = campaigns.get("autogen_kit")
    run = run_campaign(campaign, campaign.resolve(params, quick=True), tmp_path)
    assert run.harness_errors == []
    versions = {r.observations.get("framework_versions", {}).get("autogen-agentchat") for r in run.receipts}
    assert versions - {None} == {"0.7.5"}
    return run


def test_the_adapter_declares_the_three_workflows() -> None:
    """Built, not n/a: no reason is left in ``missing`` for them."""
    from probes.frameworks.autogen.adapter import AutoGenAdapter

    for capability in (Capability.HANDLER, Capability.CALLBACK, Capability.PARALLEL):
        assert AutoGenAdapter.declares(capability) and capability not in AutoGenAdapter.missing


def test_a_failed_tool_call_routed_to_the_handler_and_the_failed_call_again_after_a_kill(tmp_path: Any) -> None:
    """The AssistantAgent's workbench turns the tool's exception into an error result, the graph's error edge
    runs the handler (handed the ``FunctionExecutionResult``). Killed in the handler, the newest saved state is
    the pause's: the answer is delivered again, the failed tool call runs again (e2 twice) and the handler once
    more (its effect twice after a kill past it). No AutoGen statement speaks to it: U."""
    run = _run(tmp_path, protocols=["handler"], handler_cells=list(HANDLER_CELLS))
    seen = {r.args["at"]: r.observations["handler"] for r in run.receipts}
    assert {at: s["effects"] for at, s in seen.items()} == {
        "clean": {"e1": 1, "e2": 1, "e_handler": 1}, "h.begin": {"e1": 1, "e2": 2, "e_handler": 1},
        "h.effect": {"e1": 1, "e2": 2, "e_handler": 2}}
    assert seen["clean"]["handed"] == ["FunctionExecutionResult"]
    assert seen["h.effect"]["handed"] == ["FunctionExecutionResult"] * 2
    labels = cited_labels(run)
    assert {prop: labels[("handler:clean", prop)][0] for prop in ("EO", "CO", "LV")} == dict.fromkeys(
        ("EO", "CO", "LV"), "✓")
    for at in ("h.begin", "h.effect"):
        path = f"handler:kill@{at}/{MODE}"
        assert labels[(path, "EO")] == ("U", "") and labels[(path, "CO")] == ("U", "")
        assert labels[(path, "LV")][0] == "✓"  # completes with the handler's result


def test_the_approval_termination_condition_is_called_once_per_approval(tmp_path: Any) -> None:
    """The termination condition's approval callback fires e_cb at the handoff; the answered run loads the
    thread and does not call it for the restored handoff. Killed just past its effect, before any team state
    was saved: nothing durable, the run starts over (e1 and e_cb twice, U)."""
    run = _run(tmp_path, protocols=["callback"], callback_cells=list(CALLBACK_CELLS))
    fired = {r.args["at"]: r.observations["callback"]["effects"] for r in run.receipts}
    assert fired == {"clean": {"e1": 1, "e2": 1, "e_cb": 1}, "park-kill": {"e1": 1, "e2": 1, "e_cb": 1},
                     "cb.effect": {"e1": 2, "e2": 1, "e_cb": 2}}
    labels = cited_labels(run)
    assert labels[("callback:clean", "EO")] == ("✓", "") and labels[("callback:park-kill", "EO")] == ("✓", "")
    assert labels[(f"callback:kill@cb.effect/{MODE}", "EO")] == ("U", "")
    assert all(label == "✓" for (_, prop), (label, _) in labels.items() if prop in ("CO", "LV"))


def test_a_loaded_graph_drops_the_unanswered_branch_and_starts_over(tmp_path: Any) -> None:
    """Both branches ask; b1 answered alone: b2 asks again but its loop edge enqueues nothing after
    ``load_state`` (the activation bookkeeping is not in the saved state), so the graph resets to s1. The
    recovery still finds b2 asking (its newest message a handoff); b2's answer runs s1 again and b1 asks
    again, and b1's second answer fires e_b1 again before the join. The crash cells never reach the join
    point with both answered. U on EO and CO, LV holds (both answers joined in the end)."""
    run = _run(tmp_path, protocols=["parallel"], parallel_points=list(JOIN_POINTS))
    seen = {r.args["of"] + (f"@{r.args['point']}" if r.args.get("point") else ""): r.observations["parallel"]
            for r in run.receipts}
    assert seen["partly"]["steps"] == [
        "started: paused, asking b1, b2", "b1 answered: paused, asking b2", f"recovered by {MODE}: paused, asking b2",
        "b2 answered: paused, asking b1", "b1 answered: completed with \"joined b1='yes', b2='no'\""]
    for point in JOIN_POINTS:
        assert seen[f"crash@{point}"]["steps"][2:5] == [
            "b2 answered: paused, asking b1", f"the join never ran, so {point} was never reached",
            f"recovered by {MODE}: paused, asking b1"]
    for cell in ("partly", *(f"crash@{point}" for point in JOIN_POINTS)):
        assert seen[cell]["effects"] == {"e1": 2, "e_b1": 2, "e_b2": 1, "e_join": 1}
    labels = cited_labels(run)
    for path in (f"parallel:partly/{MODE}", *(f"parallel:crash@{point}/{MODE}" for point in JOIN_POINTS)):
        assert {prop: labels[(path, prop)][0] for prop in ("EO", "CO", "LV")} == {"EO": "U", "CO": "U", "LV": "✓"}


@pytest.mark.parametrize("protocol", ["handler", "callback", "parallel"])
def test_each_workflow_maps_its_roles_onto_agents(protocol: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The roles of each workflow map onto agents (an asking agent before a paused step, none before a
    branch), and the original code still builds ``s1 -> ask -> s2``."""
    from probes.frameworks.autogen.adapter import _roles
    from probes.kit.runtime import CODE_ENV

    expected = {"handler": {"s1": "first", "ask": "ask", "s2": "pause-fails", "h": "handler"},
                "callback": {"s1": "first", "ask": "ask", "s2": "pause"},
                "parallel": {"s1": "first", "b1": "branch-pause", "b2": "branch-pause", "join": "join"}}
    monkeypatch.setenv(CODE_ENV, protocol)
    assert _roles() == expected[protocol]
    monkeypatch.setenv(CODE_ENV, "v1")
    assert _roles() == {"s1": "first", "ask": "ask", "s2": "pause"}
