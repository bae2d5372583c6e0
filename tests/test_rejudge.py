"""Re-judging stored receipts in memory (``probes.rejudge``): the reference's labels under today's judge.

The reference run (``data/reference``) was judged by the old checker; these tests pin what
the issue-24 definitions change in it, read-only, from the receipts' own histories and
evidence: pydantic-graph's mid-node crashes are EO ✓ beside their LV failure, its race's
lost answer is no CO ✗ but an LV failure named "lost answer", and CrewAI's structural
tamper that dropped defaulted fields is no CV ✗ but an undetected forgery.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from probes import campaigns
from probes.core.checker import Label, Property
from probes.core.receipt import load_campaign, load_receipt
from probes.rejudge import main, rejudge_campaign, rejudge_receipt

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"
KIT_REFERENCE = sorted(p.name for p in REFERENCE.iterdir()
                       if (p / "_campaign.json").exists() and p.name in campaigns.available()
                       and campaigns.get(p.name).chapter_template == "kit")  # the kit's campaigns (template chapters)
# receipts as the old checker judged them (the reference of 2026-12-01, before it was re-measured):
# what re-judging changes in them is pinned here, whatever the reference holds now
OLD_JUDGE = Path(__file__).resolve().parent / "fixtures" / "judged_before_issue_24"


def _receipt(campaign: str, probe: str):
    """A receipt as the old checker judged it (copied from the reference of 2026-12-01)."""
    return load_receipt(OLD_JUDGE / campaign / f"{probe}.json")


def test_pydantic_graph_crash_is_eo_pass_beside_its_lv_failure() -> None:
    r = _receipt("pydantic_graph", "crash.exception.rep1")
    assert {v.property: v.label for v in r.verdicts}[Property.EO] is Label.UNDOC  # what the old judge said
    new, reasons = rejudge_receipt("pydantic_graph", r)
    by = {v.property: v for v in new}
    assert by[Property.EO].label is Label.PASS and by[Property.EO].evidence["completed"] is False
    assert by[Property.LV].label is Label.DOC and "never completed" in by[Property.LV].evidence["why"]
    assert any(x.startswith("EO from the history") for x in reasons)


def test_pydantic_graph_race_lost_answer_moves_from_co_to_lv() -> None:
    r = _receipt("pydantic_graph", "race.rep3")
    assert [(v.property, v.label) for v in r.verdicts] == [(Property.CO, Label.FAIL)]
    new, reasons = rejudge_receipt("pydantic_graph", r)
    assert [(v.property, v.label) for v in new] == [(Property.CO, Label.PASS), (Property.LV, Label.UNDOC)]
    assert new[1].evidence["lost_answer"] is True and "lost answer" in new[1].summary


def test_crewai_kit_structural_tamper_of_defaulted_fields_is_no_cv_failure() -> None:
    changes, before, after = rejudge_campaign(OLD_JUDGE / "crewai_kit")
    assert before[("CV", "✗")] == 4 and after[("CV", "✗")] == 0
    forged = [c for c in changes if c.framework == "crewai · undetected forgery"]
    assert len(forged) == 6 and {c.after for c in forged} == {"U"}
    assert all("accepted, behaviour unchanged" in c.why and "required []" in c.why for c in forged)


def test_rejudge_cli_rejects_a_missing_directory(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "not a directory" in capsys.readouterr().err


@pytest.mark.slow
def test_a_kit_campaign_is_re_judged_byte_identically_from_its_receipts(tmp_path: Path) -> None:
    """Every protocol once (``--smoke``) on Microsoft Agent Framework, real runs: each receipt's
    verdicts decided again from what it stores -- the judge's recorded calls over the stored
    histories, a race from its trials -- are the stored ones, byte for byte and in order."""
    import os
    import subprocess
    import sys

    from probes.rejudge import kit_verdicts, stable
    from probes.frameworks.maf.adapter import MafAdapter

    root = Path(__file__).resolve().parent.parent
    run = subprocess.run([sys.executable, "-m", "probes", "run", "maf", "--smoke", "--out", str(tmp_path)],
                         cwd=root, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "RC_NO_PROGRESS": "1", "PYTHONPATH": str(root)})
    assert run.returncode == 0, run.stderr[-3000:]
    receipts = load_campaign(tmp_path / "maf")
    protocols = {r.args["protocol"] for r in receipts}
    assert {"baseline", "crash", "tamper", "race", "fork"} <= protocols, protocols
    replayed = 0
    for r in receipts:
        again = kit_verdicts(r, MafAdapter)
        assert again is not None, f"{r.probe}: no record of how its verdicts were decided"
        assert [stable(v) for v in again] == [stable(v) for v in r.verdicts], r.probe
        replayed += len(again)
    assert replayed == sum(len(r.verdicts) for r in receipts) > 20
    [savekill] = [r for r in receipts if r.args["protocol"] == "savekill"]
    assert len(savekill.verdicts) == 4, savekill.verdicts  # smoke: one save killed (EO, PC, LV, VO)
    # a record that does not fit the stored histories is refused, not silently re-labelled
    tampered = next(r for r in receipts if "judged" in r.observations and r.histories)
    tampered.histories.clear()
    with pytest.raises(ValueError, match="no history stored"):
        kit_verdicts(tampered, MafAdapter)


@pytest.mark.parametrize("name", KIT_REFERENCE)
def test_every_kit_reference_receipt_is_re_judged_byte_identically(name: str) -> None:
    """The reference's kit verdicts decided again from the receipts alone (the judge's recorded calls
    over the stored histories, a race from its trials) are the stored ones, byte for byte."""
    from probes.rejudge import _adapter, kit_verdicts, stable

    adapter = _adapter(name)
    receipts = load_campaign(REFERENCE / name)
    unrecorded = []
    for r in receipts:
        again = kit_verdicts(r, adapter)
        if again is None:
            unrecorded.append(r.probe)
            continue
        assert [stable(v) for v in again] == [stable(v) for v in r.verdicts], f"{name}/{r.probe}"
    assert not unrecorded, (f"{name}: {len(unrecorded)} of {len(receipts)} receipts keep no judged calls "
                            f"(observations.judged), so their verdicts cannot be recomputed: {unrecorded[:5]}")
