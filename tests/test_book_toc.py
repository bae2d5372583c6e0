"""The book's table of contents: the issue's parts, one entry per framework (no browser, no build)."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes import book, campaigns


def test_each_paper_framework_has_one_entry_with_its_kit_chapter_under_it() -> None:
    entries = dict(book.framework_entries(list(campaigns.available())))
    assert entries["langgraph"] == ["langgraph_kit"] and entries["crewai"] == ["crewai_kit"]
    assert entries["maf"] == []  # measured with the kit alone: an entry of its own
    assert not any(name.endswith("_kit") for name in entries)  # never a second entry for the same framework
    assert not set(entries) & set(book.MODEL_CHAPTERS + book.REMIT_CHAPTERS + book.BEYOND_CHAPTERS)


def test_a_kit_chapter_without_its_paper_chapter_stands_on_its_own() -> None:
    assert book.framework_entries(["crewai_kit", "agno"]) == [("crewai_kit", []), ("agno", [])]


def test_the_toc_has_the_four_parts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    for name in ("tlc", "langgraph", "langgraph_kit", "maf", "remit", "atlas"):
        (chapters / f"{name}.ipynb").write_text("{}")
    monkeypatch.setattr(book, "CHAPTERS_DIR", chapters)
    monkeypatch.setattr(book, "BOOK_DIR", tmp_path)
    book.write_toc()
    toc = (tmp_path / "_toc.yml").read_text()
    captions = [line.split(": ", 1)[1] for line in toc.splitlines() if "caption:" in line]
    assert captions[:4] == ["The contract and its model", "The frameworks", "REMIT, the reference implementation",
                            "Beyond the paper"]
    assert "      - file: chapters/langgraph\n        sections:\n          - file: chapters/langgraph_kit" in toc
    assert toc.index("chapters/tlc") < toc.index("chapters/langgraph") < toc.index("chapters/remit") \
        < toc.index("chapters/atlas")
