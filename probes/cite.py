"""How to cite the artifact and the paper, derived from ``CITATION.cff`` (their one home).

``CITATION.cff`` is what GitHub and most tools read; Zenodo reads ``.zenodo.json`` when
it archives a release, and readers want BibTeX. Both are *derived* here from the CFF
file, so the three cannot drift apart: ``.zenodo.json`` is committed (Zenodo needs the
file) and a test checks it equals ``zenodo_metadata()``; regenerate it with
``python -m probes.cite``. (``cffconvert``, the usual converter, pins jsonschema < 4,
which conflicts with the book toolchain's jsonschema 4, so the mapping -- a dozen
fields -- lives here.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Mapping

from probes import PROJECT_ROOT

CFF_PATH = PROJECT_ROOT / "CITATION.cff"
ZENODO_PATH = PROJECT_ROOT / ".zenodo.json"


def load_cff(path: Path | None = None) -> dict[str, Any]:
    import yaml

    path = path or CFF_PATH
    data = yaml.safe_load(path.read_text()) if path.exists() else {}
    return data or {}


def paper(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The paper: the CFF file's preferred citation."""
    return dict(meta.get("preferred-citation") or {})


def bib_names(authors: list[dict[str, Any]] | None) -> str:
    names = []
    for a in authors or []:
        if a.get("family-names"):
            names.append(f"{a['family-names']}, {a.get('given-names', '')}".strip(", "))
        elif a.get("name"):
            names.append("{" + a["name"] + "}")
    return " and ".join(names)


def _bibtex(kind: str, key: str, fields: list[tuple[str, Any]]) -> str:
    present = [(k, str(v)) for k, v in fields if v not in (None, "")]
    width = max(len(k) for k, _ in present)
    body = ",\n".join(f"  {k.ljust(width)} = {{{v}}}" for k, v in present)
    return f"@{kind}{{{key},\n{body}\n}}"


def artifact_bibtex(meta: Mapping[str, Any], commit: str) -> str:
    return _bibtex("software", "resume_means_resume_artifact", [
        ("title", meta.get("title")), ("author", bib_names(meta.get("authors"))),
        ("year", str(meta.get("date-released", ""))[:4]), ("version", meta.get("version")),
        ("url", meta.get("repository-code")), ("note", f"commit {commit[:12]}" if commit else ""),
        ("license", meta.get("license"))])


def paper_bibtex(meta: Mapping[str, Any]) -> str:
    p = paper(meta)
    return _bibtex("misc", "resume_means_resume_paper", [
        ("title", p.get("title")), ("author", bib_names(p.get("authors"))), ("year", p.get("year")),
        ("url", p.get("url")), ("note", p.get("notes"))])


def _zenodo_creator(a: Mapping[str, Any]) -> dict[str, str]:
    if a.get("family-names"):
        name = f"{a['family-names']}, {a.get('given-names', '')}".strip(", ")
    else:
        name = str(a.get("name", ""))
    out = {"name": name}
    if a.get("affiliation"):
        out["affiliation"] = str(a["affiliation"])
    if a.get("orcid"):
        out["orcid"] = str(a["orcid"]).rsplit("/", 1)[-1]
    return out


def zenodo_metadata(meta: Mapping[str, Any]) -> dict[str, Any]:
    """Zenodo's deposit metadata for the artifact, from the CFF fields it has."""
    p = paper(meta)
    out: dict[str, Any] = {
        "upload_type": "software",
        "title": meta.get("title", ""),
        "description": " ".join(str(meta.get("abstract", "")).split()),
        "creators": [_zenodo_creator(a) for a in meta.get("authors", [])],
        "version": str(meta.get("version", "")),
        "publication_date": str(meta.get("date-released", "")),
        "license": str(meta.get("license", "")),
        "keywords": list(meta.get("keywords", [])),
    }
    if p.get("url"):
        out["related_identifiers"] = [{"identifier": p["url"], "relation": "isSupplementTo", "scheme": "url",
                                       "resource_type": "publication-article"}]
    return out


def zenodo_text(meta: Mapping[str, Any]) -> str:
    return json.dumps(zenodo_metadata(meta), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m probes.cite``: rewrite ``.zenodo.json`` from ``CITATION.cff``; ``--check`` only compares."""
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--check"]):
        print("usage: python -m probes.cite [--check]", file=sys.stderr)
        return 2
    want = zenodo_text(load_cff())
    have = ZENODO_PATH.read_text() if ZENODO_PATH.exists() else ""
    if args == ["--check"]:
        if want != have:
            print(f"error: {ZENODO_PATH.name} is out of date with CITATION.cff: run python -m probes.cite",
                  file=sys.stderr)
            return 1
        return 0
    ZENODO_PATH.write_text(want)
    print(f"wrote {ZENODO_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
