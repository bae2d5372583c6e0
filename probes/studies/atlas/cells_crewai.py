"""The CrewAI atlas cells (``python -m probes.studies.atlas.cells_crewai``, in a release's side environment).

The vocabulary is ``probes.studies.atlas.cellkit``'s. CrewAI is imported inside the cells
(its import costs seconds; the warm server pays it once per release). No model call:
the flow cells have no agent, and the crew cells give every agent a scripted model
(:func:`_scripted_llm`, a ``BaseLLM`` answering in the ReAct text format every release
parses) that decides from the conversation it is handed, as a model would. Telemetry
is switched off before the import.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from probes.studies.atlas.cellkit import CellBase, Module, NotApplicable, NotReproduced, Observed, Registry, err
from probes.core.history import Kind

CELLS = Registry()
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")


@CELLS.cell("4501")
def cyclic_persisted_flow_by_id(c: CellBase, cycles: int = 3) -> Observed:
    """A ``@persist`` flow whose router loops ``cycles`` times, kicked off once, then again with
    ``kickoff(inputs={"id": <its id>})`` (the documented way to reload its state). Each run's start
    method resets the loop counter, so each run should loop ``cycles`` times and finish."""
    try:
        from crewai.flow.flow import Flow, listen, or_, router, start
        from crewai.flow.persistence import persist
        from crewai.flow.persistence.sqlite import SQLiteFlowPersistence
    except ImportError as exc:
        raise NotApplicable(f"no @persist flows with routers in this release ({exc})") from None
    from pydantic import BaseModel

    class LoopState(BaseModel):
        id: str = ""
        n: int = 0
        run: int = 0

    class Loop(Flow[LoopState]):  # type: ignore[misc, valid-type]
        @start()
        def begin(self) -> None:
            self.state.run += 1
            self.state.n = 0
            c.log(Kind.STEP_BEGIN, f"begin#{self.state.run}")

        @router(or_("begin", "work"))
        def route(self) -> str:
            return "again" if self.state.n < cycles else "done"

        @listen("again")
        def work(self) -> None:
            self.state.n += 1
            c.fire(f"run{self.state.run}:work{self.state.n}", "work")

        @listen("done")
        def finish(self) -> None:
            c.fire(f"run{self.state.run}:finish", "finish")
            c.log(Kind.COMPLETE, value=self.state.n)

    Persisted = persist(SQLiteFlowPersistence(str(c.workdir / "flows.sqlite")))(Loop)
    runs: dict[str, Any] = {}
    flow_id = None
    for label in ("first kickoff", "kickoff(inputs={'id': ...})"):
        flow = Persisted()
        c.log(Kind.START if flow_id is None else Kind.RESUME, value=label, mode="by id")
        try:
            flow.kickoff(inputs={"id": flow_id} if flow_id else None)
            error = None
        except Exception as exc:  # a loud failure is an observation
            error = err(exc)
        flow_id = flow_id or flow.state.id
        runs[label] = {"loops": flow.state.n, "run": flow.state.run, "error": error}
    counts = c.ledger.counts()
    second = runs["kickoff(inputs={'id': ...})"]
    finished = counts.get(f"run{second['run']}:finish", 0) == 1
    behaviour = "; ".join(f"{k}: looped {v['loops']}x of {cycles}" + (f", raised {v['error']}" if v["error"] else "")
                          for k, v in runs.items()) + f"; the reloaded run {'reached' if finished else 'never reached'} " \
                                                      f"its finish step"
    completed = finished and second["loops"] == cycles and second["error"] is None
    return Observed(behaviour, {"completed": completed,
                                "detail": f"reloaded run looped {second['loops']}x of {cycles}, finish "
                                          f"{'ran' if finished else 'did not run'}"},
                    {"runs": runs, "counts": counts})


def _checkpointing() -> Any:
    """``CheckpointConfig`` (crews that checkpoint their runtime state), or n/a naming what is missing."""
    try:
        from crewai import Crew
        from crewai.state.checkpoint_config import CheckpointConfig
    except ImportError as exc:
        raise NotApplicable(f"no crew checkpointing in this release ({exc})") from None
    if "checkpoint" not in getattr(Crew, "model_fields", {}):
        raise NotApplicable("Crew has no checkpoint field in this release")
    return CheckpointConfig


def _scripted_llm(decide: Callable[[str, str], str]) -> type:
    """A ``BaseLLM`` whose answer is ``decide(model, conversation text)``: a stand-in for a model that
    reads the conversation it is handed (nothing else), so what it answers shows what the framework
    handed it. Native tool calling is off, so every release parses its ReAct text the same way."""
    from crewai.llms.base_llm import BaseLLM

    class ScriptedLLM(BaseLLM):  # type: ignore[misc, valid-type]
        def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
            items = [messages] if isinstance(messages, str) else list(messages)
            text = "\n".join(str(m.get("content")) if isinstance(m, dict) else str(m) for m in items)
            return decide(str(self.model), text)

        def supports_function_calling(self) -> bool:
            return False

    if "llm_type" in getattr(BaseLLM, "model_fields", {}):
        # A checkpoint records an agent's model by its type and restores it from a registry that has
        # no entry for a user's own class (its "base" entry is abstract): recorded as the OpenAI
        # client here, as a real agent's would be. The cells give the restored agents this model again.
        ScriptedLLM.model_fields["llm_type"].default = "openai"
        if "stream" in ScriptedLLM.model_fields:  # that client's record needs a boolean here
            ScriptedLLM.model_fields["stream"].default = False
        ScriptedLLM.model_rebuild(force=True)
    return ScriptedLLM


def _final(text: str) -> str:
    return f"Thought: I now know the final answer\nFinal Answer: {text}"


@CELLS.cell("6113")
def live_snapshot_replayed_as_resume(c: CellBase) -> Observed:
    """One agent, two sequential tasks, a crew with checkpointing on (a checkpoint after each
    completed task, the default trigger). Nothing is restored: the second task must run fresh -- ask the
    model once and produce its own answer -- not replay the first task's completed executor steps
    as if it were resuming."""
    config_cls = _checkpointing()
    from crewai import Agent, Crew, Task

    def decide(model: str, text: str) -> str:
        task = "task2" if "SECOND" in text else "task1"
        c.fire(f"answer:{task}", task)
        return _final(f"done {task}")

    LLM = _scripted_llm(decide)
    agent = Agent(role="writer", goal="write", backstory="writes", llm=LLM(model="scripted"), max_retry_limit=0)
    tasks = [Task(description="FIRST task: write one line", expected_output="a line", agent=agent),
             Task(description="SECOND task: write another line", expected_output="a line", agent=agent)]
    # the default trigger (task_completed); the default location is relative to the working directory
    crew = Crew(agents=[agent], tasks=tasks, checkpoint=config_cls(location=str(c.workdir / "checkpoints")))
    c.log(Kind.START, mode="one agent, two sequential tasks, checkpointing on")
    try:
        crew.kickoff()
        error = None
    except Exception as exc:  # the failure the report describes is an observation
        error = err(exc)
    outputs = {f"task{i + 1}": (t.output.raw if t.output is not None else None) for i, t in enumerate(tasks)}
    counts = c.ledger.counts()
    asked = {t: counts.get(f"answer:{t}", 0) for t in ("task1", "task2")}
    if error is None:
        c.log(Kind.COMPLETE, value=outputs)
    behaviour = (f"task 1 asked the model {asked['task1']}x, task 2 {asked['task2']}x; outputs {outputs}"
                 + (f"; the crew raised {error}" if error else ""))
    return Observed(behaviour, {"effect_counts": {f"answer:{t}": n for t, n in asked.items()},
                                "expected": ["answer:task1", "answer:task2"]},
                    {"outputs": outputs, "error": error, "counts": counts})


def _note_tool(c: CellBase, lock: threading.Lock) -> type:
    """The cell's tool class, made a module attribute: CrewAI restores a tool by its module path and
    class name, as it would a user's module-level tool. Each use fires ``<agent>:note``."""
    from crewai.tools import BaseTool

    class AtlasNote(BaseTool):  # type: ignore[misc, valid-type]
        name: str = "note"
        description: str = "Write a note for the agent named `who`."

        def _run(self, who: str) -> str:
            with lock:  # async tasks run in threads; the ledger takes one writer at a time
                c.fire(f"{who}:note", who)
            return f"noted-{who}"

    AtlasNote.__qualname__ = "AtlasNote"
    globals()["AtlasNote"] = AtlasNote  # this cell run's class: a restore finds it by name
    return AtlasNote


def _in_progress_fork(c: CellBase, config_cls: Any, roles: tuple[str, ...], lock: threading.Lock,
                      tool: type) -> dict[str, Any]:
    """A crew whose agents ``roles`` each use their tool once and then wait, about to answer, at a
    barrier where the crew's runtime state is checkpointed (the framework's own
    ``RuntimeState.checkpoint``, nothing running meanwhile); their model calls then fail like a
    provider outage. Two or more roles run as asynchronous tasks followed by a summary task of C;
    one role runs as the crew's only task. The crew is forked from that checkpoint and kicked off
    with the same scripted model: which agents were marked resuming, and whose tool ran again."""
    from crewai import Agent, Crew, Task
    from crewai.events.event_bus import crewai_event_bus

    arm = "+".join(roles)
    store = c.workdir / f"checkpoints-{arm}"
    saved: dict[str, Any] = {}
    phase = {"crash": True}

    def snapshot() -> None:
        state = getattr(crewai_event_bus, "_runtime_state", None)
        if state is None or not hasattr(state, "checkpoint"):
            saved["error"] = "no runtime state to checkpoint on the event bus"
            return
        try:
            saved["path"] = str(state.checkpoint(str(store)))
        except Exception as exc:  # the release cannot write this crew's checkpoint: said, not hidden
            saved["error"] = f"RuntimeState.checkpoint raised {err(exc)}"
            return
        saved["fired"] = sorted(k for k, v in c.ledger.counts().items() if v and k.split(":")[0] in roles)
        c.log(Kind.PERSIST, value=saved["path"], fired=saved["fired"], arm=arm)

    barrier = threading.Barrier(len(roles), action=snapshot, timeout=60)

    def decide(model: str, text: str) -> str:
        if model == "C":
            return _final("summary")
        if f"noted-{model}" not in text:  # its conversation has no tool result yet
            return f'Thought: I should note it\nAction: note\nAction Input: {{"who": "{model}"}}'
        if phase["crash"]:
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                pass
            raise RuntimeError("provider outage (HTTP 500)")
        return _final(f"done {model}")

    LLM = _scripted_llm(decide)

    def agent(role: str, tools: list[Any]) -> Any:
        return Agent(role=role, goal="finish its task", backstory="an atlas agent", llm=LLM(model=role), tools=tools,
                     max_retry_limit=0)

    members = [agent(r, [tool()]) for r in roles]
    several = len(roles) > 1
    tasks = [Task(description=f"task {r}: note it", expected_output="a note", agent=m, async_execution=several)
             for r, m in zip(roles, members)]
    if several:  # a crew may not end on asynchronous tasks
        members.append(agent("C", []))
        tasks.append(Task(description="task C: summarise", expected_output="a summary", agent=members[-1],
                          context=list(tasks)))
    crew = Crew(agents=members, tasks=tasks,
                checkpoint=config_cls(location=str(store), on_events=["crew_kickoff_started"]))
    c.log(Kind.START, mode=f"{arm} in progress", arm=arm)
    try:
        crew.kickoff()
        first_error = None
    except Exception as exc:  # the outage
        first_error = err(exc)
    c.log(Kind.CRASH, value=first_error, arm=arm)
    if "path" not in saved:
        why = saved.get("error") or "the barrier was not reached"
        raise NotReproduced(f"{arm}: no checkpoint with the tasks in progress ({why}; first run: {first_error})")
    before = c.ledger.counts()
    phase["crash"] = False
    c.log(Kind.FORK, value=saved["path"], arm=arm)
    try:
        forked = Crew.fork(config_cls(location=str(store), restore_from=saved["path"]))
    except Exception as exc:  # a loud refusal is an observation
        raise NotReproduced(f"{arm}: Crew.fork from the checkpoint raised {err(exc)}") from None
    resuming = {}
    for member in forked.agents:  # the scripted model is not serialised: the restored agents get it again
        member.llm = LLM(model=member.role)
        executor = getattr(member, "agent_executor", None)
        if member.role in roles:
            resuming[member.role] = bool(executor is not None and getattr(executor, "_resuming", False))
    try:
        out = forked.kickoff()
        result, error = str(getattr(out, "raw", out)), None
        c.log(Kind.COMPLETE, value=result, arm=arm)
    except Exception as exc:  # a loud failure is an observation
        result, error = None, err(exc)
    after = c.ledger.counts()
    rerun = {r: after.get(f"{r}:note", 0) - before.get(f"{r}:note", 0) for r in roles}
    return {"first_error": first_error, "checkpoint_fired": saved["fired"], "marked_resuming": resuming,
            "tool_ran_again": rerun, "result": result, "error": error,
            "decisions": {r: "restarted from scratch" if rerun[r] else "continued its saved conversation"
                          for r in roles}}


@CELLS.cell("5528")
def fork_resume_every_in_progress_agent(c: CellBase) -> Observed:
    """Two asynchronous tasks, of agents A and B, are in progress (each has used its tool once) when
    the crew is checkpointed; a fork of that checkpoint is kicked off. Every in-progress agent must
    continue from its saved conversation: the reported behaviour is an agent restarting from scratch
    (its tool runs again) on the fork resume -- reported as every agent but the first. Which agents
    the fork marked resuming is recorded, so the text says whether it was only the first. A lone
    in-progress agent (one task) is forked the same way as the control: whether this release resumes
    an in-progress agent at all."""
    config_cls = _checkpointing()
    from crewai import Crew

    if not hasattr(Crew, "fork"):
        raise NotApplicable("Crew has no fork() in this release")
    lock = threading.Lock()
    tool = _note_tool(c, lock)
    pair = _in_progress_fork(c, config_cls, ("A", "B"), lock, tool)
    lone = _in_progress_fork(c, config_cls, ("L",), lock, tool)
    words = "; ".join(f"{r} {d}" for r, d in pair["decisions"].items())
    behaviour = (f"fork of a checkpoint with A and B in progress (after {', '.join(pair['checkpoint_fired'])}): "
                 f"marked resuming {[r for r, v in pair['marked_resuming'].items() if v] or 'none'}; {words}"
                 + (f"; the forked crew raised {pair['error']}" if pair["error"] else "")
                 + f". Control, a lone in-progress agent: {lone['decisions']['L']}")
    return Observed(behaviour, {"runs_after_recovery": {f"{r}:note": n for r, n in pair["tool_ran_again"].items()},
                                "durable_prefix": pair["checkpoint_fired"]},
                    {"pair": pair, "lone": lone, "counts": c.ledger.counts()})


DISTRIBUTIONS = ("crewai", "pydantic")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
