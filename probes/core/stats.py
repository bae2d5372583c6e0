"""The one Wilson score interval of the project, for every count of k in n.

Races (``probes.core.race``), the consume race's saturation and the live reproduction's
approval counts all state their uncertainty with this interval. It is computed with the
standard library (the textbook closed form with the normal quantile of ``statistics``) because
the kit installs with no dependencies and its race protocol needs it; a test checks it against
statsmodels' ``proportion_confint(method="wilson")`` where the project's environment has it.
"""

from __future__ import annotations

import math
from statistics import NormalDist

Z95 = NormalDist().inv_cdf(0.975)  # the two-sided 95 % normal quantile (1.95996...)


def wilson_interval(successes: int, trials: int) -> tuple[float, float] | None:
    """The Wilson score 95 % interval of ``successes`` in ``trials``; None without trials."""
    if trials <= 0:
        return None
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes of {trials} trials")
    share, z2 = successes / trials, Z95 * Z95
    centre = (share + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z95 * math.sqrt(share * (1 - share) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson(successes: int, trials: int, digits: int = 4) -> tuple[float, float] | None:
    """``wilson_interval`` rounded for a receipt or a table."""
    interval = wilson_interval(successes, trials)
    return None if interval is None else (round(interval[0], digits), round(interval[1], digits))
