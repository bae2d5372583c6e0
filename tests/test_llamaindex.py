"""LlamaIndex Workflows campaign, quick profile, against the installed framework."""

from __future__ import annotations

import inspect
import json
import re

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.core.errors import UsageError
from probes.core.receipt import VIEW_NAME


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    c = campaigns.get("llamaindex")
    root = tmp_path_factory.mktemp("receipts")
    return run_campaign(c, c.resolve(quick=True), receipts_root=root)


def cells(run):
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_no_harness_errors(run):
    assert run.harness_errors == []


def test_split_steps_conform(run):
    c = cells(run)
    for key in [("EO", "interrupt:split-steps"), ("PC", "interrupt:split-steps"), ("FD", "interrupt:split-steps"),
                ("EO", "park-kill"), ("FD", "park-kill"), ("CO", "stray-after-completion")]:
        assert c[key].label.value == "✓", (key, c[key].summary)
    assert c[("FD", "interrupt:split-steps")].evidence["observed"] == "f(no)"


def test_wait_for_event_replays_prefix_and_cites_docstring(run):
    from workflows import Context

    v = cells(run)[("PC", "wait:restore")]
    assert v.label.value == "D"
    assert v.evidence["runs_after_recovery"]["w.prefix"] == 1
    doc = " ".join(inspect.getdoc(Context.wait_for_event).split())
    assert v.doc.quote in doc  # the quoted sentence really is in the installed docstring


def test_double_answer_gate_counted(run):
    v = cells(run)[("CO", "double-answer")]
    # Whatever the label, it must agree with the ledger evidence it rests on.
    assert (v.label.value == "✓") == (v.evidence["effect_counts"]["gate"] <= 1)
    assert v.evidence["first_answer_won"] is True


def test_cv_and_tamper_rows(run):
    c = cells(run)
    assert c[("CV", "store:unserialisable")].label.value == "✓"
    assert c[("CV", "tamper:wrong-version")].evidence["stage"] == "load"
    forged = c[("CV", "tamper:forged-answer")]
    assert (forged.label.value == "✓") == (forged.evidence["error"] is not None)


def test_view_has_no_run_varying_values(run):
    text = (run.directory / VIEW_NAME).read_text()
    assert "/tmp" not in text and not re.search(r"0x[0-9a-f]{6,}", text)
    assert json.loads(text)["probes"]


def test_bad_parameter_is_a_usage_error():
    with pytest.raises(UsageError, match="not allowed"):
        campaigns.get("llamaindex").resolve({"families": ["nonsense"]})


def test_verdict_view_is_deterministic(run, tmp_path):
    c = campaigns.get("llamaindex")
    again = run_campaign(c, c.resolve({"reps": 1}, quick=True), receipts_root=tmp_path)
    assert (again.directory / VIEW_NAME).read_bytes() == (run.directory / VIEW_NAME).read_bytes()


def test_concurrent_same_answer_row(tmp_path):
    c = campaigns.get("llamaindex")
    run = run_campaign(c, c.resolve({"families": ["race"]}, quick=True), receipts_root=tmp_path)
    assert run.harness_errors == []
    v = cells(run)[("CO", "cross-process:same-answer")]
    assert (v.label.value == "✓") == (v.evidence["effect_counts"]["gate"] <= 1)
    assert v.evidence["outcomes"] == ["f(yes)", "f(yes)"] or v.evidence["errors"] != ["None", "None"]


def test_headline_explains_a_double_answer_from_its_co_verdict_beside_the_fi_not_applicable() -> None:
    """The double-answer probe carries an FI n/a and a CO verdict on the same path; the
    headline's explanation reads the CO one (a regression: it took the n/a's evidence)."""
    from probes.core.checker import Property, Subject
    from probes.core.receipt import Receipt

    s = Subject("llamaindex", "fs")
    fi = s.not_applicable(Property.FI, "double-answer", "no discriminator")
    co = s.verdict(Property.CO, "double-answer", False,
                   {"outcome": "f(yes)", "first_answer_won": True, "effect_counts": {"gate": 2},
                    "ledger_gate_answers": ["yes", "no"]}, "fired twice")
    split = s.verdict(Property.EO, "interrupt:split-steps", False, {}, "x")
    receipts = [Receipt("llamaindex", f"double.rep{i}", {}, {}, {}, [fi, co, split], {}, []) for i in (1, 2)]
    measured = campaigns.get("llamaindex").headlines(receipts)["llamaindex.row"]
    assert "the gated effect fired 2 times (answers ['yes', 'no']) in 2 of 2 repetitions" in measured.why
