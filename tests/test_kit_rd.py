"""The kit's rd protocol: copies of one crashed store, each recovered, must decide the same (RD).

The judge's rule on hand-made histories (holds, violated, the label from the adapter's "RD *"
citation, a replay from what a receipt stores); the generic copy of an SQLite store with its WAL;
then real runs, quick profile: MAF (``file`` backend: its state is a directory the adapter keeps)
and LangGraph's stock SQLite saver (``sqlite``), each copy verified identical by digest before it
is recovered, each recovered by processes of its own, and the receipts re-judged byte for byte.
A copy that is not identical, and an adapter that cannot copy its state, are caught by name.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from probes.core.checker import DocRef, Label, Property
from probes.core.history import Event, History, Kind
from probes.kit.judge import Judge, copy_decisions, replay
from tests.installed import require

CLAIM = DocRef(page="https://example.invalid", quote="recovery replays the recorded steps", stance="claims",
               source="X-30", version="1.0")
PATH = "rd:kill@s2.begin/latest/copies=2"
RESULT = "s2 served 'yes'"


def _h(*events: tuple) -> History:
    """(kind, incarnation, name, value) tuples; an EFFECT's name is the effect, otherwise the step."""
    out = []
    for kind, inc, *rest in events:
        name, value = (rest + [None, None])[:2]
        out.append(Event(kind, inc, effect=name, value=value) if kind is Kind.EFFECT
                   else Event(kind, inc, step=name, value=value))
    return History.of_events(out)


CRASHED = ((Kind.START, "harness"), (Kind.STEP_BEGIN, "run/start", "s1"), (Kind.EFFECT, "run/start", "e1"),
           (Kind.STEP_BEGIN, "run/start", "s2"), (Kind.CRASH, "harness"))


def _recovered(copy: str, *then: tuple) -> tuple[tuple, ...]:
    return ((Kind.RECOVER, "harness"), (Kind.STEP_BEGIN, f"{copy}/recover", "s2"), (Kind.PAUSE, f"{copy}/recover", "s2"),
            (Kind.STEP_BEGIN, f"{copy}/recover-answer", "s2"), *then)


def _done(copy: str) -> tuple[tuple, ...]:
    return _recovered(copy, (Kind.EFFECT, f"{copy}/recover-answer", "e2"),
                      (Kind.COMPLETE, f"{copy}/recover-answer", None, RESULT))


def test_copies_that_decided_alike_hold_rd_and_one_that_differs_violates_it() -> None:
    same = _h(*CRASHED, *_done("copy-1"), *_done("copy-2"))
    v = Judge("fw", "file", {}).same_decision(PATH, same, "killed at s2.begin", ["copy-1", "copy-2"])
    assert (v.property, v.label) == (Property.RD, Label.PASS) and v.evidence["distinct"] == 1
    assert v.evidence["decisions"]["copy-1"] == {"ops": ["recover", "recover-answer"], "steps": ["s2", "s2"],
                                                 "effects": {"e2": 1}, "ended": ["paused", f"completed with {RESULT!r}"]}
    assert v.evidence["witness"] == [] and "the same decision: fired {'e2': 1}" in v.summary
    # the crashed original's own events are not a copy's decision: e1 fired before the crash counts for neither
    # copy-2 re-ran s1 and fired e1 again: a different decision, labelled from the adapter's RD citation
    other = _h(*CRASHED, *_done("copy-1"), (Kind.RECOVER, "harness"), (Kind.STEP_BEGIN, "copy-2/recover", "s1"),
               (Kind.EFFECT, "copy-2/recover", "e1"), (Kind.PAUSE, "copy-2/recover", "s2"),
               (Kind.EFFECT, "copy-2/recover-answer", "e2"), (Kind.COMPLETE, "copy-2/recover-answer", None, RESULT))
    j = Judge("fw", "file", {"RD *": CLAIM})
    bad = j.same_decision(PATH, other, "killed at s2.begin", ["copy-1", "copy-2"])
    assert bad.label is Label.FAIL and bad.doc.source == "X-30" and bad.evidence["distinct"] == 2
    assert bad.evidence["decisions"]["copy-2"]["effects"] == {"e1": 1, "e2": 1}
    assert "copy-2 fired {'e1': 1, 'e2': 1}" in bad.summary
    assert {e["incarnation"].split("/")[0] for e in bad.evidence["witness"]} == {"copy-1", "copy-2"}
    # no citation: undocumented
    assert Judge("fw", "file", {}).same_decision(PATH, other, "k", ["copy-1", "copy-2"]).label is Label.UNDOC


def test_a_recovery_that_found_nothing_durable_is_part_of_its_decision() -> None:
    """One copy's recovery finds nothing and starts over (``recover-start``), the other resumes: different."""
    h = _h(*CRASHED, *_done("copy-1"), (Kind.RECOVER, "harness"), (Kind.START, "harness"),
           (Kind.STEP_BEGIN, "copy-2/recover-start", "s1"), (Kind.EFFECT, "copy-2/recover-start", "e1"))
    decisions = copy_decisions(h, ["copy-1", "copy-2"])
    assert decisions["copy-2"]["ops"] == ["recover-start"] and decisions["copy-2"]["ended"] == []
    v = Judge("fw", "file", {}).same_decision(PATH, h, "k", ["copy-1", "copy-2"])
    assert v.label is Label.UNDOC and "started over (nothing durable)" in v.summary


def test_the_call_is_recorded_and_replayed_from_the_stored_history() -> None:
    from probes.core.receipt import recorded_histories

    j = Judge("fw", "sqlite", {"RD *": CLAIM})
    made = [j.same_decision(PATH, _h(*CRASHED, *_done("copy-1"), *_done("copy-2")), "a", ["copy-1", "copy-2"]),
            j.same_decision("rd:kill@s2.effect/latest/copies=3",
                            _h(*CRASHED, *_done("copy-1"), *_done("copy-2"), *_recovered("copy-3")), "b",
                            ["copy-1", "copy-2", "copy-3"])]
    assert j.calls[0] == {"call": "same_decision", "path": PATH, "what": "a", "copies": ["copy-1", "copy-2"]}
    assert [v.label for v in made] == [Label.PASS, Label.FAIL]
    again = replay(json.loads(json.dumps(j.calls)), json.loads(json.dumps(recorded_histories(made))),
                   "fw", "sqlite", {"RD *": CLAIM})
    assert [v.to_json() for v in again] == [v.to_json() for v in made]


def test_an_sqlite_store_is_copied_with_its_wal(tmp_path: Path) -> None:
    """Committed pages a killed writer left in the WAL only are part of the state: copied and digested."""
    from probes.kit.copying import copy_sqlite, sqlite_digest

    src = str(tmp_path / "a.sqlite")
    db = sqlite3.connect(src)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE t (x)")
    db.execute("INSERT INTO t VALUES ('in the wal')")
    db.commit()
    assert Path(src + "-wal").stat().st_size > 0
    dst = str(tmp_path / "b.sqlite")
    copy_sqlite(src, dst)  # while the writer's connection is open, as after a SIGKILL
    assert Path(dst + "-wal").exists() and sqlite_digest(src) == sqlite_digest(dst)
    db.close()  # closing checkpoints the original into its main file and removes its WAL
    assert sqlite_digest(src) != sqlite_digest(dst)  # the digest sees the original move on
    with sqlite3.connect(dst) as copy:
        assert copy.execute("SELECT x FROM t").fetchall() == [("in the wal",)]


# --- real frameworks, quick profile ----------------------------------------------------------


def _run(name: str, adapter: str | None, tmp: Path, **params: Any) -> Any:
    from probes import campaigns
    from probes.core.campaign import run_campaign
    from probes.kit.suite import kit_campaign

    campaign = campaigns.get(name) if adapter is None else kit_campaign(name, "rd test", adapter)
    return run_campaign(campaign, campaign.resolve({"protocols": ["rd"], **params}, quick=True), tmp)


def _check_receipt(receipt: Any, copies: int = 2) -> Any:
    """One RD verdict (beside the path's VO), its copies verified identical, each recovered by processes of
    its own."""
    assert sorted(v.property.value for v in receipt.verdicts) == ["RD", "VO"]
    [v] = [v for v in receipt.verdicts if v.property.value == "RD"]
    seen = receipt.observations["rd"]
    assert seen["identical"] is True and set(seen["copies"]) == {f"copy-{i}" for i in range(1, copies + 1)}
    assert set(seen["copies"].values()) == {seen["digest"]}
    children = receipt.observations["children"]
    assert {inc.split("/")[0] for inc in children} == {"run", *seen["copies"]}
    assert all(children[f"{c}/recover"]["op"] == "recover" for c in seen["copies"])
    assert set(v.evidence["decisions"]) == set(seen["copies"])
    return v


def _rejudged(directory: Path) -> None:
    from probes.rejudge import rejudge_campaign

    changes, before, after = rejudge_campaign(directory)
    assert changes == [] and before == after


def test_maf_file_backend_copies_decide_alike(tmp_path: Path) -> None:
    require("agent_framework")
    run = _run("maf", None, tmp_path, rd_points=["s2.begin"])
    assert run.harness_errors == []
    [receipt] = run.receipts
    v = _check_receipt(receipt)
    assert receipt.args["backend"] == "file" and v.path == "rd:kill@s2.begin/latest-checkpoint/copies=2"
    assert v.label is Label.PASS  # MAF on this release: both copies resume at the pause and complete alike
    assert v.evidence["decisions"]["copy-1"]["ended"][-1] == "completed with \"s2 served 'yes'\""
    _rejudged(run.directory)


def test_langgraph_sqlite_copies_decide_alike_and_cite_lg30(tmp_path: Path) -> None:
    require("langgraph.checkpoint.sqlite")
    run = _run("langgraph_kit", None, tmp_path, rd_points=["s2.effect"], rd_copies=3)
    assert run.harness_errors == []
    [receipt] = run.receipts
    v = _check_receipt(receipt, copies=3)
    assert receipt.args["backend"] == "sqlite" and v.path == "rd:kill@s2.effect/none-input/copies=3"
    assert v.label is Label.PASS and v.evidence["distinct"] == 1
    _rejudged(run.directory)


def test_a_copy_that_differs_is_the_harness_failure_and_an_uncopyable_state_is_na(tmp_path: Path) -> None:
    require("agent_framework")
    lossy = _run("kit_test_lossy", "tests.fixtures.kit_adapters:LossyCopy", tmp_path / "lossy")
    assert len(lossy.harness_errors) == 1 and "not identical" in lossy.harness_errors[0]
    assert lossy.receipts[0].verdicts == []
    assert not any(inc.startswith("copy-") for inc in lossy.receipts[0].observations["children"])  # none recovered
    na = _run("kit_test_nocopy", "tests.fixtures.kit_adapters:NoCopy", tmp_path / "na")
    [v] = na.receipts[0].verdicts
    assert (v.property, v.label, v.evidence["why"]) == (Property.RD, Label.NA, "test: the state lives on a server")


def test_a_state_that_names_its_own_location_is_na_with_the_measured_digests(tmp_path: Path) -> None:
    """CrewAI 1.15's CheckpointConfig file holds the absolute path of the @persist database: a copy
    restored from it writes into the original's database (seen in the reference run as a harness error)."""
    require("crewai")
    run = _run("crewai_kit", None, tmp_path, rd_points=["s2.effect"], recovery_modes=["latest-checkpoint"])
    assert run.harness_errors == []
    [receipt] = run.receipts
    [v] = receipt.verdicts
    seen = receipt.observations["rd"]
    assert (v.property, v.label) == (Property.RD, Label.NA) and seen["identical"] is True
    assert seen["original_after"] != seen["digest"] and seen["original_after"][:12] in v.evidence["why"]
    assert "names its own location" in v.evidence["why"]


def test_temporal_refuses_a_copy_of_its_servers_state() -> None:
    from probes.kit.adapter import Capability
    from probes.frameworks.temporal.adapter import TemporalAdapter

    assert not TemporalAdapter.declares(Capability.COPY) and "dev server" in TemporalAdapter.missing[Capability.COPY]


@pytest.mark.parametrize("points,copies", [(["s2.begin"], 2), (["s1.effect", "s2.effect"], 4)])
def test_the_plan_has_one_rd_cell_per_point_and_recovery_mode(points: list[str], copies: int) -> None:
    from probes.kit.suite import kit_campaign

    campaign = kit_campaign("plain_rd", "plan", "tests.fixtures.plain_adapter:PlainAdapter")
    params = campaign.resolve({"protocols": ["rd"], "rd_points": points, "rd_copies": copies}, quick=True)
    specs = campaign.plan(params)
    assert [(s.args["point"], s.args["copies"]) for s in specs] == [(p, copies) for p in points]
    assert {s.args["protocol"] for s in specs} == {"rd"} and campaign.resolve({}, quick=True)["rd_points"] == ["s2.begin"]
