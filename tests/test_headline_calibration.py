"""Headline calibration: each status's computation pinned on hand-made inputs.

Relative tolerances and their edges, a published 0, counts made under other or unstated
conditions (not comparable), behaviour reproduced while labels differ, entries and keys
without a source, two readings of disagreeing sources, a re-implementation measured in
place of the paper's build; then the committed published.json against ../shared and the
reference rows whose statuses these rules decide.
"""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from probes import headline as H
from probes.headline import Measured, compare

ROOT = Path(__file__).resolve().parent.parent
SHARED = next((p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if (p / "CAMPAIGNS.md").exists()),
              None)
SOURCE = [{"file": "CAMPAIGNS.md", "line": 90, "quote": "Gate 0 ms"}]


def _entry(published: dict, **extra: object) -> dict:
    return {"id": "c.x", "campaign": "c", "what": "w", "published": published, "sources": SOURCE, **extra}


# --- relative tolerance ---------------------------------------------------------------------

@pytest.mark.parametrize("published, measured, tol, close", [
    (0.40, 0.30, 0.15, False),   # -25 %: the dose_gate0 point
    (0.375, 0.45, 0.15, False),  # +20 %: the dose_gate500 point
    (0.40, 0.34, 0.15, True),    # -15 %: on the edge, inside
    (0.40, 0.339, 0.15, False),  # just outside
    (0.40, 0.46, 0.15, True),    # +15 %
    (0.40, 0.461, 0.15, False),
    (1000, 1150, 0.15, True), (1000, 1151, 0.15, False),
    (0, 0, 0.0, True), (0, 0.0, 0.5, True), (0, 0.01, 0.5, False), (0, -1, 10.0, False),  # a published 0
    (5, 0, 0.99, False), (5, 0, 1.0, True),   # a measured 0 is -100 %
])
def test_relative_tolerance_edges(published: float, measured: float, tol: float, close: bool) -> None:
    assert H._close(published, measured, tol) is close


def test_the_relative_difference_and_its_words() -> None:
    assert H.relative_difference(0.4, 0.3) == pytest.approx(0.25)
    assert H.relative_difference(0, 0) == 0 and H.relative_difference(0, 1e-9) == float("inf")
    assert H.relative_difference(-2, -3) == pytest.approx(0.5)
    assert H.relative_difference(float("nan"), 1) == float("inf")


def test_a_list_names_each_element_beyond_the_tolerance() -> None:
    row = compare(_entry({"saturation": [1.0, 0.4, 0.3, 0.275, 0.275]}),
                  Measured({"saturation": [1.0, 0.3, 0.275, 0.275, 0.25]}, tolerance=0.15), "")
    assert row.status == H.DIFFERS
    assert row.explanation == (
        "saturation: [1, 0.3, 0.275, 0.275, 0.25] here vs [1, 0.4, 0.3, 0.275, 0.275] published "
        "(beyond ±15%: saturation[1] 0.3 vs 0.4 (-25.0%)) (numbers compared by relative difference "
        "|here − published| / |published| against ±15%, the campaign's stated tolerance)")


def test_reproduced_states_what_was_compared_and_the_largest_difference() -> None:
    row = compare(_entry({"saturation": [1.0, 0.4]}), Measured({"saturation": [1.0, 0.38]}, tolerance=0.15), "")
    assert row.status == H.REPRODUCED
    assert row.explanation == ("every published value matches (numbers compared by relative difference |here − "
                               "published| / |published| against ±15%, the campaign's stated tolerance; largest "
                               "saturation[1]: 0.38 vs 0.4, -5.0%)")


def test_a_published_zero_is_compared_exactly() -> None:
    e = _entry({"violations": 0}, verdict_keys=[])
    assert compare(e, Measured({"violations": 0}, tolerance=0.5), "").status == H.REPRODUCED
    row = compare(e, Measured({"violations": 1}, tolerance=0.5), "")
    assert row.status == H.DIFFERS and "a published 0 matches only a measured 0" in row.explanation


def test_a_null_element_is_not_stated_and_not_compared() -> None:
    assert H._close([1.0, None, 0.4], [1.0, 0.9, 0.4], 0.0)
    assert not H._close([1.0, None, 0.4], [1.0, 0.9, 0.5], 0.0)
    assert H._close({"a": None, "b": 1}, {"a": 7, "b": 1}, 0.0)


# --- not comparable -------------------------------------------------------------------------

def test_counts_under_another_reduction_are_not_comparable() -> None:
    e = _entry({"result": "holds", "distinct": 7_400_000, "depth": 24}, conditions={"N": 10, "reduction": "none"})
    row = compare(e, Measured({"result": "holds", "distinct": 338_253, "depth": 24},
                              conditions={"N": 10, "reduction": "view+symmetry"}), "")
    assert row.status == H.NOT_COMPARABLE
    assert row.explanation == ("the verdict agrees (result: holds); the counts were made under other conditions "
                               "(reduction: view+symmetry here vs none published), so they are shown, not compared: "
                               "distinct: 338,253 here vs 7,400,000 published (×0.0457); depth: 24 here vs 24 "
                               "published (equal)")
    assert [k.outcome for k in row.keys] == ["match", "not comparable", "not comparable"]
    # the same counts under the published conditions are compared, and differ
    same = compare(e, Measured({"result": "holds", "distinct": 338_253, "depth": 24},
                               conditions={"N": 10, "reduction": "none"}), "")
    assert same.status == H.MAGNITUDES


def test_conditions_the_source_does_not_state_or_the_run_does_not_record() -> None:
    e = _entry({"result": "holds", "distinct": [8610]}, conditions={"constant_sets": None},
               conditions_note="neither source states them")
    row = compare(e, Measured({"result": "holds", "distinct": [8610]}, conditions={"constant_sets": [[3]]}), "")
    assert row.status == H.NOT_COMPARABLE  # equal numbers are not a reproduction under unknown conditions
    assert "(constant_sets: not stated by the source; neither source states them)" in row.explanation
    assert H.incomparable({"N": 3}, None) == ["N: not recorded by this run"]
    assert H.incomparable({"N": 3}, {"M": 1}) == ["N: not recorded by this run"]
    assert H.incomparable({"N": 3}, {"N": 3}) == [] and H.incomparable(None, {"N": 3}) == []
    assert H.incomparable({"N": 3, "k": None}, {"N": 4}) == ["N: 4 here vs 3 published", "k: not stated by the source"]


def test_not_comparable_never_hides_a_differing_verdict_or_a_compared_magnitude() -> None:
    e = _entry({"result": "holds", "distinct": 10}, conditions={"reduction": "none"})
    row = compare(e, Measured({"result": "violated", "distinct": 10}, conditions={"reduction": "view"}), "")
    assert row.status == H.DIFFERS
    e = _entry({"result": "holds", "distinct": 10, "depth": 5}, conditions={"reduction": "none"},
               verdict_keys=["result", "depth"])
    row = compare(e, Measured({"result": "holds", "distinct": 99, "depth": 5}, conditions={"reduction": "view"}), "")
    assert row.status == H.NOT_COMPARABLE  # depth is a verdict key here: compared, and it matches
    e = _entry({"distinct": 10}, conditions={"reduction": "none"})
    assert compare(e, Measured({"distinct": 3}, conditions={"reduction": "view"}), "").status == H.NOT_COMPARABLE


# --- behaviour reproduced, labels differ ----------------------------------------------------

def test_behaviour_reproduced_while_only_the_labels_differ() -> None:
    e = _entry({"LV": "✗", "safety": "✓", "effect_fired_twice": False, "restore_refused": True})
    row = compare(e, Measured({"LV": "D", "safety": "U", "effect_fired_twice": False, "restore_refused": True}), "")
    assert row.status == H.BEHAVIOUR and row.status_class == "labels"
    assert row.explanation == ("the behaviour the paper reports is measured (effect_fired_twice: no, restore_refused: "
                               "yes); only the labels differ: LV: D here vs ✗ published; safety: U here vs ✓ "
                               "published")


@pytest.mark.parametrize("measured", [
    {"LV": "D", "effect_fired_twice": True, "restore_refused": True},   # the behaviour differs too
    {"LV": "D", "restore_refused": True},                                # a behaviour is not measured
])
def test_labels_differ_with_the_behaviour_not_shown_to_match(measured: dict) -> None:
    e = _entry({"LV": "✗", "effect_fired_twice": False, "restore_refused": True})
    assert compare(e, Measured(measured), "").status == H.DIFFERS


def test_labels_alone_differing_is_not_behaviour() -> None:
    assert compare(_entry({"LV": "✗", "PC": "✓"}), Measured({"LV": "D", "PC": "✓"}), "").status == H.DIFFERS
    # a behaviour that is a number counts as behaviour, compared within the tolerance
    e = _entry({"LV": "✗", "s1_runs": 2})
    assert compare(e, Measured({"LV": "D", "s1_runs": 2}), "").status == H.BEHAVIOUR
    assert compare(e, Measured({"LV": "D", "s1_runs": 3}), "").status == H.DIFFERS


# --- sources --------------------------------------------------------------------------------

def test_an_entry_without_a_source_is_shown_never_scored() -> None:
    e = {"id": "c.x", "campaign": "c", "what": "w", "published": {"n": 1}}
    for got in (Measured({"n": 1}), Measured({"n": 5})):
        row = compare(e, got, "")
        assert row.status == H.UNSOURCED and row.measured == got.value
    assert compare({**e, "sources": []}, Measured({"n": 1}), "").status == H.UNSOURCED
    assert compare(e, None, "no receipts").status == H.NOT_RUN


def test_an_unsourced_key_is_not_compared() -> None:
    e = _entry({"result": "holds", "seconds": 146}, unsourced={"seconds": "no line gives it"})
    row = compare(e, Measured({"result": "holds", "seconds": 33}), "")
    assert row.status == H.REPRODUCED
    assert row.explanation == ("every sourced published value matches exactly; seconds: published 146 has no source "
                               "line (no line gives it); not compared")
    assert [k.outcome for k in row.keys] == ["match", "unsourced"]
    row = compare(e, Measured({"result": "violated", "seconds": 146}), "")
    assert row.status == H.DIFFERS


# --- two readings ---------------------------------------------------------------------------

READINGS = [{"reading": "summary sentence", "published": {"saturation": [1.0, 0.4, None]},
             "sources": [{"file": "paper-summary.txt", "line": 26, "quote": "100 ms 跌到 0.40"}]}]


def test_two_readings_that_compare_differently_are_both_shown() -> None:
    e = _entry({"saturation": [1.0, 1.0, 0.375]}, reading="campaign table", readings=READINGS)
    row = compare(e, Measured({"saturation": [1.0, 1.0, 0.38]}, tolerance=0.15), "")
    assert row.status == H.DISAGREE and row.status_class == "disagree"
    assert [(r.name, r.status) for r in row.readings] == [("campaign table", H.REPRODUCED),
                                                           ("summary sentence", H.DIFFERS)]
    assert row.explanation.startswith("the published sources give different values, and the measurement compares "
                                      "differently with each: reading “campaign table” (CAMPAIGNS.md line 90): ✓ "
                                      "reproduced — every published value matches")
    assert "reading “summary sentence” (paper-summary.txt line 26): ⚠ differs — saturation: [1, 1, 0.38] here vs " \
           "[1, 0.4, —] published" in row.explanation
    assert row.readings[1].sources == READINGS[0]["sources"]


def test_readings_that_agree_keep_their_common_status() -> None:
    e = _entry({"saturation": [1.0, 0.5, 0.375]}, readings=READINGS)
    row = compare(e, Measured({"saturation": [1.0, 0.2, 0.38]}, tolerance=0.15), "")
    assert row.status == H.DIFFERS and len(row.readings) == 2
    assert row.explanation.startswith("every reading of the published sources: reading “CAMPAIGNS.md line 90”")
    assert compare(e, None, "no receipts").status == H.NOT_RUN


# --- the paper's build ----------------------------------------------------------------------

def test_a_re_implementation_is_not_the_papers_build() -> None:
    e = _entry({"FD": "✓"}, build="remit-contract 0.1.2")
    row = compare(e, Measured({"FD": "✓"}, build="remit_ref, this project's re-implementation (code fingerprint x)"),
                  "")
    assert row.status == H.REIMPLEMENTATION and row.status_class == "reimplementation"
    assert row.explanation == ("the paper measured remit-contract 0.1.2; these receipts measured remit_ref, this "
                               "project's re-implementation (code fingerprint x), so this is not a reproduction of the "
                               "paper's build. On that build: ✓ reproduced — every published value matches exactly")
    assert "a build they do not record" in compare(e, Measured({"FD": "✓"}), "").explanation
    assert compare(e, Measured({"FD": "✓"}, build="remit-contract 0.1.2"), "").status == H.REPRODUCED
    assert compare(e, Measured({"FD": "✗"}, build="remit-contract 0.1.2"), "").status == H.DIFFERS


def test_the_build_is_read_from_the_receipts_manifests() -> None:
    def receipt(packages: dict, code: str = "c1") -> types.SimpleNamespace:
        return types.SimpleNamespace(manifest={"fingerprint_inputs": {"packages": packages, "code": code}})

    assert H.recorded_build([receipt({"remit-contract": "0.1.2"})] * 2, "remit-contract", "remit_ref") == \
        "remit-contract 0.1.2"
    mixed = [receipt({"remit-contract": "0.1.2"}), receipt({}, "c2")]
    assert H.recorded_build(mixed, "remit-contract", "remit_ref") == (
        "remit_ref, this project's re-implementation (code fingerprint c1, c2)")
    assert H.recorded_build([receipt({"langgraph": "1.2.9"})], "remit-contract", "remit_ref").startswith("remit_ref")
    assert H.own_build("remit_ref", []) == "remit_ref, this project's re-implementation (code fingerprint not recorded)"


# --- the campaigns' computed sentences --------------------------------------------------------

def _forgery(kind: str, error: str | None, stage: str | None) -> tuple[types.SimpleNamespace, dict]:
    """A forgery's CV verdict as the kit judges it, and what AutoGen's forgeries protocol observed."""
    from probes.core.checker import Property

    outcome = "refused loudly" if error else "accepted, behaviour changed"
    verdict = types.SimpleNamespace(path=f"tamper:{kind}", property=Property.CV,
                                    evidence={"refused": bool(error), "error": error, "outcome": outcome,
                                              "invalid_edit": kind == "structural"})
    return verdict, {"refused_at": stage}


def _forgery_receipt(probe: str, forgeries: list[tuple[types.SimpleNamespace, dict]]) -> types.SimpleNamespace:
    return types.SimpleNamespace(probe=probe, verdicts=[v for v, _ in forgeries],
                                 observations={"forgeries": {v.path.removeprefix("tamper:"): seen
                                                             for v, seen in forgeries}})


def test_autogen_sentence_counts_every_refused_and_accepted_kind() -> None:
    from probes.paper.autogen import headlines

    rep = [_forgery("structural", "ValueError", "load_state"), _forgery("team-unknown-thread-type", "ValueError",
                                                                        "load_state"),
           _forgery("speaker", "RuntimeError", "run"), _forgery("forged", None, None), _forgery("rewound", None, None)]
    receipts = [_forgery_receipt(f"forgeries.file.rep{i}", rep) for i in (1, 2)]
    m = headlines(receipts)["autogen.tamper"]
    assert m.value["rejected"] is True and m.value["refused"] == ["speaker", "structural", "team-unknown-thread-type"]
    assert m.contradiction == ("of 5 kinds of tampered state, 2 were loaded by load_state and run on without any "
                               "error in at least one of 2 repetition(s) (forged (behaviour changed), rewound "
                               "(behaviour changed); 2 probe(s)) and 3 were refused in every repetition: speaker (in "
                               "the run after load_state), structural (at load_state), team-unknown-thread-type (at "
                               "load_state)")
    assert m.contradicted_by == ("tamper:forged", "tamper:rewound")
    refused_only = [_forgery_receipt("forgeries.file.rep1", rep[:3])]
    assert headlines(refused_only)["autogen.tamper"].contradicted_by == ()
    # refused, but in the run after load_state: not the published rejection at load_state
    late = [_forgery_receipt("forgeries.file.rep1", [_forgery("structural", "ValueError", "run")])]
    assert headlines(late)["autogen.tamper"].value["rejected"] is False


def test_tlc_conditions_are_read_from_the_run() -> None:
    from probes.paper.tla import _conditions

    run = {"constants": {"N": 10, "IP": 5, "NV": 4, "MaxResumes": 5, "MaxCrashes": 4, "MaxStrays": 4, "Replay": False},
           "tags": {"reduction": "view+symmetry"}}
    assert _conditions(run) == {"N": 10, "IP": 5, "NV": 4, "MaxResumes": 5, "MaxCrashes": 4, "MaxStrays": 4,
                                "reduction": "view+symmetry"}
    assert _conditions({"constants": {"N": 3}, "tags": {}}) == {"N": 3, "reduction": "none"}


# --- the committed published.json --------------------------------------------------------------

def _all_sources(entry: dict) -> list[dict]:
    return list(entry.get("sources") or []) + [s for r in entry.get("readings", ()) for s in r["sources"]]


def test_every_published_entry_names_its_sources_and_keys() -> None:
    for e in H.load_published():
        assert e["sources"], e["id"]
        for s in _all_sources(e):
            assert s["file"] in H.SOURCE_FILES and isinstance(s["line"], int) and s["quote"], (e["id"], s)
        assert set(e.get("unsourced", {})) <= set(e["published"]), e["id"]
        for r in e.get("readings", ()):
            assert r["reading"] and r["sources"] and set(r["published"]) <= set(e["published"]), e["id"]
    published = {e["id"]: e for e in H.load_published()}
    assert published["crewai.checkpointconfig"]["published"] == {"counter": 12, "s1_runs": 2}
    assert set(published["tlc.r8_scale"]["unsourced"]) == {"seconds"}
    assert set(published["remit.overhead"]["unsourced"]) == {"remit_contract_gate_off_pct",
                                                             "remit_contract_gate_on_pct"}
    assert published["consume_race.dose_gate500"]["readings"][0]["published"]["saturation"][1] == 0.4
    for hid in ("tlc.r8_fault_depths", "remit.crash_path", "remit.overhead_container", "remit.throughput_flat",
                "remit.stock_duplicates", "consume_race.two_hosts"):
        assert hid in published, hid


@pytest.mark.skipif(SHARED is None, reason="../shared not beside this checkout")
def test_every_quote_is_on_its_source_line() -> None:
    assert SHARED is not None
    lines = {f: (SHARED / f).read_text().split("\n") for f in H.SOURCE_FILES}
    for e in H.load_published():
        for s in _all_sources(e):
            assert s["quote"] in lines[s["file"]][s["line"] - 1], (e["id"], s)


# --- the tolerance in words, and the elements beyond it (mutation survivors, issue 24 item 9) ---


def test_a_tolerance_is_printed_as_made() -> None:
    """A tolerance is printed as the percentage it is: a whole percent as such, one below a
    percent with its digits (0.05/7.4, R8's, is ±0.676%, not ±1%), a whole percent of four digits
    in full (±1234%, not the rounded 1.23e+03%). A percentage counts as whole up to float error
    strictly below 1e-9 points: exactly 1e-9 points is printed as made, not as 0%."""
    assert [H.tolerance_text(t) for t in (0.1, 0.15, 0.0, 0.125)] == ["10%", "15%", "0%", "12.5%"]
    assert H.tolerance_text(0.05 / 7.4) == "0.676%"
    assert H.tolerance_text(12.34) == "1234%"
    assert H.tolerance_text(1e-9 / 100) == "1e-09%"  # 1e-9 / 100 * 100 is exactly the float 1e-9


def test_beyond_the_tolerance_leaves_out_an_element_on_its_edge() -> None:
    """1.01 against a published 1 is +1% exactly, which float arithmetic computes a hair above
    0.01: at ±1% it matches (as in the comparison itself), so only the element really beyond the
    tolerance is named."""
    assert H.relative_difference(1, 1.01) > 0.01 and H._close(1, 1.01, 0.01)
    row = compare(_entry({"x": [1, 10]}), Measured({"x": [1.01, 20]}, tolerance=0.01), "")
    assert row.status == H.DIFFERS
    assert row.keys[0].detail == "x: [1.01, 20] here vs [1, 10] published (beyond ±1%: x[1] 20 vs 10 (×2))"


def test_no_element_list_where_the_values_do_not_line_up() -> None:
    """Element differences are named only where both values have the same places: a measured map
    with a key the published one lacks, or a list measured where a map was published, is shown in
    full with no element list (and the shapes do not break the comparison)."""
    more = compare(_entry({"x": {"a": 1}}), Measured({"x": {"a": 2, "b": 3}}, tolerance=0.1), "")
    assert more.status == H.DIFFERS and more.keys[0].detail == "x: {a: 2, b: 3} here vs {a: 1} published"
    fewer = compare(_entry({"x": {"a": 1, "b": 2}}), Measured({"x": {"a": 2}}, tolerance=0.1), "")
    assert fewer.keys[0].detail == "x: {a: 2} here vs {a: 1, b: 2} published"
    other = compare(_entry({"x": {"a": 1, "b": 2}}), Measured({"x": {"a": 2, "c": 2}}, tolerance=0.1), "")
    assert other.keys[0].detail == "x: {a: 2, c: 2} here vs {a: 1, b: 2} published"
    shape = compare(_entry({"x": {"a": 1}}), Measured({"x": [1]}, tolerance=0.1), "")
    assert shape.status == H.DIFFERS and shape.keys[0].detail == "x: [1] here vs {a: 1} published"
    longer = compare(_entry({"x": [1, 2]}), Measured({"x": [1, 5, 3]}, tolerance=0.1), "")
    assert longer.status == H.DIFFERS and longer.keys[0].detail == "x: [1, 5, 3] here vs [1, 2] published"
    # maps with the same keys do line up: the element beyond the tolerance is named
    same = compare(_entry({"x": {"a": 1, "b": 2}}), Measured({"x": {"a": 2, "b": 2}}, tolerance=0.1), "")
    assert same.keys[0].detail == "x: {a: 2, b: 2} here vs {a: 1, b: 2} published (beyond ±10%: x[a] 2 vs 1 (×2))"


def test_an_exact_comparison_names_only_the_elements_that_differ() -> None:
    """At tolerance 0 an element equal to its published value is no difference: only the
    differing element is named."""
    row = compare(_entry({"x": [1, 2]}), Measured({"x": [1, 3]}), "")
    assert row.status == H.DIFFERS and row.keys[0].detail == "x: [1, 3] here vs [1, 2] published (x[1] 3 vs 2 (+50.0%))"


def test_the_largest_difference_is_the_largest_relative_one_among_the_compared_values() -> None:
    """The reproduced row names the largest *relative* difference (x[0], +10%), not the last
    element nor the largest number (x[1], +1%); an unsourced value, shown but never compared,
    is not among them however far it is."""
    row = compare(_entry({"x": [10, 100]}), Measured({"x": [11, 101]}, tolerance=0.15), "")
    assert row.status == H.REPRODUCED and row.explanation.endswith("largest x[0]: 11 vs 10, +10.0%)")
    e = _entry({"x": 10, "y": 100}, unsourced={"y": "read off a figure"})
    row = compare(e, Measured({"x": 11, "y": 200}, tolerance=0.15), "")
    assert row.status == H.REPRODUCED and "; largest x: 11 vs 10, +10.0%)" in row.explanation
    assert "largest y" not in row.explanation

def test_element_pairs_only_where_both_values_are_lists_of_one_length_or_both_maps() -> None:
    """A published list against a shorter measured list, a published list or map against a
    measured number: no element is paired (zip would pair a prefix; a number has no elements),
    both values are shown in full. A list of more than 256 elements still pairs (lengths are
    compared by value)."""
    shorter = compare(_entry({"x": [1, 2, 3]}), Measured({"x": [1, 5]}, tolerance=0.1), "")
    assert shorter.status == H.DIFFERS and shorter.keys[0].detail == "x: [1, 5] here vs [1, 2, 3] published"
    for published, text in (([1, 2], "[1, 2]"), ({"a": 1}, "{a: 1}")):
        row = compare(_entry({"x": published}), Measured({"x": 5}, tolerance=0.1), "")
        assert row.status == H.DIFFERS and row.keys[0].detail == f"x: 5 here vs {text} published"
    assert list(H._number_pairs("x", [1] * 300, [1] * 299 + [2]))[-1] == ("x[299]", 1, 2)


def test_a_negative_published_number_has_a_relative_difference() -> None:
    """Only a published 0 lacks a scale; -2 to -3 is +50% of its magnitude."""
    assert H.describe_difference("x", -2, -3) == "x: -3 here vs -2 published (+50.0%)"


def test_an_unsourced_value_is_neither_a_verdict_nor_behaviour() -> None:
    """A key without a source is shown, never compared: it does not stop the verdict keys from
    agreeing (magnitudes differ, not differs), nor the behaviour from matching (labels differ)."""
    e = _entry({"result": "holds", "note": "read off a figure", "n": 10}, unsourced={"note": "no line gives it"})
    row = compare(e, Measured({"result": "holds", "note": "other", "n": 20}, tolerance=0.1), "")
    assert row.status == H.MAGNITUDES and row.explanation.startswith("the verdict agrees (result: holds); n: 20")
    e = _entry({"LV": "✗", "effect_fired_twice": False, "seconds": 146}, unsourced={"seconds": "no line gives it"})
    row = compare(e, Measured({"LV": "D", "effect_fired_twice": False, "seconds": 33}), "")
    assert row.status == H.BEHAVIOUR


def test_not_comparable_counts_with_a_verdict_unmeasured_differ() -> None:
    """Counts set apart for their conditions leave the verdict to decide, and an unmeasured
    verdict key decides nothing: the row differs rather than reading "verdict reproduced"."""
    e = _entry({"result": "holds", "distinct": 10}, conditions={"reduction": "none"})
    row = compare(e, Measured({"distinct": 3}, conditions={"reduction": "view"}), "")
    assert row.status == H.DIFFERS and [k.outcome for k in row.keys] == ["unmeasured", "not comparable"]


def test_a_differing_row_also_names_its_counts_set_apart() -> None:
    """A row whose verdict differs and that also has counts made under other conditions names
    those counts after the difference, with the conditions."""
    e = _entry({"result": "holds", "distinct": 10}, conditions={"reduction": "none"})
    row = compare(e, Measured({"result": "violated", "distinct": 3}, conditions={"reduction": "view"}), "")
    assert row.status == H.DIFFERS
    assert row.explanation == ("result: violated here vs holds published; not comparable (reduction: view here vs "
                               "none published): distinct: 3 here vs 10 published (×0.3)")


def test_several_readings_not_run_or_not_measured_keep_the_plain_reason() -> None:
    """Readings matter only when something was compared: not run (or not measured) the row
    gives its reason alone, and it is the first reading's row (the entry's own published value)."""
    e = _entry({"saturation": [1.0, 1.0, 0.375]}, readings=READINGS)
    for measured, status in ((None, H.NOT_RUN), (H.NotMeasured("no protocol measures it"), H.NOT_MEASURED)):
        row = compare(e, measured, "no receipts")
        assert row.status == status and row.explanation in ("no receipts", "no protocol measures it")
        assert len(row.readings) == 2
    row = compare(e, Measured({"saturation": [1.0, 1.0, 0.38]}, tolerance=0.15), "")
    assert row.published == {"saturation": [1.0, 1.0, 0.375]} and row.sources == SOURCE


def test_not_measured_is_a_frozen_hashable_value_and_a_key_is_no_label_by_default() -> None:
    """``NotMeasured`` is a value (frozen, hashable: equal reasons are one value); a
    ``KeyComparison`` compares a label only when it says so."""
    import dataclasses

    assert hash(H.NotMeasured("why")) == hash(H.NotMeasured("why"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        H.NotMeasured("why").why = "other"  # type: ignore[misc]
    assert H.KeyComparison("n", 1, 1, "magnitude", "match").label is False

def test_a_label_value_is_a_label_or_a_non_empty_collection_of_labels_only() -> None:
    """Only conformance labels make a label value: a list or map with any other element, or an
    empty one, is not (an empty published value states no label)."""
    assert H._is_label_value(["✓", "✗"]) is True and H._is_label_value({"LV": "D"}) is True
    assert H._is_label_value(["✓", "holds"]) is False and H._is_label_value({"LV": "holds"}) is False
    assert H._is_label_value([]) is False and H._is_label_value({}) is False


def test_equal_numbers_are_equal_in_words_however_they_were_made() -> None:
    """Two equal counts read from different places are "equal", not "+0.0%"."""
    assert H.describe_difference("d", 7_400_000, int("7400000")) == "d: 7,400,000 here vs 7,400,000 published (equal)"


def test_a_condition_below_the_published_one_is_a_reason_too() -> None:
    """Any other value of a condition makes the counts incomparable, smaller as well as larger."""
    assert H.incomparable({"N": 3}, {"N": 2}) == ["N: 2 here vs 3 published"]


def test_the_papers_build_named_alike_is_the_same_build() -> None:
    """The build the receipts record is compared with the paper's by value: the same name made
    at run time (not the JSON's string object) is the paper's build, no re-implementation."""
    e = _entry({"result": "holds"}, build="langgraph 1.2.9")
    same = compare(e, Measured({"result": "holds"}, build="".join(["langgraph ", "1.2.9"])), "")
    assert same.status == H.REPRODUCED
    other = compare(e, Measured({"result": "holds"}, build="remit_ref 0.1"), "")
    assert other.status == H.REIMPLEMENTATION


def test_recorded_build_needs_one_version_in_every_receipt() -> None:
    """A package build is named only when the receipts record exactly one version of it: none
    (no receipts) or two versions make it this project's own code."""
    def receipt(version: str | None) -> types.SimpleNamespace:
        return types.SimpleNamespace(manifest={"fingerprint_inputs": {"packages": {"pkg": version}, "code": "c1"}})

    assert H.recorded_build([receipt("1.0"), receipt("1.0")], "pkg", "own") == "pkg 1.0"
    own = "own, this project's re-implementation (code fingerprint c1)"
    assert H.recorded_build([receipt("1.0"), receipt("2.0")], "pkg", "own") == own
    assert H.recorded_build([receipt(None)], "pkg", "own") == own
    assert H.recorded_build([], "pkg", "own") == "own, this project's re-implementation (code fingerprint not recorded)"

# --- samples of reps --------------------------------------------------------------------------

def test_sample_consistency_is_fishers_exact_test() -> None:
    """On two outcomes it is the 2 x 2 Fisher test scipy computes exactly; on more, the same
    enumeration by hand: {16: 10} against {16: 8, 15: 1, 14: 1} splits 20 reps over outcome columns of
    18, 1, 1, and the splits at most as likely as the one seen are (10, 0, 0) and (8, 1, 1)."""
    from math import comb

    from scipy.stats import fisher_exact

    assert H.sample_consistency({"16": 10}, {"16": 8, "15": 2}) == pytest.approx(fisher_exact([[10, 0], [8, 2]])[1])
    assert H.sample_consistency({"a": 3, "b": 7}, {"a": 9, "b": 1}) == pytest.approx(
        fisher_exact([[3, 7], [9, 1]])[1])
    by_hand = 2 * comb(18, 10) / comb(20, 10)
    assert H.sample_consistency({"16": 10}, {"16": 8, "15": 1, "14": 1}) == pytest.approx(by_hand)
    assert H.sample_consistency({"16": 10}, {"16": 10}) == 1.0
    assert H.sample_consistency({"2": 10}, {"1": 10}) < 1e-4


def test_a_sample_matches_when_the_test_cannot_tell_them_apart_and_says_so() -> None:
    e = _entry({"distribution": {"16": 10}})
    close = compare(e, Measured({"distribution": {"16": 8, "15": 1, "14": 1}}, samples=("distribution",)), "")
    assert close.status == H.REPRODUCED
    assert close.explanation == (
        "every published value matches: distribution: {16: 8, 15: 1, 14: 1} here vs {16: 10} published: two "
        "samples an exact test cannot tell apart (Fisher's exact test of 10 published reps against 10 here, "
        "p = 0.47 ≥ 0.05)")
    apart = compare(e, Measured({"distribution": {"16": 5, "15": 5}}, samples=("distribution",)), "")
    assert apart.status == H.DIFFERS and "the samples differ (Fisher's exact test" in apart.explanation
    assert "p = 0.03 < 0.05" in apart.explanation
    # a key not declared a sample is compared by equality, as before
    assert compare(e, Measured({"distribution": {"16": 8, "15": 1, "14": 1}}), "").status == H.DIFFERS


# --- the reference rows these rules decide -----------------------------------------------------


def test_reference_statuses_of_the_calibrated_rows() -> None:
    from probes.core.runs import reference_run

    names = ("tlc", "consume_race", "crewai", "pydantic_graph", "remit", "remit_bench")
    rows = {r.id: r for r in H.rows_for({n: (reference_run(n).directory if reference_run(n) else None)
                                         for n in names})}
    for hid in ("consume_race.dose_gate0", "consume_race.dose_gate500"):
        assert rows[hid].status in (H.DIFFERS, H.DISAGREE), hid  # -25 % / +20 % are outside ±15 %
    assert rows["consume_race.dose_gate500"].readings and len(rows["consume_race.dose_gate500"].readings) == 2
    assert rows["pydantic_graph.liveness"].status == H.BEHAVIOUR
    assert rows["crewai.checkpointconfig"].status == H.DIFFERS  # 11 measured, 12 published
    # scored on the paper's build (remit-contract 0.1.2), measured as its own row since the reference of
    # 2026-12-02: its validator raises on put, but an invalid value becomes durable through put_writes
    assert rows["remit.row"].status == H.DIFFERS and "CV: ✗ here vs ✓ published" in rows["remit.row"].difference
    assert rows["remit.row"].measured["reimplementation"]["CV"] == "✓"  # remit_ref beside it
    assert rows["consume_race.gate_fix"].status == H.REPRODUCED  # a gate's {1: 10} is compared exactly
    for hid in ("consume_race.k2", "consume_race.k16_sqlite", "consume_race.k16_postgres"):  # races: samples
        row = rows[hid]
        if row.measured["distribution"] != row.published["distribution"]:  # decided by the test, which says so
            assert "Fisher's exact test" in row.explanation, hid
    assert rows["consume_race.gate_fix"].measured["cell"].startswith("grid.sqlite.contract.")
    assert rows["remit.crash_path"].status == H.REIMPLEMENTATION  # only remit_ref runs the crash paths
    assert "remit_ref" in rows["remit.crash_path"].explanation
    assert "remit-contract 0.1.2" in rows["remit.crash_path"].explanation
    assert rows["consume_race.two_hosts"].status == H.NOT_MEASURED
    assert rows["tlc.r8_fault_depths"].status == H.DISAGREE  # depth 8 here: the figure note's 8, not the table's 9
    assert json.dumps([r.status for r in rows.values()])  # every row has a status of the defined set
    assert all(r.status in H.STATUSES for r in rows.values())

