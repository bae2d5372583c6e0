"""DBOS 2.27.0 under the conformance kit: the paper's engine baseline and every kit protocol.

One adapter (``probes.frameworks.dbos.adapter``: a workflow paused in ``DBOS.recv`` on an SQLite system
database, DBOS's public JSON serializer), two campaigns over it:

* ``dbos``, the paper's campaign in the default reproduction: the kit's protocols the paper's
  cells need -- a SIGKILL at every step point, recovered by the next launch (the paper's kill
  after ``s1``, where ``s1`` is durable and ``recv`` not yet entered, is ``s2.begin``), a kill
  while the worker waits in ``recv`` (park-kill), a stray answer after completion, two client
  processes answering one waiting workflow at once (race, k = 2), the kit's fork -- and DBOS's
  own (``probes.frameworks.dbos.protocols``: ``DBOS.fork_workflow`` from the ``recv`` step, the paper's
  fork). Its published row (``dbos.row``) is read from those receipts by ``probes.paper.dbos``,
  which names the kit path standing for each of the paper's cells. Beside them, the latency
  study (``probes.frameworks.dbos.latency``): answer sent -> gated effect durable, DBOS beside stock
  LangGraph ``SqliteSaver`` (``dbos.latency_ratio``); because it times things, the campaign
  runs alone.
* ``dbos_kit``, every kit protocol and DBOS's fork at the kit's bounds (``./reproduce.sh --all``).

Both join the ``dbos`` row of the matrix.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from probes.core.campaign import Campaign, ProbeSpec
from probes.frameworks.dbos import latency
from probes.frameworks.dbos.protocols import PROTOCOLS
from probes.kit.runtime import STEP_POINTS
from probes.kit.suite import PROTOCOL_NAMES, kit_campaign, kit_plan

ADAPTER = "probes.frameworks.dbos.adapter:DBOSAdapter"
# the latency study's worker runs stock LangGraph beside DBOS: its versions are part of the fingerprint
PAPER_PACKAGES = ("dbos", "langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langchain-core")
# what the paper's cells need (the kills, the stray, the concurrent answers, the forks) and the study
PAPER_PROTOCOLS = ["baseline", "crash", "parkkill", "stray", "race", "fork", *PROTOCOLS, latency.NAME]
# the quick profile leaves the race out: a race cell is decided only after its trial budget (35 trials
# without a violation for a ✓ at the kit's threshold), and a quick race is undecided (?)
QUICK_PROTOCOLS = [p for p in PAPER_PROTOCOLS if p != "race"]

CAMPAIGN = kit_campaign(
    "dbos_kit", "DBOS 2.27.0: a workflow paused in DBOS.recv under the conformance kit", ADAPTER,
    packages=("dbos",), protocols=PROTOCOLS,
    description="DBOS.recv pause on SQLite; JSON serializer; kills inside record_operation_result; all kit "
                "protocols and DBOS's fork_workflow.")


def _paper_campaign() -> Campaign:
    """The paper campaign: the kit over the DBOS adapter with DBOS's fork and the latency study
    (its parameters, its probes planned after the kit's, the seed's meaning), run alone."""
    protocols = {**PROTOCOLS, **latency.STUDY}
    names = PROTOCOL_NAMES + tuple(protocols)
    made = kit_campaign(
        "dbos", "DBOS 2.27.0 engine baseline: durable recv, crash, fork, stray; latency beside LangGraph", ADAPTER,
        packages=PAPER_PACKAGES, protocols=protocols, in_default_run=True,
        defaults={"protocols": PAPER_PROTOCOLS, "crash_points": list(STEP_POINTS), "crash_hows": ["kill"],
                  "race_k": [2]},
        quick={"protocols": QUICK_PROTOCOLS, "crash_points": ["s2.begin", "s2.effect"], "crash_hows": ["kill"]},
        description="The paper's campaign through the kit: a workflow paused in DBOS.recv on an SQLite system "
                    "database, its worker SIGKILLed inside each step and while it waits in recv, recovered by the "
                    "next launch and answered; a stray answer after completion; two clients answering at once; "
                    "the completed workflow forked from its recv step with DBOS.fork_workflow and the fork answered "
                    "with another value. Then the latency study: answer sent -> gated effect durable, DBOS beside "
                    "stock LangGraph SqliteSaver, paired trials interleaved in one process.")

    def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
        study = [latency.plan(params, backend) for backend in params["backends"]]
        return kit_plan(params, tuple(n for n in names if n != latency.NAME)) + [s for specs in study for s in specs]

    params = tuple(dataclasses.replace(p, doc="campaign seed: the latency study's pair order, think times and "
                                              "bootstrap (the conformance protocols use no randomness)")
                   if p.name == "seed" else p for p in made.params) + latency.PARAMS
    return dataclasses.replace(made, params=params, plan=plan,
                               runs_alone="it times DBOS and LangGraph latency, and races answers")


PAPER_CAMPAIGN = _paper_campaign()
