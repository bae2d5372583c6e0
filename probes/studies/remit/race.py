"""REMIT's cross-process consume race as a race cell decided with stated confidence.

Why: the race used to be barrier-forced single races, ``race_reps`` separate cells per
(k, backend), each a ✓ that stated its racers and repetitions but no bound on how often
the gate could still let two racers through. Which racer reads the parked checkpoint
first is up to the scheduler, so a clean repetition is one sample. The cell now runs
fresh trials under ``probes.core.race`` (the kit's rule): it stops with a violation
(*k of n trials*, after ``min_trials``), with a ✓ once the Wilson 95 % upper bound of
the per-trial violation rate is at most the threshold (*0 of n trials, rate < x %*), or
with ``?`` when its trial / second budget is spent first.

A trial is judged from its own history alone (``judge_trial``): the gated effect's
events (appended by the racers through the oracle, in commit order), one ``answer``
event per racer (appended by the harness before the barrier opens) and each racer's
outcome (appended by the harness after the race, in racer order: ``complete`` with
value ``"completed"`` when the run finished with that racer's answer, ``refuse`` with
``"ConsumeConflict"`` when REMIT's gate turned it away, ``complete`` with the observed
outcome's text otherwise). The receipt keeps every trial's history and measured
duration beside the rule (``observations.race``), so ``rejudge`` recomputes the cell's
verdicts from the receipt alone, byte-identically, and refuses a receipt whose trials
are not the ones the rule would have run.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from probes.core import checker
from probes.core.checker import Property, Subject, Verdict
from probes.core.history import History, Kind
from probes.core.race import RaceRule, cell_verdict, replay_trials

RACE_PROPERTIES = (Property.CO, Property.LV)
PATH = "cross-process:racers-at-barrier(gate)"
GATE = "gate"
COMPLETED = "completed"
CONFLICT = "ConsumeConflict"


def outcome_event(outcome: str) -> tuple[Kind, str]:
    """How a racer's outcome (``race_worker.RaceRacer.go``) is written into the trial's history."""
    if outcome == "conflict":
        return Kind.REFUSE, CONFLICT
    return Kind.COMPLETE, outcome


def judge_trial(subject: Subject, k: int, t: int, h: History) -> dict[Property, Verdict]:
    """One trial's CO and LV verdicts, from its history alone.

    CO: the gated effect fired at most once (a lost answer is LV's). LV: the run completed
    once and every other racer was told ConsumeConflict; a racer with neither lost its
    answer. Same rules and words as the single race this replaces, with the trial named.
    """
    fires = sum(1 for e in h.of(Kind.EFFECT) if e.effect == GATE)
    racers = sorted({e.incarnation for e in h.of(Kind.ANSWER)})
    if len(racers) != k:
        raise ValueError(f"trial {t}: its history answers with {len(racers)} racer(s), the cell has {k}")
    completed = {e.incarnation for e in h.of(Kind.COMPLETE) if e.value == COMPLETED}
    conflict = {e.incarnation for e in h.of(Kind.REFUSE) if e.value == CONFLICT}
    lost = sum(1 for r in racers if r not in completed and r not in conflict)
    holds, ev = checker.gate_once(fires)
    ev.update({"racers": k, "lost_answers": lost})
    co = subject.verdict(Property.CO, PATH, holds, ev,
                         f"{k} racers, gate on (trial {t}): the gated effect fired {fires}x; "
                         f"every racer got the winner's answer or ConsumeConflict ({lost} lost)")
    lv_ok, lv_ev = checker.completes(fires == 1 and lost == 0,
                                     f"{len(completed)} racer(s) completed, {len(conflict)} got ConsumeConflict, "
                                     f"{lost} neither", lost=fires == 0)
    lv_ev.update({"racers": k, "lost_answers": lost, "gate_fires": fires})
    lv = subject.verdict(Property.LV, PATH, lv_ok, lv_ev,
                         lv_ev["why"] or f"the run completed once and every other racer was told ConsumeConflict "
                                         f"(trial {t})")
    return {Property.CO: co, Property.LV: lv}


def cell_verdicts(subject: Subject, judged: Sequence[Mapping[Property, Verdict]], rule: RaceRule,
                  stopped: str) -> list[Verdict]:
    """The cell's CO and LV verdicts over every trial; per-trial gate fires and lost answers stated."""
    fires = [j[Property.CO].evidence["gate_fires"] for j in judged]
    lost = [j[Property.CO].evidence["lost_answers"] for j in judged]
    out = []
    for prop in RACE_PROPERTIES:
        trials = [j[prop] for j in judged]
        # of two violating trials the one whose gate count is furthest from one is shown
        out.append(cell_verdict(subject, prop, PATH, trials, rule, stopped,
                                {"gate_fires": fires, "lost_answers": lost},
                                tie=lambda v: -abs(v.evidence["gate_fires"] - 1)))
    return out


def rejudge(receipt: Any, subject: Subject) -> list[Verdict]:
    """A stored race cell's verdicts decided again from its receipt (its trials and rule)."""
    k = int(receipt.args["k"])
    judged, rule, stopped = replay_trials(receipt.probe, receipt.observations["race"],
                                          lambda t, h: judge_trial(subject, k, t, h))
    return cell_verdicts(subject, judged, rule, stopped)
