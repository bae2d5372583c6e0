"""AutoGen AgentChat 0.7.5 under the kit's nested protocol (quick profile, the main environment).

The asking agent and ``s2`` form a team of their own (a ``GraphFlow`` ``ask -> s2`` ending at the handoff
to the user), a participant of the outer ``SelectorGroupChat`` after ``s1`` (AgentChat's nested teams,
``probes.frameworks.autogen.adapter``). The inner team's handoff stops the outer run; the application saves the
outer team's ``save_state`` (the inner team's state inside its participant's entry) and answers by loading
it and running the outer team with the answer, which reaches the inner team. Asserts what the kit measured
on this release, each label with the effect counts of its history: the nested labels equal the flat
workflow's (no AgentChat sentence for a crash: U where an effect fired twice).
"""

from __future__ import annotations

from typing import Any

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.kit.protocols import NESTED_RUNS

POINTS = ("s2.begin", "s2.consumed", "s2.effect")
MODE = "latest-team-state"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = campaigns.get("autogen_kit")
    params = campaign.resolve({"protocols": ["nested"], "crash_points": list(POINTS),
                               "crash_hows": ["kill", "raise"]}, quick=True)
    made = run_campaign(campaign, params, tmp_path_factory.mktemp("autogen_nested"))
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
    assert {r.args["of"] for r in run.receipts} == set(NESTED_RUNS)
    for receipt in run.receipts:
        assert receipt.observations["workflow_shape"] == "nested"


def test_the_answer_reaches_the_inner_team(run: Any) -> None:
    labels = _labels(run)
    for answer in ("yes", "no"):
        assert _fired(run, f"nested:baseline:{answer}") == {"e1": 1, "e2": 1}
        assert {labels[(f"nested:baseline:{answer}", p)] for p in ("EO", "LV")} == {"✓"}
    # killed while parked at the saved pause, answered in a new process: the inner team's state came back
    # inside the outer one, the selector hands the answer to it, s1 does not run again
    assert _fired(run, "nested:park-kill") == {"e1": 1, "e2": 1}
    assert {labels[("nested:park-kill", prop)] for prop in ("EO", "PC", "LV")} == {"✓"}
    assert _fired(run, "nested:stray-after-completion") == {"e1": 1, "e2": 1}
    assert labels[("nested:stray-after-completion", "CO")] == "✓"


def test_a_crash_before_the_first_save_starts_over(run: Any) -> None:
    labels = _labels(run)
    # at s2.begin (the inner team's ask, in the first run) nothing is saved yet: AgentChat saves nothing
    # itself, the application saves after a run returns. The recovery starts over: s1 again, e1 twice
    # (PC n/a: nothing durable; EO U: no sentence), as on the flat workflow
    for how in ("kill", "raise"):
        path = f"nested:crash:{how}@s2.begin/{MODE}"
        assert _fired(run, path) == {"e1": 2, "e2": 1}
        assert labels[(path, "EO")] == "U" and labels[(path, "PC")] == "n/a" and labels[(path, "LV")] == "✓"


def test_a_crash_after_the_answer_loads_the_paused_state_again(run: Any) -> None:
    labels = _labels(run)
    # the newest saved state is the paused one (the answering run never saved): the recovery answers it
    # again and the inner team's s2 runs again. Before e2: e2 once, all ✓; after e2: twice, EO U
    for how in ("kill", "raise"):
        path = f"nested:crash:{how}@s2.consumed/{MODE}"
        assert _fired(run, path) == {"e1": 1, "e2": 1}
        assert {labels[(path, p)] for p in ("EO", "PC", "LV")} == {"✓"}
        path = f"nested:crash:{how}@s2.effect/{MODE}"
        assert _fired(run, path) == {"e1": 1, "e2": 2}
        assert labels[(path, "EO")] == "U" and labels[(path, "PC")] == "✓" and labels[(path, "LV")] == "✓"


def test_the_paused_state_answered_again_serves_the_new_answer(run: Any) -> None:
    # the saved pause is a file: loading it again and answering "no" runs the inner s2 again on the new
    # answer (e2 twice, one per answer): a fork, FD ✓ as on the flat workflow
    fork = _verdicts(run)[("nested:fork:same-pause", "FD")]
    assert fork.label.value == "✓" and "fork: served the new answer" in fork.summary
    assert _fired(run, "nested:fork:same-pause") == {"e1": 1, "e2": 2}
