"""pydantic-graph 1.107.1 under the kit (quick profile, the real framework).

The durable state is ``FileStatePersistence``'s JSON file of snapshots. Asserts what the
kit measured on this release: a change is a behaviour change of the framework (or of
the kit) worth a look, not noise.
"""

from __future__ import annotations

import pytest

from tests.installed import require

require("pydantic_graph")

from probes.core.campaign import run_campaign  # noqa: E402
from probes import campaigns  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    campaign = campaigns.get("pydantic_graph_kit")
    params = campaign.resolve({"protocols": ["parkkill", "stray", "answers", "race", "fork", "tamper", "savekill"],
                               "tamper_limit": 2}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("pydantic_graph_kit"))
    assert run.harness_errors == []
    assert {r.observations.get("framework_versions", {}).get("pydantic-graph")
            for r in run.receipts} - {None} == {"1.107.1"}
    return run


@pytest.fixture(scope="module")
def verdicts(run) -> dict:
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def _refusals(v) -> list:
    return [e.get("value") for e in v.evidence.get("witness", []) if e["kind"] == "refuse"]


def _errors(run, probe: str) -> list:
    """What each child of one probe raised, in start order (None: it did not raise)."""
    children = next(r.observations["children"] for r in run.receipts if r.probe.startswith(probe))
    return [c["result"].get("error") for c in children.values()]


def test_a_paused_snapshot_survives_a_kill_while_parked(verdicts: dict) -> None:
    v = verdicts[("EO", "park-kill")]
    assert v.label.value == "✓" and v.evidence["effect_counts"] == {"e1": 1, "e2": 1}


def test_a_claimed_pause_is_answered_once(run, verdicts: dict) -> None:
    # load_next claims the 'created' snapshot: every later answer finds nothing to restore
    retry = verdicts[("CO", "retry:same-pause×3")]
    assert retry.label.value == "✓" and retry.evidence["gate_fires"] == 1
    assert sorted(map(str, _errors(run, "answers."))) == ["GraphRuntimeError", "GraphRuntimeError", "None", "None"]
    assert verdicts[("CO", "race:same-pause×2")].evidence["gate_fires"] <= 1
    assert verdicts[("CO", "stray-after-completion")].evidence["gate_fires"] == 1
    # ...so a different second answer is refused, not served (FD does not hold)
    assert verdicts[("FD", "fork:same-pause")].label.value != "✓"


def test_tampered_snapshots(verdicts: dict) -> None:
    empty = verdicts[("CV", "tamper:empty-object")]
    assert empty.label.value == "✓" and empty.evidence["error"] == "ValidationError"
    assert verdicts[("CV", "tamper:drop:duration")].label.value == "U"  # a default fills it in: accepted
    forged_id = verdicts[("CV", "tamper:other-string:id")]  # type-valid: the undetected-forgery row
    assert forged_id.framework.endswith(" · undetected forgery")
    assert forged_id.evidence["effects_after_edit"] == {"e2": 1}  # load_next goes by status, not id


def test_a_kill_inside_the_save_leaves_its_lock_file_and_blocks_the_run(verdicts: dict) -> None:
    kills = {path: v for (prop, path), v in verdicts.items() if prop == "LV" and path.startswith("save-kill:")}
    assert len(kills) >= 10  # a clean run writes the file a dozen times
    stuck = [v for v in kills.values() if v.label.value != "✓"]
    assert len(stuck) == len(kills)  # every kill inside a write: no recovery completes
    assert all("TimeoutError" in _refusals(v) for v in stuck)  # waiting for the dead process's lock
    assert all(verdicts[("EO", path)].label.value == "✓" for path in kills)  # nothing ran twice
