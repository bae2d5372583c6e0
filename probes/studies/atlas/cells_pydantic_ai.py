"""The pydantic-ai atlas cells (``python -m probes.studies.atlas.cells_pydantic_ai``, in a release's env).

The model is ``pydantic_ai.models.function.FunctionModel`` with a script (no network, no
key): it calls the gated tool until the request carries the tool's return, then answers.
The gated tool (``requires_approval=True``) fires its effect through the harness oracle.
The vocabulary is ``probes.studies.atlas.cellkit``'s.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from probes.studies.atlas.cellkit import CellBase, Module, NotApplicable, Observed, Registry, err
from probes.core.history import Kind

CELLS = Registry()


def _outcome(result: Any, fired: int) -> str:
    """A run's outcome in words: deferred for approval, or its output -- and how often the tool ran."""
    output = getattr(result, "output", None)
    approvals = getattr(output, "approvals", None)
    said = f"deferred {len(approvals)} call(s) for approval" if approvals is not None else f"answered {output!r}"
    return f"{said}; the gated tool ran {fired}x"


@CELLS.cell("3355")
def unapproved_history_treated_as_approved(c: CellBase) -> Observed:
    """A gated tool (``requires_approval=True``): a fresh run defers the model's call for approval.
    The same agent is then run on the message history that ends in that unapproved call, with no
    deferred tool results -- it must defer (or refuse) again, like the fresh run, not run the tool."""
    try:
        from pydantic_ai import Agent, DeferredToolRequests
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
        from pydantic_ai.models.function import FunctionModel
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and not (exc.name or "").startswith("pydantic_ai"):
            raise  # a dependency missing from the environment: a harness error, not n/a
        raise NotApplicable(f"no DeferredToolRequests / FunctionModel in this release ({exc})") from None
    import inspect

    if "requires_approval" not in inspect.signature(Agent.tool_plain).parameters:
        raise NotApplicable("tool_plain has no requires_approval in this release")

    def script(messages: list[Any], info: Any) -> Any:
        if any(isinstance(p, ToolReturnPart) for m in messages for p in getattr(m, "parts", [])):
            return ModelResponse(parts=[TextPart("paid")])
        return ModelResponse(parts=[ToolCallPart("charge", {}, tool_call_id="call-1")])

    def agent(arm: str) -> Any:
        a = Agent(FunctionModel(script), output_type=[str, DeferredToolRequests])

        @a.tool_plain(requires_approval=True)
        def charge() -> str:
            c.fire(f"{arm}:charge", "charge")
            return "charged"
        return a

    said: dict[str, str] = {}
    c.log(Kind.START, mode="fresh run")
    first = agent("fresh").run_sync("pay")
    said["fresh run"] = _outcome(first, c.ledger.counts().get("fresh:charge", 0))
    history = first.all_messages()
    if not isinstance(history[-1], ModelResponse) or not any(isinstance(p, ToolCallPart) for p in history[-1].parts):
        raise NotApplicable("the paused run's history does not end in the deferred tool call")
    c.log(Kind.PAUSE, "charge")
    c.log(Kind.RESUME, mode="message_history ending in the unapproved call, no deferred_tool_results")
    resumed = "history ending in the unapproved call"
    try:
        second = agent("resumed").run_sync(message_history=history)
        said[resumed] = _outcome(second, c.ledger.counts().get("resumed:charge", 0))
    except Exception as exc:  # a loud refusal runs nothing: as acceptable as deferring again
        said[resumed] = f"refused ({err(exc)}); the gated tool ran {c.ledger.counts().get('resumed:charge', 0)}x"
    counts = c.ledger.counts()
    # the decision that matters: did the unapproved tool run? (deferring and refusing both say no)
    decisions = {"fresh run": "ran the gated tool" if counts.get("fresh:charge") else "did not run it",
                 resumed: "ran the gated tool" if counts.get("resumed:charge") else "did not run it"}
    behaviour = "; ".join(f"{k}: {v}" for k, v in said.items())
    return Observed(behaviour, {"decisions": decisions}, {"said": said, "counts": counts})


DISTRIBUTIONS = ("pydantic-ai-slim", "pydantic")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
