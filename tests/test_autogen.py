"""AutoGen AgentChat campaign, quick profile, against the installed framework (no model calls)."""

from __future__ import annotations

import asyncio

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.core.receipt import VIEW_NAME


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    c = campaigns.get("autogen")
    return run_campaign(c, c.resolve(quick=True), receipts_root=tmp_path_factory.mktemp("receipts"))


def cells(run):
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_no_harness_errors(run):
    assert run.harness_errors == []


def test_double_restore_adds_no_effect(run):
    v = cells(run)[("EO", "save-load:double-restore")]
    assert v.label.value == "✓" and v.evidence["effect_counts"] == {"charge:o1": 1}


def test_structural_tamper_rejected_at_load(run):
    v = cells(run)[("CV", "tamper:structural")]
    assert v.label.value == "✓" and v.evidence["stage"] == "load"


def test_rewound_history_refires_tool_if_accepted(run):
    v = cells(run)[("CV", "tamper:rewound-history")]
    if v.label.value != "✓":
        assert v.evidence["effect_counts"] == {"charge:o1": 1}


def test_rewound_speaker_changes_who_speaks_if_accepted(run):
    v = cells(run)[("CV", "tamper:rewound-speaker")]
    if v.label.value != "✓":
        assert v.evidence["outcome"][0][0] != v.evidence["untampered_run_messages"][0][0]


def test_kill_points(run):
    c = cells(run)
    assert c[("EO", "kill:before-effect")].label.value == "✓"
    assert c[("EO", "kill:after-save")].label.value == "✓"
    after = c[("EO", "kill:after-effect")]
    # the effect fired before the checkpoint: the label must follow the ledger
    assert (after.label.value == "✓") == (after.evidence["effect_counts"]["charge:o2"] == 1)


def test_scripted_model_is_a_pure_function_of_the_conversation():
    from autogen_core.models import UserMessage

    from probes.autogen.workload import _model_class

    model = _model_class()()
    a = asyncio.run(model.create([UserMessage(content="charge o7", source="user")]))
    b = asyncio.run(model.create([UserMessage(content="hello", source="user")]))
    assert a.content[0].name == "charge" and b.content == "done"


def test_view_has_no_temp_paths(run):
    assert "/tmp" not in (run.directory / VIEW_NAME).read_text()
