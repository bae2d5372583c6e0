"""REMIT's two builds as kit adapters: LangGraph's stock savers, wrapped, under the conformance kit.

The REMIT campaign's LangGraph arm asks what REMIT changes on the very protocols the paper's LangGraph
campaign runs (``probes.frameworks.langgraph``), so each build is the stock-saver adapter with one difference:
its ``hook()`` wraps the stock saver before the workflow is compiled over it --

* ``RemitAdapter``: this project's ``remit_ref.wrap(stock, consume_gate=True)``, framework
  ``langgraph+remit``;
* ``ContractAdapter``: the paper's build, remit-contract 0.1.2, through its documented
  ``remit.wrap(SaverClass, conn, cross_process_gate=True)`` (``probes.frameworks.langgraph.savers.contract_wrap``),
  framework ``langgraph+remit-contract``; in the intent protocol only (``INTENT_ENV`` set) with
  ``fork_on_explicit_checkpoint=False``, the README's configuration for declared intent (without it an
  explicitly addressed resume is a fork whatever its flag says), and on the CV workflow (``invalid-write``)
  with the workflow's state model as its ``validator=``, as the legacy arm passed it for its CV probe.

The kill hook stays on the *stock* class's ``put`` (hooked before wrapping; remit_ref delegates to the
stock instance, remit-contract's saver subclasses the stock class), so a save kill hits the store
beneath REMIT, not REMIT's own bookkeeping. Each build declares ``Capability.INTENT`` and sends its own
discriminator (``intent_config``).

The crash-type protocols are about the wrapper alone, with no effect ledger around the task (a
checkpointer cannot stop a task's code from running again): the ``...SaverOnly`` subclasses give their
verdicts the ``saver_only(...)`` subject from the start (``probes.studies.remit.verdicts``), as the legacy arm
did for its crash probes.

Citations: the legacy arm labelled from ``probes.citations`` rows keyed by framework name. There are
none for ``langgraph+remit`` (this project's implementation: no third-party documentation), none for the
saver-only subjects, and two for ``langgraph+remit-contract`` (its README: a validator raises before
persistence, RC-1; a declared retry is an ordinary-address resume, RC-2); each adapter carries exactly
those, never LangGraph's own statements (a REMIT build's behaviour is not what LangGraph documents).
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from probes.citations import doc
from probes.core.checker import DocRef
from probes.kit.adapter import Capability
from probes.frameworks.langgraph.saver import hook_checkpoint_put
from probes.frameworks.langgraph import invalid_write
from probes.frameworks.langgraph.adapter import WORKFLOW_ENV, StockSaverAdapter
from probes.frameworks.langgraph.invalid_write import INVALID_WRITE
from probes.frameworks.langgraph.intent import INTENT_ENV
from probes.frameworks.langgraph.savers import contract_wrap, stock_saver
from probes.studies.remit.verdicts import CONTRACT, FRAMEWORK, saver_only

GATE_OPTIONS = {"consume_gate": True}  # REMIT's build: the cross-process consume gate on (also the ledger probes')
# the lease variant (``probes.studies.remit.campaign.LEASE``): REMIT's ``claim_ttl`` in seconds, set in every process of its
# cells; unset, no lease (a claim is taken over only from a dead owner on this host)
LEASE_ENV = "RC_REMIT_CLAIM_TTL"


class RemitAdapter(StockSaverAdapter):
    """LangGraph's stock saver behind ``remit_ref.wrap(saver, consume_gate=True)``."""

    framework = FRAMEWORK
    capabilities = StockSaverAdapter.capabilities | {Capability.INTENT}
    missing = {c: why for c, why in StockSaverAdapter.missing.items() if c is not Capability.INTENT}
    citations: Mapping[str, DocRef] = {}  # no statement of anyone's documents this project's build

    def wrap(self, stock: Any) -> Any:
        """The build around the stock saver (with a lease of ``LEASE_ENV`` seconds where it is set)."""
        import remit_ref  # this project's reference implementation; imported only in the probe's processes

        lease = os.environ.get(LEASE_ENV)
        return remit_ref.wrap(stock, **GATE_OPTIONS, **({"claim_ttl": float(lease)} if lease else {}))

    def intent_config(self, intent: str) -> dict[str, Any]:
        """The build's discriminator in the config: remit_ref's ``remit_intent``, "fork" or "retry"."""
        return {"remit_intent": intent}

    def hook(self) -> None:
        stock = stock_saver(self.backend, self.store)
        hook_checkpoint_put(type(stock))  # beneath the wrapper: a save kill hits the store
        self._saver = self.wrap(stock)

    def declare(self, handle: Any, answer: Any, intent: str) -> dict[str, Any]:
        """``Command(resume=answer)`` at checkpoint ``handle`` with the build's declaration of ``intent``
        ("fork" or "retry") in the config (the intent protocol)."""
        from langgraph.types import Command

        return self._invoke(Command(resume=answer), handle, self.intent_config(intent))


class RemitSaverOnlyAdapter(RemitAdapter):
    """``RemitAdapter`` as the subject of crash-type protocols: the wrapper alone, no effect ledger."""

    framework = saver_only(FRAMEWORK)


class ContractAdapter(RemitAdapter):
    """LangGraph's stock saver rebuilt by remit-contract 0.1.2 with its cross-process gate."""

    framework = CONTRACT
    packages = StockSaverAdapter.packages + ("remit-contract",)
    citations = {"CV *": doc("RC-1", "claims"), "FI second-resume:declared-intent": doc("RC-2", "deviation")}

    def wrap(self, stock: Any) -> Any:
        declared = {"fork_on_explicit_checkpoint": False} if os.environ.get(INTENT_ENV) else {}
        if os.environ.get(WORKFLOW_ENV) == INVALID_WRITE:  # its README: "With a state validator, CV becomes loud"
            declared["validator"] = invalid_write.validator
        return contract_wrap(stock, cross_process_gate=True, **declared)

    def intent_config(self, intent: str) -> dict[str, Any]:
        """remit-contract's documented flag (README): ``remit_fork: True`` marks a fork; without it (with
        ``fork_on_explicit_checkpoint=False``) an addressed resume is a retry."""
        return {"remit_fork": intent == "fork"}


class ContractSaverOnlyAdapter(ContractAdapter):
    """``ContractAdapter`` as the subject of crash-type protocols: the wrapper alone, no effect ledger."""

    framework = saver_only(CONTRACT)
    citations: Mapping[str, DocRef] = {}  # the legacy rows name langgraph+remit-contract only


# build name (the campaign's ``builds`` parameter) -> (its adapter, its saver-only adapter), as module:Class
ADAPTERS = {
    "remit_ref": ("probes.studies.remit.kit_adapters:RemitAdapter", "probes.studies.remit.kit_adapters:RemitSaverOnlyAdapter"),
    "remit-contract": ("probes.studies.remit.kit_adapters:ContractAdapter",
                       "probes.studies.remit.kit_adapters:ContractSaverOnlyAdapter"),
}
