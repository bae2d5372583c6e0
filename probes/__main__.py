"""Command line: ``python -m probes run CAMPAIGN`` / ``matrix`` / ``list`` / ``params``.

Exit status: 0 ok, 1 a harness error occurred (measurement broken, see receipts),
2 bad usage (unknown campaign or parameter, malformed receipt, missing tool), 3 a verdict
carries a label named by ``--fail-on`` (a CI job's failure).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Iterator

from probes import campaigns
from probes.core.campaign import parse_value, run_campaign
from probes.core.errors import HarnessError, ReceiptError, UsageError
from probes.core.runs import backend_identity
from probes.kit import junit


def _overrides(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"--param takes NAME=VALUE, got {pair!r}")
        out[name] = parse_value(value)
    return out


def importable_from_here() -> None:
    """Children run from the project root: let them (and this process) import the user's adapter
    from the current directory."""
    import os

    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    sys.path.insert(0, os.getcwd())


def _adapter_campaign(args: argparse.Namespace):
    """A third party's adapter as a campaign: ``--adapter module:Class`` (the conformance kit)."""
    import os

    from probes.kit.suite import kit_campaign

    importable_from_here()
    if args.saver:  # any LangGraph checkpointer, through the kit's LangGraph adapter
        os.environ["RC_KIT_SAVER"] = args.saver
        adapter = "probes.frameworks.langgraph.saver:SaverAdapter"
        name = args.campaign or args.saver.partition(":")[0].split(".")[0]
        return kit_campaign(name, f"conformance kit: LangGraph with {args.saver}", adapter)
    name = args.campaign or args.adapter.partition(":")[0].split(".")[0]
    return kit_campaign(name, f"conformance kit: {args.adapter}", args.adapter)


def cmd_run(args: argparse.Namespace) -> int:
    if args.adapter and args.saver:
        raise UsageError("give --adapter or --saver, not both")
    if args.adapter or args.saver:
        campaign = _adapter_campaign(args)
    elif args.campaign:
        campaign = campaigns.get(args.campaign)
    else:
        raise UsageError("name a campaign (python -m probes list) or give --adapter module:Class")
    overrides = _overrides(args.param)
    if args.smoke:
        from probes.kit.suite import KIT_ADAPTERS, SMOKE

        if campaign.name not in KIT_ADAPTERS:
            raise UsageError(f"--smoke is a profile of the conformance kit's campaigns; {campaign.name} is not one")
        overrides = {**SMOKE, **overrides}
    if args.versions is not None:  # shorthand for -p versions=[...] (atlas, langgraph, drift)
        overrides["versions"] = [v.strip() for v in args.versions.split(",") if v.strip()]
    params = campaign.resolve(overrides, quick=args.quick or args.smoke)
    backend_identity()  # a malformed RC_POSTGRES_DSN is a usage error before any probe
    fail_on = junit.parse_fail_on(args.fail_on) if args.fail_on is not None else None
    junit_path = Path(args.junit_xml) if args.junit_xml else None
    if junit_path is not None and not junit_path.parent.is_dir():
        raise UsageError(f"--junit-xml {junit_path}: directory {junit_path.parent} does not exist; create it first")
    result = run_campaign(campaign, params, _results_root(args))
    print(f"{campaign.name}: {len(result.receipts)} receipts ({len(result.ran)} run, "
          f"{len(result.reused)} reused) in {result.directory}")
    if junit_path is not None:
        junit.write(junit_path, campaign.name, result.receipts, fail_on or junit.DEFAULT_FAIL_ON)
        print(f"JUnit report: {junit_path}")
    for error in result.harness_errors:
        print(f"harness error: {error}", file=sys.stderr)
    if result.harness_errors:
        return 1
    if fail_on is not None:
        bad = junit.failing(result.receipts, fail_on)
        for v in bad:
            print(f"{v.label.value} {v.property.value} {v.path} [{v.backend}]: {v.summary}", file=sys.stderr)
        if bad:
            print(f"{len(bad)} verdict(s) labelled {'/'.join(sorted(x.value for x in fail_on))} (--fail-on)",
                  file=sys.stderr)
            return 3
    return 0


def _results_root(args: argparse.Namespace) -> Path | None:
    """Where results go: ``--out``; a third party's adapter, or an installed copy of the kit (no
    checkout around it), ``./kit-results`` in the current directory -- never inside the installed
    package; a campaign of this checkout, this machine's run directory (``runs/``)."""
    from probes import PROJECT_ROOT

    if args.out:
        return Path(args.out)
    if args.adapter or args.saver or not (PROJECT_ROOT / "reproduce.sh").is_file():
        return Path("kit-results")
    return None


def cmd_matrix(args: argparse.Namespace) -> int:
    from probes.matrix import load_all_verdicts, render_text

    print(render_text(load_all_verdicts()))
    return 0


def cmd_crate(args: argparse.Namespace) -> int:
    from probes.core.crate import crate_copy, profile_problems

    run = Path(args.run)
    if not (run / "_campaign.json").is_file():
        raise UsageError(f"{run} is not a complete run directory (no _campaign.json)")
    path = crate_copy(run, Path(args.out) if args.out else run)
    problems = profile_problems(path.parent)
    print(path)
    for problem in problems:
        print(f"  profile: {problem}", file=sys.stderr)
    return 1 if problems else 0


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
    run.add_argument("--out", metavar="DIR", help="write results to DIR/<name> (default with --adapter or an "
                                                   "installed kit: ./kit-results; in a checkout: runs/)")
    run.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE")
    run.add_argument("--fail-on", metavar="LABELS", default=None,
                     help="exit 3 if any verdict has one of these labels, e.g. '✗,U' (ASCII: x, D, U, na)")
    run.add_argument("--junit-xml", metavar="FILE", default=None,
                     help="also write a JUnit XML report: one test case per property x path x backend; "
                          "failures are the --fail-on labels (default ✗ and U), with witness and citation")
    run.add_argument("--quick", action="store_true", help="small bounds (minutes) instead of the paper's")
    run.add_argument("--smoke", action="store_true",
                     help="kit campaigns: every protocol once (quick, one cell each), for a pull-request check")
    run.add_argument("--versions", metavar="X,Y", default=None,
                     help="comma-separated releases (or local wheel/checkout paths) for campaigns with a "
                          "`versions` parameter, e.g. `run atlas --versions 1.2.9,./dist/langgraph.whl`")
    run.set_defaults(func=cmd_run)
    sub.add_parser("matrix", help="print the framework x property matrix from the receipts").set_defaults(func=cmd_matrix)
    crate = sub.add_parser("crate", help="write a run directory's RO-Crate (ro-crate-metadata.json; Workflow Run "
                                         "Crate profile); --out copies a read-only run (the reference) first")
    crate.add_argument("run", help="a run directory: runs/<campaign>/<run id> or data/reference/<campaign>")
    crate.add_argument("--out", metavar="DIR", default=None, help="write the crate (and the run's files) here")
    crate.set_defaults(func=cmd_crate)
    sub.add_parser("list", help="list the campaigns").set_defaults(func=cmd_list)
    params = sub.add_parser("params", help="list a campaign's parameters")
    params.add_argument("campaign")
    params.set_defaults(func=cmd_params)
    args = parser.parse_args(argv)
    with _sigterm_unwinds():
        try:
            return args.func(args)
        except (UsageError, ReceiptError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except HarnessError as exc:
            print(f"harness error: {exc}", file=sys.stderr)
            return 1


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """SIGTERM unwinds a run like Ctrl-C (``reproduce._exit_on_sigterm``): the servers its campaign
    started (embedded PostgreSQL, a Temporal dev server) are stopped and its scratch is removed."""
    import signal
    import threading

    from probes.reproduce import _exit_on_sigterm

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
