"""The campaign registry: name -> where its definition lives, in reproduction order.

Definitions are imported lazily so that a process measuring LangGraph never pays for
importing CrewAI. Each campaign has a notebook that becomes a chapter of the book: its own
``notebooks/<name>.ipynb``, or, for a kit framework, the kit's template generated when it runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING

from probes.core.errors import UsageError

# Campaigns about other releases than the pinned ones (the regression atlas, version drift, cross-version
# resume): each has its own chapter, and none joins the conformance matrix or trace validation.
OTHER_RELEASES = ("atlas", "drift", "mv")

if TYPE_CHECKING:
    from probes.core.campaign import Campaign

REGISTRY: dict[str, str] = {
    "tlc": "probes.tla.campaign:CAMPAIGN",
    "langgraph": "probes.frameworks.langgraph.campaign:PAPER_CAMPAIGN",
    "consume_race": "probes.studies.consume_race.campaign:CAMPAIGN",
    "crewai": "probes.frameworks.crewai.campaign:PAPER_CAMPAIGN",
    "llamaindex": "probes.frameworks.llamaindex.campaign:PAPER_CAMPAIGN",
    "pydantic_graph": "probes.frameworks.pydantic_graph.campaign:PAPER_CAMPAIGN",
    "autogen": "probes.frameworks.autogen.campaign:PAPER_CAMPAIGN",
    "dbos": "probes.frameworks.dbos.campaign:PAPER_CAMPAIGN",
    "remit": "probes.studies.remit.campaign:CAMPAIGN",
    "remit_bench": "probes.studies.remit.bench:CAMPAIGN",
    "remit_cost": "probes.studies.remit.cost:CAMPAIGN",
    "live": "probes.studies.live.campaign:CAMPAIGN",
    "traces": "probes.tla.validation:CAMPAIGN",
}


def _extra() -> dict[str, str]:
    """Extra campaigns from ``RC_EXTRA_CAMPAIGNS=name=module:ATTR,...`` (used by the tests)."""
    extra = {}
    for item in filter(None, os.environ.get("RC_EXTRA_CAMPAIGNS", "").split(",")):
        name, _, target = item.partition("=")
        extra[name.strip()] = target.strip()
    return extra


def discovered() -> dict[str, str]:
    """Campaigns added without touching this file: any ``probes/frameworks/<pkg>/campaign.py`` or
    ``probes/studies/<pkg>/campaign.py`` defining ``CAMPAIGN``.

    A new framework's campaign is found by where it lives; its name is its package's
    (``probes/frameworks/openai_agents/campaign.py`` -> ``openai_agents``), or ``<pkg>_kit`` where
    the paper already has a campaign of that name (``probes/frameworks/langgraph/campaign.py``
    defines the paper's ``langgraph`` and the kit's ``langgraph_kit``). They run after the
    paper's campaigns, in name order.
    """
    root = Path(__file__).resolve().parent
    found = {}
    for path in sorted([*root.glob("frameworks/*/campaign.py"), *root.glob("studies/*/campaign.py")],
                       key=lambda p: p.parent.name):
        target = f"probes.{path.parent.parent.name}.{path.parent.name}.campaign:CAMPAIGN"
        if target not in REGISTRY.values():
            name = path.parent.name
            found[f"{name}_kit" if name in REGISTRY else name] = target
    return found


def registry() -> dict[str, str]:
    return {**REGISTRY, **discovered(), **_extra()}


def available() -> list[str]:
    """Campaigns whose definition module exists in this checkout, in registry order."""
    names = []
    for name, target in registry().items():
        try:
            if importlib.util.find_spec(target.partition(":")[0]) is not None:
                names.append(name)
        except ModuleNotFoundError:  # the parent package does not exist yet
            continue
    return names


def get(name: str) -> "Campaign":
    if name not in registry():
        raise UsageError(f"unknown campaign {name!r}; known: {', '.join(available())}")
    if name not in available():
        raise UsageError(f"campaign {name!r} is not implemented in this checkout yet")
    module, _, attr = registry()[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def definition(name: str) -> str:
    """The file that defines campaign ``name`` (relative to the project root), found without importing
    it: ``probes/frameworks/langgraph/campaign.py`` for ``langgraph`` and ``langgraph_kit``."""
    if name not in registry():
        raise UsageError(f"unknown campaign {name!r}; known: {', '.join(available())}")
    return registry()[name].partition(":")[0].replace(".", "/") + ".py"


def package_dir(name: str) -> str:
    """The package directory campaign ``name`` lives in (relative to the project root): its adapter,
    citations and own protocols, ``probes/frameworks/crewai`` for ``crewai`` and ``crewai_kit``."""
    return definition(name).rpartition("/")[0]
