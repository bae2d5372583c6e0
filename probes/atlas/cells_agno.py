"""The Agno atlas cells (``python -m probes.atlas.cells_agno``, in a release's side environment).

The models are scripted here: a dataclass subclass of ``agno.models.base.Model`` whose
reply is a function of the messages it is sent (no network, no key), so a leader that
is shown its earlier delegations moves on, and one that is not delegates again -- what
an LLM given that context would do. Each tool fires its effect through the harness
oracle. Runs are stored in Agno's ``SqliteDb`` on the cell's file; each continuation
builds its agents and team again (the fresh-process shape), reading the run from the
database. Telemetry is off (``AGNO_TELEMETRY=false`` and ``telemetry=False``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from probes.atlas.cellkit import CellBase, Module, NotApplicable, NotReproduced, Observed, Registry, err
from probes.core.history import Kind

CELLS = Registry()
os.environ["AGNO_TELEMETRY"] = "false"
SESSION = "atlas"

# A reply: ("call", tool name, arguments) or ("text", content).
Reply = tuple


def _calls(messages: Sequence[Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """Every tool call the assistant made in ``messages``: (call id, tool name, arguments)."""
    out = []
    for m in messages:
        for tc in getattr(m, "tool_calls", None) or []:
            fn = tc.get("function", {})
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = {}
            out.append((tc.get("id"), fn.get("name"), args))
    return out


def _answered(messages: Sequence[Any]) -> set[str]:
    """The call ids that have a tool result in ``messages``."""
    return {m.tool_call_id for m in messages if getattr(m, "role", None) == "tool" and getattr(m, "tool_call_id", None)}


def scripted(name: str, script: Callable[[Sequence[Any]], Reply], seen: list[list[Any]]) -> Any:
    """A model answering ``script(messages)``; every message list it is sent is kept in ``seen``."""
    from dataclasses import dataclass

    from agno.models.base import Model
    from agno.models.response import ModelResponse

    counter = {"n": 0}

    def reply(messages: Sequence[Any]) -> Any:
        seen.append(list(messages))
        kind, *rest = script(messages)
        if kind == "text":
            return ModelResponse(role="assistant", content=rest[0])
        counter["n"] += 1
        call = {"id": f"{name}-call-{counter['n']}", "type": "function",
                "function": {"name": rest[0], "arguments": json.dumps(rest[1])}}
        return ModelResponse(role="assistant", tool_calls=[call])

    @dataclass
    class Scripted(Model):  # type: ignore[misc, valid-type]
        def invoke(self, *args: Any, **kwargs: Any) -> Any:
            return reply(kwargs["messages"])

        async def ainvoke(self, *args: Any, **kwargs: Any) -> Any:
            return reply(kwargs["messages"])

        def invoke_stream(self, *args: Any, **kwargs: Any) -> Any:
            yield reply(kwargs["messages"])

        async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> Any:
            yield reply(kwargs["messages"])

        def _parse_provider_response(self, response: Any, **kwargs: Any) -> Any:
            return response

        def _parse_provider_response_delta(self, response: Any) -> Any:
            return response

    return Scripted(id=f"scripted-{name}", name=name, provider="atlas")


def _db(c: CellBase) -> Any:
    try:
        from agno.db.sqlite import SqliteDb
    except ImportError as exc:
        raise NotApplicable(f"no agno.db.sqlite.SqliteDb in this release ({exc})") from None
    return SqliteDb(db_file=c.location)


def _confirm_all(run: Any) -> list[Any]:
    """Confirm every pending confirmation of a paused run; its requirements (for continue_run)."""
    reqs = list(getattr(run, "requirements", None) or [])
    for r in getattr(run, "active_requirements", None) or reqs:
        if getattr(r, "needs_confirmation", True):
            r.confirm()
    return reqs


def _team_api() -> dict[str, Any]:
    try:
        from agno.agent import Agent
        from agno.team import Team
        from agno.tools import tool
    except ImportError as exc:
        raise NotApplicable(f"no agno Team in this release ({exc})") from None
    try:
        from agno.team.mode import TeamMode
    except ImportError:
        TeamMode = None
    return {"Agent": Agent, "Team": Team, "tool": tool, "TeamMode": TeamMode}


def _member(api: dict[str, Any], c: CellBase, name: str, effect: str, confirm: bool,
            seen: dict[str, list[list[Any]]]) -> Any:
    """A member agent with one tool (``effect``) that it calls once, then answers."""
    @api["tool"](name=effect, requires_confirmation=confirm)
    def act() -> str:
        c.fire(effect, name)
        return f"{effect} done"

    def script(messages: Sequence[Any]) -> Reply:
        mine = [cid for cid, tool, _ in _calls(messages) if tool == effect]
        if mine and mine[-1] in _answered(messages):
            return ("text", f"{effect} done")
        return ("call", effect, {})

    seen[name] = []
    return api["Agent"](name=name, id=name, role=f"does {effect}", model=scripted(name, script, seen[name]),
                        tools=[act], telemetry=False)


def _leader_script(order: Sequence[str]) -> Callable[[Sequence[Any]], Reply]:
    """Delegate to each member of ``order`` that the messages show no answered delegation to, in order."""
    def script(messages: Sequence[Any]) -> Reply:
        done = _answered(messages)
        delegated = {args.get("member_id") for cid, tool, args in _calls(messages)
                     if tool == "delegate_task_to_member" and cid in done}
        for member in order:
            if member not in delegated:
                return ("call", "delegate_task_to_member", {"member_id": member, "task": f"please {member}"})
        return ("text", "all done")
    return script


def _team(api: dict[str, Any], c: CellBase, mode: str, members: Sequence[tuple[str, str, bool]],
          seen: dict[str, list[list[Any]]]) -> Any:
    agents = [_member(api, c, n, e, confirm, seen) for n, e, confirm in members]
    seen["leader"] = []
    kwargs: dict[str, Any] = {}
    if api["TeamMode"] is not None:
        kwargs["mode"] = getattr(api["TeamMode"], mode)
    elif mode == "route":
        kwargs["respond_directly"] = True
    return api["Team"](name="team", id="team", members=agents, db=_db(c), telemetry=False,
                       model=scripted("leader", _leader_script([n for n, _, _ in members]), seen["leader"]),
                       add_history_to_context=True, **kwargs)


def _status(run: Any) -> str:
    return str(getattr(getattr(run, "status", None), "value", getattr(run, "status", None))).lower()


async def _pause_then_continue(c: CellBase, build: Callable[[], Any]) -> dict[str, Any]:
    """Run the team until it pauses, confirm, then continue it from the database with a fresh team."""
    team = build()
    c.log(Kind.START)
    first = await team.arun("do the job", session_id=SESSION)
    if not getattr(first, "is_paused", False):
        raise NotReproduced(f"the team did not pause for the member's confirmation (status {_status(first)})")
    c.log(Kind.PAUSE, value=len(getattr(first, "requirements", None) or []))
    before = c.ledger.counts()
    team = build()
    saved = team.get_run_output(run_id=first.run_id, session_id=SESSION) if hasattr(team, "get_run_output") else first
    reqs = _confirm_all(saved or first)
    c.log(Kind.ANSWER, value="confirm")
    c.log(Kind.RESUME, mode="acontinue_run")
    try:
        second, error = await team.acontinue_run(run_id=first.run_id, requirements=reqs, session_id=SESSION), None
    except Exception as exc:  # a loud failure is an observation
        second, error = None, err(exc)
    after = c.ledger.counts()
    return {"paused_with": len(reqs), "before": before,
            "during_continue": {k: after.get(k, 0) - before.get(k, 0) for k in sorted(after)},
            "status": _status(second) if second is not None else None, "error": error,
            "paused_again": bool(getattr(second, "is_paused", False)),
            "content": str(getattr(second, "content", None))[:120] if second is not None else None}


@CELLS.cell("8029")
def route_continue_drops_member(c: CellBase) -> Observed:
    """A route-mode team delegates to a member whose tool needs confirmation; the team pauses; the
    confirmation is given and ``acontinue_run`` called on the leader's run. The confirmed tool must
    run once and the run finish."""
    api = _team_api()
    if api["TeamMode"] is None:
        raise NotApplicable("no TeamMode.route in this release")
    seen: dict[str, list[list[Any]]] = {}
    out = asyncio.run(_pause_then_continue(c, lambda: _team(api, c, "route", [("mailer", "send_email", True)], seen)))
    sent = c.ledger.counts().get("send_email", 0)
    completed = sent == 1 and out["status"] == "completed" and out["error"] is None
    behaviour = (f"the team paused with {out['paused_with']} requirement(s); after confirm, acontinue_run "
                 + (f"raised {out['error']}" if out["error"] else f"ended {out['status']}")
                 + f" and the confirmed send_email ran {sent}x")
    return Observed(behaviour, {"completed": completed, "detail": f"send_email ran {sent}x, run {out['status']}"},
                    out)


@CELLS.cell("7697")
def member_hitl_continue_redelegates(c: CellBase) -> Observed:
    """A coordinate-mode team delegates to ``researcher`` (no confirmation), then to ``deployer``
    (whose tool needs confirmation): the team pauses. After confirm, ``acontinue_run``: the leader
    must not delegate the finished research again."""
    api = _team_api()
    seen: dict[str, list[list[Any]]] = {}
    members = [("researcher", "research", False), ("deployer", "deploy", True)]
    out = asyncio.run(_pause_then_continue(c, lambda: _team(api, c, "coordinate", members, seen)))
    counts = c.ledger.counts()
    if not out["before"].get("research"):
        raise NotReproduced("the research member had not run before the pause")
    behaviour = (f"research ran before the pause; after confirm, acontinue_run "
                 + (f"raised {out['error']}" if out["error"] else f"ended {out['status']}")
                 + f"; research ran {counts.get('research', 0)}x, deploy {counts.get('deploy', 0)}x in all")
    return Observed(behaviour, {"effect_counts": counts, "expected": ["deploy", "research"]}, out)


DISTRIBUTIONS = ("agno", "sqlalchemy")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
