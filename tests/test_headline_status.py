"""Headline statuses are computed over every published value and cannot overclaim."""

from __future__ import annotations

from probes.headline import (CONTRADICTED, DIFFERS, MAGNITUDES, NOT_COMPARABLE, NOT_MEASURED, NOT_RUN, PARTIAL,
                             REPRODUCED, VARIANT, Measured, compare)


SOURCE = [{"file": "CAMPAIGNS.md", "line": 1, "quote": "Measurement campaigns"}]


def entry(published: dict, **extra) -> dict:
    return {"id": "x.y", "campaign": "x", "what": "a headline", "published": published, "sources": SOURCE, **extra}


def test_reproduced_needs_every_published_value() -> None:
    row = compare(entry({"result": "holds", "depth": 8}), Measured({"result": "holds", "depth": 8, "extra": 1}), "")
    assert row.status == REPRODUCED
    assert "every published value matches" in row.explanation


def test_campaign_cannot_narrow_the_comparison_to_keys_that_agree() -> None:
    # compare_keys used to hide the state counts; now they are compared and reported
    row = compare(entry({"result": "holds", "generated": 14_700_000, "depth": 24}),
                  Measured({"result": "holds", "generated": 24_292_501, "depth": 24}, compare_keys=("result", "depth")),
                  "")
    assert row.status == MAGNITUDES
    assert "generated: 24,292,501 here vs 14,700,000 published" in row.explanation
    assert "result: holds" in row.explanation


def test_verdict_keys_name_a_numeric_verdict() -> None:
    e = entry({"protocol_executions": 6400, "violations": 0}, verdict_keys=["violations"])
    row = compare(e, Measured({"protocol_executions": 3200, "violations": 0}), "")
    assert row.status == MAGNITUDES
    assert "protocol_executions: 3,200 here vs 6,400 published (×0.5)" in row.explanation
    worse = compare(e, Measured({"protocol_executions": 6400, "violations": 3}), "")
    assert worse.status == DIFFERS


def test_label_mismatch_differs_and_tolerance_is_stated() -> None:
    assert compare(entry({"FD": "✓"}), Measured({"FD": "U"}), "").status == DIFFERS
    row = compare(entry({"saturation": [1.0, 0.4]}), Measured({"saturation": [1.0, 0.42]}, tolerance=0.1), "")
    assert row.status == REPRODUCED and "±10%" in row.explanation


def test_unmeasured_label_is_partial_not_reproduced() -> None:
    row = compare(entry({"PC": "✓", "CO cross-process": "✗"}),
                  Measured({"PC": "✓", "CO cross-process": "measured by the consume_race campaign"}), "")
    assert row.status == PARTIAL
    assert "consume_race" in row.explanation


def test_own_evidence_contradicts_a_matching_value() -> None:
    row = compare(entry({"rejected": True}),
                  Measured({"rejected": True}, contradicted_by=("tamper:forged",), contradiction="5 forgeries loaded"),
                  "")
    assert row.status == CONTRADICTED
    assert "5 forgeries loaded" in row.explanation and "tamper:forged" in row.explanation


def test_variant_and_not_run() -> None:
    assert compare(entry({"n": 1}), Measured({"n": 2}), "", variant="reps=2").status == VARIANT
    assert compare(entry({"n": 1}), None, "needs API keys").status == NOT_RUN


def test_reference_statuses_of_the_rows_the_issue_names() -> None:
    from probes.headline import rows_for
    from probes.core.runs import reference_run

    names = ("tlc", "autogen", "remit_bench")
    rows = {r.id: r for r in rows_for({n: (reference_run(n).directory if reference_run(n) else None) for n in names})}
    assert rows["autogen.tamper"].status == CONTRADICTED
    assert "4 were refused in every repetition" in rows["autogen.tamper"].explanation
    assert "only the structural edit" not in rows["autogen.tamper"].explanation
    # counts of a VIEW + symmetry-reduced search: not comparable -- unless the reference also ran the unreduced
    # search (scaled_unreduced), whose counts are compared (test_tlc_r8_headline.py covers both by hand)
    ref_tlc = reference_run("tlc")
    if ref_tlc and (ref_tlc.directory / "scaled.unreduced.json").exists():
        assert rows["tlc.r8_scale"].status != NOT_COMPARABLE
        assert rows["tlc.r8_scale"].measured["reduction"] == "none"
    else:
        assert rows["tlc.r8_scale"].status == NOT_COMPARABLE
        assert "reduction: view+symmetry here vs none published" in rows["tlc.r8_scale"].explanation
    assert rows["tlc.inductive"].status == NOT_COMPARABLE
    assert rows["tlc.consume_race"].status == NOT_COMPARABLE
    assert rows["tlc.r0"].status == MAGNITUDES  # the reference bounds are the paper's: its counts are compared
    # remit.concurrency / remit.stock_duplicates are measured by the consume race's concurrency protocol (k
    # clients resuming the same thread); a reference measured before it has none of its cells: not run, and why
    rows.update({r.id: r for r in rows_for({"consume_race": reference_run("consume_race").directory
                                            if reference_run("consume_race") else None})})
    if not any(p.name.startswith("concurrency.") for p in
               (reference_run("consume_race").directory.glob("*.json") if reference_run("consume_race") else [])):
        for hid in ("remit.concurrency", "remit.stock_duplicates"):
            assert rows[hid].status == NOT_RUN, (hid, rows[hid].status)
            assert "concurrency protocol was not run" in rows[hid].explanation


def _interleaved_concurrency_receipts() -> bool:
    """Does the reference's remit_bench run have the interleaved per-(backend, k) concurrency receipts?"""
    from probes.core.runs import reference_run

    ref = reference_run("remit_bench")
    return bool(ref) and any(p.name.count(".") == 3 and p.name.startswith("concurrency.") and ".k" in p.name
                             and p.name.split(".")[2].startswith("k") for p in ref.directory.glob("concurrency.*.json"))
