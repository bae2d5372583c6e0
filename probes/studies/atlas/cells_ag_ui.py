"""The Agent Framework AG-UI server's atlas cells (``python -m probes.studies.atlas.cells_ag_ui``, in a release's env).

The real AG-UI server: the release's ``add_agent_framework_fastapi_endpoint`` mounted on a
FastAPI app and served by uvicorn on a loopback port (127.0.0.1, an ephemeral port) in a
thread of the cell's process; the cell is its client and speaks the AG-UI protocol over
HTTP (a ``RunAgentInput`` posted as JSON, the reply read as server-sent events). The
agent behind it is an ``Agent`` with a scripted chat client (no model call): it asks
for the gated tool while the conversation holds no result for it, and answers in text
once it does -- so what it does shows what the server handed it. The gated tool fires
its effect through the harness oracle.

No ``from __future__ import annotations`` here: the framework reads the tool's
annotations to build its schema.
"""

import inspect
import json
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable

from probes.studies.atlas.cellkit import CellBase, Module, NotApplicable, Observed, Registry
from probes.core.history import Kind

CELLS = Registry()
HTTP_TIMEOUT = 60.0


def _scripted_client(decide: Callable[[list[Any]], list[Any]]) -> Any:
    """A chat client whose reply is ``decide(messages)`` (a list of ``Content``), streamed or not,
    with the framework's function-invocation and middleware layers as a real client has them."""
    import agent_framework
    from agent_framework import BaseChatClient, ChatResponse, ChatResponseUpdate, Message

    stream_cls = getattr(agent_framework, "ResponseStream", None)
    if stream_cls is None:
        from agent_framework._types import ResponseStream as stream_cls  # type: ignore[no-redef]
    layers = tuple(getattr(agent_framework, n) for n in ("FunctionInvocationLayer", "ChatMiddlewareLayer")
                   if hasattr(agent_framework, n))
    if len(layers) < 2:
        raise NotApplicable(f"agent-framework-core {_version('agent-framework-core')} has no FunctionInvocationLayer / "
                            f"ChatMiddlewareLayer to build a chat client on")

    class ScriptedClient(*layers, BaseChatClient):  # type: ignore[misc, valid-type]
        def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
            if stream:
                async def updates() -> Any:
                    yield ChatResponseUpdate(role="assistant", contents=decide(list(messages)))
                return stream_cls(updates(), finalizer=ChatResponse.from_updates)

            async def response() -> Any:
                return ChatResponse(messages=[Message(role="assistant", contents=decide(list(messages)))])
            return response()

    return ScriptedClient()


def _version(dist: str) -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


class _Server:
    """The release's AG-UI endpoint served by uvicorn on 127.0.0.1 (an ephemeral port), in a thread."""

    def __init__(self, agent: Any) -> None:
        import uvicorn
        from fastapi import FastAPI

        try:
            from agent_framework_ag_ui import add_agent_framework_fastapi_endpoint
        except ImportError as exc:  # which import failed says whether the release or its resolved core lacks it
            raise NotApplicable(f"agent_framework_ag_ui {_version('agent-framework-ag-ui')} does not import with "
                                f"agent-framework-core {_version('agent-framework-core')}: {exc}") from None
        app = FastAPI()
        params = inspect.signature(add_agent_framework_fastapi_endpoint).parameters
        # newer releases refuse an endpoint that does not say how requests are authorised: this one
        # serves one user (the cell) on loopback
        extra = {"single_user": True} if "single_user" in params else {}
        add_agent_framework_fastapi_endpoint(app, agent, "/agent", **extra)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                                    lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, name="ag-ui-server", daemon=True)

    def __enter__(self) -> "_Server":
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the AG-UI server did not start on loopback")
            time.sleep(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    def run(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """POST one ``RunAgentInput``; the events of its server-sent-event reply, in order."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/agent", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json",
                                                  "Accept": "text/event-stream"})
        events = []
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as reply:
            for raw in reply:
                line = raw.decode().strip()
                if line.startswith("data:"):
                    events.append(json.loads(line[5:]))
        return events


def _ending(events: list[dict[str, Any]], message: bool = False) -> str:
    """How a run's event stream ended: RUN_FINISHED, or RUN_ERROR with its code (and with ``message``
    its message, which may name a generated interrupt id: observations only, never the verdict text)."""
    last = next((e for e in reversed(events) if e.get("type") in ("RUN_FINISHED", "RUN_ERROR")), None)
    if last is None:
        return "no terminal event"
    if last["type"] == "RUN_FINISHED":
        return "RUN_FINISHED"
    return f"RUN_ERROR {last.get('code')}" + (f": {last.get('message')}" if message else "")


@CELLS.cell("7458")
def approval_consumed_before_failure(c: CellBase) -> Observed:
    """Run 1 asks for the gated ``deploy_change`` and ends on an approval interrupt. The client
    resumes with the approval (AG-UI's canonical ``resume`` entry); the model call that follows
    fails like a provider's HTTP 500. The client then retries the same resume, the provider
    healthy again. The approved call must be resumed to completion: the retry is accepted as the
    same approval and delivers the call's result, and the tool has run once."""
    from agent_framework import Agent, Content, tool

    provider = {"down": True}

    @tool(approval_mode="always_require")
    def deploy_change(target: str) -> str:
        """Deploy a change to the target environment."""
        c.fire("deploy_change", "deploy_change")
        return f"deployed to {target}"

    def decide(messages: list[Any]) -> list[Any]:
        results = [x for m in messages for x in (getattr(m, "contents", None) or [])
                   if getattr(x, "type", None) == "function_result"]
        if not results:
            return [Content.from_function_call(call_id="call-1", name="deploy_change", arguments={"target": "prod"})]
        if provider["down"]:
            c.log(Kind.ERROR, "model", value="provider HTTP 500")
            raise RuntimeError("provider error: HTTP 500")
        c.fire("model:answered", "model")
        return [Content.from_text(text="the change is deployed")]

    agent = Agent(client=_scripted_client(decide), name="deployer", instructions="deploy changes",
                  tools=[deploy_change])
    base = {"threadId": "thread-1", "state": {}, "tools": [], "context": [], "forwardedProps": {}}
    with _Server(agent) as server:
        c.log(Kind.START)
        first = server.run({**base, "runId": "run-1",
                            "messages": [{"id": "user-1", "role": "user", "content": "deploy the change to prod"}]})
        finished = [e for e in first if e.get("type") == "RUN_FINISHED"]
        outcome = (finished[-1].get("outcome") or {}) if finished else {}
        interrupts = outcome.get("interrupts") or []
        if not interrupts:
            raise NotApplicable(f"run 1 ended {_ending(first)} without an interrupt outcome (RUN_FINISHED."
                                f"outcome.interrupts) to resume: this release takes no canonical AG-UI resume")
        interrupt_id = interrupts[0]["id"]
        c.log(Kind.PAUSE, "deploy_change", value=interrupt_id)
        resume = [{"interruptId": interrupt_id, "status": "resolved", "payload": {"accepted": True}}]
        c.log(Kind.ANSWER, value="approve", interrupt=interrupt_id)
        second = server.run({**base, "runId": "run-2", "messages": [], "resume": resume})
        after_failure = c.ledger.counts().get("deploy_change", 0)
        provider["down"] = False
        c.log(Kind.RESUME, mode="retry of the same resume", value=interrupt_id)
        third = server.run({**base, "runId": "run-3", "messages": [], "resume": resume})
    counts = c.ledger.counts()
    delivered = any(e.get("type") == "TOOL_CALL_RESULT" and e.get("toolCallId") == "call-1" for e in third)
    retry_end = _ending(third)
    ran = counts.get("deploy_change", 0)
    completed = retry_end == "RUN_FINISHED" and delivered and ran == 1
    behaviour = (f"run 1 paused on an approval interrupt; the approving resume ended {_ending(second)} after "
                 f"deploy_change had run {after_failure}x; the retried resume ended {retry_end}, "
                 f"{'delivering' if delivered else 'without'} the call's result; deploy_change ran {ran}x in all"
                 f", the model answered {counts.get('model:answered', 0)}x")
    return Observed(behaviour, {"completed": completed,
                                "detail": f"retry {retry_end}; result delivered: {delivered}; tool runs: {ran}"},
                    {"interrupt": interrupt_id, "resume_ending": _ending(second, True),
                     "retry_ending": _ending(third, True),
                     "retry_events": [e.get("type") for e in third], "ran_before_retry": after_failure,
                     "counts": counts, "versions": {d: _version(d) for d in ("ag-ui-protocol", "fastapi", "uvicorn")}})


DISTRIBUTIONS = ("agent-framework-ag-ui", "agent-framework-core")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
