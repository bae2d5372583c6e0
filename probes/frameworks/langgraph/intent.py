"""The intent protocol: a resume at an answered pause that declares FORK or RETRY (CONTRACT.md's FI).

Proposition 1 says a resume addressed to an interrupt already answered is ambiguous unless the wire
says what the caller means: a FORK (a new branch with a new answer, FD applies) or a RETRY (the same
answer delivered again, CO applies). Stock LangGraph has no such discriminator; a wrapper may add one
(``remit_ref``: ``configurable["remit_intent"]``; remit-contract: ``configurable["remit_fork"]``).

The protocol answers the pause with the first answer, then sends a declared RETRY of that answer and a
declared FORK with the other answer, both addressed to the pause's checkpoint through the adapter's
``declare(handle, answer, intent)`` (``Capability.INTENT``). The harness writes each resume into the
history as a ``Kind.RESUME`` event with its declared ``mode``, next to what the workflow recorded, and
the kit's judge decides FI (``Judge.intent`` -> ``checker.check_fi``) against the outcome a run answered
the fork's answer in the first place reaches. Path ``second-resume:declared-intent``, as the legacy
REMIT arm named it. Every process of the probe has ``INTENT_ENV`` set, so an adapter whose wrapper keys
intent on a configuration switch (remit-contract's ``fork_on_explicit_checkpoint=False``, the README's
configuration for declared intent) turns it on for this protocol only.
"""

from __future__ import annotations

from typing import Any

from probes.core.checker import Property, Verdict
from probes.core.history import Kind
from probes.kit.adapter import Capability
from probes.kit.protocols import Probe, _isolated, _needs, on_variant

PATH = "second-resume:declared-intent"
INTENT_ENV = "RC_LG_INTENT"  # set ("declared") in every process of the intent protocol
DECLARED = "declared"
NO_INTENT_ON_THE_WIRE = (
    "stock LangGraph carries no fork/retry discriminator: Command(resume=...) has only the value (and an "
    "interrupt-id map), the config only the thread and checkpoint; a resume at an answered interrupt cannot "
    "declare whether it is a FORK or a RETRY (forks are made by update_state or replay: the FD column). "
    "REMIT adds one (configurable['remit_intent'])")


def intent(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Answer the pause, then a declared RETRY of the same answer and a declared FORK with the other one,
    both at the pause's checkpoint: the RETRY must not fire the gated effect again, the FORK must be
    served its own answer's outcome."""
    if why := _needs(p, Capability.PAUSE, Capability.INTENT):
        return [p.judge.not_applicable(Property.FI, PATH, why)]
    q = on_variant(p, INTENT_ENV, DECLARED)
    a, b = q.target.cls.answers
    _, ref = _isolated(q, "reference")
    expected = ref.to_completion(ref.start(), b, "answer").get("outcome")
    run = q.run("run")
    handle = run.start().get("handle")
    statuses: dict[str, Any] = {}
    run.note(Kind.RESUME, value=a, detail={"addressed": True})
    statuses["first"] = run.op("answer", "resume", handle=handle, answer=a)
    for name, value in (("retry", a), ("fork", b)):
        run.note(Kind.RESUME, value=value, detail={"mode": name, "addressed": True})
        statuses[name] = run.op(name, "declare", handle=handle, answer=value, intent=name)
    q.observations["intent"] = {k: {"status": st.get("status"), "outcome": st.get("outcome"),
                                    "error": st.get("error")} for k, st in statuses.items()}
    return [q.judge.intent(PATH, q.read(), expected)]
