"""Citations: every row cites a real DOCS.md statement; cells get the statement DOCS.md suggests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from probes import citations
from probes.citations import CELLS, PAGES, VERSIONS, doc, doc_for
from probes.core.checker import Property
from probes.docs_statements import STATEMENTS

ROOT = Path(__file__).resolve().parent.parent
# CI lays a copy of shared/ beside the clone; a developer's worktree has it two levels up.
DOCS = next((p for p in (ROOT.parent / "shared" / "DOCS.md", ROOT.parent.parent / "shared" / "DOCS.md")
             if p.exists()), None)


def test_every_row_cites_a_statement_with_a_page_and_a_version() -> None:
    for row in CELLS:
        assert row.statement in STATEMENTS and row.statement in PAGES, row
        assert row.stance in ("claims", "deviation"), row
        assert all(p in {x.value for x in Property} for p in row.properties.split()), row
        d = doc(row.statement, row.stance)
        assert d.source == row.statement and d.version == VERSIONS[row.statement[:2]] and d.quote
        assert d.page == PAGES[row.statement]


def test_doc_falls_back_to_the_recorded_source() -> None:
    d = doc("LG-9", "deviation")
    assert d.page == STATEMENTS["LG-9"][2] and d.stance == "deviation"


@pytest.mark.skipif(DOCS is None, reason="../shared/DOCS.md not beside this checkout")
def test_statements_are_verbatim_from_docs_md() -> None:
    text = DOCS.read_text().replace("**", "").replace('\\"', '"')
    for sid, (_prop, quote, _src) in STATEMENTS.items():
        if sid.startswith("RC-"):  # remit-contract's README, not DOCS.md: checked against its METADATA below
            continue
        assert re.search(rf"\| {re.escape(sid)} \|", text), sid
        assert quote[:60] in text, sid


def test_remit_contract_statements_are_verbatim_from_its_metadata() -> None:
    from importlib.metadata import metadata, version

    assert version("remit-contract") == "0.1.2"
    payload = metadata("remit-contract").get_payload()  # type: ignore[attr-defined]
    readme = " ".join(payload.replace("`", "").split())  # the README wraps its lines
    ids = [sid for sid in STATEMENTS if sid.startswith("RC-")]
    assert ids
    for sid in ids:
        assert STATEMENTS[sid][1].replace("`", "") in readme, sid


CASES = [
    ("langgraph", "EO", "crash:A/durability=exit/recover=none", "LG-8", "deviation"),
    ("langgraph", "LV", "crash:A/durability=exit/recover=resubmit", "LG-8", "deviation"),
    ("langgraph", "PC", "crash:A/durability=async/recover=none", "LG-7", "deviation"),
    ("langgraph", "LV", "crash:A/durability=async/recover=none", "LG-23", "claims"),
    ("langgraph", "EO", "crash:K3/recover=resubmit", "LG-3", "deviation"),
    ("langgraph", "PC", "crash:window/recover=none", "LG-4", "deviation"),
    ("langgraph", "EO", "crash:window/recover=none", "LG-5", "deviation"),
    ("langgraph", "FD", "second-resume:resume-map", "LG-16", "claims"),
    ("langgraph", "CV", "pydantic:append-None", "LG-21", "deviation"),
    ("langgraph", "CO", "cross-process k=16 jitter=0ms", "LG-28", "deviation"),
    ("langgraph", "CO", "park-kill:graph", "LG-15", "claims"),
    ("langgraph", "EO", "interrupt:functional", "LG-15", "claims"),
    ("langgraph", "PC", "park-kill:graph", "LG-1", "claims"),
    ("langgraph", "RD", "rd:nothing", "LG-30", "claims"),
    ("crewai", "EO", "@persist restore after SIGKILL inside s2", "CR-6", "deviation"),
    ("crewai", "PC", "@persist restore of a completed flow", "CR-6", "deviation"),
    ("crewai", "LV", "@persist restore after s2 raised once", "CR-9", "claims"),
    ("crewai", "EO", "CheckpointConfig restore from the newest checkpoint after s2 raised once", "CR-1", "claims"),
    ("crewai", "LV", "CheckpointConfig restore", "CR-5", "claims"),
    ("crewai", "CO", "human-feedback pause loaded by 2 processes, answered concurrently", "CR-16", "deviation"),
    ("crewai", "CV", "typed state", "CR-11", "claims"),
    ("crewai", "LV", "human-feedback pause (from_pending + resume in a fresh process)", "CR-15", "claims"),
    ("llamaindex", "PC", "wait:restore", "LI-3", "deviation"),
    ("llamaindex", "EO", "park-kill", "LI-2", "deviation"),
    ("llamaindex", "PC", "park-kill", "LI-1", "claims"),
    ("pydantic-graph", "LV", "crash:exception", "PG-2", "deviation"),
    ("pydantic-graph", "LV", "claimed-pause", "PG-4", "deviation"),
    ("pydantic-graph", "CO", "cross-process:two-resumers", "PG-4", "claims"),
    ("autogen", "LV", "kill:after-effect", "AG-3", "claims"),
    ("dbos", "EO", "x", "DB-5", "deviation"),
    ("dbos", "FD", "x", "DB-10", "claims"),
]


@pytest.mark.parametrize("framework,prop,path,source,stance", CASES)
def test_cells_get_the_suggested_statement(framework: str, prop: str, path: str, source: str, stance: str) -> None:
    d = doc_for(framework, Property(prop), path)
    assert d is not None and (d.source, d.stance) == (source, stance)


@pytest.mark.parametrize("framework,prop,path", [
    ("llamaindex", "CO", "double-answer"),  # LI-9: silent
    ("autogen", "EO", "kill:after-effect"),  # AG-5: silent on crashes
    ("autogen · tampered state", "CV", "tamper:wrong-version"),  # AG-7: silent
    ("pydantic-graph", "CV", "write:invalid-state"),  # PG-10: silent
    ("pydantic-graph", "EO", "crash:exception"),  # silent
    ("llamaindex · tampered state", "CV", "tamper:forged-answer"),  # untyped DictState: silent
    ("langgraph+remit", "EO", "crash:A/recover=none"),  # our own implementation: no third-party docs
    ("langgraph", "FI", "x"),
    ("crewai", "RD", "@persist restore"),
])
def test_silent_documentation_leaves_U(framework: str, prop: str, path: str) -> None:
    assert doc_for(framework, prop, path) is None


def test_rows_are_tried_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    first = citations.Row("fw", "EO", "*", "LG-1", "claims")
    second = citations.Row("fw", "EO", "*", "LG-5", "deviation")
    monkeypatch.setattr(citations, "CELLS", (first, second))
    assert doc_for("fw", "EO", "p").source == "LG-1"
    assert doc_for("fw", "PC", "p") is None and doc_for("fx", "EO", "p") is None


def test_rows_are_records() -> None:
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        CELLS[0].statement = "LG-1"  # type: ignore[misc]
