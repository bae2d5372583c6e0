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

from probes import RECEIPTS_DIR
from probes.core.atomic import remove_stale_temp_files
from probes.core.backends import StoreFactory
from probes.core.errors import UsageError
from probes.core.manifest import build_manifest, fingerprint, package_versions
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
    name: str
    kind: str
    default: Any
    quick: Any
    doc: str
    choices: tuple[Any, ...] | None = None

    def validate(self, value: Any) -> Any:
        if self.kind == "float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.kind == "list[float]" and isinstance(value, list):
            value = [float(x) if isinstance(x, int) and not isinstance(x, bool) else x for x in value]
        if self.kind not in _KINDS:
            raise ValueError(f"parameter {self.name}: unknown kind {self.kind}")
        if not _KINDS[self.kind](value):
            raise UsageError(f"parameter {self.name} must be {self.kind}, got {value!r} ({self.doc})")
        if self.choices is not None:
            items = value if isinstance(value, list) else [value]
            bad = [x for x in items if x not in self.choices]
            if bad:
                raise UsageError(
                    f"parameter {self.name}: {bad!r} not allowed; choose from {list(self.choices)}"
                )
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
    """What a probe may use: a scratch directory, fresh stores, its own seed."""

    workdir: Path
    stores: StoreFactory
    seed: int
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Campaign:
    name: str
    title: str
    params: tuple[Param, ...]
    plan: Callable[[Mapping[str, Any]], list[ProbeSpec]]
    run_probe: Callable[[ProbeSpec, ProbeContext], ProbeResult]
    description: str = ""
    # receipts -> {headline id: Measured}; see probes/headline.py. Must not import frameworks.
    headlines: Callable[[list[Receipt]], dict[str, Any]] | None = None
    # params -> True when complete receipts are nevertheless out of date for a reason the
    # fingerprint cannot see (e.g. an API key set after a keyless run).
    needs_rerun: Callable[[Mapping[str, Any]], bool] | None = None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise UsageError(
            f"unknown parameter {name!r} for campaign {self.name}; known: {', '.join(p.name for p in self.params)}"
        )

    def resolve(self, overrides: Mapping[str, Any] | None = None, quick: bool = False) -> dict[str, Any]:
        """Profile values, overridden and validated; unknown names are a usage error."""
        values = {p.name: (p.quick if quick else p.default) for p in self.params}
        for name, value in (overrides or {}).items():
            values[name] = self.param(name).validate(value)
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
    return Path(receipts_root or RECEIPTS_DIR) / name


def is_complete(campaign: Campaign, params: Mapping[str, Any], receipts_root: Path | None = None) -> bool:
    index = read_index(campaign_dir(campaign.name, receipts_root))
    if not index or index.get("fingerprint") != fingerprint(params, package_versions()):
        return False
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


def run_campaign(
    campaign: Campaign,
    params: Mapping[str, Any],
    receipts_root: Path | None = None,
    render_only: bool | None = None,
) -> CampaignRun:
    """Run (or resume) a campaign; returns every receipt of the current fingerprint.

    ``render_only`` (default: env ``RC_RENDER_ONLY=1``) runs nothing and returns the
    receipts on disk -- used to rebuild the book from committed receipts.
    """
    params = dict(params)
    directory = campaign_dir(campaign.name, receipts_root)
    directory.mkdir(parents=True, exist_ok=True)
    if render_only is None:
        render_only = os.environ.get("RC_RENDER_ONLY") == "1"
    if render_only:
        receipts = load_campaign(directory)
        index = read_index(directory) or {}
        return CampaignRun(campaign.name, directory, index.get("fingerprint", ""), index.get("params", params),
                           receipts, [], [r.probe for r in receipts])

    with exclusive(directory, campaign.name):
        return _run_locked(campaign, params, directory)


def _run_locked(campaign: Campaign, params: dict[str, Any], directory: Path) -> CampaignRun:
    remove_stale_temp_files(directory)  # left by a killed writer; safe, we hold the lock
    packages = package_versions()
    fp = fingerprint(params, packages)
    specs = campaign.plan(params)
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"campaign {campaign.name} planned duplicate probe ids")

    index = read_index(directory)
    if index is not None and index.get("fingerprint") != fp:
        (directory / INDEX_NAME).unlink()  # a new parameter set: the old campaign is no longer complete

    existing: dict[str, Receipt] = {}
    for path in sorted(directory.glob("*.json")):
        if path.name.startswith("_") or path.name == "verdicts.json":
            continue
        receipt = load_receipt(path)
        if receipt.fingerprint == fp and receipt.probe in ids:
            existing[receipt.probe] = receipt
        else:
            path.unlink()  # stale: other parameters, other versions or no longer planned

    base_seed = int(params.get("seed", 0))
    receipts: list[Receipt] = []
    ran: list[str] = []
    bar = _progress(len(specs), campaign.name)
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"rc-{campaign.name}-")))
        stores = StoreFactory(scratch / "stores", stack)
        for spec in specs:
            if spec.id in existing:
                receipts.append(existing[spec.id])
                if bar:
                    bar.update(1)
                continue
            if bar:
                bar.set_postfix_str(spec.id)
            seed = seed_for(base_seed, campaign.name, spec.id)
            workdir = scratch / spec.id
            workdir.mkdir(parents=True)
            started = time.monotonic()
            result = campaign.run_probe(spec, ProbeContext(workdir, stores, seed, params))
            manifest = build_manifest(params, seed)
            manifest["probe_seconds"] = round(time.monotonic() - started, 3)
            receipt = Receipt(campaign.name, spec.id, spec.args, manifest, result.observations,
                              result.verdicts, result.metrics, result.harness_errors)
            receipt.write(directory)
            shutil.rmtree(workdir, ignore_errors=True)
            receipts.append(receipt)
            ran.append(spec.id)
            if bar:
                bar.update(1)
    if bar:
        bar.close()
    write_index(directory, campaign.name, fp, params, receipts)
    return CampaignRun(campaign.name, directory, fp, params, receipts, ran, sorted(existing))
