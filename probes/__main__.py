"""Command line: ``python -m probes run CAMPAIGN`` / ``matrix`` / ``list`` / ``params``.

Exit status: 0 ok, 1 a harness error occurred (measurement broken, see receipts),
2 bad usage (unknown campaign or parameter, malformed receipt, missing tool).
"""

from __future__ import annotations

import argparse
import sys

from probes import campaigns
from probes.core.campaign import parse_value, run_campaign
from probes.core.errors import HarnessError, ReceiptError, UsageError
from probes.core.runs import backend_identity


def _overrides(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"--param takes NAME=VALUE, got {pair!r}")
        out[name] = parse_value(value)
    return out


def _adapter_campaign(args: argparse.Namespace):
    """A third party's adapter as a campaign: ``--adapter module:Class`` (the conformance kit)."""
    import os

    from probes.kit.suite import kit_campaign

    # children run from the project root: let them import the adapter from where the user is
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    sys.path.insert(0, os.getcwd())
    if args.saver:  # any LangGraph checkpointer, through the kit's LangGraph adapter
        os.environ["RC_KIT_SAVER"] = args.saver
        adapter = "probes.kit.langgraph_saver:SaverAdapter"
        name = args.campaign or args.saver.partition(":")[0].split(".")[0]
        return kit_campaign(name, f"conformance kit: LangGraph with {args.saver}", adapter)
    name = args.campaign or args.adapter.partition(":")[0].split(".")[0]
    return kit_campaign(name, f"conformance kit: {args.adapter}", args.adapter)


def cmd_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.adapter and args.saver:
        raise UsageError("give --adapter or --saver, not both")
    if args.adapter or args.saver:
        campaign = _adapter_campaign(args)
    elif args.campaign:
        campaign = campaigns.get(args.campaign)
    else:
        raise UsageError("name a campaign (python -m probes list) or give --adapter module:Class")
    overrides = _overrides(args.param)
    if args.versions is not None:  # shorthand for -p versions=[...] (atlas, langgraph, drift)
        overrides["versions"] = [v.strip() for v in args.versions.split(",") if v.strip()]
    params = campaign.resolve(overrides, quick=args.quick)
    backend_identity()  # a malformed RC_POSTGRES_DSN is a usage error before any probe
    out = Path(args.out) if args.out else (Path("kit-results") if args.adapter or args.saver else None)
    result = run_campaign(campaign, params, out)
    print(f"{campaign.name}: {len(result.receipts)} receipts ({len(result.ran)} run, "
          f"{len(result.reused)} reused) in {result.directory}")
    for error in result.harness_errors:
        print(f"harness error: {error}", file=sys.stderr)
    return 1 if result.harness_errors else 0


def cmd_matrix(args: argparse.Namespace) -> int:
    from probes.matrix import load_all_verdicts, render_text

    print(render_text(load_all_verdicts()))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for name in campaigns.available():
        print(f"{name:16s} {campaigns.get(name).title}")
    return 0


def cmd_params(args: argparse.Namespace) -> int:
    campaign = campaigns.get(args.campaign)
    for p in campaign.params:
        bounds = p.describe_range()
        print(f"{p.name:20s} {p.kind:12s} default={p.default!r} quick={p.quick!r}"
              f"{f'  [{bounds}]' if bounds else ''}\n    {p.doc}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m probes", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run (or resume) a campaign and write its receipts")
    run.add_argument("campaign", nargs="?", help="a campaign name; with --adapter, the name of the results")
    run.add_argument("--adapter", metavar="MODULE:CLASS",
                     help="run the conformance kit on your own adapter (a probes.kit.adapter.Adapter subclass)")
    run.add_argument("--saver", metavar="MODULE:FACTORY",
                     help="run the kit on LangGraph with your checkpointer: FACTORY(sqlite path or DSN) -> saver")
    run.add_argument("--out", metavar="DIR", help="write results to DIR/<name> (default with --adapter: "
                                                   "./kit-results; otherwise this machine's run directory)")
    run.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE")
    run.add_argument("--quick", action="store_true", help="small bounds (minutes) instead of the paper's")
    run.add_argument("--versions", metavar="X,Y", default=None,
                     help="comma-separated releases (or local wheel/checkout paths) for campaigns with a "
                          "`versions` parameter, e.g. `run atlas --versions 1.2.9,./dist/langgraph.whl`")
    run.set_defaults(func=cmd_run)
    sub.add_parser("matrix", help="print the framework x property matrix from the receipts").set_defaults(func=cmd_matrix)
    sub.add_parser("list", help="list the campaigns").set_defaults(func=cmd_list)
    params = sub.add_parser("params", help="list a campaign's parameters")
    params.add_argument("campaign")
    params.set_defaults(func=cmd_params)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (UsageError, ReceiptError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except HarnessError as exc:
        print(f"harness error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
