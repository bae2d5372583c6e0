"""Exhaustive crash points: every step boundary and every persistence write of a recorded baseline.

The ``crash`` protocol kills at a hand-picked list of points and ``savekill`` at the n-th save.
This protocol lets the workflow name its own points. A clean baseline run (start, then one
answer, each in a fresh child) is traced (``probes.kit.tracing``): every crash point the
processes reach is recorded as it is reached -- the steps' boundaries (``s1.begin`` ...
``s2.effect``), the pause (``kit.paused``) and, with ``Capability.SAVE_HOOK``, every entry,
lower-level write and exit of the framework's own save, each occurrence numbered over the run
(``save.write#3``: the run's third write). Those points are the enumeration; none is typed in.
An adapter without the save hook gets the step boundaries alone.

The enumeration is listed per operation (start, then answer) in lanes: the step boundaries in
the order the steps reached them, then the save's points in the order the saves reached them,
then the pause (reached after the operation returned). Each lane's order is its own program
order; how the steps and the saves interleave is not part of the enumeration, because a
framework may write its checkpoints on another thread while the steps run (LangGraph's default
``durability="async"``): the observed order is kept in observations. Where that happens (a step
boundary reached while a save was still open, ``steps_in_save``), which points the other lane had
passed when one is crashed at is the scheduler's choice, so the verdict there is one sample (its
evidence can differ between runs with the same versions); each point's ``cut`` says where the
other lanes were, and ``interleaved`` lists the traced processes that showed it. A save merely
handed to another thread and awaited (``off_main_thread`` without interleaving) is sequential.

Each point (at most ``cap`` of them, spread evenly over the list when there are more) is then
measured in a fresh run: the process that reached it in the baseline dies there by SIGKILL
(``kill``: ``run_child``'s park protocol, the kill sent holding the interpreter lock so no
other thread runs on) or raises ``InjectedCrash`` there once (``raise``; every point but the
pause), the run is recovered by the probe's recovery mode and finished, and the history is
judged by ``probes.kit.judge`` exactly as the crash protocol's (EO, PC, LV). The faulted process
is traced too: up to its crash it must have passed, lane by lane, through the baseline's points
in the baseline's order, or the probe is a harness error (a workflow too nondeterministic to
enumerate), never a verdict. Where the other lane was at the crash is kept in observations.

A verdict's path is ``exhaustive:<how>@<point>#<n>/<mode>``. It is labelled from the adapter's
citation of the hand-picked protocol's path for the same experiment (``save-kill:<point>#<n>``
for a kill in a save recovered by the first mode, as ``savekill`` measures it;
``crash:<how>@<point>/<mode>`` otherwise), so a point both protocols measure rests on the same
sentence.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from probes.core.checker import Property, Verdict
from probes.core.errors import HarnessError
from probes.core.history import Kind
from probes.kit.adapter import Capability
from probes.kit.judge import Judge
from probes.kit.protocols import Probe, Run, _needs, _prefix
from probes.kit.runtime import SAVE_POINTS
from probes.kit.tracing import read_trace, trace_file

PROPERTIES = (Property.EO, Property.PC, Property.LV)
PHASES = ("start", "answer")  # the baseline's two operations, each one process
LANES = ("steps", "save", "pause")  # the step bodies' points, the hooked save's, the parked pause
Trace = list[tuple[str, bool, bool]]  # (point, an exception may be raised there, on the main thread), in order


def lane(name: str) -> str:
    return "save" if name in SAVE_POINTS else "pause" if name == "kit.paused" else "steps"


class TracedRun(Run):
    """A run whose every operation is traced (``probes.kit.tracing.op``)."""

    child = "probes.kit.tracing:op"

    def trace(self, incarnation: str) -> Trace:
        return read_trace(trace_file(self.markers, f"{self.name}/{incarnation}"))


# --- the enumeration --------------------------------------------------------------------------

@dataclass(frozen=True)
class Point:
    """One crash point of the baseline run."""

    index: int      # its position in the enumeration
    phase: str      # the baseline operation whose process reached it: "start" or "answer"
    name: str       # the park point (s1.effect, save.write, kit.paused, ...)
    n: int          # its occurrence in the whole run: the label's #n
    local: int      # its occurrence in its phase's process: the fault's address
    step: int       # its position in its lane of its phase's process
    raisable: bool  # inside the framework's code: an exception can be raised there

    @property
    def label(self) -> str:
        return f"{self.name}#{self.n}"

    @property
    def address(self) -> str:
        return f"{self.name}#{self.local}"

    @property
    def lane(self) -> str:
        return lane(self.name)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "label": self.label, "address": self.address, "lane": self.lane}


def lanes(trace: Trace) -> dict[str, list[str]]:
    """A process's trace split into its lanes, each in the order reached."""
    out: dict[str, list[str]] = {name: [] for name in LANES}
    for name, *_ in trace:
        out[lane(name)].append(name)
    return out


def enumerate_points(traces: dict[str, Trace]) -> list[Point]:
    """Number the baseline's points: per phase, lane by lane (module docstring)."""
    points: list[Point] = []
    total: Counter[str] = Counter()
    for phase in PHASES:
        raisable = {name: r for name, r, *_ in traces.get(phase, [])}
        local: Counter[str] = Counter()
        for names in lanes(traces.get(phase, [])).values():
            for step, name in enumerate(names):
                total[name] += 1
                local[name] += 1
                points.append(Point(len(points), phase, name, total[name], local[name], step, raisable[name]))
    return points


def select(points: list[Point], cap: int) -> list[Point]:
    """At most ``cap`` points, spread evenly from the first to the last (all of them when they fit)."""
    if cap >= len(points):
        return list(points)
    if cap == 1:
        return [points[0]]
    return [points[i] for i in sorted({round(i * (len(points) - 1) / (cap - 1)) for i in range(cap)})]


def cited_as(point: Point, how: str, mode: str, first_mode: str) -> str:
    """The hand-picked protocol's path for the same experiment, whose citation labels this point."""
    if point.lane == "save" and how == "kill" and mode == first_mode:
        return f"save-kill:{point.label}"  # savekill kills at the n-th save and recovers by the first mode
    return f"crash:{how}@{point.name if point.n == 1 else point.label}/{mode}"


def path_of(how: str, point: Point, mode: str) -> str:
    return f"exhaustive:{how}@{point.label}/{mode}"


# --- the protocol -------------------------------------------------------------------------------

def _judge(p: Probe, path: str, cite_path: str) -> Judge:
    """A judge for ``path`` citing the adapter's statements on ``cite_path``, writing into the probe's log."""
    return Judge(p.target.cls.framework, p.target.backend, p.target.cls.citations, calls=p.judge.calls,
                 cite_as=(path, cite_path))


def _sub(p: Probe, name: str) -> tuple[Probe, TracedRun]:
    """A traced run with its own history (as ``protocols._isolated``), so its events judge only itself."""
    sub = Probe(p.target, p.root / name, p.store)
    sub.observations = p.observations.setdefault("runs", {}).setdefault(name, {})
    return sub, TracedRun(p.target, sub.root, "run", p.store(f"{name}/run"), sub.history, sub.ledger,
                          sub.observations)


def record_baseline(p: Probe, answer: Any) -> tuple[dict[str, Trace], int]:
    """A clean traced run (start, answer): each phase's trace, and how many saves it recorded."""
    sub, run = _sub(p, "baseline")
    done = run.to_completion(run.start(), answer, "answer")
    if done.get("status") != "completed":
        raise HarnessError(f"the traced baseline did not complete ({done.get('status')}: {done.get('error')} "
                           f"{done.get('message')})")
    return {phase: run.trace(phase) for phase in PHASES}, len(sub.read().of(Kind.PERSIST))


def off_main_thread(traces: dict[str, Trace]) -> list[str]:
    """The lanes some of whose points the baseline reached on another thread than the process's main
    one (a fact about the framework; concurrency only with ``steps_in_save``)."""
    return sorted({lane(name) for trace in traces.values() for name, _, main in trace if not main})


def steps_in_save(trace: Trace) -> list[str]:
    """The step boundaries a process reached while one of its saves was open (entered, not exited):
    the save ran concurrently with the steps, not before or after them."""
    open_saves, out = 0, []
    for name, *_ in trace:
        if name == "save.enter":
            open_saves += 1
        elif name == "save.exit":
            open_saves = max(0, open_saves - 1)
        elif lane(name) == "steps" and open_saves:
            out.append(name)
    return out


def reached_before(trace: Trace, point: Point) -> tuple[dict[str, list[str]], bool]:
    """The faulted process's lanes before its crash at ``point`` (and whether it reached ``point``)."""
    hits = 0
    for i, (name, *_) in enumerate(trace):
        if name == point.name:
            hits += 1
            if hits == point.local:
                return lanes(trace[:i]), True
    return lanes(trace), False


def off_path(baseline: Trace, faulted: Trace, point: Point) -> str | None:
    """Why the faulted process did not reach ``point`` along the baseline's lanes (None: it did)."""
    before, reached = reached_before(faulted, point)
    expected = lanes(baseline)
    if not reached:
        return f"it never reached {point.address}"
    for name, seen in before.items():
        if seen != expected[name][:len(seen)]:
            return f"its {name} lane reached {seen} where the baseline's reached {expected[name][:len(seen)]}"
    if len(before[point.lane]) != point.step:
        return f"its {point.lane} lane reached {point.address} after {before[point.lane]}"
    return None


def _last(seen: list[str]) -> str | None:
    """The last point of a lane, addressed in its process (``save.enter#2``)."""
    return f"{seen[-1]}#{seen.count(seen[-1])}" if seen else None


def measure(p: Probe, point: Point, how: str, mode: str, answer: Any, traces: dict[str, Trace]) -> list[Verdict]:
    """Crash at ``point`` (``how``), recover by ``mode``, finish; EO, PC and LV of the history."""
    path = path_of(how, point, mode)
    cite_path = cited_as(point, how, mode, p.target.cls.recovery_modes[0])
    sub, run = _sub(p, f"p{point.index:03d}")
    sub.judge = _judge(p, path, cite_path)
    fault = {"park_at": point.address} if how == "kill" else {"fail_at": point.address}
    status = run.start(**(fault if point.phase == "start" else {}))
    if point.phase == "answer":
        status = run.answer("answer", status.get("handle"), answer, **fault)
    if not sub.read().of(Kind.CRASH):
        raise HarnessError(f"crash point {point.label} ({point.phase} {point.address}) of the baseline was not "
                           f"reached ({how}); status {status.get('status')}")
    faulted = run.trace(point.phase)
    if why := off_path(traces[point.phase], faulted, point):
        raise HarnessError(f"{how} at {point.label}: the faulted run left the baseline's path: {why}")
    before, _ = reached_before(faulted, point)
    sub.observations.update(point=point.label, cited_as=cite_path,
                            cut={name: _last(seen) for name, seen in before.items()},
                            steps_in_save=steps_in_save(faulted[:sum(len(seen) for seen in before.values())]))
    status = run.recover("recover", mode, answer)
    run.to_completion(status, answer, "recover-answer")
    h = sub.read()
    what = f"{how} at {point.label} ({point.phase}), recovered by {mode}"
    return [sub.judge.effects_once(path, h, what), _prefix(sub, run, path, h),
            sub.judge.live(path, h, what, p.target.cls.result(answer))]


def exhaustive(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Every crash point of a traced baseline (at most ``cap``), crashed by ``how``, recovered by ``mode``."""
    how, mode, cap = args["how"], args["mode"], args["cap"]
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER):
        return [p.judge.not_applicable(prop, f"exhaustive:{how}/{mode}", why) for prop in PROPERTIES]
    answer = p.target.cls.answers[0]
    traces, saves = record_baseline(p, answer)
    points = enumerate_points(traces)
    candidates = [pt for pt in points if how == "kill" or pt.raisable]
    chosen = select(candidates, cap)
    p.observations["exhaustive"] = {
        "how": how, "mode": mode, "cap": cap, "saves": saves,
        "save_hook": p.target.cls.declares(Capability.SAVE_HOOK),
        "points": [pt.to_json() for pt in points], "candidates": len(candidates),
        "measured": [pt.label for pt in chosen],
        "observed_order": {phase: [name for name, *_ in traces[phase]] for phase in PHASES},
        "off_main_thread": off_main_thread(traces),
        "steps_in_save": {phase: steps_in_save(traces[phase]) for phase in PHASES}}
    if not chosen:
        raise HarnessError(f"the traced baseline reached no point a {how} can target")
    verdicts: list[Verdict] = []
    for pt in chosen:
        verdicts += measure(p, pt, how, mode, answer, traces)
    runs = p.observations.get("runs", {})
    p.observations["exhaustive"]["interleaved"] = (
        [f"baseline {phase}" for phase in PHASES if p.observations["exhaustive"]["steps_in_save"][phase]]
        + [pt.label for pt in chosen if runs.get(f"p{pt.index:03d}", {}).get("steps_in_save")])
    return verdicts
