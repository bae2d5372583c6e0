"""The one Wilson score interval of the project (statsmodels), for every count of k in n.

Races (``probes.core.race``), the consume race's saturation and the live reproduction's
approval counts all state their uncertainty with this interval.
"""

from __future__ import annotations


def wilson_interval(successes: int, trials: int) -> tuple[float, float] | None:
    """The Wilson score 95 % interval of ``successes`` in ``trials``; None without trials."""
    if trials <= 0:
        return None
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes of {trials} trials")
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, trials, alpha=0.05, method="wilson")
    return float(low), float(high)


def wilson(successes: int, trials: int, digits: int = 4) -> tuple[float, float] | None:
    """``wilson_interval`` rounded for a receipt or a table."""
    interval = wilson_interval(successes, trials)
    return None if interval is None else (round(interval[0], digits), round(interval[1], digits))
