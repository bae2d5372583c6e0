"""The delete protocol (``probes.kit.protocols.delete``) and VO's ``write-after-delete``.

The run is deleted through the framework's own API while the process answering it is frozen inside
the answered step; the process then goes on, and a recovery looks for the run. On LangGraph's stock
savers ``delete_thread`` deletes a thread nobody holds (the control below), but the frozen worker's
late checkpoint writes bring the thread back: the recovery finds it, completed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from probes.core.campaign import run_campaign
from probes.core.history import Event, History, Kind
from probes.core.visibility import WRITE_AFTER_DELETE, anomalies, found_after_delete
from probes.kit.protocols import Probe, Target
from probes.kit.suite import adapter_class, kit_campaign
from tests.installed import require

LANGGRAPH = "probes.frameworks.langgraph.adapter:StockSaverAdapter"


def _history(holder_goes_on: bool, found: Kind | None, step: str = "s2") -> History:
    h = "harness"
    events = [Event(Kind.START, h), Event(Kind.STEP_BEGIN, "run/start", "s1"),
              Event(Kind.EFFECT, "run/start", "s1", "e1"), Event(Kind.STEP_END, "run/start", "s1"),
              Event(Kind.PAUSE, "run/start", "s2"), Event(Kind.ANSWER, h, value="yes"),
              Event(Kind.STEP_BEGIN, "run/answer", "s2"), Event(Kind.CONSUME, "run/answer", "s2", value="yes"),
              Event(Kind.DELETE, h, detail={"while": "run/answer", "at": "s2.consumed"})]
    if holder_goes_on:
        events += [Event(Kind.EFFECT, "run/answer", "s2", "e2"), Event(Kind.PERSIST, "run/answer"),
                   Event(Kind.COMPLETE, "run/answer", value="done")]
    events.append(Event(Kind.RECOVER, h, detail={"mode": "latest"}))
    if found is not None:
        events.append(Event(found, "run/after", step if found in (Kind.PAUSE, Kind.STEP_BEGIN) else None))
    return History.of_events(events)


def test_write_after_delete_needs_a_late_holder_and_a_run_found_again() -> None:
    names = lambda h: [a.name for a in anomalies(h)]  # noqa: E731
    assert names(_history(holder_goes_on=True, found=Kind.COMPLETE)) == [WRITE_AFTER_DELETE]
    assert names(_history(holder_goes_on=True, found=Kind.PAUSE)) == [WRITE_AFTER_DELETE]
    assert names(_history(holder_goes_on=True, found=Kind.STEP_BEGIN)) == [WRITE_AFTER_DELETE]  # s2 run on
    assert names(_history(holder_goes_on=True, found=None)) == []  # the deletion held
    # began s1 again: a new run (it asks again) found nothing; one that completes without asking used the
    # late writes (OpenAI Agents' session: the late items restored, the approval among them)
    started_over = _history(holder_goes_on=True, found=Kind.STEP_BEGIN, step="s1")
    assert names(started_over) == []
    again = History.of_events([*started_over.events, Event(Kind.PAUSE, "run/after", "s2")])
    assert names(again) == []
    used = History.of_events([*started_over.events, Event(Kind.COMPLETE, "run/after", value="done")])
    assert names(used) == [WRITE_AFTER_DELETE]
    assert names(_history(holder_goes_on=False, found=Kind.COMPLETE)) == []  # the delete's own failure


def test_an_adapter_without_delete_is_not_applicable(tmp_path: Path) -> None:
    campaign = kit_campaign("plain_delete", "x", "tests.fixtures.plain_adapter:PlainAdapter")
    run = run_campaign(campaign, campaign.resolve({"protocols": ["delete"]}, quick=True), tmp_path)
    assert {(v.property.value, v.label.value) for r in run.receipts for v in r.verdicts} == {("EO", "n/a"),
                                                                                           ("CO", "n/a")}


@pytest.fixture
def langgraph() -> None:
    require("langgraph.checkpoint.sqlite")


def test_langgraph_deletes_a_thread_nobody_holds(langgraph: None, tmp_path: Path) -> None:
    """The control: delete_thread on a paused thread, no process holding it; the recovery finds nothing."""
    target = Target(LANGGRAPH, adapter_class(LANGGRAPH), "sqlite")
    probe = Probe(target, tmp_path, lambda name: str(tmp_path / f"{name}.db"))
    run = probe.run("run")
    assert run.start()["status"] == "paused"
    assert run.op("delete", "delete")["status"] == "deleted"
    mark = len(probe.read())
    run.op("after", "recover", mode="none-input", answer="yes")  # the adapter starts over on an empty thread
    h = probe.read()
    assert [e.step for e in h.events[mark:] if e.kind is Kind.STEP_BEGIN][:1] == ["s1"]
    assert found_after_delete(h, h.events[mark:], None) is None


def test_langgraph_late_writes_of_a_frozen_worker_bring_a_deleted_thread_back(langgraph: None, tmp_path: Path) -> None:
    campaign = kit_campaign("lg_delete", "x", LANGGRAPH)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["delete"]}, quick=True), tmp_path)
    assert run.harness_errors == []
    [receipt] = run.receipts
    seen: dict[str, Any] = receipt.observations["delete"]
    assert (seen["deleted"], seen["recovery found"]) == ("deleted", "completed with \"s2 served 'yes'\"")
    labels = {v.property.value: v.label.value for v in receipt.verdicts}
    # the holder fired e2 once and completed; nothing fired twice, but the deleted thread is back
    assert labels == {"EO": "✓", "CO": "✓", "VO": "U"}
    vo = next(v for v in receipt.verdicts if v.property.value == "VO")
    assert [a["anomaly"] for a in vo.evidence["anomalies"]] == [WRITE_AFTER_DELETE]


def test_the_chapter_lists_each_delete_cell_and_the_model_names_the_deletion() -> None:
    from types import SimpleNamespace

    from probes.kit import chapter
    from probes.tla.trace import Recorded

    seen = {"point": "s2.consumed", "holder": "completed", "recovery found": "nothing to resume"}
    receipt = SimpleNamespace(observations={"delete": seen}, args={"backend": "sqlite"}, verdicts=[])
    assert chapter.delete_rows(SimpleNamespace(receipts=[receipt])) == [
        {"frozen at": "s2.consumed", "the holder then": "completed", "a recovery found": "nothing to resume",
         "backend": "sqlite"}]
    history = _history(holder_goes_on=True, found=None)
    assert "deleted the run" in Recorded("x", "c", "f", "delete", history).outside_model
