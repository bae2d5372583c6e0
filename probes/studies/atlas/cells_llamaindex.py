"""The LlamaIndex Workflows atlas cells (``python -m probes.studies.atlas.cells_llamaindex``, in a release's env).

The swept distribution is ``llama-index-core``: the workflows lived in it
(``llama_index.core.workflow``) when #18023 was filed, and it still re-exports them
from ``llama-index-workflows`` today; the cells import that path, falling back to the
stand-alone ``workflows`` package. The vocabulary is ``probes.studies.atlas.cellkit``'s.
"""

import asyncio  # no ``from __future__ import annotations``: the step decorators read real annotations
import json
import sys
from pathlib import Path
from typing import Any

from probes.studies.atlas.cellkit import CellBase, Module, NotApplicable, Observed, Registry, err
from probes.core.history import Kind

CELLS = Registry()
RUN_TIMEOUT = 60.0


def _api() -> dict[str, Any]:
    try:
        from llama_index.core.workflow import (Context, HumanResponseEvent, InputRequiredEvent, StartEvent,
                                               StopEvent, Workflow, step)
    except ImportError:
        try:
            from workflows import Context, Workflow, step
            from workflows.events import HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent
        except ImportError as exc:
            raise NotApplicable(f"no workflows with InputRequiredEvent in this release ({exc})") from None
    if not hasattr(Context, "from_dict"):
        raise NotApplicable("Context has no to_dict / from_dict in this release")
    return {"Context": Context, "Human": HumanResponseEvent, "Input": InputRequiredEvent, "Start": StartEvent,
            "Stop": StopEvent, "Workflow": Workflow, "step": step}


@CELLS.cell("18023")
def input_request_step_relaunched(c: CellBase) -> Observed:
    """Step ``ask`` fires its effect and returns an ``InputRequiredEvent``; the caller saves
    ``ctx.to_dict()`` when the request reaches the stream, stops the run, restores the context in
    a new run and answers. ``ask`` must not run again (its effect fires once)."""
    api = _api()
    step, Workflow = api["step"], api["Workflow"]
    Start, Stop, Input, Human = api["Start"], api["Stop"], api["Input"], api["Human"]

    class Ask(Workflow):  # type: ignore[misc, valid-type]
        @step
        async def ask(self, ev: Start) -> Input:  # type: ignore[valid-type]
            c.log(Kind.STEP_BEGIN, "ask")
            c.fire("ask", "ask")
            return Input(prefix="approve?")

        @step
        async def gate(self, ev: Human) -> Stop:  # type: ignore[valid-type]
            c.consume("gate", ev.response)
            c.fire(f"gate:{ev.response}", "gate")
            return Stop(result=f"f({ev.response})")

    async def pause() -> dict[str, Any]:
        handler = Ask(timeout=RUN_TIMEOUT).run()
        saved = None
        async for ev in handler.stream_events():
            if isinstance(ev, Input):
                saved = json.loads(json.dumps(handler.ctx.to_dict()))  # what a caller stores is JSON
                c.log(Kind.PAUSE, "ask")
                break
        await handler.cancel_run()
        try:
            await handler
        except BaseException:  # noqa: BLE001 - the cancelled run ends; only the snapshot matters
            pass
        return saved or {}

    async def resume(saved: dict[str, Any]) -> Any:
        workflow = Ask(timeout=RUN_TIMEOUT)
        ctx = api["Context"].from_dict(workflow, saved)
        handler = workflow.run(ctx=ctx)
        c.log(Kind.ANSWER, value="yes")
        handler.ctx.send_event(Human(response="yes"))
        return await asyncio.wait_for(handler, RUN_TIMEOUT)

    c.log(Kind.START)
    saved = asyncio.run(pause())
    before = c.ledger.counts().get("ask", 0)
    c.log(Kind.RESUME, mode="retry", value="Context.from_dict")
    try:
        outcome, error = asyncio.run(resume(saved)), None
    except Exception as exc:  # a loud failure is an observation
        outcome, error = None, err(exc)
    counts = c.ledger.counts()
    in_progress = {k: len(v) for k, v in (saved.get("in_progress") or {}).items()} if isinstance(saved, dict) else {}
    behaviour = (f"'ask' ran {before}x before the saved input request and {counts.get('ask', 0) - before}x more "
                 f"after restoring the context and answering; the answer's effect fired "
                 f"{counts.get('gate:yes', 0)}x; outcome {outcome!r}" + (f" (raised {error})" if error else "")
                 + f"; in-progress events saved per step {in_progress}")
    return Observed(behaviour, {"effect_counts": {"ask": counts.get("ask", 0), "gate": counts.get("gate:yes", 0)},
                                "expected": ["ask", "gate"]},
                    {"counts": counts, "outcome": outcome, "error": error, "saved_in_progress": in_progress})


DISTRIBUTIONS = ("llama-index-core", "llama-index-workflows")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
