"""The handler and callback protocols (``probes.kit.protocols.handler`` and ``callback``, issue 27 item 1).

handler: the answered step fails after its effect and the framework's own error handler runs a step with an
effect of its own; the cells kill the run inside the handler and recover it. callback: the approval is asked
through a callback or hook of the framework's whose body fires an effect before the pause; the cells count it
for one approval. An adapter without either construct gets n/a with its reason.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from probes.core.campaign import run_campaign
from probes.core.history import Event, History, Kind
from probes.kit import chapter, suite
from probes.kit.protocols import CALLBACK_CELLS, HANDLER_CELLS
from probes.kit.runtime import SHAPES, WORKFLOWS, CODE_CHANGES
from probes.kit.suite import kit_campaign
from tests.installed import require

ALL_CELLS = {"handler_cells": list(HANDLER_CELLS), "callback_cells": list(CALLBACK_CELLS)}


def _run(name: str, adapter: str, out: Path, **params: Any) -> Any:
    campaign = kit_campaign(name, name, adapter)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["handler", "callback"], **ALL_CELLS, **params},
                                                  quick=True), out)
    assert run.harness_errors == []
    return run


def _labels(run: Any) -> dict[tuple[str, str], str]:
    return {(v.path, v.property.value): v.label.value for r in run.receipts for v in r.verdicts}


def _cited(run: Any) -> dict[tuple[str, str], str]:
    return {(v.path, v.property.value): v.doc.source for r in run.receipts for v in r.verdicts if v.doc}


def test_the_workflows_are_run_from_their_start_not_deployed_as_code_changes() -> None:
    assert {"handler", "callback"} <= set(WORKFLOWS) and not {"handler", "callback"} & set(CODE_CHANGES)
    assert [role for _, role in SHAPES["handler"]] == ["first", "pause-fails", "handler"]
    assert [role for _, role in SHAPES["callback"]] == ["first", "callback-pause"]


def test_cells_are_one_run_each_on_the_first_recovery_mode_and_smoke_keeps_one() -> None:
    from probes.frameworks.langgraph.adapter import StockSaverAdapter

    params = {p.name: p.default for p in suite.kit_params(StockSaverAdapter)}
    cells = dict(suite._cells(params, ("handler", "callback")))
    assert list(cells) == [f"handler.{at}" for at in HANDLER_CELLS] + [f"callback.{at}" for at in CALLBACK_CELLS]
    assert {args["mode"] for args in cells.values()} == {StockSaverAdapter.recovery_modes[0]}
    smoke = {**{p.name: p.quick for p in suite.kit_params(StockSaverAdapter)}, **suite.SMOKE}
    assert [cid for cid, _ in suite._cells(smoke, ("handler", "callback"))] == ["handler.h.effect", "callback.clean"]


def test_an_adapter_without_the_constructs_is_not_applicable_with_its_reason(tmp_path: Path) -> None:
    run = _run("plain_handler", "tests.fixtures.plain_adapter:PlainAdapter", tmp_path)
    labels = _labels(run)
    assert set(labels.values()) == {"n/a"}
    assert {path for path, _ in labels} == {"handler:clean", "handler:kill@h.begin/latest",
                                            "handler:kill@h.effect/latest", "callback:clean", "callback:park-kill",
                                            "callback:kill@cb.effect/latest"}
    whys = {v.evidence["why"] for r in run.receipts for v in r.verdicts}
    assert whys == {"the adapter does not declare handler", "the adapter does not declare callback"}


def test_trace_validation_takes_both_workflows_as_outside_the_model() -> None:
    from probes.tla.trace import Recorded

    def answered(workflow: str) -> History:
        return History.of_events([Event(Kind.START, "harness"), Event(Kind.PAUSE, "run/start", "s2"),
                                  Event(Kind.ANSWER, "harness", value="yes", detail={"workflow": workflow})])

    assert "error handler" in Recorded("x", "c", "f", "handler", answered("handler")).outside_model
    assert "approval callback" in Recorded("x", "c", "f", "callback", answered("callback")).outside_model
    assert Recorded("x", "c", "f", "nested", answered("nested")).outside_model is None


def test_chapter_rows_read_the_observations() -> None:
    seen = SimpleNamespace(verdicts=[], args={"backend": "sqlite"}, observations={
        "handler": {"at": "h.effect", "mode": "m", "ended": "completed", "effects": {"e_handler": 2},
                    "handed": ["StepFailed", "str"]}})
    assert chapter.handler_rows(SimpleNamespace(receipts=[seen]))[0]["effects"] == {"e_handler": 2}
    cb = SimpleNamespace(verdicts=[], args={"backend": "sqlite"}, observations={
        "callback": {"at": "clean", "mode": "m", "ended": "completed", "effects": {"e_cb": 2}}})
    row = chapter.callback_rows(SimpleNamespace(receipts=[cb]))[0]
    assert row["e_cb fired"] == 2 and row["recovery"] == ""


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_langgraph_error_handler_and_callback_before_interrupt(tmp_path: Path, backend: str) -> None:
    """LangGraph 1.2.9: ``add_node(..., error_handler=)`` and a node that writes before ``interrupt()``, on the stock
    SqliteSaver and PostgresSaver (the same labels on both)."""
    require(f"langgraph.checkpoint.{backend}")
    run = _run("lg_handler", "probes.frameworks.langgraph.adapter:StockSaverAdapter", tmp_path, backends=[backend])
    assert {r.args["backend"] for r in run.receipts} == {backend}
    labels, cited = _labels(run), _cited(run)
    obs = {(r.args["protocol"], r.args["at"]): r.observations[r.args["protocol"]] for r in run.receipts}
    # no fault: the failed node's e2 once, the node-level error handler once, handed the exception
    assert obs[("handler", "clean")]["effects"] == {"e1": 1, "e2": 1, "e_handler": 1}
    assert obs[("handler", "clean")]["handed"] == ["StepFailed"]
    assert all(labels[("handler:clean", prop)] == "✓" for prop in ("EO", "CO", "LV"))
    # killed in the handler: the recovery resumes into the handler (the failed node is not run again: e2
    # once, CO ✓), the handler node from its top (killed after its effect: e_handler twice, D by LG-4) --
    # but the recovered handler is handed the exception's repr, a str (the checkpoint serializer writes an
    # exception as its repr), so its result differs from the run's own: LV ✗ by LG-24
    for at in ("h.begin", "h.effect"):
        path = f"handler:kill@{at}/none-input"
        assert obs[("handler", at)]["handed"] == ["StepFailed", "str"]
        assert obs[("handler", at)]["effects"]["e2"] == 1 and labels[(path, "CO")] == "✓"
        assert (labels[(path, "LV")], cited[(path, "LV")]) == ("✗", "LG-24")
    assert obs[("handler", "h.begin")]["effects"]["e_handler"] == 1
    assert labels[("handler:kill@h.begin/none-input", "EO")] == "✓"
    assert obs[("handler", "h.effect")]["effects"]["e_handler"] == 2
    assert (labels[("handler:kill@h.effect/none-input", "EO")], cited[("handler:kill@h.effect/none-input", "EO")]) \
        == ("D", "LG-4")
    # the code before interrupt() runs again on resume (LG-12): e_cb twice for one approval, with no fault and
    # after a kill at the pause; a kill just after it adds the restarted node's run (three times)
    fired = {at: obs[("callback", at)]["effects"]["e_cb"] for at in CALLBACK_CELLS}
    assert fired == {"clean": 2, "park-kill": 2, "cb.effect": 3}
    for path in ("callback:clean", "callback:park-kill", "callback:kill@cb.effect/none-input"):
        assert (labels[(path, "EO")], cited[(path, "EO")]) == ("D", "LG-12")
        assert labels[(path, "CO")] == "✓" and labels[(path, "LV")] == "✓"


def test_dbos_try_except_around_a_step_resumes_into_the_handler(tmp_path: Path) -> None:
    """DBOS 2.27.0: a try/except in the workflow around the failing step, the handler a step of its own."""
    require("dbos")
    run = _run("dbos_handler", "probes.frameworks.dbos.adapter:DBOSAdapter", tmp_path)
    labels, cited = _labels(run), _cited(run)
    obs = {r.args["at"]: r.observations["handler"] for r in run.receipts if r.args["protocol"] == "handler"}
    # the failed step's recorded error is raised again on replay (the step is not run again: e2 once), and
    # the workflow's except runs the handler step: once with no fault or a kill before its effect, twice
    # after a kill past it (a step that did not complete runs again: D by DB-5, at-least-once steps)
    assert {at: seen["effects"] for at, seen in obs.items()} == {
        "clean": {"e1": 1, "e2": 1, "e_handler": 1}, "h.begin": {"e1": 1, "e2": 1, "e_handler": 1},
        "h.effect": {"e1": 1, "e2": 1, "e_handler": 2}}
    # replayed from the record, the step's error is DBOS's portable error, not the application's exception
    # (the adapter records outputs with DBOSPortableJSONSerializer); the handler serves the recv'd answer
    assert obs["h.effect"]["handed"] == ["StepFailed", "PortableWorkflowError"]
    assert (labels[("handler:kill@h.effect/launch", "EO")], cited[("handler:kill@h.effect/launch", "EO")]) \
        == ("D", "DB-5")
    assert all(label == "✓" for (path, prop), label in labels.items()
               if path.startswith("handler:") and (path, prop) != ("handler:kill@h.effect/launch", "EO"))
    # no approval callback in DBOS: n/a with the reason
    assert {label for (path, _), label in labels.items() if path.startswith("callback:")} == {"n/a"}


def test_temporal_try_except_around_an_activity_resumes_into_the_handler_activity(tmp_path: Path) -> None:
    """Temporal 1.35.0 (the campaign's dev server and side environment): the failing activity's application
    error is declared non-retryable, and the workflow's try/except runs the handler activity."""
    from probes import campaigns

    campaign = campaigns.get("temporal")
    run = run_campaign(campaign, campaign.resolve({"protocols": ["handler", "callback"], **ALL_CELLS}, quick=True),
                       tmp_path)
    assert run.harness_errors == []
    labels, cited = _labels(run), _cited(run)
    obs = {r.args["at"]: r.observations["handler"] for r in run.receipts if r.args["protocol"] == "handler"}
    # the failed activity is in the workflow's history: replay hands the except the same ActivityError and never
    # runs s2 again (e2 once); the handler activity of a killed worker is attempted again after its
    # start-to-close timeout -- once more in all, its effect twice after a kill past it (D: Temporal retries)
    assert {at: seen["effects"] for at, seen in obs.items()} == {
        "clean": {"e1": 1, "e2": 1, "e_handler": 1}, "h.begin": {"e1": 1, "e2": 1, "e_handler": 1},
        "h.effect": {"e1": 1, "e2": 1, "e_handler": 2}}
    assert set(obs["h.effect"]["handed"]) == {"ActivityError(ApplicationError StepFailed)"}
    path = "handler:kill@h.effect/worker"
    assert (labels[(path, "EO")], cited[(path, "EO")]) == ("D", "temporalio.workflow:start_activity")
    assert all(label == "✓" for (p, prop), label in labels.items()
               if p.startswith("handler:") and (p, prop) != (path, "EO"))
    assert {label for (p, _), label in labels.items() if p.startswith("callback:")} == {"n/a"}


def test_langgraph_functional_api_try_except_around_a_task_and_code_before_interrupt(tmp_path: Path) -> None:
    """LangGraph 1.2.9's functional API (the functional protocol's cells): a try/except in the entrypoint around
    the failing task, the handler a task of its own; the approval callback is the entrypoint's code before
    ``interrupt()``."""
    require("langgraph.checkpoint.sqlite")
    from probes import campaigns

    campaign = campaigns.get("langgraph_kit")
    run = run_campaign(campaign, campaign.resolve({"protocols": ["functional", "handler", "callback"], **ALL_CELLS},
                                                  quick=True), tmp_path)
    assert run.harness_errors == []
    labels, cited = _labels(run), _cited(run)
    functional = [r for r in run.receipts if r.args["protocol"] == "functional"]
    assert {r.args["of"] for r in functional} == {"handler", "callback"}
    obs = {(r.args["of"], r.args["at"]): r.observations[r.args["of"]] for r in functional}
    # unlike the graph API's error handler, the failure is recorded nowhere the recovery reads: the entrypoint
    # runs again from its top, the failed task runs again (e2 twice) and raises again into the except: D by LG-5
    assert obs[("handler", "clean")]["effects"] == {"e1": 1, "e2": 1, "e_handler": 1}
    assert obs[("handler", "h.begin")]["effects"] == {"e1": 1, "e2": 2, "e_handler": 1}
    assert obs[("handler", "h.effect")]["effects"] == {"e1": 1, "e2": 2, "e_handler": 2}
    for at in ("h.begin", "h.effect"):
        for prop in ("EO", "CO"):
            key = (f"functional:handler:kill@{at}/none-input", prop)
            assert (labels[key], cited[key]) == ("D", "LG-5")
        assert labels[(f"functional:handler:kill@{at}/none-input", "LV")] == "✓"
    # the entrypoint's code before interrupt() runs again on resume, as the graph API's node does (LG-12)
    assert {at: obs[("callback", at)]["effects"]["e_cb"] for at in CALLBACK_CELLS} == \
        {"clean": 2, "park-kill": 2, "cb.effect": 3}
    for path in ("functional:callback:clean", "functional:callback:park-kill",
                 "functional:callback:kill@cb.effect/none-input"):
        assert (labels[(path, "EO")], cited[(path, "EO")]) == ("D", "LG-12")


def test_a_cell_needs_recovery_only_where_it_crashes_the_run() -> None:
    """park-kill answers the durable pause from a fresh process (as the parkkill protocol): no RECOVER needed."""
    from probes.kit.adapter import Adapter, Capability
    from probes.kit.protocols import _shaped

    class PausesOnly(Adapter):
        capabilities = frozenset({Capability.PAUSE, Capability.CALLBACK, Capability.HANDLER})

    p = SimpleNamespace(target=SimpleNamespace(cls=PausesOnly))
    assert _shaped(p, "callback", "park-kill", "m", (Capability.CALLBACK,)) == ("callback:park-kill", None)
    assert _shaped(p, "callback", "clean", "m", (Capability.CALLBACK,)) == ("callback:clean", None)
    path, why = _shaped(p, "handler", "h.effect", "m", (Capability.HANDLER,))
    assert path == "handler:kill@h.effect/m" and why == "the adapter does not declare recover"
