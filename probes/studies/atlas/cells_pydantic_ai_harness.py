"""The pydantic-ai harness atlas cells (``python -m probes.studies.atlas.cells_pydantic_ai_harness``, in a release's env).

``StepPersistence`` (pydantic/pydantic-ai-harness; ``pydantic_ai_harness.experimental.step_persistence``
in 0.4-0.6, ``pydantic_ai_harness.step_persistence`` from 0.7) is a pydantic-ai capability that
saves continuable snapshots of a run's message history in a ``StepStore``; ``continue_run(store,
run_id=...)`` loads the latest one for ``Agent.run(message_history=...)``. The store here is the
release's ``SqliteStepStore`` on the cell's SQLite file, so a snapshot outlives the process that
wrote it. The model is ``pydantic_ai.models.function.FunctionModel`` with a script (no network, no
key): it calls the tool until the request carries the tool's return, then answers. The tool fires
its effect through the harness oracle (counter + crash-surviving ledger, shared by every process
of the cell). The vocabulary is ``probes.studies.atlas.cellkit``'s.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import sys
from pathlib import Path
from typing import Any

from probes.studies.atlas.cellkit import CellBase, Module, NotApplicable, Observed, Registry, err, killed_child
from probes.core.history import Kind

CELLS = Registry()
RUN_ID = "order-A-1"           # the interrupted run's explicit id (what a worker would be handed)
CHARGE, ANSWER = "charge:A-1", "answer:A-1"
PAID = "paid A-1"


def _api() -> dict[str, Any]:
    """The release's StepPersistence API and pydantic-ai's scripted model (n/a when absent).

    A dependency missing from the environment is a harness error, not n/a; a release whose
    module does not import against the pydantic-ai pip resolved for it is n/a, said with the
    failed import and that pydantic-ai's version (computed, never typed in)."""
    try:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
        from pydantic_ai.models.function import FunctionModel
    except ImportError as exc:
        raise NotApplicable(f"pydantic-ai {_version('pydantic-ai-slim')} has no Agent / FunctionModel ({err(exc)})") \
            from None
    sp = None
    tried: list[str] = []
    for name in ("pydantic_ai_harness.step_persistence", "pydantic_ai_harness.experimental.step_persistence"):
        try:
            sp = importlib.import_module(name)
            break
        except ModuleNotFoundError as exc:
            if not (exc.name or "").startswith("pydantic_ai_harness"):
                raise  # a dependency missing from the environment
            tried.append(f"no {name}")
        except ImportError as exc:
            tried.append(f"{name}: {err(exc)}")
    if sp is None or not all(hasattr(sp, n) for n in ("StepPersistence", "SqliteStepStore", "continue_run")):
        raise NotApplicable(f"pydantic-ai-harness {_version('pydantic-ai-harness')} with pydantic-ai-slim "
                            f"{_version('pydantic-ai-slim')}: no StepPersistence with a SqliteStepStore and "
                            f"continue_run ({'; '.join(tried) or 'module lacks them'})")
    return {"Agent": Agent, "FunctionModel": FunctionModel, "ModelRequest": ModelRequest,
            "ModelResponse": ModelResponse, "TextPart": TextPart, "ToolCallPart": ToolCallPart,
            "ToolReturnPart": ToolReturnPart, "sp": sp, "module": sp.__name__}


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _agent(c: CellBase, api: dict[str, Any], store: Any, run_id: str, kill_before_answer: bool) -> Any:
    """An agent with StepPersistence on ``store`` under ``run_id``: the model calls ``charge`` once,
    then answers. With ``kill_before_answer`` the process parks (to be SIGKILLed) when the model is
    asked the request that carries the tool's return -- the worker stops after the completed tool
    call, before the next model request is answered."""
    from probes.core.nemesis import park

    def script(messages: list[Any], info: Any) -> Any:
        returned = any(isinstance(p, api["ToolReturnPart"]) for m in messages for p in getattr(m, "parts", []))
        c.log(Kind.STEP_BEGIN, "model", value="after the tool's return" if returned else "first request")
        if not returned:
            return api["ModelResponse"](parts=[api["ToolCallPart"]("charge", {}, tool_call_id="call-1")])
        if kill_before_answer:
            park("kill")
        return api["ModelResponse"](parts=[api["TextPart"](PAID)])

    agent = api["Agent"](api["FunctionModel"](script),
                         capabilities=[api["sp"].StepPersistence(store=store, run_id=run_id)])

    @agent.tool_plain
    def charge() -> str:
        c.fire(CHARGE, "charge")
        return "charged A-1"

    return agent


def victim_373(backend: str, location: str, workdir: str) -> dict[str, Any]:
    """Child (a worker): run the agent with StepPersistence on the SQLite store, and park (to be
    SIGKILLed) once the tool has run and the model is asked the request carrying its return."""
    c = CellBase(backend, location, Path(workdir), "worker-1")
    api = _api()
    store = api["sp"].SqliteStepStore(database=location)
    c.log(Kind.START, value="order A-1")
    result = asyncio.run(_agent(c, api, store, RUN_ID, kill_before_answer=True).run("charge order A-1"))
    return {"not_killed": True, "output": str(result.output)}


def _parts(messages: list[Any]) -> list[str]:
    """A message history in words: each message's kind and its parts' kinds (``request[user-prompt]``)."""
    out = []
    for m in messages:
        kind = "request" if type(m).__name__ == "ModelRequest" else "response"
        out.append(f"{kind}[{','.join(getattr(p, 'part_kind', type(p).__name__) for p in m.parts)}]")
    return out


@CELLS.cell("373")
def snapshot_after_tool_boundary_resumes(c: CellBase) -> Observed:
    """A worker runs an agent with StepPersistence on a SQLite store; the tool (``charge``, a counted
    effect) completes and the worker is SIGKILLed when the model is asked the next request (the one
    carrying the tool's return). Another process then loads the run with ``continue_run()`` and
    continues it with ``Agent.run(message_history=...)``. The snapshot saved after the
    ``CallToolsNode`` must carry the tool's return: the run resumes to its answer without charging
    again. Reported: that snapshot omitted the return request, so it was not provider-valid and not
    saved -- ``continue_run()`` had nothing to resume (or only an earlier point, which calls the
    tool again). Decided by ``exactly_once`` over ``charge`` (across both processes) and ``answer``
    (the resumed run's answer delivered): a run that cannot resume skips the answer, one that
    repeats the tool charges twice."""

    api = _api()
    location = c.location
    killed_child("probes.studies.atlas.cells_pydantic_ai_harness:victim_373",
                 {"backend": c.backend, "location": location, "workdir": str(c.workdir)},
                 "373: the worker after the tool's return", timeout=180)
    c.log(Kind.CRASH, detail_how="SIGKILL when the model is asked the request after the tool's return")
    before = c.ledger.counts()
    sp = api["sp"]

    async def inspect() -> dict[str, Any]:
        store = sp.SqliteStepStore(database=location)
        events = [str(getattr(e.kind, "value", e.kind)) for e in await store.list_events(run_id=RUN_ID)]
        effect = await store.get_tool_effect(run_id=RUN_ID, tool_call_id="call-1")
        return {"events": events,
                "tool_effect": None if effect is None else str(getattr(effect.status, "value", effect.status))}

    async def resume() -> dict[str, Any]:
        store = sp.SqliteStepStore(database=location)
        c.log(Kind.RECOVER, value="continue_run")
        try:
            history = await sp.continue_run(store, run_id=RUN_ID)
        except LookupError as exc:
            return {"continue_run": f"raised {err(exc)}", "snapshot": None}
        out: dict[str, Any] = {"continue_run": f"{len(history)} messages", "snapshot": _parts(history)}
        c.log(Kind.RESUME, value=out["continue_run"])
        try:
            result = await _agent(c, api, store, f"{RUN_ID}-resumed", kill_before_answer=False).run(
                message_history=history)
        except Exception as exc:  # a loud failure to continue is an observation
            out["resumed"] = f"raised {err(exc)}"
            return out
        out["resumed"] = f"answered {result.output!r}"
        if result.output == PAID:
            c.fire(ANSWER, "answer")
        return out

    at_kill = asyncio.run(inspect())
    resumed = asyncio.run(resume())
    counts = c.ledger.counts()
    again = counts.get(CHARGE, 0) - before.get(CHARGE, 0)
    behaviour = (f"worker killed after charge ran ({before.get(CHARGE, 0)}x), before the model answered its return; "
                 f"tool effect recorded {at_kill['tool_effect']}; continue_run: {resumed['continue_run']}"
                 + (f" ({', '.join(resumed['snapshot'])})" if resumed["snapshot"] else "")
                 + (f"; the continued run {resumed['resumed']}" if "resumed" in resumed else "")
                 + (f"; charge ran again {again}x" if again else ("; charge did not run again"
                                                                   if "resumed" in resumed else "")))
    return Observed(behaviour, {"effect_counts": {k: counts.get(k, 0) for k in (CHARGE, ANSWER)},
                                "expected": [CHARGE, ANSWER]},
                    {"module": api["module"], "at_kill": at_kill, **resumed, "charged_after_resume": again,
                     "counts": counts})


DISTRIBUTIONS = ("pydantic-ai-harness", "pydantic-ai-slim")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
