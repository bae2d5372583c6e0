"""The driver behind ``./reproduce.sh``: measure on this machine, then build the book.

``reproduce.sh`` only makes sure the environment exists; everything else is here,
where the tests reach it. Every run measures into its own local run directory
(``runs/<campaign>/<profile>-<fingerprint>/``, see ``probes.core.runs``), beside the
committed reference run in ``data/reference/`` and beside every earlier run, never over
them. All input is validated before anything is run or written. A campaign is skipped
when its run directory is complete for the same inputs *and* its chapter was executed
from the same notebook with the same parameters -- so killing this script and starting
it again never reruns finished work, and the campaign that was interrupted resumes
probe by probe.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

from probes import campaigns, schedules
from probes.core.atomic import atomic_write_json
from probes.core.campaign import Campaign, is_complete, parse_value, results_dir
from probes.core.errors import ReceiptError, UsageError
from probes.core.crate import CRATE_NAME, write_crate_after_run
from probes.core.receipt import INDEX_NAME, load_receipt
from probes.core.runs import CHAPTER_META, CHAPTER_NAME, backend_identity, campaign_fingerprint, profile_of, run_id
from probes.execute import execute_notebook, notebook_path, stop_kernels

USAGE = """usage: ./reproduce.sh [--quick] [--all | --only NAME[,NAME...]] [-p NAME VALUE]... [--jobs N] [--no-book]
       ./reproduce.sh --book-only | --list | promote [--only NAME[,NAME...]] | render-reference [--only ...]
       ./reproduce.sh test [PYTEST ARGS...]
       ./reproduce.sh mutate [TARGET...] [--jobs N]

  (no options)   measure every campaign on this machine with the paper's parameters, then build the book
  --quick        small bounds (minutes) instead of the paper's parameters (a "quick" run)
  --only NAMES   run only these campaigns (comma-separated); see --list
  --all          also the campaigns beyond the paper that a plain run leaves out (marked in --list)
  -p NAME VALUE  set a notebook parameter (a Python/JSON literal, e.g. -p jitter_ms '[0, 50]'):
                 a "variant" run, kept beside the default run, never over it
  --jobs N       measure up to N independent campaigns at once (default: the cores this machine has);
                 timing-sensitive campaigns (benchmarks, races) still run alone and say so
  --no-book      measure but do not build the book
  --book-only    measure nothing: build the book from the newest local runs, else the reference run
  --list         list the campaigns and exit
  render-reference  (maintainers) re-execute the reference run's chapters with the current notebooks
                 over its own receipts, measuring nothing (after a notebook changed)
  promote        (maintainers) make the newest complete default run on this machine the committed
                 reference run; refuses local changes, harness errors or a stale fingerprint
  test           run the test suite
  mutate         mutation testing of mutation/<target>.toml (cosmic-ray); exit 1 on a non-equivalent survivor
Results: runs/<campaign>/<run id>/ (local, git-ignored); data/reference/<campaign>/ (committed, read-only)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, the usage, exit 2
        raise UsageError(message)


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"--jobs takes a whole number of campaigns at once (>= 1), got {text!r}") from None
    if value < 1:
        raise UsageError(f"--jobs must be >= 1, got {value}")
    return value


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = _Parser(prog="./reproduce.sh", add_help=False, usage=USAGE)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default=None)
    parser.add_argument("--all", action="store_true")
    parser.add_argument("-p", dest="params", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    parser.add_argument("--book-only", action="store_true")
    parser.add_argument("--no-book", action="store_true")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--jobs", default=None)
    parser.add_argument("-h", "--help", action="store_true")
    argv = list(argv)
    command = argv[0] if argv and argv[0] in ("promote", "render-reference") else None
    promote = command is not None
    args, extra = parser.parse_known_args(argv[1:] if promote else argv)
    args.command = command
    args.jobs = _jobs(args.jobs) if args.jobs is not None else None
    if extra:
        raise UsageError(f"unknown option or argument: {' '.join(extra)}")
    args.promote = promote
    if args.book_only and (args.only or args.params or args.quick or args.all or args.jobs):
        raise UsageError("--book-only runs nothing; it takes no --only, --all, --quick, --jobs or -p")
    if args.all and args.only:
        raise UsageError("--all and --only exclude each other: --only already names what runs")
    if promote and (args.params or args.quick or args.book_only or args.no_book):
        raise UsageError(f"{command} takes only --only: it works on the reference and default runs as they are")
    return args


def select(only: str | None, everything: bool = False) -> list[str]:
    names = campaigns.available()
    if only is None:
        return after_what_they_read([n for n in names if everything or campaigns.get(n).in_default_run])
    chosen = [n.strip() for n in only.split(",") if n.strip()]
    for name in chosen:
        if name not in names:
            raise UsageError(f"unknown campaign {name!r}; known: {', '.join(names)}")
    return after_what_they_read(chosen)


def after_what_they_read(names: list[str]) -> list[str]:
    """Measurement order: a campaign that reads others' results (``Campaign.reads``) runs
    after those of them that are selected; otherwise the order is kept."""
    readers = [n for n in names if campaigns.get(n).reads]
    return [n for n in names if n not in readers] + readers


def plan_params(names: list[str], raw: list[list[str]], quick: bool,
                explicit: bool = True) -> dict[str, dict[str, Any]]:
    """Resolve and validate every selected campaign's parameters before any work.

    A -p that fits none of them is an error; so is one that several campaigns share
    when ``--only`` did not say which (``explicit``): it would silently change them all.
    """
    loaded = {name: campaigns.get(name) for name in names}
    overrides: dict[str, Any] = {}
    for name, value in raw:
        owners = [c.name for c in loaded.values() if name in {p.name for p in c.params}]
        if not owners:
            raise UsageError(f"unknown parameter {name!r} for campaign(s) {', '.join(names)}; "
                             f"see: .venv/bin/python -m probes params CAMPAIGN")
        if len(owners) > 1 and not explicit:
            raise UsageError(f"-p {name} would change {len(owners)} campaigns ({', '.join(owners)}); "
                             f"say which with --only, e.g. --only {owners[0]}")
        overrides[name] = parse_value(value)
    plans = {}
    for name, campaign in loaded.items():
        known = {p.name for p in campaign.params}
        plans[name] = campaign.resolve({k: v for k, v in overrides.items() if k in known}, quick=quick)
    return plans


def chapter_stamp(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """What a chapter was executed from: the notebook's bytes and the parameters."""
    source = notebook_path(name)
    digest = hashlib.sha256(source.read_bytes()).hexdigest() if source.exists() else None
    return {"notebook_sha256": digest, "params": params}


def up_to_date(campaign: Campaign, params: dict[str, Any]) -> bool:
    directory = results_dir(campaign, params)
    if not is_complete(campaign, params) or not (directory / CHAPTER_NAME).exists():
        return False
    try:
        stamp = json.loads((directory / CHAPTER_META).read_text())
    except (OSError, ValueError):
        return False
    return stamp == json.loads(json.dumps(chapter_stamp(campaign.name, params)))


def _describe_params(campaign: Campaign, params: dict[str, Any]) -> str:
    changed = campaign.changed_params(params)
    return ", ".join(f"{k}={v!r}" for k, v in changed.items())


def _measure_one(tag: str, name: str, params: dict[str, Any]) -> str:
    """Run one campaign's notebook into its own run directory: ``measured``, ``skipped`` (complete on
    this machine already) or ``failed`` (``probes.schedules``)."""
    campaign = campaigns.get(name)
    profile = profile_of(campaign, params)
    rid = run_id(campaign, params)
    if up_to_date(campaign, params):
        print(f"{tag}: complete on this machine (run {rid}), skipped", flush=True)
        return schedules.SKIPPED
    extra = f": {_describe_params(campaign, params)}" if profile == "variant" else ""
    print(f"{tag}: measuring ({profile} profile{extra}) into runs/{name}/{rid} ...", flush=True)
    started = time.monotonic()
    directory = results_dir(campaign, params)
    try:
        execute_notebook(name, params, directory / CHAPTER_NAME)
        atomic_write_json(directory / CHAPTER_META, chapter_stamp(name, params))
        if (directory / INDEX_NAME).exists():  # the crate again, now naming the chapter and its figures
            write_crate_after_run(directory)
    except Exception as exc:  # papermill raises PapermillExecutionError with the cell's traceback
        last = str(exc).strip().splitlines()[-1] if str(exc).strip() else repr(exc)
        print(f"{tag}: FAILED after {time.monotonic() - started:.1f}s: {last}", flush=True)
        return schedules.FAILED
    if not is_complete(campaign, params):
        print(f"{tag}: finished with harness errors after {time.monotonic() - started:.1f}s "
              f"(see the chapter; the next run measures those probes again)", flush=True)
        return schedules.FAILED
    print(f"{tag}: done in {time.monotonic() - started:.1f}s", flush=True)
    return schedules.MEASURED


def receipts_already_measured(campaign: Campaign, params: dict[str, Any]) -> int:
    """How many receipts an earlier, unfinished measurement left in this run's directory for the same
    inputs (the campaign resumes: they are reused, not measured again). Why it is recorded: a resumed
    campaign's start and end in the schedule cover only its remainder, so its record is no
    reproduction's time (``probes.schedules.end_to_end``). 0 for a complete run (it is skipped)."""
    directory = results_dir(campaign, params)
    if not directory.is_dir() or is_complete(campaign, params):
        return 0
    fingerprint = campaign_fingerprint(campaign, params)
    count = 0
    for path in directory.glob("*.json"):
        if path.name.startswith("_") or path.name in ("verdicts.json", CRATE_NAME):
            continue
        try:
            receipt = load_receipt(path)
        except ReceiptError:
            continue  # set aside and measured again by the run
        count += receipt.fingerprint == fingerprint and not receipt.harness_errors
    return count


def expected_seconds(names: Sequence[str]) -> dict[str, float]:
    """How long each campaign is expected to take: its committed reference run's recorded wall
    duration (``timing.recorded_wall``); a campaign without one is left out."""
    from probes.core.runs import reference_run
    from probes.timing import recorded_wall

    walls = {name: recorded_wall({"provenance": ref.provenance}) if (ref := reference_run(name)) else None
             for name in names}
    return {name: wall for name, wall in walls.items() if wall is not None}


def schedule(names: list[str], jobs: int, expected: dict[str, float] | None = None) -> list[list[str]]:
    """The order ``--jobs`` runs campaigns in, as waves: the campaigns of one wave may run side by
    side (at most ``jobs`` at once), a wave starts when the one before it ended. A campaign that
    reads others' results comes in a wave after theirs; a timing-sensitive one
    (``Campaign.runs_alone``) is a wave of its own. A campaign beyond the paper (``--all`` only)
    joins no wave before a timing-sensitive one placed ahead of it: otherwise the paper's benchmarks
    and races would wait behind hours of atlas, drift and kit campaigns. Within a wave the campaigns
    start longest ``expected`` first (seconds; unknown ones last, in their order): a long campaign
    started last would run on alone after the others ended (drift's 100 minutes, started after the
    short ones, would add their time to the wave's). With ``jobs == 1`` every wave has one campaign,
    in the sequential order."""
    if jobs <= 1:
        return [[n] for n in names]
    waves: list[list[str]] = []
    placed: dict[str, int] = {}
    for name in names:
        campaign = campaigns.get(name)
        after = max((placed[r] for r in campaign.reads if r in placed), default=-1)
        if campaign.runs_alone:
            waves.append([name])
            placed[name] = len(waves) - 1
            continue
        if not campaign.in_default_run:
            after = max([after] + [i for i, wave in enumerate(waves) if campaigns.get(wave[0]).runs_alone])
        # the first shared wave after what it reads (a wave after a solo one opens anew)
        at = next((i for i in range(after + 1, len(waves))
                   if not campaigns.get(waves[i][0]).runs_alone), None)
        if at is None:
            waves.append([])
            at = len(waves) - 1
        waves[at].append(name)
        placed[name] = at
    known = expected or {}
    return [sorted(wave, key=lambda n: -known.get(n, 0.0)) for wave in waves]


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM are ignored while the kernels are being stopped, then restored.

    Why: a second signal raised inside ``stop_kernels``' grace period cut it short before its
    SIGKILL of the kernels that had not stopped, and the run then waited on them for good (seen
    with TLC's kernel and its JVM after two SIGTERMs). Only the main thread may set handlers.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)


def measure(names: list[str], plans: dict[str, dict[str, Any]], jobs: int = 1, selection: str = "only") -> list[str]:
    """Run each campaign's notebook into its own run directory, ``jobs`` at a time (timing-sensitive
    campaigns alone; see ``schedule``); returns the failed ones. When each campaign started and ended
    goes into a schedule record (``probes.schedules``; ``selection`` says which campaigns were asked for),
    written when the measurement ends, however it ends."""
    from concurrent.futures import ThreadPoolExecutor

    failures: list[str] = []
    number = {name: i for i, name in enumerate(names, 1)}
    waves = schedule(names, jobs, expected_seconds(names))
    record = schedules.new_record(selection, jobs, waves, {n: profile_of(campaigns.get(n), plans[n]) for n in names},
                                  [n for n in names if campaigns.get(n).runs_alone])
    origin = time.monotonic()

    def timed(name: str) -> str:
        slot = record["campaigns"][name]
        slot["resumed_receipts"] = receipts_already_measured(campaigns.get(name), plans[name])
        slot["start_s"] = round(time.monotonic() - origin, 1)
        slot["outcome"] = _measure_one(f"[{number[name]}/{len(names)}] {name}", name, plans[name])
        slot["end_s"] = round(time.monotonic() - origin, 1)
        slot["run_id"] = run_id(campaigns.get(name), plans[name])
        return slot["outcome"]

    try:
        for wave in waves:
            if jobs > 1 and len(wave) == 1 and campaigns.get(wave[0]).runs_alone:
                print(f"[{number[wave[0]]}/{len(names)}] {wave[0]}: runs alone ({campaigns.get(wave[0]).runs_alone})",
                      flush=True)
            pool = ThreadPoolExecutor(max_workers=max(1, min(jobs, len(wave))))
            try:
                futures = {n: pool.submit(timed, n) for n in wave}
                done = {n: future.result() for n, future in futures.items()}
            except BaseException:
                # Ctrl-C or SIGTERM (raised here by _exit_on_sigterm): the campaigns run in threads, their
                # kernels in sessions of their own -- stop those, or the threads (and the run) go on
                record["interrupted"] = True
                with _signals_held():
                    print("interrupted: stopping the running campaigns' kernels (up to 20 s; a second Ctrl-C or "
                          "SIGTERM waits for this)", file=sys.stderr, flush=True)
                    pool.shutdown(wait=False, cancel_futures=True)
                    stopped = stop_kernels()
                    print(f"interrupted: stopped {len(stopped)} running campaign kernel(s); every complete probe is "
                          "kept, rerun to continue", file=sys.stderr, flush=True)
                raise
            finally:
                pool.shutdown(wait=True)
            failures += [n for n in wave if done[n] == schedules.FAILED]
    finally:
        record["elapsed_s"] = round(time.monotonic() - origin, 1)
        path = schedules.write(record)
        print(f"schedule of this measurement ({record['elapsed_s'] / 60:.1f} min with --jobs {jobs}): {path}",
              flush=True)
    return failures


def render_reference(names: list[str]) -> int:
    """The reference run's chapters and figures, re-rendered from its own receipts (no receipt changes)."""
    from probes.core.runs import reference_run

    failed = 0
    for name in names:
        ref = reference_run(name)
        if ref is None:
            print(f"{name}: no reference run, nothing to render", flush=True)
            continue
        try:
            execute_notebook(name, ref.params, ref.chapter, render_from=ref.directory)
        except Exception as exc:  # the notebook no longer fits this reference run: keep its chapter
            last = str(exc).strip().splitlines()[-1] if str(exc).strip() else repr(exc)
            print(f"{name}: NOT re-rendered, the committed chapter is kept ({last}); "
                  "measure and promote a new reference run", flush=True)
            failed += 1
            continue
        print(f"{name}: reference chapter re-rendered from run {ref.run_id}", flush=True)
    return 1 if failed else 0


def promote_runs(names: list[str]) -> int:
    """Every named campaign is checked before any is copied: one refusal leaves the whole
    reference as it was (and the first copy does not make the tree 'dirty' for the rest)."""
    from probes.core.manifest import working_tree_clean
    from probes.core.runs import promote

    if not working_tree_clean():
        raise UsageError("promote refuses a working tree with local changes: commit or stash them first")
    with tempfile.TemporaryDirectory(prefix="rc-promote-check-") as rehearsal:
        for name in names:  # every refusal is raised here, before the reference is touched
            promote(campaigns.get(name), reference_root=Path(rehearsal), require_clean_tree=False)
    for name in names:
        ref = promote(campaigns.get(name), require_clean_tree=False)
        print(f"{name}: reference run is now {ref.run_id} ({ref.describe()})", flush=True)
    if (record := schedules.promote_newest()) is not None:
        print(f"the default run measured end to end on this machine: {record}", flush=True)
    print("commit data/reference/ to publish the new reference run", flush=True)
    return 0


def run(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    if args.help:
        print(USAGE)
        return 0
    if args.list:
        for name in campaigns.available():
            campaign = campaigns.get(name)
            mark = "" if campaign.in_default_run else "  [--all]"
            print(f"{name:16s} {campaign.title}{mark}")
        return 0
    if args.command == "render-reference":
        return render_reference(select(args.only, everything=True))
    if args.promote:
        return promote_runs(select(args.only, everything=True))
    failures: list[str] = []
    if not args.book_only:
        names = select(args.only, args.all)
        plans = plan_params(names, args.params, args.quick, explicit=args.only is not None)
        backend_identity()  # a malformed RC_POSTGRES_DSN is a usage error before any work
        jobs = args.jobs or schedules.cores()
        if jobs > 1:  # several kernels' progress bars would interleave on one terminal
            os.environ.setdefault("RC_NO_PROGRESS", "1")
            print(f"measuring up to {jobs} campaigns at once (--jobs {jobs}; timing-sensitive ones alone)",
                  flush=True)
        failures = measure(names, plans, jobs, "default" if args.only is None and not args.all
                           else ("all" if args.only is None else "only"))
    if not args.no_book:
        from probes.book import build_book

        started = time.monotonic()
        index, sources = build_book()
        for name, where in sources.items():
            print(f"  {name}: {where}", flush=True)
        print(f"book built in {time.monotonic() - started:.1f}s: {index}", flush=True)
    if failures:
        print(f"failed campaigns: {', '.join(failures)} (every earlier result is kept; the book shows the newest "
              "complete run of each)", file=sys.stderr)
        return 1
    return 0


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    """A terminated run unwinds like an interrupted one: scratch directories and the
    embedded PostgreSQL server it started are cleaned up (without this, SIGTERM leaves
    the server running on a deleted data directory)."""
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return 2
    except ReceiptError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: measure() has stopped the campaigns' kernels already
        return 130


if __name__ == "__main__":
    sys.exit(main())
