"""CrewAI 1.15.2 Flows under the conformance kit: the paper's framework, every kit protocol.

The paper's campaign (``probes/crewai``) answers the human-feedback pause at most twice
and never edits its durable state; here a flow persisted with ``@persist`` in SQLite
pauses in a ``@human_feedback`` step and the kit's protocols run against it: crash at
every step point under ``@persist``'s restart and under restoring the newest
``CheckpointConfig`` file, park-kill, stray, the pause answered up to 8 times by its flow
id, k concurrent answers, fork, tampered ``pending_feedback`` state and kills inside
``SQLiteFlowPersistence``'s own saves. Its verdicts join the ``crewai`` row of the matrix.
"""

from probes.kit.suite import kit_campaign

CAMPAIGN = kit_campaign(
    "crewai_kit", "CrewAI 1.15.2 Flows: a human-feedback pause persisted in SQLite under the conformance kit",
    "probes.crewai_kit.adapter:CrewAIAdapter", packages=("crewai", "pydantic"),
    description="@human_feedback pause; @persist(SQLiteFlowPersistence); CheckpointConfig files; all kit protocols.")
