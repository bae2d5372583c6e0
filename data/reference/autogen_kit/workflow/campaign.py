"""AutoGen AgentChat 0.7.5 under the conformance kit: the paper's framework, every kit protocol.

The paper's campaign (``probes/autogen``) saves and resumes a single agent by the
harness's own turn counter; here a ``GraphFlow`` team is saved with its own
``save_state`` when its run stops at a handoff to the user, and the kit's protocols
(crash at every step point, park-kill, stray, N answers, k concurrent answers, fork,
tampered team state, kills inside the save) run against it. Its verdicts join the
``autogen`` row of the matrix.
"""

from probes.kit.suite import kit_campaign

CAMPAIGN = kit_campaign(
    "autogen_kit", "AutoGen AgentChat 0.7.5: a GraphFlow team's saved state under the conformance kit",
    "probes.autogen_kit.adapter:AutoGenAdapter", packages=("autogen-agentchat", "autogen-core"),
    description="GraphFlow team paused by a handoff to the user; team.save_state() after every run; all kit protocols.")
