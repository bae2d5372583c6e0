"""Agno 3.1.10: every kit protocol, in its own cached side environment.

agno is not in the frozen lock (it would resolve with it unchanged, ../shared/FRAMEWORKS.md),
so rather than grow env/requirements.lock it runs in ``agno-py311-<hash>`` in the user cache
(``probes.core.envs``): ``agno[sqlite]`` (SQLAlchemy and aiosqlite for ``SqliteDb``) and psycopg
as the driver of ``PostgresDb`` on the harness's embedded server. The pinned requirements are
part of this campaign's source hash.

Measured on this machine (2 cores, shared): the environment is 168 MB (a bare venv 26 MB; the
agno package alone 52 MB); importing ``agno.workflow`` and ``agno.db.sqlite`` takes 0.7-1.7 s.
Telemetry is switched off in the adapter (``probes.frameworks.agno.adapter``), which writes nothing
outside the store the harness gives it.
"""

from probes.core.envs import SideEnv
from probes.kit.suite import kit_campaign

ENV = SideEnv("agno", ("agno[sqlite]==3.1.10", "psycopg[binary]==3.3.9"))

CAMPAIGN = kit_campaign(
    "agno", "Agno 3.1.10: user-input workflow steps under the conformance kit",
    "probes.frameworks.agno.adapter:AgnoAdapter", env=ENV,
    description="Two-step Workflow, HumanReview(requires_user_input) on s2, continue_run; SqliteDb and "
                "PostgresDb; telemetry off.")
