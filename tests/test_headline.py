"""Headline statuses are computed by comparison, never typed: exact statuses and differences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probes import headline
from probes.headline import Measured, _close, _receipt_path, compare, headline_rows

ROOT = Path(__file__).resolve().parent.parent
ENTRY = {"id": "x.y", "campaign": "c", "what": "w", "published": {"depth": 4, "distinct": 59, "result": "holds"}}


def test_close_numbers_bools_lists_dicts() -> None:
    assert _close(4, 4, 0) and not _close(4, 5, 0)
    assert _close(100, 109, 0.1) and not _close(100, 113, 0.1)
    assert not _close(0.05, 0.1, 0.1) and _close(0.1, 0.105, 0.05)  # relative below 1 as well: 0.05 vs 0.1 is -50 %
    assert not _close(0.4, 0.3, 0.15) and not _close(0.375, 0.45, 0.15)  # the issue's -25 % and +20 %
    assert _close(0, 0, 0.5) and not _close(0, 0.001, 0.5)  # a published 0 matches only a measured 0
    assert not _close(10, 10.5, 0.01) and _close(10, 10.05, 0.01)
    assert _close(True, True, 0.5) and not _close(True, 1.4, 0.5)
    assert _close([1, 2], [1, 2], 0) and not _close([1, 2], [1, 3], 0) and not _close([1], [1, 2], 0)
    assert _close({"a": 1}, {"a": 1}, 0) and not _close({"a": 1}, {"b": 1}, 0) and not _close({"a": 1}, {"a": 2}, 0)
    assert _close("x", "x", 0) and not _close("x", "y", 0)
    assert _close(1.0, 1.0, 0.0)


def test_receipt_paths() -> None:
    assert _receipt_path("tlc", "reference") == "receipts/tlc/reference.json"
    assert _receipt_path("tlc", "receipts/other/x.json") == "receipts/other/x.json"


def test_headline_rows_from_a_results_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = ROOT / "data" / "reference" / "tlc"
    (tmp_path / "tlc").mkdir()
    for f in src.glob("*.json"):
        (tmp_path / "tlc" / f.name).write_bytes(f.read_bytes())
    published = [
        {"id": "tlc.r0", "campaign": "tlc", "what": "r0", "published": {"result": "holds", "depth": 8},
         "sources": [{"file": "CONTRACT.md", "line": 118, "quote": "depth 8"}]},
        {"id": "tlc.nope", "campaign": "tlc", "what": "n", "published": {"x": 1}},
        {"id": "dbos.row", "campaign": "dbos", "what": "d", "published": {"EO": "✓"}},
        {"id": "q.q", "campaign": "not_a_campaign", "what": "q", "published": {}},
        {"id": "live.x", "campaign": "live", "what": "l", "published": {}},
    ]
    monkeypatch.setattr(headline, "load_published", lambda *a: published)
    rows = {r.id: r for r in headline_rows(tmp_path)}
    assert rows["tlc.r0"].status == "reproduced" and rows["tlc.r0"].measured["result"] == "holds"
    assert rows["tlc.nope"].status == "not measured here"
    assert rows["tlc.nope"].why == "campaign tlc ran, and none of its protocols measures this yet"
    assert rows["dbos.row"].status == "not run here"
    assert rows["dbos.row"].why == "no complete results for dbos (run ./reproduce.sh --only dbos)"
    assert rows["q.q"].why == "campaign not_a_campaign is not implemented yet"
    assert rows["live.x"].why == "no complete results for live (needs API keys: run with a provider key set)"


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
    assert row.status in headline.STATUSES and row.status != "not run here" and row.measured is not None
    from probes import paper

    monkeypatch.delitem(paper.EXTRACTORS, "tlc")
    [row] = headline_rows(tmp_path)
    assert row.why == "the paper layer has no extractor for campaign tlc (probes/paper)"


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
    got = headline.measure_directory("tlc", runs.shown_run("tlc").directory)
    assert isinstance(got, dict) and got["tlc.r0"].value["result"] == "holds"
    assert headline.measure_directory("dbos", None) == "no complete results for dbos (run ./reproduce.sh --only dbos)"
    live = "".join(["li", "ve"])  # as read from published.json: not the interned literal
    assert headline.measure_directory(live, tmp_path) == ("no complete results for live (needs API keys: run with a "
                                                 "provider key set)")
    assert headline.measure_directory("pydantic_graph", tmp_path) == (
        "no complete results for pydantic_graph (run ./reproduce.sh --only pydantic_graph)")


def test_close_type_and_order_edges() -> None:
    assert not _close("ab", ["a", "b"], 0) and not _close(["a", "b"], "ab", 0)
    assert not _close("ab", {"a": 1, "b": 2}, 0) and not _close({"a": 1}, 5, 0) and not _close([1], 5, 0)
    assert not _close({"a": 1}, {"a": 1, "b": 2}, 0) and not _close({"a": 1, "b": 2}, {"a": 1}, 0)
    assert not _close("y", "x", 0) and not _close("x", "y", 0)
    assert not _close(1, "x", 0.1) and not _close(2, 1, 0)
    assert _close(1, 1.5, 1) and not _close(1, 1.5, 0.2) and _close(0.5, 0.55, 0.1)
    assert _close(float("inf"), float("inf"), 0) and not _close(float("nan"), float("nan"), 0)
