"""pydantic-ai 2.68.0 (DBOSDurability, dbos 3.4.0) under the kit's nested protocol (quick profile, its side
environment).

The approval-gated tool ``s2`` belongs to a delegate agent, which the outer agent's tool ``s2`` runs after
``s1`` (pydantic-ai's agent delegation, ``probes.frameworks.pydantic_ai.workflow``): the delegate's run ends with
``DeferredToolRequests``, the delegating tool asks (step ``ask``), parks in the workflow's ``DBOS.recv_async``
and runs the delegate again with the approval. Every model request of both agents and both tools are
steps of the one DBOS workflow. Asserts what the kit measured on this release, each label with the effect
counts of its history: the nested labels equal the flat workflow's (DBOS's terminal-error and fork
sentences keyed for nested paths as for flat ones).
"""

from __future__ import annotations

from typing import Any

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.kit.protocols import NESTED_RUNS

POINTS = ("s2.begin", "s2.consumed", "s2.effect")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = campaigns.get("pydantic_ai")
    params = campaign.resolve({"protocols": ["nested"], "crash_points": list(POINTS),
                               "crash_hows": ["kill", "raise"]}, quick=True)
    made = run_campaign(campaign, params, tmp_path_factory.mktemp("pydantic_ai_nested"))
    assert made.harness_errors == []
    return made


def _verdicts(run: Any) -> dict[tuple[str, str], Any]:
    return {(v.path, v.property.value): v for r in run.receipts for v in r.verdicts}


def _labels(run: Any) -> dict[tuple[str, str], str]:
    return {key: v.label.value for key, v in _verdicts(run).items()}


def _fired(run: Any, path: str) -> dict[str, int]:
    """The effects the history ``path``'s verdicts were decided on records, by effect."""
    counts = [v.history.effect_counts() for (p, _), v in _verdicts(run).items() if p == path and v.history]
    assert counts and all(c == counts[0] for c in counts)
    return {effect: n for effect, n in counts[0].items() if n}


def test_every_cell_ran_on_the_nested_workflow(run: Any) -> None:
    labels = _labels(run)
    assert all(path.startswith("nested:") for path, _ in labels)
    assert "n/a" not in labels.values()  # the adapter declares Capability.NESTED: every cell decided
    assert {r.args["of"] for r in run.receipts} == set(NESTED_RUNS)
    for receipt in run.receipts:
        assert receipt.observations["workflow_shape"] == "nested"


def test_the_approval_reaches_the_delegates_tool(run: Any) -> None:
    labels = _labels(run)
    for answer in ("yes", "no"):
        assert _fired(run, f"nested:baseline:{answer}") == {"e1": 1, "e2": 1}
        assert {labels[(f"nested:baseline:{answer}", p)] for p in ("EO", "LV")} == {"✓"}
    # killed while parked in the delegating tool's recv: the launch replays the recorded steps (s1, both
    # agents' model requests, ask) and waits in the same recv again; the answer then runs the delegate's s2
    assert _fired(run, "nested:park-kill") == {"e1": 1, "e2": 1}
    assert {labels[("nested:park-kill", prop)] for prop in ("EO", "PC", "LV")} == {"✓"}
    assert _fired(run, "nested:stray-after-completion") == {"e1": 1, "e2": 1}
    assert labels[("nested:stray-after-completion", "CO")] == "✓"


def test_a_kill_replays_the_recorded_steps(run: Any) -> None:
    labels = _labels(run)
    # before e2: the replay finds s1 and ask recorded, consumes the answer again from the recv's record and
    # runs the delegate's s2 (a step not yet recorded) once
    for point in ("s2.begin", "s2.consumed"):
        path = f"nested:crash:kill@{point}/launch"
        assert _fired(run, path) == {"e1": 1, "e2": 1}
        assert {labels[(path, p)] for p in ("EO", "PC", "LV")} == {"✓"}
    # after e2, inside the step s2 before its output was recorded: the replay runs the step again, e2
    # twice; no sentence says a step's body runs at most once: EO U, as on the flat workflow
    path = "nested:crash:kill@s2.effect/launch"
    assert _fired(run, path) == {"e1": 1, "e2": 2}
    assert labels[(path, "EO")] == "U" and labels[(path, "LV")] == "✓"


def test_a_raise_ends_the_workflow_in_error(run: Any) -> None:
    verdicts = _verdicts(run)
    # the exception leaves the delegate's tool, the delegate's run, the delegating tool and the outer run:
    # the DBOS workflow raised, which is terminal (ERROR, not recovered). e2 never fired before s2.effect,
    # once at it; LV D by the DBOS sentence the flat raise paths cite, keyed for nested paths too
    for point, fired in (("s2.begin", {"e1": 1}), ("s2.consumed", {"e1": 1}), ("s2.effect", {"e1": 1, "e2": 1})):
        path = f"nested:crash:raise@{point}/launch"
        assert _fired(run, path) == fired
        assert verdicts[(path, "EO")].label.value == "✓"
        assert verdicts[(path, "LV")].label.value == "D"
        assert verdicts[(path, "LV")].doc.source == "dbos._core:_serialize_exception_for_persistence"


def test_a_second_answer_is_ignored(run: Any) -> None:
    # a second message to the completed workflow: nobody receives it, the first outcome stands (retry side);
    # FD D by the fork sentence of the flat path (a fork is a new workflow ID)
    fork = _verdicts(run)[("nested:fork:same-pause", "FD")]
    assert fork.label.value == "D" and "first outcome stands" in fork.summary
    assert _fired(run, "nested:fork:same-pause") == {"e1": 1, "e2": 1}
