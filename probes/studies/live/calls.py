"""One guarded model call, the per-run budget, and harness-error classification.

Why a wrapper: every model call of the live campaign must (1) count against a cap
that was printed before the run started, (2) end in a well-formed tool call or be
recorded as a harness error -- never as a verdict -- and (3) never let a key leak
into an error message that ends up in a receipt.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from probes.core.errors import HarnessError, UsageError

# Per-call limit on generated tokens: the protocol answers are one tool call or one
# short sentence, so a small limit bounds the cost of a model that rambles.
MAX_OUTPUT_TOKENS_PER_CALL = 512


class BudgetExhausted(UsageError):
    """The per-run cap on calls or tokens would be exceeded: stop the run, keep receipts."""


class ModelHarnessError(HarnessError):
    """A model call could not drive the protocol (timeout, refusal, malformed tool call...).

    ``kind`` is one of ``KINDS``; it is counted separately from verdicts.
    """

    KINDS = ("timeout", "api_error", "no_tool_call", "malformed_tool_call", "off_script", "loop", "oracle", "other")

    def __init__(self, kind: str, detail: str) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"unknown harness error kind {kind!r}")
        self.kind = kind
        self.detail = redact(detail)
        super().__init__(f"{kind}: {self.detail}")


# --- secrets ---------------------------------------------------------------------

_KEY_PATTERNS = (
    re.compile(r"sk-[A-Za-z0-9_\-]{6,}"),          # OpenAI / Anthropic style keys
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"),
    re.compile(r"(?i)(api[_-]?key[\"'=:\s]+)[A-Za-z0-9._\-]{8,}"),
)
_secret_env_names: set[str] = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}


def register_secret_env(name: str) -> None:
    """Treat the value of environment variable ``name`` as a secret to redact."""
    if name:
        _secret_env_names.add(name)


def redact(text: str, limit: int = 400) -> str:
    """Remove every known key value and anything shaped like a key; shorten.

    Provider error messages sometimes echo a (partly masked) key; receipts must not.
    """
    out = str(text)
    for name in sorted(_secret_env_names):
        value = os.environ.get(name)
        if value and len(value) >= 4:
            out = out.replace(value, "[redacted]")
    for pattern in _KEY_PATTERNS:
        out = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + "[redacted]", out)
    out = " ".join(out.split())
    return out if len(out) <= limit else out[: limit - 3] + "..."


# --- budget ----------------------------------------------------------------------


@dataclass
class Budget:
    """A per-run cap on model calls and tokens (input + output), printed before the run."""

    max_calls: int
    max_tokens: int
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def require(self, calls: int) -> None:
        """Refuse to start a unit of work that might need ``calls`` more calls than are left."""
        if self.calls + calls > self.max_calls or self.tokens >= self.max_tokens:
            raise BudgetExhausted(
                f"live: per-run cap reached (calls {self.calls}/{self.max_calls}, tokens "
                f"{self.tokens}/{self.max_tokens}); completed cells are kept as receipts -- rerun with "
                f"the same parameters to continue (the cap applies per run) or raise max_calls/max_tokens"
            )

    def charge(self, usage: dict[str, int] | None) -> None:
        self.calls += 1
        if usage:
            self.input_tokens += int(usage.get("input_tokens", 0) or 0)
            self.output_tokens += int(usage.get("output_tokens", 0) or 0)

    def snapshot(self) -> dict[str, int]:
        return {"calls": self.calls, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


# --- the call --------------------------------------------------------------------


@dataclass
class CallLog:
    """What one trial's calls cost; run-varying, so it goes to observations/metrics only."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    roles: list[str] = field(default_factory=list)


def _classify(exc: BaseException) -> str:
    name = type(exc).__name__.lower()
    module = type(exc).__module__.lower()
    if "timeout" in name:
        return "timeout"
    if module.startswith(("openai", "anthropic", "httpx", "httpcore")) or "connection" in name or "api" in name:
        return "api_error"
    return "other"


class Caller:
    """Calls a chat model for one trial: budget first, then validation of the answer."""

    def __init__(self, model: Any, budget: Budget, log: CallLog) -> None:
        self.model = model
        self.budget = budget
        self.log = log

    def _invoke(self, role: str, messages: Sequence[Any], tools: list[dict[str, Any]],
                force: str | None) -> Any:
        self.budget.require(1)
        bound = self.model.bind_tools(tools, tool_choice=force) if force else self.model.bind_tools(tools)
        try:
            reply = bound.invoke(list(messages))
        except HarnessError:
            raise
        except Exception as exc:  # provider/client failure: measured as a harness error
            self.budget.charge(None)
            self.log.calls += 1
            self.log.roles.append(role)
            raise ModelHarnessError(_classify(exc), f"{role}: {type(exc).__name__}: {exc}") from None
        usage = dict(getattr(reply, "usage_metadata", None) or {})
        self.budget.charge(usage)
        self.log.calls += 1
        self.log.input_tokens += int(usage.get("input_tokens", 0) or 0)
        self.log.output_tokens += int(usage.get("output_tokens", 0) or 0)
        self.log.roles.append(role)
        return reply

    def tool_call(self, role: str, messages: Sequence[Any], tool: dict[str, Any]) -> dict[str, Any]:
        """Ask for exactly one call of ``tool``; return its arguments, validated by the schema."""
        reply = self._invoke(role, messages, [tool], force=tool["function"]["name"])
        calls = list(getattr(reply, "tool_calls", None) or [])
        if not calls:
            text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)[:200]
            raise ModelHarnessError("no_tool_call", f"{role}: answered without a tool call: {text[:160]!r}")
        call = calls[0]
        check_tool_call(role, call, tool)
        return dict(call["args"])

    def respond(self, role: str, messages: Sequence[Any], tools: list[dict[str, Any]]) -> Any:
        """A free agent turn (tool call or text): the AI message, tool calls validated."""
        reply = self._invoke(role, messages, tools, force=None)
        by_name = {t["function"]["name"]: t for t in tools}
        for call in getattr(reply, "tool_calls", None) or []:
            tool = by_name.get(call.get("name"))
            if tool is None:
                raise ModelHarnessError("malformed_tool_call", f"{role}: unknown tool {call.get('name')!r}")
            check_tool_call(role, call, tool)
        if getattr(reply, "invalid_tool_calls", None):
            raise ModelHarnessError("malformed_tool_call", f"{role}: unparseable tool call arguments")
        return reply


def check_tool_call(role: str, call: dict[str, Any], tool: dict[str, Any]) -> None:
    """Name, required arguments and primitive types as the tool schema declares."""
    fn = tool["function"]
    if call.get("name") != fn["name"]:
        raise ModelHarnessError("malformed_tool_call", f"{role}: called {call.get('name')!r}, not {fn['name']!r}")
    args = call.get("args")
    if not isinstance(args, dict):
        raise ModelHarnessError("malformed_tool_call", f"{role}: arguments are not an object")
    schema = fn.get("parameters", {})
    types = {"boolean": bool, "integer": int, "string": str}
    for name in schema.get("required", []):
        if name not in args:
            raise ModelHarnessError("malformed_tool_call", f"{role}: missing argument {name!r}")
    for name, spec in schema.get("properties", {}).items():
        if name not in args:
            continue
        want = types.get(spec.get("type", ""))
        value = args[name]
        if want is int and isinstance(value, bool) or want is not None and not isinstance(value, want):
            raise ModelHarnessError("malformed_tool_call", f"{role}: argument {name}={value!r} is not {spec['type']}")
        if "enum" in spec and value not in spec["enum"]:
            raise ModelHarnessError("malformed_tool_call", f"{role}: argument {name}={value!r} not in {spec['enum']}")
