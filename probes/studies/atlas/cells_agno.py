"""The Agno atlas cells (``python -m probes.studies.atlas.cells_agno``, in a release's side environment).

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

from probes.studies.atlas.cellkit import CellBase, Module, NotApplicable, NotReproduced, Observed, Registry, err
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
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("agno"):
            raise  # a dependency missing from the environment: a harness error, not n/a
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


def _member(api: dict[str, Any], c: CellBase, name: str, tool: str, confirm: bool,
            seen: dict[str, list[list[Any]]], prefix: str = "") -> Any:
    """A member agent with one tool that it calls once, then answers; the tool fires ``prefix + tool``."""
    @api["tool"](name=tool, requires_confirmation=confirm)
    def act() -> str:
        c.fire(f"{prefix}{tool}", name)
        return f"{tool} done"

    def script(messages: Sequence[Any]) -> Reply:
        mine = [cid for cid, called, _ in _calls(messages) if called == tool]
        if mine and mine[-1] in _answered(messages):
            return ("text", f"{tool} done")
        return ("call", tool, {})

    seen[name] = []
    return api["Agent"](name=name, id=name, role=f"does {tool}", model=scripted(name, script, seen[name]),
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
          seen: dict[str, list[list[Any]]], prefix: str = "") -> Any:
    """A team of ``members`` (name, tool, needs confirmation) on the cell's database."""
    agents = [_member(api, c, n, tool, confirm, seen, prefix) for n, tool, confirm in members]
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


async def _pause_then_continue(c: CellBase, build: Callable[[], Any], rebuild: bool,
                               stream: bool = False) -> dict[str, Any]:
    """Run the team until it pauses, confirm, and continue it: on the same team object (the report's
    shape), or (``rebuild``) on a team built again that reads the paused run from the database;
    ``stream``: the continuation streamed (its events drained), the run then read back."""
    team = build()
    c.log(Kind.START)
    first = await team.arun("do the job", session_id=SESSION)
    if not getattr(first, "is_paused", False):
        raise NotReproduced(f"the team did not pause for the member's confirmation (status {_status(first)})")
    c.log(Kind.PAUSE, value=len(getattr(first, "requirements", None) or []))
    before = c.ledger.counts()
    saved = first
    if rebuild:
        team = build()
        saved = (team.get_run_output(run_id=first.run_id, session_id=SESSION)
                 if hasattr(team, "get_run_output") else None) or first
    reqs = _confirm_all(saved)
    c.log(Kind.ANSWER, value="confirm")
    c.log(Kind.RESUME, mode="acontinue_run" + (" on a rebuilt team" if rebuild else ""))
    try:
        if stream:
            async for _event in team.acontinue_run(run_id=first.run_id, requirements=reqs, session_id=SESSION,
                                                   stream=True):
                pass
            second, error = team.get_run_output(run_id=first.run_id, session_id=SESSION), None
        else:
            second, error = await team.acontinue_run(run_id=first.run_id, requirements=reqs, session_id=SESSION), None
    except Exception as exc:  # a loud failure is an observation
        second, error = None, err(exc)
    after = c.ledger.counts()
    return {"paused_with": len(reqs), "before": before,
            "during_continue": {k: after.get(k, 0) - before.get(k, 0) for k in sorted(after)},
            "status": _status(second) if second is not None else None, "error": error,
            "paused_again": bool(getattr(second, "is_paused", False)),
            "content": str(getattr(second, "content", None))[:120] if second is not None else None}


ARMS = {"same team": (False, False), "rebuilt team": (True, False)}  # (rebuild from the database, stream)
STREAMED = {**ARMS, "same team streamed": (False, True)}


def _arms(c: CellBase, team: Callable[[str], Any], arms: dict[str, tuple[bool, bool]] = ARMS) -> dict[str, Any]:
    """Both arms, each on its own database file and effect names prefixed by the arm."""
    out = {}
    for arm, (rebuild, stream) in arms.items():
        c.location = str(c.workdir / f"{arm.replace(' ', '-')}.sqlite")
        out[arm] = asyncio.run(_pause_then_continue(c, lambda arm=arm: team(arm), rebuild, stream))
    return out


@CELLS.cell("8029")
def route_continue_drops_member(c: CellBase) -> Observed:
    """A route-mode team delegates to a member whose tool needs confirmation; the team pauses; the
    confirmation is given and ``acontinue_run`` called on the leader's run -- on the same team, and on
    a team built again from the database. The confirmed tool must run once and the run finish."""
    api = _team_api()
    if api["TeamMode"] is None:
        raise NotApplicable("no TeamMode.route in this release")
    seen: dict[str, list[list[Any]]] = {}
    out = _arms(c, lambda arm: _team(api, c, "route", [("mailer", "send_email", True)], seen, f"{arm}:"))
    counts = c.ledger.counts()
    parts, ok = [], True
    for arm, o in out.items():
        sent = counts.get(f"{arm}:send_email", 0)
        ok = ok and sent == 1 and o["status"] == "completed" and o["error"] is None
        parts.append(f"{arm}: paused with {o['paused_with']} requirement(s); after confirm, acontinue_run "
                     + (f"raised {o['error']}" if o["error"] else f"ended {o['status']}")
                     + f" and the confirmed send_email ran {sent}x")
    detail = ", ".join(f"{arm}: send_email ran {counts.get(f'{arm}:send_email', 0)}x, run {o['status']}"
                       for arm, o in out.items())
    return Observed("; ".join(parts), {"completed": ok, "detail": detail}, {**out, "counts": counts})


@CELLS.cell("7697")
def member_hitl_continue_redelegates(c: CellBase) -> Observed:
    """A coordinate-mode team delegates to ``researcher`` (no confirmation), then to ``deployer``
    (whose tool needs confirmation): the team pauses. After confirm, ``acontinue_run`` (same team, a
    team built again from the database, and the same team with the continuation streamed, as the
    report's script does): the leader must not delegate the finished research again."""
    api = _team_api()
    seen: dict[str, list[list[Any]]] = {}
    out = _arms(c, lambda arm: _team(api, c, "coordinate", [("researcher", "research", False),
                                                           ("deployer", "deploy", True)], seen, f"{arm}:"),
                STREAMED)
    counts = c.ledger.counts()
    if not all(o["before"].get(f"{arm}:research") for arm, o in out.items()):
        raise NotReproduced("the research member had not run before the pause")
    behaviour = "; ".join(f"{arm}: research ran before the pause; after confirm, acontinue_run "
                          + (f"raised {o['error']}" if o["error"] else f"ended {o['status']}")
                          + f"; research ran {counts.get(f'{arm}:research', 0)}x, deploy "
                            f"{counts.get(f'{arm}:deploy', 0)}x in all" for arm, o in out.items())
    reran = {f"{arm}:research": o["during_continue"].get(f"{arm}:research", 0) for arm, o in out.items()}
    return Observed(behaviour, {"runs_after_recovery": reran, "durable_prefix": sorted(reran)},
                    {**out, "counts": counts})


def _tool_call_turns(messages: Sequence[Any]) -> dict[str, int]:
    """How many assistant messages in ``messages`` carry each tool call id."""
    out: dict[str, int] = {}
    for cid, _tool, _args in _calls(messages):
        out[cid] = out.get(cid, 0) + 1
    return out


def _unpaired(messages: Sequence[Any]) -> list[str]:
    """Tool call ids of assistant messages not followed by a tool result for them -- what Chat
    Completions rejects ("An assistant message with 'tool_calls' must be followed by tool messages")."""
    bad = []
    for i, m in enumerate(messages):
        for tc in getattr(m, "tool_calls", None) or []:
            later = {getattr(n, "tool_call_id", None) for n in messages[i + 1:] if getattr(n, "role", None) == "tool"}
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            if tc.get("id") not in later or getattr(nxt, "role", None) != "tool":
                bad.append(tc.get("id"))
    return bad


@CELLS.cell("10086")
def background_stream_continue_duplicates_turn(c: CellBase) -> Observed:
    """An agent (history in context) calls an ``external_execution`` tool: the run pauses; the result
    is set and the run continued with ``acontinue_run(stream=True, background=True)``, the shape an
    HTTP server uses. The model must be sent the run's tool-call turn once, followed by its result."""
    try:
        from agno.agent import Agent
        from agno.tools import tool
    except ImportError as exc:
        raise NotApplicable(f"no agno Agent in this release ({exc})") from None
    import inspect

    if "background" not in inspect.signature(Agent.acontinue_run).parameters:
        raise NotApplicable("acontinue_run has no background= in this release")
    seen: list[list[Any]] = []

    @tool(name="lookup", external_execution=True)
    def lookup() -> str:
        return "never run here: the caller executes it"

    def script(messages: Sequence[Any]) -> Reply:
        if any(getattr(m, "role", None) == "tool" for m in messages):
            return ("text", "the answer is 42")
        return ("call", "lookup", {})

    def build() -> Any:
        return Agent(name="asker", id="asker", model=scripted("asker", script, seen), tools=[lookup], db=_db(c),
                     add_history_to_context=True, telemetry=False)

    async def drive() -> dict[str, Any]:
        agent = build()
        c.log(Kind.START)
        first = await agent.arun("what is the answer?", session_id=SESSION)
        if not getattr(first, "is_paused", False):
            raise NotReproduced(f"the run did not pause for the external tool (status {_status(first)})")
        c.log(Kind.PAUSE, "lookup")
        agent = build()
        saved = agent.get_run_output(run_id=first.run_id, session_id=SESSION) or first
        reqs = list(getattr(saved, "requirements", None) or [])
        for r in reqs:
            r.set_external_execution_result("42")
        c.log(Kind.ANSWER, value="42")
        sent_before = len(seen)
        c.log(Kind.RESUME, mode="acontinue_run(stream=True, background=True)")
        error = None
        try:
            stream = agent.acontinue_run(run_id=first.run_id, requirements=reqs, session_id=SESSION, stream=True,
                                         background=True)
            if inspect.isawaitable(stream):
                stream = await stream
            async for _event in stream:
                pass
            for _ in range(200):  # a background run may still be finishing: poll its stored status
                done = agent.get_run_output(run_id=first.run_id, session_id=SESSION)
                if _status(done) not in ("running", "pending"):
                    break
                await asyncio.sleep(0.05)
        except ImportError:
            raise  # a missing dependency is a broken environment, not an observation
        except Exception as exc:  # a loud failure is an observation
            error = err(exc)
        done = agent.get_run_output(run_id=first.run_id, session_id=SESSION)
        sent = seen[sent_before:]
        return {"model_calls_on_continue": len(sent), "error": error, "status": _status(done),
                "turns": _tool_call_turns(sent[0]) if sent else {}, "unpaired": _unpaired(sent[0]) if sent else [],
                "roles": [getattr(m, "role", None) for m in sent[0]] if sent else []}

    out = asyncio.run(drive())
    if not out["model_calls_on_continue"]:
        raise NotReproduced(f"the continued run never called the model (status {out['status']}, error {out['error']})")
    turns = {f"tool-call turn {k}": v for k, v in out["turns"].items()}
    behaviour = (f"on the continue the model was sent {', '.join(f'{k} {v}x' for k, v in sorted(turns.items()))}"
                 f" ({len(out['unpaired'])} without its result: {', '.join(out['unpaired']) or 'none'}); the run "
                 f"ended {out['status']}")
    return Observed(behaviour, {"effect_counts": turns}, out)


DISTRIBUTIONS = ("agno", "sqlalchemy")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
