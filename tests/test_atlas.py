"""The regression atlas: real LangGraph releases in their side environments, plus the pure parts.

The end-to-end test runs five cells on two releases (1.0.10 and the pinned 1.2.9) on
SQLite. Cold, each release's environment takes about 30-50 s to create with pip (once;
later runs reuse ~/.cache/resume-contract/envs/).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from probes import campaigns
from probes.studies.atlas import decide, table
from probes.studies.atlas.bugs import BUGS, by_ref
from probes.studies.atlas.envs import side_env
from probes.core.campaign import run_campaign
from probes.core.checker import Label
from probes.core.errors import UsageError
from probes.core.receipt import VIEW_NAME
from tests.conftest import ROOT, full_env

QUICK_BUGS = ["6663", "7361", "8443", "8836", "8039"]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory):
    campaign = campaigns.get("atlas")
    params = campaign.resolve({"bugs": QUICK_BUGS}, quick=True)
    root = tmp_path_factory.mktemp("atlas")
    return run_campaign(campaign, params, receipts_root=root, render_only=False), root


def test_quick_atlas_measures_every_planned_cell(quick_run) -> None:
    run, root = quick_run
    assert not run.harness_errors
    releases = campaigns.get("atlas").param("versions").quick
    assert sorted(r.probe for r in run.receipts) == sorted(
        f"b{ref}.sqlite.{v}" for ref in QUICK_BUGS for v in releases)
    for r in run.receipts:
        assert r.observations["versions"]["langgraph"] == r.observations["release"]  # the side env, not the lock
        assert len(r.verdicts) == 1 and r.observations["status"] == decide.status(r.verdicts[0])
    assert (root / "atlas" / VIEW_NAME).exists()


def test_delta_channels_are_not_applicable_before_they_exist(quick_run) -> None:
    run, _ = quick_run
    by = {r.probe: r for r in run.receipts}
    old, pinned = by["b8443.sqlite.1.0.10"], by["b8443.sqlite.1.2.9"]
    assert old.observations["status"] == decide.NA and old.verdicts[0].label is Label.NA
    assert pinned.observations["status"] in (decide.PRESENT, decide.ABSENT)  # 1.2.9 has DeltaChannel: measured


def test_cells_keep_their_history_and_effects_agree_with_it(quick_run) -> None:
    run, _ = quick_run
    r = next(r for r in run.receipts if r.probe == "b6663.sqlite.1.2.9")
    kinds = [e["kind"] for e in r.observations["history"]]
    assert "answer" in kinds and "fork" in kinds and "consume" in kinds
    effects = [e["effect"] for e in r.observations["history"] if e["kind"] == "effect"]
    assert {k: effects.count(k) for k in set(effects)} == r.observations["effects"]
    # the FD verdict is the checker's: the second resume's outcome against f(b)
    v = r.verdicts[0]
    assert v.evidence["check"] == "fork_outcome" and v.evidence["expected_f_v"] == "f(b)"
    assert (v.label is Label.PASS) == (r.observations["observations"]["second"] == "f(b)")


def test_kill_cell_recovers_after_a_real_sigkill(quick_run) -> None:
    run, _ = quick_run
    r = next(r for r in run.receipts if r.probe == "b8039.sqlite.1.2.9")
    for point in ("s2_put_writes", "step2_put"):
        seen = r.observations["observations"][point]
        assert seen["recovered_log"] == ["s1", "s2", "s3"]  # the victim died mid-run; recovery finished it
        assert r.verdicts[0].evidence["effect_counts"][f"s2@{point}"] == seen["effects"]["s2"]


def test_table_and_figure_from_receipts(quick_run) -> None:
    run, _ = quick_run
    rows = {r["ref"]: r for r in table.summary_rows(run.receipts)}
    assert set(rows) == {f"#{b}" for b in QUICK_BUGS}
    assert rows["#8443"]["1.0.10"].endswith(decide.NA)
    text = table.markdown(run.receipts)
    assert "receipts/atlas/b6663.sqlite.1.2.9.json" in text
    fig = table.figure(run.receipts)
    assert len(fig.axes[0].patches) == len(run.receipts)


@pytest.mark.parametrize("sequence, expected", [
    ([("1.0", "absent"), ("1.1", "present"), ("1.2", "absent")], ("1.2", "1.1")),
    ([("1.0", "present"), ("1.1", "absent"), ("1.2", "present")], (None, "1.2")),
    ([("1.0", "present"), ("1.1", "n/a"), ("1.2", "absent"), ("1.3", "absent")], ("1.2", "1.0")),
    ([("1.0", "absent"), ("1.1", "absent")], (None, None)),
])
def test_fixed_in_is_the_first_absent_after_the_last_present(sequence, expected) -> None:
    assert table.fixed_in(sequence) == expected


def test_decision_statuses_come_from_the_checker() -> None:
    bug = by_ref("8836")
    base = {"status": "observed", "behaviour": "b"}
    loud = decide.verdict(bug, "9.9.9", "sqlite", {**base, "check": {"refused_at_write": True, "became_durable": False,
                                                                   "error": "E"}})
    silent = decide.verdict(bug, "9.9.9", "sqlite", {**base, "check": {"refused_at_write": False,
                                                                     "became_durable": False, "error": None}})
    assert decide.status(loud) == decide.ABSENT and decide.status(silent) == decide.PRESENT
    na = decide.verdict(bug, "9.9.9", "sqlite", {"status": "n/a", "why": "no feature"})
    nr = decide.verdict(bug, "9.9.9", "sqlite", {"status": "not_reproduced", "tried": "x"})
    assert (decide.status(na), decide.status(nr)) == (decide.NA, decide.NOT_REPRODUCED)
    with pytest.raises(ValueError, match="takes"):
        decide.verdict(bug, "9.9.9", "sqlite", {**base, "check": {"holds": True}})


def test_every_row_names_a_known_check_and_has_a_cell() -> None:
    from probes.studies.atlas.cells import CELLS

    assert sorted(CELLS) == sorted(b.ref for b in BUGS)
    for bug in BUGS:
        assert bug.check in decide.CHECKS
        assert set(bug.backends) <= {"sqlite", "postgres"}


def test_plan_measures_postgres_only_where_the_row_asks(tmp_path: Path) -> None:
    campaign = campaigns.get("atlas")
    specs = campaign.plan(campaign.resolve({"versions": ["1.2.9"]}))
    pg = sorted(s.args["ref"] for s in specs if s.args["backend"] == "postgres")
    assert pg == sorted(b.ref for b in BUGS if "postgres" in b.backends)
    assert len({s.id for s in specs}) == len(specs)


def test_local_wheel_gets_an_environment_named_by_its_contents(tmp_path: Path) -> None:
    wheel = tmp_path / "langgraph-9.9.9-py3-none-any.whl"
    wheel.write_bytes(b"one")
    first = side_env(str(wheel))
    wheel.write_bytes(b"two")
    second = side_env(str(wheel))
    assert first.name != second.name and str(wheel) in second.requirements
    assert campaigns.get("atlas").plan(campaigns.get("atlas").resolve({"versions": [str(wheel)], "bugs": ["6663"]}))


def test_bad_release_is_a_usage_error_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="neither a release number"):
        campaigns.get("atlas").resolve({"versions": ["not-a-version"]})
    out = subprocess.run([sys.executable, "-m", "probes", "run", "atlas", "--versions", "1.2.9,./nowhere"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env=full_env({"RC_RUNS_DIR": str(tmp_path / "runs")}))
    assert out.returncode == 2, out.stderr
    assert "nowhere" in out.stderr and not (tmp_path / "runs").exists()


@pytest.mark.parametrize("name", ["atlas", "drift"])
def test_notebook_parameters_match_the_campaign_defaults(name: str) -> None:
    from tests.test_notebooks import _parameters_cell

    assert _parameters_cell(name) == {p.name: p.default for p in campaigns.get(name).params}
