"""DBOS Transact (dbos): the paper's campaign (``dbos``, with its latency study beside a LangGraph baseline)
and the conformance kit's (``dbos_kit``), one adapter."""

# The framework this package adapts, as top-level import names: only this package imports it
# (probes.layers; a study or another framework's package that must, says so in its ALSO_IMPORTS).
ADAPTS = ('dbos',)
# Frameworks other packages adapt that this one imports too, each with why.
ALSO_IMPORTS = {'langgraph': 'the latency study times a LangGraph baseline beside DBOS (latency_app.py)'}
