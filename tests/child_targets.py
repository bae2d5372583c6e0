"""Functions the harness tests run in fresh interpreters."""

from __future__ import annotations

from probes.core import oracle
from probes.core.nemesis import park


def fire_then_park(ledger: str, incarnation: str, effects: list[str], park_after: int) -> dict:
    o = oracle.install(ledger, incarnation)
    for i, effect in enumerate(effects):
        if i == park_after:
            park("mid")
        o.fire(effect)
    return {"counter": o.counter.snapshot()}


def lie_about_counter(ledger: str, incarnation: str) -> dict:
    o = oracle.install(ledger, incarnation)
    o.fire("a")
    return {"counter": {"a": 2}}


def crash() -> dict:
    raise RuntimeError("boom in child")
