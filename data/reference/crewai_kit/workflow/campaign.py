"""CrewAI 1.15.2 Flows under the conformance kit: the paper's campaign and every kit protocol.

One adapter (``probes.frameworks.crewai.adapter``: a flow persisted with ``@persist`` in SQLite that pauses
in a ``@human_feedback`` step, and the paper's counter flow as a workflow variant), two campaigns over it:

* ``crewai``, the paper's campaign in the default reproduction: CrewAI's own protocols
  (``probes.frameworks.crewai.protocols``) on the counter flow -- ``@persist`` restore by id after ``s2``
  raised once and after a SIGKILL inside ``s2``, the restore of a flow that had completed, and
  ``CheckpointConfig(on_events=["*"])`` restore after ``s2`` raised once -- and the kit's protocols
  the paper's human-feedback cells need, on the pausing flow: answered once from a fresh process
  (baseline), killed while parked, answered again after completion (stray), twice by its flow id
  (answers), by two processes at once (race, three trials as the paper's campaign had three reps),
  and with another answer (fork). Its published values (``crewai.persist_counter``,
  ``crewai.completed_restore``, ``crewai.checkpointconfig``) are read from its receipts by
  ``probes.paper.crewai``.
* ``crewai_kit``, every protocol at the kit's bounds, CrewAI's own included: crash at every step
  point under ``@persist``'s restart and under restoring the newest ``CheckpointConfig`` file,
  park-kill, stray, the pause answered up to 8 times by its flow id, k concurrent answers, fork,
  tampered ``pending_feedback`` state and kills inside ``SQLiteFlowPersistence``'s own saves
  (``./reproduce.sh --all``).

Both join the ``crewai`` row of the matrix.
"""

from probes.frameworks.crewai.protocols import PROTOCOLS
from probes.kit.suite import kit_campaign

ADAPTER = "probes.frameworks.crewai.adapter:CrewAIAdapter"
PACKAGES = ("crewai", "pydantic")
# what the paper's cells need: the human-feedback pause's cells on the default flow, the counter flow's own
PAPER_PROTOCOLS = ["baseline", "parkkill", "stray", "answers", "race", "fork", *PROTOCOLS]
# the paper's campaign answered the pause twice and raced two processes in three repetitions
PAPER_BOUNDS = {"protocols": PAPER_PROTOCOLS, "answers_n": [2], "race_k": [2], "race_max_trials": 3}

CAMPAIGN = kit_campaign(
    "crewai_kit", "CrewAI 1.15.2 Flows: a human-feedback pause persisted in SQLite under the conformance kit",
    ADAPTER, packages=PACKAGES, protocols=PROTOCOLS,
    description="@human_feedback pause; @persist(SQLiteFlowPersistence); CheckpointConfig files; all kit protocols "
                "and the paper's counter flow.")

PAPER_CAMPAIGN = kit_campaign(
    "crewai", "CrewAI 1.15.2 Flows: @persist, CheckpointConfig, human-feedback pause", ADAPTER,
    packages=PACKAGES, protocols=PROTOCOLS, in_default_run=True,
    defaults=PAPER_BOUNDS, quick=PAPER_BOUNDS,
    description="The paper's campaign through the kit: its counter flow (s1 adds 1, s2 adds 10) under @persist, "
                "restored by id after s2 raised once, after a SIGKILL inside s2 and after it completed, and under "
                "CheckpointConfig(on_events=['*']), restored from its most advanced checkpoint after s2 raised "
                "once; a @human_feedback pause persisted in SQLite, answered once from a fresh process, after a "
                "kill while parked, twice by its flow id, after completion, by two processes at once and with "
                "another answer.")
