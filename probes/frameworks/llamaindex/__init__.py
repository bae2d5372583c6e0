"""LlamaIndex Workflows (llama-index-workflows): the paper's campaign (``llamaindex``: split steps and
``wait_for_event``) and the conformance kit's (``llamaindex_kit``), one adapter."""

# The framework this package adapts, as top-level import names: only this package imports it
# (probes.layers; a study or another framework's package that must, says so in its ALSO_IMPORTS).
ADAPTS = ('workflows', 'llama_index')
