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

The handler workflow (the kit's handler protocol): ``s2`` fires its effect and raises, and a step decorated
``@catch_error(for_steps=["s2"])``, the framework's own error handler (handed a ``StepFailedEvent``), runs the
kit's handler step and ends the run with its result. The parallel workflow (the kit's parallel protocol):
``s1`` fans out with ``ctx.send_event`` to one step per branch, each waiting with ``ctx.wait_for_event`` for a
``HumanResponseEvent`` whose ``branch`` names it, and a join gathers both answers with ``ctx.collect_events``;
the run is snapshotted once it has settled (every branch waiting or joined), and a paused status names the
branches whose wait the snapshot records (``open_branches``); ``resume_branch`` answers one. The callback
workflow is not built: 2.22.2 has no approval callback or hook (``missing``).

The pause mechanism is a variant of the workflow (issue 25), chosen per process by the
environment variable ``RC_LI_WORKFLOW`` (unset: the split steps above, the kit's workflow,
unchanged). ``wait_for_event``: the docs' other human-in-the-loop form, one step that does
``s1``'s work and then pauses *inside* itself with ``ctx.wait_for_event`` before the rest of
``s2``; its ``wait_for_event`` docstring says the step replays from its top when the answer
arrives (LI-3), so whatever the step did before the wait (``s1``'s effect) runs again, which the
kit's protocols, run on this variant by ``probes.frameworks.llamaindex.protocols``, measure.
``unserialisable-store``: ``s1`` also puts an ``asyncio.Lock`` into ``ctx.store``, a value no
serializer encodes (the store protocol: is the snapshot refused loudly?).

Operations beyond the kit's five, for LlamaIndex's own protocols: ``answer_in_process`` (a run
answered from its own event stream, no snapshot restored), ``resume_back_to_back`` (a restored
snapshot sent several answers at once), ``serialized_answer`` (an answer as the framework's
serializer writes an event into a snapshot) and ``state_valid`` (does a snapshot validate as the
framework's own model).
"""

import asyncio
import json
import os
import types
import sys
import time
from pathlib import Path
from typing import Any, Union

from probes.citations import doc
from probes.core.atomic import atomic_write_json
from probes.core.history import Kind
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability, required_fields

TIMEOUT = 20.0  # the framework's own run timeout: a restored run that never finishes raises
WORKFLOW_ENV = "RC_LI_WORKFLOW"  # the workflow variant a process builds; unset: the kit's split steps
WAIT_FOR_EVENT = "wait_for_event"  # s1's work and the pause in one step, paused by ctx.wait_for_event
UNSERIALISABLE = "unserialisable-store"  # s1 also stores a value no serializer encodes (UNSERIALISABLE_KEY)
UNSERIALISABLE_KEY = "lock"
WAITING_STEP = "s1_then_wait"  # the wait_for_event variant's only step: s1's work, the wait, the rest of s2
BRANCH_KEY = "branch"  # the parallel workflow: the HumanResponseEvent field naming the branch answered


def workflow() -> str | None:
    """The workflow variant this process builds (``WORKFLOW_ENV``), or None for the kit's split steps."""
    return os.environ.get(WORKFLOW_ENV) or None


def _module_event(name: str) -> type:
    """An event class of this module carrying one ``value``: the snapshot keeps a waiting step's trigger
    (to re-deliver it on the answer) and the events ``ctx.collect_events`` has buffered for a join, and
    ``Context.from_dict`` imports their classes by qualified name (``module.Name``), which a class built
    inside ``_workflow`` is not. Built on first use (the framework is imported lazily) and kept, one class
    per name."""
    made = globals().get(name)
    if made is None:
        from workflows.events import Event
        made = globals()[name] = type(name, (Event,), {"__annotations__": {"value": str}, "__module__": __name__,
                                                       "__qualname__": name})
    return made


def _as_step(name: str, body: Any, takes: Any, returns: Any, with_ctx: bool = False, decorate: Any = None) -> Any:
    """``body`` as the workflow step ``name``: a method of the ``Kit`` class its caller builds, annotated with
    the event it takes (and ``ctx: Context`` with ``with_ctx``), decorated with ``@step`` or ``decorate``."""
    from workflows import Context, step

    body.__name__, body.__qualname__ = name, f"Kit.{name}"
    body.__annotations__ = {**({"ctx": Context} if with_ctx else {}), "ev": takes, "return": returns}
    return (decorate or step)(body)


def _workflow() -> Any:
    """The steps of ``runtime.shape()`` as workflow steps linked by events (the original ``s1`` ->
    ``Asked`` -> ``ask`` -> input request -> ``s2`` -> stop, or the code a change protocol deployed):
    the paused step is ``ask`` (``ask_<name>`` for another name) and the step named after it, which
    takes the human response; every other step hands its value on in an event of its own. The handler
    workflow's answered step (role "pause-fails") is such a step that fails, and its handler (role
    "handler") a ``@catch_error`` step scoped to it; the parallel workflow is ``_parallel_workflow``'s."""
    if runtime.branches(runtime.code()):
        return _parallel_workflow()
    from workflows import Workflow, catch_error
    from workflows.events import (Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StepFailedEvent,
                                  StopEvent)

    class Asked(Event):
        note: str

    def handed(after: str) -> type:  # the event a step hands its value on in
        return type(f"After{after.capitalize()}", (Event,), {"__annotations__": {"value": str}})

    shape = runtime.shape()
    steps: dict[str, Any] = {}
    takes: Any = StartEvent
    variant = workflow()
    if variant == WAIT_FOR_EVENT:
        if shape != runtime.SHAPES["v1"]:
            raise ValueError(f"the {WAIT_FOR_EVENT} variant is built for the original workflow only, "
                             f"not {runtime.code()}")

        async def first_then_wait(self: Any, ctx: Any, ev: Any) -> Any:
            # the docs' in-step wait, with work before it: the step replays from here when the answer arrives (LI-3)
            runtime.step1()
            runtime.before_pause()
            got = await ctx.wait_for_event(HumanResponseEvent, waiter_id="answer",
                                           waiter_event=InputRequiredEvent(prefix="answer?"))
            value = runtime.step2(got.response)
            await ctx.store.set("outcome", value)  # so the ended context's snapshot tells the outcome
            return StopEvent(result=value)
        shape, steps[WAITING_STEP] = (), _as_step(WAITING_STEP, first_then_wait, StartEvent, StopEvent, with_ctx=True)
    for i, (name, role) in enumerate(shape):
        # the last step of the chain: a handler after it is no link of the chain but its error handler
        last = all(after == "handler" for _, after in shape[i + 1:])
        if role == "handler":
            failing = shape[i - 1][0]

            async def handle(self: Any, ctx: Any, ev: Any) -> Any:
                # the framework hands the handler the failure (StepFailedEvent): the exception (in process,
                # the one raised) and the event the failed step was triggered by, whose response is the answer
                value = runtime.handler(ev.input_event.response, ev.exception)
                await ctx.store.set("outcome", value)  # so the ended context's snapshot tells the outcome
                return StopEvent(result=value)
            steps[name] = _as_step(name, handle, StepFailedEvent, StopEvent, with_ctx=True,
                                 decorate=catch_error(for_steps=[failing]))
            continue
        if role in ("pause", "pause-fails"):
            asker = "ask" if name == "s2" else f"ask_{name}"

            async def ask(self: Any, ev: Any) -> Any:
                runtime.before_pause()
                return InputRequiredEvent(prefix="answer?")
            steps[asker] = _as_step(asker, ask, takes, InputRequiredEvent)
            out = StopEvent if last else handed(name)

            async def answered(self: Any, ctx: Any, ev: Any, out: Any = out,
                               fails: bool = role == "pause-fails") -> Any:
                if fails:  # the handler workflow: the effect fires, then the step raises for @catch_error
                    runtime.step2_fails(ev.response)
                value = runtime.step2(ev.response)
                await ctx.store.set("outcome", value)  # so the ended context's snapshot tells the outcome
                return StopEvent(result=value) if out is StopEvent else out(value=value)
            steps[name] = _as_step(name, answered, HumanResponseEvent, out, with_ctx=True)
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
            steps[name] = _as_step(name, twice, takes, out, with_ctx=True)
        else:
            after = None if last else shape[i + 1][1]
            out = (StopEvent if last else Asked if name == "s1" and after in ("pause", "pause-fails")
                   else _module_event(f"After{name.capitalize()}") if after == "pause-twice" else handed(name))

            async def run(self: Any, ev: Any, out: Any = out, name: str = name, role: str = role) -> Any:
                value = runtime.step1() if role == "first" else runtime.extra_step(name, getattr(ev, "value", None))
                if out is StopEvent:
                    return StopEvent(result=value)
                return out(note=value) if out is Asked else out(value=value)
            if role == "first" and variant == UNSERIALISABLE:
                async def storing(self: Any, ctx: Any, ev: Any, run: Any = run) -> Any:
                    handed_on = await run(self, ev)
                    await ctx.store.set(UNSERIALISABLE_KEY, asyncio.Lock())  # no serializer encodes a lock
                    return handed_on
                steps[name] = _as_step(name, storing, takes, out, with_ctx=True)
            else:
                steps[name] = _as_step(name, run, takes, out)
        takes = out
    Kit = types.new_class("Kit", (Workflow,), exec_body=lambda ns: ns.update(steps, __module__=__name__))
    return Kit(timeout=TIMEOUT)


def _parallel_workflow() -> Any:
    """The parallel workflow (``runtime.SHAPES["parallel"]``): ``s1`` fans out to each branch with
    ``ctx.send_event`` (the docs' fan-out), each branch a step that begins (``runtime.before_branch``) and
    waits with ``ctx.wait_for_event`` for a ``HumanResponseEvent`` whose ``branch`` is its name (the
    ``requirements`` filter), announcing the wait with an ``InputRequiredEvent`` (``waiter_id`` and ``prefix``
    the branch's name); the answer's effect (``runtime.branch``) is handed on in the branch's own event, and
    the join gathers both with ``ctx.collect_events`` (returning nothing until both are in).

    Why the in-step wait and not the split steps' returned ``InputRequiredEvent``: a wait is recorded in the
    context (``workers.<step>.collected_waiters``, one per ``waiter_id``) until its step returns, so a
    snapshot itself says which branches still ask (``open_branches``); an input request a step returned is
    on the event stream only, and a restored context keeps no trace of it. The trigger and answered events
    are classes of this module (``_module_event``): a snapshot names them, the waits' triggers and the join's
    buffered events."""
    from workflows import Workflow
    from workflows.events import HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

    names = runtime.branches(runtime.code())
    go = {b: _module_event(f"To{b.capitalize()}") for b in names}  # what starts branch b
    answered = {b: _module_event(f"{b.capitalize()}Answered") for b in names}  # branch b's answer, for the join
    steps: dict[str, Any] = {}
    for name, role in runtime.shape():
        if role == "first":
            async def first(self: Any, ctx: Any, ev: Any, name: str = name) -> Any:
                value = runtime.step1()
                for b in names:  # both branches start before either is answered
                    ctx.send_event(go[b](value=value))
                return None
            steps[name] = _as_step(name, first, StartEvent, Union[tuple(go.values())], with_ctx=True)
        elif role == "branch-pause":
            async def branch(self: Any, ctx: Any, ev: Any, name: str = name) -> Any:
                # replayed from here whenever its wait is re-established or answered (LI-3): before_branch's
                # STEP_BEGIN again, no effect; the effect comes after the answer
                runtime.before_branch(name)
                got = await ctx.wait_for_event(HumanResponseEvent, waiter_id=name, requirements={BRANCH_KEY: name},
                                               waiter_event=InputRequiredEvent(prefix=name))
                return answered[name](value=runtime.branch(name, got.response))
            steps[name] = _as_step(name, branch, go[name], answered[name], with_ctx=True)
        elif role == "join":
            async def join(self: Any, ctx: Any, ev: Any, name: str = name) -> Any:
                got = ctx.collect_events(ev, [answered[b] for b in names])
                if got is None:  # the other branch has not been answered yet
                    return None
                value = runtime.join({b: e.value for b, e in zip(names, got)}, name)
                await ctx.store.set("outcome", value)  # so the ended context's snapshot tells the outcome
                return StopEvent(result=value)
            steps[name] = _as_step(name, join, Union[tuple(answered.values())], StopEvent, with_ctx=True)
        else:
            raise ValueError(f"the parallel workflow has no role {role!r} ({runtime.code()})")
    Kit = types.new_class("Kit", (Workflow,), exec_body=lambda ns: ns.update(steps, __module__=__name__))
    return Kit(timeout=TIMEOUT)


def open_branches(doc: Any) -> list[str]:
    """The parallel branches a snapshot ``doc`` (``ctx.to_dict()``) says still wait for their answer: the
    framework's own record of an open wait, a ``collected_waiters`` entry of the branch's worker with its
    ``waiter_id`` and no ``resolved_event`` yet, in the workflow's branch order (not what the adapter
    remembers answering)."""
    workers = (doc.get("workers") or {}) if isinstance(doc, dict) else {}
    waiting = {w.get("waiter_id") for worker in workers.values() if isinstance(worker, dict)
               for w in worker.get("collected_waiters") or [] if w.get("resolved_event") is None}
    return [b for b in runtime.branches(runtime.code()) if b in waiting]


def joined_branches(doc: Any) -> list[str]:
    """The parallel branches whose answered event (``<Branch>Answered``) a snapshot ``doc`` holds in a worker's
    ``collected_events``, the buffer ``ctx.collect_events`` keeps for the join until every branch is in."""
    workers = (doc.get("workers") or {}) if isinstance(doc, dict) else {}
    names = set()
    for worker in workers.values():
        for buffered in ((worker.get("collected_events") or {}) if isinstance(worker, dict) else {}).values():
            for ev in buffered or []:
                ev = json.loads(ev) if isinstance(ev, str) else ev
                names.add(ev.get("qualified_name") if isinstance(ev, dict) else None)
    return [b for b in runtime.branches(runtime.code()) if f"{__name__}.{b.capitalize()}Answered" in names]


def settled(doc: Any, answered: str | None = None) -> bool:
    """Whether the parallel run whose context is ``doc`` has settled at its pauses: no step has an event
    queued or a work item in progress, every branch either waits (``open_branches``) or has handed its
    answer to the join (``joined_branches``), and the branch ``answered`` just now no longer waits."""
    workers = (doc.get("workers") or {}) if isinstance(doc, dict) else {}
    if any(w.get("queue") or w.get("in_progress") for w in workers.values() if isinstance(w, dict)):
        return False
    waiting = open_branches(doc)
    accounted = set(waiting) | set(joined_branches(doc))
    return answered not in waiting and all(b in accounted for b in runtime.branches(runtime.code()))


def save_context(ctx: Any, states: Path, status: str) -> str:
    """The durable write: the framework's serializer, then an atomic file replace (hooked)."""
    name = f"{time.time_ns():020d}-{os.getpid()}-{status}.json"
    atomic_write_json(states / name, ctx.to_dict())
    return name


class LlamaIndexAdapter(Adapter):
    framework = "llamaindex"
    packages = ("llama-index-workflows",)
    imports = ("workflows", "workflows.events", "workflows.context.serializers")
    backends = ("file",)
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.CODE_CHANGE, Capability.TWO_PAUSES,
                              Capability.DELETE, Capability.HANDLER, Capability.PARALLEL})
    code_changes = runtime.CODE_CHANGES
    # Measured on 2.22.2: a child workflow declared as a typed field (``Report(summarize=Summarize())``, the
    # workflows-py "Child workflows" page) is refused by ``Workflow.__init__`` (no such keyword), and a step
    # cannot take a child's StopEvent subclass; llama_index.core's ``add_workflows`` is gone from this package.
    missing = {Capability.NESTED: "llama-index-workflows 2.22.2 has no nesting that pauses and resumes: child "
                                  "workflows (typed Workflow fields, stream_events(include_children=True)) are "
                                  "not in this release (Workflow.__init__ refuses the child; a step cannot take "
                                  "the child's StopEvent), and a workflow run from inside a step is a separate "
                                  "run whose context the outer ctx.to_dict() does not hold"}
    # The callback workflow (the kit's callback protocol): read from the installed 2.22.2 source. The handler
    # workflow is built (``@catch_error``), and so is the parallel one (``_parallel_workflow``).
    missing = {**missing,
        Capability.CALLBACK: "llama-index-workflows 2.22.2 has no approval callback or hook: a pause is an "
                             "InputRequiredEvent a step returns, or writes to the stream as ctx.wait_for_event's "
                             "waiter_event, for the caller to answer with a HumanResponseEvent (workflows/events.py); "
                             "neither @step (workflow, num_workers, retry_policy, skip_graph_checks, "
                             "accept_event_subclasses; workflows/decorators.py), Workflow.__init__ "
                             "(workflows/workflow.py) nor Context.wait_for_event (event_type, waiter_event, waiter_id, "
                             "requirements, timeout; workflows/context/context.py) takes a callable asked before the "
                             "pause; the package's other hooks are a runtime plugin's on_tick/after_tick "
                             "(workflows/runtime/types/plugin.py, the broker runtime's interface) and "
                             "llama_index_instrumentation's span and event handlers (tracing)",
    }
    recovery_modes = ("latest-snapshot",)
    answers = ("yes", "no")
    # As the paper's campaign cites them (probes/citations.py): LI-2 (at-least-once resume) for a kill, and here
    # for a raised crash too; LI-1 completed steps do not re-run; LI-7 a snapshot is resumable. LI-6: a context
    # whose run ended (is_running false) restores as state carried into a new run, from StartEvent. LI-3 (the
    # wait_for_event docstring, as the paper's campaign cites it for the wait probes): an answer replays the whole
    # step, so in a step that waits twice the code between the waits (the first answer's effect) runs again.
    # The wait_for_event variant's paths (``wait:<kit path>``, probes.frameworks.llamaindex.protocols): LI-3, as the paper's
    # campaign cites it, where the step's work before the wait runs again because the answer replays the step
    # (answered once, after a restore, a kill while parked, or in the process that asked) and for the prefix
    # re-entered wherever the variant resumes; a crash inside the waiting step is LI-2's at-least-once, as on the
    # split steps. Not the stray on an ended context: that starts a new run (undocumented, as on the split steps).
    citations = {"EO *kill*": doc("LI-2", "deviation"), "EO crash:raise@*": doc("LI-2", "deviation"),
                 "PC *": doc("LI-1", "claims"), "LV *": doc("LI-7", "claims"),
                 "RD rd:*": doc("LI-7", "claims"),  # DOCS.md: LI-7 is an LV and RD claim (a snapshot resumable)
                 "EO tamper:flip:is_running": doc("LI-6", "deviation"),
                 "EO pause-twice:*": doc("LI-3", "deviation"), "CO pause-twice:*": doc("LI-3", "deviation"),
                 "EO wait:baseline:*": doc("LI-3", "deviation"), "EO wait:park-kill": doc("LI-3", "deviation"),
                 "EO wait:in-process": doc("LI-3", "deviation"), "PC wait:*": doc("LI-3", "deviation"),
                 "EO wait:crash:*": doc("LI-2", "deviation"),
                 # The handler workflow killed inside its @catch_error handler (``handler:kill@h.*``) and the parallel
                 # workflow killed in its join (``parallel:crash@join.*``): the only durable state is the snapshot
                 # taken at the last pause, so the recovery re-delivers that pause's answer and the answered step
                 # (the failed s2; the last branch) runs again from its top, as LI-2's at-least-once resume says
                 # (the kit's own crash cells, "EO *kill*"). CO has no statement (LI-9 is silent): U.
                 "EO handler:kill@*": doc("LI-2", "deviation"), "EO parallel:crash@*": doc("LI-2", "deviation")}

    def hook(self) -> None:
        runtime.hook_save(sys.modules[__name__], "save_context", writes=((os, "replace"),))

    def start(self) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            return await self._driven(_workflow().run())
        return asyncio.run(go())

    async def _driven(self, handler: Any) -> dict[str, Any]:
        """Run until the workflow asks (an ``InputRequiredEvent`` on the stream: snapshot, cancel) or ends.
        The parallel workflow asks once per branch: ``_settled``."""
        from workflows.events import InputRequiredEvent
        if runtime.branches(runtime.code()):
            return await self._settled(handler)
        async for ev in handler.stream_events():
            if isinstance(ev, InputRequiredEvent):
                name = save_context(handler.ctx, self.workdir / "states", "paused")
                await handler.cancel_run()  # hand the run off to the snapshot (LI-9)
                return {"status": "paused", "handle": name}
        return await self._finished(handler)

    async def _settled(self, handler: Any, answered: str | None = None) -> dict[str, Any]:
        """The parallel workflow run until it has settled at its pauses, then snapshotted and cancelled, as
        the split steps are at their input request; its status names the branches the snapshot says still
        wait (``open_branches``). Or the run ends.

        Settled is decided at the framework's ``WorkflowIdleEvent`` (an internal event of the stream) from
        the context itself (``settled``), not from the idle event alone: 2.22.2 checks idleness between ticks,
        and an event a step sends with ``ctx.send_event`` arrives in a tick of its own, so the run is "idle"
        after ``s1`` has sent the branches' events and before either branch has begun, and again once one
        branch waits and before the other has begun (measured while writing this adapter: a snapshot then
        lacks the branch not yet begun, and its restore never asks it; the run times out), and a restored
        run is idle once its waits are re-established, before the answer sent to it is taken. ``answered``: the
        branch this operation just answered, not settled while it still waits, unless the framework says the
        answer matched nothing (``UnhandledEvent``)."""
        from workflows.events import UnhandledEvent, WorkflowIdleEvent
        async for ev in handler.stream_events(expose_internal=True):
            if isinstance(ev, UnhandledEvent) and ev.event_type == "HumanResponseEvent":
                answered = None  # no wait took the answer: the framework's to say so, nothing to wait for
            if isinstance(ev, WorkflowIdleEvent) and settled(handler.ctx.to_dict(), answered):
                # no await since the check: the context the save writes is the one checked
                name = save_context(handler.ctx, self.workdir / "states", "paused")
                await handler.cancel_run()  # hand the run off to the snapshot (LI-9)
                return self._paused(name)
        return await self._finished(handler)

    def _paused(self, name: str) -> dict[str, Any]:
        """The status of the pause snapshot ``name``; for the parallel workflow with the branches it says
        still wait (``pending``, read from the snapshot: ``open_branches``)."""
        if not runtime.branches(runtime.code()):
            return {"status": "paused", "handle": name}
        return {"status": "paused", "handle": name,
                "pending": open_branches(self.load_state(self.workdir / "states" / name))}

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

    def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """One parallel branch answered: the snapshot ``handle`` (else the newest) restored, as ``resume``
        restores one, and sent a ``HumanResponseEvent`` whose ``branch`` field names it, which only that
        branch's wait accepts (its ``requirements``); the other branch's wait stays open. The run goes on
        until it is idle again (snapshotted, the other branch pending) or ends (``_settled``)."""
        from workflows import Context
        from workflows.events import HumanResponseEvent
        path = self.workdir / "states" / handle if handle else self.state_paths()[-1]

        async def go() -> dict[str, Any]:
            workflow = _workflow()
            handler = workflow.run(ctx=Context.from_dict(workflow, json.loads(path.read_text())))
            handler.ctx.send_event(HumanResponseEvent(response=answer, **{BRANCH_KEY: branch}))
            return await self._settled(handler, branch)
        return asyncio.run(go())

    # --- LlamaIndex's own operations (probes.frameworks.llamaindex.protocols) ----------------------------
    def answer_in_process(self, answer: Any) -> dict[str, Any]:
        """A new run answered from its own event stream when it asks, in this process: no snapshot is
        restored (the in-process protocol). Only the first input request is answered. The pause and the
        answer happen inside this operation, so it records them (PAUSE, ANSWER) where they happen."""
        from workflows.events import HumanResponseEvent, InputRequiredEvent

        async def go() -> dict[str, Any]:
            handler, asked = _workflow().run(), 0
            async for ev in handler.stream_events():
                if isinstance(ev, InputRequiredEvent):
                    asked += 1
                    if asked == 1:
                        runtime.record(Kind.PAUSE, step="s2")
                        runtime.record(Kind.ANSWER, value=answer, detail={"addressed": False, "in_process": True})
                        handler.ctx.send_event(HumanResponseEvent(response=answer))
            return {**await self._finished(handler), "input_requests": asked}
        return asyncio.run(go())

    def resume_back_to_back(self, handle: Any, answers: list[Any]) -> dict[str, Any]:
        """The paused snapshot ``handle`` restored in this process and sent every one of ``answers`` at once,
        one ``send_event`` after another, before the run is awaited (the double-answer protocol)."""
        from workflows import Context
        from workflows.events import HumanResponseEvent
        path = self.workdir / "states" / handle

        async def go() -> dict[str, Any]:
            workflow = _workflow()
            handler = workflow.run(ctx=Context.from_dict(workflow, json.loads(path.read_text())))
            for answer in answers:
                handler.ctx.send_event(HumanResponseEvent(response=answer))
            return await self._finished(handler)
        return asyncio.run(go())

    def serialized_answer(self, answer: Any) -> dict[str, Any]:
        """A ``HumanResponseEvent`` carrying ``answer`` as the framework's serializer writes an event into a
        snapshot's worker queue (the forged-answer edit plants it there)."""
        from workflows.context.serializers import JsonSerializer
        from workflows.events import HumanResponseEvent
        return {"status": "serialized", "event": JsonSerializer().serialize(HumanResponseEvent(response=answer))}

    def state_valid(self, doc: Any) -> dict[str, Any]:
        """Does ``doc`` validate as the framework's own model of a snapshot (``state_required``'s model)?
        A named edit the model rejects is invalid (a CV question); one it accepts is type-valid."""
        from pydantic import ValidationError
        model = _snapshot_model(doc)
        try:
            model.model_validate(doc)
        except ValidationError as exc:
            name, first = f"workflows {model.__name__}", " ".join(str(exc).splitlines()[:2])
            return {"status": "schema", "valid": False, "model": name, "error": first}
        return {"status": "schema", "valid": True, "model": f"workflows {model.__name__}"}

    def delete(self) -> dict[str, Any]:
        """llama-index-workflows has no checkpointer (LI-8) and no deletion: the run's durable state is the
        application's own snapshots of ``ctx.to_dict()``, so the application deletes them itself, as it
        wrote them (as OpenAI Agents' ``RunState`` files are)."""
        for path in self.state_paths():
            path.unlink()
        return {"status": "deleted"}

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        paths = self.state_paths()
        if not paths:
            return self.nothing_durable("no context snapshot written yet")
        if paths[-1].name.endswith("-paused.json"):  # the run waits for its answer (each branch's, if parallel)
            return self._paused(paths[-1].name)
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
        model = _snapshot_model(doc)
        return {"status": "schema", "required": required_fields(model), "model": f"workflows {model.__name__}"}


def _snapshot_model(doc: Any) -> type:
    """The pydantic model ``Context.from_dict`` validates the snapshot ``doc`` as (``state_required``)."""
    from workflows.context.context_types import SerializedContext, SerializedContextV0
    return SerializedContextV0 if isinstance(doc, dict) and doc.get("version") is None else SerializedContext
