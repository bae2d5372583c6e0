"""The live-model study's published values, from the ``live`` campaign's receipts.

This was ``probes.studies.live.campaign``'s own until issue 25 moved it here: the campaign never imports this layer
(measurement does not know which of its cells the paper published)."""

from __future__ import annotations

from typing import Any

from probes.core.receipt import Receipt
from probes.headline import Measured
from probes.studies.live.campaign import NOT_RUN_HEADLINE


def _cells(receipts: list[Receipt]) -> list[Receipt]:
    return [r for r in receipts if r.observations.get("status") == "ran" and r.observations.get("live")]


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    """live.* ids from receipts; 'not run here: needs API keys' when no live cell ran."""
    from probes.studies.live.stats import Tally, wilson

    cells = _cells(receipts)
    out: dict[str, Any] = {k: NOT_RUN_HEADLINE for k in ("live.claude_fork", "live.gpt_session_restore",
                                                          "live.harness_errors")}
    if not cells:
        return out

    def tally(r: Receipt) -> Tally:
        m = r.metrics
        return Tally(m["violations"], m["trials"], m["harness_errors"])

    def group(provider: str, protocol: str) -> Measured | None:
        chosen = [r for r in cells if r.observations["provider"] == provider and r.observations["protocol"] == protocol]
        if not chosen:
            return None
        total = Tally()
        per_model = []
        intervals = []
        for r in chosen:
            t = tally(r)
            total.add(t)
            per_model.append(t.successes)
            ci = wilson(t.successes, t.trials, 2)
            intervals.append(list(ci) if ci else None)
        value: dict[str, Any] = {"successes": total.successes, "trials": total.trials, "per_model": per_model,
                                 "models": [r.observations["model"] for r in chosen],
                                 "harness_errors": total.harness_errors}
        pooled_ci = wilson(total.successes, total.trials)
        value["wilson95_pooled"] = list(pooled_ci) if pooled_ci else None
        value["wilson95"] = intervals[0] if all(i == intervals[0] for i in intervals) else intervals
        return Measured(value, why=("trial counts follow this run's parameters (trials per cell, models) and "
                                    "exclude harness errors; the per-model interval is rounded to 2 decimals "
                                    "as published"),
                        receipts=tuple(f"receipts/live/{r.probe}.json" for r in chosen))

    fork = group("anthropic", "fork")
    if fork is not None:
        out["live.claude_fork"] = fork
    session = group("openai", "session")
    if session is not None:
        out["live.gpt_session_restore"] = Measured({k: v for k, v in session.value.items() if k != "wilson95"},
                                                   why=session.why, receipts=session.receipts)
    total = Tally()
    for r in cells:
        total.add(tally(r))
    out["live.harness_errors"] = Measured(
        {"runs": total.runs, "harness_errors": total.harness_errors},
        why="this run's plan: every selected protocol on every selected model, trials per cell as set; the "
            "paper's split of its 240 runs over protocols is not stated",
        receipts=tuple(f"receipts/live/{r.probe}.json" for r in cells))
    return out
