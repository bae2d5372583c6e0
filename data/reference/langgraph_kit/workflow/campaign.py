"""LangGraph 1.2.9's stock savers under the conformance kit (beyond the paper's LangGraph campaign).

The same pause answered N times in a row and by k processes at once, crashes at every
step point, park-kill, stray, fork and kills inside the savers' own ``put``, on SQLite
and PostgreSQL. Its verdicts join the ``langgraph`` row of the matrix.
"""

from probes.kit.suite import kit_campaign

CAMPAIGN = kit_campaign(
    "langgraph_kit", "LangGraph 1.2.9: the stock SQLite and PostgreSQL savers under the conformance kit",
    "probes.langgraph_kit.adapter:StockSaverAdapter",
    packages=("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres"),
    description="Two-node StateGraph with interrupt() in s2; stock savers; all kit protocols but tamper.")
