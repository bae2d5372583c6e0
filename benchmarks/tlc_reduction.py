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
import re
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from probes.tla import configs  # noqa: E402
from probes.tla.runner import run_tlc  # noqa: E402


def symmetric_copy(directory: Path) -> None:
    """ResumePlaneSym.tla: ResumePlane with model values, and a wrapper defining the permutations."""
    text = (configs.TLA_DIR / "ResumePlane.tla").read_text()
    text = text.replace("MODULE ResumePlane ", "MODULE ResumePlaneSym ")
    text = text.replace("    NV,          \\* number of distinct resume values; V = 1..NV",
                        "    NV,          \\* number of distinct resume values\n    VSet,        \\* the values")
    text = text.replace("Values == 1..NV", "Values == VSet")
    text = text.replace("Out(v) == v + NV", 'Out(v) == <<"f", v>>')
    text = text.replace('None   == 0 ', 'None   == "none" ')
    text = text.replace("out : Nat, branch : BOOLEAN]", "out : {Out(x) : x \\in Values}, branch : BOOLEAN]")
    if text.count("VSet") < 2 or "<<\"f\", v>>" not in text:
        raise SystemExit("the symmetric copy did not apply; update benchmarks/tlc_reduction.py")
    (directory / "ResumePlaneSym.tla").write_text(text)
    (directory / "ResumePlaneSymRun.tla").write_text(
        "---- MODULE ResumePlaneSymRun ----\nEXTENDS ResumePlaneSym, TLC\nPerms == Permutations(VSet)\n====\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bounds", type=int, nargs=6, default=[6, 3, 3, 4, 2, 2])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    base = configs.reference(args.bounds, name="reduction")
    tla = Path(tempfile.mkdtemp(prefix="tlc-reduction-"))
    try:
        for path in configs.TLA_DIR.glob("*.tla"):
            shutil.copy2(path, tla / path.name)
        symmetric_copy(tla)
        nv = dict(base.constants)["NV"]
        sym_consts = base.constants + (("VSet", "{" + ", ".join(f"v{i}" for i in range(1, nv + 1)) + "}"),)
        runs = {
            "full": base,
            "view": replace(base, view="StateView"),
            "symmetry": replace(base, module="ResumePlaneSymRun", constants=sym_consts, symmetry="Perms"),
            "view+symmetry": replace(base, module="ResumePlaneSymRun", constants=sym_consts, symmetry="Perms",
                                     view="StateView"),
        }
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
