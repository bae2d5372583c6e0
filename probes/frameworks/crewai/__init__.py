"""CrewAI Flows (crewai): the paper's campaign (``crewai``, its counter flow and checkpoint protocols) and the
conformance kit's (``crewai_kit``), one adapter."""

# The framework this package adapts, as top-level import names: only this package imports it
# (probes.layers; a study or another framework's package that must, says so in its ALSO_IMPORTS).
ADAPTS = ('crewai',)
