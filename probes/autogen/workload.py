"""AutoGen AgentChat workloads, each run in a fresh interpreter by ``run_child``.

No model is called. ``ScriptedModel`` is a ``ChatCompletionClient`` whose reply is a
pure function of the conversation it is shown: a last user message ``charge <order>``
gets a tool call ``charge(order)``; anything else gets the text ``done``. Because the
"model" has no hidden position (unlike a replay list), what an agent does after
``load_state`` depends only on the restored state -- which is what the probes test.

The tool ``charge`` is the non-idempotent effect (one ledger row per call), with park
points just before and just after the effect. The caller's checkpoint is
``save_state()`` after each turn, written atomically to a JSON file together with the
number of finished turns; recovery loads it into a *new* agent in another process.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from probes.core import oracle
from probes.core.atomic import atomic_write_json
from probes.core.nemesis import park


def _error(exc: BaseException) -> dict[str, str]:
    first = (str(exc).splitlines() or [""])[0]
    first = re.sub(r" at 0x[0-9a-f]+", "", first)
    return {"type": type(exc).__name__, "message": first[:240]}


def charge(order: str) -> str:
    """Charge an order: the external effect the contract counts."""
    park(f"{order}.before-effect")
    oracle.fire(f"charge:{order}")
    park(f"{order}.after-effect")
    return f"charged {order}"


def _model_class():
    from autogen_core import FunctionCall
    from autogen_core.models import ChatCompletionClient, CreateResult, ModelInfo, RequestUsage, UserMessage

    class ScriptedModel(ChatCompletionClient):
        """A deterministic stand-in for a model: the reply is a function of the conversation."""

        async def create(self, messages: Sequence[Any], *, tools: Sequence[Any] = [], tool_choice: Any = "auto",
                         json_output: Any = None, extra_create_args: Mapping[str, Any] = {},
                         cancellation_token: Any = None) -> CreateResult:
            usage = RequestUsage(prompt_tokens=0, completion_tokens=0)
            last = messages[-1] if messages else None
            if (isinstance(last, UserMessage) and isinstance(last.content, str)
                    and last.content.startswith("charge ")):
                order = last.content.split()[1]
                call = FunctionCall(id=f"call-{order}", name="charge", arguments=json.dumps({"order": order}))
                return CreateResult(finish_reason="function_calls", content=[call], usage=usage, cached=False)
            return CreateResult(finish_reason="stop", content="done", usage=usage, cached=False)

        def create_stream(self, *args: Any, **kwargs: Any):  # pragma: no cover - never used
            raise NotImplementedError("the scripted model does not stream")

        async def close(self) -> None:
            return None

        def actual_usage(self) -> RequestUsage:
            return RequestUsage(prompt_tokens=0, completion_tokens=0)

        def total_usage(self) -> RequestUsage:
            return RequestUsage(prompt_tokens=0, completion_tokens=0)

        def count_tokens(self, messages: Sequence[Any], *, tools: Sequence[Any] = []) -> int:
            return 0

        def remaining_tokens(self, messages: Sequence[Any], *, tools: Sequence[Any] = []) -> int:
            return 1_000_000

        @property
        def capabilities(self) -> Any:  # deprecated upstream, still abstract
            return self.model_info

        @property
        def model_info(self) -> ModelInfo:
            return ModelInfo(vision=False, function_calling=True, json_output=False, family="unknown",
                             structured_output=False)

    return ScriptedModel


def make_agent(name: str = "cashier"):
    from autogen_agentchat.agents import AssistantAgent

    return AssistantAgent(name, model_client=_model_class()(), tools=[charge], reflect_on_tool_use=False)


def make_team():
    from autogen_agentchat.conditions import MaxMessageTermination
    from autogen_agentchat.teams import RoundRobinGroupChat

    return RoundRobinGroupChat([make_agent("a1"), make_agent("a2")], termination_condition=MaxMessageTermination(3))


def _shape(messages: Sequence[Any]) -> list[list[str]]:
    """(source, message type) per message: the run's visible outcome without ids or times."""
    return [[getattr(m, "source", "?"), type(m).__name__] for m in messages]


# --- sessions: turns with a checkpoint after each -------------------------------------


async def _session(state_file: str, orders: list[str]) -> dict[str, Any]:
    agent = make_agent()
    path = Path(state_file)
    done = 0
    if path.exists():
        saved = json.loads(path.read_text())
        await agent.load_state(saved["state"])
        done = saved["turns_done"]
    shapes = []
    for order in orders[done:]:
        result = await agent.run(task=f"charge {order}")
        shapes.append(_shape(result.messages))
        done += 1
        atomic_write_json(path, {"turns_done": done, "state": await agent.save_state()})
        park(f"{order}.after-save")
    return {"resumed_at_turn": len(orders) - len(shapes), "turn_messages": shapes}


def session(ledger: str, incarnation: str, state_file: str, orders: list[str]) -> dict[str, Any]:
    """Run the turns ``charge <order>`` not yet recorded in ``state_file``, saving after each."""
    o = oracle.install(ledger, incarnation)
    info = asyncio.run(_session(state_file, orders))
    return {"counter": o.counter.snapshot(), **info}


async def _team_session(state_file: str, order: str) -> dict[str, Any]:
    team = make_team()
    result = await team.run(task=f"charge {order}")
    atomic_write_json(Path(state_file), {"turns_done": 1, "state": await team.save_state()})
    return {"turn_messages": [_shape(result.messages)]}


def team_session(ledger: str, incarnation: str, state_file: str, order: str) -> dict[str, Any]:
    """A two-agent round-robin team: a1 charges, a2 answers; then ``save_state``."""
    o = oracle.install(ledger, incarnation)
    info = asyncio.run(_team_session(state_file, order))
    return {"counter": o.counter.snapshot(), **info}


# --- tampering ----------------------------------------------------------------------

AGENT_TAMPERS = ("structural", "wrong-content-type", "removed-context", "wrong-version",
                 "rewound-history", "forged-unanswered-call")
TEAM_TAMPERS = ("team-unknown-thread-type", "rewound-speaker", "speaker-out-of-range")


def tamper(state: dict[str, Any], kind: str) -> dict[str, Any]:
    """Edit a saved state. Structural edits break the schema; forgeries keep it valid."""
    t = copy.deepcopy(state)
    if kind in TEAM_TAMPERS:
        manager = t["agent_states"]["RoundRobinGroupChatManager"]
        if kind == "team-unknown-thread-type":
            manager["message_thread"][1]["type"] = "ForgedMessageType"
        elif kind == "rewound-speaker":
            manager["next_speaker_index"] = (manager["next_speaker_index"] + 1) % 2
        else:
            manager["next_speaker_index"] = 7
        return t
    messages = t["llm_context"]["messages"] if "llm_context" in t else []
    if kind == "structural":
        messages[0]["type"] = "ForgedMessageType"
    elif kind == "wrong-content-type":
        messages[0]["content"] = 42
    elif kind == "removed-context":
        del t["llm_context"]
    elif kind == "wrong-version":
        t["version"] = "99.0.0"
    elif kind == "rewound-history":
        t["llm_context"]["messages"] = messages[:1]  # back to the user's request, as if never answered
    elif kind == "forged-unanswered-call":
        t["llm_context"]["messages"] = messages[:2]  # the tool call without its result
    else:
        raise ValueError(f"unknown tamper kind {kind!r}; choose from {', '.join(AGENT_TAMPERS + TEAM_TAMPERS)}")
    return t


async def _restore(state_file: str, tamper_kind: str | None, team: bool) -> dict[str, Any]:
    state = json.loads(Path(state_file).read_text())["state"]
    if tamper_kind:
        state = tamper(state, tamper_kind)
    target = make_team() if team else make_agent()
    try:
        await target.load_state(state)
    except Exception as exc:  # noqa: BLE001 - a loud refusal at load is the observation
        return {"stage": "load", "error": _error(exc), "messages": None}
    try:
        result = await target.run()  # continue without new input: what does the restored state do?
    except Exception as exc:  # noqa: BLE001 - a loud failure at run time is the observation
        return {"stage": "run", "error": _error(exc), "messages": None}
    return {"stage": None, "error": None, "messages": _shape(result.messages)}


def restore(ledger: str, incarnation: str, state_file: str, tamper_kind: str | None = None,
            team: bool = False) -> dict[str, Any]:
    """Load the saved state (optionally tampered) into a new agent or team and continue it."""
    o = oracle.install(ledger, incarnation)
    info = asyncio.run(_restore(state_file, tamper_kind, team))
    return {"counter": o.counter.snapshot(), **info}
