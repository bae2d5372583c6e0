"""Where results live: the committed reference run, and the runs made on this machine.

Two kinds of results are kept apart, and nothing of one is ever written over the other:

* the **reference run** -- ``data/reference/<campaign>/`` (committed): produced by this
  project from a clean commit with the paper's parameters, and read-only in normal
  use. Only ``promote`` (a maintainer's command) replaces it;
* **local runs** -- ``runs/<campaign>/<run id>/`` (git-ignored): every run on a user's
  machine. The run id is ``<profile>-<fingerprint>`` (``default-…``, ``quick-…``,
  ``variant-…``): the same inputs continue the same directory probe by probe, other
  inputs (another ``-p``, another package version, changed harness code) get a new
  directory beside it, so no run ever replaces another. ``runs/<campaign>/latest.json``
  points at the newest complete run.

A run directory holds the probe receipts, ``verdicts.json``, ``_campaign.json`` (written
last: its presence means complete), the executed chapter ``chapter.ipynb`` with
``_chapter.json``, ``figures/``, and its RO-Crate ``ro-crate-metadata.json`` (with the campaign
definition it ran in ``workflow/``; see ``probes.core.crate``).

The fingerprint says what a run measured: its parameters, the versions of the packages
*this campaign* imports (declared by the campaign), the backend it measured (a
PostgreSQL DSN's host, port and database -- never the password) and a hash of the
harness and model sources it ran.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from probes import DATA_DIR, PROJECT_ROOT
from probes.core.atomic import atomic_write_json, canonical_json
from probes.core.errors import ReceiptError, UsageError
from probes.core import manifest

if TYPE_CHECKING:
    from probes.core.campaign import Campaign

REFERENCE_DIR = Path(os.environ.get("RC_REFERENCE_DIR", DATA_DIR / "reference"))
RUNS_DIR = Path(os.environ.get("RC_RUNS_DIR", PROJECT_ROOT / "runs"))
CHAPTER_NAME = "chapter.ipynb"
CHAPTER_META = "_chapter.json"
FIGURES = "figures"
LATEST = "latest.json"
INDEX_NAME = "_campaign.json"  # also defined in probes.core.receipt (kept import-free here)

# Always part of a campaign's code hash: the harness core every probe runs on.
CORE_SOURCES = ("probes/core",)


# --- fingerprints -------------------------------------------------------------------

def sources_hash(paths: tuple[str, ...]) -> str:
    """sha256 over the ``.py``/``.tla``/``.cfg`` files under ``paths`` (relative to the root)."""
    digest = hashlib.sha256()
    for rel in sorted(set(paths)):
        root = PROJECT_ROOT / rel
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            if path.suffix not in (".py", ".tla", ".cfg") or "__pycache__" in path.parts:
                continue
            digest.update(path.relative_to(PROJECT_ROOT).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def campaign_sources(campaign: "Campaign") -> tuple[str, ...]:
    """The campaign's own package, the core, and whatever else it declares (``sources``)."""
    return tuple(sorted({*CORE_SOURCES, *campaign.source_paths()}))


def backend_identity() -> dict[str, str]:
    """Which PostgreSQL a run measured: embedded, or host:port/database of ``RC_POSTGRES_DSN``."""
    dsn = os.environ.get("RC_POSTGRES_DSN")
    if not dsn:
        return {"postgres": "embedded"}
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(dsn)
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"RC_POSTGRES_DSN is not a valid postgresql:// URI ({exc}); fix or unset it") from None
    if parts.scheme not in ("postgresql", "postgres") or not parts.hostname and not parts.path:
        raise UsageError("RC_POSTGRES_DSN must look like postgresql://user@host:5432/dbname; fix or unset it")
    return {"postgres": f"{parts.hostname or 'local'}:{port or 5432}/{parts.path.lstrip('/') or 'postgres'}"}


def fingerprint_inputs(campaign: "Campaign", params: Mapping[str, Any]) -> dict[str, Any]:
    inputs = {
        "params": dict(params),
        "packages": manifest.package_versions(campaign.packages),
        "backend": backend_identity(),
        "code": sources_hash(campaign_sources(campaign)),
    }
    if campaign.reads:
        inputs["reads"] = {name: getattr(shown_run(name), "run_id", None) for name in sorted(campaign.reads)}
    return inputs


def fingerprint_of(inputs: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(dict(inputs))).hexdigest()[:16]  # the same hash as build_manifest's


def campaign_fingerprint(campaign: "Campaign", params: Mapping[str, Any]) -> str:
    return fingerprint_of(fingerprint_inputs(campaign, params))


# --- run directories ----------------------------------------------------------------

def profile_of(campaign: "Campaign", params: Mapping[str, Any]) -> str:
    """``default`` (the paper's parameters), ``quick``, or ``variant`` (anything else)."""
    if dict(params) == campaign.resolve():
        return "default"
    if dict(params) == campaign.resolve(quick=True):
        return "quick"
    return "variant"


def run_id(campaign: "Campaign", params: Mapping[str, Any]) -> str:
    return f"{profile_of(campaign, params)}-{campaign_fingerprint(campaign, params)}"


def run_dir(campaign: "Campaign", params: Mapping[str, Any], runs_root: Path | None = None) -> Path:
    return Path(runs_root or RUNS_DIR) / campaign.name / run_id(campaign, params)


@dataclass(frozen=True)
class RunInfo:
    """A complete run of one campaign, local or reference, and where it came from."""

    campaign: str
    source: str  # "this machine" | "reference run"
    directory: Path
    run_id: str
    profile: str  # default | quick | variant
    params: dict[str, Any]
    fingerprint: str
    harness_errors: int
    provenance: dict[str, Any]  # date, duration_s, commit, clean, python, platform

    @property
    def chapter(self) -> Path:
        return self.directory / CHAPTER_NAME

    @property
    def figures(self) -> Path:
        return self.directory / FIGURES

    @property
    def is_reference(self) -> bool:
        return self.source == "reference run"

    def describe(self) -> str:
        """One line a reader can check: where, when, how long, which commit, which parameters."""
        p = self.provenance
        commit = p.get("commit", "unknown")
        state = "clean" if p.get("clean") else "with local changes"
        minutes = p.get("duration_s")
        took = f"{minutes / 60:.1f} min" if isinstance(minutes, (int, float)) else "duration unknown"
        what = "Measured on this machine" if self.source == "this machine" else "Taken from the reference run"
        return (f"{what} ({self.profile} profile, run {self.run_id}) on {p.get('date', 'unknown date')}, "
                f"{took}, commit {commit[:12]} ({state}), Python {p.get('python', '?')}, {p.get('platform', '?')}")


def _index(directory: Path) -> dict[str, Any] | None:
    path = directory / INDEX_NAME
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ReceiptError(f"malformed campaign index {path}: {exc}; delete {directory} to measure it again") from None


def load_run(directory: Path, source: str) -> RunInfo | None:
    """The run in ``directory`` if it is complete (its index exists), else ``None``."""
    index = _index(directory)
    if index is None:
        return None
    return RunInfo(
        campaign=index["campaign"], source=source, directory=directory,
        run_id=index.get("run_id", directory.name), profile=index.get("profile", "default"),
        params=index.get("params", {}), fingerprint=index.get("fingerprint", ""),
        harness_errors=int(index.get("harness_errors", 0)), provenance=index.get("provenance", {}),
    )


def reference_run(name: str, reference_root: Path | None = None) -> RunInfo | None:
    return load_run(Path(reference_root or REFERENCE_DIR) / name, "reference run")


def local_runs(name: str, runs_root: Path | None = None) -> list[RunInfo]:
    """Every complete local run of a campaign, oldest first (by completion time)."""
    root = Path(runs_root or RUNS_DIR) / name
    if not root.is_dir():
        return []
    runs = [r for d in sorted(root.iterdir()) if d.is_dir() and (r := load_run(d, "this machine"))]
    return sorted(runs, key=lambda r: (r.provenance.get("finished", ""), r.run_id))


def incomplete_local_runs(name: str, runs_root: Path | None = None) -> list[Path]:
    root = Path(runs_root or RUNS_DIR) / name
    if not root.is_dir():
        return []
    return [d for d in sorted(root.iterdir()) if d.is_dir() and not (d / INDEX_NAME).exists()]


def latest_local(name: str, profile: str | None = None, runs_root: Path | None = None) -> RunInfo | None:
    runs = [r for r in local_runs(name, runs_root) if profile is None or r.profile == profile]
    return runs[-1] if runs else None


def shown_run(name: str) -> RunInfo | None:
    """What the book and the matrix show for a campaign: the newest local run that
    completed without harness errors, else the reference run, else (so that a failure
    is visible rather than absent) the newest local run with harness errors."""
    runs = local_runs(name)
    for run in reversed(runs):
        if not run.harness_errors:
            return run
    ref = reference_run(name)
    if ref is not None:
        return ref
    return runs[-1] if runs else None


def newer_unfinished(name: str, shown: RunInfo | None) -> list[str]:
    """Local runs newer than the one shown that did not finish cleanly (for the chapter banner)."""
    out = [f"{r.run_id} (harness errors: {r.harness_errors})" for r in local_runs(name)
           if r.harness_errors and (shown is None or r.provenance.get("finished", "") > shown.provenance.get("finished", ""))]
    out += [f"{d.name} (interrupted or failed)" for d in incomplete_local_runs(name)]
    return out


def write_latest(name: str, directory: Path, runs_root: Path | None = None) -> None:
    atomic_write_json(Path(runs_root or RUNS_DIR) / name / LATEST, {"campaign": name, "run": directory.name})


def provenance(started: _dt.datetime, finished: _dt.datetime, manifests: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's provenance from its receipts' manifests (the commit of the newest probe)."""
    last = manifests[-1] if manifests else {}

    commit = str(last.get("commit") or manifest.project_commit())
    return {
        "date": finished.strftime("%Y-%m-%d"),
        "started": started.isoformat(timespec="microseconds"),
        "finished": finished.isoformat(timespec="microseconds"),
        "duration_s": round((finished - started).total_seconds(), 1),
        "commit": commit.removesuffix("-dirty"),
        "clean": not commit.endswith("-dirty") and all(not str(m.get("commit", "")).endswith("-dirty")
                                                      for m in manifests),
        "python": str(last.get("python", "")),
        "platform": str(last.get("platform", "")),
    }


# --- promote: a complete local run becomes the reference ------------------------------

def promote(campaign: "Campaign", runs_root: Path | None = None, reference_root: Path | None = None,
            require_clean_tree: bool = True) -> RunInfo:
    """Copy the newest complete default-profile local run over the reference run.

    Refused (``UsageError``) for a dirty tree, a run with harness errors or local
    changes, or a run whose fingerprint is not the current code's.
    """

    if require_clean_tree and not manifest.working_tree_clean():
        raise UsageError("promote refuses a working tree with local changes: commit or stash them first")
    run = latest_local(campaign.name, profile="default", runs_root=runs_root)
    if run is None:
        raise UsageError(f"no complete default-profile run of {campaign.name} on this machine: "
                         f"run ./reproduce.sh --only {campaign.name} first")
    if run.harness_errors:
        raise UsageError(f"run {run.run_id} of {campaign.name} has {run.harness_errors} harness error(s); rerun it")
    if not run.provenance.get("clean"):
        raise UsageError(f"run {run.run_id} of {campaign.name} was measured with local changes; "
                         "measure it again from a clean commit")
    current = campaign_fingerprint(campaign, campaign.resolve())
    if run.fingerprint != current:
        raise UsageError(f"run {run.run_id} of {campaign.name} does not match the current code and versions "
                         f"(fingerprint {run.fingerprint} vs {current}); measure it again")
    if not run.chapter.exists():
        raise UsageError(f"run {run.run_id} of {campaign.name} has no executed chapter; run it with ./reproduce.sh")
    target = Path(reference_root or REFERENCE_DIR) / campaign.name
    staging = target.with_name(f".{campaign.name}.promote")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(run.directory, staging, ignore=shutil.ignore_patterns(".lock", ".*.tmp"))
    old = target.with_name(f".{campaign.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(staging, target)
    shutil.rmtree(old, ignore_errors=True)
    promoted = reference_run(campaign.name, reference_root)
    assert promoted is not None
    return promoted
