"""LangGraph 1.2.9's stock savers under the conformance kit: the paper's campaign and every kit protocol.

One adapter (``probes.frameworks.langgraph.adapter``: the kit's workflow as a two-node ``StateGraph`` or in the
functional API, on the stock ``SqliteSaver`` and ``PostgresSaver``; the paper's own workflows for CV,
sequential interrupts and fan-out), two campaigns over it:

* ``langgraph``, the paper's campaign in the default reproduction: the cells its published values read
  (``probes.paper.langgraph``) on both APIs and both savers -- a clean run, a kill while parked at the
  interrupt, crashes at the paper's kill points (inside ``s1`` after its effect, in ``s2`` before it, in
  ``s2`` after it) killed and recovered by ``invoke(None)`` or by sending the input again,
  kills inside the saver's own ``put``, a stray answer after completion, the answered interrupt forked
  every way LangGraph offers, byte-identical copies of a crashed store each recovered (RD), a node
  writing a value its pydantic state model refuses (CV), two interrupts answered in turn across a
  restart and two parallel ones answered by one resume map and then again; three repetitions of each,
  under ``durability="sync"`` as the paper's crash sweep ran (LangGraph's default, ``async``, writes in the
  background while the next step runs: a kill "in the n-th save" then lands at different moments);
* ``langgraph_kit``, every protocol at the kit's bounds (``./reproduce.sh --all``): besides those, the
  same pause answered N times in a row and by k processes at once, tampering, stalls, code changes,
  partitions and every crash point of a traced run, LangGraph's own protocols
  (``probes.frameworks.langgraph.protocols``) included.

Both join the ``langgraph`` row of the matrix.
"""

import dataclasses
from typing import Any, Mapping

from probes.frameworks.langgraph.saver import DURABILITY_ENV
from probes.kit.suite import PROTOCOL_NAMES, kit_campaign
from probes.frameworks.langgraph.protocols import PROTOCOLS, plan

NAMES = PROTOCOL_NAMES + tuple(PROTOCOLS)
ADAPTER = "probes.frameworks.langgraph.adapter:StockSaverAdapter"
PACKAGES = ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres")
# What the paper's values read (probes.paper.langgraph), at the paper's kill points: C (s1.effect), A
# (s2.begin) and the insert-to-persist window (s2.effect); B and K1..K5 (inside the saver's writes) are the
# save-kill protocol's kills at the entry and exit of each put. Three repetitions, as the paper's crash cells.
PAPER_PROTOCOLS = ["baseline", "parkkill", "crash", "savekill", "stray", "fork", "rd", "fork_ways", "functional",
                   "invalid_write", "sequential", "fanout"]
PAPER_BOUNDS = {"protocols": PAPER_PROTOCOLS, "backends": ["sqlite", "postgres"],
                "crash_points": ["s1.effect", "s2.begin", "s2.effect"], "crash_hows": ["kill"],
                "recovery_modes": ["none-input", "resend-input"], "save_points": ["save.enter", "save.exit"],
                "rd_points": ["s2.begin"], "reps": 3}
PAPER_QUICK = {"protocols": PAPER_PROTOCOLS, "backends": ["sqlite"], "crash_points": ["s2.begin"],
               "crash_hows": ["kill"], "recovery_modes": ["none-input", "resend-input"], "save_points": ["save.enter"],
               "savekill_cap": 2}


def _plan(params: Mapping[str, Any]) -> list[Any]:
    return plan(params, NAMES)


CAMPAIGN = dataclasses.replace(kit_campaign(
    "langgraph_kit", "LangGraph 1.2.9: the stock SQLite and PostgreSQL savers under the conformance kit",
    ADAPTER, packages=PACKAGES, protocols=PROTOCOLS,
    description="Two-node StateGraph with interrupt() in s2, and the same workflow in the functional API; stock "
                "savers; all kit protocols but tamper, and LangGraph's other ways of answering an answered pause."),
    plan=_plan)

PAPER_CAMPAIGN = dataclasses.replace(kit_campaign(
    "langgraph", "LangGraph 1.2.9: every property on SqliteSaver and PostgresSaver, graph and functional API",
    ADAPTER, packages=PACKAGES, protocols=PROTOCOLS, in_default_run=True, defaults=PAPER_BOUNDS, quick=PAPER_QUICK,
    environ={DURABILITY_ENV: "sync"},  # as the paper's crash sweep: every step's writes durable before the next
    description="The paper's campaign through the kit: the interrupt answered from a fresh process and after a kill "
                "while parked; crashes in and between the steps, killed and recovered by invoke(None) or by "
                "sending the input again; kills inside the saver's put; a stray answer after completion; the "
                "answered interrupt forked by Command(resume), a resume map, update_state and a replay; on the graph "
                "and the functional API, SqliteSaver and PostgresSaver."),
    plan=_plan)
