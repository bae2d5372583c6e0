"""DBOS under the kit's nested protocol (``probes.kit.protocols.nested``): the pausing step (``ask``,
``DBOS.recv``, ``s2``) runs in a DBOS child workflow, ``kit-run-s2``, which the parent ``kit-run``
calls after ``s1`` and whose result it returns (``probes.frameworks.dbos.adapter``).

Asserts what the kit measured on DBOS 2.27.0 (quick profile, SQLite system database): the nested
workflow behaves as the flat one does, each child and parent recovered at the next launch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.installed import require

require("dbos")

from probes.core.campaign import run_campaign  # noqa: E402
from probes.core.history import Kind  # noqa: E402
from probes.frameworks.dbos.campaign import ADAPTER  # noqa: E402
from probes.kit.suite import kit_campaign  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = kit_campaign("dbos_nested", "dbos_nested", ADAPTER)
    params = campaign.resolve({"protocols": ["nested"], "crash_points": ["s2.effect"],
                               "crash_hows": ["kill", "raise"]}, quick=True)
    made = run_campaign(campaign, params, tmp_path_factory.mktemp("dbos_nested"))
    assert made.harness_errors == []
    return made


def _verdicts(run: Any) -> dict[tuple[str, str], Any]:
    return {(v.path, v.property.value): v for r in run.receipts for v in r.verdicts}


def _labels(run: Any) -> dict[tuple[str, str], str]:
    return {key: v.label.value for key, v in _verdicts(run).items()}


def _receipt(run: Any, of: str, **args: Any) -> Any:
    return next(r for r in run.receipts if r.args["of"] == of and all(r.args[k] == v for k, v in args.items()))


def _fired(run: Any, path: str) -> dict[str, int]:
    """The effects the history ``path``'s verdicts were decided on records, by effect."""
    counts = [v.history.effect_counts() for (p, _), v in _verdicts(run).items() if p == path and v.history]
    assert counts and all(c == counts[0] for c in counts)
    return counts[0]


def test_the_pause_is_the_child_workflows_recv_and_the_baseline_holds(run: Any) -> None:
    labels = _labels(run)
    assert all(path.startswith("nested:") for path, _ in labels)
    assert labels[("nested:baseline:yes", "EO")] == "✓" and labels[("nested:baseline:yes", "LV")] == "✓"
    for receipt in run.receipts:
        assert receipt.observations["workflow_shape"] == "nested"
    # every answer the harness gave named the nested workflow
    for verdict in (v for v in _verdicts(run).values() if v.history):
        assert {e.detail.get("workflow") for e in verdict.history.of(Kind.ANSWER)} == {"nested"}
    # the start paused in the child: its handle is the child's id (the parent's, "-", the step's name)
    baseline = _receipt(run, "baseline")
    assert baseline.observations["children"]["run/start"]["result"] == {"status": "paused",
                                                                      "handle": ["kit-run-s2", "answer"]}
    assert _fired(run, "nested:baseline:yes") == {"e1": 1, "e2": 1}


def test_a_worker_killed_in_the_childs_recv_is_recovered_at_the_next_launch(run: Any) -> None:
    labels = _labels(run)
    # parent and child both pending at the kill; the next launch recovers both, the parent replays s1
    # from its record and awaits the recorded child, the child's recv takes the answer: e1 and e2 once
    assert all(labels[("nested:park-kill", p)] == "✓" for p in ("EO", "PC", "LV"))
    assert _fired(run, "nested:park-kill") == {"e1": 1, "e2": 1}


def test_a_kill_after_e2_inside_the_child_runs_its_step_again(run: Any) -> None:
    verdicts = _verdicts(run)
    path = "nested:crash:kill@s2.effect/launch"
    # the kill came after e2 fired but before the child's s2 step recorded its output: the recovered child
    # replays ask and recv from its record and runs s2 again (at-least-once steps, DB-5), e2 fires twice;
    # s1 is served from the parent's record (PC ✓) and the run completes (LV ✓)
    assert _fired(run, path) == {"e1": 1, "e2": 2}
    assert (verdicts[(path, "EO")].label.value, verdicts[(path, "EO")].doc.source) == ("D", "DB-5")
    assert verdicts[(path, "PC")].label.value == "✓" and verdicts[(path, "LV")].label.value == "✓"


def test_a_raise_inside_the_child_ends_child_and_parent_in_error(run: Any) -> None:
    verdicts = _verdicts(run)
    path = "nested:crash:raise@s2.effect/launch"
    receipt = _receipt(run, "crash", how="raise", point="s2.effect")
    # the raise after e2 ends the child ERROR, and the parent with it (its recorded getResult of the child
    # is the error); a launch recovers neither (DB-3) and reports the error: e2 fired once, never completed
    assert _fired(run, path) == {"e1": 1, "e2": 1}
    assert receipt.observations["children"]["run/recover"]["result"]["status"] == "raised"
    assert not verdicts[(path, "LV")].history.of(Kind.COMPLETE)
    assert (verdicts[(path, "LV")].label.value, verdicts[(path, "LV")].doc.source) == ("D", "DB-3")
    assert verdicts[(path, "EO")].label.value == "✓" and verdicts[(path, "PC")].label.value == "✓"


def test_a_stray_answer_to_the_completed_child_is_inert(run: Any) -> None:
    labels = _labels(run)
    # the stray goes to the completed child's topic: no recv takes it, nothing runs again
    assert labels[("nested:stray-after-completion", "CO")] == "✓"
    assert labels[("nested:stray-after-completion", "EO")] == "✓"
    assert _fired(run, "nested:stray-after-completion") == {"e1": 1, "e2": 1}


def test_a_second_answer_to_the_answered_child_is_ignored_not_forked(run: Any) -> None:
    fork = _verdicts(run)[("nested:fork:same-pause", "FD")]
    receipt = _receipt(run, "fork")
    # the second answer is a message to the completed child's id: the first outcome stands, e2 fired once
    # (another answer needs DBOS.fork_workflow, a new id: DB-10), as on the flat workflow
    assert receipt.observations["children"]["run/fork"]["result"] == {"status": "completed",
                                                                     "outcome": "s2 served 'yes'"}
    assert _fired(run, "nested:fork:same-pause") == {"e1": 1, "e2": 1}
    assert (fork.label.value, fork.doc.source) == ("D", "DB-10") and "retry: ignored" in fork.summary
