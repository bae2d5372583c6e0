"""The callback protocol (``probes.kit.protocols.callback``) on the frameworks that ask for an approval through a
callback or hook of their own, each in its campaign's side environment (quick profile, every callback cell).

The approval callback fires ``e_cb`` before the pause; the cells count it for one approval: with no fault,
after the process parked at the pause was killed (answered from a fresh process), and after a kill just past
the callback's effect (recovered by the campaign's first recovery mode). Each test asserts what the framework
did, effect counts first, then the labels they give with the citation that labels them.
"""

from __future__ import annotations

from typing import Any

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.kit.protocols import CALLBACK_CELLS
from tests.kit_checks import cited_labels


def _run(name: str, tmp_path: Any) -> Any:
    campaign = campaigns.get(name)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["callback"], "callback_cells": list(CALLBACK_CELLS)},
                                                  quick=True), tmp_path)
    assert run.harness_errors == []
    return run


def _fired(run: Any) -> dict[str, dict[str, int]]:
    return {r.args["at"]: r.observations["callback"]["effects"] for r in run.receipts}


def _once_but_cb(e_cb: dict[str, int]) -> dict[str, dict[str, int]]:
    """e1 and e2 once in every cell, e_cb as given per cell."""
    return {at: {"e1": 1, "e2": 1, "e_cb": n} for at, n in e_cb.items()}


def _co_lv_hold(labels: dict[tuple[str, str], tuple[str, str]]) -> bool:
    return all(label == "✓" for (_, prop), (label, _) in labels.items() if prop in ("CO", "LV", "VO"))


def test_openai_agents_calls_needs_approval_once_per_approval(tmp_path: Any) -> None:
    """openai-agents 0.24.0: ``needs_approval`` as a function. The SDK asks it when the model calls the tool;
    approving the restored RunState runs the tool without asking it again. A kill just past the callback's
    effect comes before any RunState was stored: the recovery finds nothing durable, the run starts over and
    asks again (no statement of the SDK's speaks to it: U)."""
    run = _run("openai_agents", tmp_path)
    assert _fired(run) == _once_but_cb({"clean": 1, "park-kill": 1, "cb.effect": 2})
    labels = cited_labels(run)
    assert labels[("callback:clean", "EO")] == ("✓", "") and labels[("callback:park-kill", "EO")] == ("✓", "")
    assert labels[("callback:kill@cb.effect/run-state", "EO")] == ("U", "")
    assert _co_lv_hold(labels)


def test_google_adk_calls_the_confirmation_callback_three_times_per_approval(tmp_path: Any) -> None:
    """google-adk 2.13.0: a ``FunctionTool`` with ``require_confirmation`` a callable, as a workflow's tool node.
    The callable runs when the call is first gated (the question), and twice more when the confirmation
    arrives: the tool node reruns on resume, its confirmation gate asks the callable again, then the tool's
    own ``run_async`` asks it once more. ResumabilityConfig states at-least-once for a resumed tool call: D."""
    run = _run("google_adk", tmp_path)
    assert _fired(run) == _once_but_cb({"clean": 3, "park-kill": 3, "cb.effect": 4})
    labels = cited_labels(run)
    for path in ("callback:clean", "callback:park-kill", "callback:kill@cb.effect/resume-invocation"):
        assert labels[(path, "EO")] == ("D", "google.adk.apps._configs:ResumabilityConfig")
    assert _co_lv_hold(labels)


def test_strands_invokes_the_interrupting_hook_again_on_resume(tmp_path: Any) -> None:
    """strands-agents 1.62.0: a ``BeforeToolCallEvent`` hook fires e_cb, then ``event.interrupt()``; the answer
    invokes the hook again, whose second ``interrupt()`` returns it (the interrupt module's docstring: D). After
    a kill past the callback's effect the restarted tool call asks once more (left uncited: U)."""
    run = _run("strands", tmp_path)
    assert _fired(run) == _once_but_cb({"clean": 2, "park-kill": 2, "cb.effect": 3})
    labels = cited_labels(run)
    assert labels[("callback:clean", "EO")] == ("D", "strands.types:interrupt")
    assert labels[("callback:park-kill", "EO")] == ("D", "strands.types:interrupt")
    assert labels[("callback:kill@cb.effect/session", "EO")] == ("U", "")
    assert _co_lv_hold(labels)


def test_maf_runs_the_requesting_handler_once_per_approval(tmp_path: Any) -> None:
    """agent-framework: the handler that issues ``ctx.request_info`` (its code before the request is the
    callback) completes in its superstep and is not run again on the response; after a kill past the
    callback's effect, before the superstep's checkpoint, the recovery runs it again (no statement: U)."""
    run = _run("maf", tmp_path)
    assert _fired(run) == _once_but_cb({"clean": 1, "park-kill": 1, "cb.effect": 2})
    labels = cited_labels(run)
    assert labels[("callback:clean", "EO")] == ("✓", "") and labels[("callback:park-kill", "EO")] == ("✓", "")
    assert labels[("callback:kill@cb.effect/latest-checkpoint", "EO")] == ("U", "")
    assert _co_lv_hold(labels)


def test_crewai_asks_its_feedback_provider_once_per_approval(tmp_path: Any) -> None:
    """crewai 1.15.2: ``@human_feedback(provider=...)``, the provider's ``request_feedback`` (fires e_cb, then raises
    HumanFeedbackPending) is the approval callback; ``Flow.from_pending`` and ``resume`` take the answer without
    asking the provider again. Killed past the callback's effect, @persist's recovery runs the flow from its start
    (e1 and e_cb again: D by CR-6, as for the crash cells)."""
    run = _run("crewai_kit", tmp_path)
    fired = _fired(run)
    assert {at: fired[at] for at in ("clean", "park-kill")} == _once_but_cb({"clean": 1, "park-kill": 1})
    assert fired["cb.effect"] == {"e1": 2, "e2": 1, "e_cb": 2}
    labels = cited_labels(run)
    assert labels[("callback:clean", "EO")] == ("✓", "") and labels[("callback:park-kill", "EO")] == ("✓", "")
    assert labels[("callback:kill@cb.effect/persist-id", "EO")] == ("D", "CR-6")
    assert _co_lv_hold(labels)


@pytest.mark.parametrize("name", ["llamaindex_kit", "pydantic_graph_kit"])
def test_the_other_frameworks_declare_no_callback(name: str) -> None:
    """No approval callback is built for them: their callback cells are n/a (the reason: ``missing`` or the
    capability not declared)."""
    from probes.kit.adapter import Capability
    from probes.kit.suite import KIT_ADAPTERS, adapter_class

    campaigns.get(name)
    assert not adapter_class(KIT_ADAPTERS[name]).declares(Capability.CALLBACK)
