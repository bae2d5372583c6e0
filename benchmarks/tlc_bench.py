"""Benchmark of the TLC campaign's three costs (a script, not a test: timings are never asserted).

1. the reference configuration end to end: ``python -m probes.tla check R0_reference``
   in a fresh interpreter, JVM start included (target: under 3 s);
2. the whole matrix without the scaled bounds: every configuration of
   ``probes.tla.configs.catalogue()`` but the scaled ones, ``--parallel`` TLC
   processes at a time (target: under 3 minutes on 2 cores);
3. the scaled reference (N=10, IP=5, 4 values, 5 resumes, 4 crashes, 4 strays) with
   ``--workers`` threads: distinct states per second (published: 7.4 M distinct
   states in 146 s on 2 cores).

Usage: ``.venv/bin/python benchmarks/tlc_bench.py [--repeat 3] [--skip-matrix] [--skip-scaled]
[--json out.json]``. Report the machine's load with the numbers: on a shared machine
they measure the contention as much as TLC.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from probes import PROJECT_ROOT  # noqa: E402
from probes.tla import configs  # noqa: E402
from probes.tla.runner import run_many, run_tlc  # noqa: E402


def bench_reference(repeat: int) -> dict:
    """Fresh interpreter + JVM + SANY + model checking of R0, as a person would run it."""
    walls = []
    for _ in range(repeat):
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "probes.tla", "check", "R0_reference"], cwd=PROJECT_ROOT,
                              capture_output=True, text=True)
        walls.append(time.monotonic() - started)
        if proc.returncode != 0:
            raise SystemExit(f"reference run failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return {"runs": repeat, "median_s": round(statistics.median(walls), 3), "min_s": round(min(walls), 3),
            "max_s": round(max(walls), 3), "output": proc.stdout.strip()}


def bench_matrix(parallel: int) -> dict:
    cfgs = [c for c in configs.catalogue() if c.tags.get("group") != "scaled"]
    started = time.monotonic()
    results = run_many(cfgs, parallel=parallel)
    wall = time.monotonic() - started
    errors = [f"{r.config}: {r.error}" for r in results if r.result == "error"]
    return {"configurations": len(cfgs), "parallel": parallel, "wall_s": round(wall, 1),
            "sum_of_runs_s": round(sum(r.seconds for r in results), 1), "errors": errors}


def bench_scaled(workers: int, reduction: str) -> dict:
    import tempfile

    from probes.tla.reduction import reduced, with_symmetric_copy

    tla_dir = with_symmetric_copy(Path(tempfile.mkdtemp(prefix="tlc-bench-")) / "tla")
    cfg = configs.scaled(configs.SCALED_BOUNDS) if reduction == "none" else reduced(configs.SCALED_BOUNDS,
                                                                                     kinds=(reduction,))[0]
    res = run_tlc(cfg, workers=workers, heap_mb=3072, timeout=7200, short=False, tla_dir=tla_dir)
    return {"workers": workers, "reduction": reduction, "result": res.result, "generated": res.generated,
            "distinct": res.distinct, "depth": res.depth, "seconds": res.seconds,
            "distinct_per_s": round(res.distinct / res.seconds) if res.distinct else None,
            "generated_per_s": round(res.generated / res.seconds) if res.generated else None,
            "published": {"distinct": 7_400_000, "seconds": 146, "distinct_per_s": round(7_400_000 / 146)},
            "error": res.error}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="reference runs (median reported)")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-matrix", action="store_true")
    parser.add_argument("--skip-scaled", action="store_true")
    parser.add_argument("--reduction", default="view+symmetry", choices=("none", "view", "symmetry", "view+symmetry"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report: dict = {"loadavg_before": os.getloadavg(), "cpus": os.cpu_count()}
    report["reference"] = bench_reference(args.repeat)
    print(f"reference end to end: median {report['reference']['median_s']} s over {args.repeat} runs "
          f"(min {report['reference']['min_s']}, max {report['reference']['max_s']}); target < 3 s", flush=True)
    if not args.skip_matrix:
        report["matrix"] = bench_matrix(args.parallel)
        m = report["matrix"]
        print(f"matrix without scaled: {m['configurations']} TLC runs in {m['wall_s']} s wall "
              f"({m['parallel']} at a time; {m['sum_of_runs_s']} s summed); target < 180 s; errors: {len(m['errors'])}",
              flush=True)
    if not args.skip_scaled:
        report["scaled"] = bench_scaled(args.workers, args.reduction)
        s = report["scaled"]
        print(f"scaled reference ({s['reduction']}): {s['result']}, {s['distinct']} distinct / {s['generated']} generated, depth "
              f"{s['depth']}, {s['seconds']} s with {s['workers']} workers = {s['distinct_per_s']} distinct states/s "
              f"(published 7.4 M in 146 s = {s['published']['distinct_per_s']}/s)", flush=True)
    report["loadavg_after"] = os.getloadavg()
    print(f"load average before {report['loadavg_before']}, after {report['loadavg_after']} on {report['cpus']} CPUs")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
