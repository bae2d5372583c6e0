"""LlamaIndex Workflows: an input request between steps, the caller's serialized Context.

``s1`` (StartEvent -> Asked) -> ``ask`` (-> ``InputRequiredEvent``) -> ``s2``
(``HumanResponseEvent`` -> StopEvent) run the kit's first step, the start of the second
and its rest. The framework has no checkpointer (LI-8): the application snapshots the
context. As in the docs' "Snapshot the context", ``ctx.to_dict()`` is written as JSON when
the input request reaches the event stream and the run is cancelled (LI-9); after every
run that returns, the ended context is written too (``states/<ns>-<paused|completed>.json``;
a pause's handle is its file). Answering is ``Context.from_dict`` + ``run(ctx=...)`` +
``send_event(HumanResponseEvent)`` in a fresh process. The pause-twice workflow's ``s2`` asks
twice in one step, two ``ctx.wait_for_event`` calls; an answer to the first is driven like a start
(its second ``InputRequiredEvent`` snapshotted and the run cancelled). SAVE_HOOK is that snapshot write
(``ctx.to_dict()`` + the atomic file's ``os.replace``), the only durable write there is.
"""

import asyncio
import json
import os
import types
import sys
import time
from pathlib import Path
from typing import Any

from probes.citations import doc
from probes.core.atomic import atomic_write_json
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability, required_fields

TIMEOUT = 20.0  # the framework's own run timeout: a restored run that never finishes raises


def _waiting_trigger(name: str) -> type:
    """The event a step that waits (``ctx.wait_for_event``) is triggered by, as a class of this module:
    the snapshot keeps a waiting step's trigger to re-deliver it on the answer, and ``Context.from_dict``
    imports its class by qualified name (``module.Name``), which a class built inside ``_workflow`` is
    not. Built on first use (the framework is imported lazily) and kept, one class per name."""
    made = globals().get(name)
    if made is None:
        from workflows.events import Event
        made = globals()[name] = type(name, (Event,), {"__annotations__": {"value": str}, "__module__": __name__,
                                                       "__qualname__": name})
    return made


def _workflow() -> Any:
    """The steps of ``runtime.shape()`` as workflow steps linked by events (the original ``s1`` ->
    ``Asked`` -> ``ask`` -> input request -> ``s2`` -> stop, or the code a change protocol deployed):
    the paused step is ``ask`` (``ask_<name>`` for another name) and the step named after it, which
    takes the human response; every other step hands its value on in an event of its own."""
    from workflows import Context, Workflow, step
    from workflows.events import Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

    class Asked(Event):
        note: str

    def handed(after: str) -> type:  # the event a step hands its value on in
        return type(f"After{after.capitalize()}", (Event,), {"__annotations__": {"value": str}})

    def method(name: str, body: Any, takes: Any, returns: Any, with_ctx: bool = False) -> Any:
        body.__name__, body.__qualname__ = name, f"Kit.{name}"  # a method of the class built below
        body.__annotations__ = {**({"ctx": Context} if with_ctx else {}), "ev": takes, "return": returns}
        return step(body)

    shape = runtime.shape()
    steps: dict[str, Any] = {}
    takes: Any = StartEvent
    for i, (name, role) in enumerate(shape):
        last = i == len(shape) - 1
        if role == "pause":
            asker = "ask" if name == "s2" else f"ask_{name}"

            async def ask(self: Any, ev: Any) -> Any:
                runtime.before_pause()
                return InputRequiredEvent(prefix="answer?")
            steps[asker] = method(asker, ask, takes, InputRequiredEvent)
            out = StopEvent if last else handed(name)

            async def answered(self: Any, ctx: Any, ev: Any, out: Any = out) -> Any:
                value = runtime.step2(ev.response)
                await ctx.store.set("outcome", value)  # so the ended context's snapshot tells the outcome
                return StopEvent(result=value) if out is StopEvent else out(value=value)
            steps[name] = method(name, answered, HumanResponseEvent, out, with_ctx=True)
        elif role == "pause-twice":
            out = StopEvent if last else handed(name)

            async def twice(self: Any, ctx: Any, ev: Any, out: Any = out) -> Any:
                # a step that asks twice waits twice, as the docs' human-in-the-loop step waits once:
                # ``wait_for_event`` with an ``InputRequiredEvent`` on the stream for each wait (its own
                # ``waiter_id``); an answer resolves the wait and the runtime replays the step (LI-3). In
                # 2.22.2 the first wait's record stays in the context until the step returns, so the second
                # answer matches it too: the step replays once per wait, the first wait returning that answer
                runtime.before_pause()
                first = await ctx.wait_for_event(HumanResponseEvent, waiter_id="first",
                                                 waiter_event=InputRequiredEvent(prefix="first answer?"))
                runtime.first_answer(first.response)
                second = await ctx.wait_for_event(HumanResponseEvent, waiter_id="second",
                                                  waiter_event=InputRequiredEvent(prefix="second answer?"))
                value = runtime.second_answer(second.response)
                await ctx.store.set("outcome", value)  # so the ended context's snapshot tells the outcome
                return StopEvent(result=value) if out is StopEvent else out(value=value)
            steps[name] = method(name, twice, takes, out, with_ctx=True)
        else:
            after = None if last else shape[i + 1][1]
            out = (StopEvent if last else Asked if (name, after) == ("s1", "pause")
                   else _waiting_trigger(f"After{name.capitalize()}") if after == "pause-twice" else handed(name))

            async def run(self: Any, ev: Any, out: Any = out, name: str = name, role: str = role) -> Any:
                value = runtime.step1() if role == "first" else runtime.extra_step(name, getattr(ev, "value", None))
                if out is StopEvent:
                    return StopEvent(result=value)
                return out(note=value) if out is Asked else out(value=value)
            steps[name] = method(name, run, takes, out)
        takes = out
    Kit = types.new_class("Kit", (Workflow,), exec_body=lambda ns: ns.update(steps, __module__=__name__))
    return Kit(timeout=TIMEOUT)


def save_context(ctx: Any, states: Path, status: str) -> str:
    """The durable write: the framework's serializer, then an atomic file replace (hooked)."""
    name = f"{time.time_ns():020d}-{os.getpid()}-{status}.json"
    atomic_write_json(states / name, ctx.to_dict())
    return name


class LlamaIndexAdapter(Adapter):
    framework = "llamaindex"
    packages = ("llama-index-workflows",)
    backends = ("file",)
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.CODE_CHANGE, Capability.TWO_PAUSES})
    code_changes = runtime.CODE_CHANGES
    recovery_modes = ("latest-snapshot",)
    answers = ("yes", "no")
    # As the paper's campaign cites them (probes/citations.py): LI-2 (at-least-once resume) for a kill, and here
    # for a raised crash too; LI-1 completed steps do not re-run; LI-7 a snapshot is resumable. LI-6: a context
    # whose run ended (is_running false) restores as state carried into a new run, from StartEvent. LI-3 (the
    # wait_for_event docstring, as the paper's campaign cites it for the wait probes): an answer replays the whole
    # step, so in a step that waits twice the code between the waits (the first answer's effect) runs again.
    citations = {"EO *kill*": doc("LI-2", "deviation"), "EO crash:raise@*": doc("LI-2", "deviation"),
                 "PC *": doc("LI-1", "claims"), "LV *": doc("LI-7", "claims"),
                 "EO tamper:flip:is_running": doc("LI-6", "deviation"),
                 "EO pause-twice:*": doc("LI-3", "deviation"), "CO pause-twice:*": doc("LI-3", "deviation")}

    def hook(self) -> None:
        runtime.hook_save(sys.modules[__name__], "save_context", writes=((os, "replace"),))

    def start(self) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            return await self._driven(_workflow().run())
        return asyncio.run(go())

    async def _driven(self, handler: Any) -> dict[str, Any]:
        """Run until the workflow asks (an ``InputRequiredEvent`` on the stream: snapshot, cancel) or ends."""
        from workflows.events import InputRequiredEvent
        async for ev in handler.stream_events():
            if isinstance(ev, InputRequiredEvent):
                name = save_context(handler.ctx, self.workdir / "states", "paused")
                await handler.cancel_run()  # hand the run off to the snapshot (LI-9)
                return {"status": "paused", "handle": name}
        return await self._finished(handler)

    async def _finished(self, handler: Any) -> dict[str, Any]:
        result = await handler
        save_context(handler.ctx, self.workdir / "states", "completed")
        return {"status": "completed", "outcome": result}

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        from workflows import Context
        from workflows.events import HumanResponseEvent
        path = self.workdir / "states" / handle if handle else self.state_paths()[-1]

        async def go() -> dict[str, Any]:
            workflow = _workflow()
            handler = workflow.run(ctx=Context.from_dict(workflow, json.loads(path.read_text())))
            handler.ctx.send_event(HumanResponseEvent(response=answer))
            if runtime.asks_twice():
                return await self._driven(handler)  # after the first answer the step asks again
            # one pause: an input request after the answer is a new run's (a stray on an ended context),
            # which the answer already sent serves; the run goes on to its end
            return await self._finished(handler)
        return asyncio.run(go())

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        paths = self.state_paths()
        if not paths:
            return self.nothing_durable("no context snapshot written yet")
        if paths[-1].name.endswith("-paused.json"):  # the run waits for its answer
            return {"status": "paused", "handle": paths[-1].name}
        stored = self.load_state(paths[-1])["state"]["state_data"]["_data"].get("outcome")
        return {"status": "completed", "outcome": json.loads(stored) if stored else None}

    def state_paths(self) -> list[Any]:
        return sorted((self.workdir / "states").glob("*.json"))

    def state_required(self, doc: Any) -> dict[str, Any]:
        """A snapshot is ``ctx.to_dict()``, which ``Context.from_dict`` parses with
        ``SerializedContext.from_dict_auto`` (``workflows/context/context_types.py``, called from
        ``workflows/context/pre_context.py``): a document with a ``version`` is validated as the
        pydantic ``SerializedContext``, one without as the legacy ``SerializedContextV0``. Its
        fields without a default are the required keys (none, in 2.22: every field has one)."""
        from workflows.context.context_types import SerializedContext, SerializedContextV0
        model = SerializedContextV0 if isinstance(doc, dict) and doc.get("version") is None else SerializedContext
        return {"status": "schema", "required": required_fields(model), "model": f"workflows {model.__name__}"}
