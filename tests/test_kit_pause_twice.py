"""The pause-twice protocol (``probes.kit.protocols.pause_twice``): a step asks twice, answered one
answer at a time.

On a framework-free engine the verdicts follow from whether the step goes on after its first
pause or starts again from its top; on LangGraph a node with two ``interrupt()`` calls re-runs from
its top on the second answer, so the code between them fires again (documented: LG-14).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from probes.core.campaign import run_campaign
from probes.core.checker import Property
from probes.core.history import History
from probes.kit.suite import kit_campaign
from probes.tla.trace import Recorded
from tests.installed import require


def _twice(name: str, adapter: str, out: Path) -> Any:
    campaign = kit_campaign(name, name, adapter)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["pause_twice"]}, quick=True), out)
    assert run.harness_errors == [] and len(run.receipts) == 1
    return run.receipts[0]


def _labels(receipt: Any) -> dict[Property, str]:
    return {v.property: v.label.value for v in receipt.verdicts}


def test_a_step_that_goes_on_after_its_first_pause_fires_each_effect_once(tmp_path: Path) -> None:
    got = _twice("keeps_place", "tests.fixtures.step_adapter:ByIndexAdapter", tmp_path)
    assert got.observations["pause_twice"] == {"after_first": "paused", "after_second": "completed",
                                               "effects": {"e1": 1, "e2": 1, "e2b": 1}}
    assert _labels(got) == {Property.EO: "✓", Property.CO: "✓", Property.LV: "✓", Property.VO: "✓"}


def test_a_step_that_starts_again_fires_the_first_answers_effect_twice(tmp_path: Path) -> None:
    got = _twice("restarts", "tests.fixtures.step_adapter:RestartingAdapter", tmp_path)
    assert got.observations["pause_twice"]["effects"] == {"e1": 1, "e2": 2, "e2b": 1}
    # the adapter's "EO *" claim (LG-15) labels the repeated effect; no CO statement: U
    assert _labels(got) == {Property.EO: "✗", Property.CO: "U", Property.LV: "✓", Property.VO: "✓"}
    # the TLA+ model has one pause per run: trace validation says so instead of failing the history
    history = History.from_json(next(iter(got.histories.values())))
    assert "pauses more than once" in Recorded("restarts/p", "restarts", "step-engine", "pause_twice",
                                               history).outside_model


def test_an_adapter_without_the_capability_is_not_applicable(tmp_path: Path) -> None:
    got = _twice("plain", "tests.fixtures.plain_adapter:PlainAdapter", tmp_path)
    assert {v.label.value for v in got.verdicts} == {"n/a"}
    assert all(v.evidence["why"] == "the adapter does not declare two-pauses" for v in got.verdicts)


def test_an_adapter_that_says_why_it_cannot_ask_twice_is_not_applicable_for_that_reason(tmp_path: Path) -> None:
    got = _twice("one_question", "tests.fixtures.plain_adapter:OneQuestionAdapter", tmp_path)
    assert {v.label.value for v in got.verdicts} == {"n/a"}
    assert all(v.evidence["why"] == "test: one state file holds one question" for v in got.verdicts)


def test_langgraph_reruns_a_node_with_two_interrupts_from_its_top(tmp_path: Path) -> None:
    require("langgraph")
    got = _twice("langgraph_kit", "probes.frameworks.langgraph.adapter:StockSaverAdapter", tmp_path)
    # after the first answer the thread is paused at the second interrupt (LangGraph 1.2.9's state
    # lists no next node there; the invoke's __interrupt__ says so), the second answer re-runs s2
    assert got.observations["pause_twice"] == {"after_first": "paused", "after_second": "completed",
                                               "effects": {"e1": 1, "e2": 2, "e2b": 1}}
    labels = {v.property: (v.label.value, v.doc.source if v.doc else None) for v in got.verdicts}
    assert labels == {Property.EO: ("D", "LG-14"), Property.CO: ("D", "LG-14"), Property.LV: ("✓", None),
                      Property.VO: ("✓", None)}
