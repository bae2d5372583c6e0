"""The citation metadata: one home (CITATION.cff), the Zenodo file and the BibTeX derived from it."""

from __future__ import annotations

from pathlib import Path

import yaml

from probes import cite, pages


def test_zenodo_file_is_derived_from_citation_cff() -> None:
    assert cite.main(["--check"]) == 0, "run: python -m probes.cite"


def test_zenodo_check_fails_when_the_cff_changed(tmp_path: Path, monkeypatch) -> None:
    meta = cite.load_cff()
    meta["version"] = "9.9.9"
    cff = tmp_path / "CITATION.cff"
    cff.write_text(yaml.safe_dump(meta, allow_unicode=True))
    monkeypatch.setattr(cite, "CFF_PATH", cff)
    assert cite.main(["--check"]) == 1
    assert cite.main(["--bogus"]) == 2


def test_citation_cff_is_complete() -> None:
    meta = cite.load_cff()
    for key in ("cff-version", "title", "version", "date-released", "license", "authors", "abstract"):
        assert meta.get(key), key
    paper = cite.paper(meta)
    assert paper["type"] == "article" and paper["title"].startswith("Resume Means Resume")
    assert paper["authors"] and paper["url"]


def test_bibtex_entries_carry_the_cff_fields() -> None:
    meta = {"title": "T", "authors": [{"family-names": "Doe", "given-names": "Jo"}, {"name": "Team X"}],
            "date-released": "2026-11-29", "version": "1.2", "license": "Apache-2.0",
            "preferred-citation": {"title": "P", "authors": [{"family-names": "Roe", "given-names": "Al"}],
                                   "url": "https://example.org/p"}}
    art = cite.artifact_bibtex(meta, "0123456789abcdef")
    assert art.startswith("@software{") and "author  = {Doe, Jo and {Team X}}" in art
    assert "year    = {2026}" in art and "note    = {commit 0123456789ab}" in art and "url" not in art
    pap = cite.paper_bibtex(meta)
    assert pap.startswith("@misc{") and "{Roe, Al}" in pap and "https://example.org/p" in pap


def test_cite_page_shows_both_entries() -> None:
    page = pages.cite_page(None, commit="abcdef1234567890")
    assert "@software{resume_means_resume_artifact" in page and "@misc{resume_means_resume_paper" in page
    assert "commit abcdef123456" in page and ".zenodo.json" in page
