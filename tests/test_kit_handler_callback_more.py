"""The handler and callback protocols (``probes.kit.protocols.handler`` / ``callback``) on two more adapters:
Microsoft Agent Framework, whose handler workflow is built (a try/except around a ``@step`` of a functional
workflow), and pydantic-graph, which has neither construct (every cell n/a, with the reason the adapter states
from its installed source). Quick profile, every cell of the protocol, as in test_kit_handler_frameworks.py and
test_kit_callback_frameworks.py.

The n/a reasons are statements of fact about a release, so the facts they name are checked here against the
installed package too: a release that adds an error handler or a callback makes these tests fail, and the
reason is then to be measured instead.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.kit.protocols import CALLBACK_CELLS, HANDLER_CELLS
from tests.kit_checks import cited_labels


def _run(name: str, protocol: str, tmp_path: Any) -> Any:
    """The campaign ``name`` restricted to ``protocol``, every cell; no harness error."""
    cells = {"handler": {"handler_cells": list(HANDLER_CELLS)}, "callback": {"callback_cells": list(CALLBACK_CELLS)}}
    campaign = campaigns.get(name)
    run = run_campaign(campaign, campaign.resolve({"protocols": [protocol], **cells[protocol]}, quick=True), tmp_path)
    assert run.harness_errors == []
    return run


# --- Microsoft Agent Framework: the handler workflow, a functional workflow's try/except around a @step ------

def test_maf_functional_workflow_handler_and_the_failed_step_again(tmp_path: Any) -> None:
    """agent-framework-core 1.23.0: the answered ``@step`` fires e2 and raises; the workflow function's try/except
    hands the exception (StepFailed) to the handler ``@step``. A failed step's result is not cached and no
    checkpoint is saved for it, so after a kill inside the handler the newest checkpoint is the pause's: the
    recovery pauses again, the answer runs the failed step again (e2 twice) and the handler once more. No
    docstring of the package speaks to a failed step on restore: EO and CO are U; LV holds ("LV *")."""
    run = _run("maf", "handler", tmp_path)
    fired = {r.args["at"]: r.observations["handler"]["effects"] for r in run.receipts}
    assert fired == {"clean": {"e1": 1, "e2": 1, "e_handler": 1}, "h.begin": {"e1": 1, "e2": 2, "e_handler": 1},
                     "h.effect": {"e1": 1, "e2": 2, "e_handler": 2}}
    handed = {r.args["at"]: r.observations["handler"]["handed"] for r in run.receipts}
    assert handed == {"clean": ["StepFailed"], "h.begin": ["StepFailed"] * 2, "h.effect": ["StepFailed"] * 2}
    labels = cited_labels(run)
    assert all(labels[("handler:clean", prop)] == ("✓", "") for prop in ("EO", "CO", "LV"))
    for at in ("h.begin", "h.effect"):
        path = f"handler:kill@{at}/latest-checkpoint"
        assert labels[(path, "EO")] == ("U", "") and labels[(path, "CO")] == ("U", "")
        assert labels[(path, "LV")][0] == "✓"
    assert all(label == "✓" for (_, prop), (label, _) in labels.items() if prop == "LV")


def test_maf_builds_the_handler_workflow_with_the_functional_api(monkeypatch: Any) -> None:
    """The handler workflow is a FunctionalWorkflow named like the graph workflow (the adapter's checkpoint
    lookups go by that name); every other workflow stays the graph API's."""
    from agent_framework import FunctionalWorkflow, Workflow

    from probes.kit.runtime import CODE_ENV
    from probes.frameworks.maf.adapter import NAME, _workflow

    monkeypatch.setenv(CODE_ENV, "handler")
    handler = _workflow(None)
    assert isinstance(handler, FunctionalWorkflow) and handler.name == NAME
    monkeypatch.setenv(CODE_ENV, "callback")
    assert isinstance(_workflow(None), Workflow)


# --- pydantic-graph: neither construct ------------------------------------------------------------------

def test_pydantic_graph_handler_and_callback_cells_are_not_applicable(tmp_path: Any) -> None:
    """Every handler and callback cell of pydantic-graph is n/a, with the adapter's reason naming the release
    and what it lacks (not "not built by this adapter")."""
    for protocol, why in (("handler", "pydantic-graph 1.107.1 has no error handler for a run that pauses"),
                          ("callback", "pydantic-graph 1.107.1 has no approval callback or hook")):
        run = _run("pydantic_graph_kit", protocol, tmp_path / protocol)
        cells = HANDLER_CELLS if protocol == "handler" else CALLBACK_CELLS
        assert sorted(r.args["at"] for r in run.receipts) == sorted(cells)
        verdicts = [v for r in run.receipts for v in r.verdicts]
        assert {v.label.value for v in verdicts} == {"n/a"} and len(verdicts) == 3 * len(cells)
        assert all(why in v.evidence["why"] and "not built" not in v.evidence["why"] for v in verdicts)


def _source(module: Any) -> str:
    return Path(inspect.getfile(module)).read_text()


def test_pydantic_graph_reasons_hold_for_the_installed_release() -> None:
    """What the two reasons state, read from the installed package: the release; the entry points' parameters;
    no callable taken in graph.py, basenode.py or persistence/; record_run marks a failed node 'error' and
    re-raises; the builder API recovers from a node's error (ErrorMarker, override_next) and has no persistence."""
    from importlib.metadata import version

    import pydantic_graph.basenode as basenode
    import pydantic_graph.graph as graph
    import pydantic_graph.graph_builder as builder
    import pydantic_graph.persistence as persistence
    import pydantic_graph.persistence.file as file

    from probes.kit.adapter import Capability
    from probes.frameworks.pydantic_graph.adapter import PydanticGraphAdapter

    assert version("pydantic-graph") == "1.107.1"
    assert not PydanticGraphAdapter.declares(Capability.HANDLER)
    assert not PydanticGraphAdapter.declares(Capability.CALLBACK)
    params = {name: [p for p in inspect.signature(fn).parameters if p != "self"]
              for name, fn in (("init", graph.Graph.__init__), ("iter", graph.Graph.iter),
                               ("from", graph.Graph.iter_from_persistence))}
    assert params == {"init": ["nodes", "name", "state_type", "run_end_type", "auto_instrument"],
                      "iter": ["start_node", "state", "deps", "persistence", "span", "infer_name"],
                      "from": ["persistence", "deps", "span", "infer_name"]}
    persisted = [Path(inspect.getfile(persistence)).parent.glob("*.py")]
    for text in [_source(graph), _source(basenode), *(p.read_text() for paths in persisted for p in paths)]:
        assert "Callable" not in text and "callback" not in text.lower() and "hook" not in text.lower()
    record_run = inspect.getsource(file.FileStatePersistence.record_run)
    assert "'error'" in record_run and "raise" in record_run
    built = _source(builder)
    assert "class ErrorMarker" in built and "def override_next" in built and "persist" not in built
