"""Citations: every row cites a real DOCS.md statement; cells get the statement DOCS.md suggests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from probes import PROJECT_ROOT, citations
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


# --- one lookup, one source per table, every citation with its source and version ------------------

import importlib  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from probes.citations import campaign_entries, campaign_table, subject, uncited_violations  # noqa: E402
from probes.core.checker import NO_CITATION, DocRef, Label, Subject, entries, lookup  # noqa: E402

REFERENCE = ROOT / "data" / "reference"


def _kit_tables() -> dict[str, type]:
    """Every kit adapter a campaign names (and the generic --saver one): name -> class."""
    from probes import campaigns
    from probes.frameworks.langgraph.saver import SaverAdapter
    from probes.kit.suite import KIT_ADAPTERS, adapter_class

    for name in campaigns.available():
        campaigns.get(name)  # a kit campaign registers its adapter in KIT_ADAPTERS
    tables = {name: adapter_class(spec) for name, spec in sorted(KIT_ADAPTERS.items())}
    tables["--saver"] = SaverAdapter
    return tables


KIT = _kit_tables()


def test_the_one_lookup_takes_the_longest_matching_glob_then_the_first_declared() -> None:
    a, b, c = doc("LG-1", "claims"), doc("LG-5", "deviation"), doc("LG-8", "deviation")
    table = [(frozenset({"EO"}), "*", a), (frozenset({"EO", "PC"}), "crash:*/resume", b),
             (frozenset({"EO"}), "crash:*/resum?", c)]
    assert lookup(table, "EO", "crash:kill@s1/resume") is b  # longest; the equally long later one loses
    assert lookup(table, "PC", "crash:kill@s1/resume") is b and lookup(table, "PC", "park-kill") is None
    assert lookup(table, "EO", "park-kill") is a
    # the kit's "PROP glob" keys are the same entries: the kit and the campaigns share the rule
    from probes.kit.judge import cite

    kit = {"EO *": a, "EO crash:*/resume": b}
    assert entries(kit)[1] == (frozenset({"EO"}), "crash:*/resume", b)
    assert cite(kit, Property.EO, "crash:x/resume") is b and cite(kit, Property.CV, "x") is None
    assert doc_for("langgraph", "EO", "crash:A/recover=none") == lookup(campaign_entries("langgraph"), "EO",
                                                                         "crash:A/recover=none")


@pytest.mark.parametrize("framework", sorted({row.framework for row in CELLS}))
def test_a_frameworks_rows_as_a_table_cite_every_cell_as_the_rows_do(framework: str) -> None:
    """``campaign_table`` (what a study's subject carries) labels every row's own path, and paths no row
    names, exactly as the rows themselves (``doc_for``)."""
    table = entries(campaign_table(framework))
    paths = {row.path.replace("*", "x") for row in CELLS} | {"crash:kill@s1/resume", "change:rename", "nothing"}
    for prop in Property:
        for path in sorted(paths):
            assert lookup(table, prop, path) == doc_for(framework, prop, path), (prop, path)


def test_a_subject_with_a_table_is_labelled_from_it_alone() -> None:
    """No silent fallback: a kit subject whose adapter cites nothing for a cell gets U, visibly, even
    where the paper campaigns' rows for the same framework name would cite a statement."""
    path = "retry:same-pause×2"
    assert doc_for("langgraph", "CO", path) is not None  # the campaign rows would label it (LG-15)
    kit = Subject("langgraph", "sqlite", citations={}).verdict(Property.CO, path, False, {"n": 2}, "s")
    assert kit.label is Label.UNDOC and kit.doc is None and kit.evidence == {"n": 2, "citation": NO_CITATION}
    campaign = subject("langgraph", "sqlite").verdict(Property.CO, path, False, {}, "s")
    assert campaign.label is Label.FAIL and campaign.doc.source == "LG-15" and "citation" not in campaign.evidence
    own = Subject("langgraph", citations={"CO retry:*": doc("LG-28", "deviation")})
    assert own.verdict(Property.CO, path, False, {}, "s").doc.source == "LG-28"
    assert Subject("langgraph").verdict(Property.CO, path, False, {}, "s").label is Label.UNDOC  # no table: silent
    assert Subject("x", citations={}).verdict(Property.CO, path, True, {}, "s").evidence == {}


def test_the_judge_gives_its_subject_the_adapters_table() -> None:
    from probes.kit.judge import Judge

    judge = Judge("langgraph", "sqlite", KIT["langgraph_kit"].citations)
    assert judge.subject.citations is KIT["langgraph_kit"].citations
    bare = Judge("langgraph", "sqlite", {})
    assert bare.subject.verdict(Property.EO, "crash:kill@s1.effect/none-input", False, {}, "s").label is Label.UNDOC


@pytest.mark.parametrize("name", sorted(KIT))
def test_every_kit_citation_has_a_source_and_a_version(name: str) -> None:
    """A kit ✗/D is labelled from its adapter's table only, so checking the tables checks them all."""
    for key, ref in KIT[name].citations.items():
        prop, _, pattern = key.partition(" ")
        assert Property(prop) and pattern, (name, key)
        assert isinstance(ref, DocRef) and ref.source and ref.version and ref.quote and ref.page, (name, key)
        if ref.source in STATEMENTS:  # a DOCS.md statement: verbatim, with the version it was read for
            assert ref == doc(ref.source, ref.stance), (name, key)
        else:  # an installed package's docstring: module:qualname and "distribution version"
            module, _, qualname = ref.source.partition(":")
            assert module and qualname and len(ref.version.split()) == 2, (name, key, ref.source, ref.version)


def _docstring_citations() -> dict[str, dict[str, object]]:
    """distribution -> {"version": pinned, "quotes": {location: [quotes]}} over every kit table."""
    out: dict[str, dict[str, object]] = {}
    for cls in KIT.values():
        for ref in cls.citations.values():
            if ref.source not in STATEMENTS:
                dist, version = ref.version.split()
                entry = out.setdefault(dist, {"version": version, "quotes": {}})
                assert entry["version"] == version, f"{dist} cited as {entry['version']} and {version}"
                entry["quotes"].setdefault(ref.source, []).append(ref.quote)  # type: ignore[union-attr]
    return out


_READ = """
import importlib, importlib.metadata, inspect, json, sys
dist, locations = sys.argv[1], json.loads(sys.argv[2])
docs = {}
for loc in locations:
    module, _, qualname = loc.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    docs[loc] = " ".join((inspect.getdoc(obj) or "").split())
print(json.dumps({"version": importlib.metadata.version(dist), "docs": docs}))
"""


def _pinned(requirement: str) -> str:
    """``name[extra]==1.2`` -> ``name==1.2``: what a side environment pins, extras aside."""
    return re.sub(r"\[[^\]]*\]", "", requirement)


def _python_for(dist: str, version: str) -> str | None:
    """The interpreter that has ``dist``: this one if it has the cited ``version``, else a kit campaign's
    side environment pinning that version (if built), else this one if it has another (the test then
    fails on the version), else none."""
    try:
        installed: str | None = importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed == version:
        return sys.executable
    from probes import campaigns
    from probes.core.envs import SideEnv

    for cls_name in KIT:  # the module defining the campaign (the paper's pydantic_graph: pydantic_graph_kit's)
        module = (importlib.import_module(campaigns.registry()[cls_name].partition(":")[0])
                  if cls_name != "--saver" else None)
        env = getattr(module, "ENV", None)
        if isinstance(env, SideEnv) and any(_pinned(r) == f"{dist}=={version}" for r in env.requirements):
            return str(env.python) if env.ready else None
    return sys.executable if installed else None


@pytest.mark.parametrize("dist", sorted(_docstring_citations()))
def test_docstring_citations_are_verbatim_in_the_release_they_name(dist: str) -> None:
    """The pinned version is the installed one, and every quote is in the installed docstring."""
    cited = _docstring_citations()[dist]
    python = _python_for(dist, str(cited["version"]))
    if python is None:
        pytest.skip(f"{dist} is installed neither here nor in a built side environment")
    quotes: dict[str, list[str]] = cited["quotes"]  # type: ignore[assignment]
    proc = subprocess.run([python, "-c", _READ, dist, json.dumps(sorted(quotes))], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = json.loads(proc.stdout.splitlines()[-1])
    assert found["version"] == cited["version"], f"{dist}: cited for {cited['version']}, installed {found['version']}"
    for location, texts in quotes.items():
        for quote in texts:
            for fragment in quote.split("…"):
                assert " ".join(fragment.split()) in found["docs"][location], (location, fragment)


def test_side_environments_install_the_release_their_citations_name() -> None:
    """Every framework package with a side environment (``ENV`` in its campaign) installs the release its
    citations were read for (``DISTRIBUTION``, ``VERSION``; pydantic-ai's DBOS too)."""
    checked = []
    for package in sorted((PROJECT_ROOT / "probes" / "frameworks").iterdir()):
        if not (package / "campaign.py").is_file():
            continue
        campaign = importlib.import_module(f"probes.frameworks.{package.name}.campaign")
        if hasattr(campaign, "ENV"):
            cited = importlib.import_module(f"probes.frameworks.{package.name}.citations")
            pins = list(map(_pinned, campaign.ENV.requirements))
            assert f"{cited.DISTRIBUTION}=={cited.VERSION}" in pins, (campaign.ENV.name, pins)
            checked.append(package.name)
    assert {"agno", "google_adk", "openai_agents", "pydantic_ai", "strands", "temporal"} <= set(checked), checked
    from probes.frameworks.pydantic_ai import campaign as pai, citations as pai_citations

    assert f"{pai_citations.DBOS_DISTRIBUTION}=={pai_citations.DBOS_VERSION}" in pai.ENV.requirements


def test_statement_versions_name_the_installed_releases() -> None:
    """VERSIONS says which release each DOCS.md family was read for: those are the installed ones."""
    checked = 0
    for family, text in VERSIONS.items():
        for dist, version in re.findall(r"([a-z][a-z0-9-]*[a-z]) (\d+\.\d+\.\d+)", text):
            try:
                installed = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                continue
            assert installed == version, f"{family}: statements read for {dist} {version}, installed {installed}"
            checked += 1
    assert checked >= 6  # langgraph, langgraph-checkpoint, crewai, llama-index-workflows, pydantic-graph, ...


def test_openai_agents_cites_its_concurrent_resume_warning_for_the_races() -> None:
    ref = lookup(entries(KIT["openai_agents"].citations), "CO", "race:same-pause×2")
    assert ref is not None and ref.stance == "deviation" and ref.source == "agents.run_state:RunState"
    assert "must not be resumed concurrently against the same Session" in ref.quote
    assert ref.version == "openai-agents 0.24.0"


def test_uncited_violations_are_found_in_a_verdict_view() -> None:
    ok = {"label": "D", "framework": "f", "property": "EO", "path": "p",
          "doc": {"page": "x", "quote": "q", "stance": "deviation", "source": "LG-8", "version": "v"}}
    view = {"probes": {"a": {"verdicts": [ok, {**ok, "doc": {**ok["doc"], "version": ""}},
                                          {**ok, "label": "U", "doc": None}, {**ok, "label": "✗", "doc": None}]}}}
    assert uncited_violations(view) == [("a", "f", "EO", "p"), ("a", "f", "EO", "p")]


def _reference_uncited() -> dict[str, int]:
    out: dict[str, int] = {}
    for path in sorted(REFERENCE.glob("*/verdicts.json")):
        n = len(uncited_violations(json.loads(path.read_text())))
        if n:
            out[path.parent.name] = n
    return out


_UNCITED = _reference_uncited()


def test_every_reference_violation_cites_a_source_and_a_version() -> None:
    assert _UNCITED == {}
