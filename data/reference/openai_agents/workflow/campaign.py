"""OpenAI Agents SDK 0.24.0: every kit protocol, in its own cached side environment.

0.24 needs openai >= 3, which the paper's crewai pin excludes, so it cannot share the
main environment; the pinned requirement below names its environment
(``openai-agents-py311-<hash>`` in the user cache, see ``probes.core.envs``) and is part of this campaign's source hash.
"""

from probes.core.envs import SideEnv
from probes.kit.suite import kit_campaign

ENV = SideEnv("openai-agents", ("openai-agents==0.24.0",))

CAMPAIGN = kit_campaign(
    "openai_agents", "OpenAI Agents SDK 0.24.0: tool approvals and RunState under the conformance kit",
    "probes.frameworks.openai_agents.adapter:OpenAIAgentsAdapter", env=ENV,
    description="Scripted model, a needs_approval tool, RunState JSON files and an SQLite session.")
