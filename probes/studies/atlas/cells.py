"""The LangGraph atlas cells: one small deterministic graph per reported behaviour (no model calls).

This module runs *inside the side environment of one LangGraph release*
(``python -m probes.studies.atlas.cells CELL BACKEND LOCATION WORKDIR``, or ``--serve``): at
module level it imports only the standard library, ``probes.core`` and the shared cell
vocabulary (``probes.studies.atlas.cellkit``: ``Observed``, ``NotApplicable``,
``NotReproduced``, the oracle and history every cell gets); LangGraph is imported
inside the functions, so the same file drives 1.0.x and the newest release.

A cell drives its graph, fires every external effect through the harness oracle
(``probes.core.oracle``: counter + crash-surviving ledger) and appends what it drove
and saw to the probe's ``HistoryLog`` (``probes.core.history``). It then returns an
:class:`Observed`: the behaviour in words built from the measured values, the inputs
of the check its table row names (``probes/studies/atlas/bugs.py``), and the raw observations.
A cell never decides a label -- ``probes/studies/atlas/decide.py`` does, through the checker.

Kill cells run their victims with ``probes.core.nemesis.run_child``; inside the side
environment ``sys.executable`` is that environment's interpreter, so the victims run
the same release.
"""

from __future__ import annotations

import contextlib
import operator
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

from probes.studies.atlas.cellkit import (CellBase, Module, NotApplicable, NotReproduced, Observed, Registry, err, installed,
                                  killed_child)
from probes.core import oracle
from probes.core.history import HistoryLog, Kind

__all__ = ["CELLS", "Cell", "NotApplicable", "NotReproduced", "Observed", "cell", "run_cell"]

CELLS = Registry()
cell = CELLS.cell  # ``@cell("<ref>")`` registers the cell of langchain-ai/langgraph issue <ref>


# --- what every cell gets -------------------------------------------------------------


class Cell(CellBase):
    """One probe's store, scratch directory, history and oracle, plus this backend's LangGraph saver."""

    @contextlib.contextmanager
    def saver(self) -> Iterator[Any]:
        """The stock synchronous saver of this backend (connections closed at the end); racing
        cells share one SQLite file, so writers wait up to 30 s for each other's lock."""
        from probes.frameworks.langgraph.savers import stock_saver

        if self.backend not in ("sqlite", "postgres"):
            raise ValueError(f"atlas cells run on sqlite or postgres, not {self.backend!r}")
        saver = stock_saver(self.backend, self.location, busy_timeout_s=30)
        try:
            yield saver
        finally:
            saver.conn.close()


def _child_cell(args: dict[str, Any], incarnation: str) -> Cell:
    return Cell(args["backend"], args["location"], Path(args["workdir"]), incarnation)


def cfg(thread: str, checkpoint_id: str | None = None, ns: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    if ns is not None:
        conf["checkpoint_ns"] = ns
    return {"configurable": conf}


def pending(app: Any, config: dict[str, Any]) -> list[Any]:
    """The interrupts the thread is waiting on (values and ids), from get_state."""
    state = app.get_state(config)
    found = list(getattr(state, "interrupts", ()) or ())
    if not found:
        for task in state.tasks:
            found.extend(task.interrupts)
    return found


def surfaced(output: Any) -> list[Any]:
    """Interrupt values an invoke returned to the caller (``__interrupt__``)."""
    if isinstance(output, dict) and "__interrupt__" in output:
        return [getattr(i, "value", i) for i in output["__interrupt__"]]
    return []


def _state_graph(fields: dict[str, Any]) -> Any:
    from typing import TypedDict

    from langgraph.graph import StateGraph

    return StateGraph(TypedDict("S", fields, total=False))  # type: ignore[operator]


def _linear(c: Cell, names: list[str], saver: Any, fields: dict[str, Any] | None = None,
            before: Callable[[str], None] | None = None) -> Any:
    """START -> names[0] -> ... -> END, every node firing its effect ``<name>``."""
    from langgraph.graph import END, START

    g = _state_graph(fields or {"log": Annotated_list()})

    def node(name: str) -> Callable[[dict], dict]:
        def run(state: dict) -> dict:
            c.log(Kind.STEP_BEGIN, name)
            if before is not None:
                before(name)
            c.fire(name, name)
            c.log(Kind.STEP_END, name)
            return {"log": [name]}
        return run

    prev = START
    for name in names:
        g.add_node(name, node(name))
        g.add_edge(prev, name)
        prev = name
    g.add_edge(prev, END)
    return g.compile(checkpointer=saver)


def Annotated_list() -> Any:
    from typing import Annotated

    return Annotated[list, operator.add]


# --- the cells (one per row of bugs.py) -----------------------------------------------


def _gate_graph(c: Cell, saver: Any, step: str = "gate") -> Any:
    """START -> gate -> END; gate asks once and records f(answer) = 'f(<answer>)'."""
    from langgraph.graph import END, START
    from langgraph.types import interrupt

    g = _state_graph({"out": str})

    def gate(state: dict) -> dict:
        c.log(Kind.STEP_BEGIN, step)
        answer = interrupt("approve?")
        c.consume(step, answer)
        c.fire(f"decide:{answer}", step)
        return {"out": f"f({answer})"}

    g.add_node(step, gate)
    g.add_edge(START, step)
    g.add_edge(step, END)
    return g.compile(checkpointer=saver)


@cell("6663")
def second_resume_same_checkpoint(c: Cell) -> Observed:
    from langgraph.types import Command

    with c.saver() as saver:
        app = _gate_graph(c, saver)
        app.invoke({"out": ""}, cfg("t"))
        at = app.get_state(cfg("t")).config  # the interrupt checkpoint, with its id
        c.log(Kind.PAUSE, "gate")
        c.log(Kind.ANSWER, value="a")
        first = app.invoke(Command(resume="a"), at).get("out")
        c.log(Kind.FORK, value="b", target="interrupt checkpoint")
        try:
            second, error = app.invoke(Command(resume="b"), at).get("out"), None
        except Exception as exc:  # a loud refusal is an observation, not a harness error
            second, error = None, err(exc)
    return Observed(
        f"first resume with 'a' at the interrupt checkpoint -> {first!r}; second resume there with 'b' -> "
        f"{second!r}" + (f" (raised {error})" if error else ""),
        {"observed": second, "expected": "f(b)", "first_outcome": first},
        {"first": first, "second": second, "error": error})


@cell("7361")
def resume_addressed_to_checkpoint(c: Cell) -> Observed:
    from langgraph.graph import END, START
    from langgraph.types import Command, interrupt

    def two_step(saver: Any) -> Any:
        """START -> prep -> gate -> END: the interrupt is not in the first step."""
        g = _state_graph({"out": str})

        def prep(state: dict) -> dict:
            return {"out": "prepped"}

        def gate(state: dict) -> dict:
            answer = interrupt("approve?")
            c.consume("gate", answer, variant="interrupt in the second node")
            return {"out": f"f({answer})"}

        g.add_node("prep", prep)
        g.add_node("gate", gate)
        g.add_edge(START, "prep")
        g.add_edge("prep", "gate")
        g.add_edge("gate", END)
        return g.compile(checkpointer=saver)

    variants: dict[str, Any] = {}
    with c.saver() as saver:
        for variant, build, how in (
                ("interrupt in the only node, id from get_state", lambda s: _gate_graph(c, s), "state"),
                ("interrupt in the second node, id from get_state", two_step, "state"),
                ("interrupt in the only node, id from get_state_history", lambda s: _gate_graph(c, s), "history")):
            thread = f"t{len(variants)}"
            app = build(saver)
            app.invoke({"out": ""}, cfg(thread))
            if how == "state":
                at = app.get_state(cfg(thread)).config
            else:
                at = next(s for s in app.get_state_history(cfg(thread)) if s.interrupts or
                          any(t.interrupts for t in s.tasks)).config
            c.log(Kind.ANSWER, value="v", variant=variant)
            before = len(c.history.read().of(Kind.CONSUME))
            out = app.invoke(Command(resume="v"), at)
            seen = [e.value for e in c.history.read().of(Kind.CONSUME)[before:]]
            state = app.get_state(cfg(thread))
            variants[variant] = {"received": seen, "out": out.get("out"),
                                 "re_interrupted": bool(surfaced(out) or pending(app, cfg(thread))),
                                 "finished": not state.next and state.values.get("out") == "f(v)"}
    ok = all(v["finished"] and "v" in v["received"] for v in variants.values())
    behaviour = "; ".join(f"{k}: Command(resume='v') at the interrupt checkpoint's id -> node received "
                          f"{v['received'] or 'nothing'}, out={v['out']!r}, re-interrupted={v['re_interrupted']}"
                          for k, v in variants.items())
    return Observed(behaviour, {"completed": ok, "detail": behaviour}, variants)


@cell("6792")
def subgraph_interrupt_reruns_parent(c: Cell) -> Observed:
    from langgraph.graph import END, START
    from langgraph.types import Command, interrupt

    def subgraph() -> Any:
        sub = _state_graph({"out": str})

        def ask(state: dict) -> dict:
            c.log(Kind.STEP_BEGIN, "ask")
            answer = interrupt("q")
            c.consume("ask", answer)
            return {"out": answer}

        sub.add_node("ask", ask)
        sub.add_edge(START, "ask")
        sub.add_edge("ask", END)
        return sub.compile()

    def pre(state: dict) -> dict:
        c.log(Kind.STEP_BEGIN, "pre")
        c.fire("pre", "pre")
        return {"pre": "done"}

    variants: dict[str, Any] = {}
    with c.saver() as saver:
        # 'pre' completes in the step before the subgraph, or in the same step beside it
        for variant in ("pre before the subgraph", "pre beside the subgraph"):
            parent = _state_graph({"out": str, "pre": str})
            parent.add_node("pre", pre)
            parent.add_node("sub", subgraph())
            if variant == "pre before the subgraph":
                parent.add_edge(START, "pre")
                parent.add_edge("pre", "sub")
            else:
                parent.add_edge(START, "pre")
                parent.add_edge(START, "sub")
                parent.add_edge("pre", END)
            parent.add_edge("sub", END)
            app = parent.compile(checkpointer=saver)
            thread = cfg(f"t{len(variants)}")
            start = c.ledger.counts().get("pre", 0)
            first = app.invoke({"out": ""}, thread)
            before = c.ledger.counts().get("pre", 0) - start
            c.log(Kind.RESUME, value="v", variant=variant)
            out = app.invoke(Command(resume="v"), thread)
            after = c.ledger.counts().get("pre", 0) - start - before
            variants[variant] = {"pre_before": before, "pre_after_resume": after,
                                 "interrupts_surfaced": len(surfaced(first)) + len(surfaced(out)),
                                 "out": out.get("out")}
    behaviour = "; ".join(f"{k}: 'pre' ran {v['pre_before']}x before the subgraph interrupt and "
                          f"{v['pre_after_resume']}x more on the one resume, the interrupt reached the caller "
                          f"{v['interrupts_surfaced']}x, final out={v['out']!r}" for k, v in variants.items())
    return Observed(behaviour, {"runs_after_recovery": {f"pre ({k})": v["pre_after_resume"] for k, v in variants.items()},
                                "durable_prefix": [f"pre ({k})" for k in variants]}, variants)


@cell("6050")
def task_in_subgraph_reruns(c: Cell) -> Observed:
    """A node of a subgraph calls a ``@task`` and then ``interrupt()``; one resume. The task's
    recorded result should be reused: its effect fires once."""
    from langgraph.func import task
    from langgraph.graph import END, START
    from langgraph.types import Command, interrupt

    @task
    def lookup(x: str) -> str:
        c.log(Kind.STEP_BEGIN, "lookup")
        c.fire("lookup", "lookup")
        return f"looked up {x}"

    def work(state: dict) -> dict:
        found = lookup("x").result()
        answer = interrupt("ok?")
        c.consume("work", answer)
        c.fire("after", "work")
        return {"out": f"{found}: {answer}"}

    sub = _state_graph({"out": str})
    sub.add_node("work", work)
    sub.add_edge(START, "work")
    sub.add_edge("work", END)
    parent = _state_graph({"out": str})
    parent.add_node("sub", sub.compile())
    parent.add_edge(START, "sub")
    parent.add_edge("sub", END)
    resumes = []
    with c.saver() as saver:
        app = parent.compile(checkpointer=saver)
        c.log(Kind.START)
        first = app.invoke({"out": ""}, cfg("t"))
        before = c.ledger.counts().get("lookup", 0)
        out: Any = first
        for answer in ("yes", "yes again"):  # a second resume only if the first one interrupted again
            if not surfaced(out):
                break
            c.log(Kind.ANSWER, value=answer)
            c.log(Kind.RESUME, value=answer, mode="retry")
            out = app.invoke(Command(resume=answer), cfg("t"))
            resumes.append(answer)
    counts = c.ledger.counts()
    behaviour = (f"subgraph node: @task 'lookup' then interrupt(); 'lookup' ran {before}x before the pause and "
                 f"{counts.get('lookup', 0)}x in all after {len(resumes)} resume(s); the gated effect fired "
                 f"{counts.get('after', 0)}x; final out={out.get('out') if isinstance(out, dict) else out!r}")
    return Observed(behaviour, {"effect_counts": {k: counts.get(k, 0) for k in ("lookup", "after")},
                                "expected": ["lookup", "after"]},
                    {"lookup_before_resume": before, "resumes": resumes, "counts": counts,
                     "out": out.get("out") if isinstance(out, dict) else None})


@cell("5672")
def cancelled_task_error_record(c: Cell) -> Observed:
    """Two nodes in one superstep (p1 returns, p2 waits on a barrier); the run is cancelled while p2
    is in flight, under each durability mode. What ``aget_state().tasks`` records for each task
    afterwards should not depend on the mode (RD: equal situations, equal durable record)."""
    import asyncio

    from langgraph.graph import END, START

    if c.backend != "sqlite":
        raise NotApplicable("this cell drives the asynchronous SQLite saver")
    try:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    except ImportError:
        raise NotApplicable("langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver is not installed") from None

    async def one(durability: str) -> dict[str, Any]:
        entered, returned = asyncio.Event(), asyncio.Event()

        async def p1(state: dict) -> dict:
            c.fire(f"p1[{durability}]", "p1")
            returned.set()
            return {"log": ["p1"]}

        async def p2(state: dict) -> dict:
            entered.set()
            await asyncio.Event().wait()  # in flight until cancelled
            return {"log": ["p2"]}

        g = _state_graph({"log": Annotated_list()})
        g.add_node("p1", p1)
        g.add_node("p2", p2)
        g.add_edge(START, "p1")
        g.add_edge(START, "p2")
        g.add_edge("p1", END)
        g.add_edge("p2", END)
        async with AsyncSqliteSaver.from_conn_string(c.location) as saver:
            app = g.compile(checkpointer=saver)
            thread = cfg(f"t-{durability}")
            c.log(Kind.START, mode=durability)
            run = asyncio.ensure_future(app.ainvoke({"log": []}, thread, durability=durability))
            await asyncio.wait_for(asyncio.gather(entered.wait(), returned.wait()), 60)
            for _ in range(50):  # let p1's completion be committed by the loop (event-loop turns, no sleeps)
                await asyncio.sleep(0)
            run.cancel()
            c.log(Kind.CRASH, value="asyncio cancellation while p2 is in flight", mode=durability)
            try:
                await run
                outcome = "finished"
            except asyncio.CancelledError:
                outcome = "cancelled"
            state = await app.aget_state(thread)
            tasks = {t.name: (type(t.error).__name__ if isinstance(t.error, BaseException)
                              else (str(t.error) if t.error is not None else None))
                     for t in state.tasks}
            return {"outcome": outcome, "tasks": dict(sorted(tasks.items())),
                    "p1_recorded": "p1" in (state.values.get("log") or []) or "p1" not in tasks}

    results = {mode: asyncio.run(one(mode)) for mode in ("sync", "async", "exit")}
    behaviour = "; ".join(f"durability={m}: run {r['outcome']}, recorded task errors {r['tasks']}"
                          for m, r in results.items())
    return Observed(behaviour, {"decisions": {m: r["tasks"].get("p2") for m, r in results.items()}}, results)


@cell("7780")
def interrupt_in_loop(c: Cell) -> Observed:
    from langgraph.graph import END, START
    from langgraph.types import Command, interrupt

    g = _state_graph({"answers": list})

    def validate(state: dict) -> dict:
        c.log(Kind.STEP_BEGIN, "validate")
        c.fire("prefix", "validate")
        answers = []
        for i in range(3):  # the documented validation loop: ask until valid, at most 3 times
            answer = interrupt(f"q{i + 1}")
            c.consume("validate", answer, iteration=i + 1)
            answers.append(answer)
            if answer == "a3":
                break
        return {"answers": answers}

    g.add_node("validate", validate)
    g.add_edge(START, "validate")
    g.add_edge("validate", END)
    given = ["a1", "a2", "a3"]
    with c.saver() as saver:
        app = g.compile(checkpointer=saver)
        app.invoke({"answers": []}, cfg("t"))
        asked = []
        for answer in given:
            waiting = pending(app, cfg("t"))
            if not waiting:
                break
            asked.append(getattr(waiting[0], "value", None))
            c.log(Kind.ANSWER, value=answer)
            app.invoke(Command(resume=answer), cfg("t"))
        extra = 0
        while pending(app, cfg("t")) and extra < 3:  # extra resumes needed to finish
            extra += 1
            app.invoke(Command(resume=f"extra{extra}"), cfg("t"))
        final = app.get_state(cfg("t")).values.get("answers")
    prefix = c.ledger.counts().get("prefix", 0)
    behaviour = (f"answers a1, a2, a3 one per resume: questions asked {asked}, final answers per iteration {final}, "
                 f"extra resumes needed {extra}, node prefix effect fired {prefix}x")
    return Observed(behaviour, {"decisions": {"expected": given, "observed": final}},
                    {"asked": asked, "final": final, "extra_resumes": extra, "prefix_effects": prefix})


@cell("8837")
def stale_resume_value(c: Cell) -> Observed:
    from langgraph.graph import END, START
    from langgraph.types import Command, interrupt

    def one_node() -> Any:
        g = _state_graph({"x": str, "y": str})

        def both(state: dict) -> dict:
            x = interrupt("q1")
            c.consume("both", x, interrupt="q1", shape="one node")
            y = interrupt("q2")
            c.consume("both", y, interrupt="q2", shape="one node")
            return {"x": x, "y": y}

        g.add_node("both", both)
        g.add_edge(START, "both")
        g.add_edge("both", END)
        return g

    def two_nodes() -> Any:
        g = _state_graph({"x": str, "y": str})

        def first(state: dict) -> dict:
            x = interrupt("q1")
            c.consume("first", x, interrupt="q1", shape="two nodes")
            return {"x": x}

        def second(state: dict) -> dict:
            y = interrupt("q2")
            c.consume("second", y, interrupt="q2", shape="two nodes")
            return {"y": y}

        g.add_node("first", first)
        g.add_node("second", second)
        g.add_edge(START, "first")
        g.add_edge("first", "second")
        g.add_edge("second", END)
        return g

    delivered: dict[str, int] = {}
    observations: dict[str, Any] = {}
    with c.saver() as saver:
        for shape, build in (("one node", one_node), ("two nodes", two_nodes)):
            app = build().compile(checkpointer=saver)
            thread = cfg(shape.replace(" ", "_"))
            app.invoke({"x": "", "y": ""}, thread)
            app.invoke(Command(resume="a1"), thread)
            waiting_before = [getattr(i, "value", None) for i in pending(app, thread)]
            if waiting_before != ["q2"]:
                raise NotReproduced(f"{shape}: after answering q1 the thread waits on {waiting_before}, not q2")
            c.log(Kind.RESUME, value=None, shape=shape)
            out = app.invoke(None, thread)
            state = app.get_state(thread)
            # to how many distinct interrupts was the one answer 'a1' delivered?
            got = {e.detail.get("interrupt") for e in c.history.read().of(Kind.CONSUME)
                   if e.value == "a1" and e.detail.get("shape") == shape}
            delivered[f"a1 ({shape})"] = len(got)
            observations[shape] = {"y_after_invoke_none": state.values.get("y"), "next": list(state.next),
                                   "surfaced": surfaced(out)}
    behaviour = "; ".join(f"{shape}: after answering q1 with 'a1', invoke(None) left y={o['y_after_invoke_none']!r}, "
                          f"next={o['next']}" for shape, o in observations.items())
    return Observed(behaviour, {"effect_counts": delivered}, observations)


@cell("8836")
def unknown_resume_id(c: Cell) -> Observed:
    from langgraph.types import Command

    with c.saver() as saver:
        app = _gate_graph(c, saver)
        app.invoke({"out": ""}, cfg("t"))
        before = [getattr(i, "value", None) for i in pending(app, cfg("t"))]
        unknown = {"0" * 32: "v"}  # shaped like an interrupt id, matching none
        c.log(Kind.ANSWER, value=unknown)
        try:
            out, error = app.invoke(Command(resume=unknown), cfg("t")), None
        except Exception as exc:
            out, error = None, err(exc)
        after = [getattr(i, "value", None) for i in pending(app, cfg("t"))]
        state = app.get_state(cfg("t"))
    consumed = [e.value for e in c.history.read().of(Kind.CONSUME)]
    behaviour = (f"resume map keyed by an unknown interrupt id: "
                 + (f"raised {error}" if error else "returned without raising")
                 + f"; pending before {before}, after {after}; answers consumed {consumed}; "
                   f"thread finished={not state.next}")
    return Observed(behaviour, {"refused_at_write": error is not None, "became_durable": bool(consumed),
                                "error": error},
                    {"error": error, "pending_before": before, "pending_after": after, "consumed": consumed,
                     "surfaced": surfaced(out) if out is not None else None})


# --- kill cells: the victim runs in a child process of this side environment ----------


def _delegate(inner: Any, on_op: Callable[[str, Any], None]) -> Any:
    """A saver that delegates to ``inner`` and calls ``on_op(op, detail)`` after each durable write."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    class Delegate(BaseCheckpointSaver):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__(serde=inner.serde)
            self.inner = inner

        def put(self, config, checkpoint, metadata, new_versions):  # noqa: ANN001
            result = self.inner.put(config, checkpoint, metadata, new_versions)
            on_op("put", {"step": (metadata or {}).get("step")})
            return result

        def put_writes(self, config, writes, task_id, task_path=""):  # noqa: ANN001
            self.inner.put_writes(config, writes, task_id, task_path)
            on_op("put_writes", {"channels": sorted({str(ch) for ch, _ in writes}),
                                 "values": [v for _ch, v in writes if isinstance(v, (str, list))]})

        def get_tuple(self, config):  # noqa: ANN001
            return self.inner.get_tuple(config)

        def list(self, config, *, filter=None, before=None, limit=None):  # noqa: A002, ANN001
            return self.inner.list(config, filter=filter, before=before, limit=limit)

        def delete_thread(self, thread_id):  # noqa: ANN001
            return self.inner.delete_thread(thread_id)

        def get_next_version(self, current, channel):  # noqa: ANN001
            return self.inner.get_next_version(current, channel)

        def get_delta_channel_history(self, *, config, channels):  # noqa: ANN001
            return self.inner.get_delta_channel_history(config=config, channels=channels)

        @property
        def config_specs(self) -> list:
            return self.inner.config_specs

    return Delegate()


def victim_8039(backend: str, location: str, workdir: str, kill_after: str, mode: str) -> dict[str, Any]:
    """Child: s1 -> s2 -> s3 under durability='sync'; parks right after s2's writes or the next put."""
    from probes.core.nemesis import park

    c = _child_cell({"backend": backend, "location": location, "workdir": workdir}, mode)
    ops: list[str] = []  # the order the durable writes landed in (timing-dependent: observations only)
    seen_s2 = {"writes": False}

    def on_op(op: str, detail: Any) -> None:
        ops.append(f"put(step {detail.get('step')})" if op == "put" else f"put_writes({detail['values']})")
        c.log(Kind.PERSIST, value=op, **detail)
        if op == "put_writes" and any("s2" in (v if isinstance(v, list) else [v]) for v in detail["values"]):
            seen_s2["writes"] = True
            if kill_after == "s2_put_writes":
                park("kill")
        elif op == "put" and detail.get("step") == 2 and kill_after == "step2_put":
            park("kill")  # the checkpoint of s2's step, whatever order it lands in

    with c.saver() as stock:
        app = _linear(c, ["s1", "s2", "s3"], _delegate(stock, on_op))
        final = _run_or_recover(c, app, mode)
    oracle.current().cross_check()
    return {"ops": ops, "final_log": final}


def _run_or_recover(c: Cell, app: Any, mode: str) -> Any:
    """Run the graph from its input (``mode == "run"``) or recover it with ``invoke(None)``, both under
    ``durability='sync'``; the thread's final log."""
    if mode == "run":
        c.log(Kind.START)
        app.invoke({"log": []}, cfg("t"), durability="sync")
    else:
        c.log(Kind.RECOVER, value="invoke(None)")
        app.invoke(None, cfg("t"), durability="sync")
    return app.get_state(cfg("t")).values.get("log")


@cell("8039")
def sync_write_order(c: Cell) -> Observed:

    results: dict[str, Any] = {}
    counts: dict[str, int] = {}
    for point in ("s2_put_writes", "step2_put"):
        sub = c.workdir / point
        sub.mkdir()
        args = {"backend": c.backend, "location": c.location if c.backend == "postgres" else str(sub / "cp.sqlite"),
                "workdir": str(sub), "kill_after": point}
        if c.backend == "postgres":  # one thread per point on the shared database
            args["location"] = c.location
        killed_child("probes.studies.atlas.cells:victim_8039", {**args, "mode": "run"}, f"8039 {point}: the victim")
        HistoryLog(sub / "history.sqlite").append(Kind.CRASH, "harness", detail={"how": "SIGKILL", "where": point})
        # recovery: a process other than the killed one (this driver) resumes the thread
        rec = victim_8039(**{**args, "kill_after": "none", "mode": "recover"})
        ledger = oracle.Ledger(sub / "ledger.sqlite").counts()
        counts.update({f"{k}@{point}": v for k, v in ledger.items()})
        before_kill = [e.value if e.value != "put" else f"put(step {e.step})"
                       for e in HistoryLog(sub / "history.sqlite").read().of(Kind.PERSIST) if e.incarnation == "run"]
        results[point] = {"effects": ledger, "recovered_log": rec["final_log"], "recovery_ops": rec["ops"],
                          "writes_before_kill": before_kill}
        if c.backend == "postgres":
            with c.saver() as saver:
                saver.delete_thread("t")
    where = {"s2_put_writes": "s2's put_writes", "step2_put": "the put of s2's step checkpoint"}
    behaviour = "; ".join(f"SIGKILL right after {where[p]}, recovered with invoke(None): s2 fired "
                          f"{r['effects'].get('s2', 0)}x, final log {r['recovered_log']}" for p, r in results.items())
    return Observed(behaviour, {"effect_counts": {k: v for k, v in counts.items() if k.startswith("s2@")},
                                "expected": [k for k in counts if k.startswith("s2@")]}, results)


FANOUT = ("a", "b")  # the parallel tasks of #8234's superstep


def _fanout(c: Cell, saver: Any, a_durable: threading.Event) -> Any:
    """START -> s0 -> (a, b in one superstep) -> join -> END, every node firing its effect. ``b``
    waits (up to 20 s, recorded) until ``a_durable`` is set -- by the saver once a's writes are
    durable -- so the superstep can be caught with a done and durable and b still in flight."""
    from langgraph.graph import END, START

    g = _state_graph({"log": Annotated_list()})

    def node(name: str) -> Callable[[dict], dict]:
        def run(state: dict) -> dict:
            c.log(Kind.STEP_BEGIN, name)
            if name == "b" and not a_durable.wait(timeout=20):
                c.log(Kind.STEP_BEGIN, name, waited_out=True)
            c.fire(name, name)
            return {"log": [name]}
        return run

    for name in ("s0", *FANOUT, "join"):
        g.add_node(name, node(name))
    g.add_edge(START, "s0")
    for name in FANOUT:
        g.add_edge("s0", name)
    g.add_edge(list(FANOUT), "join")
    g.add_edge("join", END)
    return g.compile(checkpointer=saver)


def _fanout_writes(detail: Any) -> bool:
    return any(v in FANOUT or (isinstance(v, list) and set(v) & set(FANOUT)) for v in detail.get("values", []))


def victim_8234(backend: str, location: str, workdir: str, kill_after: int, mode: str) -> dict[str, Any]:
    """Child (``mode='run'``): the fan-out graph under durability='sync', parked (to be SIGKILLed)
    right after the ``kill_after``-th durable write of the (a, b) superstep's tasks -- 1: one task's
    writes durable, the other's not; 2: both durable, the superstep's checkpoint not yet written.
    ``mode='recover'``: a process other than the killed one recovers the thread with invoke(None)."""
    from probes.core.nemesis import park

    c = _child_cell({"backend": backend, "location": location, "workdir": workdir}, mode)
    ops: list[str] = []  # the order the durable writes landed in (observations only)
    seen = {"fanout": 0}
    a_durable = threading.Event()
    if mode != "run":
        a_durable.set()  # recovery: nothing to catch, b need not wait

    def on_op(op: str, detail: Any) -> None:
        ops.append(f"put(step {detail.get('step')})" if op == "put" else f"put_writes({detail['values']})")
        c.log(Kind.PERSIST, value=op, **detail)
        if op == "put_writes" and _fanout_writes(detail):
            seen["fanout"] += 1
            if mode == "run" and seen["fanout"] == kill_after:
                park("kill")
            if ["a"] in detail.get("values", []):
                a_durable.set()

    with c.saver() as stock:
        app = _fanout(c, _delegate(stock, on_op), a_durable)
        final = _run_or_recover(c, app, mode)
    oracle.current().cross_check()
    return {"ops": ops, "final_log": final}


@cell("8234")
def sync_superstep_not_atomic(c: Cell) -> Observed:
    """Under durability='sync' a superstep's task writes and its checkpoint are separate writes.
    The fan-out graph runs once uninterrupted (the reference), then is SIGKILLed once with a's
    writes durable and b still in flight (b waits for a's write; it has fired nothing: the
    superstep half-written) and once with both tasks' writes durable and the superstep's
    checkpoint not yet written, each recovered with invoke(None) by another process. Every arm
    must end in the reference's state with the reference's effect counts: a task whose writes were
    durable is not run again, the state holds every task's write once. (A task killed after its
    effect and before its write runs again by design -- at-least-once -- so no arm kills there.) A
    fourth arm makes a's put_writes fail once (a storage error, no crash) and records whether the
    run says so."""

    def outcome(log: Any, counts: dict[str, int]) -> dict[str, Any]:
        return {"log": sorted(log or []), "effects": {k: counts.get(k, 0) for k in ("s0", *FANOUT, "join")}}

    arms: dict[str, Any] = {}
    ref_dir = c.workdir / "uninterrupted"
    ref_dir.mkdir()
    ref = _child_cell({"backend": c.backend, "location": c.location if c.backend == "postgres"
                       else str(ref_dir / "cp.sqlite"), "workdir": str(ref_dir)}, "reference")
    with ref.saver() as saver:
        thread = cfg("t-reference")
        done = threading.Event()
        done.set()  # nothing to catch here: b need not wait
        app = _fanout(ref, saver, done)
        app.invoke({"log": []}, thread, durability="sync")
        arms["uninterrupted"] = outcome(app.get_state(thread).values.get("log"), oracle.Ledger(ref_dir / "ledger.sqlite").counts())
    oracle.install(c.workdir / "ledger.sqlite", c.incarnation)  # back to this cell's own ledger
    where = {1: "a's writes durable, b in flight", 2: "a's and b's writes durable, no checkpoint"}
    writes: dict[str, Any] = {}
    for kill_after, label in where.items():
        sub = c.workdir / f"kill-{kill_after}"
        sub.mkdir()
        args = {"backend": c.backend, "location": c.location if c.backend == "postgres" else str(sub / "cp.sqlite"),
                "workdir": str(sub), "kill_after": kill_after}
        killed_child("probes.studies.atlas.cells:victim_8234", {**args, "mode": "run"}, f"8234 kill after {kill_after}")
        HistoryLog(sub / "history.sqlite").append(Kind.CRASH, "harness", detail={"how": "SIGKILL", "where": label})
        rec = victim_8234(**{**args, "mode": "recover"})
        arms[f"SIGKILL: {label}"] = outcome(rec["final_log"], oracle.Ledger(sub / "ledger.sqlite").counts())
        writes[label] = [e.value if e.value != "put" else f"put(step {e.step})"
                         for e in HistoryLog(sub / "history.sqlite").read().of(Kind.PERSIST) if e.incarnation == "run"]
        if c.backend == "postgres":
            with c.saver() as saver:
                saver.delete_thread("t")
    oracle.install(c.workdir / "ledger.sqlite", c.incarnation)
    failing = {"left": 1}
    settled = threading.Event()  # a's write failed (b need not wait for it)

    def on_op(op: str, detail: Any) -> None:
        c.log(Kind.PERSIST, value=op, **detail)

    with c.saver() as stock:
        inner_put_writes = stock.put_writes

        def put_writes(config, writes_, task_id, task_path=""):  # noqa: ANN001
            if failing["left"] and any(v == ["a"] for _ch, v in writes_):
                failing["left"] -= 1
                settled.set()
                raise OSError("storage error while writing task a's writes")
            return inner_put_writes(config, writes_, task_id, task_path)

        stock.put_writes = put_writes  # type: ignore[method-assign]
        thread = cfg("t-failing-write")
        app = _fanout(c, _delegate(stock, on_op), settled)
        c.log(Kind.START, mode="task a's put_writes fails once")
        try:
            app.invoke({"log": []}, thread, durability="sync")
            loud = None
        except Exception as exc:  # the failure surfaced: an observation
            loud = err(exc)
        state = app.get_state(thread)
        failed_write = {"raised": loud, "write_failed": failing["left"] == 0,
                        "log_after": sorted(state.values.get("log") or []), "next": list(state.next)}
    reference = arms["uninterrupted"]
    off = [a for a, o in arms.items() if o != reference]
    behaviour = ("; ".join(f"{a}: log {o['log']}, effects {o['effects']}" for a, o in arms.items())
                 + (f" -- differs from the uninterrupted run: {', '.join(off)}" if off else
                    " -- every recovery matched the uninterrupted run")
                 + f"; a failing put_writes of task a " + ("was not triggered" if not failed_write["write_failed"] else
                                                          f"raised {loud}" if loud else
                                                          f"was silent: the run went on to log {failed_write['log_after']}"))
    return Observed(behaviour, {"decisions": arms}, {"arms": arms, "writes_before_kill": writes,
                                                      "failed_write": failed_write})


def victim_8764(backend: str, location: str, workdir: str, durability: str) -> dict[str, Any]:
    """Child: kill at the first node's start; in 'async', the first put is held until then."""
    from probes.core.nemesis import park

    c = _child_cell({"backend": backend, "location": location, "workdir": workdir}, f"run-{durability}")
    node_started = threading.Event()
    hold = {"first": durability == "async"}
    put_done = threading.Event()

    def before_node(name: str) -> None:
        if name == "n1":
            node_started.set()
            c.log(Kind.STEP_BEGIN, "n1", put_pending=not put_done.is_set())
            park("kill")

    with c.saver() as stock:
        def on_put_entry() -> None:
            """Hold the first put until the first node has started (async only): a barrier that
            forces the interleaving the report describes, if the runtime allows it at all."""
            if hold["first"]:
                hold["first"] = False
                # Wait for the node; if the runtime waits for this put before starting the node,
                # the wait ends at the deadline and the put completes first (recorded).
                if node_started.wait(timeout=20):
                    threading.Event().wait()  # the node overtook this write: stay undurable until the kill
                c.log(Kind.PERSIST, value="first put not overtaken by the node")

        inner_put = stock.put

        def put(config, checkpoint, metadata, new_versions):  # noqa: ANN001
            on_put_entry()
            result = inner_put(config, checkpoint, metadata, new_versions)
            put_done.set()
            return result

        stock.put = put  # type: ignore[method-assign]
        app = _linear(c, ["n1", "n2"], stock, before=before_node)
        c.log(Kind.START, durability=durability)
        app.invoke({"log": []}, cfg(f"t-{durability}"), durability=durability)
    return {"not_killed": True}


def recover_8764(backend: str, location: str, workdir: str, durability: str) -> dict[str, Any]:
    c = _child_cell({"backend": backend, "location": location, "workdir": workdir}, f"recover-{durability}")
    with c.saver() as saver:
        thread = cfg(f"t-{durability}")
        rows = list(saver.list(thread))
        app = _linear(c, ["n1", "n2"], saver)
        state = app.get_state(thread)
        resumable = bool(rows) and bool(state.next)
        out = app.invoke(None, thread) if resumable else None
        final = app.get_state(thread).values.get("log")
    return {"checkpoints": len(rows), "next": list(state.next), "resumable": resumable,
            "final_log": final, "completed": bool(out) and final == ["n1", "n2"]}


@cell("8764")
def crash_before_first_checkpoint(c: Cell) -> Observed:

    modes: dict[str, Any] = {}
    for durability in ("sync", "async", "exit"):
        args = {"backend": c.backend, "location": c.location, "workdir": str(c.workdir), "durability": durability}
        killed_child("probes.studies.atlas.cells:victim_8764", args, f"8764 {durability}: the first node")
        c.log(Kind.CRASH, detail_how="SIGKILL at the first node's start", durability=durability)
        rec = recover_8764(**args)  # in this driver: a process other than the killed one
        starts = [e for e in c.history.read().of(Kind.STEP_BEGIN) if e.incarnation == f"run-{durability}"]
        modes[durability] = {**rec, "put_pending_at_node_start": bool(starts and starts[-1].detail.get("put_pending"))}
    behaviour = "; ".join(f"{d}: {m['checkpoints']} checkpoint(s) after the kill, resumable={m['resumable']}"
                          + (", the node started before the input checkpoint was durable"
                             if m["put_pending_at_node_start"] else "") for d, m in modes.items())
    lost = [d for d in ("sync", "async") if not modes[d]["resumable"]]
    return Observed(behaviour, {"completed": not lost,
                                "detail": f"accepted run lost (nothing to resume) under: {lost or 'none'}; "
                                          f"under exit: resumable={modes['exit']['resumable']}"}, modes)


@cell("8458")
def subgraph_time_travel(c: Cell) -> Observed:
    from langgraph.graph import END, START

    def build(saver: Any, own_history: bool) -> Any:
        sub = _state_graph({"log": Annotated_list()})
        for name in ("sa", "sb"):
            def run(state: dict, name: str = name) -> dict:
                c.log(Kind.STEP_BEGIN, name)
                c.fire(name, name)
                return {"log": [name]}
            sub.add_node(name, run)
        sub.add_edge(START, "sa")
        sub.add_edge("sa", "sb")
        sub.add_edge("sb", END)
        parent = _state_graph({"log": Annotated_list()})
        parent.add_node("sub", sub.compile(checkpointer=True) if own_history else sub.compile())
        parent.add_edge(START, "sub")
        parent.add_edge("sub", END)
        return parent.compile(checkpointer=saver)

    variants: dict[str, Any] = {}
    with c.saver() as saver:
        # default subgraph (namespace 'sub:<task id>') and one with its own history (namespace 'sub')
        for variant, own in (("inherited checkpointer", False), ("checkpointer=True", True)):
            thread = f"t-{int(own)}"
            app = build(saver, own)
            app.invoke({"log": []}, cfg(thread))
            spaces = sorted({t.config["configurable"].get("checkpoint_ns", "") for t in saver.list(cfg(thread))}
                            | {t.config["configurable"].get("checkpoint_ns", "") for t in saver.list(None)
                               if t.config["configurable"].get("thread_id") == thread})
            ns = next((n for n in spaces if n.startswith("sub")), None)
            history = list(app.get_state_history(cfg(thread, ns=ns))) if ns else []
            between = next((s for s in history if tuple(s.next) == ("sb",)), None)
            if between is None:
                variants[variant] = {"reached": False, "namespaces": len(spaces), "history": len(history)}
                continue
            before = c.ledger.counts()
            c.log(Kind.FORK, target="subgraph checkpoint between sa and sb", variant=variant)
            try:
                app.invoke(None, between.config)
                error = None
            except Exception as exc:
                error = err(exc)
            after = {k: v - before.get(k, 0) for k, v in c.ledger.counts().items()}
            variants[variant] = {"reached": True, "sa": after.get("sa", 0), "sb": after.get("sb", 0), "error": error}
    reached = {k: v for k, v in variants.items() if v["reached"]}
    if not reached:
        raise NotReproduced(f"no subgraph checkpoint between sa and sb was found through get_state_history in "
                            f"either variant: {variants}")
    behaviour = "; ".join(f"{k}: replay from the subgraph checkpoint between sa and sb ran sa {v['sa']}x, "
                          f"sb {v['sb']}x" + (f" (raised {v['error']})" if v["error"] else "")
                          if v["reached"] else f"{k}: no such checkpoint found" for k, v in variants.items())
    return Observed(behaviour, {"runs_after_recovery": {f"sa ({k})": v["sa"] for k, v in reached.items()},
                                "durable_prefix": [f"sa ({k})" for k in reached]}, variants)


@cell("8443")
def delta_channel_fork(c: Cell) -> Observed:
    try:
        from langgraph.channels.delta import DeltaChannel
    except ImportError:
        raise NotApplicable("langgraph.channels.delta.DeltaChannel does not exist in this release") from None
    from typing import Annotated

    from langgraph.graph import END, START

    def concat(state: list, batches: Any) -> list:
        out = list(state or [])
        for w in batches:
            out.extend(w if isinstance(w, list) else [w])
        return out

    g = _state_graph({"log": Annotated[list, DeltaChannel(concat)], "branch": str})

    def step(name: str) -> Callable[[dict], dict]:
        def run(state: dict) -> dict:
            c.log(Kind.STEP_BEGIN, name)
            return {"log": [f"{name}:{state.get('branch', '')}"]}
        return run

    for name in ("a", "b", "c"):
        g.add_node(name, step(name))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    with c.saver() as saver:
        app = g.compile(checkpointer=saver)
        app.invoke({"log": [], "branch": "first"}, cfg("t"))
        history = list(app.get_state_history(cfg("t")))
        after_a = [s for s in history if s.next == ("b",)]
        if not after_a:
            raise NotReproduced("no checkpoint with next == ('b',) in the thread's history")
        fork_cfg = app.update_state(after_a[0].config, {"branch": "fork"})
        c.log(Kind.FORK, target="after a", value="fork")
        app.invoke(None, fork_cfg)
        fork_state = app.get_state(cfg("t")).values.get("log")
    expected = ["a:first", "b:fork", "c:fork"]
    leaked = [x for x in fork_state or [] if x.endswith(":first") and not x.startswith("a:")]
    behaviour = (f"fork after a (branch 'first' ran a, b, c); the fork's log {fork_state}; "
                 f"abandoned-branch writes in the fork: {leaked or 'none'}")
    return Observed(behaviour, {"observed": fork_state, "expected": expected, "first_outcome": None},
                    {"fork_log": fork_state, "leaked": leaked})


@cell("8834")
def router_exception(c: Cell) -> Observed:
    from langgraph.graph import END, START

    from probes.core.nemesis import FailOnce, InjectedCrash

    fail = FailOnce(c.workdir / "failonce")
    g = _state_graph({"log": Annotated_list()})

    def start(state: dict) -> dict:
        c.log(Kind.STEP_BEGIN, "start")
        c.fire("start", "start")
        return {"log": ["start"]}

    def routed(state: dict) -> dict:
        c.log(Kind.STEP_BEGIN, "routed")
        c.fire("routed", "routed")
        return {"log": ["routed"]}

    def route(state: dict) -> str:
        fail.maybe_fail("router")
        return "routed"

    g.add_node("start", start)
    g.add_node("routed", routed)
    g.add_edge(START, "start")
    g.add_conditional_edges("start", route, ["routed", END])
    g.add_edge("routed", END)
    with c.saver() as saver:
        app = g.compile(checkpointer=saver)
        try:
            app.invoke({"log": []}, cfg("t"))
            raise NotReproduced("the router's injected exception did not end the run")
        except InjectedCrash as exc:
            c.log(Kind.CRASH, value=err(exc))
        next_after_crash = list(app.get_state(cfg("t")).next)
        c.log(Kind.RECOVER, value="invoke(None)")
        app.invoke(None, cfg("t"))
        final = app.get_state(cfg("t")).values.get("log")
    counts = c.ledger.counts()
    behaviour = (f"router raised once after 'start'; state.next after the crash {next_after_crash}; recovery with "
                 f"invoke(None) -> log {final}; 'routed' ran {counts.get('routed', 0)}x, 'start' "
                 f"{counts.get('start', 0)}x")
    return Observed(behaviour, {"effect_counts": counts, "expected": ["start", "routed"]},
                    {"next_after_crash": next_after_crash, "final_log": final, "effects": counts})


def _parallel_asks(c: Cell, saver: Any, as_subgraph: bool) -> Any:
    """Two branches p1 and p2 that each interrupt; optionally wrapped as one subgraph task."""
    from langgraph.graph import END, START
    from langgraph.types import interrupt

    g = _state_graph({"got": Annotated_list()})
    for name in ("p1", "p2"):
        def ask(state: dict, name: str = name) -> dict:
            answer = interrupt(f"q-{name}")
            c.consume(name, answer)
            return {"got": [f"{name}={answer}"]}
        g.add_node(name, ask)
        g.add_edge(START, name)
        g.add_edge(name, END)
    if not as_subgraph:
        return g.compile(checkpointer=saver)
    parent = _state_graph({"got": Annotated_list()})
    parent.add_node("sub", g.compile())
    parent.add_edge(START, "sub")
    parent.add_edge("sub", END)
    return parent.compile(checkpointer=saver)


@cell("8579")
def single_value_two_pending(c: Cell) -> Observed:
    from langgraph.types import Command

    with c.saver() as saver:
        app = _parallel_asks(c, saver, as_subgraph=True)
        app.invoke({"got": []}, cfg("t"))
        waiting = pending(app, cfg("t"))
        if len(waiting) != 2:
            raise NotReproduced(f"a subgraph task with two interrupting branches left {len(waiting)} pending "
                                f"interrupts, not 2")
        c.log(Kind.ANSWER, value="v")
        try:
            app.invoke(Command(resume="v"), cfg("t"))
            error = None
        except Exception as exc:
            error = err(exc)
        after = sorted(str(getattr(i, "value", None)) for i in pending(app, cfg("t")))
        got = app.get_state(cfg("t")).values.get("got")
    consumed = [(e.step, e.value) for e in c.history.read().of(Kind.CONSUME)]
    behaviour = ("two interrupts pending in one subgraph task, Command(resume='v') without a map: "
                 + (f"raised {error}" if error else "accepted") + f"; consumed {consumed}; still pending {after}; "
                 f"state got={got}")
    return Observed(behaviour, {"refused_at_write": error is not None, "became_durable": bool(consumed),
                                "error": error}, {"consumed": consumed, "pending_after": after, "got": got})


@cell("6956")
def next_after_second_interrupt(c: Cell) -> Observed:
    from langgraph.graph import END, START
    from langgraph.types import Command, interrupt

    g = _state_graph({"x": str, "y": str})

    def twice(state: dict) -> dict:
        x = interrupt("q1")
        c.consume("twice", x)
        y = interrupt("q2")
        c.consume("twice", y)
        return {"x": x, "y": y}

    g.add_node("twice", twice)
    g.add_edge(START, "twice")
    g.add_edge("twice", END)
    with c.saver() as saver:
        app = g.compile(checkpointer=saver)
        app.invoke({"x": "", "y": ""}, cfg("t"))
        first_next = list(app.get_state(cfg("t")).next)
        app.invoke(Command(resume="a1"), cfg("t"))
        state = app.get_state(cfg("t"))
        waiting = [getattr(i, "value", None) for i in pending(app, cfg("t"))]
    behaviour = (f"node interrupts twice: get_state().next after the first interrupt {first_next}, after answering "
                 f"it (second interrupt pending: {waiting}) {list(state.next)}")
    return Observed(behaviour, {"decisions": {"expected": ["twice"], "after first interrupt": first_next,
                                              "after second interrupt": list(state.next)}},
                    {"next_first": first_next, "next_second": list(state.next), "pending": waiting})


@cell("5952")
def resolved_parallel_interrupts_refire(c: Cell) -> Observed:
    from langgraph.types import Command

    with c.saver() as saver:
        app = _parallel_asks(c, saver, as_subgraph=False)
        out = app.invoke({"got": []}, cfg("t"))
        answered: set[str] = set()
        refired: dict[str, int] = {}   # returned to the caller again after being answered
        listed: dict[str, int] = {}    # still listed by get_state after being answered
        calls = []
        for _ in range(3):  # answer one, answer the other, then resume once more
            waiting = pending(app, cfg("t"))
            values = sorted(str(getattr(i, "value", "")) for i in waiting)
            for v in values:
                if v in answered:
                    listed[v] = listed.get(v, 0) + 1
            for v in surfaced(out):
                if v in answered:
                    refired[v] = refired.get(v, 0) + 1
            calls.append({"pending": values, "returned": sorted(map(str, surfaced(out)))})
            fresh = [i for i in waiting if i.value not in answered]
            if fresh:
                target = sorted(fresh, key=lambda i: str(i.value))[0]
                c.log(Kind.ANSWER, value=f"ans-{target.value}")
                answered.add(target.value)
                out = app.invoke(Command(resume={target.id: f"ans-{target.value}"}), cfg("t"))
            else:
                c.log(Kind.RESUME, value=None)
                out = app.invoke(None, cfg("t"))
        got = sorted(app.get_state(cfg("t")).values.get("got") or [])
    behaviour = (f"two parallel interrupts answered one per resume, then one more resume: returned to the caller per "
                 f"call {[x['returned'] for x in calls]}, listed by get_state {[x['pending'] for x in calls]}; "
                 f"answered interrupts returned again: {sorted(refired) or 'none'}, still listed: "
                 f"{sorted(listed) or 'none'}; final got={got}")
    return Observed(behaviour, {"effect_counts": {f"{k} returned to the caller": 1 + n for k, n in sorted(refired.items())}},
                    {"calls": calls, "got": got, "refired": refired, "listed": listed})


def racer_8796(backend: str, location: str, workdir: str, index: int, sock: str) -> dict[str, Any]:
    """Child: resume the parked thread once the barrier releases every racer together."""
    from probes.core.barrier import wait_at_barrier
    from langgraph.types import Command

    c = _child_cell({"backend": backend, "location": location, "workdir": workdir}, f"racer-{index}")
    with c.saver() as saver:
        app = _gate_graph(c, saver)
        wait_at_barrier(sock)
        try:
            out = app.invoke(Command(resume=f"r{index}"), cfg("t"))
            result = {"status": "ok", "out": out.get("out")}
        except Exception as exc:
            result = {"status": "error", "error": err(exc)}
    oracle.current().cross_check()
    return result


@cell("8796")
def concurrent_writers(c: Cell, k: int = 3) -> Observed:
    from probes.core.barrier import run_racers
    from probes.core.errors import HarnessError
    from probes.core.nemesis import run_child

    with c.saver() as saver:
        app = _gate_graph(c, saver)
        app.invoke({"out": ""}, cfg("t"))
        parked = app.get_state(cfg("t")).config["configurable"]["checkpoint_id"]
    args = {**c.args()}

    def launch(i: int, sock: str) -> Any:
        return run_child("probes.studies.atlas.cells:racer_8796", {**args, "index": i, "sock": sock}, timeout=180)

    outcomes = run_racers(k, launch)
    bad = [o for o in outcomes if o.status != "ok"]
    if bad:
        raise HarnessError(f"8796: racer process failed: {bad[0].status}: {bad[0].stderr_tail[-400:]}")
    results = [o.result for o in outcomes]
    with c.saver() as saver:
        children = [t for t in saver.list(cfg("t")) if t.parent_config
                    and t.parent_config["configurable"].get("checkpoint_id") == parked]
    effects = sum(v for key, v in c.ledger.counts().items() if key.startswith("decide:"))
    statuses = sorted(r["status"] + (f" ({r['error'].split(':')[0]})" if r["status"] == "error" else "")
                      for r in results)
    accepted = sum(r["status"] == "ok" for r in results)
    behaviour = (f"{k} processes resumed one parked thread at once: "
                 f"{'more than one' if accepted > 1 else 'at most one'} was accepted, the parked checkpoint "
                 f"{'has more than one child (the chain forked)' if len(children) > 1 else 'has one child'}, the "
                 f"approval effect fired {'more than once' if effects > 1 else 'at most once'} (exact counts, which "
                 f"depend on scheduling, in the observations)")
    # Which racer wins, and how many get in, is scheduling: the decision uses only the facts
    # that do not move between runs -- was every writer but one refused, did the chain fork.
    errors = sorted({r["error"].split(":")[0] for r in results if r["status"] == "error"})
    return Observed(behaviour, {"refused_at_write": sum(r["status"] == "ok" for r in results) <= 1,
                                "became_durable": len(children) > 1 or effects > 1,
                                "error": ", ".join(errors) or None},
                    {"racers": statuses, "children": len(children), "effects": effects})


@cell("8810")
def shallow_async_cancel(c: Cell) -> Observed:
    if c.backend != "postgres":
        raise NotApplicable("the shallow saver is PostgreSQL-only")
    try:
        from langgraph.checkpoint.postgres.shallow import AsyncShallowPostgresSaver
    except ImportError:
        raise NotApplicable("langgraph.checkpoint.postgres.shallow.AsyncShallowPostgresSaver is not installed") \
            from None
    import asyncio
    import warnings

    from langgraph.graph import END, START

    async def main() -> dict[str, Any]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cm = AsyncShallowPostgresSaver.from_conn_string(c.location)
        async with cm as saver:
            await saver.setup()
            entered = asyncio.Event()
            release = asyncio.Event()
            ended = asyncio.Event()
            hold = {"armed": False, "fate": "not held"}
            written: list[str] = []
            inner_aput = saver.aput

            async def aput(config, checkpoint, metadata, new_versions):  # noqa: ANN001
                if hold["armed"] and (metadata or {}).get("step") == 1:
                    hold["armed"] = False
                    entered.set()
                    try:
                        await release.wait()
                    except asyncio.CancelledError:
                        hold["fate"] = "cancelled with the run"
                        ended.set()
                        raise
                    result = await inner_aput(config, checkpoint, metadata, new_versions)
                    hold["fate"] = "written after release"
                    ended.set()
                    return result
                result = await inner_aput(config, checkpoint, metadata, new_versions)
                written.append(checkpoint["id"])
                return result

            saver.aput = aput  # type: ignore[method-assign]
            g = _state_graph({"log": Annotated_list()})
            for name in ("s1", "s2", "s3"):
                async def run(state: dict, name: str = name) -> dict:
                    return {"log": [name]}
                g.add_node(name, run)
            g.add_edge(START, "s1")
            g.add_edge("s1", "s2")
            g.add_edge("s2", "s3")
            g.add_edge("s3", END)
            app = g.compile(checkpointer=saver)
            hold["armed"] = True
            task = asyncio.ensure_future(app.ainvoke({"log": []}, cfg("t"), durability="async"))
            await asyncio.wait_for(entered.wait(), 60)
            task.cancel()
            try:
                await task
                run1 = "finished"
            except asyncio.CancelledError:
                run1 = "cancelled"
            except Exception as exc:
                run1 = err(exc)
            c.log(Kind.CRASH, value="asyncio cancellation while a checkpoint write was held")
            await app.ainvoke({"log": []}, cfg("t"), durability="async")  # a newer run on the thread
            newest = written[-1]
            pending_write = not ended.is_set()
            release.set()
            if pending_write:
                await asyncio.wait_for(ended.wait(), 60)
            stored = await saver.aget_tuple(cfg("t"))
            return {"run1": run1, "held_write": hold["fate"], "write_outlived_cancel": pending_write,
                    "stored_is_newest": stored is not None and stored.checkpoint["id"] == newest}

    result = asyncio.run(main())
    stored = "the newest checkpoint" if result["stored_is_newest"] else "an older checkpoint (overwritten)"
    behaviour = (f"run cancelled while its step-1 checkpoint write was held ({result['run1']}); the held write was "
                 f"{result['held_write']}; after a newer run and releasing it, the shallow saver stores {stored}")
    return Observed(behaviour, {"decisions": {"newest written": "newest",
                                              "stored": "newest" if result["stored_is_newest"] else "older"}},
                    result)


# --- entry point in the side environment ----------------------------------------------

DISTRIBUTIONS = ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres",
                 "psycopg")
MODULE = Module(CELLS, lambda backend, location, workdir: Cell(backend, location, Path(workdir)), DISTRIBUTIONS)


def versions() -> dict[str, str | None]:
    return installed(DISTRIBUTIONS)


def run_cell(ref: str, backend: str, location: str, workdir: Path) -> dict[str, Any]:
    """Run one cell; the JSON the parent turns into a receipt."""
    from probes.studies.atlas import cellkit

    return cellkit.run_cell(MODULE, ref, backend, location, workdir)


if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
