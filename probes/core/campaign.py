"""Campaigns: a parameterised family of probes, run resumably into receipts.

A campaign declares its parameters (with a default profile -- the paper's -- and a
quick profile), a ``plan`` that turns parameters into probe specs, and ``run_probe``
that measures one spec. ``run_campaign`` makes the run resumable: a probe whose
receipt already exists for the same fingerprint (parameters + package versions) is
loaded, not rerun; receipts of other fingerprints are stale and removed; the campaign
index is written last, so its presence means "complete".
"""

from __future__ import annotations

import ast
import contextlib
import datetime as _dt
import fcntl
import hashlib
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from probes.core.atomic import remove_stale_temp_files
from probes.core.backends import StoreFactory
from probes.core.crate import CRATE_NAME, write_crate_after_run
from probes.core.errors import UsageError
from probes.core.manifest import build_manifest
from probes.core.portable import run_directory
from probes.core.runs import (REFERENCE_DIR, RUNS_DIR, campaign_fingerprint, fingerprint_inputs, profile_of, provenance,
                              run_dir, write_latest)
from probes.core.receipt import INDEX_NAME, ProbeResult, Receipt, load_campaign, load_receipt, read_index, write_index

_KINDS: dict[str, Callable[[Any], bool]] = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "list[int]": lambda v: isinstance(v, list) and all(_KINDS["int"](x) for x in v),
    "list[float]": lambda v: isinstance(v, list) and all(_KINDS["float"](x) for x in v),
    "list[str]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
}


@dataclass(frozen=True)
class Param:
    """A notebook parameter: its type, both profiles' values, its meaning and its range.

    ``minimum`` bounds a number (or every element of a list) from below, inclusively
    unless ``exclusive``; ``maximum`` from above, likewise; a list must be non-empty unless
    ``allow_empty``. Everything is checked before any work, so a bad value never touches a
    receipt.
    """

    name: str
    kind: str
    default: Any
    quick: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    exclusive: bool = False
    allow_empty: bool = False
    maximum: float | None = None

    def describe_range(self) -> str:
        parts = []
        if self.minimum is not None:
            parts.append(f"{'>' if self.exclusive else '≥'} {self.minimum:g}")
        if self.maximum is not None:
            parts.append(f"{'<' if self.exclusive else '≤'} {self.maximum:g}")
        if self.kind.startswith("list[") and not self.allow_empty:
            parts.append("non-empty")
        if self.choices is not None:
            parts.append("one of " + ", ".join(map(str, self.choices)))
        return "; ".join(parts)

    def validate(self, value: Any) -> Any:
        if self.kind == "float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.kind == "list[float]" and isinstance(value, list):
            value = [float(x) if isinstance(x, int) and not isinstance(x, bool) else x for x in value]
        if self.kind not in _KINDS:
            raise ValueError(f"parameter {self.name}: unknown kind {self.kind}")
        if not _KINDS[self.kind](value):
            raise UsageError(f"parameter {self.name} must be {self.kind}, got {value!r} ({self.doc})")
        items = value if isinstance(value, list) else [value]
        if isinstance(value, list) and not value and not self.allow_empty:
            raise UsageError(f"parameter {self.name} must not be an empty list ({self.doc})")
        if self.choices is not None:
            bad = [x for x in items if x not in self.choices]
            if bad:
                raise UsageError(
                    f"parameter {self.name}: {bad!r} not allowed; choose from {list(self.choices)}"
                )
        if self.minimum is not None:
            low = [x for x in items if (x <= self.minimum if self.exclusive else x < self.minimum)]
            if low:
                bound = f"{'>' if self.exclusive else '≥'} {self.minimum:g}"
                raise UsageError(f"parameter {self.name}: {low[0]!r} is out of range; it must be {bound} ({self.doc})")
        if self.maximum is not None:
            high = [x for x in items if (x >= self.maximum if self.exclusive else x > self.maximum)]
            if high:
                bound = f"{'<' if self.exclusive else '≤'} {self.maximum:g}"
                raise UsageError(f"parameter {self.name}: {high[0]!r} is out of range; it must be {bound} ({self.doc})")
        return value


def parse_value(text: str) -> Any:
    """A command-line value: a Python/JSON literal if it parses as one, else a string."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


@dataclass(frozen=True)
class ProbeSpec:
    """One probe of a campaign: a stable, file-name-safe id and its arguments."""

    id: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class ProbeContext:
    """What a probe may use: a scratch directory, fresh stores, its own seed; and a directory
    every probe of the campaign's run shares (``shared``; None: only ``workdir``), for what a
    framework writes when it is imported (a home), so one fork server serves every probe."""

    workdir: Path
    stores: StoreFactory
    seed: int
    params: Mapping[str, Any]
    shared: Path | None = None


@dataclass(frozen=True)
class Campaign:
    name: str
    title: str
    params: tuple[Param, ...]
    plan: Callable[[Mapping[str, Any]], list[ProbeSpec]]
    run_probe: Callable[[ProbeSpec, ProbeContext], ProbeResult]
    description: str = ""
    # A campaign whose chapter is generated from a template at build time (``"kit"``: the kit's,
    # ``probes.kit.chapter``; ``probes.execute.notebook_path``), never committed.
    chapter_template: str | None = None
    # params -> True when complete receipts are nevertheless out of date for a reason the
    # fingerprint cannot see (e.g. an API key set after a keyless run).
    needs_rerun: Callable[[Mapping[str, Any]], bool] | None = None
    # Distributions whose versions can change this campaign's verdicts (the frameworks it
    # imports): its fingerprint covers these and nothing else, so bumping another
    # campaign's framework does not invalidate this one's results.
    packages: tuple[str, ...] = ()
    # Source paths (relative to the project root) this campaign runs besides its own
    # package and probes/core, e.g. "remit_ref" or "tla": hashed into the fingerprint.
    sources: tuple[str, ...] = ()
    # A hook run before any work with the resolved parameters: raise UsageError for a
    # combination a single Param cannot judge (e.g. dose_k must be one of k).
    check: Callable[[Mapping[str, Any]], None] | None = None
    # Part of a plain ./reproduce.sh run? The paper's campaigns are; campaigns beyond
    # the paper join while the default run stays within its time budget, otherwise they
    # run with --all (or --only).
    in_default_run: bool = True
    # Campaigns whose shown run (probes.core.runs.shown_run) this campaign reads, e.g. the
    # recorded histories trace validation checks: it is measured after them, and which
    # runs it read is part of its fingerprint (a re-measured input makes it out of date).
    reads: tuple[str, ...] = ()
    # Why this campaign must not share the machine with another one (it times things, or
    # its races' rates depend on scheduling): ``./reproduce.sh --jobs N`` runs it alone,
    # and says so with this reason. Empty: it may run beside others.
    runs_alone: str = ""

    def source_paths(self) -> tuple[str, ...]:
        """Its own package directory (where its ``plan`` is defined) plus ``sources``."""
        parts = getattr(self.plan, "__module__", "").split(".")
        own = ["/".join(parts[:-1])] if len(parts) > 1 else []
        return tuple(own) + tuple(self.sources)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise UsageError(
            f"unknown parameter {name!r} for campaign {self.name}; known: {', '.join(p.name for p in self.params)}"
        )

    def changed_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters whose value differs from the default (paper's) profile."""
        defaults = self.resolve()
        return {k: v for k, v in params.items() if defaults.get(k) != v}

    def resolve(self, overrides: Mapping[str, Any] | None = None, quick: bool = False) -> dict[str, Any]:
        """Profile values, overridden and validated; unknown names are a usage error."""
        values = {p.name: (p.quick if quick else p.default) for p in self.params}
        for name, value in (overrides or {}).items():
            values[name] = self.param(name).validate(value)
        if overrides and self.check is not None:
            self.check(values)
        return values


def seed_for(base_seed: int, *parts: Any) -> int:
    """A per-cell seed derived from the campaign seed and the cell's identity."""
    digest = hashlib.sha256(repr((base_seed,) + parts).encode()).digest()
    return int.from_bytes(digest[:4], "big")


@dataclass
class CampaignRun:
    campaign: str
    directory: Path
    fingerprint: str
    params: dict[str, Any]
    receipts: list[Receipt]
    ran: list[str]
    reused: list[str]

    @property
    def harness_errors(self) -> list[str]:
        return [f"{r.probe}: {e}" for r in self.receipts for e in r.harness_errors]


def _progress(total: int, desc: str):
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return None
    stream = sys.__stderr__ or sys.stderr
    return tqdm(total=total, desc=desc, file=stream, leave=False, dynamic_ncols=True,
                disable=os.environ.get("RC_NO_PROGRESS") == "1")


def campaign_dir(name: str, receipts_root: Path | None = None) -> Path:
    """``<root>/<name>``: an explicit results directory (tests, the reference run)."""
    return Path(receipts_root or REFERENCE_DIR) / name


def results_dir(campaign: Campaign, params: Mapping[str, Any], receipts_root: Path | None = None) -> Path:
    """Where a run with these parameters lives: ``<root>/<name>`` when a root is given,
    else its own local run directory ``runs/<name>/<profile>-<fingerprint>``."""
    if receipts_root is not None:
        return Path(receipts_root) / campaign.name
    return run_dir(campaign, params)


def is_complete(campaign: Campaign, params: Mapping[str, Any], receipts_root: Path | None = None) -> bool:
    """Complete = indexed for the current fingerprint, with no harness errors."""
    index = read_index(results_dir(campaign, params, receipts_root))
    if not index or index.get("fingerprint") != campaign_fingerprint(campaign, params):
        return False
    if index.get("harness_errors"):
        return False  # the next run retries the probes that failed
    return not (campaign.needs_rerun and campaign.needs_rerun(params))


@contextlib.contextmanager
def exclusive(directory: Path, name: str):
    """One runner per campaign directory: a second concurrent run would interleave receipts."""
    with open(directory / ".lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            raise UsageError(f"another run of campaign {name} is in progress ({handle.read().strip() or 'pid ?'}); "
                             "wait for it to finish or stop it") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        yield


def load_results(directory: Path, params: Mapping[str, Any] | None = None, name: str = "") -> CampaignRun:
    """A complete run read from disk (nothing is run): the reference, or a local run."""
    receipts = load_campaign(directory)
    index = read_index(directory) or {}
    return CampaignRun(index.get("campaign", name), directory, index.get("fingerprint", ""),
                       index.get("params", dict(params or {})), receipts, [], [r.probe for r in receipts])


def run_campaign(
    campaign: Campaign,
    params: Mapping[str, Any],
    receipts_root: Path | None = None,
    render_only: bool | None = None,
) -> CampaignRun:
    """Run (or resume) a campaign; returns every receipt of the current fingerprint.

    Results go to the local run directory for these inputs (``results_dir``), or to
    ``<receipts_root>/<name>`` when a root is given. ``render_only`` (default: env
    ``RC_RENDER_FROM`` names a directory) runs nothing and returns the receipts of that
    directory -- how the book shows the reference run.
    """
    params = dict(params)
    render_from = os.environ.get("RC_RENDER_FROM")
    if render_only is None:
        render_only = bool(render_from)
    if render_only:
        directory = Path(render_from) if render_from else results_dir(campaign, params, receipts_root)
        return load_results(directory, params, campaign.name)
    directory = results_dir(campaign, params, receipts_root)
    directory.mkdir(parents=True, exist_ok=True)
    with exclusive(directory, campaign.name):
        return _run_locked(campaign, params, directory)


def _set_aside(path: Path, directory: Path) -> None:
    """Keep a receipt that no longer counts under ``_superseded/`` (numbered, never overwritten)."""
    aside = directory / "_superseded"
    aside.mkdir(exist_ok=True)
    target, n = aside / path.name, 1
    while target.exists():
        n += 1
        target = aside / f"{path.stem}.{n}{path.suffix}"
    os.replace(path, target)


def _run_locked(campaign: Campaign, params: dict[str, Any], directory: Path) -> CampaignRun:
    """Measure what is missing in ``directory``. Nothing outside it is touched; inside it,
    receipts that do not count (other inputs, no longer planned, or ended in a harness
    error and so measured again) are set aside into ``_superseded/``, never deleted."""
    remove_stale_temp_files(directory)  # left by a killed writer; safe, we hold the lock
    started = _dt.datetime.now(_dt.timezone.utc)
    fp = campaign_fingerprint(campaign, params)
    specs = campaign.plan(params)
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"campaign {campaign.name} planned duplicate probe ids")

    index = read_index(directory)
    if index is not None and index.get("fingerprint") == fp and not index.get("harness_errors"):
        pass  # complete; receipts are reused below
    elif index is not None:
        (directory / INDEX_NAME).unlink()  # not complete for these inputs any more
        if index.get("started"):
            started = _dt.datetime.fromisoformat(index["started"])

    existing: dict[str, Receipt] = {}
    for path in sorted(directory.glob("*.json")):
        if path.name.startswith("_") or path.name in ("verdicts.json", CRATE_NAME):
            continue
        receipt = load_receipt(path)
        if receipt.fingerprint == fp and receipt.probe in ids and not receipt.harness_errors:
            existing[receipt.probe] = receipt
        else:  # other inputs, no longer planned, or a harness error (measured again below)
            _set_aside(path, directory)

    base_seed = int(params.get("seed", 0))
    receipts: list[Receipt] = []
    ran: list[str] = []
    manifests: list[dict[str, Any]] = []
    bar = _progress(len(specs), campaign.name)
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"rc-{campaign.name}-")))
        stack.enter_context(run_directory(scratch))  # "<run>" in every receipt's text (probes.core.portable)
        stores = StoreFactory(scratch / "stores", stack)
        for spec in specs:
            if spec.id in existing:
                receipts.append(existing[spec.id])
                manifests.append(existing[spec.id].manifest)
                if bar:
                    bar.update(1)
                continue
            if bar:
                bar.set_postfix_str(spec.id)
            seed = seed_for(base_seed, campaign.name, spec.id)
            workdir = scratch / spec.id
            workdir.mkdir(parents=True)
            t0 = time.monotonic()
            result = campaign.run_probe(spec, ProbeContext(workdir, stores, seed, params, shared=scratch))
            manifest = build_manifest(params, seed, campaign, fingerprint_inputs(campaign, params))
            manifest["probe_seconds"] = round(time.monotonic() - t0, 3)
            receipt = Receipt.measured(campaign.name, spec.id, spec.args, manifest, result, scratch)
            receipt.write(directory)
            shutil.rmtree(workdir, ignore_errors=True)
            receipts.append(receipt)
            manifests.append(manifest)
            ran.append(spec.id)
            if bar:
                bar.update(1)
    if bar:
        bar.close()
    finished = _dt.datetime.now(_dt.timezone.utc)
    meta = {"run_id": directory.name, "profile": profile_of(campaign, params),
            "started": started.isoformat(timespec="microseconds"),
            "provenance": provenance(started, finished, manifests)}
    write_index(directory, campaign.name, fp, params, receipts, meta)
    write_crate_after_run(directory)
    if directory.parent.parent == RUNS_DIR:
        write_latest(campaign.name, directory)
    return CampaignRun(campaign.name, directory, fp, params, receipts, ran, sorted(existing))
