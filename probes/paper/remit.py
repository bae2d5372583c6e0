"""REMIT's published row, from the ``remit`` campaign's receipts (the contract build and the re-implementation).

This was ``probes.studies.remit.campaign``'s own until issue 25 moved it here: the campaign never imports this layer
(measurement does not know which of its cells the paper published)."""

from __future__ import annotations

from typing import Any

from probes.core.checker import Property
from probes.core.receipt import Receipt
from probes.headline import Measured, own_build, recorded_build
from probes.studies.remit.verdicts import CONTRACT, FRAMEWORK, row, saver_only, where_not_conformant


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    ours = [r for r in receipts if any(v.framework == FRAMEWORK for v in r.verdicts)]
    theirs = [r for r in receipts if any(v.framework in (CONTRACT, saver_only(CONTRACT)) for v in r.verdicts)]
    out: dict[str, Any] = {}
    crash = [v for r in ours for v in r.verdicts if v.framework == FRAMEWORK and v.property is Property.EO
             and v.path.startswith("crash:") and v.path.endswith("/ledger") and v.path.split(":")[1][:1] in "ABC"
             and "s1" in (v.evidence.get("effect_counts") or {})]
    if crash:
        by_path = {v.path: v.evidence["effect_counts"]["s1"] for v in crash}
        out["remit.crash_path"] = Measured(
            {"s1_runs": max(by_path.values()), "s1_runs_by_path": dict(sorted(by_path.items()))},
            why="the most s1 ran on any SIGKILL kill point (A inside s2 before its effect, C inside s1 after its "
                "effect) with REMIT's effect ledger, both recovery modes, every backend measured",
            receipts=tuple(sorted({r.probe for r in ours for v in r.verdicts if v in crash})),
            build=own_build("remit_ref", ours))  # the effect ledger is remit_ref's: never the paper's build
    else:
        out["remit.crash_path"] = "no SIGKILL crash probe with REMIT's effect ledger in these receipts"
    out["remit.row"] = remit_row_headline(row(receipts, CONTRACT), row(receipts, FRAMEWORK), theirs, ours)
    return out


def _contract_build(receipts: list[Receipt]) -> str:
    """remit-contract at the version the receipts' manifests record (never this project's code)."""
    build = recorded_build(receipts, "remit-contract", "remit_ref")
    return build if build.startswith("remit-contract ") else "remit-contract (version not recorded in these receipts)"


def remit_row_headline(contract: dict[str, str], reimpl: dict[str, str], theirs: list[Receipt],
                       ours: list[Receipt]) -> Any:
    """``remit.row`` scored on the paper's build (remit-contract) when it was measured, with this
    project's re-implementation beside it (``reimplementation``); on remit_ref alone otherwise,
    whose build then says so (the headline marks it as measured on a re-implementation)."""
    if not contract and not reimpl:
        return "no REMIT verdicts in the receipts"
    scope = ("'EO/PC crash (saver only)' are the wrapper without an effect ledger on the crash path (not part of "
             "the published row; a checkpointer cannot prevent a task's code from re-running)")
    scored = theirs if contract else ours
    where = where_not_conformant(scored, CONTRACT if contract else FRAMEWORK)
    if where:
        scope += f"; where a label other than ✓ comes from: {where}"
    if contract:
        value: dict[str, Any] = dict(contract)
        if reimpl:
            value["reimplementation"] = dict(reimpl)
        return Measured(
            value, why="computed from this checkout's langgraph+remit-contract verdicts (remit-contract, the paper's "
                       "build, through the kit's LangGraph protocols) on every backend measured; 'reimplementation' "
                       "is this project's remit_ref through the same protocols, shown beside it, not scored; " + scope,
            compare_keys=tuple(k for k in ("FD", "CV", "CO", "EO", "PC", "RD") if k in contract),
            receipts=tuple(sorted(r.probe for r in theirs)), build=_contract_build(theirs))
    return Measured(
        reimpl, why="computed from this checkout's langgraph+remit verdicts on every backend measured (remit-contract "
                    "was not run: builds parameter); " + scope,
        compare_keys=tuple(k for k in ("FD", "CV", "CO", "EO", "PC", "RD") if k in reimpl),
        receipts=tuple(sorted(r.probe for r in ours)), build=own_build("remit_ref", ours))
