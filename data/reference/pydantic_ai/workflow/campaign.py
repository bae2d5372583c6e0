"""pydantic-ai 2.68.0 durable execution (``DBOSDurability``, dbos 3.4.0): every kit protocol, side environment.

The successor of the pydantic-graph campaign (pydantic-graph 2.x has no state persistence). It runs
in ``pydantic-ai-py311-<hash>`` in the user cache (``probes.core.envs``): pydantic-ai-slim 2.68 requires
pydantic-graph==2.68.0, while the frozen lock has pydantic-graph 1.107.1 (the paper's pin); and the
lock's dbos is 2.27.0, where this campaign measures DBOS 3.4.0 (the ``[dbos]`` extra accepts >= 2.10).
Both releases are pinned below (the citations were read in them); the pinned requirements are part
of this campaign's source hash.

Measured on this machine (2 cores, shared; load 8-9 while measuring):

* install: 29 distributions, 125 MB on disk (SQLAlchemy 29 MB, pydantic-ai 23 MB, pip 17 MB,
  psycopg-binary 9 MB), 32 s from the local package index;
* import of ``dbos``, ``pydantic_ai``, ``pydantic_ai.durable_exec.dbos`` and the function model:
  3.8-5.0 s (about half each), paid by every operation's process;
* writes outside the run's directory: none. ``strace`` of a start and an answer saw the system
  database and its journal written, nothing else of the framework's; ``HOME`` and ``TMPDIR`` (pointed
  into the run by the adapter) stay empty. croniter, a DBOS dependency, runs ``file -b`` on the
  interpreter at import (``platform.architecture``); no process opened a network connection;
* telemetry: DBOS's OTLP export is off (``enable_otlp: False``, no endpoint, no Conductor key);
  pydantic-ai's instrumentation is off unless configured (``logfire-api`` without ``logfire`` is a no-op).

DBOS's JSON serializer (``DBOSPortableJSONSerializer``, what ``probes/frameworks/dbos`` uses) cannot be used:
the first model step raises ``TypeError: Object of type ModelResponse is not portable JSON
serializable``; values stay pickled. The first launch on a fresh SQLite file runs DBOS's schema
migrations. PostgreSQL is the harness's embedded server (``ctx.stores``), driven by psycopg (a
dependency of dbos).
"""

from probes.core.envs import SideEnv
from probes.kit.suite import kit_campaign

ENV = SideEnv("pydantic-ai", ("pydantic-ai-slim[dbos]==2.68.0", "dbos==3.4.0"))

CAMPAIGN = kit_campaign(
    "pydantic_ai", "pydantic-ai 2.68.0 durable execution: deferred-tool approvals in a DBOS workflow under the "
    "conformance kit", "probes.frameworks.pydantic_ai.adapter:PydanticAIAdapter", env=ENV,
    description="Scripted model; a requires_approval tool; DBOSDurability inside a DBOS workflow parked in "
                "recv; DBOS 3.4 on SQLite and PostgreSQL system databases; all kit protocols.")
