"""A scripted chat model: real LangChain tool-calling messages, no network.

Why: the live protocols must be testable end to end (through real LangGraph, real
checkpoints, real interrupts) on a machine without keys or internet. This model
reads the same prompts a real model gets and answers with the tool call a compliant
model would make. It also serves as each live cell's *control* trial: the protocol
with the model's judgement taken out, so the deterministic verdict is on record next
to the live one. ``behaviour`` makes it misbehave on purpose, so tests can check
that refusals and malformed calls become harness errors, not verdicts.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Sequence

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

Behaviour = Literal["follow", "refuse", "malformed", "disobey"]

_DECIDE = re.compile(r"your decision for this request is:\s*(APPROVE|REJECT)", re.I)
_RECORDED = re.compile(r"recorded reviewer decision:\s*(APPROVED|REJECTED)", re.I)
_INVOICE = re.compile(r"send invoice\s+(\d+)", re.I)


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


class ScriptedChatModel(BaseChatModel):
    """Answers the live protocols' prompts with the tool call they ask for."""

    behaviour: Behaviour = "follow"

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-caller"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], tool_choice=tool_choice, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  tools: list[dict[str, Any]] | None = None, tool_choice: str | None = None,
                  **kwargs: Any) -> ChatResult:
        reply = self._answer(messages, [t["function"]["name"] for t in tools or []], tool_choice)
        words = sum(len(_text(m).split()) for m in messages)
        reply.usage_metadata = {"input_tokens": words, "output_tokens": 8, "total_tokens": words + 8}
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _call(self, name: str, args: dict[str, Any], n: int) -> AIMessage:
        if self.behaviour == "refuse":
            return AIMessage(content="I would rather not call a tool for this.")
        if self.behaviour == "malformed":
            args = {k: "not-a-valid-value" for k in args}
        return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{n}", "type": "tool_call"}])

    def _answer(self, messages: list[BaseMessage], tool_names: list[str], forced: str | None) -> AIMessage:
        system = " ".join(_text(m) for m in messages if isinstance(m, SystemMessage))
        n = len(messages)
        if forced == "submit_decision":
            m = _DECIDE.search(system)
            approve = bool(m) and m.group(1).upper() == "APPROVE"
            if self.behaviour == "disobey":
                approve = not approve
            return self._call("submit_decision", {"approve": approve}, n)
        if forced == "execute":
            m = _RECORDED.search(" ".join(_text(x) for x in messages))
            approved = bool(m) and m.group(1).upper() == "APPROVED"
            action = "ship" if approved else "cancel"
            if self.behaviour == "disobey":
                action = "cancel" if approved else "ship"
            return self._call("execute", {"action": action}, n)
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return AIMessage(content=f"Done: {_text(last)}")
        if isinstance(last, HumanMessage) and "send_invoice" in tool_names:
            m = _INVOICE.search(_text(last))
            if m:
                invoice = int(m.group(1))
                if self.behaviour == "disobey":
                    invoice += 1
                # ids unique within a thread: the history length grows every turn
                return self._call("send_invoice", {"invoice_id": invoice}, n)
        return AIMessage(content="Nothing to do.")
