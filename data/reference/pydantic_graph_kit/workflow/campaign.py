"""pydantic-graph 1.107.1 under the conformance kit: the paper's framework, every kit protocol.

The paper's campaign (``probes/pydantic_graph``) has no N-answer protocol and no kill
inside the framework's own save; here the kit's protocols run against a graph that
pauses at an unanswered node in ``FileStatePersistence`` and resumes with
``iter_from_persistence``, with kills inside ``FileStatePersistence``'s own write. Its
verdicts join the ``pydantic-graph`` row of the matrix.
"""

from probes.kit.suite import kit_campaign

CAMPAIGN = kit_campaign(
    "pydantic_graph_kit", "pydantic-graph 1.107.1: FileStatePersistence under the conformance kit",
    "probes.pydantic_graph_kit.adapter:PydanticGraphAdapter", packages=("pydantic-graph",),
    description="A graph paused at an unanswered node; FileStatePersistence snapshots; all kit protocols.")
