"""Any LangGraph checkpointer under the kit: ``python -m probes run NAME --saver module:factory``.

The workflow is a two-node ``StateGraph`` (``s1``; ``s2`` calls ``interrupt()`` and then
runs the kit's second step) compiled with the checkpointer ``factory(location)`` returns,
where ``location`` is the SQLite file or PostgreSQL DSN the harness made for the probe.
The factory is named by ``RC_KIT_SAVER`` (the command line sets it), so every probe
process builds the same saver. A pause's handle is its checkpoint id; recovery is the
documented ``invoke(None, config)`` on the thread, or the original input sent again
(``resend-input``, the paper's "resubmit"). Its ``put`` is hooked, so the kit kills inside the
checkpointer's own write. The saver's storage is opaque to the kit: no tamper protocol.

The same workflow in LangGraph's functional API is a workflow variant (``RC_LG_API=functional``):
an ``@entrypoint`` whose steps are ``@task``s and whose pause is ``interrupt()`` in the entrypoint
itself, so on a resume the entrypoint runs again from its top and the finished tasks' results are
read back from the checkpoint instead of run again.
"""

import importlib
import os
from typing import Any, Mapping

from probes.citations import doc
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability

THREAD = {"configurable": {"thread_id": "kit"}}
API_ENV = "RC_LG_API"  # the API the workflow is built with: unset, the graph API; "functional", the functional API
FUNCTIONAL = "functional"
# LangGraph's durability mode for every invoke (``sync``: each step's writes durable before the next step
# starts; ``async``, its default, writes them in the background while the next step runs; ``exit``: only
# when the run stops). Unset: LangGraph's default. The paper's campaign measures under ``sync``, as the
# paper's crash sweep did, which also makes "the n-th save" the same save in every repetition.
DURABILITY_ENV = "RC_LG_DURABILITY"


def _parallel() -> bool:
    """Whether this process runs the parallel workflow (its paused status names the open branches)."""
    return any(role == "branch-pause" for _, role in runtime.shape())


def open_interrupts(snapshot: Any) -> list[str]:
    """The questions of the interrupts still open in a thread's state: those of the tasks still to run
    (``snapshot.next``). ``snapshot.interrupts`` alone is not that: after one of two parallel interrupts
    was answered, LangGraph 1.2.9 still lists the answered one there (its task has finished, with a
    result, and is no longer in ``next``)."""
    return sorted(str(i.value) for t in snapshot.tasks if t.name in snapshot.next for i in t.interrupts)


def durability() -> dict[str, Any]:
    """The ``durability=`` keyword of this process's invokes (none: LangGraph's default)."""
    mode = os.environ.get(DURABILITY_ENV)
    return {"durability": mode} if mode else {}
START_INPUT = {"out": ""}
# The ways LangGraph's API addresses an answer to a pause already answered, besides the plain
# Command(resume=v) at its checkpoint (``SaverAdapter.address``; the fork_ways protocol,
# probes.frameworks.langgraph.protocols)
FORK_WAYS = ("resume-map", "update-state", "replay-then-resume")


def sqlite_saver(location: str) -> Any:
    """A factory for the stock ``SqliteSaver`` (langgraph-checkpoint-sqlite)."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver
    return SqliteSaver(sqlite3.connect(location, check_same_thread=False))


SETTLE_S = 30.0  # at most this long a hooked put waits for the pending writes submitted before it


def hook_checkpoint_put(saver_cls: type) -> None:
    """Hook the save the save-kill protocol counts, a checkpointer's ``put`` (``runtime.hook_save``),
    and let it settle first.

    LangGraph writes a finished task's pending writes (``put_writes``) from a background thread, so
    at a ``put`` they may or may not be durable yet: the same save-kill cell gave ✓ in one run and D
    in the next (same versions, ``durability="sync"``). That is a thread race inside one process,
    not a behaviour of recovery, so the hooked ``put`` first waits for every ``put_writes`` submitted
    before it: each kill point is then one state (the task's writes durable, the checkpoint not). A
    kill before those writes are durable is the crash protocol's kill after the step's effect."""
    import concurrent.futures
    import functools

    from langgraph.pregel._executor import BackgroundExecutor

    runtime.hook_save(saver_cls, "put")
    pending: list[concurrent.futures.Future] = []
    submit = BackgroundExecutor.submit

    @functools.wraps(submit)
    def tracked(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        future = submit(self, fn, *args, **kwargs)
        if getattr(fn, "__name__", "") == "put_writes":
            pending.append(future)
        return future

    hooked = saver_cls.put

    @functools.wraps(hooked)
    def settled(self: Any, *args: Any, **kwargs: Any) -> Any:
        concurrent.futures.wait(list(pending), timeout=SETTLE_S)
        return hooked(self, *args, **kwargs)

    BackgroundExecutor.submit = tracked
    saver_cls.put = settled


def _factory() -> Any:
    module, _, name = os.environ.get("RC_KIT_SAVER", "probes.frameworks.langgraph.saver:sqlite_saver").partition(":")
    return getattr(importlib.import_module(module), name)


def on_variants(citations: Mapping[str, Any]) -> dict[str, Any]:
    """The same statements for the same paths on the functional API's workflow (``functional:<path>``) and on
    the workflow whose pausing node is a subgraph's (``nested:<path>``, the kit's nested protocol): LG-4,
    LG-14 and LG-16 speak of "the node", and a subgraph's node is one. Catch-all keys (``EO *``) cover them
    already."""
    return {f"{key.split(' ', 1)[0]} {variant}:{key.split(' ', 1)[1]}": ref
            for key, ref in citations.items() if not key.endswith(" *") for variant in ("functional", "nested")}


class SaverAdapter(Adapter):
    framework = "langgraph"
    packages = ("langgraph", "langgraph-checkpoint")
    imports = ("langgraph.graph", "langgraph.func", "langgraph.types", "langgraph.checkpoint.sqlite")
    backends = ("sqlite", "postgres")
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.SAVE_HOOK,
                              Capability.CODE_CHANGE, Capability.TWO_PAUSES, Capability.NESTED,
                              Capability.DELETE, Capability.HANDLER, Capability.CALLBACK, Capability.PARALLEL})
    code_changes = runtime.CODE_CHANGES
    missing = {Capability.TAMPER: "a checkpointer's storage is its own: the kit cannot edit it generically"}
    # invoke(None): the documented resume of a thread; resend-input: the original input invoked again on
    # the thread, as a caller that retries the request would (the paper's campaign calls it "resubmit")
    recovery_modes = ("none-input", "resend-input")
    # As the paper's LangGraph campaign cites each property (probes/citations.py), and LG-4 where a crash
    # restarts the node that was running (recovery is invoke(None): the node's top, its effect again).
    citations = {
        "EO *": doc("LG-15", "claims"), "CO *": doc("LG-15", "claims"), "PC *": doc("LG-1", "claims"),
        "LV *": doc("LG-23", "claims"), "RD *": doc("LG-30", "claims"), "CV *": doc("LG-21", "deviation"),
        "EO crash:*": doc("LG-4", "deviation"), "EO save-kill:*": doc("LG-4", "deviation"),
        # a node with two interrupts re-runs from its top on the second answer (the code between them too)
        "EO pause-twice:*": doc("LG-14", "deviation"), "CO pause-twice:*": doc("LG-14", "deviation"),
    }
    citations.update(on_variants(citations))
    # The handler and callback workflows (the kit's handler and callback protocols): the approval callback is the
    # code before ``interrupt()`` in the node, which runs again when the node resumes (LG-12); a kill inside the
    # node-level error handler restarts that node from its top (LG-4: the handler is a node of the graph); and
    # resuming in an error state is claimed (LG-24: "so you can resume later, even when in an error state").
    citations.update({"EO callback:*": doc("LG-12", "deviation"), "EO handler:kill@*": doc("LG-4", "deviation"),
                      "LV handler:*": doc("LG-24", "claims")})
    # The same in the functional API (the functional protocol's ``functional:<path>``): the code before interrupt() in
    # the entrypoint runs again on resume (LG-12, as on_variants carries the interrupts page's statements over to the
    # functional API); a try/except around a task records no failure, so the failed task and the handler's task run
    # again on the recovery: "a task starts but fails to complete successfully ... resumption will re-run the task".
    citations.update({"EO functional:callback:*": doc("LG-12", "deviation"),
                      "EO functional:handler:kill@*": doc("LG-5", "deviation"),
                      "CO functional:handler:kill@*": doc("LG-5", "deviation")})
    # the parallel workflow's join killed and recovered: the node that was running (the join) starts again
    # from its top, as LG-4 says of any node (its effect again)
    citations["EO parallel:crash@*"] = doc("LG-4", "deviation")

    def hook(self) -> None:
        self._saver = _factory()(self.store)
        hook_checkpoint_put(type(self._saver))

    def _graph(self) -> Any:
        """The kit's workflow as a ``StateGraph`` chain, one node per step of ``runtime.shape()``
        (the original two steps, or the code a change protocol deployed)."""
        from typing import TypedDict

        from langgraph.graph import END, START, StateGraph
        from langgraph.types import interrupt

        class State(TypedDict):
            out: str

        def s1(state: State) -> dict:
            return {"out": runtime.step1()}

        def s2(state: State) -> dict:
            runtime.before_pause()
            return {"out": runtime.step2(interrupt("answer?"))}

        def s2_twice(state: State) -> dict:  # two interrupts in one node
            runtime.before_pause()
            runtime.first_answer(interrupt("first answer?"))
            return {"out": runtime.second_answer(interrupt("second answer?"))}

        def extra(name: str) -> Any:
            return lambda state: {"out": runtime.extra_step(name, state["out"])}

        def nested(name: str) -> Any:
            """The pausing step as the one node of a subgraph, the subgraph a node of the outer graph (it
            shares the outer graph's checkpointer, as LangGraph's subgraph documentation builds one)."""
            inner = StateGraph(State)
            inner.add_node(name, s2)
            inner.add_edge(START, name)
            inner.add_edge(name, END)
            return inner.compile()

        def s2_fails(state: State) -> dict:  # the handler workflow's answered step: fails after e2
            runtime.before_pause()
            return runtime.step2_fails(interrupt("answer?"))

        def error_handler() -> Any:
            """The node-level error handler (``add_node(..., error_handler=)``): the handler step, serving
            the answer the failed step's exception carries (``NodeError.error``, typed ``BaseException``).
            Built only for the handler workflow: older releases (1.0.10 and 1.1.6, measured) have no
            ``NodeError``, and the cross-version protocol builds every other workflow with them."""
            from langgraph.errors import NodeError

            def on_error(state: State, error: NodeError) -> dict:
                return {"out": runtime.handler(getattr(error.error, "answer", None), error.error)}
            return on_error

        def s2_callback(state: State) -> dict:
            """LangGraph has no approval callback: the code before ``interrupt()`` in the node is where an
            application writes one (its audit record, its notification), so the callback runs there."""
            runtime.before_pause()
            runtime.approval_callback()
            return {"out": runtime.step2(interrupt("answer?"))}

        bodies = {"first": lambda name: s1, "pause": lambda name: s2, "pause-twice": lambda name: s2_twice,
                  "extra": extra, "nested-pause": nested,
                  "pause-fails": lambda name: s2_fails, "callback-pause": lambda name: s2_callback}
        if any(role == "branch-pause" for _, role in runtime.shape()):
            return self._parallel(s1)
        graph = StateGraph(State)
        previous = START
        steps = runtime.shape()
        for i, (name, role) in enumerate(steps):
            if role == "handler":  # the error handler of the step before it, not a node of the chain
                continue
            handled = i + 1 < len(steps) and steps[i + 1][1] == "handler"
            graph.add_node(name, bodies[role](name), **({"error_handler": error_handler()} if handled else {}))
            graph.add_edge(previous, name)
            previous = name
        graph.add_edge(previous, END)
        return graph.compile(checkpointer=self._saver)

    def _parallel(self, s1: Any) -> Any:
        """The parallel workflow (``runtime.SHAPES["parallel"]``): ``s1``, then each branch a node fanned out
        from it that ``interrupt()``s with its own name as the question, then the join, reached by one edge
        from every branch (``add_edge([...], "join")``: it runs once, after both). Each branch writes its
        answer under its name into a merged ``answers`` channel (parallel writes to one plain key collide)."""
        import operator
        from typing import Annotated, TypedDict

        from langgraph.graph import END, START, StateGraph
        from langgraph.types import interrupt

        class State(TypedDict):
            out: str
            answers: Annotated[dict, operator.or_]

        def branch(name: str) -> Any:
            def node(state: State) -> dict:
                runtime.before_branch(name)
                return {"answers": {name: runtime.branch(name, interrupt(name))}}
            return node

        def join(name: str) -> Any:
            return lambda state: {"out": runtime.join(state["answers"], name)}

        graph = StateGraph(State)
        previous: str = START
        fanned: list[str] = []
        for name, role in runtime.shape():
            graph.add_node(name, {"first": lambda n: s1, "branch-pause": branch, "join": join}[role](name))
            if role == "branch-pause":
                graph.add_edge(previous, name)
                fanned.append(name)
                continue
            graph.add_edge(fanned if fanned else previous, name)
            previous, fanned = name, []
        graph.add_edge(previous, END)
        return graph.compile(checkpointer=self._saver)

    def _functional(self) -> Any:
        """The kit's workflow in the functional API: each step of ``runtime.shape()`` a ``@task`` called
        from one ``@entrypoint``; a pausing step's question is ``interrupt()`` in the entrypoint, its
        answer consumed in a task of its own (so the consumed answer's effect is a task's result)."""
        from langgraph.func import entrypoint, task
        from langgraph.types import interrupt

        if _parallel():  # the functional variant runs the protocols of FUNCTIONAL_API.runs, which this is not
            raise ValueError("the parallel workflow is built in the graph API only (parallel interrupting nodes)")

        def named(name: str, body: Any) -> Any:
            return task(name=name)(body)

        @entrypoint(checkpointer=self._saver)
        def workflow(payload: Any) -> str:
            out = ""
            for name, role in runtime.shape():
                if role == "first":
                    out = named(name, runtime.step1)().result()
                elif role == "extra":
                    out = named(name, lambda passed, name=name: runtime.extra_step(name, passed))(out).result()
                elif role == "pause":
                    runtime.before_pause()
                    out = named(name, runtime.step2)(interrupt("answer?")).result()
                elif role == "callback-pause":  # the approval callback: the entrypoint's code before interrupt()
                    runtime.before_pause()
                    runtime.approval_callback()
                    out = named(name, runtime.step2)(interrupt("answer?")).result()
                elif role == "pause-fails":  # a try/except in the entrypoint around the failing task
                    runtime.before_pause()
                    answer = interrupt("answer?")
                    try:
                        out = named(name, runtime.step2_fails)(answer).result()
                    except Exception as error:  # the task's error (what the framework hands back on replay too)
                        handler = next(n for n, r in runtime.shape() if r == "handler")
                        out = named(handler, lambda a, handed: runtime.handler(a, handed=handed))(
                            answer, type(error).__name__).result()
                elif role == "handler":  # run by the except above
                    continue
                else:  # "pause-twice": two questions, each answer consumed in a task of its own
                    runtime.before_pause()
                    named(f"{name}-first", runtime.first_answer)(interrupt("first answer?")).result()
                    out = named(name, runtime.second_answer)(interrupt("second answer?")).result()
            return out

        return workflow

    def _app(self) -> Any:
        """The compiled workflow this process runs, built once (an operation reads the thread's state and
        invokes it: the variant and the code version are fixed for the process)."""
        if getattr(self, "_compiled", None) is None:
            self._compiled = self._build()
        return self._compiled

    def _build(self) -> Any:
        """The workflow: the graph API's, or the functional API's (``API_ENV``)."""
        return self._functional() if os.environ.get(API_ENV) == FUNCTIONAL else self._graph()

    def _invoke(self, payload: Any, checkpoint: str | None = None,
                configurable: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Invoke the workflow on the thread (at ``checkpoint`` if given; ``configurable``: more keys of
        the config, a wrapper's discriminator) and report where the run stands."""
        graph = self._app()
        config = {"configurable": {**THREAD["configurable"], **({"checkpoint_id": checkpoint} if checkpoint else {}),
                                   **(configurable or {})}}
        result = graph.invoke(payload, config, **durability())
        snapshot = graph.get_state(THREAD)
        # the returned ``__interrupt__`` is LangGraph's documented signal of a pause: after the first
        # answer to a node with two interrupts, 1.2.9's state lists no next node for the second
        if snapshot.next or (isinstance(result, dict) and result.get("__interrupt__")):
            return {"status": "paused", "handle": snapshot.config["configurable"]["checkpoint_id"],
                    **({"pending": open_interrupts(snapshot)} if _parallel() else {})}
        values = snapshot.values
        return {"status": "completed", "outcome": values.get("out") if isinstance(values, dict) else values}

    def start(self) -> dict[str, Any]:
        return self._invoke(START_INPUT)

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        """``Command(resume=answer)`` at checkpoint ``handle``. In the functional API the thread's current
        pause is answered on the thread alone, as its documentation answers an interrupt: addressed by
        its checkpoint id, the entrypoint runs the tasks that had finished again (measured: the
        ``functional`` protocol's ``answer-by-checkpoint`` cell), so only an older pause (answered
        already) is addressed by its id."""
        from langgraph.types import Command

        if os.environ.get(API_ENV) == FUNCTIONAL and handle == self._current():
            handle = None
        return self._invoke(Command(resume=answer), handle)

    def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """One parallel branch's interrupt answered alone, as LangGraph documents answering one of several
        open interrupts: ``Command(resume={interrupt_id: answer})`` on the thread, the id that of the
        interrupt whose question is ``branch`` in the state at checkpoint ``handle`` (the pause the caller
        was given; else the thread's newest). The interrupt id addresses the pause, so the command goes to
        the thread, not to the checkpoint: sent to checkpoint ``handle`` after the other branch's answer,
        LangGraph 1.2.9 runs that answered branch again (its effect twice; measured while writing this
        adapter), which is the checkpoint addressing the fork and retry cells measure, not this one. A
        branch with no interrupt there gets the plain ``Command(resume=answer)``: LangGraph decides."""
        from langgraph.types import Command

        at = {"configurable": {**THREAD["configurable"], **({"checkpoint_id": handle} if handle else {})}}
        ids = {str(i.value): i.id for i in self._app().get_state(at).interrupts}
        return self._invoke(Command(resume={ids[branch]: answer} if branch in ids else answer))

    def delete(self) -> dict[str, Any]:
        """``delete_thread``, the checkpointer's own deletion of every checkpoint and write of the thread."""
        self._saver.delete_thread(THREAD["configurable"]["thread_id"])
        return {"status": "deleted"}

    def _current(self) -> Any:
        """The id of the thread's newest checkpoint."""
        return self._app().get_state(THREAD).config.get("configurable", {}).get("checkpoint_id")

    def address(self, way: str, handle: Any, answer: Any, first: bool) -> dict[str, Any]:
        """Answer the pause at checkpoint ``handle`` the way ``way`` of ``FORK_WAYS`` (or ``checkpoint``, the plain
        resume addressed by the checkpoint id in either API) says: ``resume-map``,
        ``Command(resume={interrupt_id: answer})`` there (the first answer too); ``update-state``, a
        fork of the checkpoint made by ``update_state(config, None)`` and resumed; ``replay-then-resume``,
        the checkpoint replayed (``invoke(None)`` at it), then ``Command(resume=answer)`` on the thread.
        The first answer of the last two is the plain resume at the checkpoint."""
        from langgraph.types import Command

        app = self._app()
        at = {"configurable": {**THREAD["configurable"], "checkpoint_id": handle}}
        if way == "checkpoint":  # the plain resume, addressed by the checkpoint id whatever the API
            return self._invoke(Command(resume=answer), handle)
        if way == "resume-map":
            interrupt_id = app.get_state(at).interrupts[0].id
            return self._invoke(Command(resume={interrupt_id: answer}), handle)
        if first:
            return self._invoke(Command(resume=answer), handle)
        if way == "update-state":
            forked = app.update_state(at, None)
            return self._invoke(Command(resume=answer), forked["configurable"]["checkpoint_id"])
        if way == "replay-then-resume":
            app.invoke(None, at, **durability())
            return self._invoke(Command(resume=answer))
        raise ValueError(f"unknown way {way!r}; one of {FORK_WAYS}")

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        if self._current() is None:
            return self.start()  # nothing durable on the thread: start over
        return self._invoke(START_INPUT if mode == "resend-input" else None)
