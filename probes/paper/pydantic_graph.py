"""pydantic-graph's published value: a crash inside a node leaves state that is never resumed.

The paper (``pydantic_graph.liveness``) reports that after a crash in the middle of a node,
``iter_from_persistence`` refuses the snapshot the crash left running, so the run never
completes (LV violated) while no effect fires twice (safety holds). Measured through the
kit: every path of the crash protocol is a crash inside a node (``s1.*`` in the first
node, ``s2.begin`` in the asking node, ``s2.consumed`` and ``s2.effect`` in the answered
one), by SIGKILL and by an exception, each recovered by ``iter_from_persistence``.
"""

from __future__ import annotations

from typing import Any

from probes.core.checker import Property, collapse
from probes.core.receipt import Receipt

HEADLINE = "pydantic_graph.liveness"


def _crash_verdicts(receipts: list[Receipt], *props: Property) -> list[Any]:
    return [v for r in receipts for v in r.verdicts if v.path.startswith("crash:") and v.property in props]


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    from probes.headline import Measured

    lv = _crash_verdicts(receipts, Property.LV)
    if not lv:
        return {HEADLINE: "no crash probe in these receipts (run the kit's crash protocol)"}
    safety = _crash_verdicts(receipts, Property.EO, Property.PC)
    worst_safety = collapse(v.label for v in safety)
    counts = [n for v in safety if v.property is Property.EO for n in (v.evidence.get("effect_counts") or {}).values()]
    value = {"LV": collapse(v.label for v in lv).value,
             "safety": worst_safety.value if worst_safety else "not measured",
             "effect_fired_twice": any(n > 1 for n in counts) if counts else None,
             "restore_refused": all("refuse" in (v.evidence.get("stopped_by") or ()) for v in lv),
             "completed": any(bool(v.evidence.get("completed")) for v in lv),
             "mid_node_crash_probes": len(lv)}
    return {HEADLINE: Measured(value, why=_why(value, lv, safety), compare_keys=("LV", "safety"),
                               receipts=tuple(sorted({r.probe for r in receipts if any(
                                   v.path.startswith("crash:") for v in r.verdicts)})))}


def _why(value: dict[str, Any], lv: list[Any], safety: list[Any]) -> str:
    """The explanation, from the measured verdicts: the documentation the LV label rests on, the
    paths that never completed and their effect counts."""
    docs = sorted({f"{v.doc.source} ({'documents the deviation' if v.doc.stance == 'deviation' else 'claims'})"
                   for v in lv if v.doc is not None})
    why = f"LV {value['LV']} rests on {', '.join(docs)} in ../shared/DOCS.md. " if docs else ""
    unfinished = sorted({v.path for v in lv if v.evidence.get("completed") is False})
    if unfinished:
        counts = sorted({str(v.evidence.get("effect_counts")) for v in safety
                         if v.property is Property.EO and v.path in unfinished})
        why += (f"{len(unfinished)} of {len(lv)} crash paths never completed (LV {value['LV']}) with effect counts "
                f"{', '.join(counts)}; safety (EO at most once, PC) {value['safety']}"
                + (": the non-completion is a liveness failure only" if value["safety"] == "✓" else ""))
    return why
