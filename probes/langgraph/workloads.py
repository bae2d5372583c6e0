"""The LangGraph workloads and protocol steps the probes drive.

Every effectful task fires ``probes.core.oracle.fire(name)`` -- an in-process counter
plus a committed row in the SQLite ledger -- so the parent can count effects even
after a SIGKILL. A protocol step opens its own saver through
:func:`probes.langgraph.savers.make_saver`; steps that must share one in-memory saver
(InMemorySaver dies with its process) run as one in-process protocol instead.

Steps that run in a fresh interpreter are called through :func:`child_step`
(``run_child("probes.langgraph.workloads:child_step", {...})``): it installs the
oracle with the step's incarnation, runs the step and returns its observations plus
the in-process counter for the cross-check.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Iterator
from typing import Annotated, Any, Callable, TypedDict  # noqa: F401 (resolved by get_type_hints)

from probes.core import oracle
from probes.core.backends import Store
from probes.core.nemesis import FailOnce, park
from probes.langgraph.savers import make_saver, quiesce

THREAD = "thread-1"


def cfg(thread: str = THREAD) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _err(exc: BaseException) -> str:
    """A stable one-line description of an exception: type and first line, no ids."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"[:200]


# --- graphs and workflows -------------------------------------------------------------


def fd_app(saver: Any) -> Any:
    """#6663: one node, ``interrupt()`` then ``value + 1`` if the answer is truthy.

    f(True) = 2 and f(False) = 1 for input value 1: injective and not the identity.
    """
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    class S(TypedDict):
        value: int

    def gate(state: S) -> dict[str, int]:
        answer = interrupt("approve?")
        oracle.fire("gate", f"answer={answer!r}")
        return {"value": state["value"] + 1 if answer else state["value"]}

    g = StateGraph(S)
    g.add_node("gate", gate)
    g.add_edge(START, "gate")
    g.add_edge("gate", END)
    return g.compile(checkpointer=saver)


def cv_items_validator(checkpoint: dict[str, Any]) -> None:
    """The CV workload's declared state model as a checkpoint validator: ``items`` is a
    ``list[str]`` (remit-contract takes such a callable, ``remit.wrap(..., validator=v)``,
    and raises ``RemitValidityError`` before persisting when it raises)."""
    from pydantic import TypeAdapter

    values = checkpoint.get("channel_values", {})
    if "items" in values:
        TypeAdapter(list[str]).validate_python(values["items"])


# Validators a spec can name (spec args are JSON; the callable is looked up here).
VALIDATORS = {"cv_items": cv_items_validator}


def cv_app(saver: Any) -> Any:
    """#6491 class: pydantic ``items: list[str]``; node ``b`` appends ``None``; ``c`` waits."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt
    from pydantic import BaseModel

    class S(BaseModel):
        items: list[str] = []

    def a(state: S) -> dict[str, Any]:
        return {"items": state.items + ["ok"]}

    def b(state: S) -> dict[str, Any]:
        return {"items": state.items + [None]}  # the schema-invalid write

    def c(state: S) -> dict[str, Any]:
        interrupt("continue?")
        return {"items": state.items + ["done"]}

    g = StateGraph(S)
    for name, fn in (("a", a), ("b", b), ("c", c)):
        g.add_node(name, fn)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=saver)


def gated_graph_app(saver: Any) -> Any:
    """Graph API: ``s1`` (effect) -> ``gate`` (interrupt, then effect) -> ``s3`` (effect)."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    class S(TypedDict, total=False):
        log: list[str]

    def s1(state: S) -> dict[str, Any]:
        oracle.fire("s1")
        return {"log": list(state.get("log", [])) + ["s1"]}

    def gate(state: S) -> dict[str, Any]:
        answer = interrupt("approve?")
        oracle.fire("gate", f"answer={answer!r}")
        return {"log": list(state.get("log", [])) + [f"gate:{answer}"]}

    def s3(state: S) -> dict[str, Any]:
        oracle.fire("s3")
        return {"log": list(state.get("log", [])) + ["s3"]}

    g = StateGraph(S)
    for name, fn in (("s1", s1), ("gate", gate), ("s3", s3)):
        g.add_node(name, fn)
    g.add_edge(START, "s1")
    g.add_edge("s1", "gate")
    g.add_edge("gate", "s3")
    g.add_edge("s3", END)
    return g.compile(checkpointer=saver)


def gated_functional_app(saver: Any) -> Any:
    """Functional API: task ``s1`` -> ``interrupt()`` in the entrypoint -> task ``s3``."""
    from langgraph.func import entrypoint, task
    from langgraph.types import interrupt

    @task
    def s1(x: int) -> str:
        oracle.fire("s1")
        return "s1-done"

    @task
    def s3(x: str) -> str:
        oracle.fire("s3")
        return "s3-done"

    @entrypoint(checkpointer=saver)
    def workflow(x: int) -> dict[str, Any]:
        a = s1(x).result()
        answer = interrupt("approve?")
        oracle.fire("gate", f"answer={answer!r}")
        return {"log": [a, f"gate:{answer}", s3(a).result()]}

    return workflow


def sequential_app(saver: Any) -> Any:
    """Two interrupts in sequence: ``g1`` then ``g2``, each firing after its answer."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    class S(TypedDict, total=False):
        log: list[str]

    def make(name: str) -> Callable[[S], dict[str, Any]]:
        def node(state: S) -> dict[str, Any]:
            answer = interrupt(f"{name}?")
            oracle.fire(name, f"answer={answer!r}")
            return {"log": list(state.get("log", [])) + [f"{name}:{answer}"]}

        return node

    g = StateGraph(S)
    g.add_node("g1", make("g1"))
    g.add_node("g2", make("g2"))
    g.add_edge(START, "g1")
    g.add_edge("g1", "g2")
    g.add_edge("g2", END)
    return g.compile(checkpointer=saver)


def fanout_app(saver: Any) -> Any:
    """Parallel fan-out: branches ``b1`` and ``b2`` each interrupt; a join collects answers."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    class S(TypedDict, total=False):
        answers: Annotated[list[str], operator.add]

    def make(name: str) -> Callable[[S], dict[str, Any]]:
        def node(state: S) -> dict[str, Any]:
            answer = interrupt(name)
            oracle.fire(name, f"answer={answer!r}")
            return {"answers": [f"{name}={answer}"]}

        return node

    g = StateGraph(S)
    g.add_node("b1", make("b1"))
    g.add_node("b2", make("b2"))
    g.add_edge(START, "b1")
    g.add_edge(START, "b2")
    g.add_edge("b1", END)
    g.add_edge("b2", END)
    return g.compile(checkpointer=saver)


def crash_app(saver: Any, fail_dir: str | None, durability: str = "sync") -> Any:
    """Functional ``s1 -> s2``; park points inside both tasks; s2 may raise once.

    Before each effect a task calls ``quiesce`` (a no-op without the instrumenting
    delegate). Park points: ``s1:after_effect`` (kill point C), ``s2:before_effect`` (A),
    ``s2:after_effect`` (the insert-to-persist window: effect committed, the task's
    write not yet durable). ``fail_dir`` arms a cross-process ``FailOnce`` in s2.
    """
    from langgraph.func import entrypoint, task

    failer = FailOnce(fail_dir) if fail_dir else None
    # With durable task writes (sync/async) s2 waits until s1's result is durable: the
    # barrier fixes the interleaving "s1's write wins the race with s2's start".
    s1_durable = 0 if durability == "exit" else 1

    @task
    def s1(x: int) -> str:
        quiesce(0)
        oracle.fire("s1")
        park("s1:after_effect")
        return "s1-done"

    @task
    def s2(a: str) -> str:
        quiesce(s1_durable)
        park("s2:before_effect")
        if failer is not None:
            failer.maybe_fail("s2")
        oracle.fire("s2")
        park("s2:after_effect")
        return "s2-done"

    @entrypoint(checkpointer=saver)
    def workflow(x: int) -> dict[str, Any]:
        a = s1(x).result()
        return {"s1": a, "s2": s2(a).result()}

    return workflow


APPS: dict[str, Callable[[Any], Any]] = {
    "fd": fd_app,
    "cv": cv_app,
    "graph": gated_graph_app,
    "functional": gated_functional_app,
    "sequential": sequential_app,
    "fanout": fanout_app,
}


# --- a process's session: saver + oracle ----------------------------------------------


@contextlib.contextmanager
def session(backend: str, location: str, arm: str, ledger: str, incarnation: str,
            remit_options: dict[str, Any] | None = None, park_ops: bool = False,
            drop: str = "nothing", op_log: list[str] | None = None) -> Iterator[Any]:
    """Install this process's oracle and open its saver for one protocol step."""
    oracle.install(ledger, incarnation)
    with make_saver(Store(backend, location), arm, park_ops=park_ops, drop=drop, op_log=op_log,
                    **(remit_options or {})) as saver:
        yield saver


def _output(result: Any) -> Any:
    """A JSON-safe, id-free view of an invoke() result (interrupt ids removed)."""
    if isinstance(result, dict):
        out = {}
        for k, v in sorted(result.items()):
            if k == "__interrupt__":
                out[k] = [getattr(i, "value", repr(i)) for i in v]
            else:
                out[k] = _output(v)
        return out
    if isinstance(result, (list, tuple)):
        return [_output(x) for x in result]
    if isinstance(result, (str, int, float, bool)) or result is None:
        return result
    return repr(result)


def _try(fn: Callable[[], Any]) -> dict[str, Any]:
    try:
        return {"ok": True, "output": _output(fn())}
    except Exception as exc:  # the framework's behaviour is the measurement
        return {"ok": False, "error": _err(exc)}


# --- in-process protocols (one saver, one process) ---------------------------------------


def fd_protocol(saver: Any, variant: str) -> dict[str, Any]:
    """Resume True at the interrupt checkpoint, then a second resume with False there.

    ``bare``: ``Command(resume=False)`` addressed to the interrupt checkpoint id;
    ``map``: ``Command(resume={interrupt_id: False})`` addressed the same way;
    ``update_state``: fork the interrupt checkpoint with ``update_state`` and resume there;
    ``replay``: replay from the interrupt checkpoint (``invoke(None, cfg)``), then resume.
    """
    from langgraph.types import Command

    app = fd_app(saver)
    app.invoke({"value": 1}, cfg())
    state = app.get_state(cfg())
    icfg = state.config
    iid = state.interrupts[0].id
    first_cmd = Command(resume={iid: True}) if variant == "map" else Command(resume=True)
    first = app.invoke(first_cmd, icfg)
    obs: dict[str, Any] = {"first_outcome": first.get("value")}
    if variant in ("bare", "map"):
        cmd = Command(resume={iid: False}) if variant == "map" else Command(resume=False)
        second = _try(lambda: app.invoke(cmd, icfg))
    elif variant == "update_state":
        fork_cfg = app.update_state(icfg, None)
        second = _try(lambda: app.invoke(Command(resume=False), fork_cfg))
    elif variant == "replay":
        replay = _try(lambda: app.invoke(None, icfg))
        obs["replay_output"] = replay
        second = _try(lambda: app.invoke(Command(resume=False), cfg()))
    else:
        raise ValueError(f"unknown FD variant {variant!r}")
    obs["second"] = second
    obs["second_outcome"] = (second.get("output") or {}).get("value") if second["ok"] else None
    obs["final_state"] = _try(lambda: app.get_state(cfg()).values)
    return obs


def declare_intent(configurable: dict[str, Any], mode: str, wire: str) -> dict[str, Any]:
    """A declared RETRY/FORK on a REMIT build's wire: remit_ref's ``remit_intent: mode``;
    remit-contract's documented ``remit_fork: True`` flag (README, with
    ``fork_on_explicit_checkpoint=False``: without the flag an explicit address is a retry)."""
    if wire == "remit-contract":
        return {**configurable, "remit_fork": mode == "fork"}
    return {**configurable, "remit_intent": mode}


def fi_protocol(saver: Any, wire: str = "remit") -> dict[str, Any]:
    """FI: answer the interrupt (True), then declare a RETRY of the same answer and a FORK with
    False, both addressed to the interrupt checkpoint with the build's discriminator
    (:func:`declare_intent`).

    The harness's own actions (the pause it saw, each resume with its declared mode, and
    what each resume returned) go into the probe's history through the oracle; the gate's
    effect is there already. The checker decides whether the declarations were honoured.
    """
    from langgraph.types import Command

    app = fd_app(saver)
    app.invoke({"value": 1}, cfg())
    state = app.get_state(cfg())
    if state.interrupts:  # the run is parked at the gate: the model's interrupt, before any answer
        oracle.record("pause", step="gate")
    icfg = state.config
    steps = []
    for value, mode in ((True, None), (True, "retry"), (False, "fork")):
        conf = icfg if mode is None else {**icfg, "configurable": declare_intent(icfg["configurable"], mode, wire)}
        oracle.record("resume", value=value, detail={"mode": mode} if mode else None)
        out = _try(lambda: app.invoke(Command(resume=value), conf))
        if out["ok"]:
            oracle.record("complete", value=(out.get("output") or {}).get("value"))
        else:  # the resume was refused loudly (an exception to the caller); the process lives on
            oracle.record("refuse", value=out["error"].split(":", 1)[0])
        steps.append({"value": value, "mode": mode, **out})
    return {"steps": steps}


def _raw_items(saver: Any) -> list[list[Any]]:
    """Every durable ``items`` value of the thread, newest first, read raw from the saver."""
    out = []
    for tup in saver.list(cfg()):
        values = tup.checkpoint.get("channel_values", {})
        if "items" in values:
            out.append(list(values["items"]))
        for _task, channel, value in tup.pending_writes or []:
            if channel == "items":
                out.append(list(value))
    return out


def cv_protocol(saver: Any) -> dict[str, Any]:
    """Run the invalid write, then try every read and resume a caller has."""
    from langgraph.types import Command

    app = cv_app(saver)
    run = _try(lambda: app.invoke({"items": []}, cfg()))
    durable = _raw_items(saver)
    obs: dict[str, Any] = {
        "invoke": run,
        "durable_items": durable,
        "became_durable": any(None in items for items in durable),
        "get_state": _try(lambda: app.get_state(cfg()).values),
        "history": _try(lambda: [h.values for h in app.get_state_history(cfg())]),
        "resume": _try(lambda: app.invoke(Command(resume=True), cfg())),
        "invoke_none": _try(lambda: app.invoke(None, cfg())),
    }
    return obs


def stray_protocol(saver: Any, app_name: str) -> dict[str, Any]:
    """Run to the interrupt, resume once, then a stray resume on the finished thread."""
    from langgraph.types import Command

    app = APPS[app_name](saver)
    app.invoke({"log": []} if app_name == "graph" else 1, cfg())
    first = _try(lambda: app.invoke(Command(resume=True), cfg()))
    before = oracle.current().counter.snapshot()
    stray = _try(lambda: app.invoke(Command(resume=True), cfg()))
    after = oracle.current().counter.snapshot()
    return {"first": first, "stray": stray, "counts_before_stray": before, "counts_after_stray": after}


def interrupt_eo_protocol(saver: Any, app_name: str) -> dict[str, Any]:
    """EO/PC on the interrupt path: run to the interrupt, resume thread-only (in-process)."""
    from langgraph.types import Command

    app = APPS[app_name](saver)
    start = _try(lambda: app.invoke({"log": []} if app_name == "graph" else 1, cfg()))
    at_interrupt = oracle.current().counter.snapshot()
    resumed = _try(lambda: app.invoke(Command(resume=True), cfg()))
    final = oracle.current().counter.snapshot()
    after = {k: final.get(k, 0) - at_interrupt.get(k, 0) for k in sorted(set(final) | set(at_interrupt))}
    return {"start": start, "resumed": resumed, "counts_at_interrupt": at_interrupt,
            "counts_final": final, "runs_after_resume": after}


def sequential_protocol(saver: Any) -> dict[str, Any]:
    """Two interrupts answered one after the other (in one process)."""
    from langgraph.types import Command

    app = sequential_app(saver)
    steps = [_try(lambda: app.invoke({"log": []}, cfg()))]
    steps.append(_try(lambda: app.invoke(Command(resume="a1"), cfg())))
    steps.append(_try(lambda: app.invoke(Command(resume="a2"), cfg())))
    return {"steps": steps, "counts": oracle.current().counter.snapshot()}


def fanout_protocol(saver: Any) -> dict[str, Any]:
    """Two parallel interrupts answered by one resume map; then the same map again (stray)."""
    from langgraph.types import Command

    app = fanout_app(saver)
    start = _try(lambda: app.invoke({"answers": []}, cfg()))
    state = app.get_state(cfg())
    by_value = {i.value: i.id for i in state.interrupts}
    resume_map = {by_value[name]: f"ans-{name}" for name in sorted(by_value)}
    resumed = _try(lambda: app.invoke(Command(resume=resume_map), cfg()))
    before = oracle.current().counter.snapshot()
    stray = _try(lambda: app.invoke(Command(resume=resume_map), cfg()))
    return {"start": start, "interrupts": sorted(by_value), "resumed": resumed, "counts_before_stray": before,
            "stray": stray, "counts": oracle.current().counter.snapshot()}


# --- steps for fresh interpreters (run_child) --------------------------------------------


def _step_start(saver: Any, app: str, park_after: bool = False) -> dict[str, Any]:
    application = APPS[app](saver)
    first = {"log": []} if app in ("graph", "sequential") else ({"answers": []} if app == "fanout" else 1)
    out = _try(lambda: application.invoke(first, cfg()))
    if park_after:
        park("parked")  # durable interrupt reached: the parent kills us here
    return {"start": out}


def _step_resume(saver: Any, app: str, value: Any = True) -> dict[str, Any]:
    from langgraph.types import Command

    application = APPS[app](saver)
    return {"resume": _try(lambda: application.invoke(Command(resume=value), cfg()))}


def _step_run_resume(saver: Any, app: str) -> dict[str, Any]:
    out = _step_start(saver, app)
    out.update(_step_resume(saver, app))
    return out


def durable_view(saver: Any) -> dict[str, Any]:
    """What a recovery can see: done tasks (by their durable return) and whether the run ended."""
    tup = saver.get_tuple(cfg())
    if tup is None:
        return {"checkpoint": False, "done": [], "finished": False}
    values = tup.checkpoint.get("channel_values", {})
    returns = sorted(str(v) for _t, ch, v in (tup.pending_writes or []) if ch == "__return__")
    finished = "__end__" in values
    done = sorted({r.split("-")[0] for r in returns if r.endswith("-done")})
    if finished:
        done = ["s1", "s2"]
    return {"checkpoint": True, "done": done, "finished": finished}


def _step_crash_run(saver: Any, durability: str, fail_dir: str | None = None) -> dict[str, Any]:
    app = crash_app(saver, fail_dir, durability)
    return {"run": _try(lambda: app.invoke(1, cfg(), durability=durability))}


def _step_crash_recover(saver: Any, durability: str, mode: str) -> dict[str, Any]:
    """Recover in this (fresh) process: ``none`` = invoke(None, cfg), ``resubmit`` = original input."""
    view = durable_view(saver)
    app = crash_app(saver, None, durability)
    arg = None if mode == "none" else 1
    out = _try(lambda: app.invoke(arg, cfg(), durability=durability))
    return {"durable_before": view, "recover": out}


STEPS: dict[str, Callable[..., dict[str, Any]]] = {
    "start": _step_start,
    "resume": _step_resume,
    "run_resume": _step_run_resume,
    "crash_run": _step_crash_run,
    "crash_recover": _step_crash_recover,
}


def child_step(step: str, backend: str, location: str, arm: str, ledger: str, incarnation: str,
               remit_options: dict[str, Any] | None = None, park_ops: bool = False, drop: str = "nothing",
               **kwargs: Any) -> dict[str, Any]:
    """Fresh-interpreter entry point: one protocol step, its observations and its counter."""
    ops: list[str] = []
    log = ops if (park_ops or drop != "nothing" or step.startswith("crash")) else None
    with session(backend, location, arm, ledger, incarnation, remit_options, park_ops, drop, log) as saver:
        out = STEPS[step](saver, **kwargs)
    out["ops"] = ops
    out["counter"] = oracle.current().counter.snapshot()
    return out
