"""pydantic-graph (pydantic-graph): the paper's campaign (``pydantic_graph``: its persistence's status reset)
and the conformance kit's (``pydantic_graph_kit``), one adapter."""

# The framework this package adapts, as top-level import names: only this package imports it
# (probes.layers; a study or another framework's package that must, says so in its ALSO_IMPORTS).
ADAPTS = ('pydantic_graph',)
