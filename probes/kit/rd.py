"""The rd protocol: the same crashed durable state, recovered more than once, must decide the same.

RD (reflexive determinism of recovery, CONTRACT.md) says recovery is a function of durable state.
The protocol makes that testable without reasoning about which writes landed: the run is SIGKILLed
at a step point, then ``copies`` byte-identical copies of its durable state are made (the adapter's
``copy_store``; equal digests checked before anything is recovered) and each copy is recovered by
the adapter's recovery ``mode`` in fresh processes of its own, the pause answered if the recovery
reaches one, so each copy goes as far as it can. Each copy is a run of its own (``copy-<i>``), so
its processes are the incarnations ``copy-<i>/...`` of the probe's one history and ledger: what a
copy decided (the effects it fired, the steps it began, how it ended) is read from there by the
judge (``Judge.same_decision``), and RD holds iff every copy decided the same.

Built on ``probes.kit.protocols``; registered there as ``rd``.
"""

from __future__ import annotations

from typing import Any

from probes.core.checker import Property, Verdict
from probes.core.errors import HarnessError
from probes.kit.adapter import Capability
from probes.kit.protocols import Probe, Run, _needs, crash_at

ORIGINAL = "run"  # the crashed run's name; its copies are ``copy-1`` .. ``copy-<n>``


def rd_path(point: str, mode: str, copies: int) -> str:
    return f"rd:kill@{point}/{mode}/copies={copies}"


def rd(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """SIGKILL at ``point``, copy the crashed state ``copies`` times, recover each copy by ``mode``."""
    point, mode, n = args["point"], args["mode"], int(args["copies"])
    path = rd_path(point, mode, n)
    if n < 2:
        raise HarnessError(f"the rd protocol compares at least two copies, not {n}")
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER, Capability.COPY):
        return [p.judge.not_applicable(Property.RD, path, why)]
    if p.target.backend == "memory":
        return [p.judge.not_applicable(Property.RD, path, "the memory backend keeps nothing durable across a "
                                                          "SIGKILL: there is no crashed store to copy")]
    answer = p.target.cls.answers[0]
    run = p.run(ORIGINAL)
    crash_at(p, run, "kill", point, answer)
    copies = _copies(p, run, n)
    for c in copies:
        status = c.recover("recover", mode, answer, copy=c.name, of=ORIGINAL)
        c.to_completion(status, answer, "recover-answer")
    after = _digest(p, run)
    p.observations["rd"]["original_after"] = after
    if after != p.observations["rd"]["digest"]:
        # Measured, not assumed: the durable state names its own place (CrewAI's checkpoint holds the
        # absolute path of its @persist database), so a byte copy recovered elsewhere writes into the
        # original. Copies that share a store cannot show that recovery is a function of the state.
        return [p.judge.not_applicable(Property.RD, path, (
            f"the crashed original's durable state changed ({p.observations['rd']['digest'][:12]} -> {after[:12]}) "
            "while only its copies were recovered: the state names its own location, so a byte copy recovered "
            "elsewhere reaches the original and the copies are not independent"))]
    what = f"killed at {point}, recovered by {mode}"
    return [p.judge.same_decision(path, p.read(), what, [c.name for c in copies])]


def _digest(p: Probe, run: Run) -> str:
    return p.target.cls(run.workdir, p.target.backend, run.store).store_digest()


def _copies(p: Probe, run: Run, n: int) -> list[Run]:
    """``n`` runs holding byte-identical copies of ``run``'s durable state, each checked against the
    original's digest before any is recovered (a copy that differs is the harness's failure)."""
    source = p.target.cls(run.workdir, p.target.backend, run.store)
    digest = source.store_digest()
    copies: list[Run] = []
    seen: dict[str, str] = {}
    for i in range(1, n + 1):
        c = p.run(f"copy-{i}")
        source.copy_store(c.workdir, c.store)
        seen[c.name] = _digest(p, c)
        copies.append(c)
    p.observations["rd"] = {"digest": digest, "copies": seen, "identical": set(seen.values()) == {digest}}
    if set(seen.values()) != {digest}:
        raise HarnessError(f"the copies of the crashed store are not identical to it: {digest[:12]} copied as "
                           + ", ".join(f"{k} {v[:12]}" for k, v in seen.items()))
    return copies
