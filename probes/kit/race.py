"""The kit's race cell: each trial judged from its own history, the cell decided by
``probes.core.race``, and the same decision made again from a stored receipt.

A trial is judged on CO (the gated effect fired at most once for the k concurrent
answers) and LV (the run completed: an answer accepted whose run never completed is a
lost answer). The receipt keeps, per trial, its whole history and its measured duration
(``observations.race.trials``) beside the rule the cell ran under, so ``rejudge`` needs
nothing else to recompute the cell's verdicts.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from probes.core.checker import UNSET, Property, Verdict
from probes.core.history import History
from probes.core.race import RaceRule, cell_verdict, replay_trials
from probes.kit.judge import Judge

RACE_PROPERTIES = (Property.CO, Property.LV)


def race_path(k: int) -> str:
    return f"race:same-pause×{k}"


def judge_trial(judge: Judge, k: int, t: int, h: History, result: Any = UNSET) -> dict[Property, Verdict]:
    """One trial's verdicts (no witness in the evidence: the racers' order varies); ``result`` is the
    workflow's own result for the answer (LV)."""
    what = f"{k} concurrent answers (trial {t})"
    path = race_path(k)
    return {Property.CO: judge.gated_once(path, h, what, witness=False),
            Property.LV: judge.live(path, h, what, result, witness=False)}


def cell_verdicts(judge: Judge, k: int, judged: Sequence[Mapping[Property, Verdict]], rule: RaceRule,
                  stopped: str) -> list[Verdict]:
    """The cell's verdict per property over every trial."""
    out = []
    for prop in RACE_PROPERTIES:
        trials = [j[prop] for j in judged]
        if prop is Property.CO:  # of two duplicating trials the one that fired the gate most is shown
            by_trial = {"gate_fires": [v.evidence["gate_fires"] for v in trials]}
            out.append(cell_verdict(judge.subject, prop, race_path(k), trials, rule, stopped, by_trial,
                                    tie=lambda v: -abs(v.evidence["gate_fires"] - 1)))
        else:
            out.append(cell_verdict(judge.subject, prop, race_path(k), trials, rule, stopped, {}))
    return out


def rejudge_receipt(receipt: Any, adapter: type[Any]) -> list[Verdict]:
    """``rejudge`` with the judge a kit campaign of ``adapter`` (an ``Adapter`` class) uses."""
    return rejudge(receipt, Judge(adapter.framework, receipt.args["backend"], adapter.citations))


def rejudge(receipt: Any, judge: Judge) -> list[Verdict]:
    """The race cell's verdicts decided again from a stored receipt (its trials and rule)."""
    race = receipt.observations["race"]
    k = int(receipt.args["k"])
    judged, rule, stopped = replay_trials(
        receipt.probe, race, lambda t, h: judge_trial(judge, k, t, h, race.get("result", UNSET)))
    return cell_verdicts(judge, k, judged, rule, stopped)
