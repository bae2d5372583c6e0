"""The paper's CrewAI campaign, measured through the kit (quick profile, the real framework; a few
minutes), and its published values read from the receipts by the paper layer (``probes.paper.crewai``).

What the paper reports on its counter flow (``s1`` adds 1, ``s2`` adds 10): a ``@persist`` restore by
id after ``s2`` raised once ends at counter 12 where exactly-once predicts 11; restoring a completed
flow by id runs it again (11 -> 22); a ``CheckpointConfig(on_events=["*"])`` restore gives counter 12
with ``s1`` run twice. The legacy campaign (``data/reference/crewai`` as measured on 2026-12-02) found
12 / 11 (EO and PC D, CR-6; LV ✓) after an exception and after a SIGKILL inside ``s2``, 11 -> 22 (EO
and PC D), and after the checkpoint restore counter 11 with ``s1`` run twice (EO and PC ✗, CR-1: the
checkpoint records ``s1`` completed at counter 1, the restored flow began at counter 0); on its
human-feedback pause, one answer from a fresh process conformed, a second answer was refused (CO ✓,
FD n/a) and two processes answering at once both fired the gated effect (CO D, CR-16). The
assertions below are what the kit measures on the same release; where a label differs, the test
says why (the kit's protocol, or its rule).
"""

from __future__ import annotations

import json
import re

import pytest

from tests.installed import require

require("crewai")

from probes import campaigns  # noqa: E402
from probes.core.campaign import CampaignRun, run_campaign  # noqa: E402
from probes.core.errors import UsageError  # noqa: E402
from probes.core.receipt import VIEW_NAME  # noqa: E402

PERSIST_RAISE = "counter:crash:raise@s2.begin/persist-id"
PERSIST_KILL = "counter:crash:kill@s2.begin/persist-id"
COMPLETED = "counter:restore-completed/persist-id"
CHECKPOINT = "counter:crash:raise@s2.begin/latest-checkpoint"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> CampaignRun:
    campaign = campaigns.get("crewai")
    return run_campaign(campaign, campaign.resolve(quick=True), receipts_root=tmp_path_factory.mktemp("receipts"))


def cells(run: CampaignRun) -> dict:
    """The framework's own row, by (property, path)."""
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts if v.framework == "crewai"}


def counters(run: CampaignRun) -> dict:
    """The counter runs' records (``observations.counter``), by verdict path."""
    return {path: seen for r in run.receipts for path, seen in r.observations.get("counter", {}).items()}


def test_the_paper_campaign_is_the_kit_over_the_crewai_adapter() -> None:
    from probes.frameworks.crewai.campaign import PAPER_PROTOCOLS
    from probes.frameworks.crewai.protocols import PROTOCOLS
    from probes.kit.suite import KIT_ADAPTERS

    paper, kit = campaigns.get("crewai"), campaigns.get("crewai_kit")
    assert paper.in_default_run and not kit.in_default_run
    assert KIT_ADAPTERS["crewai"] == KIT_ADAPTERS["crewai_kit"]
    # the default profile is the paper's cells, not every kit protocol: no crash, exhaustive or save-kill sweep
    assert paper.resolve()["protocols"] == PAPER_PROTOCOLS
    assert not {"crash", "exhaustive", "savekill", "tamper"} & set(PAPER_PROTOCOLS)
    assert set(PROTOCOLS) <= set(PAPER_PROTOCOLS) and set(PROTOCOLS) <= set(kit.resolve()["protocols"])
    assert paper.resolve()["race_max_trials"] == 3 and paper.resolve()["answers_n"] == [2]
    assert len(paper.plan(paper.resolve())) == 10  # two baselines, five kit cells, three counter-flow protocols


def test_the_paper_campaign_shares_drift_with_the_kit_campaign() -> None:
    from probes.studies.drift.campaign import side_env
    from probes.studies.drift.targets import by_campaign

    paper, kit = by_campaign("crewai"), by_campaign("crewai_kit")
    assert (paper.dist, paper.pin, paper.newest) == (kit.dist, kit.pin, kit.newest)
    assert side_env(paper, paper.newest) == side_env(kit, kit.newest)


def test_no_harness_errors(run: CampaignRun) -> None:
    assert run.harness_errors == []
    assert {r.observations.get("framework_versions", {}).get("crewai") for r in run.receipts} - {None} == {"1.15.2"}


def test_persist_restore_reruns_s1_as_the_paper_reports(run: CampaignRun) -> None:
    """Legacy persist.exception and persist.sigkill: counter 12 where exactly-once predicts 11, EO and PC D
    (CR-6: every @start method executes when the flow resumes), LV ✓."""
    c, seen = cells(run), counters(run)
    for path in (PERSIST_RAISE, PERSIST_KILL):
        assert seen[path]["resumed_from"] == {"counter": 1}, path  # @persist saved the state after s1
        assert (seen[path]["counter"], seen[path]["exactly_once_predicts"]) == (12, 11), path
        eo, pc, lv = c[("EO", path)], c[("PC", path)], c[("LV", path)]
        assert eo.label.value == "D" and eo.evidence["effect_counts"] == {"e1": 2, "e2": 1} and eo.doc.source == "CR-6"
        assert pc.label.value == "D" and pc.evidence["reentered"] == {"s1": 1} and pc.doc.source == "CR-6"
        assert lv.label.value == "✓"
        assert "counter 12 where exactly-once predicts 11" in eo.summary
    assert seen[PERSIST_RAISE]["first"].startswith("crashed") and seen[PERSIST_KILL]["first"] == "killed"


def test_restoring_a_completed_flow_runs_it_again(run: CampaignRun) -> None:
    """Legacy persist.completed: 11 -> 22, every effect again, EO and PC D (the durable prefix taken at the restore)."""
    c, seen = cells(run), counters(run)[COMPLETED]
    assert (seen["first_counter"], seen["resumed_from"], seen["counter"]) == (11, {"counter": 11}, 22)
    assert seen["exactly_once_predicts"] == 11 and seen["effects"] == {"e1": 2, "e2": 2}
    pc = c[("PC", COMPLETED)]
    assert pc.label.value == "D" and pc.evidence["durable_prefix"] == ["s1", "s2"]
    assert "at the recovery" in pc.summary
    assert c[("EO", COMPLETED)].label.value == "D"


def test_a_checkpoint_restore_forgets_what_the_checkpoint_records(run: CampaignRun) -> None:
    """Legacy checkpoint.exception: the most advanced checkpoint records s1 completed at counter 1, the flow
    restored from it begins at counter 0 with nothing completed and runs s1 again: counter 11, s1 twice,
    EO and PC ✗ against CR-1 ("Completed tasks are skipped"). LV ✓ is new: the legacy cell had none."""
    c, seen = cells(run), counters(run)[CHECKPOINT]
    assert seen["workflow"] == "counter-checkpoint"
    assert {k: seen["resumed_from"][k] for k in ("completed_methods", "counter")} == {"completed_methods": ["s1"],
                                                                                    "counter": 1}
    assert seen["before_kickoff"] == {"completed_methods": [], "counter": 0}
    assert seen["counter"] == 11 and seen["effects"] == {"e1": 2, "e2": 1}
    for prop in ("EO", "PC"):
        v = c[(prop, CHECKPOINT)]
        assert v.label.value == "✗" and v.doc.source == "CR-1" and v.doc.stance == "claims", (prop, v.summary)
    assert c[("LV", CHECKPOINT)].label.value == "✓"


def test_the_human_feedback_pause(run: CampaignRun) -> None:
    """Legacy feedback.once (✓), feedback.twice (CO ✓: the second answer refused; FD n/a) and
    feedback.concurrent (CO D, CR-16). The kit's fork protocol decides FD from what the second answer got
    (a loud refusal: the retry side, D by CR-17's "raises if no pending feedback exists") where the
    legacy campaign said n/a; its race rule states no LV ✓ from three clean trials (legacy: ✓)."""
    c = cells(run)
    for key in [("EO", "baseline:yes"), ("LV", "baseline:yes"), ("EO", "park-kill"), ("PC", "park-kill"),
                ("LV", "park-kill"), ("CO", "retry:same-pause×2"), ("CO", "stray-after-completion"),
                ("EO", "stray-after-completion")]:
        assert c[key].label.value == "✓", (key, c[key].summary)
    fork = c[("FD", "fork:same-pause")]
    assert fork.label.value == "D" and fork.doc.source == "CR-17" and "refused loudly" in fork.summary
    race = c[("CO", "race:same-pause×2")]
    assert race.label.value == ("D" if race.evidence["gate_fires"] > 1 else "?")
    assert c[("LV", "race:same-pause×2")].label.value in ("✓", "?")


def test_the_published_values_are_read_from_the_kit_receipts(run: CampaignRun) -> None:
    """The paper layer over this run's receipts: the @persist counters reproduce the paper's; the checkpoint
    restore's counter is 11 where the paper has 12 (with s1 twice in both), as the legacy campaign found."""
    from probes.headline import DIFFERS, REPRODUCED, VARIANT, Measured, chapter_rows, compare, load_published
    from probes.paper.crewai import headlines

    got = headlines(run.receipts)
    published = {e["id"]: e for e in load_published() if e["campaign"] == "crewai"}
    assert set(got) == set(published)
    assert all(isinstance(m, Measured) for m in got.values())
    assert got["crewai.persist_counter"].value == {"counter": 12, "expected": 11, "reps": 1}
    assert got["crewai.completed_restore"].value == {"counter": 22, "counter_before": 11}
    assert got["crewai.checkpointconfig"].value == {"counter": 11, "s1_runs": 2, "reps": 1}
    assert "resumed from the saved counter 1 and ended at 12 where exactly-once predicts 11" in \
        got["crewai.persist_counter"].why
    assert "CR-6, documents the deviation" in got["crewai.persist_counter"].why
    assert "'completed_methods': ['s1'], 'counter': 1" in got["crewai.checkpointconfig"].why
    assert "began from {'completed_methods': [], 'counter': 0}" in got["crewai.checkpointconfig"].why
    statuses = {hid: compare(published[hid], m, "").status for hid, m in got.items()}
    assert statuses == {"crewai.persist_counter": REPRODUCED, "crewai.completed_restore": REPRODUCED,
                        "crewai.checkpointconfig": DIFFERS}
    assert {row.status for row in chapter_rows(campaigns.get("crewai"), run)} == {VARIANT}  # quick: never scored


def test_the_paper_layer_says_why_without_its_receipts(run: CampaignRun) -> None:
    from probes.paper.crewai import headlines

    others = [r for r in run.receipts if r.args["protocol"] not in ("persist_restore", "checkpoint_restore")]
    got = headlines(others)
    assert "persist_restore protocol" in got["crewai.persist_counter"]
    assert "checkpoint_restore protocol" in got["crewai.checkpointconfig"]


def test_a_value_that_differs_between_repetitions_is_listed() -> None:
    """Every repetition is read (``reps`` > 1): a counter the repetitions disagree on is listed, each value
    once, and the note says which key moved; one they agree on is given once."""
    import types

    from probes.paper.crewai import headlines

    def rep(i: int, counter: int, s1: int) -> types.SimpleNamespace:
        seen = {"counter": counter, "exactly_once_predicts": 11, "resumed_from": {"counter": 1, "completed_methods":
                                                                                  ["s1"]},
                "before_kickoff": {"counter": 0, "completed_methods": []}, "effects": {"e1": s1, "e2": 1}}
        return types.SimpleNamespace(probe=f"checkpoint_restore.file.rep{i}", verdicts=[],
                                     observations={"counter": {CHECKPOINT: seen}})

    same = headlines([rep(1, 12, 2), rep(2, 12, 2), rep(3, 12, 2)])["crewai.checkpointconfig"]
    assert same.value == {"counter": 12, "s1_runs": 2, "reps": 3} and "The same in each of 3" in same.why
    assert same.receipts == tuple(f"checkpoint_restore.file.rep{i}" for i in (1, 2, 3))
    mixed = headlines([rep(1, 12, 2), rep(2, 11, 1)])["crewai.checkpointconfig"]
    assert mixed.value == {"counter": [11, 12], "s1_runs": [1, 2], "reps": 2}
    assert "The counter and s1_runs differ across the 2 repetitions" in mixed.why


def test_every_verdict_is_decided_again_from_its_receipt(run: CampaignRun) -> None:
    """The counter flow's paths (``counter:...``) and the restore's prefix taken at the recovery are the
    judge's recorded calls: the plain judge replays them."""
    from probes.frameworks.crewai.adapter import CrewAIAdapter
    from probes.rejudge import kit_verdicts, stable

    for r in run.receipts:
        again = kit_verdicts(r, CrewAIAdapter)
        assert again is not None and [stable(v) for v in again] == [stable(v) for v in r.verdicts], r.probe
    [completed] = [r for r in run.receipts if r.args["protocol"] == "completed_restore"]
    assert {"call": "prefix", "path": COMPLETED, "at": "recover"} in completed.observations["judged"]


def test_view_has_no_run_varying_values(run: CampaignRun) -> None:
    text = (run.directory / VIEW_NAME).read_text()
    assert "/tmp" not in text and not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", text)  # no paths, no flow ids
    assert json.loads(text)["probes"]


def test_the_counter_protocols_give_the_same_verdicts_again(run: CampaignRun, tmp_path) -> None:
    from probes.rejudge import stable

    campaign = campaigns.get("crewai")
    again = run_campaign(campaign, campaign.resolve({"protocols": ["persist_restore", "completed_restore"]},
                                                    quick=True), receipts_root=tmp_path)
    first = {r.probe: [stable(v) for v in r.verdicts] for r in run.receipts}
    assert again.harness_errors == [] and len(again.receipts) == 2
    assert all(first[r.probe] == [stable(v) for v in r.verdicts] for r in again.receipts)


def test_bad_parameter_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="not allowed"):
        campaigns.get("crewai").resolve({"protocols": ["nonsense"]})
    with pytest.raises(UsageError):
        campaigns.get("crewai").resolve({"race_min_trials": 5})  # more than the profile's 3 trials
