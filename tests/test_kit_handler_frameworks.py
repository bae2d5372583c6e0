"""The handler protocol (``probes.kit.protocols.handler``) on the agent frameworks whose tools (or steps) have an
error handler of the framework's own, each in its campaign's side environment (quick profile, every handler cell).

The approval-gated (or interrupting) tool ``s2`` fires ``e2`` and raises; the framework's error handler runs
the handler step (``e_handler``), whose output is the tool's result. The cells kill the run at the handler's
begin and effect and recover it by the campaign's first recovery mode. On these frameworks the failure is never
recorded: the recovery runs the failed tool call again, so ``e2`` fires twice (EO and CO), labelled from what
each framework's documentation says of a resumed tool call.
"""

from __future__ import annotations

from typing import Any

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.kit.protocols import HANDLER_CELLS
from tests.kit_checks import cited_labels


def _run(name: str, tmp_path: Any) -> Any:
    campaign = campaigns.get(name)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["handler"], "handler_cells": list(HANDLER_CELLS)},
                                                  quick=True), tmp_path)
    assert run.harness_errors == []
    return run


def _fired(run: Any) -> dict[str, dict[str, int]]:
    return {r.args["at"]: r.observations["handler"]["effects"] for r in run.receipts}


# what every one of them did: the handler once with no fault; killed inside it, the failed call again (e2 twice)
# and the handler once more (its effect twice after a kill past it)
RAN_AGAIN = {"clean": {"e1": 1, "e2": 1, "e_handler": 1}, "h.begin": {"e1": 1, "e2": 2, "e_handler": 1},
             "h.effect": {"e1": 1, "e2": 2, "e_handler": 2}}


def _clean_and_live(labels: dict[tuple[str, str], tuple[str, str]]) -> bool:
    """The no-fault cell holds on every property, and every cell completes with the handler's result."""
    return (all(labels[("handler:clean", prop)][0] == "✓" for prop in ("EO", "CO", "LV")) and
            all(label == "✓" for (_, prop), (label, _) in labels.items() if prop == "LV"))


def test_openai_agents_failure_error_function_and_the_failed_call_again(tmp_path: Any) -> None:
    """openai-agents 0.24.0: ``function_tool(failure_error_function=...)`` handles the approved call's exception.
    The stored RunState is the pause's (the failure is in no state the application stored), so the recovery
    approves it again and the tool runs again: no SDK statement speaks to it (U)."""
    run = _run("openai_agents", tmp_path)
    assert _fired(run) == RAN_AGAIN
    labels = cited_labels(run)
    assert _clean_and_live(labels)
    for at in ("h.begin", "h.effect"):
        assert labels[(f"handler:kill@{at}/run-state", "EO")] == ("U", "")
        assert labels[(f"handler:kill@{at}/run-state", "CO")] == ("U", "")


def test_strands_after_tool_call_hook_and_the_interrupted_tool_again(tmp_path: Any) -> None:
    """strands-agents 1.62.0: an ``AfterToolCallEvent`` hook replaces the error result with the handler's. Killed
    inside it, the agent is still in its interrupt state; the recovery resumes it and the tool runs from its top
    (the interrupt module's docstring: D, as for the crash cells)."""
    run = _run("strands", tmp_path)
    assert _fired(run) == RAN_AGAIN
    labels = cited_labels(run)
    assert _clean_and_live(labels)
    for at in ("h.begin", "h.effect"):
        for prop in ("EO", "CO"):
            assert labels[(f"handler:kill@{at}/session", prop)] == ("D", "strands.types:interrupt")


def test_google_adk_on_tool_error_callback_and_the_resumed_tool_call_again(tmp_path: Any) -> None:
    """google-adk 2.13.0: an app plugin's ``on_tool_error_callback`` answers the failed tool node's call. Resuming
    the invocation runs the tool call again (ResumabilityConfig: at-least-once for a resumed tool call: D)."""
    run = _run("google_adk", tmp_path)
    assert _fired(run) == RAN_AGAIN
    labels = cited_labels(run)
    assert _clean_and_live(labels)
    for at in ("h.begin", "h.effect"):
        for prop in ("EO", "CO"):
            assert labels[(f"handler:kill@{at}/resume-invocation", prop)] == \
                ("D", "google.adk.apps._configs:ResumabilityConfig")


def test_agno_skip_on_failure_goes_on_to_the_handler_step_and_reruns_the_failed_step(tmp_path: Any) -> None:
    """agno: ``Step(..., max_retries=0, skip_on_failure=True)`` skips the failed step and goes on to the next, the
    handler step (handed the failure as its message, a str). Agno saves the run at the pause and not the skipped
    failure before the kill, so ``continue_run`` runs the reviewed step again: e2 twice, no Agno statement (U)."""
    run = _run("agno", tmp_path)
    assert _fired(run) == RAN_AGAIN
    assert {seen["handed"][0] for seen in (r.observations["handler"] for r in run.receipts)} == {"str"}
    labels = cited_labels(run)
    assert _clean_and_live(labels)
    for at in ("h.begin", "h.effect"):
        for prop in ("EO", "CO"):
            assert labels[(f"handler:kill@{at}/continue-run", prop)] == ("U", "")
