"""Strands Agents 1.62.0 under the kit's nested protocol (quick profile, its side environment).

The interrupting tool ``s2`` belongs to an agent of its own, which the outer agent calls as its tool ``s2``
after ``s1`` (``Agent.as_tool``, ``probes.frameworks.strands.adapter``). The sub-agent's interrupt is raised again by
the outer agent under a prefixed id, and the outer agent keeps the sub-agent's interrupted turn in its own
interrupt state (``agent.json`` of the file session); answering the outer interrupt restores the sub-agent
and resumes its tool. Asserts what the kit measured on this release, each label with the effect counts of
its history: the nested labels equal the flat workflow's (the interrupt module's account of a resume keyed
for nested kill paths as for flat ones).
"""

from __future__ import annotations

from typing import Any

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.core.history import Kind
from probes.kit.protocols import NESTED_RUNS

POINTS = ("s2.begin", "s2.consumed", "s2.effect")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = campaigns.get("strands")
    params = campaign.resolve({"protocols": ["nested"], "crash_points": list(POINTS),
                               "crash_hows": ["kill", "raise"]}, quick=True)
    made = run_campaign(campaign, params, tmp_path_factory.mktemp("strands_nested"))
    assert made.harness_errors == []
    return made


def _verdicts(run: Any) -> dict[tuple[str, str], Any]:
    return {(v.path, v.property.value): v for r in run.receipts for v in r.verdicts}


def _labels(run: Any) -> dict[tuple[str, str], str]:
    return {key: v.label.value for key, v in _verdicts(run).items()}


def _history(run: Any, path: str) -> Any:
    return next(v.history for (p, _), v in _verdicts(run).items() if p == path and v.history)


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


def test_the_answer_reaches_the_tool_inside_the_agent_tool(run: Any) -> None:
    labels = _labels(run)
    # both answers reach the sub-agent's interrupted tool through the outer interrupt: e2 once
    for answer in ("yes", "no"):
        assert _fired(run, f"nested:baseline:{answer}") == {"e1": 1, "e2": 1}
        assert {labels[(f"nested:baseline:{answer}", p)] for p in ("EO", "LV")} == {"✓"}
    # killed while parked at the nested interrupt, answered in a new process: the sub-agent's turn came back
    # from the outer agent's stored interrupt state, s1 did not run again
    assert _fired(run, "nested:park-kill") == {"e1": 1, "e2": 1}
    assert {labels[("nested:park-kill", prop)] for prop in ("EO", "PC", "LV")} == {"✓"}
    assert _fired(run, "nested:stray-after-completion") == {"e1": 1, "e2": 1}
    assert labels[("nested:stray-after-completion", "CO")] == "✓"


def test_crashes_before_e2_run_the_nested_tool_once(run: Any) -> None:
    labels = _labels(run)
    for how in ("kill", "raise"):
        for point in ("s2.begin", "s2.consumed"):
            # a kill: the stored outer agent is still in its interrupt state, the recovery answers it again and
            # the sub-agent's tool runs from its top once. A raise: the tool's exception is an error result for
            # the sub-agent, whose model calls s2 again, which interrupts (at s2.begin, before the first
            # interrupt: the only pause; at s2.consumed, after the answer: a second pause, answered by the
            # recovery)
            path = f"nested:crash:{how}@{point}/session"
            assert _fired(run, path) == {"e1": 1, "e2": 1}
            assert {labels[(path, p)] for p in ("EO", "PC", "LV")} == {"✓"}
    assert len(_history(run, "nested:crash:raise@s2.begin/session").of(Kind.PAUSE)) == 1
    assert len(_history(run, "nested:crash:raise@s2.consumed/session").of(Kind.PAUSE)) == 2


def test_a_crash_after_e2_runs_the_nested_tool_again(run: Any) -> None:
    verdicts = _verdicts(run)
    # e2 twice either way, s1 not re-entered, the run completes. Killed: the resumed sub-agent's tool runs
    # again from its top, as the interrupt module says a resume does (D, the flat kill's sentence). Raised:
    # the sub-agent's model calling the failed tool again is the script's choice, no Strands sentence: U
    for how, label in (("kill", "D"), ("raise", "U")):
        path = f"nested:crash:{how}@s2.effect/session"
        assert _fired(run, path) == {"e1": 1, "e2": 2}
        assert verdicts[(path, "EO")].label.value == label
        assert verdicts[(path, "PC")].label.value == "✓" and verdicts[(path, "LV")].label.value == "✓"
    assert verdicts[("nested:crash:kill@s2.effect/session", "EO")].doc.source == "strands.types:interrupt"


def test_an_answered_interrupt_refuses_another_answer(run: Any) -> None:
    # the interrupt already answered: the second answer raises ValueError (code, not documentation: U, as on
    # the flat workflow), e2 fired once
    fork = _verdicts(run)[("nested:fork:same-pause", "FD")]
    receipt = next(r for r in run.receipts if r.args["of"] == "fork")
    assert receipt.observations["fork"]["second"] == "raised"
    assert receipt.observations["fork"]["second_error"] == "ValueError"
    assert fork.label.value == "U"
    assert _fired(run, "nested:fork:same-pause") == {"e1": 1, "e2": 1}
