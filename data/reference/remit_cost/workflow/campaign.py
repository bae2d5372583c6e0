"""Campaign ``remit_cost``: what REMIT costs, counted rather than timed.

Instructions per protocol under valgrind's cachegrind and durable-write syscalls under strace
for every arm of the benchmark, on SQLite and PostgreSQL (``probes/studies/remit/counted.py`` says how).
Counts do not depend on what else the machine runs, so this campaign does not run alone: under
``--jobs N`` it shares the machine, where ``remit_bench``'s wall-clock ratios cannot. It is this
project's measurement of REMIT (the cost floor of the package), not one of the paper's, so a plain
``./reproduce.sh`` leaves it out: ``--all`` or ``--only remit_cost``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.receipt import ProbeResult
from probes.studies.remit import counted
from probes.studies.remit.bench import ARM_DOC, CAMPAIGN as BENCH

ARM_NAMES = tuple(counted.COUNT_ARMS)

PARAMS = (
    Param("counted_protocols", "int", 100, 5, "protocols per counted run (cachegrind and strace; start-up subtracted)",
          minimum=1),
    Param("counted_runs", "int", 3, 1, "counted runs per arm and backend (median and range reported)", minimum=1),
    Param("counted_arms", "list[str]", list(ARM_NAMES), ["stock", "remit_bare", "remit_gate"],
          "arms counted under cachegrind and strace", ARM_NAMES),
    Param("counted_jobs", "int", 2, 2, "counted arms measured at once (each in its own process; counts do not "
          "depend on load)", minimum=1),
    Param("counted_backends", "list[str]", ["sqlite", "postgres"], ["sqlite"],
          "backends counted", ("sqlite", "postgres")),
    Param("seed", "int", 0, 0, "base seed (recorded; counting draws nothing at random, and every counted process "
          "runs with PYTHONHASHSEED fixed, counted.HASH_SEED)"),
)


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    return [ProbeSpec(f"counted.{b}", {"kind": "counted", "backend": b}) for b in params["counted_backends"]]


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Instructions and durable-write syscalls per protocol of every counted arm on one backend:
    each arm in its own processes, ``counted_jobs`` arms at a time."""
    res = ProbeResult()
    backend = spec.args["backend"]
    arms = list(ctx.params["counted_arms"])
    locations = {a: str(ctx.workdir / a) if backend == "sqlite" else ctx.stores.fresh(backend, f"counted-{a}").location
                 for a in arms}

    def one(arm: str) -> tuple[str, dict[str, Any] | None, str | None]:
        workdir = ctx.workdir / arm
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            return arm, counted.probe_counted(arm, backend, locations[arm], workdir, ctx.params), None
        except (counted.CountError, OSError, ValueError) as exc:
            return arm, None, f"counted {backend} {arm}: {exc}"[:600]

    with ThreadPoolExecutor(max_workers=ctx.params["counted_jobs"]) as pool:
        results = list(pool.map(one, arms))
    res.metrics = {"backend": backend, "arms": {a: m for a, m, _e in results if m is not None}}
    res.harness_errors = [e for _a, _m, e in results if e is not None]
    res.observations = {"arms": {a: counted.COUNT_DOC.get(a, ARM_DOC.get(a, a)) for a in arms},
                        "postgres_server": "excluded: only the client process and its descendants are counted"
                        if backend == "postgres" else None}
    return res


CAMPAIGN = Campaign(
    name="remit_cost",
    title="REMIT's counted cost: instructions and durable writes per protocol",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    in_default_run=False,
    packages=BENCH.packages,
    sources=BENCH.sources,
)
