"""The paper's LlamaIndex Workflows campaign, measured through the kit (quick profile, the real framework),
and its published value read from the receipts by the paper layer (``probes.paper.llamaindex``).

What the paper reports (``llamaindex.row``): split steps conform; ``ctx.wait_for_event`` inside a
step re-runs the step's code before the wait, as its docstring says (D). The legacy campaign
(``data/reference/llamaindex`` as measured on 2026-12-02) found the split steps' restore, fork and
park-kill ✓, two answers back to back and two processes answering at once firing the gated effect
twice (CO U), a stray answer to the finished run in its own process inert, the wait probes' prefix
run twice (EO and PC D, LI-3), an unserialisable store refused (CV ✓) and, of its named snapshot
edits, wrong-version, queue-not-a-list, bad-state-value and removed-state refused, removed-workers,
not-running and forged-answer accepted silently. The assertions below are what the kit measures on
the same release; where it differs, the test says why (the kit's workflow, or a stronger protocol).
"""

from __future__ import annotations

import inspect
import json
import re

import pytest

from tests.installed import require

require("workflows")

from probes import campaigns  # noqa: E402
from probes.core.campaign import CampaignRun, run_campaign  # noqa: E402
from probes.core.errors import UsageError  # noqa: E402
from probes.core.receipt import VIEW_NAME  # noqa: E402

FIRST = "s2 served 'yes'"  # the kit workflow's result for the first answer


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> CampaignRun:
    campaign = campaigns.get("llamaindex")
    return run_campaign(campaign, campaign.resolve(quick=True), receipts_root=tmp_path_factory.mktemp("receipts"))


def cells(run: CampaignRun) -> dict:
    return {(v.framework, v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def own(run: CampaignRun) -> dict:
    """The framework's own row (the forgery row apart), by (property, path)."""
    return {(prop, path): v for (fw, prop, path), v in cells(run).items() if fw == "llamaindex"}


def test_the_paper_campaign_is_the_kit_over_the_llamaindex_adapter() -> None:
    from probes.kit.suite import KIT_ADAPTERS
    from probes.frameworks.llamaindex.campaign import PAPER_PROTOCOLS

    paper, kit = campaigns.get("llamaindex"), campaigns.get("llamaindex_kit")
    assert paper.in_default_run and not kit.in_default_run
    assert KIT_ADAPTERS["llamaindex"] == KIT_ADAPTERS["llamaindex_kit"]
    # the default profile is the paper's cells, not every kit protocol: no exhaustive or save-kill sweep
    assert paper.resolve()["protocols"] == PAPER_PROTOCOLS
    assert not {"exhaustive", "savekill", "crash"} & set(PAPER_PROTOCOLS)
    assert {"exhaustive", "wait_for_event"} <= set(kit.resolve()["protocols"])
    # the variant's cells are the kit's cells of the protocols it runs, one probe each
    waits = [s for s in paper.plan(paper.resolve()) if s.args["protocol"] == "wait_for_event"]
    assert sorted(s.args["of"] for s in waits) == ["answers", "baseline", "baseline", "in_process", "parkkill", "stray"]
    assert all(s.id.startswith("wait_for_event.") for s in waits)


def test_the_paper_campaign_shares_drift_with_the_kit_campaign() -> None:
    from probes.studies.drift.campaign import side_env
    from probes.studies.drift.targets import by_campaign

    paper, kit = by_campaign("llamaindex"), by_campaign("llamaindex_kit")
    assert (paper.dist, paper.pin, paper.newest) == (kit.dist, kit.pin, kit.newest)
    assert side_env(paper, paper.newest) == side_env(kit, kit.newest)


def test_no_harness_errors(run: CampaignRun) -> None:
    assert run.harness_errors == []
    assert {r.observations.get("framework_versions", {}).get("llama-index-workflows")
            for r in run.receipts} - {None} == {"2.22.2"}


def test_split_steps_conform(run: CampaignRun) -> None:
    """Legacy interrupt:split-steps (EO, PC, LV, FD) and park-kill: restored in a fresh process, each step once."""
    c = own(run)
    for key in [("EO", "baseline:yes"), ("LV", "baseline:yes"), ("EO", "park-kill"), ("PC", "park-kill"),
                ("LV", "park-kill"), ("FD", "fork:same-pause")]:
        assert c[key].label.value == "✓", (key, c[key].summary)
    assert c[("EO", "baseline:yes")].evidence["effect_counts"] == {"e1": 1, "e2": 1}
    assert c[("FD", "fork:same-pause")].evidence["observed"] == "s2 served 'no'"


def test_wait_for_event_replays_the_steps_work_before_the_wait_and_cites_its_docstring(run: CampaignRun) -> None:
    """Legacy wait:restore and wait:in-process: the step's code before the wait ran twice, EO and PC D (LI-3)."""
    from workflows import Context

    c = own(run)
    pc = c[("PC", "wait:park-kill")]
    assert pc.label.value == "D" and pc.evidence["reentered"] == {"s1": 1} and pc.doc.source == "LI-3"
    for path in ("wait:baseline:yes", "wait:park-kill", "wait:in-process"):
        eo = c[("EO", path)]
        assert eo.label.value == "D" and eo.evidence["effect_counts"] == {"e1": 2, "e2": 1}, (path, eo.summary)
        assert c[("LV", path)].label.value == "✓"
    # answered in the process that asked: nothing recovered, so no PC; the replay is EO's
    assert c[("PC", "wait:in-process")].label.value == "n/a"
    doc = " ".join(inspect.getdoc(Context.wait_for_event).split())
    assert pc.doc.quote in doc  # the quoted sentence really is in the installed docstring
    # the split steps, answered in the process that asked, run each step once
    assert c[("EO", "in-process")].label.value == "✓"


def test_two_answers_back_to_back(run: CampaignRun) -> None:
    """Legacy double-answer (CO U, first answer wins): the gated step runs again for the second answer when
    a step follows it, as in the paper campaign's workflow; on the kit's workflow, where the answered step
    ends the run, the run stops before the second answer is taken (CO ✓). The first answer wins in both."""
    c = own(run)
    after = c[("CO", "double-answer:step-appended")]
    assert after.label.value == "U" and after.evidence["gate_fires"] == 2
    ends = c[("CO", "double-answer")]
    assert ends.label.value == "✓" and ends.evidence["gate_fires"] == 1
    for path in ("double-answer", "double-answer:step-appended"):
        lv = c[("LV", path)]
        assert lv.label.value == "✓" and lv.evidence["outcome"] == FIRST


def test_the_same_pause_answered_again_fires_the_gate_again(run: CampaignRun) -> None:
    """Legacy cross-process:same-answer (CO U): a restored snapshot keeps no record that it was answered."""
    c = own(run)
    assert c[("CO", "race:same-pause×2")].label.value == "U"
    assert c[("CO", "race:same-pause×2")].evidence["gate_fires"] == 2
    assert c[("CO", "retry:same-pause×2")].evidence["gate_fires"] == 2


def test_a_stray_answer_restores_the_ended_context_as_a_new_run(run: CampaignRun) -> None:
    """Legacy stray-after-completion was ✓: an answer sent to the finished run in the process that ran it
    is inert. The kit's stray comes from a fresh process, addressed as a user without that process finds the
    run (its newest snapshot, the ended context), which restores as a new run: everything fires again (U)."""
    c = own(run)
    assert c[("CO", "stray-after-completion")].label.value == "U"
    assert c[("EO", "stray-after-completion")].evidence["effect_counts"] == {"e1": 2, "e2": 2}


def test_an_unserialisable_store_and_the_named_edits(run: CampaignRun) -> None:
    c = cells(run)
    store = c[("llamaindex", "CV", "store:unserialisable")]
    assert store.label.value == "✓" and store.evidence["became_durable"] is False
    assert store.evidence["error"] == "ValueError"
    forgery = "llamaindex · undetected forgery"
    # invalid under the framework's own model: the framework's CV row; refused loudly
    assert c[("llamaindex", "CV", "tamper:queue-not-a-list")].label.value == "✓"
    # type-valid (SerializedContext accepts them): the undetected-forgery row, ✓ only where refused
    for name in ("wrong-version", "bad-state-value"):
        v = c[(forgery, "CV", f"tamper:{name}")]
        assert v.label.value == "✓" and v.evidence["refused"], (name, v.summary)
    for name in ("removed-workers", "not-running", "forged-answer"):
        v = c[(forgery, "CV", f"tamper:{name}")]
        assert v.label.value == "U" and not v.evidence["refused"], (name, v.summary)
    assert c[(forgery, "CV", "tamper:forged-answer")].evidence["outcome"] == "accepted, behaviour changed"
    assert c[("llamaindex", "LV", "tamper:forged-answer")].evidence["outcome"] == "s2 served 'forged'"
    # legacy ✓ (refused at run: its gated step read the store first); the kit's answered step reads nothing
    # from the store, and every field of the snapshot model has a default: accepted, behaviour unchanged
    removed = c[(forgery, "CV", "tamper:removed-state")]
    assert removed.label.value == "U" and removed.evidence["outcome"] == "accepted, behaviour unchanged"


def test_the_published_value_is_read_from_the_kit_receipts(run: CampaignRun) -> None:
    """The paper layer over this run's receipts. Published: split steps ✓, wait_for_event PC D. The split
    steps are U, as the legacy campaign found (its reference status is 'differs'), for the gated effect
    fired twice by two answers back to back (and, through the kit, the stray from a fresh process)."""
    from probes.headline import DIFFERS, VARIANT, Measured, chapter_rows, compare, load_published
    from probes.paper.llamaindex import HEADLINE, headlines

    measured = headlines(run.receipts)[HEADLINE]
    assert isinstance(measured, Measured)
    assert measured.value == {"split steps": "U", "wait_for_event PC": "D"}
    assert "CO double-answer:step-appended (U)" in measured.why
    assert "the gated effect fired 2 time(s)" in measured.why and "the first answer wins" in measured.why
    assert "LI-3 (documents the deviation)" in measured.why and "wait:park-kill: {'s1': 1}" in measured.why
    [entry] = [e for e in load_published() if e["id"] == HEADLINE]
    assert compare(entry, measured, "").status == DIFFERS
    [row] = chapter_rows(campaigns.get("llamaindex"), run)  # this quick run is a variant: never scored
    assert row.status == VARIANT


def test_the_paper_layer_says_why_without_its_receipts(run: CampaignRun) -> None:
    from probes.paper.llamaindex import HEADLINE, headlines

    others = [r for r in run.receipts if r.args["protocol"] in ("forgeries", "unserialisable")]
    assert "no split-step or wait_for_event probe" in headlines(others)[HEADLINE]


def test_every_verdict_is_decided_again_from_its_receipt(run: CampaignRun) -> None:
    """The variant's paths (``wait:...``) are the judge's recorded paths: the plain judge replays them."""
    from probes.frameworks.llamaindex.adapter import LlamaIndexAdapter
    from probes.rejudge import kit_verdicts, stable

    for r in run.receipts:
        again = kit_verdicts(r, LlamaIndexAdapter)
        assert again is not None and [stable(v) for v in again] == [stable(v) for v in r.verdicts], r.probe


def test_view_has_no_run_varying_values(run: CampaignRun) -> None:
    text = (run.directory / VIEW_NAME).read_text()
    assert "/tmp" not in text and not re.search(r"0x[0-9a-f]{6,}", text)
    assert json.loads(text)["probes"]


def test_the_deterministic_protocols_give_the_same_verdicts_again(run: CampaignRun, tmp_path) -> None:
    from probes.rejudge import stable

    campaign = campaigns.get("llamaindex")
    protocols = ["double", "forgeries", "unserialisable", "wait_for_event", "parkkill", "in_process"]
    again = run_campaign(campaign, campaign.resolve({"protocols": protocols}, quick=True), receipts_root=tmp_path)
    first = {r.probe: [stable(v) for v in r.verdicts] for r in run.receipts}
    assert again.receipts and all(first[r.probe] == [stable(v) for v in r.verdicts] for r in again.receipts)


def test_bad_parameter_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="not allowed"):
        campaigns.get("llamaindex").resolve({"protocols": ["nonsense"]})
