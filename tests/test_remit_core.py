"""The decision core: reference-model conformance, invariants, Hypothesis, contract properties, z3."""

from __future__ import annotations

from probes.studies.remit import model, props, verify


def test_core_conforms_to_reference_model_in_every_reachable_state() -> None:
    b = model.Bounds()
    conf = model.conformance(b, model.core_decisions())
    assert conf["conforms"] and conf["mismatches"] == 0
    assert conf["states"] == model.explore(b, model.REFERENCE)["distinct"]
    space = model.explore(b, model.core_decisions())
    assert space["violations"] == {} and space["stuck_states"] == 0


def test_model_detects_faults() -> None:
    """The invariants are not vacuous: the model's own fault transcriptions violate them."""
    b = model.Bounds()
    replay = model.Decisions(lambda s: 1, lambda s, t: True, lambda s, v: True, lambda s, v, b: b.f(v),
                             lambda s: False, lambda: False)
    fork_ignore = model.Decisions(lambda s: s.F + 1, lambda s, t: True, lambda s, v: True,
                                  lambda s, v, b: b.f(s.consumed), lambda s: False, lambda: False)
    double = model.Decisions(lambda s: s.F + 1, lambda s, t: True, lambda s, v: True, lambda s, v, b: b.f(v),
                             lambda s: True, lambda: False)
    invalid = model.Decisions(lambda s: s.F + 1, lambda s, t: True, lambda s, v: True, lambda s, v, b: b.f(v),
                              lambda s: False, lambda: True)
    assert {"EO", "PC", "CO"} <= set(model.explore(b, replay)["violations"])
    assert set(model.explore(b, fork_ignore)["violations"]) == {"FD"}
    assert set(model.explore(b, double)["violations"]) == {"EO", "CO"}
    assert "CV" in model.explore(b, invalid)["violations"]


def test_hypothesis_interleavings_hold() -> None:
    out = props.run(60, 30)
    assert out["holds"] and out["steps"] > 100
    assert {"Consume", "CrashRecover", "Fork", "Stray"} <= set(out["actions"])


def test_contract_properties_and_z3_gate() -> None:
    fin = verify.finite_contracts()
    assert all(r["failures"] == 0 and r["inputs"] > 0 for r in fin.values()), fin
    assert verify.z3_gate()["proved"]


def test_contract_checks_are_not_vacuous() -> None:
    """Each property check fails for a core that breaks it (a stand-in core, not the shipped one)."""
    from types import SimpleNamespace

    from remit_ref import core

    def broken(**over: object) -> object:
        return SimpleNamespace(**{**{k: getattr(core, k) for k in dir(core) if not k.startswith("_")}, **over})

    cases = {
        "EO.recorded_never_fires": broken(admit_effect=lambda r: core.Admission.FIRE),
        "LV.unrecorded_fires": broken(admit_effect=lambda r: core.Admission.SKIP),
        "FD.fork_sees_no_recorded_answer.retry_is_stock": broken(fork_view=lambda w, i: list(w)),
        "CO.claims_every_answered_pending_interrupt": broken(claim_targets=lambda ids, ans, open_: sorted(ids)[:1]),
        "CV.invalid_value_is_reported": broken(first_invalid=lambda values, check: None),
    }
    for name, c in cases.items():
        assert verify.finite_contracts(c)[name]["failures"] > 0, name
    claims_what_langgraph_refuses = broken(
        claim_targets=lambda ids, ans, open_: sorted(set(ids) & set(ans)) if ans is not None else sorted(ids))
    claims_what_others_answered = broken(  # a bare resume after a partial map would lose to the map's claims
        claim_targets=lambda ids, ans, open_: (sorted(set(ids) & set(ans)) if ans is not None
                                               else [] if len(set(open_)) > 1 else sorted(ids)))
    for wrong in (claims_what_langgraph_refuses, claims_what_others_answered):
        assert verify.finite_contracts(wrong)["CO.claims_every_answered_pending_interrupt"]["failures"] > 0
    assert not verify.z3_gate(broken(gate_decision=lambda i, a, e, d: core.GateDecision.CONSUME))["proved"]
    # the takeover this repairs: a dead owner's claim taken over although its answer was committed
    takes_committed = broken(gate_decision=lambda i, a, e, d: (
        core.GateDecision.CONSUME if i else core.GateDecision.TAKEOVER if a is False or e else core.GateDecision.CONFLICT))
    out = verify.z3_gate(takes_committed)
    assert out["committed_not_taken"] == "sat" and not out["proved"]


def test_gate_decision_never_takes_over_a_committed_answer() -> None:
    """The whole table: the insert's winner consumes; a loser takes over only a claim whose owner died
    (or whose lease expired) *before* its answer was durable; a committed answer is never consumed
    again, whoever holds it (the kit's declared RETRY from a fresh process found this)."""
    from remit_ref import core

    G = core.GateDecision
    for alive in (True, False, None):
        for expired in (False, True):
            for answered in (False, True):
                assert core.gate_decision(True, alive, expired, answered) is G.CONSUME
                lost = core.gate_decision(False, alive, expired, answered)
                if answered:
                    assert lost is G.CONFLICT, (alive, expired)
                elif alive is False or expired:
                    assert lost is G.TAKEOVER, (alive, expired)
                else:
                    assert lost is G.CONFLICT, (alive, expired)
