"""Strands Agents 1.62.0: every kit protocol, in its own cached side environment."""

from probes.core.envs import SideEnv
from probes.kit.suite import kit_campaign

ENV = SideEnv("strands-agents", ("strands-agents==1.62.0",))

CAMPAIGN = kit_campaign(
    "strands", "Strands Agents 1.62.0: tool interrupts and file sessions under the conformance kit",
    "probes.strands.adapter:StrandsAdapter", env=ENV,
    description="Scripted model, a tool that interrupts, FileSessionManager JSON files.")
