"""probes.headline: the exact words of every status, difference and number a reader sees.

The headline page's explanations are computed from the compared values; these tests pin
the wording so that a changed ratio, threshold or join is noticed (they are what kills
the headline module's mutants in ``./reproduce.sh mutate headline``).
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from probes import headline as H
from probes.headline import Measured, compare, describe_difference


@pytest.mark.parametrize("value, text", [
    (12, "12"), (1234567, "1,234,567"), (3.0, "3"), (0.123456, "0.1235"), (1234.5678, "1,235"),
    (-0.5, "-0.5"), (999.98765, "1000"), (True, "yes"), (False, "no"), ("✓", "✓"), (None, "None"),
    ({"a": 1, "b": [1.5, True]}, "{a: 1, b: [1.5, yes]}"), ([], "[]"), ({}, "{}"), ([2, {"k": 0.25}], "[2, {k: 0.25}]"), ([1, None], "[1, —]"),
])
def test_numbers_and_values_in_words(value: object, text: str) -> None:
    assert H._text(value) == text


@pytest.mark.parametrize("published, measured, text", [
    (10, 30, "k: 30 here vs 10 published (×3)"),
    (10, 20, "k: 20 here vs 10 published (×2)"),
    (10, 19.9, "k: 19.9 here vs 10 published (+99.0%)"),
    (10, 11, "k: 11 here vs 10 published (+10.0%)"),
    (10, 6, "k: 6 here vs 10 published (-40.0%)"),
    (10, 5, "k: 5 here vs 10 published (×0.5)"),
    (10, 5.1, "k: 5.1 here vs 10 published (-49.0%)"),
    (4, 1, "k: 1 here vs 4 published (×0.25)"),
    (0, 3, "k: 3 here vs 0 published (a published 0 matches only a measured 0)"),
    (4, 4, "k: 4 here vs 4 published (equal)"),
    (True, False, "k: no here vs yes published"),
    (1, True, "k: yes here vs 1 published"),
    ("✓", "U", "k: U here vs ✓ published"),
    ({"a": 1}, {"a": 2}, "k: {a: 2} here vs {a: 1} published"),
])
def test_difference_in_words(published: object, measured: object, text: str) -> None:
    assert describe_difference("k", published, measured) == text


SOURCE = [{"file": "CAMPAIGNS.md", "line": 1, "quote": "Measurement campaigns"}]


def _entry(published: dict, **extra: object) -> dict:
    return {"id": "c.x", "campaign": "c", "what": "w", "published": published, "sources": SOURCE, **extra}


def test_reproduced_exactly_and_within_tolerance() -> None:
    row = compare(_entry({"n": 10, "ok": "✓"}), Measured({"n": 10, "ok": "✓"}, receipts=("p1", "x/y.json")), "")
    assert (row.status, row.explanation, row.difference) == (H.REPRODUCED, "every published value matches exactly",
                                                             "none")
    assert row.receipts == ("receipts/c/p1.json", "x/y.json") and row.status_class == "reproduced"
    row = compare(_entry({"n": 10}), Measured({"n": 10.4}, tolerance=0.05), "")
    assert row.explanation == ("every published value matches (numbers compared by relative difference |here − published| "
                               "/ |published| against ±5%, the campaign's stated tolerance; largest n: 10.4 vs 10, "
                               "+4.0%)")
    assert row.tolerance == 0.05 and [k.outcome for k in row.keys] == ["match"]


def test_magnitudes_differ_under_an_agreeing_verdict() -> None:
    row = compare(_entry({"ok": "✓", "n": 10, "m": 4}), Measured({"ok": "✓", "n": 30, "m": 4}, tolerance=0.1), "")
    assert row.status == H.MAGNITUDES
    assert row.explanation == ("the verdict agrees (ok: ✓); n: 30 here vs 10 published (×3)"
                               " (numbers compared by relative difference |here − published| / |published| against "
                               "±10%, the campaign's stated tolerance)")
    assert row.difference == "n: 30 here vs 10 published (×3)"
    assert [(k.key, k.kind, k.outcome) for k in row.keys] == [("ok", "verdict", "match"), ("n", "magnitude", "differs"),
                                                                ("m", "magnitude", "match")]


def test_numbers_only_differ_without_a_verdict_key() -> None:
    row = compare(_entry({"n": 10}), Measured({"n": 12}), "")
    assert (row.status, row.explanation) == (H.DIFFERS, "n: 12 here vs 10 published (+20.0%)")


def test_a_differing_verdict_differs_and_unmeasured_keys_are_named() -> None:
    row = compare(_entry({"ok": "✓", "n": 1, "z": 2}), Measured({"ok": "U", "n": 1}), "")
    assert row.status == H.DIFFERS
    assert row.explanation == "ok: U here vs ✓ published; z: not measured by this campaign"
    assert row.difference == "ok: U here vs ✓ published"


def test_verdict_keys_are_named_by_the_entry() -> None:
    row = compare(_entry({"states": 100}, verdict_keys=["states"]), Measured({"states": 105}, tolerance=0.1), "")
    assert row.status == H.DIFFERS and row.keys[0].kind == "verdict"   # no tolerance for a verdict key
    row = compare(_entry({"states": 100}, verdict_keys=[]), Measured({"states": 105}, tolerance=0.1), "")
    assert row.status == H.REPRODUCED and row.keys[0].kind == "magnitude"


def test_partial_and_a_label_measured_as_a_note() -> None:
    row = compare(_entry({"ok": "✓", "n": 1}), Measured({"ok": "measured by the TLC chapter", "n": 1}), "")
    assert row.status == H.PARTIAL
    assert row.explanation == "everything measured agrees; ok: measured by the TLC chapter"
    row = compare(_entry({"ok": "✓", "n": 1}), Measured({"ok": None, "n": 1}), "")
    assert row.explanation == "everything measured agrees; ok: not measured by this campaign"


def test_contradicted_names_the_evidence_and_what_still_matches() -> None:
    m = Measured({"rejected": True}, contradicted_by=("tamper:a", "tamper:b"), contradiction="two forgeries loaded")
    row = compare(_entry({"rejected": True}), m, "")
    assert row.status == H.CONTRADICTED
    assert row.explanation == ("two forgeries loaded (evidence: tamper:a, tamper:b); the published value itself "
                               "(rejected) matches")
    row = compare(_entry({"rejected": True}), Measured({"rejected": False}, contradicted_by=("t",)), "")
    assert row.explanation == "this campaign's receipts contradict the published claim (evidence: t)"


def test_variant_and_not_run_in_words() -> None:
    row = compare(_entry({"n": 1}), Measured({"n": 2}), "", variant="reps=2")
    assert row.status == H.VARIANT and row.explanation == (
        "measured with other parameters than the paper's (reps=2); compare it with this project's default run on "
        "the reproduction report, not with the published value")
    row = compare(_entry({"n": 1}), None, "no keys")
    assert (row.status, row.explanation, row.why, row.difference, row.measured) == (H.NOT_RUN, "no keys", "no keys",
                                                                                     "-", None)


def test_rows_from_what_a_campaign_returned() -> None:
    entry = _entry({"n": 1})
    assert H._row(entry, "not implemented").why == "not implemented"
    assert H._row(entry, {"c.x": "needs keys"}).why == "needs keys"
    assert H._row(entry, {}).why == "campaign c ran, and none of its protocols measures this yet"
    assert H._row(entry, {}).status == H.NOT_MEASURED
    assert H._row(entry, {"c.x": H.NotMeasured("one host only")}).explanation == "one host only"
    assert H._row(entry, {"c.x": Measured({"n": 1})}).status == H.REPRODUCED


def test_chapter_rows_of_a_variant_name_the_changed_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    from probes import campaigns

    campaign = campaigns.get("consume_race")
    default = campaign.resolve()
    receipts = [object()]
    fake = types.SimpleNamespace(name="consume_race", resolve=campaign.resolve, params=campaign.params)
    measured: dict[str, Any] = {}
    monkeypatch.setattr(H, "extractor", lambda c: lambda rs: measured)
    variant_params = {**default, "reps": 2, "seed": 9}
    rows = H.chapter_rows(fake, types.SimpleNamespace(receipts=receipts, params=variant_params))
    assert rows and all(r.status == H.NOT_MEASURED for r in rows)   # {} -> no value; a variant is named when measured
    measured.update({e["id"]: Measured(dict(e["published"])) for e in H.load_published()
                     if e["campaign"] == "consume_race"})
    rows = H.chapter_rows(fake, types.SimpleNamespace(receipts=receipts, params=variant_params))
    assert rows and all(r.status == H.VARIANT for r in rows)
    assert "(reps=2, seed=9)" in rows[0].explanation
    rows = H.chapter_rows(fake, types.SimpleNamespace(receipts=receipts, params=default))
    entries = {e["id"]: e for e in H.load_published()}
    for r in rows:  # its own published values: reproduced, unless the entry names a build or a second reading
        e = entries[r.id]
        want = H.REIMPLEMENTATION if "build" in e else H.DISAGREE if e.get("readings") else H.REPRODUCED
        assert r.status == want, (r.id, r.status)
    assert {r.status for r in rows} == {H.REPRODUCED, H.REIMPLEMENTATION, H.DISAGREE}
    rows = H.chapter_rows(fake, types.SimpleNamespace(receipts=[], params=default))
    assert rows[0].why == "no receipts for consume_race in this run"


def test_closeness_and_what_counts_as_a_verdict() -> None:
    assert H._close(0.5, 0.52, 0.05) and not H._close(0.5, 0.56, 0.05)   # relative: 0.52 is +4 %, 0.56 +12 %
    assert not H._close(True, 2, 1.0) and H._close(True, True, 0.0)      # yes/no never within a tolerance
    assert not H._close([1, 2], [1], 0.0) and not H._close({"a": 1}, {"b": 1}, 0.0)
    assert H._close({"a": [1, 2.04]}, {"a": [1, 2]}, 0.05)
    assert not H._is_verdict_value([]) and not H._is_verdict_value({}) and not H._is_verdict_value(["✓", 1])
    assert H._is_verdict_value({"a": ["✓", True]}) and not H._is_verdict_value(3)


def test_a_row_not_run_has_no_keys_and_no_tolerance() -> None:
    row = compare(_entry({"n": 1}), None, "why")
    assert row.keys == [] and row.tolerance == 0.0 and row.receipts == () and row.status_class == "notrun"


def test_rows_without_a_root_read_each_campaigns_shown_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from probes.core import runs

    seen: dict = {}
    monkeypatch.setattr(runs, "shown_run", lambda name: types.SimpleNamespace(directory=Path(f"/r/{name}"))
                        if name == "tlc" else None)
    monkeypatch.setattr(H, "rows_for", lambda dirs, variants=None: seen.update(dirs) or [])
    H.headline_rows()
    assert seen["tlc"] == Path("/r/tlc") and seen["langgraph"] is None
    assert set(seen) == {e["campaign"] for e in H.load_published()}


def test_edges_of_the_status_rules() -> None:
    # an unmeasured key is not "the published value itself matches" of a contradiction
    m = Measured({"rejected": True}, contradicted_by=("t",), contradiction="forged")
    row = compare(_entry({"rejected": True, "z": 1}), m, "")
    assert row.explanation == "forged (evidence: t); the published value itself (rejected) matches"
    # a differing verdict is not a magnitude: no tolerance sentence
    row = compare(_entry({"ok": "✓"}), Measured({"ok": "U"}, tolerance=0.1), "")
    assert (row.status, row.explanation) == (H.DIFFERS, "ok: U here vs ✓ published")
    # an unmeasured verdict key beside a differing magnitude: differs, not "verdict reproduced"
    row = compare(_entry({"ok": "✓", "n": 10}), Measured({"n": 30}), "")
    assert row.status == H.DIFFERS
    assert row.explanation == "n: 30 here vs 10 published (×3); ok: not measured by this campaign"
    assert H._text(1000.5) == "1,000"


def test_a_variant_names_only_the_parameters_that_differ_in_value(monkeypatch: pytest.MonkeyPatch) -> None:
    import copy

    from probes import campaigns

    campaign = campaigns.get("consume_race")
    got = {e["id"]: Measured(dict(e["published"])) for e in H.load_published() if e["campaign"] == "consume_race"}
    fake = types.SimpleNamespace(name="consume_race", resolve=campaign.resolve, params=campaign.params)
    monkeypatch.setattr(H, "extractor", lambda c: lambda rs: got)
    params = {k: copy.deepcopy(v) for k, v in campaign.resolve().items()} | {"reps": 2}
    rows = H.chapter_rows(fake, types.SimpleNamespace(receipts=[object()], params=params))
    assert "(reps=2)" in rows[0].explanation
