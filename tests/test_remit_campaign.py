"""The remit and remit_bench campaigns end to end on small bounds (real LangGraph, real REMIT)."""

from __future__ import annotations

from pathlib import Path

import nbformat

from probes.core.campaign import run_campaign
from probes.remit.bench import CAMPAIGN as BENCH, concurrency_table, overhead_table
from probes.remit.campaign import CAMPAIGN as REMIT, row

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
    assert measured["FD"] == "✓" and measured["CV"] == "✓" and measured["EO"] == "✓"
    frameworks = {v.framework for r in a.receipts for v in r.verdicts}
    assert frameworks == {"langgraph+remit", "langgraph+remit-contract"}  # the paper's build, same probes
    assert row(a.receipts, "langgraph+remit-contract")["FD"] == "✓"
    model = next(r for r in a.receipts if r.probe == "verify.model").observations
    assert model["conformance"]["conforms"] and model["conformance"]["states"] > 50
    obs = {r.probe: r.observations for r in a.receipts}
    assert obs["verify.stateful.memory"]["holds"] and obs["verify.stateful.memory"]["steps"] > 0
    assert obs["verify.lg_conformance.memory"]["remit_passes_all_stock_passes"]


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


def test_bench_campaign_counted_part_small(tmp_path: Path) -> None:
    """The counted part alone, through the campaign: two arms, each in its own valgrind and strace processes,
    two runs of two protocols; the chapter's table comes from the receipts."""
    from probes.remit import report
    from probes.remit.counted import counted_table

    params = BENCH.resolve(dict(parts=["counted"], counted_arms=["stock", "remit_bare"], counted_protocols=2,
                                counted_runs=2), quick=True)
    run = run_campaign(BENCH, params, receipts_root=tmp_path)
    assert not run.harness_errors, run.harness_errors
    assert [r.probe for r in run.receipts] == ["counted.sqlite"]
    table = counted_table(run.receipts)["sqlite"]
    assert table["stock"]["ratio"] == 1.0 and 0.9 < table["remit_bare"]["ratio"] < 1.2
    assert all(len(e["per_run"]) == 2 and e["instructions"]["median"] > 1e6 for e in table.values())
    assert table["stock"]["syscalls"]["fdatasync"] > 0 and table["stock"]["syscalls"]["pwrite64"] > 0
    assert report.counted_findings({"sqlite": table})[0].startswith("sqlite `remit_bare`: ")
    assert len(report.counted_annotation({"sqlite": table}, "sqlite", "remit_bare")) > 0


def test_notebook_parameters_match_campaigns() -> None:
    for campaign in (REMIT, BENCH):
        nb = nbformat.read(ROOT / "notebooks" / f"{campaign.name}.ipynb", as_version=4)
        cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        names = {}
        exec(cell.source, {}, names)  # noqa: S102 - our own notebook's literal assignments
        assert names == {p.name: p.default for p in campaign.params}
