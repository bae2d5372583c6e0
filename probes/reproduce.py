"""The driver behind ``./reproduce.sh``: run campaign notebooks, then build the book.

``reproduce.sh`` only makes sure the environment exists; everything else is here,
where the tests reach it. A campaign is skipped when its receipts are complete for
the same parameters and package versions *and* its chapter was executed with those
parameters -- so killing this script and starting it again never reruns finished
work, and the campaign that was interrupted resumes probe by probe.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from probes import CHAPTERS_DIR, NOTEBOOKS_DIR, PROJECT_ROOT, campaigns
from probes.core.atomic import atomic_write_bytes
from probes.core.campaign import Campaign, is_complete, parse_value
from probes.core.errors import ReceiptError, UsageError

USAGE = """usage: ./reproduce.sh [--quick] [--only NAME[,NAME...]] [-p NAME VALUE]... [--book-only] [--no-book]
       ./reproduce.sh test [PYTEST ARGS...]

  (no options)   run every campaign with the paper's parameters, then build the book
  --quick        small bounds (minutes) instead of the paper's parameters
  --only NAMES   run only these campaigns (comma-separated); see --list
  -p NAME VALUE  set a notebook parameter (a Python/JSON literal, e.g. -p jitter_ms '[0, 50]')
  --book-only    rebuild the book from the receipts in data/ without running anything
  --no-book      run campaigns but do not build the book
  --list         list the campaigns and exit
  test           run the test suite"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, the usage, exit 2
        raise UsageError(message)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = _Parser(prog="./reproduce.sh", add_help=False, usage=USAGE)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default=None)
    parser.add_argument("-p", dest="params", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    parser.add_argument("--book-only", action="store_true")
    parser.add_argument("--no-book", action="store_true")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("-h", "--help", action="store_true")
    args, extra = parser.parse_known_args(list(argv))
    if extra:
        raise UsageError(f"unknown option or argument: {' '.join(extra)}")
    if args.book_only and (args.only or args.params or args.quick):
        raise UsageError("--book-only runs nothing; it takes no --only, --quick or -p")
    return args


def select(only: str | None) -> list[str]:
    names = campaigns.available()
    if only is None:
        return names
    chosen = [n.strip() for n in only.split(",") if n.strip()]
    for name in chosen:
        if name not in names:
            raise UsageError(f"unknown campaign {name!r}; known: {', '.join(names)}")
    return chosen


def plan_params(names: list[str], raw: list[list[str]], quick: bool) -> dict[str, dict[str, Any]]:
    """Resolve every selected campaign's parameters; a -p that fits none is an error."""
    loaded = {name: campaigns.get(name) for name in names}
    overrides: dict[str, Any] = {}
    for name, value in raw:
        if not any(name in {p.name for p in c.params} for c in loaded.values()):
            raise UsageError(f"unknown parameter {name!r} for campaign(s) {', '.join(names)}; "
                             f"see: .venv/bin/python -m probes params CAMPAIGN")
        overrides[name] = parse_value(value)
    plans = {}
    for name, campaign in loaded.items():
        known = {p.name for p in campaign.params}
        plans[name] = campaign.resolve({k: v for k, v in overrides.items() if k in known}, quick=quick)
    return plans


def chapter_path(name: str) -> Path:
    return CHAPTERS_DIR / f"{name}.ipynb"


def chapter_params(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())["metadata"]["papermill"]["parameters"]
    except (OSError, KeyError, ValueError):
        return None


def up_to_date(campaign: Campaign, params: dict[str, Any]) -> bool:
    return is_complete(campaign, params) and chapter_params(chapter_path(campaign.name)) == params


def execute_notebook(name: str, params: dict[str, Any], render_only: bool = False) -> None:
    """papermill into a temp file, then an atomic rename: a chapter is never half-written."""
    import papermill

    source = NOTEBOOKS_DIR / f"{name}.ipynb"
    if not source.exists():
        raise UsageError(f"campaign {name} has no notebook at {source}")
    target = chapter_path(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    env_before = os.environ.get("RC_RENDER_ONLY")
    if render_only:
        os.environ["RC_RENDER_ONLY"] = "1"
    try:
        with tempfile.TemporaryDirectory(prefix="rc-nb-") as tmp:
            out = Path(tmp) / f"{name}.ipynb"
            # capture_fd_output=False: progress bars the campaign writes to the process's
            # stderr reach the terminal, not the chapter.
            papermill.execute_notebook(str(source), str(out), parameters=params, kernel_name="python3",
                                       progress_bar=False, cwd=str(PROJECT_ROOT),
                                       extra_arguments=["--IPKernelApp.capture_fd_output=False",
                                                        "--IPKernelApp.log_level=ERROR"])
            atomic_write_bytes(target, out.read_bytes())
    finally:
        if render_only:
            if env_before is None:
                os.environ.pop("RC_RENDER_ONLY", None)
            else:
                os.environ["RC_RENDER_ONLY"] = env_before


def run(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    if args.help:
        print(USAGE)
        return 0
    if args.list:
        for name in campaigns.available():
            print(f"{name:16s} {campaigns.get(name).title}")
        return 0
    failures: list[str] = []
    if not args.book_only:
        names = select(args.only)
        plans = plan_params(names, args.params, args.quick)
        profile = "quick" if args.quick else "default"
        for i, name in enumerate(names, 1):
            tag = f"[{i}/{len(names)}] {name}"
            if up_to_date(campaigns.get(name), plans[name]):
                print(f"{tag}: complete for these parameters and versions, skipped", flush=True)
                continue
            print(f"{tag}: running ({profile} profile)...", flush=True)
            started = time.monotonic()
            try:
                execute_notebook(name, plans[name])
            except Exception as exc:  # papermill raises PapermillExecutionError with the cell's traceback
                failures.append(name)
                print(f"{tag}: FAILED after {time.monotonic() - started:.1f}s: {str(exc).strip().splitlines()[-1] if str(exc).strip() else exc!r}",
                      flush=True)
                continue
            print(f"{tag}: done in {time.monotonic() - started:.1f}s", flush=True)
    if not args.no_book:
        from probes.book import build_book

        started = time.monotonic()
        index = build_book()
        print(f"book built in {time.monotonic() - started:.1f}s: {index}", flush=True)
    if failures:
        print(f"failed campaigns: {', '.join(failures)} (their previous chapters, if any, are kept)", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return 2
    except ReceiptError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
