"""LlamaIndex Workflows 2.22.2 under the conformance kit: the paper's campaign and every kit protocol.

One adapter (``probes.frameworks.llamaindex.adapter``: a three-step workflow whose ``InputRequiredEvent``
pause is saved with ``ctx.to_dict()``, LlamaIndex having no checkpointer of its own, LI-8), two
campaigns over it:

* ``llamaindex``, the paper's campaign in the default reproduction: the kit's protocols the paper's
  cells need (baseline, park-kill, stray, the same pause answered twice, two processes answering it
  at once, a fork) and LlamaIndex's own (``probes.frameworks.llamaindex.protocols``: answers sent back to
  back, an answer in the process that asked, an unserialisable store, the paper's named snapshot
  edits), on the split steps and -- the other pause mechanism, ``ctx.wait_for_event`` inside a
  step -- on the adapter's ``wait_for_event`` variant (paths ``wait:...``). Its published value
  (``llamaindex.row``) is read from its receipts by ``probes.paper.llamaindex``.
* ``llamaindex_kit``, every protocol at the kit's bounds, the variant's included (``./reproduce.sh --all``).

Both join the ``llamaindex`` row of the matrix. The plan is the kit's, with the ``wait_for_event``
cell expanded into one probe per cell of the protocols that variant runs
(``probes.frameworks.llamaindex.protocols.plan``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from probes.core.campaign import Campaign
from probes.kit.suite import PROTOCOL_NAMES, kit_campaign
from probes.frameworks.llamaindex.protocols import PROTOCOLS, WAIT, plan

ADAPTER = "probes.frameworks.llamaindex.adapter:LlamaIndexAdapter"
PACKAGES = ("llama-index-workflows", "pydantic")  # pydantic: the snapshot model the named edits are validated by
# what the paper's cells need, each on the split steps; the wait_for_event variant runs the ones it can
PAPER_PROTOCOLS = ["baseline", "parkkill", "stray", "answers", "race", "fork",
                   "in_process", "double", "unserialisable", "forgeries", WAIT]


def _campaign(name: str, title: str, **kw: Any) -> Campaign:
    """A kit campaign over the LlamaIndex adapter with its own protocols and the variant's plan."""
    names = PROTOCOL_NAMES + tuple(PROTOCOLS)

    def planned(params: Mapping[str, Any]) -> list[Any]:
        return plan(params, names)
    made = kit_campaign(name, title, ADAPTER, packages=PACKAGES, protocols=PROTOCOLS, **kw)
    return dataclasses.replace(made, plan=planned)


CAMPAIGN = _campaign(
    "llamaindex_kit", "LlamaIndex Workflows 2.22.2: a serialized Context under the conformance kit",
    description="InputRequiredEvent pause; ctx.to_dict() saved by the application; all kit protocols, "
                "on the split steps and on a step paused by ctx.wait_for_event.")

PAPER_CAMPAIGN = _campaign(
    "llamaindex", "LlamaIndex Workflows: split-step input, in-step waits, snapshots on disk", in_default_run=True,
    defaults={"protocols": PAPER_PROTOCOLS, "answers_n": [2], "race_k": [2]},
    quick={"protocols": PAPER_PROTOCOLS, "answers_n": [2]},
    description="The paper's campaign through the kit: the context snapshotted with ctx.to_dict() at the input "
                "request and restored with Context.from_dict in a fresh process -- answered once, twice, by two "
                "processes at once, with two answers back to back, after the run ended, with another answer -- "
                "on split steps and on a step that pauses with ctx.wait_for_event (whose work before the wait "
                "replays, as its docstring says); an unserialisable value in the store; the paper's named edits "
                "of the snapshot.")
