"""DBOS 2.27.0 probes against the real engine (a subset of the quick profile)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from probes.core.backends import StoreFactory
from probes.core.campaign import ProbeContext, ProbeSpec
from probes.core.errors import UsageError
from probes.core.receipt import Receipt
from probes.dbos.campaign import CAMPAIGN, latency_stats, plan


def _run(spec: ProbeSpec, tmp_path: Path, **overrides):
    params = CAMPAIGN.resolve(overrides, quick=True)
    with contextlib.ExitStack() as stack:
        ctx = ProbeContext(tmp_path / "work", StoreFactory(tmp_path / "stores", stack), 11, params)
        ctx.workdir.mkdir(parents=True)
        return CAMPAIGN.run_probe(spec, ctx)


def test_plan_and_parameter_errors() -> None:
    with pytest.raises(UsageError, match="kill_points"):
        CAMPAIGN.resolve({"kill_points": ["nowhere"]})
    with pytest.raises(UsageError, match="poll_ms_extra"):
        plan(CAMPAIGN.resolve({"poll_ms_extra": [0]}, quick=True))
    ids = [s.id for s in plan(CAMPAIGN.resolve())]
    assert "protocol.after_s1.rep2" in ids and "latency.default" in ids and "latency.poll-100ms" in ids


def test_latency_stats_ratio_and_seeded_bootstrap() -> None:
    d = [100.0, 110.0, 90.0, 105.0, 95.0]
    g = [10.0, 11.0, 9.0, 10.5, 9.5]
    a = latency_stats(d, g, seed=3, resamples=200)
    assert a["dbos_p50_ms"] == 100.0 and a["langgraph_p50_ms"] == 10.0
    assert a["ratio_of_medians"] == 10.0
    assert a["ratio_ci95"][0] <= 10.0 <= a["ratio_ci95"][1]
    assert latency_stats(d, g, seed=3, resamples=200) == a  # seeded: reproducible


def test_crash_in_recv_fork_and_stray(tmp_path: Path) -> None:
    res = _run(ProbeSpec("protocol.in_recv.rep0", {"kill": "in_recv", "rep": 0}), tmp_path)
    assert res.harness_errors == []
    assert res.observations["crash"]["ledger"] == {"s1": 1}
    assert res.observations["ledger_after_recover"] == {"gate": 1, "s1": 1}
    assert res.observations["fork"]["fork_result"] == 21 and res.observations["fork"]["original_result"] == 11
    assert res.observations["gate_by_value"] == {"gate[v=1]": 1, "gate[v=2]": 1}
    labels = {(v.property.value, v.path): v.label.value for v in res.verdicts}
    assert set(labels.values()) == {"✓"}, labels
    assert {p for p, _ in labels} == {"EO", "PC", "FD", "CO", "LV"}
    receipt = Receipt("dbos", "protocol.in_recv.rep0", {}, {"fingerprint": "t"}, res.observations, res.verdicts,
                      res.metrics, res.harness_errors)
    assert CAMPAIGN.headlines([receipt])["dbos.row"].value == {"CO": "✓", "EO": "✓", "FD": "✓", "PC": "✓"}


def test_concurrent_answers_consume_one(tmp_path: Path) -> None:
    res = _run(ProbeSpec("concurrent.rep0", {"senders": 2, "rep": 0}), tmp_path)
    assert res.harness_errors == []
    assert res.observations["ledger"] == {"gate": 1, "s1": 1}
    assert res.observations["unconsumed"] == 1
    # CO (the gate fired once) and LV (the parked workflow completed with one sender's f(v))
    assert [(v.property.value, v.label.value) for v in res.verdicts] == [("CO", "✓"), ("LV", "✓")]


def test_latency_pairs_measure_both_arms(tmp_path: Path) -> None:
    res = _run(ProbeSpec("latency.poll-50ms", {"n": 3, "poll_ms": 50}), tmp_path, think_ms_max=100, bootstrap=50)
    assert res.harness_errors == []
    s = res.metrics["samples"]
    assert len(s["dbos_ms"]) == 3 and len(s["langgraph_ms"]) == 3
    assert all(x > 0 for x in s["dbos_ms"] + s["langgraph_ms"])
    assert res.metrics["summary"]["n"] == 3
    assert res.verdicts == []  # timings never become verdicts
