"""Microsoft Agent Framework (agent-framework-core) measured with the conformance kit."""

# The framework this package adapts, as top-level import names: only this package imports it
# (probes.layers; a study or another framework's package that must, says so in its ALSO_IMPORTS).
ADAPTS = ('agent_framework',)
