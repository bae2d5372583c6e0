"""Which releases a bug is run on: the pin, everything, or a bisection of its boundaries.

``choose(candidates, measure, mode, cap, bad, pin)`` calls ``measure(release) -> status``
(one cell run, decided by the checker) on the releases it picks and returns what it
measured, in the order it measured. Only ``present`` counts as "has the behaviour"
here; ``absent``, ``n/a`` and ``not reproduced`` are all "has not".

* ``pin`` -- one release: the pin if it is a candidate, else the newest (the quick profile);
* ``every`` -- every candidate (the full sweep, ``--all``);
* ``bisect`` -- ``bad`` (the release the report names as bad), the pin and the newest,
  then, while fewer than ``cap`` releases are measured: the midpoint of the lowest pair
  of neighbouring measured releases that disagree with unmeasured releases between
  them; when the oldest measured release is present and older candidates are
  unmeasured, the oldest candidate (to find where the behaviour starts). It stops
  when every boundary is between adjacent candidates or the cap is reached; the
  table then shows the boundary as an interval.

The choice depends only on the measured statuses, so equal releases give equal runs.
"""

from __future__ import annotations

from typing import Callable, Sequence

from probes.studies.atlas.decide import PRESENT

MODES = ("pin", "bisect", "every")


def _next(candidates: Sequence[str], measured: dict[str, str]) -> str | None:
    index = {r: i for i, r in enumerate(candidates)}
    done = sorted((index[r] for r in measured), key=int)
    for a, b in zip(done, done[1:]):
        if (measured[candidates[a]] == PRESENT) != (measured[candidates[b]] == PRESENT) and b - a > 1:
            return candidates[(a + b) // 2]
    if done and done[0] > 0 and measured[candidates[done[0]]] == PRESENT:
        return candidates[0]
    return None


def choose(candidates: Sequence[str], measure: Callable[[str], str], mode: str, cap: int,
           bad: str | None = None, pin: str | None = None) -> list[tuple[str, str]]:
    """Measure the releases ``mode`` picks (oldest-first ``candidates``); ``[(release, status)]``."""
    if mode not in MODES:
        raise ValueError(f"sweep mode {mode!r} is not one of {MODES}")
    if not candidates:
        return []
    measured: dict[str, str] = {}
    order: list[tuple[str, str]] = []

    def run(release: str) -> None:
        measured[release] = measure(release)
        order.append((release, measured[release]))

    if mode == "every":
        for release in candidates:
            run(release)
        return order
    if mode == "pin":
        run(pin if pin in candidates else candidates[-1])
        return order
    starts = [r for r in (bad, pin) if r in candidates]
    for release in dict.fromkeys([*starts, candidates[-1]]):
        if len(measured) < cap:
            run(release)
    while len(measured) < cap:
        release = _next(candidates, measured)
        if release is None:
            break
        run(release)
    return order


def candidates(releases: Sequence[str], since: str | None, order_key: Callable[[str], object]) -> list[str]:
    """The releases from ``since`` (inclusive; all when None) to the newest, oldest first."""
    ordered = sorted(releases, key=order_key)
    if since is None:
        return ordered
    lower = order_key(since)
    return [r for r in ordered if order_key(r) >= lower]
