"""LangGraph 1.2.9's stock savers under the conformance kit (beyond the paper's LangGraph campaign).

The same pause answered N times in a row and by k processes at once, crashes at every
step point, park-kill, stray, fork and kills inside the savers' own ``put``, on SQLite
and PostgreSQL; the same protocols on the workflow written in the functional API, and a fork
addressed by a resume map, an ``update_state`` fork and a replay (``probes.langgraph_kit.protocols``). Its verdicts join the ``langgraph`` row of the matrix.
"""

import dataclasses
from typing import Any, Mapping

from probes.kit.suite import PROTOCOL_NAMES, kit_campaign
from probes.langgraph_kit.protocols import PROTOCOLS, plan

NAMES = PROTOCOL_NAMES + tuple(PROTOCOLS)


def _plan(params: Mapping[str, Any]) -> list[Any]:
    return plan(params, NAMES)


CAMPAIGN = dataclasses.replace(kit_campaign(
    "langgraph_kit", "LangGraph 1.2.9: the stock SQLite and PostgreSQL savers under the conformance kit",
    "probes.langgraph_kit.adapter:StockSaverAdapter",
    packages=("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres"),
    protocols=PROTOCOLS,
    description="Two-node StateGraph with interrupt() in s2, and the same workflow in the functional API; stock "
                "savers; all kit protocols but tamper, and LangGraph's other ways of answering an answered pause."),
    plan=_plan)
