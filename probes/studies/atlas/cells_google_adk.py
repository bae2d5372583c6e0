"""The Google ADK atlas cells (``python -m probes.studies.atlas.cells_google_adk``, in a release's env).

Agents, not graph workflows: the reported bugs are in the agent path (``ToolConfirmation``,
``LongRunningFunctionTool``, sub-agents), so each agent's model is scripted here -- a
``BaseLlm`` subclass whose reply is a function of the request's contents (no network, no
key): an agent that is shown its own answered tool call moves on, one that is not calls
the tool. Each step fires its effect through the harness oracle. Sessions live in
``SqliteSessionService`` on the cell's file where the release has it (else
``DatabaseSessionService`` on the same file); every round of the conversation builds a
new ``Runner`` over the stored session. One file drives 1.x and 2.x.

No ``from __future__ import annotations`` here: ADK reads a tool function's signature
(its ``ToolContext`` parameter) at run time, and the cells import ``ToolContext`` locally.
"""

import asyncio
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from probes.studies.atlas.cellkit import CellBase, Module, NotApplicable, NotReproduced, Observed, Registry, err
from probes.core.history import Kind

CELLS = Registry()
APP, USER, SESSION = "atlas", "u", "s"
SCRIPTS: dict[str, Callable[[Sequence[Any]], tuple]] = {}  # model name -> reply(contents)


def _parts(contents: Sequence[Any]) -> list[Any]:
    return [p for c in contents for p in (getattr(c, "parts", None) or [])]


def responses(contents: Sequence[Any], name: str) -> list[dict[str, Any]]:
    """The responses of tool ``name`` the request carries, oldest first."""
    return [dict(p.function_response.response or {}) for p in _parts(contents)
            if getattr(p, "function_response", None) is not None and p.function_response.name == name]


def called(contents: Sequence[Any], name: str) -> bool:
    return any(getattr(p, "function_call", None) is not None and p.function_call.name == name
               for p in _parts(contents))


_MODEL: list[Any] = []


def _model_class() -> Any:
    """``Scripted(model=name)``: answers with ``SCRIPTS[name](contents)`` -- ("call", tool, args) or ("text", s)."""
    if _MODEL:
        return _MODEL[0]
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    class Scripted(BaseLlm):  # type: ignore[misc, valid-type]
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            kind, *rest = SCRIPTS[self.model](list(llm_request.contents or []))
            if kind == "text":
                part = types.Part(text=rest[0])
            else:
                part = types.Part(function_call=types.FunctionCall(name=rest[0], args=rest[1]))
            yield LlmResponse(content=types.Content(role="model", parts=[part]))

    _MODEL.append(Scripted)
    return Scripted


def _service(c: CellBase) -> tuple[Any, str]:
    """The session service on the cell's SQLite file, and which one it is."""
    try:
        from google.adk.sessions.sqlite_session_service import SqliteSessionService
        return SqliteSessionService(c.location), "SqliteSessionService"
    except ImportError:
        from google.adk.sessions.database_session_service import DatabaseSessionService
        return DatabaseSessionService(f"sqlite:///{c.location}"), "DatabaseSessionService"


def _app(root: Any, resumable: bool) -> Any:
    from google.adk.apps.app import App

    if not resumable:
        return App(name=APP, root_agent=root)
    try:
        from google.adk.apps.app import ResumabilityConfig
    except ImportError:
        raise NotApplicable("no ResumabilityConfig (resumable apps) in this release") from None
    return App(name=APP, root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True))


async def _round(c: CellBase, root: Any, resumable: bool, message: Any, invocation: str | None,
                 config: Any = None) -> list[Any]:
    """One ``run_async`` on a new Runner over the stored session; its events."""
    from google.adk.runners import Runner

    service, _name = _service(c)
    if await service.get_session(app_name=APP, user_id=USER, session_id=SESSION) is None:
        await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    runner = Runner(app=_app(root, resumable), session_service=service)
    kwargs: dict[str, Any] = {"invocation_id": invocation} if invocation and resumable else {}
    if config is not None:
        kwargs["run_config"] = config
    return [e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=message, **kwargs)]


def _text(s: str) -> Any:
    from google.genai import types
    return types.Content(role="user", parts=[types.Part(text=s)])


def _answer(call_id: str, name: str, response: dict[str, Any]) -> Any:
    from google.genai import types
    fr = types.FunctionResponse(id=call_id, name=name, response=response)
    return types.Content(role="user", parts=[types.Part(function_response=fr)])


def _calls_in(events: Sequence[Any], name: str) -> list[tuple[str, str]]:
    """(call id, invocation id) of every call of ``name`` in ``events``."""
    return [(fc.id, e.invocation_id) for e in events for fc in (e.get_function_calls() or []) if fc.name == name]


@CELLS.cell("6198")
def confirmation_reruns_invocation(c: CellBase, rounds: int = 4, max_llm_calls: int = 24) -> Observed:
    """``SequentialAgent(planner -> executor -> validator)``; planner and executor call a tool that
    asks for a ``ToolConfirmation``, and keep calling it until it reports "approved" (a model shown
    a result that is not an approval asks again, so any consultation of the model while the
    confirmation pends shows as a second ask). Every confirmation asked for is granted, at most
    ``rounds`` times, in a resumable app answering in the paused invocation (the documented way
    to resume a pipeline): each agent must ask once, run its confirmed tool once and finish once.
    The same pipeline in a plain (non-resumable) app is run too, as an observation only: there
    the invocation does not pause, so what follows depends on the model, not on the release."""
    try:
        from google.adk.agents import LlmAgent, RunConfig, SequentialAgent
        from google.adk.tools.tool_context import ToolContext
    except ImportError as exc:
        raise NotApplicable(f"no LlmAgent / SequentialAgent / RunConfig / ToolContext in this release ({exc})") \
            from None
    if not hasattr(ToolContext, "request_confirmation"):
        raise NotApplicable("ToolContext has no request_confirmation in this release")
    Scripted = _model_class()
    arm = {"name": ""}

    def request_human_input(summary: str, tool_context: ToolContext) -> dict:
        """Ask the human to confirm the summary before moving on."""
        who = f"{arm['name']}:{tool_context.agent_name}"
        if tool_context.tool_confirmation is None:
            c.fire(f"{who}:asked", tool_context.agent_name)
            tool_context.request_confirmation(hint=f"confirm {summary}?")
            return {"status": "waiting for confirmation"}
        ok = tool_context.tool_confirmation.confirmed
        c.fire(f"{who}:{'approved' if ok else 'rejected'}", tool_context.agent_name)
        return {"status": "approved" if ok else "rejected"}

    def asking(name: str) -> Callable[[Sequence[Any]], tuple]:
        def script(contents: Sequence[Any]) -> tuple:
            if any(r.get("status") == "approved" for r in responses(contents, "request_human_input")):
                c.fire(f"{arm['name']}:{name}:done", name)
                return ("text", f"{name} done")
            return ("call", "request_human_input", {"summary": f"{name} output"})
        return script

    def validating(contents: Sequence[Any]) -> tuple:
        c.fire(f"{arm['name']}:validator:done", "validator")
        return ("text", "valid")

    SCRIPTS.update({"planner": asking("planner"), "executor": asking("executor"), "validator": validating})

    def root() -> Any:
        agents = [LlmAgent(name=n, model=Scripted(model=n), instruction=f"you are the {n}",
                           tools=[request_human_input] if n != "validator" else [])
                  for n in ("planner", "executor", "validator")]
        return SequentialAgent(name="pipeline", sub_agents=agents)

    async def drive(resumable: bool) -> dict[str, Any]:
        config = RunConfig(max_llm_calls=max_llm_calls)
        c.log(Kind.START, mode=arm["name"])
        asked: list[int] = []
        error = None
        try:
            events = await _round(c, root(), resumable, _text("plan, execute, validate"), None, config)
            for _ in range(rounds):
                pending = _calls_in(events, "adk_request_confirmation")
                asked.append(len(pending))
                if not pending:
                    break
                c.log(Kind.PAUSE, value=len(pending))
                c.log(Kind.RESUME, mode="FunctionResponse(adk_request_confirmation, confirmed=True)")
                call_id, invocation = pending[-1]
                events = await _round(c, root(), resumable, _answer(call_id, "adk_request_confirmation",
                                                                    {"confirmed": True}), invocation, config)
        except Exception as exc:  # e.g. the run's model-call limit: an observation
            error = err(exc)
        return {"asked_per_round": asked, "error": error}

    out = {}
    for name, resumable in (("plain", False), ("resumable", True)):
        arm["name"] = name
        c.location = str(c.workdir / f"{name}.sqlite")
        try:
            out[name] = asyncio.run(drive(resumable))
        except NotApplicable as exc:
            out[name] = {"n/a": str(exc)}
    counts = c.ledger.counts()
    if not counts.get("resumable:planner:asked"):
        raise NotReproduced("the planner never asked for a confirmation in the resumable app")
    if "n/a" in out["resumable"]:
        raise NotApplicable(out["resumable"]["n/a"])
    decided = {k: v for k, v in counts.items() if k.startswith("resumable:")}
    expected = [f"resumable:{a}:{s}" for a in ("planner", "executor") for s in ("asked", "approved", "done")] \
        + ["resumable:validator:done"]
    behaviour = "; ".join(
        f"{n}: " + (o["n/a"] if "n/a" in o else
                    f"confirmations asked per round {o['asked_per_round']}"
                    + (f", then {o['error']}" if o["error"] else "") + "; "
                    + ", ".join(f"{k.split(':', 1)[1]} {v}x" for k, v in sorted(counts.items()) if k.startswith(n)))
        for n, o in out.items())
    return Observed(behaviour, {"effect_counts": decided, "expected": expected}, {**out, "counts": counts})


@CELLS.cell("5349")
def second_lro_resume_ends_early(c: CellBase) -> Observed:
    """A resumable app: an orchestrator transfers to ``sub``, whose two ``LongRunningFunctionTool``s
    (``pick`` then ``confirm_pick``) each pause the run; each pause is answered with the tool's final
    response in the paused invocation. After the second answer the sub-agent must reply."""
    try:
        from google.adk.agents import LlmAgent
        from google.adk.tools.long_running_tool import LongRunningFunctionTool
    except ImportError as exc:
        raise NotApplicable(f"no LlmAgent / LongRunningFunctionTool in this release ({exc})") from None
    Scripted = _model_class()

    def pick() -> dict[str, Any]:
        """Ask the user to pick an option."""
        c.fire("pick:asked", "sub")
        return {"status": "pending"}

    def confirm_pick() -> dict[str, Any]:
        """Ask the user to confirm the pick."""
        c.fire("confirm:asked", "sub")
        return {"status": "pending"}

    def final(contents: Sequence[Any], tool: str) -> bool:
        return any(r.get("status") != "pending" for r in responses(contents, tool))

    def orchestrator(contents: Sequence[Any]) -> tuple:
        if not called(contents, "transfer_to_agent"):
            return ("call", "transfer_to_agent", {"agent_name": "sub"})
        c.fire("orchestrator:spoke", "orchestrator")
        return ("text", "handed over")

    def sub(contents: Sequence[Any]) -> tuple:
        if not called(contents, "pick"):
            return ("call", "pick", {})
        if final(contents, "pick") and not called(contents, "confirm_pick"):
            return ("call", "confirm_pick", {})
        if final(contents, "confirm_pick"):
            c.fire("sub:replied", "sub")
            return ("text", "picked and confirmed")
        return ("text", "waiting")

    SCRIPTS.update({"orchestrator": orchestrator, "sub": sub})

    def root() -> Any:
        helper = LlmAgent(name="sub", model=Scripted(model="sub"), instruction="pick and confirm",
                          tools=[LongRunningFunctionTool(pick), LongRunningFunctionTool(confirm_pick)])
        return LlmAgent(name="orchestrator", model=Scripted(model="orchestrator"), instruction="delegate",
                        sub_agents=[helper])

    async def drive() -> list[dict[str, Any]]:
        c.log(Kind.START)
        events = await _round(c, root(), True, _text("pick something"), None)
        trail = []
        for tool, answer in (("pick", {"status": "done", "choice": "A"}), ("confirm_pick", {"status": "done"})):
            pending = _calls_in(events, tool)
            trail.append({"tool": tool, "paused": bool(pending)})
            if not pending:
                break
            c.log(Kind.PAUSE, tool)
            c.log(Kind.RESUME, tool, mode="FunctionResponse in the paused invocation")
            call_id, invocation = pending[-1]
            try:
                events = await _round(c, root(), True, _answer(call_id, tool, answer), invocation)
            except Exception as exc:  # a loud failure is an observation
                trail[-1]["error"] = err(exc)
                break
            trail[-1]["texts"] = [p.text for e in events for p in ((e.content and e.content.parts) or [])
                                  if getattr(p, "text", None)]
            trail[-1]["end_of_agent"] = any(getattr(getattr(e, "actions", None), "end_of_agent", False)
                                            for e in events)
        return trail

    trail = asyncio.run(drive())
    counts = c.ledger.counts()
    if not trail or not trail[0]["paused"]:
        raise NotReproduced("the sub-agent's first long-running tool did not pause the run")
    replied = counts.get("sub:replied", 0) == 1
    paused_twice = len(trail) == 2 and trail[1]["paused"]
    behaviour = "; ".join(f"{t['tool']}: " + ("paused" if t["paused"] else "never called")
                          + (f", answering it raised {t['error']}" if t.get("error") else
                             f", answering it gave texts {t.get('texts')}" if "texts" in t else "")
                          for t in trail) + f"; the sub-agent {'replied' if replied else 'never replied'}"
    return Observed(behaviour, {"completed": replied and paused_twice,
                                "detail": f"second pause {'reached' if paused_twice else 'not reached'}, sub-agent "
                                          f"{'replied' if replied else 'silent'} after the second answer"},
                    {"trail": trail, "counts": counts, "service": _service(c)[1]})


DISTRIBUTIONS = ("google-adk", "google-genai")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
