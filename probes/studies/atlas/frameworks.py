"""The frameworks the atlas sweeps: where a bug is reported, what is installed, what runs.

A row names the framework as verdicts name it (``probes.core.checker.Subject``), its
tracker (the GitHub repository a bug's URL points into, unless the bug names another),
the distribution whose releases are swept (``releases.json`` holds its release list,
``python -m probes.studies.atlas.releases --refresh`` renews it with ``pip index versions``),
the cells module that runs inside each release's side environment, the other
requirements of that environment, and the pin (the release in ``env/requirements.lock``:
the main environment already has it, so a framework whose pin ``main_env`` allows runs
its pin there instead of installing it again).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Framework:
    name: str                           # as verdicts name it
    title: str                          # for the chapter
    repo: str                           # GitHub owner/name of its tracker
    dist: str                           # the distribution whose releases are swept
    cells: str                          # the cells module (runs in the release's side environment)
    companions: tuple[str, ...] = ()    # other requirements of every side environment
    pin: str | None = None              # the release in env/requirements.lock
    main_env: bool = False              # the pin runs in the main environment (no side environment)
    pre: bool = False                   # its pre-releases are swept too (it shipped only those for a while)
    pin_env: str | None = None          # "module:NAME" of a campaign's SideEnv that already holds the pin

    def requirements(self, release: str) -> tuple[str, ...]:
        return (f"{self.dist}=={release}", *self.companions)


FRAMEWORKS: dict[str, Framework] = {f.name: f for f in (
    # The LangGraph cells keep their own side environments for every release, the pin
    # included: each gets the newest checkpoint packages it resolves with.
    Framework("langgraph", "LangGraph", "langchain-ai/langgraph", "langgraph", "probes.studies.atlas.cells",
              ("langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres", "psycopg[binary]"), "1.2.9"),
    Framework("pydantic-graph", "pydantic-graph", "pydantic/pydantic-ai", "pydantic-graph",
              # 0.x imports opentelemetry without declaring it
              "probes.studies.atlas.cells_pydantic_graph", ("opentelemetry-api",), "1.107.1", main_env=True),
    Framework("crewai", "CrewAI", "crewAIInc/crewAI", "crewai", "probes.studies.atlas.cells_crewai", (), "1.15.2",
              main_env=True),
    # The workflows lived in llama-index-core when #18023 was filed; it re-exports llama-index-workflows now.
    Framework("llamaindex", "LlamaIndex Workflows", "run-llama/llama_index", "llama-index-core",
              "probes.studies.atlas.cells_llamaindex"),
    Framework("openai-agents", "OpenAI Agents SDK", "openai/openai-agents-python", "openai-agents",
              "probes.studies.atlas.cells_openai_agents", (), "0.24.0"),
    # agent-framework-core shipped betas (1.0.0bYYMMDD) and release candidates for five months
    # before 1.0.0; the reported bugs of that time exist only there, so they are swept too. The betas
    # require mcp unbounded and import mcp.shared.exceptions.McpError, which mcp 2 removed.
    Framework("agent-framework", "Microsoft Agent Framework", "microsoft/agent-framework", "agent-framework-core",
              "probes.studies.atlas.cells_maf", ("mcp<2",), "1.23.0", main_env=True, pre=True),
    # SqliteDb needs SQLAlchemy's asyncio extra and aiosqlite (agno's [sqlite] extra); a background
    # continue-run goes through agno.os, which imports fastapi (the [os] extra) -- so the pin does not
    # run in the agno campaign's environment, which has no fastapi.
    Framework("agno", "Agno", "agno-agi/agno", "agno", "probes.studies.atlas.cells_agno",
              ("sqlalchemy[asyncio]", "aiosqlite", "fastapi"), "3.1.10"),
    # SqliteSessionService needs aiosqlite; the pin runs in the google_adk campaign's environment.
    Framework("google-adk", "Google ADK", "google/adk-python", "google-adk", "probes.studies.atlas.cells_google_adk",
              ("sqlalchemy[asyncio]", "aiosqlite"), "2.13.0", pin_env="probes.frameworks.google_adk.campaign:ENV"),
    # the agent package (pydantic-graph above is its graph library, released with the same numbers);
    # the pin runs in the pydantic-ai campaign's environment (pydantic-ai-slim[dbos] 2.68.0) where it exists.
    # 1.x imports opentelemetry._events, which opentelemetry-api 1.45 removed (1.42 still has it).
    Framework("pydantic-ai", "pydantic-ai", "pydantic/pydantic-ai", "pydantic-ai-slim", "probes.studies.atlas.cells_pydantic_ai",
              ("opentelemetry-api<1.43",), "2.68.0", pin_env="probes.frameworks.pydantic_ai.campaign:ENV"),
    # Agent Framework's AG-UI server (its own distribution and release numbers, betas and candidates
    # before 1.0.0 like the core's): the approval registry it keeps between a run and its resume lives
    # here, not in agent-framework-core, so its bugs are swept over this package's releases. pip
    # resolves the newest agent-framework-core each release allows; mcp<2 as for the core's betas.
    Framework("agent-framework-ag-ui", "Microsoft Agent Framework AG-UI server", "microsoft/agent-framework",
              "agent-framework-ag-ui", "probes.studies.atlas.cells_ag_ui", ("mcp<2",), pre=True),
    # LlamaIndex's workflow server (run-llama/llama-agents): resumes persisted handlers when it starts.
    # It has its own releases; pip resolves the newest llama-index-workflows each allows.
    Framework("llama-agents", "LlamaIndex workflow server (llama-agents)", "run-llama/llama-agents",
              "llama-agents-server", "probes.studies.atlas.cells_llama_agents"),
    # Pydantic's capability library for pydantic-ai (pydantic/pydantic-ai-harness): StepPersistence, its
    # continuable snapshots and continue_run() ship here (from 0.4.0), with release numbers of their own.
    # pip resolves the newest pydantic-ai-slim each release allows (later releases pin one exactly).
    Framework("pydantic-ai-harness", "pydantic-ai harness (StepPersistence)", "pydantic/pydantic-ai-harness",
              "pydantic-ai-harness", "probes.studies.atlas.cells_pydantic_ai_harness"),
)}


def framework(name: str) -> Framework:
    try:
        return FRAMEWORKS[name]
    except KeyError:
        raise KeyError(f"no atlas framework {name!r} (rows of probes/studies/atlas/frameworks.py)") from None
