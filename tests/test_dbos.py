"""The paper's DBOS campaign, measured through the kit (quick profile, the real engine), and its published
values read from the receipts by the paper layer (``probes.paper.dbos``).

What the paper reports: ``dbos.row`` -- EO, PC, FD, CO all ✓ for a workflow paused in ``DBOS.recv``
(SIGKILL the worker after ``s1``, restart, send the answer; fork from the recv step with another
value; a stray send after completion, inert) -- and ``dbos.latency_ratio``, the latency from answer
sent to gated effect durable beside stock LangGraph. The legacy campaign (``data/reference/dbos`` as
measured on 2026-12-02) found every cell ✓: the kill after ``s1`` and the kill in ``recv`` recovered
with ``s1`` served from its record and each effect once, the fork served ``f(v')`` while the original
kept ``f(v)`` without re-running ``s1``, the stray left an unconsumed message, two senders consumed
once. The assertions below are those cells on the kit's paths (``probes.paper.dbos.CELLS``); the
latency study is asserted for its shape only, never for a time.
"""

from __future__ import annotations

import types

import pytest

from tests.installed import require

require("dbos")

from probes import campaigns  # noqa: E402
from probes.core.campaign import CampaignRun, run_campaign  # noqa: E402
from probes.core.checker import Label, Property  # noqa: E402
from probes.core.errors import UsageError  # noqa: E402
from probes.core.receipt import VIEW_NAME  # noqa: E402

FIRST, OTHER = "s2 served 'yes'", "s2 served 'no'"  # the kit workflow's results for its two answers
AFTER_S1 = "crash:kill@s2.begin/launch"  # the legacy "SIGKILL right after s1"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> CampaignRun:
    campaign = campaigns.get("dbos")
    return run_campaign(campaign, campaign.resolve(quick=True), receipts_root=tmp_path_factory.mktemp("receipts"))


def cells(run: CampaignRun) -> dict:
    """The framework's own verdicts by (property, path)."""
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts if v.framework == "dbos"}


def _observed(run: CampaignRun, key: str) -> dict:
    return next(r.observations[key] for r in run.receipts if key in r.observations)


def test_the_paper_campaign_is_the_kit_over_the_dbos_adapter() -> None:
    from probes.frameworks.dbos.campaign import PAPER_PROTOCOLS
    from probes.kit.runtime import STEP_POINTS
    from probes.kit.suite import KIT_ADAPTERS

    paper, kit = campaigns.get("dbos"), campaigns.get("dbos_kit")
    assert paper.in_default_run and not kit.in_default_run and paper.runs_alone and not kit.runs_alone
    assert KIT_ADAPTERS["dbos"] == KIT_ADAPTERS["dbos_kit"] == "probes.frameworks.dbos.adapter:DBOSAdapter"
    # the default profile is the paper's cells and the latency study, not every kit protocol
    params = paper.resolve()
    assert params["protocols"] == PAPER_PROTOCOLS
    assert not {"exhaustive", "savekill", "stall", "tamper", "change", "partition", "answers"} & set(PAPER_PROTOCOLS)
    assert params["crash_points"] == list(STEP_POINTS) and params["crash_hows"] == ["kill"] and params["race_k"] == [2]
    ids = [s.id for s in paper.plan(params)]
    assert ids[-2:] == ["latency.default.sqlite.rep1", "latency.poll-100ms.sqlite.rep1"]
    assert "race.k2.sqlite.rep1" in ids and "fork_workflow.sqlite.rep1" in ids
    # the study keeps the legacy sample sizes: 30 pairs, 2000 resamples, DBOS's default polling and 100 ms
    assert (params["latency_n"], params["bootstrap"], params["poll_ms_extra"], params["think_ms_max"]) == (
        30, 2000, [100], 1000)
    quick = paper.resolve(quick=True)
    assert "race" not in quick["protocols"] and quick["latency_n"] == 8 and quick["poll_ms_extra"] == []
    # the kit campaign has DBOS's fork but not the study
    assert "fork_workflow" in kit.resolve()["protocols"] and "latency" not in kit.resolve()["protocols"]


def test_parameter_errors() -> None:
    paper = campaigns.get("dbos")
    with pytest.raises(UsageError, match="poll_ms_extra"):
        paper.resolve({"poll_ms_extra": [0]})
    with pytest.raises(UsageError, match="latency_n"):
        paper.resolve({"latency_n": 1})
    assert [s.id for s in paper.plan(paper.resolve({"protocols": ["baseline"]}))] == [
        "baseline.a0.sqlite.rep1", "baseline.a1.sqlite.rep1"]


def test_the_paper_campaign_shares_drift_with_the_kit_campaign() -> None:
    from probes.studies.drift.campaign import side_env
    from probes.studies.drift.targets import ADAPTER_NOTES, by_campaign

    paper, kit = by_campaign("dbos"), by_campaign("dbos_kit")
    assert (paper.dist, paper.pin, paper.newest) == (kit.dist, kit.pin, kit.newest)
    assert side_env(paper, paper.newest) == side_env(kit, kit.newest)
    assert "langgraph==1.2.9" in paper.extras  # the latency study's LangGraph arm stays at the lock's release
    assert ADAPTER_NOTES["dbos"] == ADAPTER_NOTES["dbos_kit"]


def test_no_harness_errors(run: CampaignRun) -> None:
    assert run.harness_errors == []
    assert {r.observations.get("framework_versions", {}).get("dbos") for r in run.receipts} == {"2.27.0"}


def test_a_kill_right_after_s1_recovers_with_s1_served_from_its_record(run: CampaignRun) -> None:
    """Legacy ``protocol.after_s1`` (EO, PC, LV ✓): ``s2.begin`` is in the ``ask`` step, after ``s1``'s
    output is durable and before ``recv``; the next launch recovers the workflow, which waits in recv."""
    c = cells(run)
    assert all(c[(p, AFTER_S1)].label is Label.PASS for p in ("EO", "PC", "LV"))
    assert c[("EO", AFTER_S1)].evidence["effect_counts"] == {"e1": 1, "e2": 1}
    pc = c[("PC", AFTER_S1)]
    assert pc.evidence["durable_prefix"] == ["s1"] and pc.evidence["reentered"] == {}
    assert c[("LV", AFTER_S1)].evidence["outcome"] == FIRST


def test_a_kill_while_waiting_in_recv_recovers_at_the_next_launch(run: CampaignRun) -> None:
    """Legacy ``protocol.in_recv`` (EO, PC, LV ✓): the park-kill path."""
    c = cells(run)
    assert all(c[(p, "park-kill")].label is Label.PASS for p in ("EO", "PC", "LV"))
    assert c[("EO", "park-kill")].evidence["effect_counts"] == {"e1": 1, "e2": 1}
    assert c[("PC", "park-kill")].evidence["durable_prefix"] == ["s1"]


def test_fork_workflow_serves_the_new_answer_and_keeps_the_original(run: CampaignRun) -> None:
    """Legacy FD ✓ (fork served f(v'), original kept f(v), s1 not re-run) and the per-branch EO ✓."""
    from probes.frameworks.dbos.protocols import FORK_PATH

    c = cells(run)
    fd = c[("FD", FORK_PATH)]
    assert fd.label is Label.PASS and fd.evidence["observed"] == OTHER and fd.evidence["first_resume_outcome"] == FIRST
    assert fd.doc is None or fd.doc.source == "DB-10"
    eo = c[("EO", FORK_PATH)]
    assert eo.label is Label.PASS and eo.evidence["effect_counts"] == {"e1": 1, "e2": 1}  # the fork's branch
    seen = _observed(run, "fork_workflow")
    assert seen["original_before"] == seen["original_after"] == FIRST
    assert seen["new_workflow_id"] is True and seen["forked_from_step"] == 3  # s1, ask, then recv
    assert seen["effects"] == {"e1": 1, "e2": 2}  # s1 never ran again; the gate once per workflow


def test_the_kits_fork_is_answered_by_forking_in_dbos(run: CampaignRun) -> None:
    """The kit's fork (another answer sent to the answered workflow) is ignored, as DB-10 documents:
    not the paper's cell, which forked with ``DBOS.fork_workflow``."""
    fd = cells(run)[("FD", "fork:same-pause")]
    assert fd.label is Label.DOC and fd.doc.source == "DB-10" and fd.evidence["observed"] == FIRST


def test_a_stray_answer_after_completion_is_inert(run: CampaignRun) -> None:
    """Legacy CO ✓ ("the stray answer stayed an unconsumed message; nothing re-fired")."""
    c = cells(run)
    co = c[("CO", "stray-after-completion")]
    assert co.label is Label.PASS and co.evidence["gate_fires"] == 1
    eo = c[("EO", "stray-after-completion")]
    assert eo.label is Label.PASS and eo.evidence["effect_counts"] == {"e1": 1, "e2": 1}


def test_a_kill_inside_a_step_after_its_effect_runs_the_step_again(run: CampaignRun) -> None:
    """Not a cell of the paper's (it killed between steps): a kill after ``e2`` fired, before the step's
    output was recorded, runs the step again (at-least-once steps, DB-5 documents it)."""
    eo = cells(run)[("EO", "crash:kill@s2.effect/launch")]
    assert eo.label is Label.DOC and eo.doc.source == "DB-5" and eo.evidence["effect_counts"] == {"e1": 1, "e2": 2}


def test_the_published_row_is_read_from_the_kit_receipts(run: CampaignRun) -> None:
    from probes.headline import REPRODUCED, VARIANT, Measured, chapter_rows, compare, load_published
    from probes.paper.dbos import ROW, headlines

    measured = headlines(run.receipts)[ROW]
    assert isinstance(measured, Measured)
    assert measured.value == {"EO": "✓", "PC": "✓", "FD": "✓", "CO": "✓"} and measured.contradicted_by == ()
    assert f"PC from {AFTER_S1} ✓, park-kill ✓" in measured.why
    assert "FD from fork:fork_workflow ✓" in measured.why
    # the quick profile has no race: the paper layer says which cell it lacks
    assert "Not in these receipts: two processes answer one waiting workflow at once" in measured.why
    # the campaign's other cells are named, and do not enter the row
    assert "EO crash:kill@s2.effect/launch D, DB-5 documents it" in measured.why
    assert "FD fork:same-pause D, DB-10 documents it" in measured.why
    [entry] = [e for e in load_published() if e["id"] == ROW]
    assert compare(entry, measured, "").status == REPRODUCED
    rows = {r.id: r for r in chapter_rows(campaigns.get("dbos"), run)}  # this quick run is a variant: never scored
    assert rows[ROW].status == VARIANT


def test_the_latency_study_measures_both_arms(run: CampaignRun) -> None:
    """The study's shape, never its times: 8 pairs (quick), every trial's effects once, a summary whose
    keys the paper layer reads, no verdict."""
    [study] = [r for r in run.receipts if r.args["protocol"] == "latency"]
    assert study.probe == "latency.default.sqlite.rep1" and study.verdicts == []
    seen = study.observations["latency"]
    assert seen["dbos_poll_interval"] == "DBOS default"
    assert seen["effects"] == {"gate": 9, "s1": 9, "lg.gate": 9, "lg.s1": 9}  # 8 pairs and one warm-up per arm
    samples = seen["samples"]
    assert len(samples["dbos_ms"]) == len(samples["langgraph_ms"]) == len(samples["first_arm"]) == 8
    assert all(x > 0 for x in samples["dbos_ms"] + samples["langgraph_ms"])
    assert seen["summary"]["n"] == 8 and seen["summary"]["bootstrap_resamples"] == 500
    assert seen["summary"]["bootstrap_seed"] == study.args["seed"]
    assert study.observations["framework_versions"]["langgraph"] == "1.2.9"


def test_the_latency_ratio_is_read_from_the_study(run: CampaignRun) -> None:
    from probes.headline import Measured
    from probes.paper.dbos import LATENCY_RATIO, headlines, latency_rows

    measured = headlines(run.receipts)[LATENCY_RATIO]
    assert isinstance(measured, Measured)
    # the keys the legacy extractor produced; one polling setting here, so low = high = stock
    assert set(measured.value) == {"ratio_low", "ratio_high", "ratio_stock", "ratio_stock_ci95", "dbos_p50_ms",
                                   "langgraph_p50_ms", "n"}
    assert measured.value["ratio_low"] == measured.value["ratio_high"] == measured.value["ratio_stock"]
    assert measured.value["n"] == 8 and measured.tolerance == 0.25
    assert measured.receipts == ("latency.default.sqlite.rep1",)
    assert "default notification polling" in measured.why
    assert [row["dbos_poll"] for row in latency_rows(run.receipts)] == ["DBOS default"]


def test_latency_stats_ratio_and_seeded_bootstrap() -> None:
    from probes.frameworks.dbos.latency import latency_stats

    d = [100.0, 110.0, 90.0, 105.0, 95.0]
    g = [10.0, 11.0, 9.0, 10.5, 9.5]
    a = latency_stats(d, g, seed=3, resamples=200)
    assert a["dbos_p50_ms"] == 100.0 and a["langgraph_p50_ms"] == 10.0
    assert a["ratio_of_medians"] == 10.0
    assert a["ratio_ci95"][0] <= 10.0 <= a["ratio_ci95"][1]
    assert latency_stats(d, g, seed=3, resamples=200) == a  # seeded: reproducible


def test_every_verdict_is_re_judged_from_its_receipt(run: CampaignRun) -> None:
    from probes.frameworks.dbos.adapter import DBOSAdapter
    from probes.rejudge import kit_verdicts, stable

    for receipt in run.receipts:
        again = kit_verdicts(receipt, DBOSAdapter)
        assert again is not None and [stable(v) for v in again] == [stable(v) for v in receipt.verdicts], receipt.probe


def _verdict(prop: str, path: str, label: str, framework: str = "dbos") -> types.SimpleNamespace:
    return types.SimpleNamespace(framework=framework, property=Property(prop), path=path, label=Label(label),
                                 doc=None, evidence={})


def test_the_row_takes_the_worst_label_of_each_cells_paths() -> None:
    """The concurrent-answer cell joins CO; a violation on another path, or on the forgery row, does not."""
    from probes.paper.dbos import ROW, headlines

    receipts = [types.SimpleNamespace(probe="race.k2.sqlite.rep1", observations={}, args={"protocol": "race"},
                                      verdicts=[_verdict("CO", "race:same-pause×2", "U")]),
                types.SimpleNamespace(probe="stray.sqlite.rep1", observations={}, args={"protocol": "stray"},
                                      verdicts=[_verdict("CO", "stray-after-completion", "✓"),
                                                _verdict("EO", "stray-after-completion", "✓")]),
                types.SimpleNamespace(probe="answers.n2.sqlite.rep1", observations={}, args={"protocol": "answers"},
                                      verdicts=[_verdict("CO", "retry:same-pause×2", "U"),
                                                _verdict("CV", "tamper:x", "U", "dbos · undetected forgery")])]
    measured = headlines(receipts)[ROW]
    assert measured.value == {"EO": "✓", "PC": "not measured", "FD": "not measured", "CO": "U"}
    assert measured.receipts == ("race.k2.sqlite.rep1", "stray.sqlite.rep1")
    assert "CO retry:same-pause×2 U" in measured.why


def test_a_fork_that_changed_the_original_contradicts_the_row() -> None:
    from probes.frameworks.dbos.protocols import FORK_PATH
    from probes.paper.dbos import ROW, headlines

    seen = {"original_before": FIRST, "original_after": OTHER, "effects": {"e1": 1, "e2": 2}}
    receipts = [types.SimpleNamespace(probe="fork_workflow.sqlite.rep1", args={"protocol": "fork_workflow"},
                                      observations={"fork_workflow": seen},
                                      verdicts=[_verdict("FD", FORK_PATH, "✓"), _verdict("EO", FORK_PATH, "✓")])]
    measured = headlines(receipts)[ROW]
    assert measured.value["FD"] == "✓" and measured.contradicted_by == ("fork_workflow.sqlite.rep1",)
    assert "the original workflow's outcome read \"s2 served 'no'\"" in measured.contradiction


def test_the_paper_layer_says_why_without_receipts() -> None:
    from probes.paper.dbos import LATENCY_RATIO, ROW, headlines

    got = headlines([])
    assert got[ROW] == "no probe of the paper's cells in these receipts (run the paper's protocols)"
    assert "latency.default" in got[LATENCY_RATIO]


def test_view_has_no_temp_paths(run: CampaignRun) -> None:
    assert "/tmp" not in (run.directory / VIEW_NAME).read_text()
