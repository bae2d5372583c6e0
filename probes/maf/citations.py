"""What Microsoft Agent Framework's documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of agent-framework-core 1.23.0 as installed (the package
the probes import); a pattern with no sentence here is silent, so a violation there is U.
"""

_CHECKPOINT = "agent_framework/_workflows/_checkpoint.py: WorkflowCheckpoint docstring (agent-framework-core 1.23.0)"

_REQUIRED_FIELDS = {
    "page": "agent_framework/_workflows/_checkpoint.py: WorkflowCheckpoint.from_dict docstring "
            "(agent-framework-core 1.23.0)",
    "quote": "WorkflowCheckpointException: If required fields are missing.",
    "stance": "claims"}

CITATIONS: dict[str, dict[str, str]] = {
    # A checkpoint missing a *required* field must be refused. Only the two fields without a
    # default in the WorkflowCheckpoint dataclass are required; dropping another is not covered (U).
    "CV tamper:empty-object": _REQUIRED_FIELDS,
    "CV tamper:drop:workflow_name": _REQUIRED_FIELDS,
    "CV tamper:drop:graph_signature_hash": _REQUIRED_FIELDS,
    "LV *": {
        "page": _CHECKPOINT,
        "quote": "Checkpoints capture the full execution state of a workflow at a specific point, enabling "
                 "workflows to be paused and resumed.",
        "stance": "claims"},
}
