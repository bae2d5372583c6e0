"""The reference model of CONTRACT.md section 3, explicit-state, in Python -- and the
check that REMIT's decision core takes the model's decision in every reachable state.

State (a tuple, hashable): next task, effect count per task, durable log of
``(idx, valid)`` records, frontier, interrupt pending, value consumed on the primary
branch, ``(value, outcome)`` of every resume at the interrupt checkpoint, crash count,
recovery history ``(durable log seen, decision)``, stray count, re-entered flag.

Actions: execute the next non-gated task (with a valid record, or attempt an invalid
one: refused, nothing changes); emit the interrupt at ``IP``; consume the first resume
value (gated effect once, records ``f(v)``); a further resume at the interrupt
checkpoint (a fork, must observe ``f(v)``); crash and recover; a stray resume on a
completed run. Bounds: ``N, IP, |V|``, resumes, crashes, strays.

Every action asks ``Decisions`` what to do; ``REFERENCE`` answers from the model's own
variables (the TLA+ semantics), ``core_decisions()`` answers through
``remit_ref.core`` from what REMIT sees at run time (the durable log, the ledger
record, the pending writes at the checkpoint, the claim). ``conformance`` walks the
reference state space breadth-first and compares the two answers at every reachable
state and every enabled action; ``explore`` walks the state space the core itself
generates and checks the six invariants in every state.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

INVARIANTS = ("PC", "EO", "FD", "CV", "CO", "RD", "Type")


@dataclass(frozen=True)
class Bounds:
    N: int = 3
    IP: int = 2
    V: tuple[int, ...] = (0, 1)
    max_resumes: int = 2
    max_crashes: int = 1
    max_strays: int = 1

    def f(self, v: int) -> int:
        """The gated task's outcome: injective and not the identity."""
        return 10 + v


class St(NamedTuple):
    nxt: int
    eff: tuple[int, ...]
    log: tuple[tuple[int, bool], ...]
    F: int
    pending: bool
    consumed: int | None
    resumes: tuple[tuple[int, int], ...]
    crashes: int
    rec: tuple[tuple[tuple[tuple[int, bool], ...], int], ...]
    strays: int
    reentered: bool


def init(b: Bounds) -> St:
    return St(1, (0,) * b.N, (), 0, False, None, (), 0, (), 0, False)


@dataclass(frozen=True)
class Decisions:
    """The four decisions (plus validity) an implementation takes; see module doc."""

    recover: Callable[[St], int]                 # next task after a crash
    fire_task: Callable[[St, int], bool]          # does task t's effect fire now
    consume: Callable[[St, int], bool]           # does the first resume consume (gate)
    fork_outcome: Callable[[St, int, Bounds], int]  # outcome a further resume observes
    stray_fires: Callable[[St], bool]            # does a stray resume fire the gated effect
    persist_invalid: Callable[[], bool]          # is an invalid record persisted


REFERENCE = Decisions(
    recover=lambda s: s.F + 1,
    fire_task=lambda s, t: True,
    consume=lambda s, v: True,
    fork_outcome=lambda s, v, b: b.f(v),
    stray_fires=lambda s: False,
    persist_invalid=lambda: False,
)


def core_decisions(core: Any = None) -> Decisions:
    """The same decisions taken by ``remit_ref.core`` from what REMIT observes at run time."""
    if core is None:
        from remit_ref import core as core_module

        core = core_module

    def recorded(s: St, t: int) -> str | None:
        # The ledger records an effect when its task completes: a durable valid record.
        return "done" if any(idx == t and ok for idx, ok in s.log) else None

    def fire_task(s: St, t: int) -> bool:
        return core.admit_effect(recorded(s, t)) is core.Admission.FIRE

    def consume(s: St, v: int) -> bool:
        # First resume: thread-only (RETRY), the interrupt is in the checkpoint, nobody holds a claim.
        intent = core.resume_intent(addressed=False, flag=None, fork_intent=True)
        targets = core.claim_targets(["i"], None, ["i"])
        ok = intent is core.Intent.RETRY and targets == ["i"]
        ok = ok and core.gate_decision(True, None, False, False) is core.GateDecision.CONSUME
        return ok and core.admit_effect(recorded(s, s.nxt)) is core.Admission.FIRE

    def fork_outcome(s: St, v: int, b: Bounds) -> int:
        # A further resume addressed to the interrupt checkpoint; the checkpoint holds the
        # interrupt and the first answer.
        intent = core.resume_intent(addressed=True, flag=None, fork_intent=True)
        writes = [("task", "__interrupt__", "i"), ("task", "__resume__", s.consumed), ("null", "__resume__", s.consumed)]
        view = core.fork_view(writes, intent)
        answers = [w[2] for w in view if w[1] == "__resume__"]
        return b.f(answers[0] if answers else v)

    def stray_fires(s: St) -> bool:
        # A thread-only resume on the completed run: the latest checkpoint has no interrupt,
        # the gated effect's ledger record is done.
        intent = core.resume_intent(addressed=False, flag=None, fork_intent=True)
        targets = core.claim_targets([], None, [])
        if targets:
            return True
        return intent is core.Intent.RETRY and core.admit_effect("done") is core.Admission.FIRE

    # Recovery is LangGraph's (its durable checkpoints), not a REMIT decision: the model's own
    # rule stands in; validity is the saver's refusal, exercised on real stores by probes.studies.remit.stateful.
    return Decisions(
        recover=REFERENCE.recover,
        fire_task=fire_task,
        consume=consume,
        fork_outcome=fork_outcome,
        stray_fires=stray_fires,
        persist_invalid=lambda: core.first_invalid({"items": None}, lambda ch, v: "None" if v is None else None)
        is None,
    )


def successors(s: St, b: Bounds, d: Decisions) -> list[tuple[str, St]]:
    """Every (action label, next state) under decisions ``d``."""
    out: list[tuple[str, St]] = []
    done = s.nxt > b.N
    t = s.nxt
    if not done and t != b.IP and not s.pending:
        eff = list(s.eff)
        if d.fire_task(s, t):
            eff[t - 1] += 1
        re = s.reentered or t <= s.F
        out.append((f"Execute({t})", s._replace(nxt=t + 1, eff=tuple(eff), log=s.log + ((t, True),),
                                               F=max(s.F, t), reentered=re)))
        if d.persist_invalid():
            out.append((f"ExecuteInvalid({t})", s._replace(nxt=t + 1, eff=tuple(eff), log=s.log + ((t, False),),
                                                          reentered=re)))
        # else: the invalid record is refused before persisting -- no state change
    if not done and t == b.IP and not s.pending and s.consumed is None:
        out.append(("Interrupt", s._replace(pending=True)))
    if not done and t == b.IP and not s.pending and s.consumed is not None:
        # re-reached the gate after a recovery that re-entered it: the recorded answer is served
        eff = list(s.eff)
        if d.fire_task(s, t):
            eff[t - 1] += 1
        out.append(("ReGate", s._replace(nxt=t + 1, eff=tuple(eff), log=s.log + ((t, True),), F=max(s.F, t),
                                         reentered=s.reentered or t <= s.F)))
    if s.pending and s.consumed is None and len(s.resumes) < b.max_resumes:
        for v in b.V:
            if d.consume(s, v):
                eff = list(s.eff)
                eff[b.IP - 1] += 1
                out.append((f"Consume({v})", s._replace(pending=False, consumed=v, nxt=b.IP + 1, eff=tuple(eff),
                                                        resumes=s.resumes + ((v, b.f(v)),),
                                                        log=s.log + ((b.IP, True),), F=max(s.F, b.IP))))
    if s.consumed is not None and len(s.resumes) < b.max_resumes:
        for v in b.V:
            out.append((f"Fork({v})", s._replace(resumes=s.resumes + ((v, d.fork_outcome(s, v, b)),))))
    if s.crashes < b.max_crashes:  # a crash may hit a completed run too (it recovers to "done")
        decision = d.recover(s)
        out.append(("CrashRecover", s._replace(nxt=decision, pending=False, crashes=s.crashes + 1,
                                               rec=s.rec + ((s.log, decision),))))
    if done and s.strays < b.max_strays:
        eff = list(s.eff)
        if d.stray_fires(s):
            eff[b.IP - 1] += 1
        out.append(("Stray", s._replace(strays=s.strays + 1, eff=tuple(eff))))
    return out


def check_invariants(s: St, b: Bounds) -> list[str]:
    """The invariants violated in ``s`` (empty: all hold)."""
    bad = []
    if s.reentered:
        bad.append("PC")
    if any(c > 1 for c in s.eff):
        bad.append("EO")
    if any(o != b.f(v) for v, o in s.resumes):
        bad.append("FD")
    if any(not ok for _i, ok in s.log):
        bad.append("CV")
    if s.eff[b.IP - 1] > 1:
        bad.append("CO")
    seen: dict[Any, int] = {}
    for log, decision in s.rec:
        if seen.setdefault(log, decision) != decision:
            bad.append("RD")
            break
    if not (1 <= s.nxt <= b.N + 1 and len(s.eff) == b.N and 0 <= s.F <= b.N):
        bad.append("Type")
    return bad


def explore(b: Bounds, d: Decisions) -> dict[str, Any]:
    """BFS over the states ``d`` generates; invariants in every state; first violation per invariant."""
    start = init(b)
    depth = {start: 0}
    parent: dict[St, tuple[St, str] | None] = {start: None}
    queue = deque([start])
    generated = 1
    violations: dict[str, dict[str, Any]] = {}
    deadlocks = 0
    while queue:
        s = queue.popleft()
        for inv in check_invariants(s, b):
            if inv not in violations:
                trace, cur = [], s
                while parent[cur] is not None:
                    prev, label = parent[cur]  # type: ignore[misc]
                    trace.append(label)
                    cur = prev
                violations[inv] = {"depth": depth[s], "trace": list(reversed(trace))}
        succ = successors(s, b, d)
        generated += len(succ)
        if not succ and s.nxt <= b.N:
            deadlocks += 1
        for label, n in succ:
            if n not in depth:
                depth[n] = depth[s] + 1
                parent[n] = (s, label)
                queue.append(n)
    completed = sum(1 for s in depth if s.nxt > b.N)
    return {"distinct": len(depth), "generated": generated, "depth": max(depth.values()),
            "violations": dict(sorted(violations.items())), "holds": sorted(set(INVARIANTS) - set(violations)),
            "stuck_states": deadlocks, "completed_states": completed}


def conformance(b: Bounds, d: Decisions, reference: Decisions = REFERENCE) -> dict[str, Any]:
    """At every state reachable in the reference model, every decision of ``d`` equals the model's."""
    start = init(b)
    seen = {start}
    queue = deque([start])
    checks = 0
    mismatches: list[dict[str, Any]] = []
    kinds: dict[str, int] = {}

    def compare(kind: str, s: St, ref: Any, got: Any) -> None:
        nonlocal checks
        checks += 1
        kinds[kind] = kinds.get(kind, 0) + 1
        if ref != got and len(mismatches) < 20:
            mismatches.append({"decision": kind, "state": repr(s), "model": repr(ref), "core": repr(got)})
        elif ref != got:
            mismatches.append({"decision": kind})

    while queue:
        s = queue.popleft()
        done = s.nxt > b.N
        if s.crashes < b.max_crashes:
            compare("recovery", s, reference.recover(s), d.recover(s))
        if not done and s.nxt != b.IP and not s.pending:
            compare("effect_admission", s, reference.fire_task(s, s.nxt), d.fire_task(s, s.nxt))
            compare("validity", s, reference.persist_invalid(), d.persist_invalid())
        if s.pending and s.consumed is None:
            for v in b.V:
                compare("gate_claim", s, reference.consume(s, v), d.consume(s, v))
        if s.consumed is not None and len(s.resumes) < b.max_resumes:
            for v in b.V:
                compare("fork_vs_retry", s, reference.fork_outcome(s, v, b), d.fork_outcome(s, v, b))
        if done and s.strays < b.max_strays:
            compare("stray", s, reference.stray_fires(s), d.stray_fires(s))
        for _label, n in successors(s, b, reference):
            if n not in seen:
                seen.add(n)
                queue.append(n)
    n_bad = len(mismatches)
    return {"states": len(seen), "checks": checks, "checks_by_decision": dict(sorted(kinds.items())),
            "mismatches": n_bad, "first_mismatches": mismatches[:5], "conforms": n_bad == 0}
