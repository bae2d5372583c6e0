"""The DBOS latency study: answer sent -> gated effect durable, DBOS beside stock LangGraph.

Not a conformance cell: a timing, which the paper publishes as the price of DBOS's guarantees
(``dbos.latency_ratio``, read from these receipts by ``probes.paper.dbos``). It runs on the same
runner as the paper campaign's conformance probes, as a protocol of that campaign only
(``latency``; ``STUDY``), one probe per DBOS notification-polling setting: the stock setting
(``latency.default``) and each of ``poll_ms_extra`` (``latency.poll-<ms>ms``). Its method is the
legacy campaign's, unchanged: ``latency_n`` paired trials in one worker process
(``probes.frameworks.dbos.latency_app``), the order within each pair drawn from a seed, a seeded think
time before each answer (the same for both arms of a pair), one unrecorded warm-up per arm; then
medians, p95s and the ratio of medians with a seeded paired bootstrap 95 % interval
(``latency_stats``). A probe records its samples and summary in its observations
(``latency``) and decides no verdict.

The worker runs with the interpreter the campaign's adapter operations run with
(``Target.python``): under version drift, that release's environment, where LangGraph stays at
the lock's release (``probes/studies/drift/targets.py``).
"""

from __future__ import annotations

import random
from typing import Any, Mapping

from probes.core.campaign import Param, ProbeSpec, seed_for
from probes.core.checker import Verdict
from probes.core.errors import HarnessError
from probes.core.nemesis import run_child
from probes.core.oracle import Ledger, cross_check
from probes.kit.protocols import Probe
from probes.kit.suite import Protocol

NAME = "latency"
WORKER = "probes.frameworks.dbos.latency_app:latency_pairs"
WORKER_TIMEOUT = 600.0  # 30 pairs take about a minute on an idle 2-core machine; a loaded one is slower
DEFAULT = "default"  # the probe with DBOS's own polling interval

PARAMS: tuple[Param, ...] = (
    Param("latency_n", "int", 30, 8, "paired latency trials per latency probe (DBOS and LangGraph each)", minimum=2),
    Param("poll_ms_extra", "list[int]", [100], [], "extra latency probes with DBOS's SQLite notification "
          "polling interval set to these ms (the stock probe leaves DBOS's default; DBOS's minimum is 1 ms)",
          minimum=1, allow_empty=True),
    Param("think_ms_max", "int", 1000, 1000, "seeded idle before each answer, uniform in [0, this] ms, same for "
          "both arms of a pair: answers arrive at random phases of DBOS's notification poller", minimum=0),
    Param("bootstrap", "int", 2000, 500, "bootstrap resamples for the spread of the latency ratio", minimum=1),
)


def plan(params: Mapping[str, Any], backend: str) -> list[ProbeSpec]:
    """The study's probes when ``latency`` is among the protocols: the stock polling setting, then
    each extra one. Planned once (not per repetition: ``latency_n`` is its sample size), each with a
    seed of its own derived from the campaign seed, for its pair order, think times and bootstrap."""
    if NAME not in params["protocols"]:
        return []
    settings: list[int | None] = [None, *params["poll_ms_extra"]]
    specs = []
    for ms in settings:
        label = DEFAULT if ms is None else f"poll-{ms}ms"
        specs.append(ProbeSpec(f"{NAME}.{label}.{backend}.rep1", {
            "protocol": NAME, "backend": backend, "rep": 1, "poll_ms": ms, "n": params["latency_n"],
            "think_ms_max": params["think_ms_max"], "bootstrap": params["bootstrap"],
            "seed": seed_for(int(params["seed"]), NAME, label)}))
    return specs


def latency_stats(dbos_ms: list[float], lg_ms: list[float], seed: int, resamples: int) -> dict[str, Any]:
    """Medians, p95s and the ratio of medians with a seeded paired bootstrap 95 % interval."""
    import numpy as np

    d, g = np.asarray(dbos_ms), np.asarray(lg_ms)
    ratio = float(np.median(d) / np.median(g))
    rng = random.Random(seed)
    n = len(d)
    boots = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        boots.append(float(np.median(d[idx]) / np.median(g[idx])))
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return {
        "n": n,
        "dbos_p50_ms": round(float(np.median(d)), 3),
        "dbos_p95_ms": round(float(np.percentile(d, 95)), 3),
        "langgraph_p50_ms": round(float(np.median(g)), 3),
        "langgraph_p95_ms": round(float(np.percentile(g, 95)), 3),
        "ratio_of_medians": round(ratio, 3),
        "ratio_ci95": [round(float(lo), 3), round(float(hi), 3)],
        "bootstrap_resamples": resamples,
        "bootstrap_seed": seed,
    }


def latency(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """One latency probe: the paired trials in a worker process, checked (every trial fired each
    arm's two effects once, both oracles agreeing), summarised into ``observations["latency"]``.
    Timings never become verdicts: it returns none."""
    ledger_path = p.root / "latency-ledger.sqlite"
    sysdb, lg_db = p.store("latency-dbos-sys"), p.store("latency-langgraph")
    if sysdb is None or lg_db is None:
        raise HarnessError(f"the latency study times SQLite stores; backend {p.target.backend} has none")
    poll_ms = args["poll_ms"]
    out = run_child(WORKER, {"ledger": str(ledger_path), "sysdb": sysdb, "lg_db": lg_db, "n": args["n"],
                             "seed": args["seed"], "poll_interval_s": None if poll_ms is None else poll_ms / 1000.0,
                             "think_ms_max": int(args["think_ms_max"])},
                    timeout=WORKER_TIMEOUT, python=p.target.python)
    result = out.require_ok()
    ledger = Ledger(ledger_path)
    cross_check(result["oracle"], ledger, "latency")
    counts = ledger.counts()
    p.observations["framework_versions"] = result["versions"]
    p.observations["latency"] = {
        "dbos_poll_interval": "DBOS default" if poll_ms is None else f"{poll_ms} ms",
        "effects": counts,
        "samples": {"dbos_ms": [round(x, 3) for x in result["dbos_ms"]],
                    "langgraph_ms": [round(x, 3) for x in result["langgraph_ms"]],
                    "first_arm": result["order"], "think_ms": result["think_ms"]},
        "summary": latency_stats(result["dbos_ms"], result["langgraph_ms"], args["seed"], int(args["bootstrap"])),
    }
    # the judge decided nothing: an empty log says so, and a re-judge of the receipt recomputes no verdict
    p.observations["judged"] = []
    trials = args["n"] + 1  # plus one warm-up trial per arm
    if counts != {"gate": trials, "s1": trials, "lg.gate": trials, "lg.s1": trials}:
        raise HarnessError(f"latency trials fired unexpected effects: {counts}")
    return []


STUDY: dict[str, Protocol] = {NAME: latency}
