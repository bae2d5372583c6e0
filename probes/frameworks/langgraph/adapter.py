"""LangGraph's stock checkpointers under the kit: ``SqliteSaver`` and ``PostgresSaver``.

The kit's LangGraph adapter (``probes.frameworks.langgraph.saver``, the one ``--saver`` uses)
with the saver fixed by the probe's backend instead of ``RC_KIT_SAVER``: the same
two-node graph, ``interrupt()`` in ``s2``, a pause addressed by its checkpoint id,
recovery by ``invoke(None)`` or by sending the input again, kills inside the saver's own
``put``; the same workflow in the functional API (``RC_LG_API``). LangGraph's own protocols
(``probes.frameworks.langgraph.protocols``) run the paper's other workflows on it (``WORKFLOWS``,
selected by ``RC_LG_WORKFLOW``): a node writing a value its state model refuses, two
interrupts in sequence, two in parallel branches.
"""

import os
from typing import Any, Callable

from probes.citations import doc
from probes.kit.adapter import Capability
from probes.frameworks.langgraph.saver import SaverAdapter, hook_checkpoint_put, on_variants
from probes.frameworks.langgraph import invalid_write
from probes.frameworks.langgraph.shapes import ResumeMap, build_fanout, build_sequential
from probes.frameworks.langgraph.intent import NO_INTENT_ON_THE_WIRE
from probes.frameworks.langgraph.savers import stock_saver  # noqa: F401 (the one builder; imported from here too)


WORKFLOW_ENV = "RC_LG_WORKFLOW"  # a workflow of LangGraph's own protocols (probes.frameworks.langgraph); unset: the kit's
# workflow name -> a builder of its compiled graph over the adapter's saver (``adapter._saver``)
WORKFLOWS: dict[str, Callable[[Any], Any]] = {
    invalid_write.INVALID_WRITE: invalid_write.build_invalid_write,  # CV: a node writes a value its state model refuses
    "sequential": build_sequential, "fanout": build_fanout,  # two interrupts in one run (probes.frameworks.langgraph.shapes)
}


# as the paper's campaign cites them: a fork at an answered pause (LG-16, the claim #6663
# breaks) and answers racing from other processes (LG-28, the documented deviation: a second
# invocation of a thread before the first has finished) -- which a racer cut off from the
# store by a partition is, too
STOCK_CITATIONS = {"FD fork:*": doc("LG-16", "claims"), "CO race:*": doc("LG-28", "deviation"),
                   "CO partition:*": doc("LG-28", "deviation"), "EO partition:*": doc("LG-28", "deviation")}


class StockSaverAdapter(ResumeMap, SaverAdapter):  # ResumeMap: the fan-out's resume map
    packages = ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres")
    imports = (*SaverAdapter.imports, "langgraph.checkpoint.postgres")
    missing = {Capability.TAMPER: "the stock savers store checkpoints as msgpack blobs (JsonPlusSerializer), not "
                                  "JSON documents the kit can edit; the paper's campaign writes invalid state through "
                                  "LangGraph instead (its CV probes)",
               Capability.INTENT: NO_INTENT_ON_THE_WIRE}

    citations = {**SaverAdapter.citations, **STOCK_CITATIONS, **on_variants(STOCK_CITATIONS)}

    def hook(self) -> None:
        self._saver = stock_saver(self.backend, self.store)
        hook_checkpoint_put(type(self._saver))

    def _build(self) -> Any:
        """The workflow a LangGraph protocol of this package asked for (``WORKFLOW_ENV``), else the kit's."""
        workflow = os.environ.get(WORKFLOW_ENV)
        return WORKFLOWS[workflow](self) if workflow else super()._build()

    def durable_items(self) -> dict[str, Any]:
        """What of the invalid-write variant's state is durable, read raw from the saver (its CV protocol)."""
        return invalid_write.durable_items(self)

    def state_required(self, doc: Any) -> dict[str, Any]:
        """A stock saver's durable checkpoint is LangGraph's ``Checkpoint``, a ``TypedDict`` declared
        total (``langgraph/checkpoint/base/__init__.py``) and stored as a msgpack blob
        (``JsonPlusSerializer.dumps_typed``); its required keys are the TypedDict's own
        ``__required_keys__`` (``required_fields`` reads pydantic models and dataclasses only). The
        kit does not tamper with these blobs (no ``TAMPER``: see ``missing``), so this declaration is
        what a re-judgement or a JSON-storing saver would use, not something the tamper probe edits."""
        from langgraph.checkpoint.base import Checkpoint
        return {"status": "schema", "required": sorted(Checkpoint.__required_keys__),
                "model": "langgraph.checkpoint.base Checkpoint (TypedDict)"}
