"""The atlas across frameworks: the sweep, the per-framework tables, and real cells on real releases.

The end-to-end tests run the quick profile (``sweep=pin``) of two new cells whose pin the main
environment holds (pydantic-graph #1684, CrewAI #4501), and one cell on an older release in its
cached side environment (pydantic-graph 1.0.15, about 40 s to create the first time). Each further
cell runs once on one release, asserting what it observed and the status it gets, so an inverted
oracle fails its test: CrewAI #6113 and #5528 on the pin, AG-UI #7458 on 1.0.1, llama-agents #564 on
0.4.6 (side environments of 20-60 s the first time), LangGraph #8234 on the pin's side environment,
pydantic-ai-harness #373 on 0.9.0 (an environment of about 30 s the first time).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from probes import campaigns
from probes.studies.atlas import decide, releases, sweep, table
from probes.studies.atlas.bugs import ALL, LANGGRAPH, by_key
from probes.studies.atlas.frameworks import FRAMEWORKS
from probes.core.campaign import run_campaign

RELEASES = [f"1.{i}" for i in range(20)]


def _truth(first_bad: int, first_fixed: int):
    calls: list[str] = []

    def measure(release: str) -> str:
        calls.append(release)
        minor = int(release.split(".")[1])
        return decide.PRESENT if first_bad <= minor < first_fixed else decide.ABSENT
    return measure, calls


def test_bisection_finds_both_boundaries_within_its_cap() -> None:
    measure, calls = _truth(5, 13)
    order = sweep.choose(RELEASES, measure, "bisect", cap=12, bad="1.7", pin="1.15")
    statuses = sorted(order, key=lambda rs: releases.key(rs[0]))
    assert table.first_bad(statuses) == "1.5" and table.fixed_in(statuses) == ("1.13", "1.12")
    assert calls[:3] == ["1.7", "1.15", "1.19"] and len(calls) == len(set(calls)) <= 12


def test_cap_bounds_the_runs_and_modes_pick_what_they_say() -> None:
    measure, calls = _truth(5, 13)
    assert len(sweep.choose(RELEASES, measure, "bisect", cap=4, bad="1.7", pin="1.15")) == 4
    assert [r for r, _ in sweep.choose(RELEASES, measure, "pin", cap=9, pin="1.15")] == ["1.15"]
    assert [r for r, _ in sweep.choose(RELEASES, measure, "pin", cap=9, pin="9.9")] == ["1.19"]  # no pin: newest
    assert len(sweep.choose(RELEASES, measure, "every", cap=2)) == len(RELEASES)
    with pytest.raises(ValueError):
        sweep.choose(RELEASES, measure, "sometimes", cap=2)


def test_boundaries_left_open_by_the_cap_are_intervals() -> None:
    statuses = [("0.2.0", "present"), ("1.0.15", "present"), ("1.0.17", "absent")]
    assert table.boundary("pydantic-graph", statuses, "1.0.17") == "1.0.15 < … ≤ 1.0.17"  # 1.0.16 not run
    assert table.boundary("pydantic-graph", statuses, "0.2.0", oldest="0.1.0") == "≤ 0.2.0"
    assert table.boundary("pydantic-graph", [("1.0.16", "present"), ("1.0.17", "absent")], "1.0.17") == "1.0.17"
    # a row's pre-releases are neighbours in its own list, not in the distribution's list of final releases
    window = [("1.14.7rc1", "present"), ("1.14.7rc2", "absent")]
    assert table.boundary("crewai", window, "1.14.7rc2") == "1.14.7rc1 < … ≤ 1.14.7rc2"
    assert table.boundary("crewai", window, "1.14.7rc2", listed=by_key("crewai-6113").releases()) == "1.14.7rc2"


def test_every_row_has_a_cell_in_its_frameworks_module_and_a_release_list() -> None:
    keys = [b.key for b in ALL]
    assert len(keys) == len(set(keys))
    for bug in ALL:
        module = importlib.import_module(bug.framework.cells)
        assert bug.ref in module.CELLS, f"{bug.cite} has no cell in {bug.framework.cells}"
        assert bug.check in decide.CHECKS
        assert releases.releases(bug.framework.dist)  # the sweep has a list to bisect
        if bug.fw != LANGGRAPH and bug.bad is not None:
            assert bug.bad in bug.releases()
        assert all(releases.key(r) for r in bug.pre)  # pre-releases are release numbers
    assert {b.fw for b in ALL} <= set(FRAMEWORKS)


def test_plan_sweeps_each_other_row_once_per_backend() -> None:
    campaign = campaigns.get("atlas")
    params = campaign.resolve({}, quick=True)
    specs = [s for s in campaign.plan(params) if "key" in s.args]
    assert sorted(s.args["key"] for s in specs) == sorted(b.key for b in ALL if b.fw != LANGGRAPH)
    assert {s.args["sweep"] for s in specs} == {"pin"}
    assert len({s.id for s in specs}) == len(specs)


@pytest.fixture(scope="module")
def pinned(tmp_path_factory: pytest.TempPathFactory):
    campaign = campaigns.get("atlas")
    params = campaign.resolve({"bugs": ["pydantic-graph-1684", "crewai-4501"]}, quick=True)
    return run_campaign(campaign, params, receipts_root=tmp_path_factory.mktemp("atlas-fw"), render_only=False)


def test_pinned_cells_measure_the_pins_and_find_the_fixes_in_them(pinned) -> None:
    assert not pinned.harness_errors
    by = {r.probe: r for r in pinned.receipts}
    pg, crew = by["pydantic-graph-1684.memory"], by["crewai-4501.sqlite"]
    assert [v.path for v in pg.verdicts] == ["#1684 @ 1.107.1"] and pg.verdicts[0].framework == "pydantic-graph"
    run = pg.observations["runs"][0]
    assert run["env"] == "main" and run["versions"]["pydantic-graph"] == "1.107.1"
    assert run["observations"]["recorded"] == run["observations"]["final"] == [3, 2, 1, 0]
    assert run["status"] == decide.ABSENT
    loops = crew.observations["runs"][0]["observations"]["runs"]
    assert [v["loops"] for v in loops.values()] == [3, 3]  # both kickoffs looped three times
    assert crew.observations["statuses"] == {"1.15.2": decide.ABSENT}
    fig = table.figure(pinned.receipts, fw="crewai")
    assert len(fig.axes[0].patches) == 1


def test_an_older_pydantic_graph_mutates_its_recorded_history(tmp_path: Path) -> None:
    from probes.studies.atlas import runner
    from probes.studies.atlas.envs import side_env

    bug = by_key("pydantic-graph-1684")
    cell = runner.run_cell(side_env("1.0.15", bug.framework), [bug.ref, "memory", str(tmp_path / "s"), str(tmp_path)],
                           module=bug.framework.cells)
    assert cell["versions"]["pydantic-graph"] == "1.0.15"
    recorded, final = cell["observations"]["recorded"], cell["observations"]["final"]
    assert recorded == [3, 2, 1, 0] and final != recorded  # load_next handed out the live snapshot
    assert decide.status(decide.verdict(bug, "1.0.15", "memory", cell)) == decide.PRESENT


def _cell(key: str, release: str, backend: str, tmp_path: Path) -> dict:
    """One cell of ``key`` on ``release`` (its cached environment, the main one for a main_env pin)."""
    from probes.studies.atlas import runner
    from probes.studies.atlas.envs import side_env

    bug = by_key(key)
    location = str(tmp_path / "store.sqlite")
    return runner.run_cell(side_env(release, bug.framework), [bug.ref, backend, location, str(tmp_path)],
                           module=bug.framework.cells)


def test_agent_framework_pin_resumes_its_final_checkpoint_without_rerunning(tmp_path: Path) -> None:
    bug = by_key("agent-framework-1695")
    cell = _cell(bug.key, "1.23.0", "file", tmp_path)
    assert cell["versions"]["agent-framework-core"] == "1.23.0"
    for arm in ("run", "stream"):  # the blocking and the streaming resume
        assert cell["observations"][arm]["prefix"] == ["s1", "s2", "s3"]
        assert cell["observations"][arm]["reran"] == {"s1": 0, "s2": 0, "s3": 0}
    assert decide.status(decide.verdict(bug, "1.23.0", "file", cell)) == decide.ABSENT


def test_agent_framework_pin_replays_a_failed_superstep_from_the_checkpoint_before_it(tmp_path: Path) -> None:
    bug = by_key("agent-framework-3938")
    cell = _cell(bug.key, "1.23.0", "file", tmp_path)
    assert cell["observations"]["first_error"] == "RuntimeError: notify: network timeout"
    assert cell["observations"]["latest_written_after"] == ["a"]  # no checkpoint of the failed superstep
    assert cell["effects"] == {"a": 1, "send_email": 2, "update_database": 2, "notify": 1}
    assert decide.status(decide.verdict(bug, "1.23.0", "file", cell)) == decide.PRESENT


def test_agno_2_6_8_loses_the_confirmed_member_tool_when_the_team_is_rebuilt(tmp_path: Path) -> None:
    bug = by_key("agno-8029")
    cell = _cell(bug.key, "2.6.8", "sqlite", tmp_path)
    assert cell["versions"]["agno"] == "2.6.8"
    # the same team object runs the confirmed tool; a team built again from the database does not,
    # and still ends its run as completed (the report's silent failure)
    assert cell["observations"]["counts"] == {"same team:send_email": 1}
    assert cell["observations"]["rebuilt team"]["status"] == "completed"
    assert decide.status(decide.verdict(bug, "2.6.8", "sqlite", cell)) == decide.PRESENT


def test_google_adk_pin_resumes_a_confirmed_pipeline_once_per_agent(tmp_path: Path) -> None:
    bug = by_key("google-adk-6198")
    cell = _cell(bug.key, "2.13.0", "sqlite", tmp_path)
    assert cell["versions"]["google-adk"] == "2.13.0"
    resumable, plain = cell["observations"]["resumable"], cell["observations"]["plain"]
    assert resumable["asked_per_round"] == [1, 1, 0] and resumable["error"] is None  # planner, executor, done
    assert {v for k, v in cell["effects"].items() if k.startswith("resumable:")} == {1}
    assert sum(k.startswith("resumable:") for k in cell["effects"]) == 7
    # the plain app (an observation, not the verdict) never pauses: the model is asked again up to the limit
    assert plain["asked_per_round"] == [] and plain["error"].startswith("LlmCallsLimitExceededError")
    assert cell["effects"]["plain:planner:asked"] == 24
    assert decide.status(decide.verdict(bug, "2.13.0", "sqlite", cell)) == decide.ABSENT


def test_agno_3_0_0_sends_the_continued_runs_own_tool_call_turn_twice(tmp_path: Path) -> None:
    bug = by_key("agno-10086")
    cell = _cell(bug.key, "3.0.0", "sqlite", tmp_path)
    assert cell["versions"]["agno"] == "3.0.0"
    # the run re-read as its own history (once unpaired), then as the current turn with its result
    assert cell["observations"]["turns"] == {"asker-call-1": 2}
    assert cell["observations"]["unpaired"] == ["asker-call-1"]
    assert decide.status(decide.verdict(bug, "3.0.0", "sqlite", cell)) == decide.PRESENT


def test_pre_releases_order_before_their_final_release_in_lists_and_tables() -> None:
    ordered = ["1.0.0b251001", "1.0.0b251112", "1.0.0b251112.post1", "1.0.0rc1", "1.0.0", "1.2.9", "1.23.0"]
    assert sorted(reversed(ordered), key=releases.key) == ordered
    assert sorted(reversed(ordered), key=table.release_key) == ordered
    assert table.release_key("local:x") > table.release_key("99.0.0")
    betas = releases.releases("agent-framework-core")
    assert betas[0].startswith("1.0.0b") and betas.index("1.0.0rc1") < betas.index("1.0.0")


def test_pydantic_ai_1_11_0_runs_the_unapproved_call_its_history_ends_in(tmp_path: Path) -> None:
    bug = by_key("pydantic-ai-3355")
    cell = _cell(bug.key, "1.11.0", "memory", tmp_path)
    assert cell["versions"]["pydantic-ai-slim"] == "1.11.0"
    assert cell["observations"]["counts"] == {"resumed:charge": 1}  # the fresh run deferred; the resume ran it
    assert cell["check"]["decisions"] == {"fresh run": "did not run it",
                                          "history ending in the unapproved call": "ran the gated tool"}
    assert decide.status(decide.verdict(bug, "1.11.0", "memory", cell)) == decide.PRESENT


def test_crewai_pin_second_task_asks_the_model_with_checkpointing_on(tmp_path: Path) -> None:
    bug = by_key("crewai-6113")
    cell = _cell(bug.key, "1.15.2", "file", tmp_path)  # the pin: the main environment
    assert cell["versions"]["crewai"] == "1.15.2"
    # the second task ran fresh: it asked the model once and produced its own answer
    assert cell["check"]["effect_counts"] == {"answer:task1": 1, "answer:task2": 1}
    assert cell["observations"]["outputs"] == {"task1": "done task1", "task2": "done task2"}
    assert decide.status(decide.verdict(bug, "1.15.2", "file", cell)) == decide.ABSENT


def test_crewai_pin_fork_restarts_both_in_progress_agents(tmp_path: Path) -> None:
    bug = by_key("crewai-5528")
    cell = _cell(bug.key, "1.15.2", "file", tmp_path)
    pair, lone = cell["observations"]["pair"], cell["observations"]["lone"]
    assert pair["checkpoint_fired"] == ["A:note", "B:note"]  # both tools had run when the checkpoint was taken
    # the fork marks neither agent resuming and both run their tool again (the lone control restarts too)
    assert pair["marked_resuming"] == {"A": False, "B": False}
    assert cell["check"]["runs_after_recovery"] == {"A:note": 1, "B:note": 1}
    assert lone["tool_ran_again"] == {"L": 1}
    assert decide.status(decide.verdict(bug, "1.15.2", "file", cell)) == decide.PRESENT


def test_ag_ui_1_0_1_refuses_the_retried_approval_after_the_tool_ran(tmp_path: Path) -> None:
    bug = by_key("agent-framework-ag-ui-7458")
    cell = _cell(bug.key, "1.0.1", "memory", tmp_path)  # its side environment (about a minute the first time)
    assert cell["versions"]["agent-framework-ag-ui"] == "1.0.1"
    assert cell["observations"]["ran_before_retry"] == 1  # the approved tool ran before the provider failed
    assert cell["observations"]["retry_ending"].startswith("RUN_ERROR APPROVAL_RESUME_NOT_FOUND")
    assert cell["effects"] == {"deploy_change": 1}
    assert decide.status(decide.verdict(bug, "1.0.1", "memory", cell)) == decide.PRESENT


def test_llama_agents_0_4_6_reruns_a_zombie_handler_from_an_empty_start_event(tmp_path: Path) -> None:
    bug = by_key("llama-agents-564")
    cell = _cell(bug.key, "0.4.6", "sqlite", tmp_path)  # a real SIGKILL of the server at the store's first tick
    assert cell["versions"]["llama-agents-server"] == "0.4.6"
    assert cell["observations"]["reran"] == {"charge:None": 1}  # a charge for an order nobody sent
    assert [b["handlers"][0]["status"] for b in cell["observations"]["boots"].values()] == ["completed", "completed"]
    assert decide.status(decide.verdict(bug, "0.4.6", "sqlite", cell)) == decide.PRESENT


def test_langgraph_pin_recovers_a_half_written_sync_superstep_like_an_uninterrupted_run(tmp_path: Path) -> None:
    bug = by_key("8234")
    cell = _cell(bug.key, "1.2.9", "sqlite", tmp_path)
    arms = cell["observations"]["arms"]
    assert len(arms) == 3 and all(o == arms["uninterrupted"] for o in arms.values())
    assert arms["uninterrupted"]["effects"] == {"s0": 1, "a": 1, "b": 1, "join": 1}
    assert cell["observations"]["failed_write"]["raised"].startswith("OSError")  # a failed write is loud
    assert decide.status(decide.verdict(bug, "1.2.9", "sqlite", cell)) == decide.ABSENT


def test_pydantic_ai_harness_0_9_0_leaves_no_snapshot_after_the_completed_tool_call(tmp_path: Path) -> None:
    bug = by_key("pydantic-ai-harness-373")
    cell = _cell(bug.key, "0.9.0", "sqlite", tmp_path)  # a real SIGKILL of the worker; resumed in this process
    assert cell["versions"]["pydantic-ai-harness"] == "0.9.0"
    at_kill = cell["observations"]["at_kill"]
    assert at_kill["tool_effect"] == "completed" and at_kill["events"][-1] == "model_request_started"
    # the tool's effect is recorded as completed, yet no snapshot carries its return: nothing to continue
    assert cell["observations"]["continue_run"].startswith("raised LookupError")
    assert cell["check"]["effect_counts"] == {"charge:A-1": 1, "answer:A-1": 0}
    assert decide.status(decide.verdict(bug, "0.9.0", "sqlite", cell)) == decide.PRESENT
