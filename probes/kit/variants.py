"""The kit's protocols run on an adapter's workflow variant: one cell per protocol cell, paths named after it.

An adapter may build more than one workflow (an API shape such as LangGraph's functional API beside
its graph API; a pause mechanism such as LlamaIndex's ``wait_for_event`` beside its split steps),
selected by an environment variable its processes read. A ``Variant`` names one of them and the kit
protocols that make sense on it; as a framework protocol of its own name it runs each of those
protocols' cells on the variant (``on_variant``: every process builds it, every verdict path begins
with the variant's prefix, so the variant's cells never mix with the default workflow's), and its
``plan`` expands the one cell ``kit_plan`` gives it into a probe per cell of each protocol it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from probes.core.campaign import ProbeSpec
from probes.core.checker import Verdict
from probes.core.errors import HarnessError
from probes.kit.protocols import PROTOCOLS as KIT_PROTOCOLS
from probes.kit.protocols import Probe, on_variant

Protocol = Callable[[Probe, dict[str, Any]], list[Verdict]]


@dataclass(frozen=True)
class Variant:
    """A workflow variant: the protocol name its cells run under, the environment variable and value
    that select it in the adapter, the prefix of its verdict paths and the protocols it runs."""

    protocol: str
    env: str
    workflow: str
    prefix: str
    runs: tuple[str, ...]

    def probe(self, p: Probe) -> Probe:
        """``p`` with every process building this variant, its verdict paths named after it."""
        return on_variant(p, self.env, self.workflow, self.prefix)

    def protocol_of(self, own: Mapping[str, Protocol]) -> Protocol:
        """The framework protocol that runs the cell's protocol ``args["of"]`` (a kit protocol or one of
        the framework's ``own``) on this variant."""
        def run(p: Probe, args: dict[str, Any]) -> list[Verdict]:
            of = args.get("of")
            if of not in self.runs:
                raise HarnessError(f"the {self.protocol} variant runs {', '.join(self.runs)}, not {of!r}")
            return {**KIT_PROTOCOLS, **own}[of](self.probe(p), args)
        run.__doc__ = f"A protocol's cell on the adapter's {self.workflow!r} workflow (paths {self.prefix}<path>)."
        return run

    def plan(self, params: Mapping[str, Any], specs: list[ProbeSpec],
             cells: Callable[[Mapping[str, Any]], list[ProbeSpec]]) -> list[ProbeSpec]:
        """``specs`` with this variant's one cell replaced by a probe per cell of each selected protocol it
        runs (all of them when none is selected): ``<protocol>.<cell id>``. ``cells(params)`` is the
        campaign's plan without variants."""
        specs = [s for s in specs if s.args["protocol"] != self.protocol]
        if self.protocol not in params["protocols"]:
            return specs
        on = [name for name in self.runs if name in params["protocols"]] or list(self.runs)
        return specs + [ProbeSpec(f"{self.protocol}.{s.id}", {**s.args, "protocol": self.protocol,
                                                               "of": s.args["protocol"]})
                        for s in cells({**params, "protocols": on})]
