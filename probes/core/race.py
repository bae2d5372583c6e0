"""Race cells decided with stated confidence: fresh trials until decided, or a budget spent.

Why: a race is a sample. Which racer loads a pause before another answered it is up to
the scheduler, so one clean trial says little, and three clean trials beside a sibling
that double-fired in two of three say little more (at a per-trial rate near 1/3 three
clean trials happen about 30 % of the time). A race cell therefore runs fresh trials and
stops only when it is decided:

* **violated**: some trial violated the property (after at least ``min_trials``, so the
  verdict states *k of n*); the worst trial's verdict is the cell's;
* **holds**: no trial violated it and the Wilson 95 % upper bound of the per-trial
  violation rate is at most ``threshold`` ("0 of 35 trials, rate < 9.9 %");
* **undecided**: the budget (``max_trials`` trials or ``max_seconds`` seconds, whichever
  is spent first) ran out with no violation and the bound still above the threshold. An
  undecided cell is labelled ``?`` (``Label.UNDECIDED``), never ✓.

The stopping rule (``next_step``) reads only the trials' outcomes and their measured
durations, both kept in the receipt, so a stored race can be decided again from its
receipt alone and must give the same verdict (``probes.kit.race.rejudge``).

The bound is the upper end of the two-sided 95 % Wilson score interval
(``statsmodels.stats.proportion.proportion_confint``, method "wilson").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from enum import Enum
from typing import Any, Callable, Mapping, Sequence

from probes.core.checker import WORST_FIRST, Property, Subject, Verdict
from probes.core.history import History
from probes.core.stats import wilson_interval

# The documented defaults (the kit's parameters carry them; see probes/kit/suite.py).
DEFAULT_THRESHOLD = 0.10
DEFAULT_MIN_TRIALS = 3
DEFAULT_MAX_TRIALS = 60
DEFAULT_MAX_SECONDS = 300.0


def wilson_upper(violations: int, trials: int) -> float:
    """Upper end of the Wilson score 95 % interval for ``violations`` of ``trials`` (1.0 without trials)."""
    interval = wilson_interval(violations, trials)
    return 1.0 if interval is None else interval[1]


@dataclass(frozen=True)
class RaceRule:
    """When a race cell stops. ``threshold``: the largest Wilson bound a ✓ may state."""

    threshold: float = DEFAULT_THRESHOLD
    min_trials: int = DEFAULT_MIN_TRIALS
    max_trials: int = DEFAULT_MAX_TRIALS
    max_seconds: float = DEFAULT_MAX_SECONDS

    def __post_init__(self) -> None:
        if not 0 < self.threshold < 1:
            raise ValueError(f"race threshold {self.threshold} must lie strictly between 0 and 1")
        if not 1 <= self.min_trials <= self.max_trials:
            raise ValueError(f"race trials: need 1 ≤ min_trials ({self.min_trials}) ≤ max_trials ({self.max_trials})")
        if self.max_seconds <= 0:
            raise ValueError(f"race max_seconds {self.max_seconds} must be > 0")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "RaceRule":
        return cls(float(data["threshold"]), int(data["min_trials"]), int(data["max_trials"]),
                   float(data["max_seconds"]))


class Outcome(Enum):
    """A plain Enum (not a str): outcomes have no order, and comparing them by their names' spelling fails."""

    VIOLATED = "violated"
    HOLDS = "holds"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Decision:
    """One property of a race cell after ``trials`` trials, ``violations`` of them violating."""

    outcome: Outcome
    trials: int
    violations: int
    bound: float  # Wilson 95 % upper bound of the per-trial violation rate
    reason: str   # why it stopped, in words

    def evidence(self, rule: RaceRule) -> dict[str, Any]:
        """The run-stable facts a verdict states (durations stay in the observations)."""
        return {"race_decision": self.outcome.value, "trials": self.trials, "violations": self.violations,
                "violation_rate_upper95": round(self.bound, 4), "threshold": rule.threshold,
                "stopped": self.reason}

    def statement(self) -> str:
        rate = f"rate < {_percent(self.bound)} (Wilson 95 % upper bound)"
        if self.outcome is Outcome.VIOLATED:
            return f"violated in {self.violations} of {self.trials} trials"
        if self.outcome is Outcome.HOLDS:
            return f"0 of {self.trials} trials violated it, {rate}"
        return f"undecided: 0 of {self.trials} trials violated it, {rate}, above the threshold; {self.reason}"


def _percent(x: float) -> str:
    return f"{100 * x:.1f} %"


def bound_text(evidence: Mapping[str, Any]) -> str:
    """What a race verdict rests on, for the matrix: ``0 of 35 trials, rate < 9.9 %`` beside a ✓ or
    ``?``, ``2 of 3 trials`` beside a violation; "" for a verdict that is no race decision."""
    if "race_decision" not in evidence:
        return ""
    n, k = evidence["trials"], evidence["violations"]
    if Outcome(evidence["race_decision"]) is Outcome.VIOLATED:
        return f"{k} of {n} trials"
    return f"{k} of {n} trials, rate < {_percent(evidence['violation_rate_upper95'])}"


def decide(violated: Sequence[bool], rule: RaceRule, spent: str | None = None) -> Decision:
    """The decision for one property over the trials run; ``spent``: the budget that ran out, if one did."""
    n, k = len(violated), sum(1 for v in violated if v)
    bound = wilson_upper(k, n)
    if k:
        return Decision(Outcome.VIOLATED, n, k, bound, f"a violation after {n} trial(s)")
    if n and bound <= rule.threshold:
        return Decision(Outcome.HOLDS, n, k, bound, f"bound at most the threshold {_percent(rule.threshold)}")
    return Decision(Outcome.UNDECIDED, n, k, bound, spent or "the cell stopped before this property was decided")


def next_step(outcomes: Sequence[Mapping[Property, bool]], seconds: Sequence[float], rule: RaceRule) -> str | None:
    """After the trials so far: None to run another, else why the cell stops.

    ``outcomes[i][prop]`` is True when trial ``i`` violated ``prop``; ``seconds[i]`` its measured
    duration. The cell stops once every property is decided (a violation, or a bound at most
    the threshold) after ``min_trials``, or when a budget is spent.
    """
    n = len(outcomes)
    if n >= rule.max_trials:
        return f"trial budget of {rule.max_trials} spent"
    if sum(seconds) >= rule.max_seconds:
        return f"time budget of {rule.max_seconds:g} s spent after {n} trial(s)"
    if n < rule.min_trials:
        return None
    props = {p for o in outcomes for p in o}
    undecided = [p for p in props if decide([o[p] for o in outcomes], rule).outcome is Outcome.UNDECIDED]
    return None if undecided or not props else "every property decided"


def worst_trial(trials: Sequence[Verdict], tie: Callable[[Verdict], float] | None = None) -> Verdict:
    """The trial verdict that decides a violated cell: the worst label, then the lowest ``tie``
    (e.g. minus how far the gate's count is from one), then the first."""
    return min(trials, key=lambda v: (WORST_FIRST.index(v.label), *((tie(v),) if tie else ())))


def cell_verdict(subject: Subject, prop: Property, path: str, trials: Sequence[Verdict], rule: RaceRule,
                 stopped: str, by_trial: Mapping[str, list[Any]],
                 tie: Callable[[Verdict], float] | None = None) -> Verdict:
    """One property's verdict over a race cell's trial verdicts (one per trial, in order).

    ``by_trial``: run-stable per-trial facts to state in the evidence (e.g. gate fires);
    ``tie``: which of equally labelled trials is the worst (``worst_trial``).
    """
    if not trials:
        raise ValueError("a race cell needs at least one trial")
    decision = decide([v.label.violates for v in trials], rule, spent=stopped if "budget" in stopped else None)
    evidence = {**decision.evidence(rule), **{f"{k}_by_trial": list(v) for k, v in by_trial.items()},
                "labels_by_trial": [v.label.value for v in trials]}
    chosen = worst_trial(trials, tie)
    if decision.outcome is Outcome.VIOLATED:
        if not chosen.label.violates:
            raise AssertionError("the worst trial of a violated race holds")
        return replace(chosen, evidence={**chosen.evidence, **evidence},
                       summary=f"{chosen.summary}; {decision.statement()}")
    summary = f"{chosen.summary}; {decision.statement()}"
    if decision.outcome is Outcome.HOLDS:
        return replace(chosen, evidence={**chosen.evidence, **evidence}, summary=summary)
    return subject.undecided(prop, path, {**chosen.evidence, **evidence}, summary, chosen.history)


# --- a race cell's trials, as a receipt keeps them and as a re-judge reads them ------------------

def stop_reason(judged: Sequence[Mapping[Property, Verdict]], seconds: Sequence[float], rule: RaceRule) -> str | None:
    """``next_step`` over the trials' verdicts: None means run another trial."""
    return next_step([{p: v.label.violates for p, v in j.items()} for j in judged], seconds, rule)


def trial_record(t: int, history: History, seconds: float) -> dict[str, Any]:
    """What a receipt keeps of one trial: its number, measured duration (rounded as the rule reads
    it, so a re-judge stops at the same trial) and whole history."""
    return {"trial": t, "seconds": round(seconds, 3), "history": history.to_json()}


def replay_trials(probe: str, race: Mapping[str, Any],
                  judge_trial: Callable[[int, History], Mapping[Property, Verdict]],
                  ) -> tuple[list[Mapping[Property, Verdict]], RaceRule, str]:
    """A stored race cell's trials (``race``: its ``rule`` and ``trials``) judged again in order by
    ``judge_trial``, and where its rule stopped. Refuses a record with a trial too many or too few:
    that is not a race this rule decided."""
    rule = RaceRule.from_json(race["rule"])
    judged: list[Mapping[Property, Verdict]] = []
    seconds: list[float] = []
    stopped: str | None = None
    for record in race["trials"]:
        if stopped is not None:
            raise ValueError(f"{probe}: trial {record['trial']} was run after the rule stopped ({stopped})")
        judged.append(judge_trial(int(record["trial"]), History.from_json(record["history"])))
        seconds.append(float(record["seconds"]))
        stopped = stop_reason(judged, seconds, rule)
    if stopped is None:
        raise ValueError(f"{probe}: the rule would have run another trial after {len(judged)}")
    return judged, rule, stopped
