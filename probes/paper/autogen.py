"""AutoGen's published value: a tampered state is rejected loudly at ``load_state``.

The paper (``autogen.tamper``) reports that a tampered AgentChat state -- a message of a type
AutoGen does not know -- is rejected at ``load_state``, the only framework of the five that
refuses tampered state loudly. Measured through the kit by AutoGen's ``forgeries`` protocol
(``probes.frameworks.autogen.protocols``): nine named forgeries of a saved team state, each loaded
with ``load_state`` alone before the run goes on. Whether a forgery was refused is read from
its verdict (decided from the recorded history by the kit's judge); where it was refused --
at ``load_state`` or in the run after it -- from the probe's observations (``forgeries``).
The claim holds for the unknown-message-type forgeries (``PUBLISHED_EDITS``); every other
forgery the framework accepted is evidence against "refuses tampered state", named in the
contradiction with what the framework did with it.
"""

from __future__ import annotations

from typing import Any, Mapping

from probes.core.checker import Property
from probes.core.receipt import Receipt

HEADLINE = "autogen.tamper"
# The published sentence's tampered state: a message of a type AgentChat does not know, in an
# agent's message buffer and in the team manager's thread.
PUBLISHED_EDITS = ("structural", "team-unknown-thread-type")
STAGES = {"load_state": "at load_state", "run": "in the run after load_state"}


def _forgeries(receipts: list[Receipt]) -> dict[str, list[tuple[str, Any, Mapping[str, Any]]]]:
    """Forgery name -> (probe, CV verdict, what the protocol observed) per repetition."""
    out: dict[str, list[tuple[str, Any, Mapping[str, Any]]]] = {}
    for r in receipts:
        seen = r.observations.get("forgeries") or {}
        for v in r.verdicts:
            name = v.path.removeprefix("tamper:")
            if v.property is Property.CV and v.path.startswith("tamper:") and name in seen:
                out.setdefault(name, []).append((r.probe, v, seen[name]))
    return dict(sorted(out.items()))


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    from probes.headline import Measured

    found = _forgeries(receipts)
    if not any(name in found for name in PUBLISHED_EDITS):
        return {HEADLINE: "no forgery probe in these receipts (run AutoGen's forgeries protocol)"}
    reps = max(len(items) for items in found.values())
    published = [(v, seen) for name in PUBLISHED_EDITS for _, v, seen in found.get(name, [])]
    refused = {name: sorted({str(seen.get("refused_at")) for _, _, seen in items}) for name, items in found.items()
               if all(v.evidence.get("refused") for _, v, _ in items)}
    accepted = [name for name, items in found.items() if any(not v.evidence.get("refused") for _, v, _ in items)]
    value = {"rejected": all(v.evidence.get("refused") and seen.get("refused_at") == "load_state"
                             for v, seen in published),
             "reps": reps, "kinds": len(found), "refused": sorted(refused),
             "accepted_silently": [f"tamper:{name}" for name in accepted]}
    taken = {name: [(probe, v) for probe, v, _ in found[name] if not v.evidence.get("refused")] for name in accepted}
    accepted_probes = sorted({probe for items in taken.values() for probe, _ in items})
    outcomes = {name: sorted({str(v.evidence.get("outcome")) for _, v in items}) for name, items in taken.items()}
    contradiction = (
        f"of {len(found)} kinds of tampered state, {len(accepted)} were loaded by load_state and run on without any "
        f"error in at least one of {reps} repetition(s) ("
        + ", ".join(f"{name} ({' / '.join(o.removeprefix('accepted, ') for o in outcomes[name])})"
                    for name in accepted)
        + f"; {len(accepted_probes)} probe(s)) and {len(refused)} were refused in every repetition: "
        + (", ".join(f"{name} ({' / '.join(STAGES.get(s, s) for s in stages)})" for name, stages in refused.items())
           or "none")) if accepted else ""
    return {HEADLINE: Measured(value, why=_why(value, found, published), compare_keys=("rejected",),
                               receipts=tuple(sorted({p for items in found.values() for p, _, _ in items})),
                               contradicted_by=tuple(value["accepted_silently"]), contradiction=contradiction)}


def _why(value: Mapping[str, Any], found: Mapping[str, list[tuple[str, Any, Mapping[str, Any]]]],
         published: list[tuple[Any, Mapping[str, Any]]]) -> str:
    """The explanation, from the measured verdicts: what the published edits met, and which forgeries
    AgentChat's own models call invalid (the framework's CV row) or type-valid (the undetected-forgery row)."""
    met = sorted({f"{v.evidence.get('error') or 'no error'} {STAGES.get(str(seen.get('refused_at')), 'nowhere')}"
                  for v, seen in published})
    invalid = [name for name, items in found.items() if any(v.evidence.get("invalid_edit") for _, v, _ in items)]
    valid = [name for name in found if name not in invalid]
    return (f"The unknown-message-type forgeries ({', '.join(n for n in PUBLISHED_EDITS if n in found)}) met "
            f"{'; '.join(met)}: rejected {'yes' if value['rejected'] else 'no'}. "
            f"AgentChat's own models reject {len(invalid)} of the {len(found)} forgeries "
            f"({', '.join(invalid) or 'none'}: CV on the framework's row); {len(valid)} are type-valid ({', '.join(valid) or 'none'}: the "
            f"undetected-forgery row).")
