"""REMIT's cross-process race on long-lived racers: one gated effect, the rest ConsumeConflict,
in fresh trials until the cell is decided (``probes.studies.remit.race``)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from probes.core.backends import StoreFactory
from probes.core.campaign import ProbeContext, ProbeSpec
from probes.core.history import History, Kind
from probes.core.race import RaceRule
from probes.studies.remit import race_worker
from probes.studies.remit.campaign import probe_race


@pytest.fixture(autouse=True, scope="module")
def _stop_racers():
    yield
    race_worker.close_pool()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_race_reuses_workers_and_keeps_the_verdict(tmp_path: Path, outside_basetemp: Path, backend: str) -> None:
    rule = RaceRule(min_trials=2, max_trials=2).to_json()  # two trials: undecided (0 of 2 is no 10 % bound)
    with contextlib.ExitStack() as stack:
        stores = StoreFactory(outside_basetemp / "stores", stack)
        results = []
        for i, k in enumerate((3, 2, 3)):
            work = tmp_path / f"p{i}"
            work.mkdir()
            results.append(probe_race(ProbeSpec(f"co.race.k{k}.{backend}", {"kind": "race", "backend": backend,
                                                                              "k": k, **rule}),
                                      ProbeContext(work, stores, 0, {})))
    for res, k in zip(results, (3, 2, 3)):
        assert res.harness_errors == []
        trials = res.observations["race"]["trials"]
        assert [t["trial"] for t in trials] == [1, 2] and res.metrics["trials"] == 2
        for t in trials:  # each trial: k answers, one gated effect, every racer completed or told ConsumeConflict
            h = History.from_json(t["history"])
            assert len(h.of(Kind.ANSWER)) == k and h.effect_counts() == {"gate": 1}
            # A racer the scheduler starts only after the winner has finished reads the finished run (its answer,
            # the same) and completes without firing: 1 to k completions, the rest ConsumeConflict, none lost.
            completed = [e.value for e in h.of(Kind.COMPLETE)]
            assert completed and set(completed) == {"completed"}
            assert {e.value for e in h.of(Kind.REFUSE)} <= {"ConsumeConflict"}
            assert len(completed) + len(h.of(Kind.REFUSE)) == k
        co, lv = res.verdicts  # CO (one fire) and LV (the run completed once, every other racer told)
        assert (co.property.value, lv.property.value) == ("CO", "LV")
        for v in (co, lv):
            assert v.label.value == "?" and v.evidence["race_decision"] == "undecided"
            assert v.evidence["racers"] == k and v.evidence["trials"] == 2 and v.evidence["gate_fires_by_trial"] == [1, 1]
    # Six trials, three racer processes and one parker started in all: the pools were reused.
    assert race_worker._POOL is not None and race_worker._POOL.spawned == 3
    assert race_worker._PARKER is not None and race_worker._PARKER.spawned == 1
