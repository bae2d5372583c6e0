"""Counts and Wilson 95 % intervals: per cell, pooled per model and per provider.

A *trial* counts only when it completed without a harness error; harness errors are
tallied in their own column and never enter a numerator or a denominator, so a flaky
API cannot masquerade as conformance or as a violation. ``successes`` is the number
of trials in which the measured property was violated (the paper reports "fork
violation 40/40" and "session-restore violations 0/40" in this sense).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from probes.core.stats import wilson  # noqa: F401 (the one interval; imported from here by the live report)


@dataclass
class Tally:
    """Violations out of valid trials, plus harness errors kept apart."""

    successes: int = 0
    trials: int = 0
    harness_errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)

    def add(self, other: "Tally") -> None:
        self.successes += other.successes
        self.trials += other.trials
        self.harness_errors += other.harness_errors
        for k, n in other.error_kinds.items():
            self.error_kinds[k] = self.error_kinds.get(k, 0) + n

    @property
    def runs(self) -> int:
        return self.trials + self.harness_errors

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.successes, self.trials)

    def row(self) -> dict[str, Any]:
        ci = self.interval
        return {"violations": self.successes, "trials": self.trials,
                "rate": round(self.successes / self.trials, 4) if self.trials else None,
                "wilson95_lo": ci[0] if ci else None, "wilson95_hi": ci[1] if ci else None,
                "harness_errors": self.harness_errors,
                "error_kinds": ", ".join(f"{k}: {n}" for k, n in sorted(self.error_kinds.items())) or "-"}


def tally_trials(trials: Iterable[Mapping[str, Any]]) -> Tally:
    """A tally from trial records (``probes.studies.live.protocols.Trial.to_json``)."""
    t = Tally()
    for trial in trials:
        if trial["status"] == "ok":
            t.trials += 1
            t.successes += int(bool(trial["violation"]))
        else:
            t.harness_errors += 1
            kind = trial.get("error_kind") or "other"
            t.error_kinds[kind] = t.error_kinds.get(kind, 0) + 1
    return t


def pooled(cells: Iterable[Mapping[str, Any]], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """Cells (dicts with provider/model/protocol and a ``tally``) pooled by ``keys``."""
    groups: dict[tuple[Any, ...], Tally] = {}
    for cell in cells:
        key = tuple(cell[k] for k in keys)
        groups.setdefault(key, Tally()).add(cell["tally"])
    return [{**dict(zip(keys, key)), **tally.row()} for key, tally in sorted(groups.items())]
