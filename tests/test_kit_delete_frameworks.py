"""The delete protocol (``probes.kit.protocols.delete``) on the frameworks measured with the kit
beyond LangGraph (``tests/test_kit_delete.py``): Microsoft Agent Framework, Google ADK, agno,
OpenAI Agents and Strands, each deleting the run through its own API (``Adapter.delete``).

For each framework two things are asserted. The control: a paused run that no process holds is
deleted, and a recovery finds nothing (``found_after_delete`` is ``None``), so the deletion does
delete the run, and anything a delete cell finds again is the late writes' doing. The delete cells:
the run deleted while the process answering it is frozen (SIGSTOP) at ``s2.consumed`` and at
``s2.effect``, that process let go on, a recovery then looking.

MAF, ADK and agno run one delete cell per point, Strands too; OpenAI Agents runs both of its
recoveries. The side-environment frameworks are skipped unless their environment is built (the
framework is not installed in the main one; ``tests/test_google_adk.py`` and the like build it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.core.history import History, Kind
from probes.core.visibility import WRITE_AFTER_DELETE, found_after_delete
from probes.kit.protocols import Probe, Target
from probes.kit.suite import KIT_ADAPTERS, KIT_ENVS, adapter_class, operations_python
from tests.installed import require

POINTS = ["s2.consumed", "s2.effect"]


def _installed(name: str, module: str) -> None:
    """Skip unless campaign ``name``'s framework is installed: in the main environment (``require``), or
    in the campaign's own side environment, which is only looked at here (not built)."""
    campaigns.get(name)  # registers the campaign's adapter and side environment
    env = KIT_ENVS.get(name)
    if env is None:
        require(module)
    elif not env.ready:
        pytest.skip(f"{module} is not installed (side environment {env.name} not built)")


def _control(name: str, backend: str, mode: str, root: Path) -> tuple[dict[str, Any], History, int]:
    """A paused run nobody holds, deleted through the adapter's ``delete``, then recovered (``mode``):
    the recovery's status, the history and where the recovery's events begin."""
    adapter = KIT_ADAPTERS[name]
    cls = adapter_class(adapter)
    env = tuple(sorted(cls.environment(root / "environment").items()))
    target = Target(adapter, cls, backend, operations_python(KIT_ENVS.get(name)), 120.0, env)
    probe = Probe(target, root, lambda run: str(root / f"{run}.db") if backend == "sqlite" else None)
    run = probe.run("run")
    assert run.start()["status"] == "paused"
    assert run.op("delete", "delete")["status"] == "deleted"
    mark = len(probe.read())
    status = run.op("after", "recover", mode=mode, answer=cls.answers[0])
    return status, probe.read(), mark


def _nothing_found(name: str, backend: str, mode: str, root: Path) -> None:
    """The control as most adapters see it: the recovery finds no durable state at all."""
    status, h, mark = _control(name, backend, mode, root)
    assert status["status"] == "nothing-durable"
    assert found_after_delete(h, h.events[mark:], None) is None


def _cells(name: str, root: Path, **params: Any) -> dict[str, Any]:
    """The delete cells at both points (quick profile: the first recovery mode unless ``params`` say)."""
    campaign = campaigns.get(name)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["delete"], "stall_points": POINTS, **params},
                                                  quick=True), root)
    assert run.harness_errors == []
    return {r.probe: r for r in run.receipts}


def _labels(receipt: Any) -> dict[str, str]:
    return {v.property.value: v.label.value for v in receipt.verdicts}


def _anomalies(receipt: Any) -> list[str]:
    vo = next(v for v in receipt.verdicts if v.property.value == "VO")
    return [a["anomaly"] for a in vo.evidence.get("anomalies", [])]


# --- Microsoft Agent Framework: FileCheckpointStorage.delete of every checkpoint of the workflow --------

def test_maf_deletes_the_checkpoints_of_a_workflow_nobody_holds(tmp_path: Path) -> None:
    _installed("maf", "agent_framework")
    # list_checkpoint_ids then delete each: the checkpoints directory is empty, and the recovery (the latest
    # checkpoint) has no checkpoint to load
    _nothing_found("maf", "file", "latest-checkpoint", tmp_path)


def test_maf_late_checkpoints_of_a_frozen_worker_bring_a_deleted_workflow_back(tmp_path: Path) -> None:
    _installed("maf", "agent_framework")
    receipts = _cells("maf", tmp_path)
    assert len(receipts) == len(POINTS)
    for receipt in receipts.values():
        seen = receipt.observations["delete"]
        # the frozen worker holds the workflow in memory: woken, it finishes s2 and saves a checkpoint per
        # superstep into the storage it was given (the storage does not know the workflow was deleted), so
        # the recovery loads the worker's last checkpoint and finds the run over
        assert seen["deleted"] == "deleted" and seen["holder"].startswith("completed")
        assert seen["recovery found"].startswith("completed")
        # e2 fired once (by the holder) and nothing ran twice; the deleted run is back: VO's write-after-delete
        assert _labels(receipt) == {"EO": "✓", "CO": "✓", "VO": "U"}
        assert _anomalies(receipt) == [WRITE_AFTER_DELETE]


# --- Google ADK: the session service's delete_session ------------------------------------------------

def test_adk_deletes_a_session_nobody_holds(tmp_path: Path) -> None:
    _installed("google_adk", "google.adk")
    # SqliteSessionService.delete_session deletes the session's row and its events with it: the recovery
    # finds no event to resume the invocation from
    _nothing_found("google_adk", "sqlite", "resume-invocation", tmp_path)


def test_adk_refuses_the_late_events_of_a_frozen_worker(tmp_path: Path) -> None:
    _installed("google_adk", "google.adk")
    receipts = _cells("google_adk", tmp_path)
    assert len(receipts) == len(POINTS)
    for receipt in receipts.values():
        seen = receipt.observations["delete"]
        # append_event first looks the session up in storage ("Check for stale session"): gone, it raises
        # SessionNotFoundError, so the woken worker's events never land and the deletion holds
        assert seen["holder"] == "raised SessionNotFoundError: Session s not found."
        assert (seen["recovery found"], seen["recovery"]) == ("nothing to resume", "nothing-durable")
        # the worker was frozen inside s2, so e2 fired once; the run was deleted before it completed
        assert _labels(receipt) == {"EO": "✓", "CO": "✓", "VO": "✓"}


# --- agno: Workflow.delete_session ------------------------------------------------------------------

def test_agno_deletes_a_session_nobody_holds(tmp_path: Path) -> None:
    _installed("agno", "agno")
    # the database's delete_session deletes the session's row and its runs in one transaction: the
    # recovery finds no run to continue
    _nothing_found("agno", "sqlite", "continue-run", tmp_path)


def test_agno_late_upsert_of_a_frozen_worker_brings_a_deleted_session_back(tmp_path: Path) -> None:
    _installed("agno", "agno")
    receipts = _cells("agno", tmp_path)
    assert len(receipts) == len(POINTS)
    for receipt in receipts.values():
        seen = receipt.observations["delete"]
        # the woken worker saves its session and run at the end (an upsert: it writes the row whether or not
        # it is still there), so the recovery finds the run stored, completed
        assert seen["holder"] == "completed with \"s2 served 'yes'\""
        assert seen["recovery found"] == "completed with \"s2 served 'yes'\""
        assert _labels(receipt) == {"EO": "✓", "CO": "✓", "VO": "U"}
        assert _anomalies(receipt) == [WRITE_AFTER_DELETE]


# --- OpenAI Agents: the session's clear_session (and the application's own RunState files) -----------

def test_openai_agents_deletes_a_session_nobody_holds(tmp_path: Path) -> None:
    _installed("openai_agents", "agents")
    # the run-state recovery finds no stored state (the application deleted its own files)
    _nothing_found("openai_agents", "sqlite", "run-state", tmp_path / "run-state")
    # the session recovery finds an empty session and starts the run over: s1 runs again, then it pauses
    status, h, mark = _control("openai_agents", "sqlite", "session", tmp_path / "session")
    after = h.events[mark:]
    assert status["status"] == "paused"
    assert [e.step for e in after if e.kind is Kind.STEP_BEGIN][:1] == ["s1"]
    assert found_after_delete(h, after, None) is None


def test_openai_agents_late_writes_of_a_frozen_worker_bring_a_deleted_run_back(tmp_path: Path) -> None:
    _installed("openai_agents", "agents")
    receipts = _cells("openai_agents", tmp_path, recovery_modes=["run-state", "session"])
    assert len(receipts) == 2 * len(POINTS)
    for probe, receipt in receipts.items():
        seen = receipt.observations["delete"]
        assert seen["holder"] == "completed with \"final: s2 served 'approve'\""
        if ".run-state." in probe:
            # the woken worker stores its final RunState, as after every run: the recovery finds it, completed
            assert seen["recovery found"] == "completed with \"final: s2 served 'approve'\""
            assert _labels(receipt) == {"EO": "✓", "CO": "✓", "VO": "U"}
            assert _anomalies(receipt) == [WRITE_AFTER_DELETE]
        else:
            # the worker's add_items recreates the cleared session with what it added after the answer
            # (s2's output and the final message), not the conversation before it. The recovery reruns on
            # that: the scripted model finds no s1 output and calls s1 again (e1 a second time: EO), then
            # finds s2's and ends without asking for an approval: a recovery that began s1 and completed
            # without asking used the late writes (a run started over would have asked): write-after-delete
            assert seen["recovery found"] == "completed with \"final: s2 served 'approve'\""
            assert _labels(receipt) == {"EO": "U", "CO": "✓", "VO": "U"}
            assert _anomalies(receipt) == [WRITE_AFTER_DELETE]
            kinds = [e["kind"] for e in receipt.observations["history"]]
            after = kinds[kinds.index("recover"):]  # the recovery: e1 again, no pause, a completion
            assert "pause" not in after and after.count("effect") == 1 and "complete" in after


# --- Strands: FileSessionManager.delete_session ----------------------------------------------------

def test_strands_deletes_a_session_nobody_holds(tmp_path: Path) -> None:
    _installed("strands", "strands")
    # delete_session removes the session's directory: no agent state for the recovery to restore
    _nothing_found("strands", "file", "session", tmp_path)


def test_strands_refuses_the_late_agent_state_of_a_frozen_worker(tmp_path: Path) -> None:
    _installed("strands", "strands")
    receipts = _cells("strands", tmp_path)
    assert len(receipts) == len(POINTS)
    for receipt in receipts.values():
        seen = receipt.observations["delete"]
        # the woken worker writes the tool result's message, then its agent update finds no agent in the
        # session (SessionException): its interrupt state never lands and the recovery finds no agent state
        assert seen["holder"] == "raised SessionException: Agent kit in session kit does not exist"
        assert (seen["recovery found"], seen["recovery"]) == ("nothing to resume", "nothing-durable")
        assert _labels(receipt) == {"EO": "✓", "CO": "✓", "VO": "✓"}
