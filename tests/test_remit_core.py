"""The decision core: reference-model conformance, invariants, Hypothesis, z3, mutants."""

from __future__ import annotations

import pytest

from probes.remit import model, mutants, props, verify


def test_core_conforms_to_reference_model_in_every_reachable_state() -> None:
    b = model.Bounds()
    conf = model.conformance(b, model.core_decisions())
    assert conf["conforms"] and conf["mismatches"] == 0
    assert conf["states"] == model.explore(b, model.REFERENCE)["distinct"]
    assert set(conf["checks_by_decision"]) == {"recovery", "effect_admission", "validity", "gate_claim",
                                               "fork_vs_retry", "stray"}
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


def test_contracts_and_z3() -> None:
    fin = verify.finite_contracts()
    assert all(r["failures"] == 0 and r["inputs"] > 0 for r in fin.values())
    assert verify.z3_recovery(4)["proved"]
    assert verify.z3_gate()["proved"]


@pytest.mark.parametrize("name", ["recovery_restart", "admit_done_fires", "intent_always_retry", "fork_view_identity",
                                  "gate_loser_consumes", "gate_never_takeover", "persist_always", "claim_nothing"])
def test_mutants_are_caught_without_langgraph(name: str) -> None:
    mutant = next(m for m in mutants.MUTANTS if m.name == name)
    with mutants.applied(None) as core:
        base = {"model": mutants.detect_model(core), "contracts": mutants.detect_contracts(core)}
    with mutants.applied(mutant) as core:
        got = {"model": mutants.detect_model(core), "contracts": mutants.detect_contracts(core)}
    assert mutants.kills(base, got)
    from remit_ref import core as restored

    assert getattr(restored, mutant.function).__module__ == "remit_ref.core"  # the mutant was undone
