"""The handler and callback protocols (``probes.kit.protocols.handler`` / ``callback``) on pydantic-ai 2.68.0
durable execution (``DBOSDurability``, dbos 3.4.0), in the campaign's side environment, quick profile, every cell.

Handler: the approved tool ``s2`` (a DBOS step) fires ``e2`` and raises; a ``Hooks`` capability's
``on_tool_execute_error`` hook runs the handler step ``h`` (a DBOS step) and returns its output as the tool's
result. Callback: ``ApprovalRequiredToolset``'s ``approval_required_func`` fires ``e_cb`` (in a DBOS step) before
the call is deferred. Each test asserts the effect counts first, then the labels and the citation behind each
(pydantic-ai's citations are installed docstrings, ``probes/frameworks/pydantic_ai/citations.py``; none speaks to a step
run again after a kill past its effect, so those EO violations are U, and a held property carries no citation).
"""

from __future__ import annotations

from typing import Any

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.kit.protocols import CALLBACK_CELLS, HANDLER_CELLS
from tests.kit_checks import cited_labels


def _run(protocol: str, cells: tuple[str, ...], tmp_path: Any) -> Any:
    """The campaign restricted to ``protocol`` with all its cells, quick profile; no harness error."""
    campaign = campaigns.get("pydantic_ai")
    run = run_campaign(campaign, campaign.resolve({"protocols": [protocol], f"{protocol}_cells": list(cells)},
                                                  quick=True), tmp_path)
    assert run.harness_errors == []
    return run


def _fired(run: Any, protocol: str) -> dict[str, dict[str, int]]:
    return {r.args["at"]: r.observations[protocol]["effects"] for r in run.receipts}


def _held(uncited: dict[str, tuple[str, ...]]) -> dict[tuple[str, str], tuple[str, str]]:
    """Every path's EO, CO, LV and VO verdicts: ✓ (no citation), but U (no statement) for the properties
    ``uncited`` names per path."""
    return {(path, prop): ("U" if prop in props else "✓", "") for path, props in uncited.items()
            for prop in ("EO", "CO", "LV", "VO")}


def test_both_constructs_are_declared() -> None:
    """The adapter declares the handler and callback workflows (no reason left in ``missing`` for them)."""
    from probes.kit.adapter import Capability
    from probes.frameworks.pydantic_ai.adapter import PydanticAIAdapter

    for capability in (Capability.HANDLER, Capability.CALLBACK):
        assert PydanticAIAdapter.declares(capability) and capability not in PydanticAIAdapter.missing


def test_on_tool_execute_error_resumes_into_the_handler_without_the_failed_tool_again(tmp_path: Any) -> None:
    """DBOS recorded ``s2``'s exception as the step's output, so the recovery raises the recorded error instead of
    running the tool again: ``e2`` once in every cell (EO's and CO's question of the handler protocol). The
    handler's effect fires once, but twice after a kill just past it (the ``h`` step's output was not recorded,
    so it runs again): an EO violation no installed docstring speaks to (U). The hook is handed the tool's own
    exception type, on replay too."""
    run = _run("handler", HANDLER_CELLS, tmp_path)
    assert _fired(run, "handler") == {"clean": {"e1": 1, "e2": 1, "e_handler": 1},
                                      "h.begin": {"e1": 1, "e2": 1, "e_handler": 1},
                                      "h.effect": {"e1": 1, "e2": 1, "e_handler": 2}}
    assert {r.args["at"]: r.observations["handler"]["handed"] for r in run.receipts} == \
        {"clean": ["StepFailed"], "h.begin": ["StepFailed", "StepFailed"], "h.effect": ["StepFailed", "StepFailed"]}
    assert cited_labels(run) == _held({"handler:clean": (), "handler:kill@h.begin/launch": (),
                                  "handler:kill@h.effect/launch": ("EO",)})


def test_approval_required_func_fires_once_per_approval_but_again_after_a_kill_past_it(tmp_path: Any) -> None:
    """The approval callback runs once for the deferred call: the approved call runs with
    ``ctx.tool_call_approved`` set and the toolset does not ask again; a recovered replay (park-kill: the
    workflow recovered by launch and answered) returns the ``cb`` step's recorded result. Killed just past the
    callback's effect, the step's output is not recorded and the replay runs it again: ``e_cb`` twice, an EO
    violation no installed docstring speaks to (U)."""
    run = _run("callback", CALLBACK_CELLS, tmp_path)
    assert _fired(run, "callback") == {"clean": {"e1": 1, "e2": 1, "e_cb": 1},
                                       "park-kill": {"e1": 1, "e2": 1, "e_cb": 1},
                                       "cb.effect": {"e1": 1, "e2": 1, "e_cb": 2}}
    assert cited_labels(run) == _held({"callback:clean": (), "callback:park-kill": (),
                                  "callback:kill@cb.effect/launch": ("EO",)})
