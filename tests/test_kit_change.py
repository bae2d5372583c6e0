"""The change protocol (``probes.kit.protocols.change``): a run paused under the original workflow
is answered by a process running changed code.

On a framework-free engine the outcome follows from how it finds its place again (by position or by
step name), and the verdicts repeat byte for byte; a statement about resuming the same code does
not label a code change (U), one keyed for change paths does (✗). On LangGraph, renaming the paused
node makes the answer complete the run without running it (a silent skip), and swapping the steps
runs the step that already ran again.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from probes.core.campaign import run_campaign
from probes.core.checker import Property
from probes.core.history import History
from probes.kit import chapter
from probes.kit.runtime import CODE_CHANGES, required_effects
from probes.kit.suite import kit_campaign
from probes.tla.trace import Recorded
from tests.installed import require


def _change(name: str, adapter: str, out: Path, kinds: tuple[str, ...] = CODE_CHANGES) -> dict[str, Any]:
    campaign = kit_campaign(name, name, adapter)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["change"], "code_changes": list(kinds)},
                                                  quick=True), out)
    assert run.harness_errors == []
    return {r.args["kind"]: r for r in run.receipts}


def _labels(receipt: Any) -> dict[Property, str]:
    return {v.property: v.label.value for v in receipt.verdicts}


def test_the_effects_a_changed_workflow_must_fire() -> None:
    assert required_effects("step-appended") == ("e1", "e2", "e_s3")
    assert required_effects("step-inserted") == ("e1", "e2")  # the inserted step is in the part already run
    assert required_effects("steps-swapped") == ("e1", "e2")


def test_an_engine_resuming_by_position_skips_or_repeats_and_the_verdicts_repeat(tmp_path: Path) -> None:
    runs = [_change("by_index", "tests.fixtures.step_adapter:ByIndexAdapter", tmp_path / str(i)) for i in (1, 2)]
    got = runs[0]
    assert {kind: got[kind].observations["change"]["outcome"] for kind in CODE_CHANGES} == {
        "step-appended": "continued", "step-inserted": "continued", "paused-step-renamed": "continued",
        "done-step-removed": "ended completed", "steps-swapped": "ended completed"}
    # the code change ends VO's window of evidence (probes.core.visibility): its ✓ says only that
    # nothing was out of order before the change
    for kind in ("step-appended", "step-inserted", "paused-step-renamed"):
        assert _labels(got[kind]) == {Property.EO: "✓", Property.LV: "✓", Property.VO: "✓"}, kind
    # the step that ran is gone: position 1 is past the end, the run completes without the answered
    # step (a silent skip); swapped: position 1 is now s1, which fires e1 again. The adapter's
    # "EO *"/"LV *" statements are about resuming the same code: U, not ✗
    assert _labels(got["done-step-removed"]) == {Property.EO: "U", Property.LV: "U", Property.VO: "✓"}
    assert got["done-step-removed"].observations["change"]["effects"] == {"e1": 1}
    assert _labels(got["steps-swapped"]) == {Property.EO: "U", Property.LV: "U", Property.VO: "✓"}
    assert got["steps-swapped"].observations["change"]["effects"] == {"e1": 2}
    assert got["step-appended"].observations["change"]["effects"] == {"e1": 1, "e2": 1, "e_s3": 1}
    first, second = ((d / "by_index" / "verdicts.json").read_bytes() for d in (tmp_path / "1", tmp_path / "2"))
    assert first == second
    rows = chapter.change_rows(SimpleNamespace(receipts=list(got.values())))
    assert [(r["code change"], r["outcome"], r["EO"]) for r in rows if r["code change"] == "steps-swapped"] == [
        ("steps-swapped", "ended completed", "U")]


def test_an_engine_resuming_by_name_refuses_loudly_and_a_change_citation_labels_it(tmp_path: Path) -> None:
    got = _change("by_name", "tests.fixtures.step_adapter:ByNameAdapter", tmp_path,
                  ("paused-step-renamed", "steps-swapped", "step-appended"))
    renamed = got["paused-step-renamed"]
    assert renamed.observations["change"]["outcome"] == "refused loudly (LookupError)"
    # refused: no LV verdict, the refusal is its answer
    assert _labels(renamed) == {Property.EO: "✓", Property.VO: "✓"}
    # by name, s2 is found again; the swapped code then runs s1 after it: e1 twice, and the
    # adapter's "EO change:*" statement makes it ✗ (LV keeps U: no change statement for it)
    assert _labels(got["steps-swapped"]) == {Property.EO: "✗", Property.LV: "U", Property.VO: "✓"}
    assert {v.label.value for v in got["step-appended"].verdicts} == {"n/a"}  # not in its code_changes
    history = History.from_json(renamed.observations["history"])
    assert Recorded("x", "by_name", "step-engine", "change", history).outside_model.startswith(
        "the workflow's code changed")


def test_on_langgraph_a_renamed_paused_node_is_skipped_silently_and_swapped_steps_repeat_one(tmp_path: Path) -> None:
    require("langgraph.checkpoint.sqlite")
    got = _change("lg_change", "probes.frameworks.langgraph.adapter:StockSaverAdapter", tmp_path,
                  ("paused-step-renamed", "steps-swapped", "step-appended"))
    renamed = got["paused-step-renamed"].observations["change"]
    assert (renamed["status"], renamed["effects"]) == ("completed", {"e1": 1})
    assert _labels(got["paused-step-renamed"]) == {Property.EO: "U", Property.LV: "U", Property.VO: "✓"}
    assert got["steps-swapped"].observations["change"]["effects"] == {"e1": 2, "e2": 1}
    assert _labels(got["step-appended"]) == {Property.EO: "✓", Property.LV: "✓", Property.VO: "✓"}


@pytest.mark.parametrize("adapter", ["tests.fixtures.plain_adapter:PlainAdapter"])
def test_an_adapter_without_the_capability_gives_n_a_with_its_reason(tmp_path: Path, adapter: str) -> None:
    got = _change("plain_change", adapter, tmp_path, ("steps-swapped",))
    verdicts = got["steps-swapped"].verdicts
    assert {(v.property, v.label.value) for v in verdicts} == {(Property.EO, "n/a"), (Property.LV, "n/a")}
    assert "code-change" in verdicts[0].summary or "code-change" in str(verdicts[0].evidence)


@pytest.mark.parametrize("module, adapter, kind, outcome", [
    ("dbos", "probes.frameworks.dbos.adapter:DBOSAdapter", "steps-swapped", "refused loudly (PortableWorkflowError)"),
    ("pydantic_graph", "probes.frameworks.pydantic_graph.adapter:PydanticGraphAdapter", "paused-step-renamed",
     "refused loudly (ValidationError)"),
    ("workflows", "probes.frameworks.llamaindex.adapter:LlamaIndexAdapter", "paused-step-renamed", "continued"),
])
def test_engines_that_check_their_history_refuse_and_event_routing_continues(
        tmp_path: Path, module: str, adapter: str, kind: str, outcome: str) -> None:
    """DBOS checks each replayed step's name against its recorded one (a swap is refused); pydantic-
    graph's snapshot names a node class the renamed graph does not have; LlamaIndex routes the human
    response to whichever step takes it (a renamed step continues)."""
    require(module)
    got = _change(f"{module}_change", adapter, tmp_path, (kind,))[kind]
    assert got.observations["change"]["outcome"] == outcome
    assert {v.label.value for v in got.verdicts} == {"✓"}
