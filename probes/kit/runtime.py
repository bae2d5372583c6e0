"""Inside the framework's process: the two steps' bodies, crash points, the save hook.

An adapter builds its framework's two-step workflow around these bodies, so every
framework runs *the same* workflow: step ``s1`` fires effect ``e1``; step ``s2`` asks a
human (the framework's own pause), consumes the answer and fires effect ``e2``; the run
ends with outcome ``f(answer)``. The bodies append what happens to the probe's history
(``probes.core.history``) and fire effects into both oracles, so a checker judges the
framework from the same record whatever the framework is.

Crash points are named places inside the bodies (``s1.begin``, ``s1.effect``,
``s2.begin``, ``s2.consumed``, ``s2.effect``) and inside the framework's own save
(``save.enter``, ``save.write``, ``save.exit``, when the adapter names its save with
``hook_save``). At each, the nemesis may SIGKILL the process (a barrier, never a sleep)
or raise ``InjectedCrash`` once. This module imports only the standard library and
``probes.core``, so it runs in a framework's side environment too.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Mapping

from probes.core.history import HistoryLog, Kind
from probes.core.nemesis import FailOnce, park, pause
from probes.core.oracle import Oracle

STEPS = ("s1", "s2")
EFFECTS = {"s1": "e1", "s2": "e2", "s2b": "e2b"}  # s2b: the part of s2 after its second pause (pause-twice)
STEP_POINTS = ("s1.begin", "s1.effect", "s2.begin", "s2.consumed", "s2.effect")
SAVE_POINTS = ("save.enter", "save.write", "save.exit")

# The code changes the change protocol deploys between a pause and its answer, each as the steps
# of the changed workflow in order: (node name, role). Role "first" runs ``step1``, "pause" is the
# pausing step (``before_pause``, the framework's pause, ``step2``), "extra" a step the original
# code did not have (``extra_step``: an effect of its own). "v1" is the original workflow.
SHAPES: dict[str, tuple[tuple[str, str], ...]] = {
    "v1": (("s1", "first"), ("s2", "pause")),
    "step-appended": (("s1", "first"), ("s2", "pause"), ("s3", "extra")),    # a new step after the pause
    "step-inserted": (("s1", "first"), ("s1b", "extra"), ("s2", "pause")),   # a new step in the part already run
    "done-step-removed": (("s2", "pause"),),                                 # the step that already ran is gone
    "paused-step-renamed": (("s1", "first"), ("s2r", "pause")),              # the paused step has a new name
    "steps-swapped": (("s2", "pause"), ("s1", "first")),                     # the step that ran now comes after
    # Not a change but a workflow of its own, run from start to end (the pause-twice protocol): the
    # pausing step asks twice, one answer at a time (``before_pause``, pause, ``first_answer``,
    # pause, ``second_answer``), an effect after each answer.
    "pause-twice": (("s1", "first"), ("s2", "pause-twice")),
    # Another workflow of its own (the nested protocol): the pausing step runs inside a nested workflow
    # of the framework's (a subgraph, a child workflow, a sub-agent), the same bodies as "pause".
    "nested": (("s1", "first"), ("s2", "nested-pause")),
    # A third (the parallel protocol): after ``s1`` two branches run in parallel, each pausing for an answer
    # of its own (role "branch-pause": ``before_branch``, the framework's pause, ``branch``: its effect
    # ``e_<branch>``), then a fan-in step waits for both and fires its own effect (role "join": ``join``).
    # Consecutive "branch-pause" steps are the parallel branches; the "join" step follows them all.
    "parallel": (("s1", "first"), ("b1", "branch-pause"), ("b2", "branch-pause"), ("join", "join")),
}
WORKFLOWS = ("pause-twice", "nested", "parallel")  # shapes a run has from its start, not code a change deploys
# Two more workflows of their own (the handler and callback protocols, issue 27 item 1). "handler": the
# answered step fails after its effect ("pause-fails": ``before_pause``, the pause, ``step2_fails``) and the
# framework's own error-handling construct (an error edge, a fallback route, a try/except around a step in a
# durable workflow) runs the handler step ("handler": ``handler``, effect ``e_handler``) in its place.
# "callback": the framework asks for the approval through a callback or hook of its own, which fires ``e_cb``
# before the pause ("callback-pause": ``approval_callback``, the pause, ``step2``).
SHAPES.update({"handler": (("s1", "first"), ("s2", "pause-fails"), ("h", "handler")),
               "callback": (("s1", "first"), ("s2", "callback-pause"))})
WORKFLOWS += ("handler", "callback")
EFFECTS.update({"h": "e_handler", "cb": "e_cb"})
HANDLER_POINTS = ("h.begin", "h.effect")    # crash points of the handler step
CALLBACK_POINTS = ("cb.begin", "cb.effect")  # crash points of the approval callback
CODE_CHANGES = tuple(kind for kind in SHAPES if kind != "v1" and kind not in WORKFLOWS)
CODE_ENV = "RC_KIT_CODE"  # the code version a process runs (set by the kit's child from the protocol's choice)


JOIN_POINTS = ("join.begin", "join.effect")  # the fan-in step's crash points (the parallel protocol's crash cell)


def branches(kind: str = "parallel") -> tuple[str, ...]:
    """The parallel branches of workflow ``kind`` (its "branch-pause" steps), in order."""
    return tuple(name for name, role in SHAPES[kind] if role == "branch-pause")


def parallel_effects(kind: str = "parallel") -> tuple[str, ...]:
    """The effects a completed run of the parallel workflow fired exactly once: ``e1``, each branch's, the join's."""
    return ("e1",) + tuple(f"e_{name}" for name, role in SHAPES[kind] if role in ("branch-pause", "join"))


def asks_twice() -> bool:
    """Whether this process's workflow has a step that asks twice (role "pause-twice"): only there
    can an answered pause be followed by another pause of the same step."""
    return any(role == "pause-twice" for _, role in shape())


def code() -> str:
    """The code version this process runs: "v1", or the change of ``CODE_CHANGES`` deployed."""
    return os.environ.get(CODE_ENV) or "v1"


def shape() -> tuple[tuple[str, str], ...]:
    """The steps of the workflow this process runs, in order (``SHAPES[code()]``): an adapter that
    declares code changes builds its workflow from this instead of naming ``s1`` and ``s2``."""
    return SHAPES[code()]


def required_effects(kind: str) -> tuple[str, ...]:
    """The effects a run paused under the original code and finished under ``kind`` must have
    fired exactly once: ``e1`` (it ran before the pause), ``e2`` (the answered step), and the
    effect of a step added after the pause. A step added to the part already run may run or not
    (the new code's history has it, the run's does not), but at most once."""
    roles = [role for _, role in SHAPES[kind]]
    after_pause = SHAPES[kind][roles.index("pause") + 1:]
    return ("e1", "e2") + tuple(f"e_{name}" for name, role in after_pause if role == "extra")


def outcome(answer: Any) -> str:
    """f(v): injective and not the identity, so a fork's outcome tells which answer was served."""
    return f"s2 served {answer!r}"


@dataclass
class _Probe:
    oracle: Oracle
    log: HistoryLog
    incarnation: str
    fail_at: str | None
    fail: FailOnce


_probe: _Probe | None = None
_effect_guard: Callable[[], ContextManager[Any]] = contextlib.nullcontext


def guard_effects(guard: Callable[[], ContextManager[Any]]) -> None:
    """Run every effect of this process inside ``guard()``, for a framework that can cut a step in
    two between any two bytecodes: temporalio cancels a threaded activity by raising inside its
    thread, and its own remedy (``activity.shield_thread_cancel_exception``) defers that to the end
    of a block. Inside the guard an effect reaches both oracles and its history event, or none;
    anywhere else the framework's interruption lands where the framework puts it."""
    global _effect_guard
    _effect_guard = guard


def install(ledger: str, history: str, incarnation: str, markers: str, fail_at: str | None = None) -> None:
    """Called once per process by the kit's child entry, before the adapter runs."""
    global _probe
    _probe = _Probe(Oracle(ledger, incarnation), HistoryLog(history), incarnation, fail_at, FailOnce(markers))


def _p() -> _Probe:
    if _probe is None:
        raise RuntimeError("probes.kit.runtime.install was not called in this process")
    return _probe


def record(kind: Kind, **fields: Any) -> None:
    p = _p()
    p.log.append(kind, p.incarnation, **fields)


def point(name: str) -> None:
    """A crash point: SIGKILL here when targeted (barrier), raise once by exception, or stop here
    (SIGSTOP) until the parent lets the process go on (the stall protocol)."""
    park(name)
    pause(name)
    p = _p()
    if p.fail_at == name:
        p.fail.maybe_fail(name)


def _effect(step: str) -> None:
    """Fire ``step``'s effect into both oracles: ``e1``/``e2``, or ``e_<step>`` for a step the changed
    code added."""
    effect = EFFECTS.get(step, f"e_{step}")
    with _effect_guard():
        _p().oracle.fire(effect)
        record(Kind.EFFECT, step=step, effect=effect)


def step(name: str) -> str:
    """A step that asks nothing: it begins, crash point ``<name>.begin``, fires its effect, crash point
    ``<name>.effect``, ends. ``step1`` is this step for ``s1``; a workflow variant whose second step runs
    straight after the first (CrewAI's counter flow, ``probes.frameworks.crewai.adapter``) calls it for ``s2``,
    so its crash points are the kit's ``s2.begin`` and ``s2.effect``."""
    record(Kind.STEP_BEGIN, step=name)
    point(f"{name}.begin")
    _effect(name)
    point(f"{name}.effect")
    record(Kind.STEP_END, step=name)
    return f"{name} done"


def step1() -> str:
    """The first step: one non-idempotent effect. Call it from the framework's first node."""
    return step("s1")


def before_pause() -> None:
    """Call where the second step starts, just before it asks for the human answer.

    A framework that re-runs the pausing code on resume (LangGraph re-runs the node) runs this
    again: another ``s2`` STEP_BEGIN, which no property counts against it (no effect fires, and
    ``s2`` joins the durable prefix only once it has ended)."""
    record(Kind.STEP_BEGIN, step="s2")
    point("s2.begin")


def step2(answer: Any) -> str:
    """The rest of the second step, after the answer arrived: consume it, fire ``e2``."""
    record(Kind.CONSUME, step="s2", value=answer)
    point("s2.consumed")
    _effect("s2")
    point("s2.effect")
    record(Kind.STEP_END, step="s2")
    return outcome(answer)


def first_answer(answer: Any) -> None:
    """In a step that pauses twice (role "pause-twice"): the first answer arrived; consume it and
    fire ``e2``. The framework then asks again."""
    record(Kind.CONSUME, step="s2", value=answer)
    point("s2.consumed")
    _effect("s2")
    point("s2.effect")


def second_answer(answer: Any) -> str:
    """The second answer of a step that pauses twice: consume it, fire ``e2b``, end the step."""
    record(Kind.CONSUME, step="s2", value=answer)
    _effect("s2b")
    record(Kind.STEP_END, step="s2")
    return outcome(answer)


class StepFailed(Exception):
    """The failure of the handler workflow's answered step (``step2_fails``): an exception of the
    application's, raised after the step's effect fired, for the framework's error handler to catch. It
    carries the answer (``args[1]``), so a handler that is handed only the error serves it."""

    @property
    def answer(self) -> Any:
        return self.args[1] if len(self.args) > 1 else None


def step2_fails(answer: Any) -> Any:
    """The answered step of the handler workflow: consume the answer, fire ``e2``, then fail. The effect
    fired before the failure, so a framework that runs the failed step again on recovery (instead of the
    handler its record says was chosen) fires ``e2`` twice: what the handler protocol counts."""
    record(Kind.CONSUME, step="s2", value=answer)
    point("s2.consumed")
    _effect("s2")
    point("s2.effect")
    raise StepFailed(f"s2 failed after its effect (answer {answer!r})", answer)


def handled(answer: Any) -> str:
    """The handler workflow's result for ``answer`` (what the handler step returns): not ``outcome``, so
    a completion that skipped the handler is told apart from one that ran it."""
    return f"the handler served {answer!r}"


def handler(answer: Any, error: Any = None, handed: str | None = None) -> str:
    """The error handler's step (role "handler"), run by the framework's own error-handling construct
    because ``step2_fails`` raised: begins (``h.begin``), fires ``e_handler`` (``h.effect``), ends. ``error``:
    what the framework handed the handler as the failure, its type kept in the history (a framework that
    hands a recovered handler something else than the exception shows it there); ``handed``: that type in
    words, where the handler runs apart from the error (an activity given a description of it)."""
    handed = handed or (type(error).__name__ if error is not None else None)
    record(Kind.STEP_BEGIN, step="h", **({"detail": {"handed": handed}} if handed else {}))
    point("h.begin")
    _effect("h")
    point("h.effect")
    record(Kind.STEP_END, step="h")
    return handled(answer)


def approval_callback() -> bool:
    """The body of the framework's approval callback or hook (role "callback-pause"): it fires ``e_cb``
    (an audit write, a notification) before the framework pauses for the answer, and returns True (the
    approval is needed). A framework that calls the callback again on resume fires ``e_cb`` again."""
    record(Kind.STEP_BEGIN, step="cb")
    point("cb.begin")
    _effect("cb")
    point("cb.effect")
    record(Kind.STEP_END, step="cb")
    return True
def before_branch(name: str) -> None:
    """Call where parallel branch ``name`` starts, just before it asks for its own answer (crash point
    ``<name>.begin``). A framework that re-runs a branch whose pause is still open when another branch's
    answer arrives runs this again: another STEP_BEGIN, which no property counts (no effect fires)."""
    record(Kind.STEP_BEGIN, step=name)
    point(f"{name}.begin")


def branch(name: str, answer: Any) -> Any:
    """The rest of parallel branch ``name`` once its answer arrived: consume it, fire ``e_<name>`` (crash
    points ``<name>.consumed``, ``<name>.effect``); returns the answer, which the join combines."""
    record(Kind.CONSUME, step=name, value=answer)
    point(f"{name}.consumed")
    _effect(name)
    point(f"{name}.effect")
    record(Kind.STEP_END, step=name)
    return answer


def joined(answers: Mapping[str, Any]) -> str:
    """The parallel workflow's outcome: each branch's answer by branch name (injective, so an answer
    delivered to the wrong branch or served twice shows in the outcome)."""
    return "joined " + ", ".join(f"{name}={answers[name]!r}" for name in sorted(answers))


def join(answers: Mapping[str, Any], name: str = "join") -> str:
    """The fan-in step after the parallel branches: begins (crash point ``join.begin``), fires ``e_join``
    (crash point ``join.effect``), ends; returns ``joined(answers)``, the run's outcome. ``answers``: each
    branch's answer, as the framework handed the branches' results to this step."""
    record(Kind.STEP_BEGIN, step=name)
    point(f"{name}.begin")
    _effect(name)
    point(f"{name}.effect")
    record(Kind.STEP_END, step=name)
    return joined(answers)


def extra_step(name: str, passed: Any = None) -> Any:
    """A step the changed code added (``SHAPES``): its own effect ``e_<name>``; returns ``passed``
    (the workflow's outcome so far) so a step added after the pause leaves the result as it was."""
    record(Kind.STEP_BEGIN, step=name)
    _effect(name)
    record(Kind.STEP_END, step=name)
    return passed


def persisted(what: str) -> None:
    """Mark that durable state was written (an application-level save, e.g. a serialized run state)."""
    record(Kind.PERSIST, detail={"what": what})


def hook_save(owner: Any, method: str, writes: tuple[tuple[Any, str], ...] = ()) -> None:
    """Wrap the framework's own save ``owner.method`` with crash points and PERSIST events.

    ``writes`` names lower-level calls the save makes (``(os, "replace")``); while the
    save runs, the first such call parks at ``save.write``: a kill *inside* the save.
    """
    original = getattr(owner, method)
    active = {"on": False}
    for module, name in writes:
        low = getattr(module, name)

        @functools.wraps(low)
        def inner(*a: Any, __low: Callable = low, **k: Any) -> Any:
            if active["on"]:
                point("save.write")
            return __low(*a, **k)

        setattr(module, name, inner)

    def _enter() -> None:
        point("save.enter")
        active["on"] = True

    def _exit() -> None:
        active["on"] = False
        persisted(f"{getattr(owner, '__name__', type(owner).__name__)}.{method}")
        point("save.exit")

    if inspect.iscoroutinefunction(original):
        @functools.wraps(original)
        async def wrapped(*a: Any, **k: Any) -> Any:
            _enter()
            try:
                result = await original(*a, **k)
            finally:
                active["on"] = False
            _exit()
            return result
    else:
        @functools.wraps(original)
        def wrapped(*a: Any, **k: Any) -> Any:
            _enter()
            try:
                result = original(*a, **k)
            finally:
                active["on"] = False
            _exit()
            return result
    setattr(owner, method, wrapped)


def counter() -> dict[str, int]:
    """The process's final count (``Oracle.report``): called once, as the operation ends."""
    return _p().oracle.report()


def pid() -> int:
    return os.getpid()


__all__ = ["step", "step1", "before_pause", "step2", "persisted", "hook_save", "outcome", "install", "Path"]
