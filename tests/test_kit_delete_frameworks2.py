"""The delete protocol (``probes.kit.protocols.delete``) on the rest of the kit's frameworks: DBOS,
Temporal, pydantic-graph, pydantic-ai, CrewAI, AutoGen and LlamaIndex (LangGraph in
``tests/test_kit_delete.py``; MAF, Google ADK, agno, OpenAI Agents and Strands in
``tests/test_kit_delete_frameworks.py``, whose helpers these tests share).

As there, each framework that can delete a run has a control (a paused run nobody holds is deleted,
and a recovery finds nothing: ``found_after_delete`` is ``None``) and its delete cells at
``s2.consumed`` and ``s2.effect`` (the run deleted while the process answering it is frozen there,
that process let go on, a recovery then looking). Where the framework has no deletion the cells are
n/a with the adapter's reason (``Adapter.missing``).

DBOS and pydantic-ai (whose durable execution is a DBOS workflow) delete with ``delete_workflow``;
the woken holder then waits for the deleted workflow's result forever (``get_result`` polls for a
status row that is gone), so the kit's cells end in a harness error at the operation timeout
(120 s) rather than in verdicts. Their tests run the protocol's steps here with a short timeout
(``_frozen_then_deleted``) to see what the recovery finds after the hung holder. The
side-environment frameworks (Temporal, pydantic-ai) are skipped unless their environment is built.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator

import pytest

from probes import campaigns
from probes.core.errors import HarnessError
from probes.core.history import History, Kind
from probes.core.visibility import WRITE_AFTER_DELETE, anomalies, found_after_delete
from probes.kit.protocols import Probe, Target
from probes.kit.suite import KIT_ADAPTERS, KIT_ENVS, adapter_class, operations_python
from tests.test_kit_delete_frameworks import POINTS, _anomalies, _cells, _installed, _labels


@contextlib.contextmanager
def _services(name: str, root: Path) -> Iterator[dict[str, str]]:
    """What the adapter's processes need beside their own environment: Temporal's dev server (as the
    campaign's ``server`` starts it, here for the control alone), nothing for the others."""
    if name != "temporal":
        yield {}
        return
    from probes.frameworks.temporal.adapter import ADDRESS
    from probes.frameworks.temporal.campaign import ENV
    from probes.frameworks.temporal.server import dev_server
    with dev_server(ENV.ensure().path / "bin" / "temporal", root / "server") as found:
        yield {ADDRESS: found.address, "HOME": str(found.home), "XDG_CONFIG_HOME": str(found.home / ".config")}


@contextlib.contextmanager
def _probe(name: str, backend: str, root: Path, timeout: float = 120.0) -> Iterator[tuple[Probe, Any]]:
    """A probe of campaign ``name``'s adapter (its side environment's interpreter, its services) in ``root``."""
    adapter = KIT_ADAPTERS[name]
    cls = adapter_class(adapter)
    with _services(name, root) as extra:
        env = tuple(sorted({**cls.environment(root / "environment"), **extra}.items()))
        target = Target(adapter, cls, backend, operations_python(KIT_ENVS.get(name)), timeout, env)
        yield Probe(target, root, lambda run: str(root / f"{run}.db") if backend == "sqlite" else None), cls


def _control(name: str, backend: str, mode: str, root: Path) -> tuple[dict[str, Any], History, int]:
    """A paused run nobody holds, deleted through the adapter's ``delete``, then recovered (``mode``):
    the recovery's status, the history and where the recovery's events begin."""
    with _probe(name, backend, root) as (probe, cls):
        run = probe.run("run")
        assert run.start()["status"] == "paused"
        assert run.op("delete", "delete")["status"] == "deleted"
        mark = len(probe.read())
        status = run.op("after", "recover", mode=mode, answer=cls.answers[0])
        return status, probe.read(), mark


def _nothing_found(name: str, backend: str, mode: str, root: Path) -> None:
    status, h, mark = _control(name, backend, mode, root)
    assert status["status"] == "nothing-durable"
    assert found_after_delete(h, h.events[mark:], None) is None


def _started_over(name: str, backend: str, mode: str, root: Path) -> None:
    """The control where a recovery that finds no workflow starts one (DBOS's launch): s1 runs again and
    the new run asks its question, a run started over: it found nothing."""
    status, h, mark = _control(name, backend, mode, root)
    after = h.events[mark:]
    assert status["status"] == "paused"
    assert [e.step for e in after if e.kind is Kind.STEP_BEGIN][:1] == ["s1"]
    assert found_after_delete(h, after, None) is None


def _frozen_then_deleted(name: str, backend: str, mode: str, point: str, root: Path,
                         timeout: float) -> tuple[str, History, int]:
    """The delete protocol's steps (``protocols.delete``) with operation timeout ``timeout``: what the
    holder ended with (a harness error's text, if it broke), the history, where the recovery's events
    begin."""
    with _probe(name, backend, root, timeout) as (probe, cls):
        run, answer = probe.run("run"), cls.answers[0]
        handle = run.start().get("handle")
        run.note(Kind.ANSWER, value=answer, detail={"addressed": handle is not None})
        try:
            with run.stopped("answer", "resume", point, handle=handle, answer=answer) as go_on:
                run.note(Kind.DELETE, detail={"while": "run/answer", "at": point})
                assert run.op("delete", "delete")["status"] == "deleted"
                run.hang_is_behaviour = True  # as the protocol does
                holder = str(go_on().get("status"))
                run.hang_is_behaviour = False
        except HarnessError as exc:
            holder = str(exc)
        run.note(Kind.RECOVER, detail={"mode": mode, "after": "the run was deleted"})
        mark = len(probe.read())
        run.op("after", "recover", mode=mode, answer=answer)
        return holder, probe.read(), mark


def _hung_holder_then_started_over(name: str, tmp_path: Path) -> None:
    """DBOS's delete cells, as pydantic-ai's: the holder hangs, and a recovery starts the run over."""
    for point in POINTS:
        holder, h, mark = _frozen_then_deleted(name, "sqlite", "launch", point, tmp_path / point, 20.0)
        # woken, the holder fires e2 and ends s2's body, but s2's output is never recorded (operation_outputs
        # refers to the deleted status row: no persist after the delete), and the holder's get_result polls
        # for the deleted workflow's status forever: it does not end, and is recorded as hung (the framework's
        # behaviour, not the harness's)
        assert holder == "hung"
        assert [e.value for e in h.of(Kind.ERROR)] == ["hung"]
        late = [e.kind for e in h.events if e.incarnation == "run/answer"]
        assert late.count(Kind.EFFECT) == 1 and Kind.PERSIST not in late and Kind.COMPLETE not in late
        # the launch finds no workflow and starts one: s1 again, then it asks again (a new run): found nothing
        after = h.events[mark:]
        assert [e.step for e in after if e.kind is Kind.STEP_BEGIN][:1] == ["s1"]
        assert any(e.kind is Kind.PAUSE for e in after) and found_after_delete(h, after, "run/answer") is None
        assert [a.name for a in anomalies(h)] == []


def _not_applicable(name: str, root: Path, why: str) -> None:
    """Every delete cell n/a, with the adapter's reason."""
    receipts = _cells(name, root)
    assert len(receipts) == len(POINTS)
    for receipt in receipts.values():
        assert {v.label.value for v in receipt.verdicts} == {"n/a"}
        assert all(why in str(v.evidence) for v in receipt.verdicts)


# --- DBOS: delete_workflow (DBOSClient) -------------------------------------------------------------

def test_dbos_deletes_a_workflow_nobody_holds(tmp_path: Path) -> None:
    _installed("dbos", "dbos")
    # delete_workflow deletes the status row and, by ON DELETE CASCADE, the workflow's operations and
    # messages; the recovery's launch finds no workflow "kit-run" and starts it anew (the adapter's start)
    _started_over("dbos", "sqlite", "launch", tmp_path)


def test_dbos_holder_of_a_deleted_workflow_hangs_and_a_recovery_starts_over(tmp_path: Path) -> None:
    _installed("dbos", "dbos")
    _hung_holder_then_started_over("dbos", tmp_path)


# --- Temporal: the service's DeleteWorkflowExecution ------------------------------------------------

def test_temporal_deletes_a_workflow_nobody_holds(tmp_path: Path) -> None:
    _installed("temporal", "temporalio")
    # the execution (running: terminated first) and its history are deleted; describe finds no execution
    _nothing_found("temporal", "sqlite", "worker", tmp_path)


def test_temporal_terminates_the_deleted_workflow_under_a_frozen_worker(tmp_path: Path) -> None:
    _installed("temporal", "temporalio")
    receipts = _cells("temporal", tmp_path)
    assert len(receipts) == len(POINTS)
    for receipt in receipts.values():
        seen = receipt.observations["delete"]
        # a running execution is terminated before it is deleted: the woken worker's wait for the result
        # raises (the refusal), and whatever it reports of its activity the server no longer holds
        assert seen["holder"] == "raised WorkflowFailureError: Workflow execution failed"
        assert (seen["recovery found"], seen["recovery"]) == ("nothing to resume", "nothing-durable")
        # e2 at most once (at s2.consumed the worker ends on the failure before its activity fires it)
        assert _labels(receipt) == {"EO": "✓", "CO": "✓", "VO": "✓"}


# --- pydantic-graph: no deletion ----------------------------------------------------------------------

def test_pydantic_graph_has_no_deletion(tmp_path: Path) -> None:
    _installed("pydantic_graph", "pydantic_graph")
    _not_applicable("pydantic_graph", tmp_path, "state persistence has no deletion")


# --- pydantic-ai: its DBOS workflow's delete_workflow -----------------------------------------------

def test_pydantic_ai_deletes_a_workflow_nobody_holds(tmp_path: Path) -> None:
    _installed("pydantic_ai", "pydantic_ai")
    _started_over("pydantic_ai", "sqlite", "launch", tmp_path)


def test_pydantic_ai_holder_of_a_deleted_workflow_hangs_and_a_recovery_starts_over(tmp_path: Path) -> None:
    _installed("pydantic_ai", "pydantic_ai")
    # the durable run is a DBOS workflow, deleted as DBOS's: the same hang and the same fresh start
    _hung_holder_then_started_over("pydantic_ai", tmp_path)


# --- CrewAI: no deletion ---------------------------------------------------------------------------

def test_crewai_has_no_deletion(tmp_path: Path) -> None:
    _installed("crewai", "crewai")
    _not_applicable("crewai", tmp_path, "has no deletion of a flow's state")


# --- AutoGen and LlamaIndex: the application's own state files ---------------------------------------

@pytest.mark.parametrize("name, module, mode", [("autogen", "autogen_agentchat", "latest-team-state"),
                                                ("llamaindex", "workflows", "latest-snapshot")])
def test_app_state_deleted_while_nobody_holds_the_run(name: str, module: str, mode: str, tmp_path: Path) -> None:
    _installed(name, module)
    # the framework stores nothing; the application deletes the files it wrote: no state to recover from
    _nothing_found(name, "file", mode, tmp_path)


@pytest.mark.parametrize("name, module", [("autogen", "autogen_agentchat"), ("llamaindex", "workflows")])
def test_app_state_written_late_by_a_frozen_worker_brings_the_run_back(name: str, module: str, tmp_path: Path) -> None:
    _installed(name, module)
    receipts = _cells(name, tmp_path)
    assert len(receipts) == len(POINTS)
    for receipt in receipts.values():
        seen = receipt.observations["delete"]
        # the woken worker finishes the run in memory and saves its state as after every run (team.save_state,
        # ctx.to_dict), into the directory the deletion emptied: the recovery reads that file, completed
        assert seen["holder"] == "completed with \"s2 served 'yes'\""
        assert seen["recovery found"] == "completed with \"s2 served 'yes'\""
        assert _labels(receipt) == {"EO": "✓", "CO": "✓", "VO": "U"}
        assert _anomalies(receipt) == [WRITE_AFTER_DELETE]
