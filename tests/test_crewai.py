"""CrewAI 1.15.2 probes against the real framework (a subset of the quick profile).

Each probe spawns fresh interpreters that import CrewAI (~3-7 s each), so only the
headline path (@persist restore after an exception) and the concurrent-answer race
run here; the full quick profile runs through ``./reproduce.sh --quick --only crewai``.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from probes.core.backends import StoreFactory
from probes.core.campaign import ProbeContext
from probes.core.errors import UsageError
from probes.core.receipt import Receipt
from probes.crewai.campaign import CAMPAIGN, plan


def _run(probe_id: str, tmp_path: Path) -> tuple[object, dict]:
    params = CAMPAIGN.resolve(quick=True)
    spec = next(s for s in plan(params) if s.id == probe_id)
    with contextlib.ExitStack() as stack:
        ctx = ProbeContext(tmp_path / "work", StoreFactory(tmp_path / "stores", stack), 7, params)
        ctx.workdir.mkdir(parents=True)
        return spec, CAMPAIGN.run_probe(spec, ctx)


def test_plan_rejects_bad_parameters() -> None:
    with pytest.raises(UsageError, match="racers: 1 is out of range"):
        plan(CAMPAIGN.resolve({"racers": 1}, quick=True))
    ids = [s.id for s in plan(CAMPAIGN.resolve(quick=True))]
    assert "persist.exception.rep0" in ids and "checkpoint.exception.rep0" in ids and len(ids) == len(set(ids))
    three = [s.id for s in plan(CAMPAIGN.resolve({"reps": 3}, quick=True)) if s.id.startswith("checkpoint.")]
    assert three == ["checkpoint.exception.rep0", "checkpoint.exception.rep1", "checkpoint.exception.rep2"]


def test_persist_restore_after_exception_reruns_s1(tmp_path: Path) -> None:
    spec, res = _run("persist.exception.rep0", tmp_path)
    assert res.harness_errors == []
    led = res.observations["ledger"]
    rest = res.observations["restore"]
    # The first run persisted the state after s1; the restore ran s1 again.
    assert rest["counter_before"] == 1
    assert led == {"s1": 2, "s2": 1}
    assert rest["counter"] == 12
    labels = {v.property.value: v.label.value for v in res.verdicts}
    # documented: a @persist resume re-runs the @start method (DOCS.md CR-6)
    assert labels["EO"] == "D" and labels["PC"] == "D"
    assert {v.doc.source for v in res.verdicts if v.property.value in ("EO", "PC")} == {"CR-6"}
    assert labels["LV"] == "✓"
    eo = next(v for v in res.verdicts if v.property.value == "EO")
    assert eo.evidence["exactly_once_predicts"] == 11
    # Nothing run-varying (the flow's uuid) leaks into the verdict view.
    assert "-" not in json.dumps([v.evidence for v in res.verdicts]).replace("exactly_once", "")
    receipt = Receipt("crewai", spec.id, spec.args, {"fingerprint": "t"}, res.observations, res.verdicts,
                      res.metrics, res.harness_errors)
    got = CAMPAIGN.headlines([receipt])["crewai.persist_counter"]
    assert got.value["counter"] == 12 and got.value["expected"] == 11


def test_concurrently_loaded_pause_is_answered_by_every_racer(tmp_path: Path) -> None:
    _, res = _run("feedback.concurrent.rep0", tmp_path)
    assert res.harness_errors == []
    answers = res.observations["answers"]
    assert len(answers) == 2 and all(a["loaded"] for a in answers)
    gate = res.observations["ledger"].get("gate", 0)
    co = next(v for v in res.verdicts if v.property.value == "CO")
    # The verdict follows the count, whatever the count is.
    assert (co.label.value == "✓") == (gate <= 1)
    assert gate >= 1
    assert res.observations["ledger"]["s1"] == 1 and res.observations["ledger"]["review"] == 1


def test_checkpointconfig_headline_is_taken_over_every_rep() -> None:
    def rep(i: int, counter: int, s1: int) -> Receipt:
        return Receipt("crewai", f"checkpoint.exception.rep{i}", {}, {"fingerprint": "t"},
                       {"restore": {"counter": counter}, "ledger": {"s1": s1, "s2": 1}}, [], {}, [])

    same = CAMPAIGN.headlines([rep(0, 12, 2), rep(1, 12, 2), rep(2, 12, 2)])["crewai.checkpointconfig"]
    assert same.value == {"counter": 12, "s1_runs": 2, "reps": 3} and "each of 3" in same.why
    assert same.receipts == tuple(f"checkpoint.exception.rep{i}" for i in range(3))
    mixed = CAMPAIGN.headlines([rep(0, 12, 2), rep(1, 11, 1)])["crewai.checkpointconfig"]
    assert mixed.value == {"counter": [11, 12], "s1_runs": [1, 2], "reps": 2}
    assert "counter and s1 runs differ across the 2 reps" in mixed.why
