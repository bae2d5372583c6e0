"""Histories of known behaviours, in the harness's own event format (``probes.core.history``).

Each is what a harness would record for a three-step workflow (``a``, ``b``, ``c``; ``b``
interrupt-gated) when the framework behaves in one known way: the reference behaviour,
or one deployed violation mechanism. The trace validator must explain each by its
cause (``EXPECTED``); the tests and the chapter use them to show that it does, next to
the histories the campaigns record.
"""

from __future__ import annotations

from typing import Any

from probes.core.history import Event, History, Kind

STEPS = ("a", "b", "c")
GATE = "b"


def _e(kind: str, step: str | None = None, inc: str = "i1", value: Any = None, **detail: Any) -> Event:
    return Event(Kind(kind), inc, step, f"e_{step}" if kind == "effect" else None, value, detail)


def _step(name: str, inc: str = "i1", **end: Any) -> list[Event]:
    return [_e("step_begin", name, inc), _e("effect", name, inc), _e("step_end", name, inc, **end)]


def _to_gate(inc: str = "i1") -> list[Event]:
    return _step("a", inc) + [_e("step_begin", "b", inc), _e("pause", "b", inc)]


def _answer(value: str = "yes", inc: str = "i1") -> list[Event]:
    return [_e("answer", None, "harness", value), _e("resume", None, "harness"), _e("consume", "b", inc, value),
            _e("effect", "b", inc), _e("step_end", "b", inc)]


def _finish(inc: str = "i1") -> list[Event]:
    return _step("c", inc) + [_e("complete", None, inc, "done")]


def _crash(inc: str = "i2") -> list[Event]:
    return [_e("crash", None, "harness", how="SIGKILL"), _e("recover", None, "harness", mode="restart")]


def _branch(value: str, seen: str, mode: str | None = None) -> list[Event]:
    head = [_e("resume", None, "harness", value, mode=mode)] if mode else [_e("fork", None, "harness", value)]
    return head + [_e("step_begin", "b", "f1"), _e("consume", "b", "f1", seen), _e("effect", "b", "f1"),
                   _e("step_end", "b", "f1"), _e("complete", None, "f1", f"f({seen})")]


CLEAN = _e("start", None, "harness"), *_to_gate(), *_answer(), *_finish()

HISTORIES: dict[str, History] = {name: History.of_events(events) for name, events in {
    "clean": CLEAN,
    # a fork with another value observes its own value; a retry re-delivers the answer and is served it
    "fork_and_retry_ok": CLEAN + (*_branch("no", "no"), _e("resume", None, "harness", "yes", mode="retry"),
                                  _e("complete", None, "i1", "done")),
    # LangGraph #6663: the fork with "no" observes the first answer "yes"
    "fork_sees_first": CLEAN + tuple(_branch("no", "yes", mode="fork")),
    # CrewAI @persist: crash after the gate; the restored flow starts again at a and re-pauses at b
    "replay_from_start": (_e("start", None, "harness"), *_to_gate(), *_answer(), *_crash(), *_to_gate("i2"),
                          *_answer("yes", "i2"), *_finish("i2")),
    # memoised gate: the prefix re-runs (a fires again), b is served from its record (no pause, no effect)
    "prefix_replay": (_e("start", None, "harness"), *_to_gate(), *_answer(), *_crash(), *_step("a", "i2"),
                      _e("step_begin", "b", "i2"), _e("step_end", "b", "i2"), *_finish("i2")),
    # CopilotKit #2315 class: a resume on the completed run fires the gated effect again
    "stray_refires_gate": CLEAN + (_e("resume", None, "harness", "yes"), _e("effect", "b", "i3")),
    # a resume on the completed run is refused: inert
    "stray_inert": CLEAN + (_e("resume", None, "harness", "yes"), _e("refuse", None, "i3", "already complete")),
    # crash right after a completed; recovery continues at b
    "crash_resumes_after_frontier": (_e("start", None, "harness"), *_step("a"), *_crash(),
                                     _e("step_begin", "b", "i2"), _e("pause", "b", "i2"), *_answer("yes", "i2"),
                                     *_finish("i2")),
    # crash right after a's effect, before its step ended; recovery runs a again
    "crash_redoes_frontier": (_e("start", None, "harness"), _e("step_begin", "a"), _e("effect", "a"), *_crash(),
                              *_to_gate("i2"), *_answer("yes", "i2"), *_finish("i2")),
    # the gated step's effect fired, the process died before its record was written; recovery runs b
    # again on the answer recorded before it ran (no new pause): a non-atomic step (ResumePlaneSteps)
    "gate_redone_on_its_recorded_answer": (_e("start", None, "harness"), *_to_gate(), *_answer()[:-1], *_crash(),
                                           _e("step_begin", "b", "i2"), _e("effect", "b", "i2"),
                                           _e("step_end", "b", "i2"), *_finish("i2")),
    # LangGraph #6491: a schema-invalid state persisted silently
    "invalid_persisted": (_e("start", None, "harness"), *_step("a", valid=False)),
    # two processes answer the pause at once (LangGraph #8796's two writers): both read it pending, both
    # consume it and fire b's effect, and each runs c
    "racers_both_consume": (_e("start", None, "harness"), *_to_gate(), _e("answer", None, "harness", "yes", racers=2),
                            _e("consume", "b", "r1", "yes"), _e("consume", "b", "r2", "yes"), _e("effect", "b", "r1"),
                            _e("effect", "b", "r2"), *_step("c", "r2"), *_step("c", "r1"),
                            _e("complete", None, "r1", "done"), _e("complete", None, "r2", "done")),
    # c's effect fires while the gate was never answered: nothing admits this
    "skips_the_gate": (_e("start", None, "harness"), *_step("a"), *_step("c")),
}.items()}

# What the validator must say (the reference, else the smallest settings that admit it).
EXPECTED: dict[str, list[str]] = {
    "clean": ["reference"],
    "fork_and_retry_ok": ["reference"],
    "fork_sees_first": ["ForkIgnore"],
    "replay_from_start": ["Replay"],
    "prefix_replay": ["PrefixReplay"],
    "stray_refires_gate": ["DoubleConsume"],
    "stray_inert": ["reference"],
    "crash_resumes_after_frontier": ["reference"],
    # the frontier is task 1: restarting at 1 (Replay, PrefixReplay), re-running the frontier
    # task (NondetRecovery's lagging pointer) and losing a's record to the crash (NonAtomicStep)
    # are the same observable behaviour here
    "crash_redoes_frontier": ["Replay", "NondetRecovery", "PrefixReplay", "NonAtomicStep"],
    # (and here the crash fell between a's effect and its record, which only a split step has)
    "gate_redone_on_its_recorded_answer": ["NonAtomicStep"],
    "invalid_persisted": ["InvalidPersist"],
    "racers_both_consume": ["ConcurrentResume"],
    "skips_the_gate": [],
}
