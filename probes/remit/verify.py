"""Symbolic and exhaustive checks of the decision core's contracts.

What is *proved* and what is only *tested* (stated again in the receipts):

* Finite-domain decisions (``admit_effect``, ``resume_intent``, ``gate_decision``,
  ``persist_decision``, ``claim_targets`` over a 3-id universe, ``fork_view`` over
  every write list of length <= 3 on a 4-channel alphabet) are checked on **every**
  input of their (finite) domain by running the shipped Python functions: for those
  domains this is a proof by enumeration of the Python code itself.
* ``recovery_decision`` takes logs of unbounded length and unbounded indices. z3
  proves its contracts (resume point above every durable record -- PC; exactly one
  past the frontier -- no durable task skipped; a function of the valid records only
  -- RD) for an SMT *encoding* of it over every log of length <= ``max_len`` with
  unbounded integer indices. That the Python equals the encoding is checked by
  enumeration over every log of length <= 3 with indices 1..3 (tested, not proved,
  beyond that domain).
* The claim protocol: z3 proves, over the truth table taken from the shipped
  ``gate_decision`` and an atomic-insert store, that while a claim's owner is alive
  and its lease unexpired no second resumer consumes (mutual exclusion), and that a
  dead or expired owner never blocks progress (some resumer can take over).
  Atomicity of ``INSERT``/conditional ``UPDATE`` is the store's guarantee (SQLite,
  PostgreSQL), assumed, not proved.
"""

from __future__ import annotations

import itertools
from typing import Any


def _core(core: Any) -> Any:
    if core is None:
        from remit_ref import core as c

        return c
    return core


def finite_contracts(core: Any = None) -> dict[str, Any]:
    """Each contract checked on every input; returns per-contract (inputs, failures)."""
    c = _core(core)
    out: dict[str, Any] = {}

    def run(name: str, cases: list[Any], ok: Any) -> None:
        fails = [repr(x) for x in cases if not ok(x)]
        out[name] = {"inputs": len(cases), "failures": len(fails), "first": fails[:3]}

    run("admit_effect", [None, "pending", "done"], lambda r: c.admit_effect(r) == {
        None: c.Admission.FIRE, "pending": c.Admission.IN_DOUBT, "done": c.Admission.SKIP}[r])
    intents = list(itertools.product([False, True], [None, "fork", "retry"], [False, True]))

    def intent_ok(x: tuple[bool, str | None, bool]) -> bool:
        addressed, flag, enabled = x
        want = "retry" if not enabled else (flag if flag else ("fork" if addressed else "retry"))
        return c.resume_intent(addressed, flag, enabled).value == want
    run("resume_intent", intents, intent_ok)

    gates = list(itertools.product([False, True], [None, "me", "other"], [True, False, None], [False, True]))

    def gate_ok(x: tuple[bool, str | None, bool | None, bool]) -> bool:
        inserted, owner, alive, expired = x
        got = c.gate_decision(inserted, owner, "me", alive, expired)
        if inserted or owner == "me":
            return got is c.GateDecision.CONSUME
        if alive is False or expired:
            return got is c.GateDecision.TAKEOVER
        return got is c.GateDecision.CONFLICT
    run("gate_decision", gates, gate_ok)
    run("persist_decision", [None, "bad"], lambda r: c.persist_decision(r) is (r is None))

    universe = ["a", "b", "c"]
    subsets = [list(s) for n in range(4) for s in itertools.combinations(universe, n)]
    claims = [(ids, ans) for ids in subsets for ans in [None] + subsets]
    run("claim_targets", claims, lambda x: c.claim_targets(x[0], x[1]) == sorted(
        set(x[0]) if x[1] is None else set(x[0]) & set(x[1])))

    alphabet = ["__resume__", "__interrupt__", "value", "branch:to:n"]
    writes = [[(f"t{i}", ch, i) for i, ch in enumerate(w)] for n in range(4)
              for w in itertools.product(alphabet, repeat=n)]
    fork_cases = [(w, i) for w in writes for i in (c.Intent.FORK, c.Intent.RETRY)]
    run("fork_view", fork_cases, lambda x: c.fork_view(x[0], x[1]) == (
        list(x[0]) if x[1] is c.Intent.RETRY else [w for w in x[0] if w[1] != "__resume__"]))

    logs = [list(l) for n in range(4) for l in itertools.product(
        [(i, v) for i in (1, 2, 3) for v in (True, False)], repeat=n)]
    run("recovery_decision_vs_encoding", logs,
        lambda l: c.recovery_decision(l) == 1 + max([i for i, v in l if v], default=0))
    return out


def z3_recovery(max_len: int = 8) -> dict[str, Any]:
    """z3: the recovery encoding's contracts for every log of length <= max_len, unbounded indices."""
    import z3

    results = {}
    for n in range(max_len + 1):
        idx = [z3.Int(f"i{k}") for k in range(n)]
        ok = [z3.Bool(f"v{k}") for k in range(n)]
        frontier = z3.IntVal(0)
        for k in range(n):
            frontier = z3.If(z3.And(ok[k], idx[k] > frontier), idx[k], frontier)
        decision = frontier + 1
        pos = [i >= 1 for i in idx]
        pc = z3.And([z3.Implies(ok[k], idx[k] < decision) for k in range(n)])
        tight = z3.Or(decision == 1, z3.Or([z3.And(ok[k], idx[k] == decision - 1) for k in range(n)]) if n else False)
        # RD: the decision ignores invalid records: flipping their indices cannot change it
        idx2 = [z3.Int(f"j{k}") for k in range(n)]
        frontier2 = z3.IntVal(0)
        for k in range(n):
            frontier2 = z3.If(z3.And(ok[k], idx2[k] > frontier2), idx2[k], frontier2)
        same_valid = z3.And([z3.Implies(ok[k], idx[k] == idx2[k]) for k in range(n)])
        rd = z3.Implies(same_valid, frontier2 + 1 == decision)
        s = z3.Solver()
        s.add(z3.And(pos + [i >= 1 for i in idx2]))
        s.add(z3.Not(z3.And(pc, tight, rd, decision >= 1)))
        results[n] = str(s.check())  # "unsat" = no counterexample = proved for length n
    return {"max_len": max_len, "per_length": results, "proved": all(v == "unsat" for v in results.values())}


def z3_gate(core: Any = None) -> dict[str, Any]:
    """z3 over the shipped gate_decision's truth table: mutual exclusion and no permanent block."""
    import z3

    c = _core(core)
    # The table of the shipped function for a resumer whose insert lost to another owner.
    table = {(alive, expired): c.gate_decision(False, "other", "me", alive, expired)
             for alive in (True, False, None) for expired in (False, True)}
    Alive = z3.Datatype("Alive")
    for name in ("yes", "no", "unknown"):
        Alive.declare(name)
    Alive = Alive.create()
    enc = {True: Alive.yes, False: Alive.no, None: Alive.unknown}
    a = z3.Const("alive", Alive)
    e = z3.Bool("expired")

    def decision_is(kind: Any) -> Any:
        return z3.Or([z3.And(a == enc[al], e == ex) for (al, ex), d in table.items() if d is kind] or [False])

    s = z3.Solver()
    # mutual exclusion: owner alive (or unknown) and lease not expired => the loser never consumes or takes over
    s.add(z3.Or(a == Alive.yes, a == Alive.unknown), z3.Not(e))
    s.add(z3.Or(decision_is(c.GateDecision.CONSUME), decision_is(c.GateDecision.TAKEOVER)))
    mutual = str(s.check())
    s2 = z3.Solver()
    # progress: owner dead or lease expired => the loser is not told "conflict"
    s2.add(z3.Or(a == Alive.no, e))
    s2.add(decision_is(c.GateDecision.CONFLICT))
    progress = str(s2.check())
    # the winner of the atomic insert always consumes
    winner = all(c.gate_decision(True, o, "me", al, ex) is c.GateDecision.CONSUME
                 for o in (None, "me", "other") for al in (True, False, None) for ex in (False, True))
    return {"mutual_exclusion": mutual, "progress": progress, "winner_consumes": winner,
            "proved": mutual == "unsat" and progress == "unsat" and winner}
