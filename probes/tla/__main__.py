"""``python -m probes.tla``: check one configuration by name, list them, refresh ``tla/cfg/``.

Exit status: 0 the model satisfies what the configuration checks, 1 TLC found a
violation (or deadlock), 2 TLC could not check it (no Java, parse or configuration
error, bad constant) -- with one line on stderr saying what to fix.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from probes.core.campaign import parse_value
from probes.core.errors import UsageError
from probes.tla import configs
from probes.tla.configs import TLA_DIR


def _find(name: str) -> configs.TlcConfig:
    for cfg in configs.catalogue():
        if cfg.name == name:
            return cfg
    raise UsageError(f"unknown configuration {name!r}; list them with: python -m probes.tla list")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m probes.tla", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="run TLC on one configuration")
    check.add_argument("name")
    check.add_argument("--workers", type=int, default=1)
    check.add_argument("--tla-dir", type=Path, default=TLA_DIR, help="directory holding the .tla modules")
    check.add_argument("--set", action="append", default=[], metavar="CONSTANT=VALUE",
                       help="override a constant (e.g. N=10)")
    check.add_argument("--trace", action="store_true", help="print the counterexample")
    sub.add_parser("list", help="list the configurations")
    sub.add_parser("write-configs", help="refresh tla/cfg/*.cfg from probes/tla/configs.py")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            for cfg in configs.catalogue():
                print(f"{cfg.name:40s} {cfg.title}")
            return 0
        if args.command == "write-configs":
            print(f"wrote {len(configs.write_all())} configurations to {configs.CFG_DIR}")
            return 0
        from probes.tla.runner import run_tlc

        cfg = _find(args.name)
        consts = dict(cfg.constants)
        for pair in args.set:
            key, sep, value = pair.partition("=")
            if not sep or key not in consts:
                raise UsageError(f"--set takes CONSTANT=VALUE with a constant of {cfg.module} "
                                 f"({', '.join(consts)}), got {pair!r}")
            consts[key] = parse_value(value)
        cfg = replace(cfg, constants=tuple(consts.items()))
        res = run_tlc(cfg, workers=args.workers, tla_dir=args.tla_dir, short=cfg.tags.get("group") != "scaled",
                      heap_mb=3072 if cfg.tags.get("group") == "scaled" else 1024, timeout=7200)
    except UsageError as exc:  # includes TlcError: no Java, no jar
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if res.result == "error":
        print(f"error: {res.error}", file=sys.stderr)
        return 2
    what = f"{res.violated} violated at depth {res.depth}" if res.result in ("violated", "deadlock") else "holds"
    print(f"{cfg.name}: {what}; {res.generated} states generated, {res.distinct} distinct, "
          f"depth {res.depth} ({res.seconds:.1f} s)")
    if args.trace:
        for state in res.trace:
            print(f"  {state.index}: {state.action}")
            for var, value in state.values.items():
                print(f"      {var} = {value}")
    return 0 if res.result == "holds" else 1


if __name__ == "__main__":
    sys.exit(main())
