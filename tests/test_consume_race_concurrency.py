"""The concurrency protocol (k clients resume the *same* thread's interrupt at a barrier, trial after
trial): its verdict on hand-made histories, its headlines, and a small real run on SQLite showing
that it can fail -- stock duplicates the gated effect -- while both REMIT gates (remit_ref's and the
paper's build, remit-contract 0.1.2) do not."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from probes.studies.consume_race import campaign as cr
from probes.paper import consume_race as cr_paper
from probes.studies.consume_race.verdict import concurrency_verdict
from probes.core.backends import StoreFactory
from probes.core.campaign import ProbeContext
from probes.core.history import Event, History, Kind


def _trial(rep: int, fires: int, k: int = 3) -> History:
    events = [Event(Kind.PAUSE, f"rep{rep}.park")]
    events += [Event(Kind.ANSWER, f"rep{rep}.racer{i}", value=True) for i in range(k)]
    events += [Event(Kind.EFFECT, f"rep{rep}.racer{i}", effect="gate") for i in range(fires)]
    events += [Event(Kind.COMPLETE, f"rep{rep}.racer{i}") for i in range(max(fires, 1))]
    return History.of_events(events)


def test_verdict_states_k_of_n_and_the_bound() -> None:
    clean = concurrency_verdict("sqlite", "contract", 3, [_trial(r, 1) for r in range(5)], 0.4345)
    assert clean.label.value == "✓" and clean.framework == "langgraph+remit-contract"
    assert clean.evidence["trials"] == 5 and clean.evidence["duplicate_trials"] == 0
    assert "0 of 5 duplicated" in clean.summary and "< 43.5 %" in clean.summary
    dup = concurrency_verdict("sqlite", "stock", 3, [_trial(0, 1), _trial(1, 2), _trial(2, 3)], None)
    assert dup.label.violates and dup.evidence["duplicate_trials"] == 2
    assert "2 of 3 trials fired the gated effect more than once" in dup.summary
    lost = concurrency_verdict("postgres", "gate", 3, [_trial(0, 1), _trial(1, 0)], None)
    # a trial that never fired the gate is no CO violation (one judge); it is counted and said
    assert not lost.label.violates and lost.evidence["unfired_trials"] == 1 and lost.evidence["duplicate_trials"] == 0
    assert "1 of 2 never fired it (a skipped or lost answer: EO/LV, not CO)" in lost.summary


def _cell(arm: str, backend: str, dup: int, n: int, lost: int = 0) -> dict:
    return {"series": "concurrency", "arm": arm, "backend": backend, "k": 4, "reps_measured": n,
            "duplicate_reps": dup, "lost_reps": lost, "duplicate_rep_wilson95": cr.wilson(dup, n),
            "probe": f"concurrency.{backend}.{arm}.k4.j0.g0"}


def test_headlines_score_the_papers_build_and_show_stock() -> None:
    cells = [_cell("stock", "sqlite", 5, 5), _cell("gate", "sqlite", 0, 5), _cell("contract", "sqlite", 0, 5),
             _cell("contract", "postgres", 1, 5, lost=1)]
    out = cr_paper.concurrency_headlines([], cells)
    conc = out["remit.concurrency"]
    assert conc.value["violations"] == 2 and conc.value["trials"] == 10
    assert conc.value["reimplementation"]["violations"] == 0 and conc.value["stock"]["violations"] == 5
    assert conc.build.startswith("remit-contract")
    stock = out["remit.stock_duplicates"].value
    assert stock["stock_duplicates"] is True and stock["duplicate_trials"] == 5
    clean = cr_paper.concurrency_headlines([], [_cell("stock", "sqlite", 0, 5), _cell("gate", "sqlite", 0, 5)])
    assert clean["remit.stock_duplicates"].value["stock_duplicates"] is False
    assert "remit_ref" in clean["remit.concurrency"].build  # without the contract arm: this project's build
    assert isinstance(cr_paper.concurrency_headlines([], [])["remit.concurrency"], str)


def test_trials_parameter_is_range_checked() -> None:
    param = next(p for p in cr.PARAMS if p.name == "concurrency_trials")
    with pytest.raises(Exception):
        param.validate(0)
    assert param.validate(3) == 3


@pytest.fixture
def _pools():
    yield
    cr.close_pools()


def test_small_real_run_stock_duplicates_gates_do_not(tmp_path: Path, outside_basetemp: Path, _pools) -> None:
    """Barrier-released clients: 4 trials per arm on SQLite. Stock duplicated in every trial of every
    measured run so far (5 of 5, 20 of 20 on this machine), so one duplicate in 4 trials is the sound
    claim; a gate never duplicates and never loses the answer."""
    params = {p.name: p.quick for p in cr.PARAMS}
    params.update(backends=["sqlite"], concurrency_trials=4, k=[3], dose_jitter_ms=[], dose_gate_ms=[])
    specs = [s for s in cr.plan(params) if s.args["series"] == "concurrency"]
    assert {s.args["arm"] for s in specs} == {"stock", "gate", "contract"}
    got = {}
    with contextlib.ExitStack() as stack:
        stores = StoreFactory(outside_basetemp / "stores", stack)
        for s in specs:
            work = tmp_path / s.id
            work.mkdir()
            res = cr.run_probe(s, ProbeContext(work, stores, 0, params))
            assert res.harness_errors == [], res.harness_errors
            assert len(res.observations["reps"]) == 4  # every trial recorded
            got[s.args["arm"]] = res
    stock = got["stock"].observations["summary"]
    assert stock["duplicate_reps"] >= 1
    assert got["stock"].verdicts[0].label.violates
    for arm in ("gate", "contract"):
        summary = got[arm].observations["summary"]
        assert summary["distribution"] == {"1": 4}, (arm, summary)
        [v] = got[arm].verdicts
        assert v.label.value == "✓" and v.evidence["duplicate_rate_wilson95_upper"] is not None
    assert "remit._core.RemitConsumeConflict" in got["contract"].observations["summary"]["errors_raised"]
