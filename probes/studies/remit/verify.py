"""The contract properties of REMIT's decision core, checked on every input of their
finite domains (a proof by enumeration of the shipped Python), and the claim protocol
with z3.

Each check states a property of CONTRACT.md section 2 as the core must deliver it --
never the implementation restated:

* **EO / at-most-once** (``admit_effect``): an effect with any ledger record (done, or
  started and never recorded) is never admitted to fire again; **liveness**: one with
  no record is admitted (a ledger that refuses everything is vacuous).
* **FD / FI** (``resume_intent`` + ``fork_view``): a resume marked as a fork -- by the
  explicit flag, or by its address -- sees none of the answers recorded at the
  checkpoint, so ``interrupt()`` must take the fork's own value; nothing else is
  dropped (the interrupt records stay, order kept). **Stock behaviour** where intent
  says RETRY: the view is exactly what the store returned (byte-identical retries);
  with ``fork_intent`` off every resume is a retry.
* **CO** (``claim_targets``): a resume claims every interrupt it answers (a resume map:
  the ids it names that are pending), and only pending interrupts; a bare resume
  claims the one interrupt still unanswered, none when LangGraph refuses it (more
  than one unanswered), and all when every one is answered (a late resume must lose
  to the one that answered); claims are taken in one global order (sorted: no two
  resumes wait on each other).
* **CO + LV** (``gate_decision``, z3 over its truth table and an atomic-insert store):
  while a claim's owner is alive (or on another host) and its lease unexpired, no
  second resumer consumes or takes over (mutual exclusion); once the holder's answer is
  durable, nobody consumes or takes over, however dead its owner (consume-once: the run
  finishes with ``invoke(None)``); a dead or expired owner that never committed its
  answer never blocks (progress); the insert's winner consumes.
* **CV** (``first_invalid``): a value set with an invalid channel is reported (so
  nothing is written), the report names an invalid channel, and a valid set is let
  through.

Atomicity of ``INSERT``/conditional ``UPDATE`` is the store's guarantee (SQLite,
PostgreSQL), assumed, not proved; the saver's I/O around these functions is exercised
by the stateful model-based test on real stores (``probes/studies/remit/stateful.py``).
"""

from __future__ import annotations

import itertools
from typing import Any

RESUME, INTERRUPT = "__resume__", "__interrupt__"


def _core(core: Any) -> Any:
    if core is None:
        from remit_ref import core as c

        return c
    return core


def finite_contracts(core: Any = None) -> dict[str, Any]:
    """Each property checked on every input of its domain; per property (inputs, failures, first failures)."""
    c = _core(core)
    out: dict[str, Any] = {}

    def run(name: str, cases: list[Any], ok: Any) -> None:
        fails = [repr(x) for x in cases if not ok(x)]
        out[name] = {"inputs": len(cases), "failures": len(fails), "first": fails[:3]}

    records = [None, "pending", "done"]
    run("EO.recorded_never_fires", [r for r in records if r is not None],
        lambda r: c.admit_effect(r) is not c.Admission.FIRE)
    run("EO.in_doubt_is_not_skipped_silently", ["pending"],
        lambda r: c.admit_effect(r) is c.Admission.IN_DOUBT)
    run("LV.unrecorded_fires", [None], lambda r: c.admit_effect(r) is c.Admission.FIRE)

    alphabet = [RESUME, INTERRUPT, "value", "branch:to:n"]
    writes = [[(f"t{i}", ch, i) for i, ch in enumerate(w)] for n in range(4)
              for w in itertools.product(alphabet, repeat=n)]
    wires = list(itertools.product([False, True], [None, "fork", "retry"], [False, True]))

    def view(w: list[Any], addressed: bool, flag: str | None, enabled: bool) -> list[Any]:
        return c.fork_view(w, c.resume_intent(addressed, flag, enabled))

    def fd(x: tuple[list[Any], tuple[bool, str | None, bool]]) -> bool:
        w, (addressed, flag, enabled) = x
        is_fork = enabled and (flag == "fork" or (flag is None and addressed))
        got = view(w, addressed, flag, enabled)
        if not is_fork:
            return got == w  # a retry sees exactly what the store returned (stock)
        others = [x for x in w if x[1] != RESUME]
        return all(x[1] != RESUME for x in got) and got == others  # no recorded answer; nothing else lost

    run("FD.fork_sees_no_recorded_answer.retry_is_stock", [(w, wire) for w in writes for wire in wires], fd)

    universe = ["a", "b", "c"]
    subsets = [list(s) for n in range(4) for s in itertools.combinations(universe, n)]
    cases = [(ids, ans, [i for i in ids if i in open_]) for ids in subsets for ans in [None] + subsets
             for open_ in subsets]

    def co(x: tuple[list[str], list[str] | None, list[str]]) -> bool:
        pending, answered, unanswered = x
        got = c.claim_targets(pending, answered, unanswered)
        if answered is None:  # bare: the one unanswered; refused with several; a late resume claims all
            must = set() if len(unanswered) > 1 else set(unanswered) if unanswered else set(pending)
        else:
            must = set(pending) & set(answered)
        return set(got) == must and got == sorted(got) and len(got) == len(set(got))

    run("CO.claims_every_answered_pending_interrupt", cases, co)

    def cv(x: tuple[tuple[str, ...], tuple[bool, ...]]) -> bool:
        channels, valid = x
        values = {ch: ok for ch, ok in zip(channels, valid)}
        got = c.first_invalid(values, lambda ch, v: None if v else f"{ch} invalid")
        if all(valid):
            return got is None
        return got is not None and values.get(got[0]) is False and isinstance(got[1], str)

    chans = ("a", "b", "c")
    cv_cases = [(chans[:n], v) for n in range(4) for v in itertools.product([True, False], repeat=n)]
    run("CV.invalid_value_is_reported", cv_cases, cv)
    return out


def z3_gate(core: Any = None) -> dict[str, Any]:
    """z3 over the shipped gate_decision's truth table: mutual exclusion, no second consume of a
    committed answer, and no permanent block."""
    import z3

    c = _core(core)
    # The table of the shipped function for a resumer whose insert lost to another owner.
    table = {(alive, expired, answered): c.gate_decision(False, alive, expired, answered)
             for alive in (True, False, None) for expired in (False, True) for answered in (False, True)}
    Alive = z3.Datatype("Alive")
    for name in ("yes", "no", "unknown"):
        Alive.declare(name)
    Alive = Alive.create()
    enc = {True: Alive.yes, False: Alive.no, None: Alive.unknown}
    a = z3.Const("alive", Alive)
    e = z3.Bool("expired")
    d = z3.Bool("answered")

    def decision_is(kind: Any) -> Any:
        return z3.Or([z3.And(a == enc[al], e == ex, d == an) for (al, ex, an), dec in table.items() if dec is kind]
                     or [False])

    taken = z3.Or(decision_is(c.GateDecision.CONSUME), decision_is(c.GateDecision.TAKEOVER))
    s = z3.Solver()
    # mutual exclusion: owner alive (or unknown) and lease not expired => the loser never consumes or takes over
    s.add(z3.Or(a == Alive.yes, a == Alive.unknown), z3.Not(e))
    s.add(taken)
    mutual = str(s.check())
    s1 = z3.Solver()
    # consume-once: the holder's answer is durable => nobody consumes or takes over, dead owner or expired lease
    # alike (the run finishes with invoke(None), which consumes nothing)
    s1.add(d, taken)
    committed = str(s1.check())
    s2 = z3.Solver()
    # progress: owner dead or lease expired, its answer never committed => the loser is not told "conflict"
    s2.add(z3.Or(a == Alive.no, e), z3.Not(d))
    s2.add(decision_is(c.GateDecision.CONFLICT))
    progress = str(s2.check())
    # the winner of the atomic insert always consumes
    winner = all(c.gate_decision(True, al, ex, an) is c.GateDecision.CONSUME
                 for al in (True, False, None) for ex in (False, True) for an in (False, True))
    return {"mutual_exclusion": mutual, "committed_not_taken": committed, "progress": progress,
            "winner_consumes": winner,
            "proved": mutual == "unsat" and committed == "unsat" and progress == "unsat" and winner}
