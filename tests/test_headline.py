"""Headline statuses are computed by comparison, never typed: exact statuses and differences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probes import headline
from probes.headline import Measured, _close, _difference, _receipt_path, compare, headline_rows

ROOT = Path(__file__).resolve().parent.parent
ENTRY = {"id": "x.y", "campaign": "c", "what": "w", "published": {"depth": 4, "distinct": 59, "result": "holds"}}


def test_close_numbers_bools_lists_dicts() -> None:
    assert _close(4, 4, 0) and not _close(4, 5, 0)
    assert _close(100, 109, 0.1) and not _close(100, 113, 0.1)
    assert _close(0.05, 0.1, 0.1)  # below 1 the tolerance is absolute as well
    assert not _close(0.05, 0.2, 0.1)
    assert not _close(10, 10.5, 0.01) and _close(10, 10.05, 0.01)
    assert _close(True, True, 0.5) and not _close(True, 1.4, 0.5)
    assert _close([1, 2], [1, 2], 0) and not _close([1, 2], [1, 3], 0) and not _close([1], [1, 2], 0)
    assert _close({"a": 1}, {"a": 1}, 0) and not _close({"a": 1}, {"b": 1}, 0) and not _close({"a": 1}, {"a": 2}, 0)
    assert _close("x", "x", 0) and not _close("x", "y", 0)
    assert _close(1.0, 1.0, 0.0)


def test_difference_text() -> None:
    assert _difference({"d": 4}, {"d": 5}, ["d"]) == "d: +1 (+25.0%)"
    assert _difference({"d": 4}, {"d": 3}, ["d"]) == "d: -1 (-25.0%)"
    assert _difference({"r": "holds"}, {"r": "violated"}, ["r"]) == "r: 'violated' vs 'holds'"
    assert _difference({"d": 4, "r": "a"}, {"d": 4, "r": "a"}, ["d", "r"]) == "d: +0 (+0.0%)"
    assert _difference({"r": "a"}, {"r": "a"}, ["r"]) == "none"
    assert _difference({"d": 0}, {"d": 2}, ["d"]) == "d: 2 vs 0"
    assert _difference({"b": True}, {"b": False}, ["b"]) == "b: False vs True"
    assert _difference({"a": 1, "b": 2}, {"a": 2, "b": 4}, ["a", "b"]) == "a: +1 (+100.0%); b: +2 (+100.0%)"


def test_compare_statuses() -> None:
    same = compare(ENTRY, Measured({"depth": 4, "distinct": 70}, why="other encoding", compare_keys=("depth",),
                                   receipts=("reference",)), "")
    assert (same.status, same.why, same.difference) == ("reproduced", "other encoding", "depth: +0 (+0.0%)")
    assert same.receipts == ("receipts/c/reference.json",) and same.measured == {"depth": 4, "distinct": 70}
    assert (same.id, same.campaign, same.what, same.published) == ("x.y", "c", "w", ENTRY["published"])
    differs = compare(ENTRY, Measured({"depth": 5, "distinct": 59}, why="deeper trace"), "")
    assert differs.status == "differs" and differs.why == "deeper trace"
    assert differs.difference == "depth: +1 (+25.0%); distinct: +0 (+0.0%)"
    silent = compare(ENTRY, Measured({"depth": 5}), "")
    assert silent.status == "differs" and silent.why == "no explanation recorded"
    quiet = compare(ENTRY, Measured({"depth": 4}), "")
    assert quiet.status == "reproduced" and quiet.why == ""
    nothing = compare(ENTRY, Measured({"other": 1}), "")
    assert nothing.status == "differs" and nothing.difference == "not comparable"
    within = compare(ENTRY, Measured({"distinct": 62}, tolerance=0.1), "")
    assert within.status == "reproduced"
    missing = compare(ENTRY, None, "needs API keys")
    assert (missing.status, missing.why, missing.measured, missing.difference) == (
        "not run here", "needs API keys", None, "-")


def test_receipt_paths() -> None:
    assert _receipt_path("tlc", "reference") == "receipts/tlc/reference.json"
    assert _receipt_path("tlc", "receipts/other/x.json") == "receipts/other/x.json"


def test_headline_rows_from_a_results_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = ROOT / "data" / "reference" / "tlc"
    (tmp_path / "tlc").mkdir()
    for f in src.glob("*.json"):
        (tmp_path / "tlc" / f.name).write_bytes(f.read_bytes())
    published = [
        {"id": "tlc.r0", "campaign": "tlc", "what": "r0", "published": {"result": "holds", "depth": 8}},
        {"id": "tlc.nope", "campaign": "tlc", "what": "n", "published": {"x": 1}},
        {"id": "dbos.row", "campaign": "dbos", "what": "d", "published": {"EO": "✓"}},
        {"id": "q.q", "campaign": "not_a_campaign", "what": "q", "published": {}},
        {"id": "live.x", "campaign": "live", "what": "l", "published": {}},
    ]
    monkeypatch.setattr(headline, "load_published", lambda *a: published)
    rows = {r.id: r for r in headline_rows(tmp_path)}
    assert rows["tlc.r0"].status == "reproduced" and rows["tlc.r0"].measured["result"] == "holds"
    assert rows["tlc.nope"].status == "not run here"
    assert rows["tlc.nope"].why == "campaign tlc ran but produced no value for this headline"
    assert rows["dbos.row"].status == "not run here"
    assert rows["dbos.row"].why == "no complete receipts for dbos (run ./reproduce.sh --only dbos)"
    assert rows["q.q"].why == "campaign not_a_campaign is not implemented yet"
    assert rows["live.x"].why == "no complete receipts for live (needs API keys: run with a provider key set)"


def test_headline_rows_report_a_campaign_string_and_a_missing_extractor(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    src = ROOT / "data" / "reference" / "tlc"
    (tmp_path / "tlc").mkdir()
    for f in src.glob("*.json"):
        (tmp_path / "tlc" / f.name).write_bytes(f.read_bytes())
    r8 = next(e for e in json.loads((ROOT / "data" / "published.json").read_text())["headlines"]
              if e["id"] == "tlc.r8_scale")
    monkeypatch.setattr(headline, "load_published", lambda *a: [r8])
    [row] = headline_rows(tmp_path)
    assert row.status in ("reproduced", "differs") and row.measured is not None
    from probes import campaigns

    real = campaigns.get("tlc")
    monkeypatch.setattr(campaigns, "get", lambda name: type("C", (), {"headlines": None})() if name == "tlc"
                        else real)
    [row] = headline_rows(tmp_path)
    assert row.why == "campaign tlc defines no headline extractor"


def test_published_file_is_the_one_reference() -> None:
    entries = headline.load_published()
    assert entries == json.loads((ROOT / "data" / "published.json").read_text())["headlines"]
    assert all({"id", "campaign", "what", "published"} <= set(e) for e in entries)


def test_close_edges() -> None:
    assert _close(True, 1, 0)  # a bool compares by value
    assert not _close([1, 2], [1], 0)
    assert _close(list(range(300)), list(range(300)), 0)  # lengths compared by value, not identity


def test_measure_without_a_root_uses_the_shown_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from probes.core import runs

    src = ROOT / "data" / "reference" / "tlc"
    (tmp_path / "tlc").mkdir()
    for f in src.glob("*.json"):
        (tmp_path / "tlc" / f.name).write_bytes(f.read_bytes())
    shown = type("Run", (), {"directory": tmp_path / "tlc"})()
    monkeypatch.setattr(runs, "shown_run", lambda name: shown if name == "tlc" else None)
    got = headline._measure("tlc", None)
    assert isinstance(got, dict) and got["tlc.r0"].value["result"] == "holds"
    assert headline._measure("dbos", None) == "no complete receipts for dbos (run ./reproduce.sh --only dbos)"
    live = "".join(["li", "ve"])  # as read from published.json: not the interned literal
    assert headline._measure(live, tmp_path) == ("no complete receipts for live (needs API keys: run with a "
                                                 "provider key set)")
    assert headline._measure("pydantic_graph", tmp_path) == (
        "no complete receipts for pydantic_graph (run ./reproduce.sh --only pydantic_graph)")


def test_close_type_and_order_edges() -> None:
    assert not _close("ab", ["a", "b"], 0) and not _close(["a", "b"], "ab", 0)
    assert not _close("ab", {"a": 1, "b": 2}, 0) and not _close({"a": 1}, 5, 0) and not _close([1], 5, 0)
    assert not _close({"a": 1}, {"a": 1, "b": 2}, 0) and not _close({"a": 1, "b": 2}, {"a": 1}, 0)
    assert not _close("y", "x", 0) and not _close("x", "y", 0)
    assert not _close(1, "x", 0.1) and not _close(2, 1, 0)
    assert _close(1, 1.5, 1) and not _close(1, 1.5, 0.2) and _close(0.5, 0.55, 0.1)
    assert _close(float("inf"), float("inf"), 0) and not _close(float("nan"), float("nan"), 0)
