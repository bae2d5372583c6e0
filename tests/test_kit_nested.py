"""The nested protocol (``probes.kit.protocols.nested``): the kit's cells on a workflow whose pausing
step runs inside a nested workflow of the framework's own.

The cells and checkers are the two-step workflow's; only where the framework keeps the nested run's
state changes. On LangGraph the pausing node is a subgraph's; an adapter that builds no nested
workflow gets n/a with its reason.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from probes.core.campaign import run_campaign
from probes.core.history import History, Kind
from probes.kit import chapter
from probes.kit.protocols import NESTED_RUNS
from probes.kit.suite import kit_campaign
from tests.installed import require


def _nested(name: str, adapter: str, out: Path, **params: Any) -> Any:
    campaign = kit_campaign(name, name, adapter)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["nested"], **params}, quick=True), out)
    assert run.harness_errors == []
    return run


def _labels(run: Any) -> dict[tuple[str, str], str]:
    return {(v.path, v.property.value): v.label.value for r in run.receipts for v in r.verdicts}


def test_an_adapter_without_a_nested_workflow_is_not_applicable_with_its_reason(tmp_path: Path) -> None:
    run = _nested("plain_nested", "tests.fixtures.plain_adapter:PlainAdapter", tmp_path)
    labels = _labels(run)
    assert set(labels.values()) == {"n/a"}
    assert {path for path, _ in labels} == {f"nested:{of}" for of in NESTED_RUNS}
    assert all("nested" in v.evidence["why"] for r in run.receipts for v in r.verdicts)
    rows = chapter.nested_rows(SimpleNamespace(receipts=run.receipts))
    assert {row["path"] for row in rows} == {f"nested:{of}" for of in NESTED_RUNS}


def test_langgraph_pauses_inside_a_subgraph_and_the_cells_are_judged_on_that_workflow(tmp_path: Path) -> None:
    require("langgraph.checkpoint.sqlite")
    run = _nested("lg_nested", "probes.frameworks.langgraph.adapter:StockSaverAdapter", tmp_path,
                  crash_points=["s2.effect"], crash_hows=["kill"])
    labels = _labels(run)
    assert all(path.startswith("nested:") for path, _ in labels)
    assert labels[("nested:baseline:yes", "EO")] == "✓" and labels[("nested:baseline:yes", "LV")] == "✓"
    # every process of the probe built the nested workflow, and the history says so
    for receipt in run.receipts:
        assert receipt.observations["workflow_shape"] == "nested"
        history = History.from_json(receipt.observations["history"]) if "history" in receipt.observations else None
        if history is not None:
            assert {e.detail.get("workflow") for e in history.of(Kind.ANSWER)} == {"nested"}
    crash = next(r for r in run.receipts if r.args["protocol"] == "nested" and r.args["of"] == "crash")
    fired = History.from_json(crash.observations["history"]).effect_counts()
    # a kill after e2 inside the subgraph's node: invoke(None) restarts that node (LG-4), e2 fires again
    assert fired == {"e1": 1, "e2": 2}
    assert labels[("nested:crash:kill@s2.effect/none-input", "EO")] == "D"
    # a second answer at the answered pause (LG-16 says the node re-executes and asks anew): inside the
    # subgraph the new answer is ignored and the first outcome stands, where the flat graph fires e2 again
    # on the first answer (the kit's fork cell, "neither"): a violation either way, of another kind
    fork = next(v for r in run.receipts for v in r.verdicts if v.path == "nested:fork:same-pause" and
                v.property.value == "FD")
    assert (fork.label.value, fork.doc.source) == ("✗", "LG-16") and "retry: ignored" in fork.summary


def test_a_nested_pause_is_one_pause_to_the_model_and_trace_validation_takes_it() -> None:
    """The model has one pause per task; a pause inside a nested workflow is one (the pause-twice
    workflow is what it has no step for)."""
    from probes.core.history import Event
    from probes.tla.trace import Recorded

    def answered(workflow: str) -> History:
        return History.of_events([Event(Kind.START, "harness"), Event(Kind.PAUSE, "run/start", "s2"),
                                  Event(Kind.ANSWER, "harness", value="yes", detail={"workflow": workflow})])

    assert Recorded("x", "c", "f", "nested", answered("nested")).outside_model is None
    assert "pauses more than once" in Recorded("x", "c", "f", "pause_twice", answered("pause-twice")).outside_model
