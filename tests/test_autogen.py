"""The paper's AutoGen campaign, measured through the kit (quick profile, the real framework, no
model), and its published value read from the receipts by the paper layer (``probes.paper.autogen``).

Each test names the cell of the legacy campaign (``data/reference/autogen`` before issue 25:
a single ``AssistantAgent`` with a scripted model, saved per turn by the harness) it carries
over, and asserts what the kit measures on the ``GraphFlow`` team of ``probes.frameworks.autogen``.
Where the two differ, the test says why.

What the paper reports (``autogen.tamper``): a tampered state (a message of an unknown type) is
rejected at ``load_state``. It is -- and five type-valid forgeries are loaded and run on without
any error, so the claim that AutoGen refuses tampered state loudly is contradicted, as it was
by the legacy campaign's receipts.
"""

from __future__ import annotations

import pytest

from tests.installed import require

require("autogen_agentchat")

from probes import campaigns  # noqa: E402
from probes.core.campaign import CampaignRun, run_campaign  # noqa: E402
from probes.core.checker import TamperOutcome  # noqa: E402
from probes.core.receipt import VIEW_NAME  # noqa: E402
from probes.kit.judge import FORGERY_ROW  # noqa: E402
from probes.kit.runtime import STEP_POINTS  # noqa: E402

RESULT = "s2 served 'yes'"
FORGED = f"autogen · {FORGERY_ROW}"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> CampaignRun:
    campaign = campaigns.get("autogen")
    done = run_campaign(campaign, campaign.resolve(quick=True), receipts_root=tmp_path_factory.mktemp("receipts"))
    assert done.harness_errors == []
    versions = {r.observations.get("framework_versions", {}).get("autogen-agentchat") for r in done.receipts}
    assert versions - {None} == {"0.7.5"}  # (the forgeries' sub-runs keep theirs per run)
    return done


@pytest.fixture(scope="module")
def cells(run: CampaignRun) -> dict:
    return {(v.framework, v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def _observed(run: CampaignRun, protocol: str) -> dict:
    return next(r.observations[protocol] for r in run.receipts if r.args["protocol"] == protocol)


def test_the_paper_campaign_is_the_kit_over_the_autogen_adapter() -> None:
    from probes.kit.suite import KIT_ADAPTERS

    paper, kit = campaigns.get("autogen"), campaigns.get("autogen_kit")
    assert paper.in_default_run and not kit.in_default_run
    assert KIT_ADAPTERS["autogen"] == KIT_ADAPTERS["autogen_kit"]
    # the default profile is the paper's cells, not every kit protocol: no sweep, no race
    protocols = paper.resolve()["protocols"]
    assert {"crash", "parkkill", "answers", "fork", "restore", "forgeries"} <= set(protocols)
    assert not {"exhaustive", "savekill", "race", "stall", "partition", "tamper"} & set(protocols)
    assert paper.resolve()["crash_points"] == list(STEP_POINTS) and paper.resolve()["crash_hows"] == ["kill"]
    assert {"exhaustive", "restore", "forgeries"} <= set(kit.resolve()["protocols"])


def test_a_kill_before_the_effect_recovers_cleanly(cells: dict) -> None:
    """Legacy ``kill:before-effect`` (EO, PC, LV ✓): here the answered step killed before ``e2``."""
    path = "crash:kill@s2.consumed/latest-team-state"
    for prop in ("EO", "PC", "LV"):
        assert cells[("autogen", prop, path)].label.value == "✓"
    assert cells[("autogen", "EO", path)].evidence["effect_counts"] == {"e1": 1, "e2": 1}


def test_a_kill_after_the_effect_fires_it_again(cells: dict) -> None:
    """Legacy ``kill:after-effect`` (EO U, the charge twice; PC and LV ✓): the effect fired, the state
    saved at the pause did not record it, so recovery answers the pause again."""
    path = "crash:kill@s2.effect/latest-team-state"
    eo = cells[("autogen", "EO", path)]
    assert eo.label.value == "U" and eo.doc is None  # AG-5: the documentation is silent on crashes
    assert eo.evidence["effect_counts"] == {"e1": 1, "e2": 2} and eo.evidence["duplicated"] == {"e2": 2}
    assert cells[("autogen", "PC", path)].label.value == "✓"
    assert cells[("autogen", "LV", path)].label.value == "✓"


def test_a_kill_after_the_save_loses_nothing(cells: dict) -> None:
    """Legacy ``kill:after-save`` (EO, PC, LV ✓): killed while parked at the saved pause."""
    for prop in ("EO", "PC", "LV"):
        assert cells[("autogen", prop, "park-kill")].label.value == "✓"
    assert cells[("autogen", "PC", "park-kill")].evidence["durable_prefix"] == ["s1"]


def test_a_completed_teams_state_restored_twice_runs_the_graph_again(run: CampaignRun, cells: dict) -> None:
    """Legacy ``save-load:double-restore`` (EO ✓, effects ``{'charge:o1': 1}``) differs here, from the
    workload: the legacy agent's scripted model answered a conversation without a new request with
    the text ``done``, while a completed ``GraphFlow`` is reset to its first step (its saved ``ready``
    queue), so running its restored state on runs ``s1`` again, up to the handoff, in each process."""
    eo = cells[("autogen", "EO", "save-load:double-restore")]
    assert eo.label.value == "U" and eo.evidence["effect_counts"] == {"e1": 3, "e2": 1}
    assert _observed(run, "restore")["restored"] == ["paused", "paused"]


def test_a_saved_pause_addressed_twice(cells: dict) -> None:
    """Legacy ``save-load:double-restore`` FI was n/a (the legacy saves had no addressed pause). The
    kit's adapter addresses a pause by its saved state: answered twice, the gated effect fires twice
    (CO U, AG-8 silent); answered again with another answer, it serves that answer (FD ✓)."""
    co = cells[("autogen", "CO", "retry:same-pause×2")]
    assert co.label.value == "U" and co.evidence["gate_fires"] == 2
    fd = cells[("autogen", "FD", "fork:same-pause")]
    assert fd.label.value == "✓" and fd.evidence["observed"] == "s2 served 'no'"


@pytest.mark.parametrize("kind,agent", [("structural", "s2"), ("wrong-content-type", "s2"),
                                        ("team-unknown-thread-type", "GraphManager")])
def test_an_invalid_state_is_refused_at_load_state(run: CampaignRun, cells: dict, kind: str, agent: str) -> None:
    """Legacy ✓ "refused loudly at load": a message AgentChat's own models reject."""
    cv = cells[("autogen", "CV", f"tamper:{kind}")]
    assert cv.label.value == "✓" and cv.evidence["invalid_edit"] is True and cv.evidence["error"] == "ValueError"
    assert cv.evidence["effects_before_refusal"] == {}
    seen = _observed(run, "forgeries")[kind]
    assert seen["agent"] == agent and seen["refused_at"] == "load_state" and seen["model_errors"]


def test_a_speaker_not_in_the_team_is_refused_in_the_run(run: CampaignRun, cells: dict) -> None:
    """Legacy ✓ "refused loudly at run (IndexError)": here a ``RuntimeError`` once the graph looks the
    speaker up. A valid value for the manager's plain dict: the undetected-forgery row, detected."""
    cv = cells[(FORGED, "CV", "tamper:speaker-out-of-range")]
    assert cv.label.value == "✓" and cv.evidence["error"] == "RuntimeError"
    assert _observed(run, "forgeries")["speaker-out-of-range"]["refused_at"] == "run"


@pytest.mark.parametrize("kind", ["removed-context", "wrong-version", "forged-unanswered-call"])
def test_forgeries_accepted_with_the_run_unchanged(run: CampaignRun, cells: dict, kind: str) -> None:
    """Legacy U "accepted silently": loaded and run to the workflow's own result, no error anywhere."""
    cv = cells[(FORGED, "CV", f"tamper:{kind}")]
    assert cv.label.value == "U" and cv.evidence["refused"] is False and cv.evidence["invalid_edit"] is False
    assert cv.evidence["outcome"] == TamperOutcome.UNCHANGED.value
    lv = cells[("autogen", "LV", f"tamper:{kind}")]
    assert lv.label.value == "✓" and lv.evidence["outcome"] == RESULT
    assert _observed(run, "forgeries")[kind]["refused_at"] is None


def test_an_answered_handoff_made_unanswered_is_answered_again(cells: dict) -> None:
    """The completed run's state forged back to its pause: recovery finds the pause and the answer is
    taken again, so ``e2`` fires a second time in the run -- once after the edit, as for any answer."""
    cv = cells[(FORGED, "CV", "tamper:forged-unanswered-call")]
    assert cv.evidence["effects_after_edit"] == {"e2": 1}
    assert cv.history.effect_counts() == {"e1": 1, "e2": 2}


@pytest.mark.parametrize("kind,refired", [("rewound-history", {"e1": 2}), ("rewound-speaker", {"e1": 1})])
def test_a_rewound_team_runs_its_first_step_again(run: CampaignRun, cells: dict, kind: str, refired: dict) -> None:
    """Legacy U: the rewound history re-fired the charge; the rewound speaker spoke again. Here the
    rewound thread (or the asking step made next again) runs ``s1`` again and hands off to the user
    again: ``e1`` fires again, the answered step never runs, the run does not complete."""
    cv = cells[(FORGED, "CV", f"tamper:{kind}")]
    assert cv.label.value == "U" and cv.evidence["outcome"] == TamperOutcome.CHANGED.value
    assert cv.evidence["effects_after_edit"] == refired
    assert cells[("autogen", "LV", f"tamper:{kind}")].label.value == "✗"  # AG-3 claims a saved team resumes
    assert _observed(run, "forgeries")[kind]["ended"] == "paused"


def test_the_published_value_is_read_from_the_kit_receipts(run: CampaignRun) -> None:
    """The paper layer over this run's receipts: the value the legacy campaign's receipts gave."""
    from probes.headline import CONTRADICTED, VARIANT, Measured, chapter_rows, compare, load_published
    from probes.paper.autogen import HEADLINE, headlines

    measured = headlines(run.receipts)[HEADLINE]
    assert isinstance(measured, Measured)
    assert measured.value == {
        "rejected": True, "reps": 1, "kinds": 9,
        "refused": ["speaker-out-of-range", "structural", "team-unknown-thread-type", "wrong-content-type"],
        "accepted_silently": ["tamper:forged-unanswered-call", "tamper:removed-context", "tamper:rewound-history",
                              "tamper:rewound-speaker", "tamper:wrong-version"]}
    assert measured.contradicted_by == tuple(measured.value["accepted_silently"])
    assert "4 were refused in every repetition" in measured.contradiction
    assert "structural (at load_state)" in measured.contradiction
    assert "speaker-out-of-range (in the run after load_state)" in measured.contradiction
    assert "rewound-history (behaviour changed)" in measured.contradiction
    assert "met ValueError at load_state: rejected yes" in measured.why
    # the published value (rejected at load_state) matches; the accepted forgeries contradict the claim
    # that AutoGen refuses tampered state loudly: the status the legacy reference had
    [entry] = [e for e in load_published() if e["id"] == HEADLINE]
    assert compare(entry, measured, "").status == CONTRADICTED
    [row] = chapter_rows(campaigns.get("autogen"), run)  # this quick run is a variant: never scored
    assert row.status == VARIANT


def test_the_paper_layer_says_why_without_forgery_receipts(run: CampaignRun) -> None:
    from probes.paper.autogen import HEADLINE, headlines

    others = [r for r in run.receipts if r.args["protocol"] != "forgeries"]
    assert headlines(others)[HEADLINE] == "no forgery probe in these receipts (run AutoGen's forgeries protocol)"


def test_view_has_no_temp_paths(run: CampaignRun) -> None:
    assert "/tmp" not in (run.directory / VIEW_NAME).read_text()
