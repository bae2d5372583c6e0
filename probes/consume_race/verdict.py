"""The consume race's verdict: CO from the recorded history of every repetition.

Kept apart from the campaign (which drives processes) so the verdict logic is small,
import-free and mutation-tested on its own (``mutation/consume_race_verdict.toml``).
"""

from __future__ import annotations

from dataclasses import replace

from probes.core.checker import Expectation, Subject, Verdict, check_co, every
from probes.core.history import History

FRAMEWORK = {"stock": "langgraph", "gate": "langgraph+remit", "contract": "langgraph+remit-contract"}
GATE_EFFECT = "gate"  # the gated node's effect (probes.consume_race.racer.GATE_EFFECT)
WHO = {"stock": "{k} processes answered one interrupt together",
       "gate": "with the read-path consumption gate, {k} racing answers",
       "contract": "with remit-contract's cross-process gate, {k} racing answers"}


def _num(x: float) -> str:
    """A file-name-safe rendering of a number: 0 -> '0', 2.5 -> '2p5' (as in the probe ids)."""
    return str(int(x)) if float(x).is_integer() else str(x).replace(".", "p")


def rep_history(history: History, rep: int) -> History:
    """One repetition's events (its park and racer incarnations), in commit order."""
    return History(tuple(e for e in history if e.incarnation.startswith(f"rep{rep}.")))


def co_verdict(backend: str, arm: str, k: int, gate: float, histories: list[History]) -> Verdict:
    """CO at jitter 0: every clean repetition must fire the gated effect exactly once.

    A repetition with two fires is a double consumption, one with none a lost answer
    (k answers were sent); both fail. Which racer fired is a race, so the witness stays
    in the observations and the evidence says only what happened, not to whom.
    """
    checks = [check_co(h, Expectation(gate=GATE_EFFECT)) for h in histories]
    co = every(checks)
    dup = any(c.evidence["duplicate"] for c in checks)
    lost = any(c.evidence["lost_answer"] for c in checks)
    path = f"cross-process k={k} jitter=0ms" + (f" gate={_num(gate)}ms" if gate else "")
    who = WHO[arm].format(k=k)
    if co.holds:
        text = f"{who}: the gated effect fired exactly once in every repetition"
    else:
        text = f"{who}: " + "; ".join(x for x in ("the gated effect fired more than once" if dup else "",
                                                   "an answered interrupt never fired its effect (lost answer)"
                                                   if lost else "") if x)
    stable = replace(co, evidence={})  # how many reps fired twice is a race: not verdict evidence
    return stable.verdict(Subject(FRAMEWORK[arm], backend), path, text, witness_in_evidence=False,
                          k=k, jitter_ms=0, reps=len(checks), duplicates_observed=dup, lost_answers_observed=lost)


def concurrency_verdict(backend: str, arm: str, k: int, histories: list[History],
                        duplicate_bound: float | None) -> Verdict:
    """CO of the concurrency protocol: ``k`` clients resume one thread's interrupt together, once
    per trial, over many trials; any trial that fired the gated effect twice (or never) fails.

    Unlike the grid's verdict this one is statistical and says so: the evidence states how many
    trials duplicated (k of n) and, with none, ``duplicate_bound`` -- the Wilson 95 % upper bound
    of the per-trial duplicate rate, computed by the campaign -- so a ✓ reads "0 of n, rate < x".
    """
    checks = [check_co(h, Expectation(gate=GATE_EFFECT)) for h in histories]
    co = every(checks)
    n = len(checks)
    dup = sum(1 for c in checks if c.evidence["duplicate"])
    lost = sum(1 for c in checks if c.evidence["lost_answer"])
    who = WHO[arm].format(k=k)
    if co.holds:
        bound = "" if duplicate_bound is None else f", per-trial duplicate rate < {duplicate_bound * 100:.1f} % " \
                                                   "(Wilson 95 % upper bound)"
        text = f"{who}, {n} trials: the gated effect fired exactly once in every trial (0 of {n} duplicated{bound})"
    else:
        text = f"{who}, {n} trials: {dup} of {n} trials fired the gated effect more than once" + \
            (f"; {lost} of {n} never fired it (lost answer)" if lost else "")
    stable = replace(co, evidence={})
    return stable.verdict(Subject(FRAMEWORK[arm], backend), f"cross-process:concurrent-resume same-thread k={k}", text,
                          witness_in_evidence=False, k=k, trials=n, duplicate_trials=dup, lost_trials=lost,
                          duplicate_rate_wilson95_upper=duplicate_bound)
