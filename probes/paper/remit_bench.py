"""REMIT's overhead benchmark's published values, from the ``remit_bench`` campaign's receipts.

This was ``probes.studies.remit.bench``'s own until issue 25 moved it here: the campaign never imports this layer
(measurement does not know which of its cells the paper published)."""

from __future__ import annotations

from typing import Any

from probes.core.receipt import Receipt
from probes.headline import Measured, own_build, recorded_build
from probes.studies.remit.bench import ARM_DOC, concurrency_table, overhead_table


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    table = overhead_table(receipts, bootstrap=500)
    arms = table["arms"]
    if "stock" in arms:
        value: dict[str, Any] = {"stock_interrupt_p50_ms": arms["stock"]["interrupt_ms"]["p50"],
                                 "stock_resume_p50_ms": arms["stock"]["resume_ms"]["p50"]}
        for key, arm in (("fork_intent_pct", "remit_fork"), ("validating_pct", "remit_validator")):
            if arm in arms:
                value[key] = [arms[arm]["interrupt_ms"].get("pct_vs_baseline"),
                              arms[arm]["resume_ms"].get("pct_vs_baseline")]
        for key, arm in (("remit_gate_off_total_pct", "remit_default"), ("remit_gate_on_total_pct", "remit_gate"),
                         ("remit_contract_gate_off_pct", "rc_default"), ("remit_contract_gate_on_pct", "rc_gate")):
            if arm in arms:
                value[key] = arms[arm]["total_ms"].get("pct_vs_baseline")
        stock_p50 = arms["stock"]["total_ms"]["p50"]
        why = (f"another machine: this run's stock protocol takes {stock_p50:.1f} ms at p50 (compare the published "
               "stock interrupt and resume p50 beside it), so a fixed per-resume cost is a different fraction of it; "
               "percentages are paired medians of this run against stock in the same worker process and environment "
               "(remit-contract included), bootstrap intervals in the chapter")
        if "remit_gate" in arms:
            delta = arms["remit_gate"]["resume_ms"]["p50"] - arms["stock"]["resume_ms"]["p50"]
            value["remit_gate_resume_delta_ms"] = round(delta, 3)
            why += (f"; the gate adds one claim statement per resume, committed without a flush of its own: "
                    f"{delta:+.2f} ms at p50 on a {arms['stock']['total_ms']['p50']:.1f} ms protocol")
        out["remit.overhead"] = Measured(
            value, tolerance=0.05,
            why=why,
            compare_keys=tuple(k for k in ("fork_intent_pct", "validating_pct") if k in value),
            receipts=tuple(sorted(r.probe for r in receipts if r.probe.startswith("overhead."))))
    if "remit_fork" in arms or "remit_validator" in arms:
        # the published fork-intent and validating savers are measured on this project's arms of them
        out["remit.overhead"].build = own_build("remit_ref", [r for r in receipts if r.probe.startswith("overhead.")])
    paper_arms = [a for a in ("rc_default", "rc_validator") if a in arms]
    if paper_arms:
        pcts = {f"{a}/{leg}": arms[a][f"{leg}_ms"].get("pct_vs_baseline") for a in paper_arms
                for leg in ("interrupt", "resume")}
        out["remit.overhead_container"] = Measured(
            {"within_5_pct": all(p is not None and abs(p) <= 5.0 for p in pcts.values()), "pct_vs_stock": pcts},
            why=(f"the paper's build without its gate ({', '.join(ARM_DOC[a] for a in paper_arms)}), p50 against "
                 "stock in the same worker process, on this run's machine (its manifest records the platform, not "
                 "whether it is a container)"
                 + (f"; with the gate on, remit-contract's resume p50 is "
                    f"{arms['rc_gate']['resume_ms'].get('pct_vs_baseline'):+.1f} % against stock" if "rc_gate" in arms
                    else "")),
            receipts=tuple(sorted(r.probe for r in receipts if r.probe.startswith("overhead."))),
            build=recorded_build([r for r in receipts if r.probe.startswith("overhead.")], "remit-contract",
                                 "remit_ref"))
    conc = concurrency_table(receipts)
    if conc:
        conc_receipts = [r for r in receipts if r.probe.startswith("concurrency.")]
        flat = _throughput_flatness(conc, "rc_gate")
        if flat is not None:
            out["remit.throughput_flat"] = Measured(
                flat, why=(f"'flat' read as: at every k the throughput is within ±{FLAT_WITHIN:.0%} of k=1's, on "
                           "every backend, for the paper's build with its gate (remit-contract, arm rc_gate); the "
                           "ratios to k=1 are in throughput_vs_k1"),
                receipts=tuple(sorted(r.probe for r in conc_receipts)),
                build=recorded_build(conc_receipts, "remit-contract", "remit_ref"))
    return out


FLAT_WITHIN = 0.10  # "throughput flat in k": every k within ±10 % of k=1 (the reading, stated beside the result)


def _throughput_flatness(conc: list[dict[str, Any]], arm: str) -> dict[str, Any] | None:
    """Throughput of ``arm`` at every k relative to k=1, per backend, and whether all are within ``FLAT_WITHIN``."""
    ratios: dict[str, dict[str, float]] = {}
    for backend in sorted({c["backend"] for c in conc}):
        cells = {c["k"]: c["throughput_per_s"] for c in conc if c["arm"] == arm and c["backend"] == backend}
        if 1 in cells and cells[1] and len(cells) > 1:
            ratios[backend] = {str(k): round(v / cells[1], 3) for k, v in sorted(cells.items())}
    if not ratios:
        return None
    return {"throughput_flat_in_k": all(abs(r - 1) <= FLAT_WITHIN for b in ratios.values() for r in b.values()),
            "throughput_vs_k1": ratios}
