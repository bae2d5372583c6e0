"""The consume race's verdicts: CO, EO and LV from the recorded history of every repetition.

Kept apart from the campaign (which drives processes) so the verdict logic is small,
import-free and mutation-tested on its own (``mutation/consume_race_verdict.toml``).
"""

from __future__ import annotations

from dataclasses import replace

from probes import citations
from probes.core.checker import Expectation, Verdict, check_co, check_eo, check_lv, every
from probes.core.history import History

FRAMEWORK = {"stock": "langgraph", "gate": "langgraph+remit", "contract": "langgraph+remit-contract"}
GATE_EFFECT = "gate"  # the gated node's effect (probes.studies.consume_race.racer.GATE_EFFECT)
WHO = {"stock": "{k} processes answered one interrupt together",
       "gate": "with the read-path consumption gate, {k} racing answers",
       "contract": "with remit-contract's cross-process gate, {k} racing answers"}


def _num(x: float) -> str:
    """A file-name-safe rendering of a number: 0 -> '0', 2.5 -> '2p5' (as in the probe ids)."""
    return str(int(x)) if float(x).is_integer() else str(x).replace(".", "p")


def rep_history(history: History, rep: int) -> History:
    """One repetition's events (its park and racer incarnations), in commit order."""
    return History(tuple(e for e in history if e.incarnation.startswith(f"rep{rep}.")))


def _path(k: int, gate: float) -> str:
    return f"cross-process k={k} jitter=0ms" + (f" gate={_num(gate)}ms" if gate else "")


def co_verdict(backend: str, arm: str, k: int, gate: float, histories: list[History]) -> Verdict:
    """CO at jitter 0: no clean repetition fires the gated effect more than once.

    A repetition with two fires is a double consumption and fails. One with none is no CO
    violation (``checker.check_co``): a completion that skipped the gate fails EO
    (``eo_verdict``), a run that never completed fails LV (``lv_verdict``, "lost answer").
    Which racer fired is a race, so the witness stays in the observations and the evidence
    says only what happened, not to whom.
    """
    checks = [check_co(h, Expectation(gate=GATE_EFFECT)) for h in histories]
    co = every(checks)
    dup = any(c.evidence["duplicate"] for c in checks)
    lost = any(c.evidence["gate_fires"] == 0 for c in checks)
    who = WHO[arm].format(k=k)
    if co.holds:
        text = f"{who}: the gated effect fired at most once in every repetition"
    else:
        text = f"{who}: the gated effect fired more than once"
    stable = replace(co, evidence={})  # how many reps fired twice is a race: not verdict evidence
    return stable.verdict(citations.subject(FRAMEWORK[arm], backend), _path(k, gate), text, witness_in_evidence=False,
                          k=k, jitter_ms=0, reps=len(checks), duplicates_observed=dup, unfired_observed=lost)


def eo_verdict(backend: str, arm: str, k: int, gate: float, histories: list[History]) -> Verdict:
    """EO at jitter 0: on every repetition that completed, the gated effect fired exactly once
    (a racer that returned without it skipped the answer's effect), and never twice."""
    checks = [check_eo(h, Expectation(effects=(GATE_EFFECT,))) for h in histories]
    eo = every(checks)
    skipped = any(c.evidence["skipped"] for c in checks)
    dup = any(c.evidence["duplicated"] for c in checks)
    who = WHO[arm].format(k=k)
    text = (f"{who}: " + ("every completed repetition fired the gated effect exactly once" if eo.holds else
                          "; ".join(x for x in ("the gated effect fired more than once" if dup else "",
                                                "a repetition completed without firing the gated effect"
                                                if skipped else "") if x)))
    stable = replace(eo, evidence={})
    return stable.verdict(citations.subject(FRAMEWORK[arm], backend), _path(k, gate), text, witness_in_evidence=False,
                          k=k, jitter_ms=0, reps=len(checks), duplicates_observed=dup, skipped_observed=skipped)


def lv_verdict(backend: str, arm: str, k: int, gate: float, histories: list[History]) -> Verdict:
    """LV at jitter 0: some racer completed every repetition; an answer accepted whose gated
    effect never fired while no racer completed is named a lost answer."""
    checks = [check_lv(h, Expectation(gate=GATE_EFFECT)) for h in histories]
    lv = every(checks)
    lost = any(c.evidence["lost_answer"] for c in checks)
    who = WHO[arm].format(k=k)
    failing = next((c for c in checks if not c.holds), None)
    text = f"{who}: " + ("a racer completed in every repetition" if lv.holds else str(failing.evidence["why"]))
    stable = replace(lv, evidence={})
    return stable.verdict(citations.subject(FRAMEWORK[arm], backend), _path(k, gate), text, witness_in_evidence=False,
                          k=k, jitter_ms=0, reps=len(checks), lost_answers_observed=lost)


def concurrency_verdict(backend: str, arm: str, k: int, histories: list[History],
                        duplicate_bound: float | None) -> Verdict:
    """CO of the concurrency protocol: ``k`` clients resume one thread's interrupt together, once
    per trial, over many trials; any trial that fired the gated effect twice fails (a trial that
    never fired it is counted and named: a skipped or lost answer is EO's or LV's matter, not CO's).

    Unlike the grid's verdict this one is statistical and says so: the evidence states how many
    trials duplicated (k of n) and, with none, ``duplicate_bound`` -- the Wilson 95 % upper bound
    of the per-trial duplicate rate, computed by the campaign -- so a ✓ reads "0 of n, rate < x".
    """
    checks = [check_co(h, Expectation(gate=GATE_EFFECT)) for h in histories]
    co = every(checks)
    n = len(checks)
    dup = sum(1 for c in checks if c.evidence["duplicate"])
    unfired = sum(1 for c in checks if c.evidence["gate_fires"] == 0)  # a skipped or lost answer: EO/LV
    who = WHO[arm].format(k=k)
    never = f"; {unfired} of {n} never fired it (a skipped or lost answer: EO/LV, not CO)" if unfired else ""
    if co.holds:
        bound = "" if duplicate_bound is None else f", per-trial duplicate rate < {duplicate_bound * 100:.1f} % " \
                                                   "(Wilson 95 % upper bound)"
        text = f"{who}, {n} trials: the gated effect fired at most once in every trial (0 of {n} duplicated{bound})" + never
    else:
        text = f"{who}, {n} trials: {dup} of {n} trials fired the gated effect more than once" + never
    stable = replace(co, evidence={})
    return stable.verdict(citations.subject(FRAMEWORK[arm], backend), f"cross-process:concurrent-resume same-thread k={k}", text,
                          witness_in_evidence=False, k=k, trials=n, duplicate_trials=dup, unfired_trials=unfired,
                          duplicate_rate_wilson95_upper=duplicate_bound)
