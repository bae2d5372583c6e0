"""Skip a test module whose framework is not installed -- without importing the framework.

``pytest.importorskip`` imports the module into the test process, and a framework runs
what it runs on import for the rest of the session: CrewAI starts an OpenTelemetry
exporter whose thread later tries to reach ``telemetry.crewai.com`` in the middle of an
unrelated, loopback-only test. The frameworks run in child processes; the test process
only needs to know they are there.
"""

from __future__ import annotations

import importlib.util

import pytest


def require(module: str) -> None:
    """Skip the calling module unless ``module`` can be found (its parent packages are imported, it is not)."""
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        found = False
    if not found:
        pytest.skip(f"{module} is not installed", allow_module_level=True)
