"""AutoGen AgentChat (autogen-agentchat): the paper's campaign (``PAPER_CAMPAIGN``, ``autogen``) and the
conformance kit's (``autogen_kit``), one adapter, its named forgeries of a saved team state."""

# The framework this package adapts, as top-level import names: only this package imports it
# (probes.layers; a study or another framework's package that must, says so in its ALSO_IMPORTS).
ADAPTS = ('autogen_agentchat', 'autogen_core', 'autogen_ext')
