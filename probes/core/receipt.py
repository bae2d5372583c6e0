"""Receipts: one JSON file per probe, plus a campaign index and a stable verdict view.

Layout of a results directory (``data/reference/<campaign>/`` or a local run
``runs/<campaign>/<run id>/``, see ``probes.core.runs``):

* ``<probe>.json``     -- observations, verdicts, metrics, harness errors, manifest;
* ``_campaign.json``   -- written last: the fingerprint, the probe list and the sha256 of
                          each receipt; its presence means "this campaign is complete";
* ``verdicts.json``    -- the verdict view: verdicts only, no run-varying ids, sorted.
                          Same package versions => byte-identical file.

Every file is written atomically, so an interrupted run leaves complete files only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from probes.core.atomic import atomic_write_json, canonical_json
from probes.core.checker import Verdict
from probes.core.errors import ReceiptError
from probes.core.portable import portable, portable_text

SCHEMA = "resume-contract-receipt/1"
INDEX_NAME = "_campaign.json"
VIEW_NAME = "verdicts.json"
_REQUIRED = ("schema", "campaign", "probe", "args", "manifest", "observations", "verdicts", "metrics", "harness_errors")


@dataclass
class ProbeResult:
    """What a probe hands back to the campaign runner."""

    observations: dict[str, Any] = field(default_factory=dict)
    verdicts: list[Verdict] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    harness_errors: list[str] = field(default_factory=list)


@dataclass
class Receipt:
    campaign: str
    probe: str
    args: dict[str, Any]
    manifest: dict[str, Any]
    observations: dict[str, Any]
    verdicts: list[Verdict]
    metrics: dict[str, Any]
    harness_errors: list[str]
    path: Path | None = None
    # The recorded histories the verdicts were decided on, per verdict path (see
    # ``recorded_histories``): the input of trace validation (``probes.tla.trace``).
    histories: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def measured(cls, campaign: str, probe: str, args: dict[str, Any], manifest: dict[str, Any],
                 result: ProbeResult, run_dir: Path | None = None) -> "Receipt":
        """The receipt of a probe just measured, with no path of the measuring machine in it:
        every string passes through ``probes.core.portable.portable`` (``run_dir`` is ``<run>``)."""
        verdicts = [replace(v, evidence=portable(dict(v.evidence), run_dir), summary=portable_text(v.summary, run_dir))
                    for v in result.verdicts]
        return cls(campaign, probe, portable(args, run_dir), manifest, portable(result.observations, run_dir),
                   verdicts, portable(result.metrics, run_dir), portable(result.harness_errors, run_dir),
                   histories=portable(recorded_histories(result.verdicts), run_dir))

    def to_json(self) -> dict[str, Any]:
        data = {
            "schema": SCHEMA,
            "campaign": self.campaign,
            "probe": self.probe,
            "args": self.args,
            "manifest": self.manifest,
            "observations": self.observations,
            "verdicts": [v.to_json() for v in self.verdicts],
            "metrics": self.metrics,
            "harness_errors": self.harness_errors,
        }
        if self.histories:
            data["histories"] = self.histories
        return data

    def write(self, directory: Path) -> Path:
        path = Path(directory) / f"{self.probe}.json"
        atomic_write_json(path, self.to_json())
        self.path = path
        return path

    @property
    def fingerprint(self) -> str:
        return str(self.manifest.get("fingerprint"))


def load_receipt(path: Path) -> Receipt:
    """Parse a receipt, or raise ``ReceiptError`` with a one-line fix."""
    path = Path(path)
    hint = f"delete {path} (it will be measured again) or restore it from git"
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReceiptError(f"malformed receipt {path}: {exc.__class__.__name__}: {exc}; {hint}") from None
    if not isinstance(data, dict):
        raise ReceiptError(f"malformed receipt {path}: top level is not an object; {hint}")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise ReceiptError(f"malformed receipt {path}: missing {', '.join(missing)}; {hint}")
    if data["schema"] != SCHEMA:
        raise ReceiptError(f"malformed receipt {path}: schema {data['schema']!r} is not {SCHEMA!r}; {hint}")
    try:
        verdicts = [Verdict.from_json(v) for v in data["verdicts"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ReceiptError(f"malformed receipt {path}: bad verdict ({exc}); {hint}") from None
    return Receipt(
        campaign=data["campaign"],
        probe=data["probe"],
        args=data["args"],
        manifest=data["manifest"],
        observations=data["observations"],
        verdicts=verdicts,
        metrics=data["metrics"],
        harness_errors=list(data["harness_errors"]),
        path=path,
        histories=dict(data.get("histories", {})),
    )


def recorded_histories(verdicts: Iterable[Verdict]) -> dict[str, Any]:
    """The histories behind a probe's verdicts, once per verdict path, as JSON event lists.

    Verdicts of one path are usually decided on one run (EO, PC and LV of a crash
    path); where properties of one path were decided on different histories, each gets
    its own key ``<path>#<property>``.
    """
    by_path: dict[str, list[Verdict]] = {}
    for v in verdicts:
        if v.history is not None:
            by_path.setdefault(v.path, []).append(v)
    out: dict[str, Any] = {}
    for path, group in sorted(by_path.items()):
        events = [v.history.to_json() for v in group]
        if all(e == events[0] for e in events):
            out[path] = events[0]
        else:
            out.update({f"{path}#{v.property.value}": e for v, e in zip(group, events)})
    return out


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def verdict_view(receipts: Iterable[Receipt]) -> dict[str, Any]:
    """The stable view: per probe, its verdicts (and harness error count), sorted."""
    probes = {}
    for r in sorted(receipts, key=lambda r: r.probe):
        probes[r.probe] = {
            "verdicts": sorted(
                (v.to_json() for v in r.verdicts),
                key=lambda v: (v["framework"], v["backend"], v["property"], v["path"]),
            ),
            "harness_errors": len(r.harness_errors),
        }
    return {"schema": "resume-contract-verdicts/1", "probes": probes}


def write_index(directory: Path, campaign: str, fingerprint: str, params: Mapping[str, Any],
                receipts: list[Receipt], meta: Mapping[str, Any] | None = None) -> None:
    """Mark a campaign run finished: the view first, then the index (written last).

    ``meta`` adds the run's id, profile and provenance (see ``probes.core.runs``). A run
    with harness errors is indexed too (so its chapter can say so), but it is not
    complete: the next run measures those probes again.
    """
    atomic_write_json(Path(directory) / VIEW_NAME, verdict_view(receipts))
    atomic_write_json(
        Path(directory) / INDEX_NAME,
        {
            "campaign": campaign,
            "fingerprint": fingerprint,
            "params": dict(params),
            "receipts": {r.probe: sha256_file(r.path) for r in receipts if r.path},
            "harness_errors": sum(len(r.harness_errors) for r in receipts),
            **dict(meta or {}),
        },
    )


def read_index(directory: Path) -> dict[str, Any] | None:
    path = Path(directory) / INDEX_NAME
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ReceiptError(f"malformed campaign index {path}: {exc}; delete it to rerun the campaign") from None


def load_campaign(directory: Path, verify: bool = True) -> list[Receipt]:
    """The receipts a complete campaign lists in its index, checked against their hashes."""
    index = read_index(directory)
    if index is None:
        return []
    receipts = []
    for probe, digest in sorted(index["receipts"].items()):
        path = Path(directory) / f"{probe}.json"
        if not path.exists():
            raise ReceiptError(f"campaign index {directory}/{INDEX_NAME} lists {probe} but {path} is missing; rerun the campaign")
        if verify and sha256_file(path) != digest:
            raise ReceiptError(f"receipt {path} does not match its campaign index (edited by hand?); rerun the campaign")
        receipts.append(load_receipt(path))
    return receipts


def view_bytes(receipts: Iterable[Receipt]) -> bytes:
    return canonical_json(verdict_view(receipts))
