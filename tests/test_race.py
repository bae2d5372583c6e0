"""Race cells decided with stated confidence (probes.core.race): the bound, the stopping
rule, the worst trial, and an undecided cell that never reads as ✓."""

from __future__ import annotations

import math

import pytest

from probes.core.checker import Label, Property, Subject, Verdict, cell_text, collapse, comparable
from probes.core.race import (DEFAULT_MAX_SECONDS, DEFAULT_MAX_TRIALS, DEFAULT_MIN_TRIALS, DEFAULT_THRESHOLD, Decision,
                              Outcome, RaceRule, bound_text, cell_verdict, decide, next_step, wilson_upper, worst_trial)

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


def test_the_standard_library_interval_is_statsmodels_wilson() -> None:
    """The kit computes the interval without dependencies; statsmodels (in the project's environment)
    is the reference implementation it must agree with, for every k of n up to 120."""
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    from probes.core.stats import wilson_interval

    for n in range(1, 121):
        for k in range(n + 1):
            low, high = proportion.proportion_confint(k, n, alpha=0.05, method="wilson")
            assert wilson_interval(k, n) == pytest.approx((low, high), abs=1e-12), (k, n)


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


def test_the_documented_defaults() -> None:
    """The defaults the guide and the kit's parameters state: 10 %, 3 to 60 trials, 300 s."""
    assert (DEFAULT_THRESHOLD, DEFAULT_MIN_TRIALS, DEFAULT_MAX_TRIALS, DEFAULT_MAX_SECONDS) == (0.10, 3, 60, 300.0)
    assert RaceRule() == RaceRule(0.10, 3, 60, 300.0)
    from probes.kit.suite import kit_params
    from probes.frameworks.maf.adapter import MafAdapter
    defaults = {p.name: p.default for p in kit_params(MafAdapter)}
    assert (defaults["race_threshold"], defaults["race_min_trials"], defaults["race_max_trials"],
            defaults["race_max_seconds"]) == (0.10, 3, 60, 300.0)


def test_rules_and_decisions_are_values() -> None:
    """A rule or a decision stored in a receipt cannot be changed after it was made."""
    import dataclasses
    with pytest.raises(dataclasses.FrozenInstanceError):
        RULE.threshold = 0.5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        decide([False], RULE).trials = 9  # type: ignore[misc]


def test_the_rule_ranges_at_their_edges() -> None:
    for bad in (dict(threshold=-0.1), dict(threshold=1.5), dict(max_seconds=-1.0)):
        with pytest.raises(ValueError):
            RaceRule(**{**RULE.to_json(), **bad})
    assert RaceRule(threshold=0.5, min_trials=4, max_trials=4, max_seconds=0.5).max_trials == 4  # min = max, < 1 s


def test_the_bound_is_stated_to_four_places_and_a_bound_at_the_threshold_holds() -> None:
    exact = wilson_upper(0, 20)
    assert Decision(Outcome.HOLDS, 20, 0, exact, "x").evidence(RULE)["violation_rate_upper95"] == round(exact, 4)
    assert round(exact, 4) != round(exact, 5)  # the fixture tells four places from five
    at = RaceRule(threshold=exact, min_trials=1, max_trials=60)
    assert decide([False] * 20, at).outcome is Outcome.HOLDS


def test_bound_text_beside_each_decision() -> None:
    """The matrix's text: k of n beside a violation, with the bound beside ✓ and ?; nothing for a non-race."""
    assert bound_text({}) == ""
    violated = decide([False, True, True], RULE).evidence(RULE)
    assert bound_text(violated) == "2 of 3 trials"
    import json
    assert bound_text(json.loads(json.dumps(violated))) == "2 of 3 trials"  # as read back from a receipt
    held = decide([False] * 35, RULE).evidence(RULE)
    assert bound_text(held) == "0 of 35 trials, rate < 9.9 %"
    open_ = decide([False] * 3, RULE).evidence(RULE)
    assert bound_text(open_) == f"0 of 3 trials, rate < {100 * round(wilson_upper(0, 3), 4):.1f} %"


def test_a_budget_overrun_stops_the_cell() -> None:
    """More trials than the budget (a stored receipt judged under a smaller rule), or more seconds."""
    rule = RaceRule(min_trials=1, max_trials=3, max_seconds=10.0)
    four = [{Property.CO: False}] * 4
    assert next_step(four, [0.1] * 4, rule) == "trial budget of 3 spent"
    assert next_step(four[:1], [11.0], rule) == "time budget of 10 s spent after 1 trial(s)"


def test_a_cells_statement_for_each_outcome() -> None:
    assert decide([True], RULE).statement() == "violated in 1 of 1 trials"
    assert decide([False] * 35, RULE).statement().startswith("0 of 35 trials violated it, rate < 9.9 %")
    assert decide([False] * 3, RULE).statement().startswith("undecided: 0 of 3 trials violated it")
