"""The remit and remit_bench campaigns end to end on small bounds (real LangGraph, real REMIT); the remit
campaign's LangGraph arm (kit cells on SQLite) giving the ``langgraph+remit`` row."""

from __future__ import annotations

from pathlib import Path

import nbformat

from probes.core.campaign import run_campaign
from probes.studies.remit.bench import CAMPAIGN as BENCH, concurrency_table, overhead_table
from probes.studies.remit.campaign import CAMPAIGN as REMIT
from probes.studies.remit.verdicts import row
from tests.kit_checks import run_probes

ROOT = Path(__file__).resolve().parent.parent
SMALL = dict(backends=["memory"], langgraph_kinds=["fd", "cv"], ledger_points=["exc"], recovery_modes=["none"],
             hypothesis_examples=20, hypothesis_steps=15, stateful_examples=4, stateful_steps=8,
             stateful_backends=["memory"])


def test_remit_campaign_verdicts_are_deterministic(tmp_path: Path) -> None:
    params = REMIT.resolve(SMALL, quick=True)
    a = run_campaign(REMIT, params, receipts_root=tmp_path / "a")
    run_campaign(REMIT, params, receipts_root=tmp_path / "b")
    assert not a.harness_errors
    va = (tmp_path / "a" / "remit" / "verdicts.json").read_bytes()
    assert va == (tmp_path / "b" / "remit" / "verdicts.json").read_bytes()
    measured = row(a.receipts)
    assert measured["EO"] == "✓"  # the crash path through the effect ledger
    # in memory only REMIT's own probes run: the LangGraph arm measures across processes (sqlite, postgres)
    assert not any(r.probe.startswith("lg.") for r in a.receipts)
    assert {v.framework for r in a.receipts for v in r.verdicts} == {"langgraph+remit"}
    model = next(r for r in a.receipts if r.probe == "verify.model").observations
    assert model["conformance"]["conforms"] and model["conformance"]["states"] > 50
    obs = {r.probe: r.observations for r in a.receipts}
    assert obs["verify.stateful.memory"]["holds"] and obs["verify.stateful.memory"]["steps"] > 0
    assert obs["verify.lg_conformance.memory"]["remit_passes_all_stock_passes"]


def test_the_langgraph_arm_gives_the_remit_row(tmp_path: Path, outside_basetemp: Path) -> None:
    """A quick LangGraph arm of remit_ref on SQLite: the kit's cells of the fd, fi, co_stray and eo_interrupt
    kinds, each verdict on ``langgraph+remit`` (no third-party statement: a violation would be U), and the
    row's keys with a label each; the receipts' judge calls replay to the same verdicts."""
    from types import SimpleNamespace

    from probes.core.receipt import recorded_histories
    from probes.kit.judge import replay
    from probes.studies.remit import campaign as rc
    from probes.studies.remit.kit_adapters import RemitAdapter

    params = REMIT.resolve(dict(backends=["sqlite"], builds=["remit_ref"],
                                langgraph_kinds=["fd", "fi", "co_stray", "eo_interrupt"]), quick=True)
    specs = rc.lg_plan(params)
    assert specs and all(s.id.startswith("lg.remit_ref.") for s in specs)
    receipts = []
    for s, res in run_probes(rc.run_probe, specs, params, tmp_path, outside_basetemp / "stores"):
        assert {v.framework for v in res.verdicts} == {"langgraph+remit"}
        again = replay(res.observations["judged"], recorded_histories(res.verdicts), RemitAdapter.framework,
                       "sqlite", RemitAdapter.citations)
        assert [v.to_json() for v in again] == [v.to_json() for v in res.verdicts], s.id
        receipts.append(SimpleNamespace(probe=s.id, verdicts=res.verdicts))
    measured = row(receipts)
    assert set(measured) == {"CO", "EO", "FD", "FI", "LV", "VO"}
    assert set(measured.values()) <= {"✓", "✗", "D", "U"}
    assert measured["CO"] == "✓" and measured["EO"] == "✓"  # a stray is inert; a clean run fires each effect once


def test_bench_campaign_small(tmp_path: Path) -> None:
    params = BENCH.resolve(dict(overhead_n=3, overhead_block=3, arms=["stock", "remit_default", "remit_gate", "rc_gate"],
                                concurrency_k=[3], concurrency_n=6, parts=["overhead", "concurrency"]), quick=True)
    run = run_campaign(BENCH, params, receipts_root=tmp_path)
    assert not run.harness_errors, run.harness_errors
    table = overhead_table(run.receipts, bootstrap=20)
    assert set(table["arms"]) == {"stock", "remit_default", "remit_gate", "rc_gate"}
    assert table["arms"]["remit_gate"]["total_ms"]["ratio"] > 0 and set(table["pairs"]) == {"remit_gate/rc_gate"}
    conc = concurrency_table(run.receipts)
    assert [c["exactly_once"] for c in conc] == [True, True] and all(c["protocols"] == 6 for c in conc)


def test_cost_campaign_small(tmp_path: Path) -> None:
    """The counted cost through its campaign: two arms, each in its own valgrind and strace processes,
    two runs of two protocols; the chapter's table comes from the receipts."""
    from probes.studies.remit import cost_report
    from probes.studies.remit.cost import CAMPAIGN as COST
    from probes.studies.remit.counted import counted_table

    params = COST.resolve(dict(counted_arms=["stock", "remit_bare"], counted_protocols=2, counted_runs=2), quick=True)
    run = run_campaign(COST, params, receipts_root=tmp_path)
    assert not run.harness_errors, run.harness_errors
    assert [r.probe for r in run.receipts] == ["counted.sqlite"]
    table = counted_table(run.receipts)["sqlite"]
    assert table["stock"]["ratio"] == 1.0 and 0.9 < table["remit_bare"]["ratio"] < 1.2
    assert all(len(e["per_run"]) == 2 and e["instructions"]["median"] > 1e6 for e in table.values())
    assert table["stock"]["syscalls"]["fdatasync"] > 0 and table["stock"]["syscalls"]["pwrite64"] > 0
    assert cost_report.counted_findings({"sqlite": table})[0].startswith("sqlite `remit_bare`: ")
    assert len(cost_report.counted_annotation({"sqlite": table}, "sqlite", "remit_bare")) > 0


def test_notebook_parameters_match_campaigns() -> None:
    from probes.studies.remit.cost import CAMPAIGN as COST

    for campaign in (REMIT, BENCH, COST):
        nb = nbformat.read(ROOT / "notebooks" / f"{campaign.name}.ipynb", as_version=4)
        cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        names = {}
        exec(cell.source, {}, names)  # noqa: S102 - our own notebook's literal assignments
        assert names == {p.name: p.default for p in campaign.params}


def test_the_partition_kind_runs_remits_gate_with_and_without_a_lease(tmp_path: Path, outside_basetemp: Path,
                                                                    monkeypatch) -> None:
    """Issue 27 item 5 in the REMIT campaign: the kit's partition protocol on remit_ref's gate as built (no lease)
    and with ``claim_ttl`` (the ``lease`` variant), remit_ref only (``PARTITION_BUILDS``: remit-contract has no
    lease option, and its gate refuses the cut-off racer before the cut). The cut-off racer's answer is durable,
    so the gate refuses the other racer whether its claim may be taken over or not (the fix of 2026-12-03: a
    stored answer is never taken over)."""
    import sqlite3

    import pytest
    from langgraph.checkpoint.sqlite import SqliteSaver

    from probes.core import netns
    from probes.studies.remit import campaign as rc
    from probes.studies.remit.kit_adapters import LEASE_ENV, RemitAdapter

    saver = SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    assert RemitAdapter.wrap(None, saver).claim_ttl is None  # type: ignore[arg-type]
    monkeypatch.setenv(LEASE_ENV, "0.1")
    assert RemitAdapter.wrap(None, saver).claim_ttl == 0.1  # type: ignore[arg-type]
    monkeypatch.delenv(LEASE_ENV)
    if why := netns.unavailable():
        pytest.skip(f"network namespaces: {why}")
    params = REMIT.resolve(dict(backends=["postgres"], langgraph_kinds=["partition"]), quick=True)
    specs = rc.lg_plan(params)
    assert [s.id for s in specs] == ["lg.remit_ref.partition.s2.consumed.postgres.rep1",
                                     "lg.remit_ref.lease.partition.s2.consumed.postgres.rep1"]
    results = {s.id.split(".")[1] + ("+lease" if ".lease." in s.id else ""): res
               for s, res in run_probes(rc.run_probe, specs, params, tmp_path, outside_basetemp / "stores")}
    assert netns.leftovers() == []
    for build in ("remit_ref", "remit_ref+lease"):
        res = results[build]
        labels = {v.property.value: v.label.value for v in res.verdicts}
        assert res.observations["partition"]["b"].startswith("raised ConsumeConflict"), build
        assert (labels["CO"], labels["EO"], labels["LV"]) == ("✓", "✓", "✓"), (build, labels)
    assert all(v.path.startswith("claim_ttl=0.1s:partition:") for v in results["remit_ref+lease"].verdicts
               if v.property.value != "VO")
