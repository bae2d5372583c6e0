"""pydantic-ai 2.68.0 durable execution (DBOS 3.4.0): every kit protocol, in its own side environment."""

from probes.core.envs import SideEnv
from probes.kit.suite import kit_campaign

ENV = SideEnv("pydantic-ai", ("pydantic-ai-slim[dbos]==2.68.0", "dbos==3.4.0"))

CAMPAIGN = kit_campaign(
    "pydantic_ai", "pydantic-ai 2.68.0 durable execution: deferred-tool approvals in a DBOS workflow under the "
    "conformance kit", "probes.pydantic_ai.adapter:PydanticAIAdapter", env=ENV,
    description="Scripted model, a requires_approval tool, DBOSDurability in a DBOS workflow parked in recv; "
                "SQLite and PostgreSQL system databases.")
