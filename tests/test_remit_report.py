"""The benchmark chapter's sentences are computed from the measured tables: each one changes when the
numbers do (a target met, missed or not distinguishable), and an arm the run did not measure says nothing."""

from __future__ import annotations

from typing import Any

from probes.studies.remit import bench_report


def _arm(ratio: float, ci: list[float], paired: float, resume_p50: float) -> dict[str, Any]:
    return {"total_ms": {"ratio": ratio, "ratio_ci95": ci, "paired_ratio": paired, "paired_ratio_ci95": ci},
            "resume_ms": {"p50": resume_p50}}


def test_cost_findings_follow_the_measured_ratios() -> None:
    table = {"arms": {"stock": {"total_ms": {}, "resume_ms": {"p50": 2.0}},
                      "remit_default": _arm(1.005, [0.99, 1.009], 1.004, 2.05),
                      "remit_gate": _arm(1.02, [1.0, 1.05], 1.021, 2.25)},
             "pairs": {"remit_gate/rc_gate": {"ratio": 0.9, "ratio_ci95": [0.85, 0.95]}}}
    lines = bench_report.cost_findings(table)
    assert lines[0].startswith("`remit_default`: total p50 1.005x stock [0.990, 1.009] (median of the paired "
                               "ratios 1.004") and lines[0].endswith("target <= 1.01: met.")
    assert lines[1].endswith("target <= 1.03: met at the median, not over the whole interval.")
    assert "The gate adds +200 us to the resume p50 (2.050 -> 2.250 ms)" in lines[2]
    assert lines[3] == "`remit_gate/rc_gate`: 0.900 [0.850, 0.950], REMIT faster."
    table["arms"]["stock"]["cpu_ms"] = {"p50": 4.0}
    table["arms"]["remit_gate"]["cpu_ms"] = {"p50": 4.25, "paired_ratio": 1.06, "paired_ratio_ci95": [1.05, 1.07]}
    assert bench_report.cost_findings(table)[3] == (
        "CPU time per protocol (every thread, no waiting for the disk), p50: "
        "stock 4.000 ms; `remit_gate` +0.250 ms, 1.060x paired [1.050, 1.070].")
    table["arms"]["stock_again"] = _arm(0.996, [0.97, 1.021], 0.997, 2.0)
    assert bench_report.cost_findings(table)[2] == (
        "Noise floor: `stock_again`, the stock protocol as an arm of its own, "
        "measures 0.996x stock [0.970, 1.021] in this run, where the true ratio "
        "is 1: a difference within 3.0 % of stock is not resolved by this run.")
    del table["arms"]["stock_again"]
    table["arms"]["remit_default"] = _arm(1.02, [1.011, 1.03], 1.02, 2.05)
    assert bench_report.cost_findings(table)[0].endswith("target <= 1.01: missed.")
    del table["arms"]["remit_gate"]
    assert not any("remit_gate`" in line or "gate adds" in line for line in bench_report.cost_findings(table)[:-1])


def _cell(backend: str, arm: str, k: int, ratio: float, ci: list[float], once: bool = True) -> dict[str, Any]:
    return {"backend": backend, "arm": arm, "k": k, "throughput_vs_stock": ratio, "throughput_vs_stock_ci95": ci,
            "exactly_once": once}


def test_throughput_findings_tell_met_below_and_clearly_below() -> None:
    rows = [{"backend": "sqlite", "arm": "stock", "k": 1, "throughput_vs_stock": None, "exactly_once": True},
            _cell("sqlite", "remit_gate", 1, 0.99, [0.97, 1.01]), _cell("sqlite", "remit_gate", 4, 0.96, [0.9, 1.0]),
            _cell("postgres", "remit_gate", 1, 0.94, [0.9, 0.99]),
            _cell("postgres", "remit_gate", 4, 0.90, [0.85, 0.93], once=False)]
    pg, sq = bench_report.throughput_findings(rows)
    assert sq == ("sqlite `remit_gate`: throughput x stock k=1 0.990, k=4 0.960; target >= 0.95: met at every k; "
                  "exactly-once in 2 of 2 cells.")
    assert pg == ("postgres `remit_gate`: throughput x stock k=1 0.940, k=4 0.900; target >= 0.95: below at 2 of 2 k "
                  "(1, 4), clearly (interval under 0.95) at k=4; exactly-once in 1 of 2 cells.")
    rows[-1] = _cell("postgres", "remit_gate", 4, 0.90, [0.85, 0.96])
    assert bench_report.throughput_findings(rows)[0].endswith("(1, 4), each interval reaching 0.95; exactly-once in "
                                                              "2 of 2 cells.")
