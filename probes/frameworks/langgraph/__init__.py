"""LangGraph (langgraph + its SQLite and PostgreSQL savers): the paper's campaign (``langgraph``: the
saver crash points K1-K5, the functional and graph APIs, intent) and the conformance kit's
(``langgraph_kit``), one adapter; ``savers.py`` builds the savers the studies wrap."""

# The framework this package adapts, as top-level import names: only this package imports it
# (probes.layers; a study or another framework's package that must, says so in its ALSO_IMPORTS).
ADAPTS = ('langgraph',)
