"""The REMIT arm's LangGraph probes: the paper's LangGraph protocols, planned for a REMIT build.

The paper's LangGraph campaign runs on the conformance kit (``probes.langgraph_kit``); the REMIT
campaign still reruns the legacy probes of that campaign through its two builds (``arm="remit"``:
``remit_ref``; ``arm="remit-contract"``: the paper's build), until REMIT's savers are kit adapters
too (issue 25). ``plan_for(params, arm)`` lists the probes, ``run_probe(spec, ctx)`` runs one with
``probes.langgraph.probes``.
"""

from __future__ import annotations

from typing import Any, Mapping

from probes.core.campaign import ProbeContext, ProbeSpec
from probes.core.receipt import ProbeResult

DURABILITY = ("sync", "async", "exit")


def plan_for(params: Mapping[str, Any], arm: str) -> list[ProbeSpec]:
    """Every probe of the LangGraph protocols for a REMIT build ``arm`` ("remit" or "remit-contract")."""
    specs: list[ProbeSpec] = []

    def add(pid: str, **args: Any) -> None:
        specs.append(ProbeSpec(f"{pid}.{arm}", {"arm": arm, **args}))

    for b in params["backends"]:
        for variant in ("bare", "map", "update_state", "replay"):
            add(f"fd.{variant}.{b}", kind="fd", backend=b, variant=variant)
        add(f"cv.{b}", kind="cv", backend=b)
        add(f"fi.{b}", kind="fi", backend=b)
        add(f"co.stray.inprocess.{b}", kind="co_stray", backend=b, where="inprocess")
        add(f"co.stray.process.{b}", kind="co_stray", backend=b, where="process")
        add(f"co.sequential.{b}", kind="co_sequential", backend=b)
        add(f"co.fanout.{b}", kind="co_fanout", backend=b)
        for api in ("functional", "graph"):
            add(f"eo.interrupt.{api}.{b}", kind="eo_interrupt", backend=b, api=api)
            add(f"parkkill.{api}.{b}", kind="parkkill", backend=b, api=api)
        if b != "memory":
            add(f"ops.{b}", kind="ops", backend=b, durability_modes=list(DURABILITY))
        for point in params["kill_points"]:
            for mode in params["recovery_modes"]:
                add(f"crash.{point}.{mode}.{b}", kind="crash", backend=b, point=point, mode=mode,
                    durability=params["crash_durability"], reps=params["reps"])
        for drop in params["rd_drops"]:
            add(f"rd.{drop}.{b}", kind="rd", backend=b, drop=drop, copies=params["rd_copies"])
    return specs


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Dispatch one probe to its protocol in ``probes.langgraph.probes``."""
    from probes.langgraph.probes import KINDS

    return KINDS[spec.args["kind"]](spec, ctx)
