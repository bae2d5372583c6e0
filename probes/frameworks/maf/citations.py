"""What Microsoft Agent Framework's documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of agent-framework-core 1.23.0 as installed (the package the
probes import; ``VERSION`` is pinned: the release the sentences were read in, checked against
the installed package by ``tests/test_citations.py``). A pattern with no sentence here is
silent, so a violation there is U.
"""

from probes.citations import docstring

DISTRIBUTION, VERSION = "agent-framework-core", "1.23.0"

_REQUIRED_FIELDS = docstring("agent_framework._workflows._checkpoint:WorkflowCheckpoint.from_dict",
                             "WorkflowCheckpointException: If required fields are missing.", "claims",
                             DISTRIBUTION, VERSION)

CITATIONS = {
    # A checkpoint missing a *required* field must be refused. Only the two fields without a
    # default in the WorkflowCheckpoint dataclass are required; dropping another is not covered (U).
    "CV tamper:empty-object": _REQUIRED_FIELDS,
    "CV tamper:drop:workflow_name": _REQUIRED_FIELDS,
    "CV tamper:drop:graph_signature_hash": _REQUIRED_FIELDS,
    "LV *": docstring("agent_framework._workflows._checkpoint:WorkflowCheckpoint",
                      "Checkpoints capture the full execution state of a workflow at a specific point, enabling "
                      "workflows to be paused and resumed.", "claims", DISTRIBUTION, VERSION),
}
