"""Apache Burr 0.43.0 under the kit, in its side environment (created once, cached).

The first run creates ``apache-burr-py311-<hash>`` in the user cache with pip (apache-burr has
no dependencies: a few seconds); later runs reuse it. Asserts what the kit measured on this
release; a change here is a behaviour change of the framework (or of the kit).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from tests.fixtures.hermetic import audit

MODE = "resume-at-next-action"


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """(property, path) -> (verdict, the receipt's observations) of a quick subset of the protocols."""
    campaign = campaigns.get("burr")
    params = campaign.resolve({"protocols": ["baseline", "crash", "parkkill", "stray", "answers", "fork", "savekill",
                                             "tamper", "change"],
                               "crash_points": ["s1.effect", "s2.effect"], "crash_hows": ["kill", "raise"],
                               "answers_n": [2], "tamper_limit": 2}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("burr"))
    assert run.harness_errors == []
    # (the protocols of isolated runs, savekill and tamper, keep no versions of their own: the others say)
    assert {r.observations["framework_versions"]["apache-burr"] for r in run.receipts
            if "framework_versions" in r.observations} == {"0.43.0"}
    return {(v.property.value, v.path): (v, r.observations) for r in run.receipts for v in r.verdicts}


def label(measured: dict, prop: str, path: str) -> str:
    return measured[(prop, path)][0].label.value


def test_a_clean_run_completes_with_each_effect_once(measured: dict) -> None:
    for answer in ("yes", "no"):
        v, _ = measured[("EO", f"baseline:{answer}")]
        assert v.label.value == "✓" and v.evidence["effect_counts"] == {"e1": 1, "e2": 1}
        assert label(measured, "LV", f"baseline:{answer}") == "✓"


def test_a_crash_inside_an_action_runs_that_action_again_as_documented(measured: dict) -> None:
    """Recovery resumes after the latest completed action: the interrupted one runs again (D), never the one
    before it (PC)."""
    for how in ("kill", "raise"):
        v, obs = measured[("EO", f"crash:{how}@s2.effect/{MODE}")]
        assert v.evidence["effect_counts"] == {"e1": 1, "e2": 2}
        assert v.label.value == "D" and "the latest fully completed action" in v.doc.quote
        assert label(measured, "PC", f"crash:{how}@s2.effect/{MODE}") == "✓"
        assert label(measured, "LV", f"crash:{how}@s2.effect/{MODE}") == "✓"
        assert obs["children"]["run/recover"]["result"]["status"] == "paused"  # halted before s2 again


def test_a_failed_first_action_is_saved_as_failed_and_restarted_from_it(measured: dict) -> None:
    """A raise in s1 leaves a state saved with status "failed": recovery starts at s1 from it (e1 twice, PC ✓);
    a kill in s1 leaves nothing saved, so the run is started over (PC n/a)."""
    raised, obs = measured[("EO", f"crash:raise@s1.effect/{MODE}")]
    assert raised.evidence["effect_counts"] == {"e1": 2, "e2": 1} and raised.label.value == "D"
    assert label(measured, "PC", f"crash:raise@s1.effect/{MODE}") == "✓"
    assert obs["children"]["run/recover"]["result"]["handle"]["sequence_id"] == 1  # after the failed save 0
    assert label(measured, "PC", f"crash:kill@s1.effect/{MODE}") == "n/a"


def test_park_kill_and_a_stray_answer_are_survived(measured: dict) -> None:
    assert label(measured, "EO", "park-kill") == "✓" and label(measured, "LV", "park-kill") == "✓"
    # without a handle the latest state is loaded: the application is at its end, and nothing runs
    assert label(measured, "CO", "stray-after-completion") == "✓"
    assert label(measured, "EO", "stray-after-completion") == "✓"


def test_answering_the_same_sequence_id_again_runs_the_action_before_the_save_refuses(measured: dict) -> None:
    """The handle names the sequence id the application halted at: answered again, s2 runs (e2 again), and only
    its save fails on the table's primary key (an IntegrityError, after the effect)."""
    retry, obs = measured[("CO", "retry:same-pause×2")]
    assert retry.label.value == "U" and retry.evidence["gate_fires"] == 2
    assert obs["children"]["run/answer-2"]["result"]["error"] == "IntegrityError"
    fork, obs = measured[("FD", "fork:same-pause")]
    assert fork.label.value == "U" and fork.evidence["observed"] is None
    assert fork.evidence["side"].startswith("neither")
    assert obs["fork"] == {"first": "completed", "second": "raised", "second_error": "IntegrityError"}


def test_a_kill_inside_the_save_is_a_kill_before_the_action_completed(measured: dict) -> None:
    """Save 1 is s1's (nothing durable yet: started over), save 2 is s2's (s2 runs again); both D."""
    first, _ = measured[("EO", "save-kill:save.write#1")]
    second, _ = measured[("EO", "save-kill:save.write#2")]
    assert first.evidence["effect_counts"] == {"e1": 2, "e2": 1}
    assert second.evidence["effect_counts"] == {"e1": 1, "e2": 2}
    assert first.label.value == second.label.value == "D"
    assert label(measured, "PC", "save-kill:save.write#2") == "✓"


def test_an_edited_state_is_taken_as_it_is(measured: dict) -> None:
    """The untyped state declares no required field (the actions read none), so every edit is valid: the empty
    state is accepted and the run completes as before (the position column restores the step)."""
    v, obs = measured[("CV", "tamper:empty-object")]
    assert obs["state_model"]["required"] == [] and v.framework == "burr · undetected forgery"
    assert label(measured, "LV", "tamper:empty-object") == "✓"


def test_a_deploy_that_moves_the_answered_step_behind_the_done_one_skips_it_silently(measured: dict) -> None:
    """The saved position names the last completed action: under code where nothing follows it, the application
    is at its end, so the answer is never consumed and the run reports completed (a silent skip, U); a renamed
    paused step is simply the next action and runs."""
    skipped, obs = measured[("EO", "change:steps-swapped")]
    assert skipped.label.value == "U" and skipped.evidence["effect_counts"]["e2"] == 0
    assert label(measured, "LV", "change:steps-swapped") == "U"
    assert label(measured, "EO", "change:paused-step-renamed") == "✓"
    assert label(measured, "LV", "change:paused-step-renamed") == "✓"


def test_the_adapter_is_hermetic(tmp_path: Path) -> None:
    """A start and a resume write nothing outside the probe's directory (HOME stays empty: 0.43.0 has no
    telemetry and no config file) and open no socket."""
    from probes.frameworks.burr.campaign import ENV

    out = audit(ENV.ensure().python, "probes.frameworks.burr.adapter:BurrAdapter", "sqlite", "store.sqlite",
                tmp_path)
    assert (out["paused"], out["done"]) == ("paused", "completed")
    assert out["outside"] == [] and out["home"] == []
