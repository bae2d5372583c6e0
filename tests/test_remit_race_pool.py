"""REMIT's cross-process race on long-lived racers: one gated effect, the rest ConsumeConflict."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from probes.core.backends import StoreFactory
from probes.core.campaign import ProbeContext, ProbeSpec
from probes.remit import race_worker
from probes.remit.campaign import probe_race


@pytest.fixture(autouse=True, scope="module")
def _stop_racers():
    yield
    race_worker.close_pool()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_race_reuses_workers_and_keeps_the_verdict(tmp_path: Path, outside_basetemp: Path, backend: str) -> None:
    with contextlib.ExitStack() as stack:
        stores = StoreFactory(outside_basetemp / "stores", stack)
        results = []
        for i, k in enumerate((3, 2, 3)):
            work = tmp_path / f"p{i}"
            work.mkdir()
            results.append(probe_race(ProbeSpec(f"co.race.k{k}.{backend}.rep1", {"kind": "race", "backend": backend,
                                                                                   "k": k}),
                                      ProbeContext(work, stores, 0, {})))
    for res, k in zip(results, (3, 2, 3)):
        assert res.harness_errors == []
        assert res.observations["outcomes"] == {"completed": 1, "conflict": k - 1}
        co, lv = res.verdicts  # CO (one fire) and LV (the run completed once, every other racer told)
        assert (co.property.value, lv.property.value) == ("CO", "LV")
        for v in (co, lv):
            assert v.label.value == "✓" and v.evidence["racers"] == k and v.evidence["lost_answers"] == 0
    # Three cells, three racer processes and one parker started in all: the pools were reused.
    assert race_worker._POOL is not None and race_worker._POOL.spawned == 3
    assert race_worker._PARKER is not None and race_worker._PARKER.spawned == 1
