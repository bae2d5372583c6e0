"""OpenAI Agents SDK 0.24.0 under the kit's nested protocol (quick profile, its side environment).

The approval-gated tool ``s2`` belongs to an agent of its own, which the outer agent calls as its tool
``s2`` after ``s1`` (``Agent.as_tool``, ``probes.frameworks.openai_agents.adapter``). The nested run's approval
interruption surfaces in the outer result's ``interruptions``, and ``result.to_state()`` keeps the nested
agent's RunState inside the outer one (the function call's ``agent_run_state``); approving it on the
restored outer state resumes the nested run. Asserts what the kit measured on this release, each label with
the effect counts of its history: the nested labels equal the flat workflow's.
"""

from __future__ import annotations

from typing import Any

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.kit.protocols import NESTED_RUNS


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = campaigns.get("openai_agents")
    params = campaign.resolve({"protocols": ["nested"], "crash_points": ["s2.effect"],
                               "crash_hows": ["kill", "raise"]}, quick=True)
    made = run_campaign(campaign, params, tmp_path_factory.mktemp("openai_agents_nested"))
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
    return counts[0]


def test_every_cell_ran_on_the_nested_workflow(run: Any) -> None:
    labels = _labels(run)
    assert all(path.startswith("nested:") for path, _ in labels)
    assert "n/a" not in labels.values()  # the adapter declares Capability.NESTED: every cell decided
    assert {r.args["of"] for r in run.receipts} == set(NESTED_RUNS)
    for receipt in run.receipts:
        assert receipt.observations["workflow_shape"] == "nested"


def test_the_approval_reaches_the_tool_call_inside_the_agent_tool(run: Any) -> None:
    labels = _labels(run)
    # approved on the restored outer state: the nested agent's s2 ran once, e2 once; rejected: the nested
    # tool never ran, e2 did not fire, and the run still completed
    assert _fired(run, "nested:baseline:approve") == {"e1": 1, "e2": 1}
    assert _fired(run, "nested:baseline:reject") == {"e1": 1}
    assert {labels[("nested:baseline:approve", p)] for p in ("EO", "LV")} == {"✓"}
    assert {labels[("nested:baseline:reject", p)] for p in ("EO", "LV")} == {"✓"}
    # killed while parked at the nested approval, approved in a new process from the stored outer state:
    # the nested run state it embeds came back, s1 did not run again
    assert _fired(run, "nested:park-kill") == {"e1": 1, "e2": 1}
    assert {labels[("nested:park-kill", prop)] for prop in ("EO", "PC", "LV")} == {"✓"}
    # a stray answer (no handle) after completion restores the latest stored state, the completed run's: it
    # has no interruption to answer, nothing fires again
    assert _fired(run, "nested:stray-after-completion") == {"e1": 1, "e2": 1}
    assert labels[("nested:stray-after-completion", "CO")] == "✓"
    assert labels[("nested:stray-after-completion", "EO")] == "✓"


def test_a_crash_after_e2_inside_the_agent_tool_runs_the_nested_tool_again(run: Any) -> None:
    verdicts = _verdicts(run)
    # killed after e2, before any state was stored: recovery restores the paused state, whose approval is
    # applied again, and the nested tool runs again. Raising after e2: the nested tool call fails, the
    # nested model calls it again (as the SDK's error output asks). Either way e2 fires twice; s1 is not
    # re-entered (PC ✓) and the run completes (LV ✓). No SDK sentence speaks to it: U, as on the flat workflow
    for how in ("kill", "raise"):
        path = f"nested:crash:{how}@s2.effect/run-state"
        assert _fired(run, path) == {"e1": 1, "e2": 2}
        assert verdicts[(path, "EO")].label.value == "U"
        assert verdicts[(path, "PC")].label.value == "✓" and verdicts[(path, "LV")].label.value == "✓"


def test_the_paused_state_answered_again_serves_the_new_answer(run: Any) -> None:
    # the paused outer state restored again and rejected: a fork, which served the rejection (the nested
    # tool did not run a second time, e2 once), FD ✓ as on the flat workflow
    fork = _verdicts(run)[("nested:fork:same-pause", "FD")]
    receipt = next(r for r in run.receipts if r.args["of"] == "fork")
    assert receipt.observations["fork"] == {"first": "completed", "second": "completed", "second_error": None}
    assert fork.label.value == "✓" and "fork: served the new answer" in fork.summary
    assert _fired(run, "nested:fork:same-pause") == {"e1": 1, "e2": 1}
