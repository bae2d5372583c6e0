"""Which documentation statement labels which matrix cell: the one home of citations.

A violation is ``✗`` when the framework's documentation claims the property, ``D`` when
it states the weaker behaviour, ``U`` when it is silent (``probes.core.checker``). The
statements themselves (verbatim quotes with their sources, from ``../shared/DOCS.md``)
are in ``probes.docs_statements``; this module says, per framework, which statement
applies to which cell and with which stance, and for which version it was read.

There is one lookup, ``probes.core.checker.lookup``, and one matching rule, used for every
table: the rows below (``campaign_table`` makes a framework's rows a table; ``subject`` gives a
study a subject labelled from it) and each kit adapter's ``citations`` (``probes.kit.judge``).
Among the entries naming the property whose path glob matches, the longest glob wins; of
equally long ones, the first declared. A cell no entry matches is ``U``, and the verdict says
"no citation declared": the claim that the documentation is silent there (DOCS.md says where
it looked).

Every citation has a ``source`` and a ``version``: a DOCS.md statement (``doc``: its id,
and the version the statement was read for, ``VERSIONS``), or a docstring of the
installed package (``docstring``: ``module:qualname``, and the distribution's version
pinned beside the quote -- pinned, not read from the package metadata at import time,
because it records which release the sentence was read in, and the judge may run where
the framework is not installed; ``tests/test_citations.py`` checks every pin against
the installed package and the quote against its docstring).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fnmatch import fnmatchcase
from types import MappingProxyType
from typing import Any, Mapping

from probes.core.checker import DocRef, Entry, Property, Subject, Table, lookup
from probes.docs_statements import STATEMENTS

# What each framework's statements were read for (DOCS.md "Sources").
VERSIONS: dict[str, str] = {
    "LG": "langgraph 1.2.9 / langgraph-checkpoint 4.1.1 (docs.langchain.com: live docs, not versioned)",
    "CR": "crewai 1.15.2 (docs frozen for v1.15.2, commit 289686ab4)",
    "LI": "llama-index-workflows 2.22.2 (run-llama/llama-agents docs @ 9a503618)",
    "PG": "pydantic-graph 1.107.1",
    "AG": "autogen-agentchat 0.7.5",
    "DB": "dbos 2.27.0 (docs.dbos.dev, dbos-docs HEAD 2026-08-21)",
    "RC": "remit-contract 0.1.2 (its README, as shipped in the distribution's METADATA)",
}

# The page each cited statement is on (DOCS.md writes "same page" for repeats; resolved here).
PAGES: dict[str, str] = {
    "LG-1": "https://docs.langchain.com/oss/python/langgraph/durable-execution (intro)",
    "LG-3": "https://docs.langchain.com/oss/python/langgraph/checkpointers (Why use checkpointers -> Memory)",
    "LG-4": "https://docs.langchain.com/oss/python/langgraph/durable-execution (Starting points for resuming workflows)",
    "LG-5": "https://docs.langchain.com/oss/python/langgraph/durable-execution (Use Idempotent Operations)",
    "LG-7": "https://docs.langchain.com/oss/python/langgraph/durable-execution (Durability modes, \"async\")",
    "LG-8": "https://docs.langchain.com/oss/python/langgraph/durable-execution (Durability modes, \"exit\")",
    "LG-15": "https://docs.langchain.com/oss/python/langgraph/interrupts (Side effects called before interrupt "
             "must be idempotent, \"Good\" examples)",
    "LG-16": "https://docs.langchain.com/oss/python/langgraph/use-time-travel (Interrupts)",
    "LG-21": "https://docs.langchain.com/oss/python/langgraph/use-graph-api (Use pydantic models for graph state "
             "-> Known Limitations)",
    "LG-23": "https://docs.langchain.com/oss/python/langgraph/durable-execution (intro)",
    "LG-28": "https://docs.langchain.com/langsmith/double-texting",
    "LG-30": "https://docs.langchain.com/oss/python/langgraph/durable-execution (Determinism and consistent replay)",
    "CR-1": "https://docs.crewai.com/v1.15.2/en/concepts/checkpointing (What a checkpoint is)",
    "CR-5": "crewai/flow/runtime/__init__.py::Flow.from_checkpoint; crewai/state/checkpoint_config.py::"
            "CheckpointConfig.restore_from",
    "CR-6": "https://docs.crewai.com/v1.15.2/en/concepts/flows (@start())",
    "CR-9": "https://docs.crewai.com/v1.15.2/en/concepts/flows (@persist; Important Considerations)",
    "CR-11": "https://docs.crewai.com/v1.15.2/en/concepts/flows (How It Works -> Error Handling)",
    "CR-13": "https://docs.crewai.com/v1.15.2/en/concepts/flows (restore_from_state_id)",
    "CR-15": "https://docs.crewai.com/v1.15.2/en/learn/human-feedback-in-flows (Async Human Feedback)",
    "CR-16": "https://docs.crewai.com/v1.15.2/en/learn/human-feedback-in-flows (Best Practices for Async Feedback)",
    "LI-1": "https://developers.llamaindex.ai/python/llamaagents/workflows/durable_workflows (Snapshot the context)",
    "LI-2": "https://developers.llamaindex.ai/python/llamaagents/workflows/durable_workflows (Snapshot the context)",
    "LI-3": "workflows/context/context.py::Context.wait_for_event docstring",
    "LI-7": "https://developers.llamaindex.ai/python/llamaagents/workflows/durable_workflows",
    "PG-2": "pydantic_graph/persistence/__init__.py::BaseStatePersistence.record_run docstring",
    "PG-4": "pydantic_graph/persistence/__init__.py::BaseStatePersistence.load_next docstring",
    "AG-3": "https://microsoft.github.io/autogen/stable/user-guide/agentchat-user-guide/tutorial/human-in-the-loop.html "
            "(Providing Feedback to the Next Run)",
    "DB-1": "https://docs.dbos.dev/python/tutorials/workflow-tutorial (Workflow Guarantees)",
    "DB-2": "https://docs.dbos.dev/python/tutorials/workflow-tutorial (Workflow Guarantees)",
    "DB-5": "https://docs.dbos.dev/explanations/concurrent-executions",
    "DB-6": "https://docs.dbos.dev/python/tutorials/workflow-communication (Recv)",
    "DB-3": "https://docs.dbos.dev/python/tutorials/workflow-tutorial (Workflow Guarantees)",
    "DB-10": "https://docs.dbos.dev/python/tutorials/workflow-management (Forking Workflows)",
    "CR-3": "https://docs.crewai.com/v1.15.2/en/concepts/checkpointing (Note on auto-checkpoint writes)",
    "CR-17": "crewai/flow/runtime/__init__.py::Flow.from_pending docstring",
    "LI-6": "https://developers.llamaindex.ai/python/llamaagents/workflows/managing_state (intro); "
            "workflows/context/context.py::Context.to_dict and Workflow.run docstrings",
    "RC-1": "remit_contract-0.1.2.dist-info/METADATA (README: LangGraph quick start, validator example)",
    "RC-2": "remit_contract-0.1.2.dist-info/METADATA (README: LangGraph quick start)",
}


@dataclass(frozen=True)
class Row:
    framework: str  # glob over the verdict's framework name
    properties: str  # the property ids it labels, space-separated
    path: str  # glob over the path
    statement: str  # DOCS.md id
    stance: str  # "claims" | "deviation"


# The longest matching path glob wins (``lookup``); rows are kept specific-first for the reader.
CELLS: tuple[Row, ...] = (
    # remit-contract 0.1.2 (the paper's REMIT build) through the LangGraph probes: a validator raises before
    # persistence (claimed); a declared retry is an ordinary-address resume, byte-identical to stock (stated).
    Row("langgraph+remit-contract", "CV", "*", "RC-1", "claims"),
    Row("langgraph+remit-contract", "FI", "second-resume:declared-intent", "RC-2", "deviation"),
    # LangGraph. durability=exit / async: the page states the loss (LG-8, LG-7).
    Row("langgraph", "EO PC LV", "crash:*/durability=exit/*", "LG-8", "deviation"),
    Row("langgraph", "EO PC", "crash:*/durability=async/*", "LG-7", "deviation"),
    # Recovery by re-submitting the input: a new turn on the thread, not the documented recovery (indirect).
    Row("langgraph", "EO PC", "crash:*/recover=resubmit", "LG-3", "deviation"),
    # invoke(None): the in-flight node restarts from its top, an unfinished task re-runs.
    Row("langgraph", "PC", "crash:*/recover=none", "LG-4", "deviation"),
    Row("langgraph", "EO", "crash:*/recover=none", "LG-5", "deviation"),
    Row("langgraph", "FD", "second-resume:*", "LG-16", "claims"),
    Row("langgraph", "CV", "*", "LG-21", "deviation"),
    Row("langgraph", "CO", "cross-process*", "LG-28", "deviation"),
    Row("langgraph", "CO", "*", "LG-15", "claims"),
    Row("langgraph", "EO", "*", "LG-15", "claims"),
    Row("langgraph", "PC", "*", "LG-1", "claims"),
    Row("langgraph", "RD", "*", "LG-30", "claims"),
    Row("langgraph", "LV", "*", "LG-23", "claims"),
    # CrewAI: @persist restore re-runs the start method (documented); CheckpointConfig claims PC/RD.
    Row("crewai", "EO PC", "@persist*", "CR-6", "deviation"),
    Row("crewai", "LV", "@persist*", "CR-9", "claims"),
    Row("crewai", "EO PC RD", "CheckpointConfig*", "CR-1", "claims"),
    Row("crewai", "LV", "CheckpointConfig*", "CR-5", "claims"),
    Row("crewai", "CO", "*concurrently*", "CR-16", "deviation"),
    Row("crewai*", "CV", "*", "CR-11", "claims"),
    Row("crewai", "LV", "human-feedback*", "CR-15", "claims"),
    # LlamaIndex: wait_for_event replays the step prefix; an in-flight step re-runs.
    Row("llamaindex", "EO PC", "wait:*", "LI-3", "deviation"),
    Row("llamaindex", "EO", "*kill*", "LI-2", "deviation"),
    Row("llamaindex", "PC", "*", "LI-1", "claims"),
    Row("llamaindex", "LV", "*", "LI-7", "claims"),
    # pydantic-graph 1.107.1: the status contract refuses a snapshot left running / pending.
    Row("pydantic-graph", "LV", "crash:*", "PG-2", "deviation"),
    Row("pydantic-graph", "LV", "claimed-pause", "PG-4", "deviation"),
    Row("pydantic-graph", "CO", "*", "PG-4", "claims"),
    # AutoGen: clean stop-and-resume claimed; crash semantics silent (AG-5), CV silent (AG-7), CO silent (AG-8).
    Row("autogen", "LV", "*", "AG-3", "claims"),
    # DBOS.
    Row("dbos", "PC", "*", "DB-1", "claims"),
    Row("dbos", "EO", "*", "DB-5", "deviation"),
    Row("dbos", "LV", "*", "DB-2", "claims"),
    Row("dbos", "CO", "*", "DB-6", "claims"),
    Row("dbos", "FD", "*", "DB-10", "claims"),
)


def doc(statement: str, stance: str) -> DocRef:
    """The DocRef for a DOCS.md statement id, read with the given stance."""
    _prop, quote, source = STATEMENTS[statement]
    page = PAGES.get(statement, source)
    return DocRef(page=page, quote=quote, stance=stance, source=statement,
                  version=VERSIONS[statement.partition("-")[0]])


def docstring(location: str, quote: str, stance: str, distribution: str, version: str) -> DocRef:
    """A docstring of an installed package: ``location`` is ``module:qualname``, ``version`` the
    release of ``distribution`` the quote was read in (checked against the installed one by the tests)."""
    return DocRef(page=f"{location} docstring", quote=quote, stance=stance, source=location,
                  version=f"{distribution} {version}")


def campaign_entries(framework: str) -> list[Entry]:
    """The paper campaigns' rows for ``framework`` (``CELLS``), as lookup entries."""
    return [(frozenset(row.properties.split()), row.path, doc(row.statement, row.stance))
            for row in CELLS if fnmatchcase(framework, row.framework)]


def doc_for(framework: str, prop: Property | str, path: str) -> DocRef | None:
    """The paper campaigns' citation for one cell, or None where the documentation is silent (U)."""
    return lookup(campaign_entries(framework), prop, path)


@functools.cache
def campaign_table(framework: str) -> Table:
    """The rows for ``framework`` as a citation table (``"PROP glob" -> DocRef``): the same entries in
    the same order (a repeated key keeps its first declaration, which the rule's tie-break takes anyway),
    so a subject labelled from it is labelled as ``doc_for`` would. Built once per framework (a study
    makes a subject per verdict), read-only."""
    table: dict[str, DocRef] = {}
    for names, pattern, ref in campaign_entries(framework):
        for name in sorted(names):
            table.setdefault(f"{name} {pattern}", ref)
    return MappingProxyType(table)


def subject(framework: str, backend: str = "-") -> Subject:
    """A study's subject, labelled from this module's rows for ``framework`` (a kit adapter's subject
    carries its adapter's own table instead: ``probes.kit.judge``)."""
    return Subject(framework, backend, citations=campaign_table(framework))


def uncited_violations(view: Mapping[str, object]) -> list[tuple[str, str, str, str]]:
    """The ✗ and D verdicts of a verdict view (``verdicts.json``) without a source or a version:
    (probe, framework, property, path) each. Empty for a view measured with these tables."""
    out: list[tuple[str, str, str, str]] = []
    probes: Mapping[str, Any] = view.get("probes") or {}  # type: ignore[assignment]
    for probe, entry in sorted(probes.items()):
        for v in entry["verdicts"]:
            doc_json = v.get("doc") or {}
            if v["label"] in ("✗", "D") and not (doc_json.get("source") and doc_json.get("version")):
                out.append((probe, v["framework"], v["property"], v["path"]))
    return out
