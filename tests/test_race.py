"""Race cells decided with stated confidence (probes.core.race): the bound, the stopping
rule, the worst trial, and an undecided cell that never reads as ✓."""

from __future__ import annotations

import math

import pytest

from probes.core.checker import Label, Property, Subject, Verdict, cell_text, collapse, comparable
from probes.core.race import Outcome, RaceRule, cell_verdict, decide, next_step, wilson_upper, worst_trial

SUBJECT = Subject("fw", "file")
PATH = "race:same-pause×2"


def _wilson_by_hand(k: int, n: int, z: float = 1.959963984540054) -> float:
    p = k / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre + margin) / (1 + z * z / n)


@pytest.mark.parametrize("k,n", [(0, 1), (0, 3), (0, 34), (0, 35), (0, 60), (1, 3), (2, 3), (5, 10), (3, 3)])
def test_wilson_upper_bound_is_the_standard_formula(k: int, n: int) -> None:
    assert wilson_upper(k, n) == pytest.approx(_wilson_by_hand(k, n), abs=1e-12)


def test_wilson_bounds_the_issue_quotes() -> None:
    assert round(wilson_upper(0, 60), 3) == 0.060  # "0 of 60 trials, rate < 6 %"
    assert wilson_upper(0, 34) > 0.10 >= wilson_upper(0, 35)  # the default threshold needs 35 clean trials
    assert wilson_upper(0, 0) == 1.0
    with pytest.raises(ValueError):
        wilson_upper(4, 3)


def _v(label: Label, fires: int = 1, prop: Property = Property.CO) -> Verdict:
    return Verdict("fw", "file", prop, PATH, label, {"gate_fires": fires}, f"fired {fires}")


RULE = RaceRule(threshold=0.10, min_trials=3, max_trials=60, max_seconds=300.0)


def test_a_violation_in_any_trial_decides_and_states_k_of_n() -> None:
    d = decide([False, True, False, False], RULE)
    assert (d.outcome, d.violations, d.trials) == (Outcome.VIOLATED, 1, 4)
    assert d.statement() == "violated in 1 of 4 trials"


def test_clean_trials_hold_only_once_the_bound_is_under_the_threshold() -> None:
    assert decide([False] * 34, RULE).outcome is Outcome.UNDECIDED
    held = decide([False] * 35, RULE)
    assert held.outcome is Outcome.HOLDS and held.bound <= 0.10
    assert "0 of 35 trials" in held.statement() and "rate < 9.9 %" in held.statement()
    assert decide([], RULE).outcome is Outcome.UNDECIDED


def _clean(n: int) -> list[dict[Property, bool]]:
    return [{Property.CO: False, Property.LV: False}] * n


def test_the_cell_runs_until_every_property_is_decided_or_a_budget_is_spent() -> None:
    assert next_step(_clean(1), [1.0], RULE) is None  # below min_trials
    first_bad = [{Property.CO: True, Property.LV: False}] + _clean(2)
    assert next_step(first_bad, [1.0] * 3, RULE) is None  # CO decided, LV's bound still 56 %
    assert next_step(_clean(34), [1.0] * 34, RULE) is None
    assert next_step(_clean(35), [1.0] * 35, RULE) == "every property decided"
    both_bad = [{Property.CO: True, Property.LV: True}] * 3
    assert next_step(both_bad[:2], [1.0] * 2, RULE) is None  # a violation still runs min_trials
    assert next_step(both_bad, [1.0] * 3, RULE) == "every property decided"
    assert next_step(_clean(10), [30.0] * 10, RULE) == "time budget of 300 s spent after 10 trial(s)"
    small = RaceRule(0.10, 1, 3, 300.0)
    assert next_step(_clean(3), [1.0] * 3, small) == "trial budget of 3 spent"


def test_the_rule_checks_its_own_ranges() -> None:
    for bad in (dict(threshold=0.0), dict(threshold=1.0), dict(min_trials=0), dict(min_trials=5, max_trials=4),
                dict(max_seconds=0.0)):
        with pytest.raises(ValueError):
            RaceRule(**{**RULE.to_json(), **bad})
    assert RaceRule.from_json(RULE.to_json()) == RULE


def test_a_violated_cell_is_its_worst_trial_never_its_best() -> None:
    """min -> max on the trial ranking (keeping the best trial) must fail here."""
    trials = [_v(Label.PASS), _v(Label.DOC, 2), _v(Label.PASS), _v(Label.DOC, 4)]
    v = cell_verdict(SUBJECT, Property.CO, PATH, trials, RULE, "every property decided",
                     {"gate_fires": [1, 2, 1, 4]}, tie=lambda v: -abs(v.evidence["gate_fires"] - 1))
    assert v.label is Label.DOC and v.evidence["gate_fires"] == 4
    assert v.evidence["violations"] == 2 and v.evidence["trials"] == 4 and v.evidence["race_decision"] == "violated"
    assert v.evidence["gate_fires_by_trial"] == [1, 2, 1, 4]
    assert v.summary.endswith("violated in 2 of 4 trials")
    assert worst_trial(trials) is trials[1]  # without a tie-break: the first of the worst
    assert worst_trial([_v(Label.PASS), _v(Label.UNDOC), _v(Label.FAIL)]).label is Label.UNDOC


def test_a_clean_cell_states_its_bound_and_an_unfinished_one_is_undecided() -> None:
    held = cell_verdict(SUBJECT, Property.CO, PATH, [_v(Label.PASS)] * 35, RULE, "every property decided", {})
    assert held.label is Label.PASS
    assert held.evidence["violation_rate_upper95"] == round(wilson_upper(0, 35), 4) <= 0.10
    assert "0 of 35 trials violated it, rate < 9.9 %" in held.summary
    spent = "trial budget of 3 spent"
    open_ = cell_verdict(SUBJECT, Property.CO, PATH, [_v(Label.PASS)] * 3, RULE, spent, {})
    assert open_.label is Label.UNDECIDED and open_.doc is None
    assert open_.evidence["race_decision"] == "undecided" and open_.evidence["stopped"] == spent
    assert "undecided" in open_.summary and spent in open_.summary


def test_undecided_never_reads_as_pass() -> None:
    assert collapse([Label.PASS, Label.UNDECIDED, Label.PASS]) is Label.UNDECIDED
    assert collapse([Label.UNDECIDED, Label.DOC]) is Label.DOC
    assert cell_text(["✓", "?", "✓"]) == "?×1 · ✓×2"
    assert comparable("?") == "undecided" and not Label.UNDECIDED.violates
