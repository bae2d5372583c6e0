"""Microsoft Agent Framework 1.23.0 (agent-framework-core): every kit protocol, file checkpoints.

It co-resolves with the paper's pins (it only adds msgspec), so it runs in the main
environment; its fingerprint covers agent-framework-core alone.
"""

from probes.kit.suite import kit_campaign

CAMPAIGN = kit_campaign(
    "maf", "Microsoft Agent Framework 1.23.0: checkpointed workflows under the conformance kit",
    "probes.frameworks.maf.adapter:MafAdapter", packages=("agent-framework-core",),
    description="Executor workflow with a request_info pause; FileCheckpointStorage; all kit protocols.")
