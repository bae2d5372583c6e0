"""What a VIEW and value symmetry buy the reference semantics (a script: times are measured, never asserted).

Four runs of the reference configuration at the same bounds, one TLC worker each:
``full`` (no reduction), ``view`` (``VIEW StateView``: the order of later resumes
and the resume writes forgotten -- sound for these invariants, see the comment at
``StateView`` in tla/ResumePlane.tla), ``symmetry`` (the resume values permuted;
TLC's SYMMETRY needs model values, so this run uses a copy of the module with
``Values`` a set of model values and ``Out(v) == <<"f", v>>`` -- the same state graph
up to renaming the values), and ``view+symmetry``.

Sound? Symmetry: every action and every invariant treats values only through
equality and f, so a permutation of the values maps behaviours to behaviours and
keeps each invariant's truth -- sound for the safety invariants (TLC documents that
symmetry may miss liveness violations, so not for R6). The view: a bisimulation on the
reference's reachable states (argument in the module).

Usage: ``.venv/bin/python benchmarks/tlc_reduction.py [--bounds 6 3 3 4 2 2] [--json out.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from probes.tla.reduction import REDUCTIONS, reduced, with_symmetric_copy  # noqa: E402
from probes.tla.runner import run_tlc  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bounds", type=int, nargs=6, default=[6, 3, 3, 4, 2, 2])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    tla = Path(tempfile.mkdtemp(prefix="tlc-reduction-"))
    try:
        with_symmetric_copy(tla)
        runs = dict(zip(REDUCTIONS, reduced(args.bounds)))
        report = {"bounds": args.bounds, "workers": args.workers, "loadavg_before": os.getloadavg(), "runs": {}}
        for name, cfg in runs.items():
            res = run_tlc(cfg, workers=args.workers, tla_dir=tla, heap_mb=3072, timeout=7200, short=False)
            report["runs"][name] = {"result": res.result, "violated": res.violated, "error": res.error,
                                    "generated": res.generated, "distinct": res.distinct, "depth": res.depth,
                                    "seconds": res.seconds}
            print(f"{name:14s} {res.result:8s} {res.distinct} distinct / {res.generated} generated, depth {res.depth}, "
                  f"{res.seconds:.1f} s {res.error or ''}", flush=True)
        full = report["runs"]["full"]["distinct"]
        for name, r in report["runs"].items():
            r["reduction"] = round(full / r["distinct"], 2) if full and r["distinct"] else None
        report["loadavg_after"] = os.getloadavg()
        print(json.dumps({k: v["reduction"] for k, v in report["runs"].items()}))
        if args.json:
            args.json.write_text(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(tla, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
