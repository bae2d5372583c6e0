"""Model-based stateful test of the real saver (short profile; the long one runs in the remit campaign)."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes.core.backends import postgres_service
from probes.studies.remit import stateful

CORE_CASES = {"admit_effect:fire", "admit_effect:skip", "gate_decision:consume", "gate_decision:conflict",
              "gate_decision:takeover", "fork_view:fork:dropped", "resume_intent:retry:thread",
              "first_invalid:found", "first_invalid:none"}
ACTIONS = {"Execute", "Interrupt", "Consume", "Fork", "Stray", "CrashRecover"}


def _check(out: dict) -> None:
    assert out["holds"], out["failure"]
    assert out["steps"] > 50 and out["races"] >= 1
    assert ACTIONS <= set(out["model_actions"]), out["model_actions"]
    assert CORE_CASES <= set(out["decision_cases"]), out["decision_cases"]


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_real_saver_follows_the_model(backend: str, tmp_path: Path) -> None:
    _check(stateful.run(backend, "", tmp_path, examples=10, steps=12))


@pytest.mark.slow
def test_real_saver_follows_the_model_postgres(tmp_path: Path) -> None:
    with postgres_service() as service:
        _check(stateful.run("postgres", service.fresh_dsn("stateful"), tmp_path, examples=10, steps=12))


@pytest.mark.parametrize("disabled,prop", [({"fork_intent": False}, "FD"), ({"consume_gate": False}, "CO"),
                                           ({"validator": False}, "CV")])
def test_machine_fails_when_a_mechanism_is_disabled(disabled: dict, prop: str, tmp_path: Path) -> None:
    out = stateful.run("memory", "", tmp_path, examples=10, steps=12, options={"consume_gate": True, **disabled})
    assert not out["holds"] and out["failure"].startswith(prop + ":"), out["failure"]
