"""pydantic-graph 1.107.1 under the conformance kit: the paper's campaign and every kit protocol.

One adapter (``probes.frameworks.pydantic_graph.adapter``), two campaigns over it:

* ``pydantic_graph``, the paper's campaign in the default reproduction: the kit's protocols
  the paper's cells need (a crash at every step point, by SIGKILL and by an exception; park-kill,
  stray, race, tamper) and pydantic-graph's own (``probes.frameworks.pydantic_graph.protocols``: a
  claimed pause, an invalid write, the status-reset forgery). Its published value
  (``pydantic_graph.liveness``) is read from its receipts by ``probes.paper.pydantic_graph``.
* ``pydantic_graph_kit``, every kit protocol at the kit's bounds (``./reproduce.sh --all``).

Both join the ``pydantic-graph`` row of the matrix.
"""

from probes.kit.runtime import STEP_POINTS
from probes.kit.suite import kit_campaign
from probes.frameworks.pydantic_graph.protocols import PROTOCOLS

ADAPTER = "probes.frameworks.pydantic_graph.adapter:PydanticGraphAdapter"
PACKAGES = ("pydantic-graph",)
# what the paper's cells need: a crash inside each node, park-kill, stray, race, tamper, and the framework's own
PAPER_PROTOCOLS = ["baseline", "crash", "parkkill", "stray", "race", "tamper", *PROTOCOLS]

CAMPAIGN = kit_campaign(
    "pydantic_graph_kit", "pydantic-graph 1.107.1: FileStatePersistence under the conformance kit",
    ADAPTER, packages=PACKAGES, protocols=PROTOCOLS,
    description="A graph paused at an unanswered node; FileStatePersistence snapshots; all kit protocols.")

PAPER_CAMPAIGN = kit_campaign(
    "pydantic_graph", "pydantic-graph 1.107.1: file persistence after crashes inside nodes", ADAPTER,
    packages=PACKAGES, protocols=PROTOCOLS, in_default_run=True,
    defaults={"protocols": PAPER_PROTOCOLS, "crash_points": list(STEP_POINTS), "race_k": [2]},
    quick={"protocols": PAPER_PROTOCOLS, "crash_points": list(STEP_POINTS)},
    description="The paper's campaign through the kit: a graph paused at an unanswered node in "
                "FileStatePersistence, crashed inside each node (SIGKILL and an exception) and recovered "
                "with iter_from_persistence; then a pause claimed by a process that died, a step writing "
                "a value of the wrong type, and the status-reset forgery. Safety (no effect twice, no "
                "re-entered prefix) and liveness (the run can be driven to its end) are judged apart.")
