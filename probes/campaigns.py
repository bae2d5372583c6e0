"""The campaign registry: name -> where its definition lives, in reproduction order.

Definitions are imported lazily so that a process measuring LangGraph never pays for
importing CrewAI. Each campaign has a notebook ``notebooks/<name>.ipynb`` that becomes
a chapter of the book.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from probes.core.errors import UsageError

if TYPE_CHECKING:
    from probes.core.campaign import Campaign

REGISTRY: dict[str, str] = {
    "tlc": "probes.tla.campaign:CAMPAIGN",
    "langgraph": "probes.langgraph.campaign:CAMPAIGN",
    "consume_race": "probes.consume_race.campaign:CAMPAIGN",
    "crewai": "probes.crewai.campaign:CAMPAIGN",
    "llamaindex": "probes.llamaindex.campaign:CAMPAIGN",
    "pydantic_graph": "probes.pydantic_graph.campaign:CAMPAIGN",
    "autogen": "probes.autogen.campaign:CAMPAIGN",
    "dbos": "probes.dbos.campaign:CAMPAIGN",
    "remit": "probes.remit.campaign:CAMPAIGN",
    "remit_bench": "probes.remit.bench:CAMPAIGN",
    "live": "probes.live.campaign:CAMPAIGN",
}


def available() -> list[str]:
    """Campaigns whose definition module exists in this checkout, in registry order."""
    names = []
    for name, target in REGISTRY.items():
        module = target.partition(":")[0]
        if importlib.util.find_spec(module.rsplit(".", 1)[0]) is None:
            continue
        try:
            if importlib.util.find_spec(module) is not None:
                names.append(name)
        except ModuleNotFoundError:
            continue
    return names


def get(name: str) -> "Campaign":
    if name not in REGISTRY:
        raise UsageError(f"unknown campaign {name!r}; known: {', '.join(available())}")
    if name not in available():
        raise UsageError(f"campaign {name!r} is not implemented in this checkout yet")
    module, _, attr = REGISTRY[name].partition(":")
    return getattr(importlib.import_module(module), attr)
