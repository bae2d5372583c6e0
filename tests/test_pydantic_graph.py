"""pydantic-graph campaign, quick profile, against the installed framework."""

from __future__ import annotations

import inspect

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.core.receipt import VIEW_NAME


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    c = campaigns.get("pydantic_graph")
    return run_campaign(c, c.resolve(quick=True), receipts_root=tmp_path_factory.mktemp("receipts"))


def cells(run):
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_no_harness_errors(run):
    assert run.harness_errors == []


@pytest.mark.parametrize("crash", ["exception", "sigkill-before-effect", "sigkill-after-effect"])
def test_mid_node_crash_is_safe_but_not_live(run, crash):
    c = cells(run)
    eo = c[("EO", f"crash:{crash}")]
    # nothing fired twice: EO (at most once) holds; the run never completed, which LV reports (issue 24)
    assert eo.label.value == "✓" and eo.evidence["completed"] is False
    assert all(n <= 1 for n in eo.evidence["effect_counts"].values())
    assert c[("PC", f"crash:{crash}")].label.value == "✓"
    lv = c[("LV", f"crash:{crash}")]
    # the 1.107.1 status contract documents the refusal (DOCS.md PG-2): D, cited
    assert lv.evidence["completed"] is False and lv.label.value == "D" and lv.doc.source == "PG-2"
    assert "Unable to restore snapshot" in lv.evidence["detail"]
    assert [w["kind"] for w in lv.evidence["witness"]] == ["crash", "refuse"]


def test_kill_between_nodes_restores(run):
    c = cells(run)
    assert c[("LV", "crash:between-nodes")].label.value == "✓"
    assert c[("EO", "crash:between-nodes")].evidence["effect_counts"] == {"A": 1, "B": 1}


def test_doc_quote_is_in_installed_docstring(run):
    """The LV label's citation (DOCS.md PG-2) is the installed record_run docstring, fragment by fragment."""
    from pydantic_graph.persistence import BaseStatePersistence

    lv = cells(run)[("LV", "crash:exception")]
    assert lv.doc.source == "PG-2" and "record_run" in lv.doc.page
    doc = " ".join(inspect.getdoc(BaseStatePersistence.record_run).split())
    fragments = [f.strip().strip('"') for f in lv.doc.quote.split("…")]
    assert len(fragments) == 2 and all(f in doc for f in fragments), fragments


def test_stray_and_tamper(run):
    c = cells(run)
    assert c[("CO", "stray-after-completion")].evidence["stray_error"] == "GraphRuntimeError"
    assert c[("CV", "tamper:truncated-file")].evidence["error"] == "ValidationError"
    reset = c[("CV", "tamper:status-reset")]
    assert (reset.label.value == "✓") == (reset.evidence["error"] is not None)


def test_claimed_pause_row_matches_statuses(run):
    v = cells(run)[("LV", "claimed-pause")]
    assert v.evidence["statuses_after_claim"][-1][2] == "pending"
    assert (v.label.value == "✓") == v.evidence["completed"]


def test_view_has_no_temp_paths(run):
    assert "/tmp" not in (run.directory / VIEW_NAME).read_text()


def test_two_concurrent_resumers(run):
    v = cells(run)[("CO", "cross-process:two-resumers")]
    assert (v.label.value == "✓") == all(n <= 1 for n in v.evidence["effect_counts"].values())
    # each racer finished or was refused loudly: by pydantic-graph's GraphRuntimeError, or, when it read the
    # state file while the winner was replacing it, by a FileNotFoundError (seen once under load)
    refusals = [e for e in v.evidence["racer_errors"] if e not in (None, "None")]
    assert v.evidence["racers_finished"] + len(refusals) == 2
    assert set(refusals) <= {"GraphRuntimeError", "FileNotFoundError"}
    # LV on the same path: some racer completed with the graph's own output, else why (a lost answer by name)
    lv = cells(run)[("LV", "cross-process:two-resumers")]
    from probes.pydantic_graph.workload import RESULT
    assert (lv.label.value == "✓") == (lv.evidence.get("outcome") == RESULT)
    assert lv.evidence["lost_answer"] == (v.evidence["effect_counts"].get("B", 0) == 0 and lv.label.value != "✓")
    if lv.evidence["lost_answer"]:
        assert "lost answer" in lv.summary
