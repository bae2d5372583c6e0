"""LlamaIndex Workflows 2.22.2 under the conformance kit: the paper's framework, every kit protocol.

The paper's campaign (``probes/llamaindex``) measures one serialized-context pause with
hand-written probes; here the kit's protocols run against a three-step workflow whose
``InputRequiredEvent`` pause is saved with ``ctx.to_dict()`` (LlamaIndex has no
checkpointer of its own, LI-8: the application saves the context). Its verdicts join the
``llamaindex`` row of the matrix.
"""

from probes.kit.suite import kit_campaign

CAMPAIGN = kit_campaign(
    "llamaindex_kit", "LlamaIndex Workflows 2.22.2: a serialized Context under the conformance kit",
    "probes.llamaindex_kit.adapter:LlamaIndexAdapter", packages=("llama-index-workflows",),
    description="InputRequiredEvent pause; ctx.to_dict() saved by the application; all kit protocols.")
