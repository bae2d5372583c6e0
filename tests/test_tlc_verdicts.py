"""Every TLC outcome of a verdict-bearing run lands in a verdict or a harness error.

Real TLC on a four-state toy module (tests/fixtures/tla/Toy.tla) whose switches
produce each outcome: all invariants hold, a contract invariant violated, a deadlock,
a liveness violation, TypeOK violated, a configuration error. Nothing may vanish.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from probes.tla.campaign import reference_verdicts
from probes.tla.configs import TlcConfig
from probes.tla.runner import run_many

TOY = Path(__file__).parent / "fixtures" / "tla"
INVARIANTS = ("TypeOK", "PC", "EO", "FD", "CV", "CO", "RD", "FI")


def _cfg(name: str, stop: bool = False, break_pc: bool = False, break_type: bool = False,
         invariants: tuple[str, ...] = INVARIANTS, properties: tuple[str, ...] = (), deadlock: bool = True) -> TlcConfig:
    return TlcConfig(name, "Toy", (("Stop", stop), ("BreakPC", break_pc), ("BreakType", break_type)),
                     invariants, properties, check_deadlock=deadlock)


@pytest.fixture(scope="module")
def outcomes() -> dict[str, tuple]:
    cfgs = [_cfg("holds", properties=("EventuallyCompletes",)),
            _cfg("pc", break_pc=True),
            _cfg("deadlock", stop=True),
            _cfg("liveness", stop=True, properties=("EventuallyCompletes",), deadlock=False),
            _cfg("typeok", break_type=True),
            _cfg("error", invariants=("NoSuchInvariant",))]
    results = run_many(cfgs, parallel=2, tla_dir=TOY)
    return {c.name: (c, r) for c, r in zip(cfgs, results)}


def _labels(verdicts: list) -> dict[str, str]:
    return {v.property.value: v.label.value for v in verdicts}


def test_holds_gives_a_pass_for_every_checked_property(outcomes: dict) -> None:
    cfg, res = outcomes["holds"]
    assert res.result == "holds"
    verdicts, errors = reference_verdicts(cfg, res, "p", True)
    assert not errors
    assert _labels(verdicts) == {p: "✓" for p in ("PC", "EO", "FD", "CV", "CO", "RD", "FI", "LV")}


def test_violated_invariant_is_a_fail_and_names_what_was_not_established(outcomes: dict) -> None:
    cfg, res = outcomes["pc"]
    assert (res.result, res.violated) == ("violated", "PC")
    verdicts, errors = reference_verdicts(cfg, res, "p", True)
    assert not errors and _labels(verdicts) == {"PC": "U"}
    assert verdicts[0].evidence["not_established"] == ["EO", "FD", "CV", "CO", "RD", "FI"]


def test_deadlock_is_a_liveness_violation(outcomes: dict) -> None:
    cfg, res = outcomes["deadlock"]
    assert res.result == "deadlock" and res.exit_code == 11
    verdicts, errors = reference_verdicts(cfg, res, "p", True)
    assert not errors and _labels(verdicts) == {"LV": "U"}
    assert "deadlock" in verdicts[0].summary


def test_temporal_violation_is_a_liveness_violation(outcomes: dict) -> None:
    cfg, res = outcomes["liveness"]
    assert res.result == "violated" and res.exit_code == 13
    verdicts, errors = reference_verdicts(cfg, res, "p", True)
    assert not errors and _labels(verdicts) == {"LV": "U"}


def test_typeok_violation_is_a_harness_error_not_a_label(outcomes: dict) -> None:
    cfg, res = outcomes["typeok"]
    assert (res.result, res.violated) == ("violated", "TypeOK")
    verdicts, errors = reference_verdicts(cfg, res, "p", True)
    assert verdicts == [] and len(errors) == 1 and "TypeOK" in errors[0] and "no contract property" in errors[0]


def test_tlc_error_is_a_harness_error(outcomes: dict) -> None:
    cfg, res = outcomes["error"]
    assert res.result == "error" and res.exit_code == 151
    verdicts, errors = reference_verdicts(cfg, res, "p", True)
    assert verdicts == [] and len(errors) == 1 and "NoSuchInvariant" in errors[0]
