"""The OpenAI Agents SDK atlas cells (``python -m probes.studies.atlas.cells_openai_agents``, in a release's env).

The model is scripted here (a ``agents.models.interface.Model`` subclass: no network, no
key), so the same cell drives releases with and without ``agents.testing``: first turn
a call of the gated tool, then a final message. Tracing is switched off. The vocabulary
is ``probes.studies.atlas.cellkit``'s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from probes.studies.atlas.cellkit import CellBase, Module, NotApplicable, Observed, Registry, err
from probes.core.history import Kind

CELLS = Registry()


def _scripted_model(tool: str, arguments: str = "{}") -> Any:
    """A model that calls ``tool`` (with ``arguments``) until the input holds its output, then answers ``done``."""
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    class Scripted(Model):  # type: ignore[misc, valid-type]
        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            given = kwargs.get("input", args[1] if len(args) > 1 else None)
            items = given if isinstance(given, list) else []
            answered = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
            if answered:
                out: list[Any] = [ResponseOutputMessage(
                    id="msg-1", type="message", role="assistant", status="completed",
                    content=[ResponseOutputText(type="output_text", text="done", annotations=[])])]
            else:
                out = [ResponseFunctionToolCall(type="function_call", name=tool, arguments=arguments, call_id="call-1",
                                                id="fc-1", status="completed")]
            fields = {f.name for f in dataclasses.fields(ModelResponse)}
            extra = {"response_id": None} if "response_id" in fields else {"referenceable_id": None}
            return ModelResponse(output=out, usage=Usage(), **extra)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the atlas cells do not stream")

    return Scripted()


def _api() -> dict[str, Any]:
    try:
        from agents import Agent, Runner, function_tool, set_tracing_disabled
        from agents.run_state import RunState
    except ImportError as exc:
        raise NotApplicable(f"no serializable RunState in this release ({exc})") from None
    import inspect

    if "needs_approval" not in inspect.signature(function_tool).parameters:
        raise NotApplicable("function_tool has no needs_approval in this release")
    set_tracing_disabled(True)
    return {"Agent": Agent, "Runner": Runner, "function_tool": function_tool, "RunState": RunState}


async def _round_trip(api: dict[str, Any], agent: Any, state: Any) -> Any:
    """Serialize and restore a RunState the way an application stores it (to_json / from_json, else
    to_string / from_string)."""
    RunState = api["RunState"]
    if hasattr(state, "to_json") and hasattr(RunState, "from_json"):
        return await RunState.from_json(agent, json.loads(json.dumps(state.to_json())))
    return await RunState.from_string(agent, state.to_string())


@CELLS.cell("4244")
def approval_lost_with_context(c: CellBase) -> Observed:
    """A tool that needs approval pauses the run; the state is round-tripped through JSON, the call is
    approved and the run resumed with ``Runner.run(agent, state, context=...)`` -- and, as a control,
    without a context. The approved tool must run once and the run finish, either way."""
    api = _api()

    def build(variant: str) -> Any:
        @api["function_tool"](needs_approval=True)
        def charge() -> str:
            c.fire(f"charge[{variant}]", "charge")
            return "charged"

        return api["Agent"](name="payer", instructions="pay", model=_scripted_model("charge"), tools=[charge])

    async def one(variant: str, context: Any) -> dict[str, Any]:
        agent = build(variant)
        c.log(Kind.START, mode=variant)
        first = await api["Runner"].run(agent, "pay", **({"context": context} if context is not None else {}))
        paused = len(first.interruptions or [])
        c.log(Kind.PAUSE, "charge", mode=variant)
        state = await _round_trip(api, agent, first.to_state())
        for item in state.get_interruptions():
            state.approve(item)
        c.log(Kind.ANSWER, value="approve", mode=variant)
        try:
            second = await api["Runner"].run(agent, state, **({"context": context} if context is not None else {}))
            again, final, error = len(second.interruptions or []), second.final_output, None
        except Exception as exc:  # a loud failure is an observation
            again, final, error = None, None, err(exc)
        return {"paused_with": paused, "interrupted_again": again, "final": final, "error": error,
                "charged": c.ledger.counts().get(f"charge[{variant}]", 0)}

    async def drive() -> dict[str, Any]:
        return {"context={'user': 'u1'}": await one("with context", {"user": "u1"}),
                "no context": await one("no context", None)}

    results = asyncio.run(drive())
    ctx = results["context={'user': 'u1'}"]
    behaviour = "; ".join(f"{k}: paused with {v['paused_with']} approval(s); after approve on the restored state "
                          f"the tool ran {v['charged']}x, the resumed run "
                          + (f"raised {v['error']}" if v["error"] else
                             f"interrupted again ({v['interrupted_again']})" if v["interrupted_again"] else
                             f"finished with {v['final']!r}") for k, v in results.items())
    completed = ctx["error"] is None and not ctx["interrupted_again"] and ctx["charged"] == 1
    if not results["no context"]["paused_with"]:
        raise NotApplicable("the scripted run never paused for approval in this release")
    return Observed(behaviour, {"completed": completed,
                                "detail": f"with a context: tool ran {ctx['charged']}x, interrupted again: "
                                          f"{bool(ctx['interrupted_again'])}"}, results)


@CELLS.cell("2500")
def nested_approval_reinterrupts(c: CellBase, rounds: int = 4) -> Observed:
    """An outer agent whose one tool is ``inner.as_tool()``; the inner agent's tool needs approval.
    The outer run pauses on the nested approval; each time it pauses, the state is round-tripped
    through JSON and every interruption approved, then the run resumed (at most ``rounds`` times).
    The approved tool must run once and the run finish after the first approval."""
    api = _api()

    @api["function_tool"](needs_approval=True)
    def charge() -> str:
        c.fire("charge", "charge")
        return "charged"

    inner = api["Agent"](name="payer", instructions="pay", model=_scripted_model("charge"), tools=[charge])
    try:
        delegate = inner.as_tool(tool_name="ask_payer", tool_description="asks the payer to pay")
    except TypeError as exc:
        raise NotApplicable(f"Agent.as_tool does not take these arguments in this release ({exc})") from None
    outer = api["Agent"](name="boss", instructions="delegate", model=_scripted_model("ask_payer", '{"input": "pay"}'),
                         tools=[delegate])

    async def drive() -> dict[str, Any]:
        c.log(Kind.START)
        result = await api["Runner"].run(outer, "pay")
        paused = []
        error = None
        for _ in range(rounds):
            pending = list(result.interruptions or [])
            paused.append(len(pending))
            if not pending:
                break
            c.log(Kind.PAUSE, "charge", value=len(pending))
            state = await _round_trip(api, outer, result.to_state())
            for item in state.get_interruptions():
                state.approve(item)
            c.log(Kind.ANSWER, value="approve")
            c.log(Kind.RESUME, mode="RunState.from_json")
            try:
                result = await api["Runner"].run(outer, state)
            except Exception as exc:  # a loud failure is an observation
                error = err(exc)
                break
        return {"paused_per_round": paused, "final": getattr(result, "final_output", None), "error": error,
                "charged": c.ledger.counts().get("charge", 0)}

    out = asyncio.run(drive())
    if not out["paused_per_round"] or not out["paused_per_round"][0]:
        raise NotApplicable("the nested approval never surfaced as an interruption of the outer run")
    finished = out["error"] is None and out["paused_per_round"][-1] == 0
    completed = finished and out["charged"] == 1 and out["paused_per_round"] == [out["paused_per_round"][0], 0]
    behaviour = (f"interruptions per round {out['paused_per_round']} (approving every one after a JSON round "
                 f"trip); the approved tool ran {out['charged']}x; "
                 + (f"resuming raised {out['error']}" if out["error"] else
                    f"the run finished with {out['final']!r}" if finished else
                    f"still interrupted after {rounds} approvals"))
    return Observed(behaviour, {"completed": completed,
                                "detail": f"approvals needed {len(out['paused_per_round']) - 1}, tool ran "
                                          f"{out['charged']}x"}, out)


DISTRIBUTIONS = ("openai-agents", "openai")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
