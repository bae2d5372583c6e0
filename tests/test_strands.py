"""Strands Agents 1.62.0 under the kit, in its side environment (created once, cached).

The first run creates ``strands-agents-py311-<hash>`` in the user cache with pip (under a
minute from the local wheel mirror); later runs reuse it. Asserts what the kit measured on
this release; a change here is a behaviour change of the framework (or of the kit).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from tests.fixtures.hermetic import audit


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    campaign = campaigns.get("strands")
    params = campaign.resolve({"protocols": ["baseline", "crash", "fork", "answers"], "crash_points": ["s2.effect"],
                               "crash_hows": ["kill"], "answers_n": [2]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("strands"))
    assert run.harness_errors == []
    assert {r.observations.get("framework_versions", {}).get("strands-agents") for r in run.receipts} == {"1.62.0"}
    return {(v.property.value, v.path): (v, r.observations) for r in run.receipts for v in r.verdicts}


def test_a_clean_run_completes_with_each_effect_once(verdicts: dict) -> None:
    for answer in ("yes", "no"):
        v, _ = verdicts[("EO", f"baseline:{answer}")]
        assert v.label.value == "✓" and v.evidence["effect_counts"] == {"e1": 1, "e2": 1}
        assert verdicts[("LV", f"baseline:{answer}")][0].label.value == "✓"


def test_an_answered_interrupt_is_gone_so_a_second_answer_is_refused(verdicts: dict) -> None:
    retry, _ = verdicts[("CO", "retry:same-pause×2")]
    assert retry.label.value == "✓" and retry.evidence["gate_fires"] == 1
    fork, obs = verdicts[("FD", "fork:same-pause")]
    assert fork.evidence["observed"] is None and fork.label.value == "U"  # no outcome for the second answer
    assert obs["fork"] == {"first": "completed", "second": "raised", "second_error": "ValueError"}


def test_a_kill_after_the_answer_runs_the_interrupted_tool_again_on_recovery(verdicts: dict) -> None:
    v, obs = verdicts[("EO", "crash:kill@s2.effect/session")]
    assert v.evidence["effect_counts"] == {"e1": 1, "e2": 2}
    assert v.label.value == "D" and "Second call to `event.interrupt()` returns user response." in v.doc.quote
    assert verdicts[("PC", "crash:kill@s2.effect/session")][0].label.value == "✓"  # s1 is not run again
    # the restored agent was still in its interrupt state: the recovery was a resume, in one operation
    assert obs["children"]["run/recover"]["result"]["status"] == "completed"


def test_the_adapter_is_hermetic(tmp_path: Path) -> None:
    """A start and a resume write nothing outside the probe's directory (HOME stays empty, no
    ``~/.strands``) and open no socket, with telemetry switched off by the adapter."""
    from probes.frameworks.strands.campaign import ENV

    out = audit(ENV.ensure().python, "probes.frameworks.strands.adapter:StrandsAdapter", "file", None, tmp_path,
                {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    assert (out["paused"], out["done"]) == ("paused", "completed")
    assert out["outside"] == [] and out["home"] == []
    assert (tmp_path / "work" / "sessions" / "session_kit" / "agents" / "agent_kit" / "agent.json").exists()
