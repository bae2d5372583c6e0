"""LlamaIndex Workflows workloads, each run in a fresh interpreter by ``run_child``.

Two workflows model the resume plane (tasks 1..3, the interrupt gate at task 2):

* ``SplitWorkflow``: ``s1`` fires effect ``s1`` and asks for input by returning an
  ``InputRequiredEvent``; ``gate`` accepts the ``HumanResponseEvent`` answer, fires the
  gated effect ``gate`` and routes ``f(v)``; ``s3`` fires ``s3`` and stops with ``f(v)``.
  The pause is *between* steps, so a restored context has nothing to replay.
* ``WaitWorkflow``: one step fires ``w.prefix``, then calls ``ctx.wait_for_event``
  (the in-step pause), then fires ``w.gate``. The docstring of ``wait_for_event``
  says the step is replayed when the event arrives; the prefix count shows it.

The caller's checkpoint is ``ctx.to_dict()`` taken when the input request reaches the
event stream, written atomically to a JSON file; recovery is ``Context.from_dict`` in
another process. Functions return JSON: the in-process effect counter (cross-checked
against the ledger by the parent), the outcome, and the class of any error.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from pathlib import Path
from typing import Any

from probes.core import oracle
from probes.core.atomic import atomic_write_json
from probes.core.nemesis import park

RUN_TIMEOUT = 60.0


def outcome_of(answer: str) -> str:
    """``f(v)``: injective and not the identity, so FD checks routing, not ``v = v``."""
    return f"f({answer})"


def _error(exc: BaseException) -> dict[str, str]:
    """An error as stable text: class name plus first line, memory addresses removed."""
    first = (str(exc).splitlines() or [""])[0]
    first = re.sub(r" at 0x[0-9a-f]+", "", first)
    return {"type": type(exc).__name__, "message": first[:240]}


def _workflows():
    """Build the workflow classes lazily: the framework is imported only in children."""
    from workflows import Context, Workflow, step
    from workflows.events import Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

    class GateDone(Event):
        outcome: str

    class SplitWorkflow(Workflow):
        @step
        async def s1(self, ctx: Context, ev: StartEvent) -> InputRequiredEvent:
            oracle.fire("s1")
            await ctx.store.set("amount", 5)
            return InputRequiredEvent(prefix="approve the charge?")

        @step
        async def gate(self, ctx: Context, ev: HumanResponseEvent) -> GateDone:
            await ctx.store.get("amount")  # the gated task reads durable state before its effect
            oracle.fire("gate", ev.response)
            return GateDone(outcome=outcome_of(ev.response))

        @step
        async def s3(self, ctx: Context, ev: GateDone) -> StopEvent:
            oracle.fire("s3")
            return StopEvent(result=ev.outcome)

    class WaitWorkflow(Workflow):
        @step
        async def only(self, ctx: Context, ev: StartEvent) -> StopEvent:
            oracle.fire("w.prefix")
            answer = await ctx.wait_for_event(
                HumanResponseEvent, waiter_event=InputRequiredEvent(prefix="approve?"), waiter_id="approval"
            )
            oracle.fire("w.gate", answer.response)
            return StopEvent(result=outcome_of(answer.response))

    class UnserialisableWorkflow(Workflow):
        """Puts a value no serializer can encode into the store, then asks for input."""

        @step
        async def s1(self, ctx: Context, ev: StartEvent) -> InputRequiredEvent:
            oracle.fire("s1")
            await ctx.store.set("lock", asyncio.Lock())
            return InputRequiredEvent(prefix="approve?")

        @step
        async def gate(self, ctx: Context, ev: HumanResponseEvent) -> StopEvent:
            oracle.fire("gate", ev.response)
            return StopEvent(result=outcome_of(ev.response))

    return {
        "split": SplitWorkflow,
        "wait": WaitWorkflow,
        "unserialisable": UnserialisableWorkflow,
        "Context": Context,
        "HumanResponseEvent": HumanResponseEvent,
        "InputRequiredEvent": InputRequiredEvent,
    }


def _result(o: oracle.Oracle, **extra: Any) -> dict[str, Any]:
    return {"counter": o.counter.snapshot(), **extra}


# --- the pause: run to the input request, checkpoint, then cancel or be killed -------


async def _park(flavor: str, snapshot: str, hold: bool) -> dict[str, Any]:
    wf = _workflows()
    workflow = wf[flavor](timeout=RUN_TIMEOUT)
    handler = workflow.run()
    written, error = False, None
    async for ev in handler.stream_events():
        if isinstance(ev, wf["InputRequiredEvent"]):
            try:
                data = handler.ctx.to_dict()
                json.dumps(data)  # what a caller stores must be JSON
            except Exception as exc:  # noqa: BLE001 - the framework's loud refusal is the observation
                error = _error(exc)
            else:
                atomic_write_json(Path(snapshot), data)
                written = True
            if hold:
                park("parked")  # the parent SIGKILLs us here, snapshot on disk
            break
    await handler.cancel_run()
    try:
        await handler
    except BaseException:  # noqa: BLE001 - cancellation ends the run; we only wanted the snapshot
        pass
    return {"snapshot_written": written, "snapshot_error": error}


def park_at_input(ledger: str, incarnation: str, flavor: str, snapshot: str, hold: bool = False) -> dict[str, Any]:
    """Run ``flavor`` to its input request, write ``ctx.to_dict()`` to ``snapshot``, stop.

    ``hold=True`` parks at the named point ``parked`` after the snapshot is durable, so
    the parent can SIGKILL the process there (the park-kill protocol).
    """
    o = oracle.install(ledger, incarnation)
    info = asyncio.run(_park(flavor, snapshot, hold))
    return _result(o, **info)


async def _answer_live(flavor: str, answers: list[str]) -> dict[str, Any]:
    wf = _workflows()
    workflow = wf[flavor](timeout=RUN_TIMEOUT)
    handler = workflow.run()
    async for ev in handler.stream_events():
        if isinstance(ev, wf["InputRequiredEvent"]):
            for a in answers:
                handler.ctx.send_event(wf["HumanResponseEvent"](response=a))
    return {"outcome": await asyncio.wait_for(handler, RUN_TIMEOUT)}


def answer_in_process(ledger: str, incarnation: str, flavor: str, answers: list[str]) -> dict[str, Any]:
    """No checkpoint at all: answer the live run from the event stream (the baseline)."""
    o = oracle.install(ledger, incarnation)
    return _result(o, **asyncio.run(_answer_live(flavor, answers)))


# --- tampering with the serialized snapshot -----------------------------------------

TAMPERS = (
    "wrong-version",      # structural: an unsupported format version
    "queue-not-a-list",   # structural: a worker queue of the wrong type
    "bad-state-value",    # structural: a store value that is not valid JSON
    "removed-state",      # structural: the whole state key deleted
    "removed-workers",    # structural: the step-worker key deleted
    "not-running",        # type-valid: the 'is_running' flag flipped to false
    "forged-answer",      # type-valid: a HumanResponseEvent planted in the gate's queue
)


def tamper(data: dict[str, Any], kind: str) -> dict[str, Any]:
    """Edit a serialized context the way a bad actor or a buggy migration might."""
    from workflows.context.serializers import JsonSerializer
    from workflows.events import HumanResponseEvent

    t = copy.deepcopy(data)
    if kind == "wrong-version":
        t["version"] = 99
    elif kind == "queue-not-a-list":
        t["workers"]["gate"]["queue"] = 42
    elif kind == "bad-state-value":
        t["state"]["state_data"]["_data"]["amount"] = "{not json"
    elif kind == "removed-state":
        del t["state"]
    elif kind == "removed-workers":
        del t["workers"]
    elif kind == "not-running":
        t["is_running"] = False
    elif kind == "forged-answer":
        forged = JsonSerializer().serialize(HumanResponseEvent(response="forged"))
        t["workers"]["gate"]["queue"] = [{"event": forged}]
    else:
        raise ValueError(f"unknown tamper kind {kind!r}; choose from {', '.join(TAMPERS)}")
    return t


# --- recovery: restore the snapshot in a fresh process and answer --------------------


async def _resume(flavor: str, snapshot: str, answers: list[str], stray: str | None,
                  tamper_kind: str | None) -> dict[str, Any]:
    wf = _workflows()
    workflow = wf[flavor](timeout=RUN_TIMEOUT)
    data = json.loads(Path(snapshot).read_text())
    if tamper_kind:
        data = tamper(data, tamper_kind)
    try:
        ctx = wf["Context"].from_dict(workflow, data)
    except Exception as exc:  # noqa: BLE001 - a loud refusal at load is the observation
        return {"stage": "load", "error": _error(exc), "outcome": None}
    try:
        handler = workflow.run(ctx=ctx)
        for a in answers:
            handler.ctx.send_event(wf["HumanResponseEvent"](response=a))
        outcome = await asyncio.wait_for(handler, RUN_TIMEOUT)
    except asyncio.TimeoutError:
        return {"stage": "run", "error": {"type": "TimeoutError", "message": "run did not finish"}, "outcome": None}
    except Exception as exc:  # noqa: BLE001 - a loud refusal at run time is the observation
        return {"stage": "run", "error": _error(exc), "outcome": None}
    info: dict[str, Any] = {"stage": None, "error": None, "outcome": outcome}
    if stray is not None:
        try:
            handler.ctx.send_event(wf["HumanResponseEvent"](response=stray))
            await asyncio.sleep(0)  # let a (wrongly) woken step start; no timing window is measured
            info["stray_error"] = None
        except Exception as exc:  # noqa: BLE001
            info["stray_error"] = _error(exc)
    return info


def resume(ledger: str, incarnation: str, flavor: str, snapshot: str, answers: list[str],
           stray: str | None = None, tamper_kind: str | None = None) -> dict[str, Any]:
    """``Context.from_dict`` the snapshot, run, send ``answers`` back to back, await the result.

    ``stray`` is sent after completion (consume-once on a finished run); ``tamper_kind``
    edits the loaded dict before ``from_dict`` (see ``TAMPERS``).
    """
    o = oracle.install(ledger, incarnation)
    return _result(o, **asyncio.run(_resume(flavor, snapshot, answers, stray, tamper_kind)))


# --- concurrent answers from two processes (released together by the worker pool) ---


class Racer:
    """A long-lived worker: ``prepare`` loads the snapshot; ``go`` restores it and answers.

    Everything but the restore-and-answer happens before the barrier, so the racers
    differ only in what the race is about.
    """

    def __init__(self) -> None:
        self.wf = _workflows()
        self.task: dict[str, Any] = {}

    def prepare(self, task: dict[str, Any]) -> dict[str, Any]:
        self.task = task
        self.oracle = oracle.install(task["ledger"], task["incarnation"])
        self.data = json.loads(Path(task["snapshot"]).read_text())
        return {"loaded": True}

    def go(self) -> dict[str, Any]:
        async def answer() -> dict[str, Any]:
            workflow = self.wf[self.task["flavor"]](timeout=RUN_TIMEOUT)
            try:
                handler = workflow.run(ctx=self.wf["Context"].from_dict(workflow, self.data))
                handler.ctx.send_event(self.wf["HumanResponseEvent"](response=self.task["answer"]))
                return {"outcome": await asyncio.wait_for(handler, RUN_TIMEOUT), "error": None}
            except Exception as exc:  # noqa: BLE001 - a loud refusal is the observation
                return {"outcome": None, "error": _error(exc)}

        info = asyncio.run(answer())
        return {"counter": self.oracle.counter.snapshot(), **info}
