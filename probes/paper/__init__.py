"""The paper layer: each published value of the paper, computed from a campaign's receipts.

A module here reads the receipts a campaign wrote (never a framework, never a probe) and
returns the campaign's headline values (``probes.headline.Measured``, or a string saying why
one was not measured). The headline page and the chapters compare them with
``data/published.json``. Measurement never imports this package: a campaign does not know
which of its cells the paper published, so the paper's reading of a cell can change without
re-measuring it.

Every campaign with published values has its module here (``EXTRACTORS``); a campaign without
one publishes nothing.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from probes.core.receipt import Receipt

Extractor = Callable[[list[Receipt]], dict[str, Any]]

# campaign -> the module:function over its receipts that gives its published values
EXTRACTORS: dict[str, str] = {
    "pydantic_graph": "probes.paper.pydantic_graph:headlines",
    "llamaindex": "probes.paper.llamaindex:headlines",
    "autogen": "probes.paper.autogen:headlines",
    "dbos": "probes.paper.dbos:headlines",
    "crewai": "probes.paper.crewai:headlines",
    "langgraph": "probes.paper.langgraph:headlines",
    "tlc": "probes.paper.tla:headlines",
    "consume_race": "probes.paper.consume_race:headlines",
    "remit": "probes.paper.remit:headlines",
    "remit_bench": "probes.paper.remit_bench:headlines",
    "live": "probes.paper.live:headlines",
}


def sections(name: str) -> list[tuple[str, str]]:
    """The chapter sections a paper module adds for campaign ``name`` (its ``SECTIONS``: (kind,
    source) cells, e.g. a study's table and figure that no conformance template draws); none
    for a module without them or a campaign without a module here."""
    spec = EXTRACTORS.get(name)
    if spec is None:
        return []
    return list(getattr(importlib.import_module(spec.partition(":")[0]), "SECTIONS", ()))


def extractor(campaign: Any) -> Extractor | None:
    """The headline extractor of ``campaign`` (a ``Campaign``, or its name), or None: it publishes nothing."""
    spec = EXTRACTORS.get(campaign if isinstance(campaign, str) else getattr(campaign, "name", ""))
    if spec is None:
        return None
    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(module), function)
