"""Google ADK 2.13.0: every kit protocol, in its own cached side environment.

google-adk 2.13 needs websockets < 16, which conflicts with the frozen lock, so it runs
in ``google-adk-py311-<hash>`` in the user cache (``probes.core.envs``). Its PostgreSQL
session store (``DatabaseSessionService``) needs SQLAlchemy's asyncio extra -- ADK's ``[db]``
extra, which would also pull in Spanner's client -- and psycopg as the driver; both are
pinned here. The pinned requirements are part of this campaign's source hash.
"""

from probes.core.envs import SideEnv
from probes.kit.suite import kit_campaign

ENV = SideEnv("google-adk", ("google-adk==2.13.0", "sqlalchemy[asyncio]==2.1.9", "psycopg[binary]==3.3.9"))

CAMPAIGN = kit_campaign(
    "google_adk", "Google ADK 2.13.0: request-input workflows under the conformance kit",
    "probes.frameworks.google_adk.adapter:GoogleAdkAdapter", env=ENV,
    description="Graph workflow with RequestInput; resumable app; SQLite and PostgreSQL session services.")
