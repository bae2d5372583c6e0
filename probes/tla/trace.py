"""Trace validation: is a recorded probe history a behaviour of the TLA+ model, and if not, which fault explains it?

The approach of "Validating Traces of Distributed Programs Against TLA+
Specifications" (arXiv 2404.16075): a recorded history becomes a sequence of
*observations* in the model's vocabulary (``Observation``); module
``tla/TraceResumePlane.tla`` constrains ResumePlane to follow it step by step
(each observed step must be the model action it records and reproduce the observed
values: the effect oracle's counts, the value consumed, the outcome a fork saw, where
recovery resumed), with the steps no history records (the pointer write landing, a
memoised gate serving its record) in between. TLC then answers, per fault-switch
setting, whether some behaviour matches the whole trace.

``explain`` checks a batch of traces against the reference semantics and each single
fault switch (and, for traces no single switch admits, each pair): one TLC run per
(workflow shape, switch setting), all traces of that shape at once.

Input. ``observations(history)`` takes the ordered events of one probe: anything with
a ``kind`` and, as the kind needs, ``step``, ``value``, ``intent``, ``observed``,
``valid`` -- dicts or objects with those attributes (``probes.core.history`` events
fit). Kinds: ``start step_begin effect step_end pause answer resume consume fork
retry crash recover complete``; unknown kinds are an error, so a new event kind is
noticed, not ignored. The workflow (task order, gated task) is inferred from the
history or given.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field, replace
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from probes.core.errors import UsageError
from probes.kit.runtime import SHAPES
from probes.tla import configs
from probes.tla.configs import TLA_DIR, TlcConfig

# ResumePlane's fault switches and the extension's (tla/ResumePlaneSteps.tla): a task's effect and
# its record as two steps, a crash between them losing the record; other processes that read the
# interrupt as pending consuming it too and running the rest of the workflow (racers)
STEP_SWITCH = "NonAtomicStep"
RACE_SWITCH = "ConcurrentResume"
SWITCHES: tuple[str, ...] = configs.FAULTS + (configs.WIRE_FAULT, STEP_SWITCH, RACE_SWITCH)
ENTRY = "(entry)"  # the virtual task before a workflow whose first task is the gated one
# Event kinds (probes.core.history.Kind) and what the mapping does with them.
HARNESS_RESUMES = frozenset({"answer", "resume", "fork", "retry", "stray"})
SILENT = frozenset({"start", "step_end", "persist", "refuse", "complete", "step_begin"})
KINDS = frozenset({"effect", "pause", "consume", "crash", "error", "recover", "tamper"}) | HARNESS_RESUMES | SILENT


@dataclass(frozen=True)
class Observation:
    """One model step a history records (see TraceResumePlane.tla)."""

    kind: str                        # exec interrupt consume fork retry crash stray
    task: int = 0                    # exec: the task whose effect fired
    v: int = 0                       # consume/fork: the resume value's index (1..)
    out: int = 0                     # fork/retry: index of the value the outcome is f of; 0 = not recorded
    at: int = 0                      # crash: the task the recovered run continued at; 0 = not recorded
    valid: str = "any"               # exec/consume: "valid" | "invalid" | "any"
    effects: tuple[int, ...] = ()    # exec/consume/stray: effect counts per task after the step


@dataclass(frozen=True)
class Trace:
    """A probe's history in the model's vocabulary."""

    name: str
    n: int                           # tasks (a virtual gate N+1 when the workflow has none)
    ip: int                          # the gated task
    observations: tuple[Observation, ...]
    values: tuple[str, ...]          # resume values, index i+1 <-> values[i]
    steps: tuple[str, ...] = ()      # task names in order
    notes: tuple[str, ...] = ()      # what the mapping could not express
    racers: int = 0                  # other processes the history shows answering the pause at once

    def count(self, *kinds: str) -> int:
        return sum(o.kind in kinds for o in self.observations)


def _get(event: Any, name: str, default: Any = None) -> Any:
    value = event.get(name, default) if isinstance(event, Mapping) else getattr(event, name, default)
    return getattr(value, "value", value) if name == "kind" else value   # Kind enum -> its string


def _detail(event: Any, name: str) -> Any:
    detail = _get(event, "detail") or {}
    return detail.get(name) if isinstance(detail, Mapping) else None


def infer_workflow(history: Sequence[Any]) -> tuple[tuple[str, ...], str | None]:
    """Task order = first appearance of each step; the gate = the step at the first pause."""
    steps: list[str] = []
    gate = None
    for e in history:
        step = _get(e, "step")
        if step is not None and str(step) not in steps and _get(e, "kind") in ("step_begin", "effect", "step_end",
                                                                                 "pause"):
            steps.append(str(step))
        if _get(e, "kind") == "pause" and gate is None and step is not None:
            gate = str(step)
    return tuple(steps), gate


_POINT_EVENTS = {"begin": "step_begin", "effect": "effect", "consumed": "consume"}  # a step's crash point -> its event


def placed_where_raised(history: Sequence[Any]) -> list[Any]:
    """The history with each exception the framework absorbed also placed where it was raised.

    The harness notes an injected exception (``crash``/``error`` with detail ``at``, the point,
    ``#n`` its n-th occurrence in the victim's process) when the victim's operation returns; a
    framework that absorbed it went on in the same process first (retrying the step, asking
    again), so the note comes after what followed. A copy at its point -- after the step event
    the point follows (``s2.effect``: the effect of s2), or before the save it interrupted
    (``save.enter``/``save.write``: the n-th save's PERSIST) -- makes what the process did next,
    to the model, the recovery of a crashed process (the step runs again from durable state);
    the note stays where it was, since the harness then recovered the run in a new process. A
    point not found in the victim's events adds nothing.
    """
    events = list(history)
    for e in list(events):
        detail = _get(e, "detail") or {}
        if _get(e, "kind") not in ("crash", "error") or not detail.get("framework_status") or not detail.get("at"):
            continue
        point, _, nth = str(detail["at"]).partition("#")
        n = int(nth) if nth.isdigit() else 1
        victim = detail.get("victim", _get(e, "incarnation"))
        where, _, what = point.partition(".")
        kind = "persist" if where == "save" else _POINT_EVENTS.get(what)
        here = next(j for j, x in enumerate(events) if x is e)
        hits = [j for j, x in enumerate(events[:here]) if _get(x, "incarnation") == victim
                and _get(x, "kind") == kind and (kind == "persist" or str(_get(x, "step")) == where)]
        if kind is None or len(hits) < n:
            continue
        at = hits[n - 1] + (0 if kind == "persist" and what in ("enter", "write") else 1)
        events.insert(at, dict(e) if isinstance(e, Mapping) else replace(e))
    return events


def observations(history: Sequence[Any], name: str = "trace", steps: Sequence[str] | None = None,
                 gate: str | None = None) -> Trace:
    """An ordered history -> a ``Trace``.

    The mapping, event by event (the model step each one is, or why none):

    * ``effect`` of task t: the model's atomic completion of t (``exec``), or, at the
      gate with an answer delivered, ``consume``; on a fork's branch (after ``fork`` or
      a ``resume`` with mode fork/retry, until the next harness event) it is the
      branch's own effect and not the primary run's;
    * ``pause``: ``interrupt``; ``answer``/``resume``/``consume`` while parked: the
      value the gate will consume (``consume`` carries the value the gate saw);
    * ``fork`` or ``resume`` with mode fork/retry after the answer: ``fork``/``retry``;
      the branch's ``consume`` is the value it observed (its outcome);
    * a ``resume`` (no mode) on a completed run: ``stray``, with any effects it causes;
    * ``crash`` and ``error`` (an incarnation ended): ``crash``; where the recovered run
      continues is the step of the next ``step_begin``/``effect``/``pause`` (or the
      ``recover`` event's step);
    * ``step_end`` with ``valid`` (or detail ``valid``): the completion record's schema
      validity; ``start``, ``step_begin``, ``persist``, ``refuse``, ``complete``: no
      model step (a refusal leaves the state unchanged);
    * ``tamper`` (the harness edited durable state): outside the model -- noted, and
      the trace cannot be a behaviour of any setting.

    An unknown kind raises UsageError: a new event kind is noticed, not ignored.
    """
    history = placed_where_raised(history)
    inferred_steps, inferred_gate = infer_workflow(history)
    steps = tuple(str(s) for s in (steps or inferred_steps))
    gate = gate if gate is not None else inferred_gate
    if not steps:
        raise UsageError(f"{name}: the history names no step; give the workflow's steps")
    notes: list[str] = []
    entry = gate is not None and steps[:1] == (str(gate),)
    if entry:  # the model needs 2 <= IP: a virtual entry task runs before the gated first task
        steps = (ENTRY,) + steps
        notes.append(f"the gated step {gate!r} is the workflow's first task: a virtual entry task precedes it")
    index = {s: i + 1 for i, s in enumerate(steps)}
    if gate is None:  # no interrupt in this workflow: a virtual gate after the last task, never reached
        n, ip = len(steps) + 1, len(steps) + 1
    else:
        if str(gate) not in index:
            raise UsageError(f"{name}: the gate {gate!r} is not one of the steps {list(steps)}")
        n, ip = len(steps), index[str(gate)]
    values: list[str] = []

    def vidx(value: Any) -> int:
        key = repr(value)
        if key not in values:
            values.append(key)
        return values.index(key) + 1

    counts = [0] * n
    obs: list[Observation] = []
    if entry:
        counts[0] = 1
        obs.append(Observation("exec", task=1, effects=tuple(counts)))
    queued: list[int] = []             # resume values delivered that the gate has not consumed yet (racers: several)
    paused = False                     # parked at the gate's interrupt
    answered = False                   # the interrupt has been consumed
    completed = False
    awaiting_recovery = False          # crashed: the next step tells where recovery resumed
    stray_open = False                 # a stray resume whose effects are still being collected
    branch_open: int | None = None     # obs index of a fork/retry whose branch events follow
    branch_delivery: str | None = None  # a fork/retry note's value (repr) whose delivery is still to come
    current: str | None = None         # the step being run (for effects that name no step)
    racers = 0                         # other processes answering at once (a note's k, or answers queued together)

    def recovered_at(step: Any) -> None:
        nonlocal awaiting_recovery
        if awaiting_recovery:
            obs.append(Observation("crash", at=index.get(str(step), 0) if step is not None else 0))
            awaiting_recovery = False

    for position, e in enumerate(history):
        kind = _get(e, "kind")
        if kind not in KINDS:
            raise UsageError(f"{name}: event {position} has kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}")
        step = _get(e, "step")
        if branch_open is not None:
            # events of a fork's branch: its consume is the outcome it observed
            if (kind in ("answer", "resume") and branch_delivery is not None and not _detail(e, "mode")
                    and repr(_get(e, "value")) == branch_delivery):  # the fork note's own delivery
                branch_delivery = None
                continue
            if kind == "consume":
                obs[branch_open] = replace(obs[branch_open], out=vidx(_get(e, "value")))
                continue
            if kind in ("step_begin", "effect", "step_end", "pause", "persist", "complete"):
                continue
            branch_open = None
        if kind == "step_begin":
            current = str(step) if step is not None else current
            recovered_at(step)
            continue
        if kind == "effect":
            where = str(step) if step is not None else current
            recovered_at(where)
            if where not in index:
                raise UsageError(f"{name}: event {position}: effect {_get(e, 'effect')!r} of unknown step {where!r}")
            t = index[where]
            counts[t - 1] += 1
            if stray_open:
                obs[-1] = replace(obs[-1], effects=tuple(counts))
                continue
            if t == ip and queued:
                racers = max(racers, len(queued) - 1)  # answers delivered together before the gate fired
                obs.append(Observation("consume", v=queued.pop(0), effects=tuple(counts)))
                answered, paused = True, False
            else:
                obs.append(Observation("exec", task=t, effects=tuple(counts)))
            continue
        if kind == "step_end":
            valid = _get(e, "valid", _detail(e, "valid"))
            if valid is not None and obs and obs[-1].kind in ("exec", "consume"):
                obs[-1] = replace(obs[-1], valid="valid" if valid else "invalid")
            continue
        if kind == "consume":  # during a stray, the stray's own consume: its effects are what count
            if not stray_open and (paused or queued or not answered):
                queued[:] = [vidx(_get(e, "value"))]
            continue
        if kind in SILENT:
            if kind == "complete":
                recovered_at(None)
                completed = True
            continue
        stray_open = False
        if kind == "pause":
            recovered_at(step)
            obs.append(Observation("interrupt"))
            paused = True
            continue
        if kind in HARNESS_RESUMES:
            value = _get(e, "value")
            mode = _get(e, "intent") or _detail(e, "mode") or _detail(e, "intent")
            intent = "retry" if kind == "retry" or mode == "retry" else "fork" if kind == "fork" or mode == "fork" else None
            if kind == "stray" or (completed and intent is None):
                obs.append(Observation("stray", effects=tuple(counts)))
                stray_open = True
            elif intent is not None and answered and not paused:
                observed = _get(e, "observed")
                obs.append(Observation(intent, v=vidx(value) if value is not None else 0,
                                       out=vidx(observed) if observed is not None else 0))
                branch_open = len(obs) - 1
                branch_delivery = repr(value) if kind in ("fork", "retry") else None  # a note: delivered next
            elif value is not None:
                queued.append(vidx(value))
                racers = max(racers, int(_detail(e, "racers") or 1) - 1)  # one note for k answers at once
            continue
        if kind in ("crash", "error"):
            if queued:
                notes.append(f"event {position}: the incarnation ended after a resume value was delivered, "
                             f"before the gate fired")
            queued.clear()
            awaiting_recovery = True
            completed = paused = False
            continue
        if kind == "recover":
            if step is not None:
                recovered_at(step)
            continue
        if kind == "tamper":
            notes.append(f"event {position}: the harness edited durable state ({_detail(e, 'edit') or 'tamper'}); "
                         f"the model has no such step")
            obs.append(Observation("tamper"))
            continue
    if awaiting_recovery:
        obs.append(Observation("crash"))
    return Trace(name, n, ip, tuple(obs), tuple(values), steps, tuple(notes), racers)


# --- TLC ---------------------------------------------------------------------------

def _tla_obs(o: Observation, n: int, nv: int) -> str:
    effects = o.effects or (0,) * n
    return (f'[kind |-> "{o.kind}", task |-> {o.task}, v |-> {o.v}, out |-> {o.out + nv if o.out else 0}, '
            f'at |-> {o.at}, valid |-> "{o.valid}", effects |-> <<{", ".join(map(str, effects))}>>]')


PLANE_VARIABLES = ("pc", "effects", "log", "frontier", "pointer", "pending", "consumed", "writes", "resumes",
                   "crashes", "recHist", "strays", "reentered", "inflight", "racing", "racers")


def _module(name: str, traces: Sequence[Trace], nv: int, settings: Sequence[tuple[str, ...]]) -> str:
    """A module checking every trace under every setting in one run: one INSTANCE of
    TraceResumePlane per setting (the switches substituted by constants), the setting
    and the trace chosen in the initial state."""
    body = ",\n    ".join("<<" + ", ".join(_tla_obs(o, t.n, nv) for o in t.observations) + ">>" for t in traces)
    lines = [f"---- MODULE {name} ----", "EXTENDS Naturals, Sequences", "\\* generated by probes/tla/trace.py",
             "CONSTANTS N, IP, NV, MaxResumes, MaxCrashes, MaxStrays, MaxRacers",
             "VARIABLES " + ", ".join(PLANE_VARIABLES + ("tid", "l", "setting")),
             f"TheTraces == <<\n    {body}\n>>",
             f"TheRacers == <<{', '.join(str(t.racers) for t in traces)}>>"]
    for i, setting in enumerate(settings, 1):
        subst = ", ".join(f"{sw} <- {'TRUE' if sw in setting else 'FALSE'}" for sw in SWITCHES)
        lines.append(f"S{i} == INSTANCE TraceResumePlane WITH Traces <- TheTraces, RacerBounds <- TheRacers, {subst}")
    k = len(settings)
    lines.append("RunInit ==")
    lines.append(f"    /\\ setting \\in 1..{k}")
    lines += [f"    {'/' + chr(92) if i == 1 else '  '} \\/ setting = {i} /\\ S{i}!TraceInit" for i in range(1, k + 1)]
    lines.append("RunNext ==")
    lines.append("    /\\ UNCHANGED setting")
    lines += [f"    {'/' + chr(92) if i == 1 else '  '} \\/ setting = {i} /\\ S{i}!TraceNext" for i in range(1, k + 1)]
    lines.append("NotAccepted == l <= Len(TheTraces[tid])")
    lines.append("====")
    return "\n".join(lines) + "\n"


def _bounds(traces: Sequence[Trace]) -> dict[str, int]:
    return {"N": traces[0].n, "IP": traces[0].ip, "NV": max([len(t.values) for t in traces] + [1]),
            "MaxResumes": max([t.count("consume", "fork", "retry") for t in traces] + [1]),
            "MaxCrashes": max(t.count("crash") for t in traces),
            "MaxStrays": max(t.count("stray") for t in traces),
            "MaxRacers": max(t.racers for t in traces)}  # each trace's own bound: TheRacers


def setting_name(switches: Iterable[str]) -> str:
    s = sorted(switches, key=SWITCHES.index)
    return "+".join(s) if s else "reference"


DEFAULT_SETTINGS: tuple[tuple[str, ...], ...] = (((),) + tuple((s,) for s in SWITCHES)
                                                  + tuple(combinations(configs.FAULTS, 2))
                                                  + tuple((f, STEP_SWITCH) for f in configs.FAULTS)
                                                  + ((STEP_SWITCH, RACE_SWITCH),))


@dataclass
class Verdict:
    """What TLC said about one trace."""

    trace: str
    accepted: dict[str, bool] = field(default_factory=dict)   # setting -> some behaviour matches the whole trace

    @property
    def reference(self) -> bool:
        return self.accepted.get("reference", False)

    @property
    def explained_by(self) -> list[str]:
        """The reference, else the smallest settings that admit the trace (singles before pairs)."""
        if self.reference:
            return ["reference"]
        for size in (1, 2):
            hits = [s for s, ok in self.accepted.items() if ok and s != "reference" and s.count("+") == size - 1]
            if hits:
                return sorted(hits, key=lambda s: [SWITCHES.index(x) for x in s.split("+")])
        return []


def check(traces: Sequence[Trace], settings: Sequence[tuple[str, ...]] = DEFAULT_SETTINGS, tla_dir: Path = TLA_DIR,
          timeout: float = 600.0) -> tuple[dict[str, dict[str, bool]], Any]:
    """One TLC run: for each trace (one workflow shape) and each setting, is it a behaviour?"""
    from probes.tla.runner import run_tlc

    if not traces:
        return {}, None
    if len({(t.n, t.ip) for t in traces}) != 1:
        raise UsageError("check() takes traces of one workflow shape (N, IP); explain() groups them")
    for setting in settings:
        unknown = set(setting) - set(SWITCHES)
        if unknown:
            raise UsageError(f"unknown fault switch(es) {sorted(unknown)}; known: {', '.join(SWITCHES)}")
    bounds = _bounds(traces)
    module = "TraceRun"
    cfg = TlcConfig("trace-validation", module, tuple(bounds.items()), ("NotAccepted",), specification=None,
                    init="RunInit", next="RunNext", check_deadlock=False)
    workdir = Path(tempfile.mkdtemp(prefix="tlc-trace-"))
    try:
        modules = workdir / "modules"
        modules.mkdir()
        for path in Path(tla_dir).glob("*.tla"):
            shutil.copy2(path, modules / path.name)
        (modules / f"{module}.tla").write_text(_module(module, traces, bounds["NV"], settings))
        res = run_tlc(cfg, workdir=workdir / "run", tla_dir=modules, timeout=timeout, tlc_args=("-continue",))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if res.result == "error":
        raise UsageError(f"TLC could not check the traces: {res.error}")
    accepted: set[tuple[int, int]] = set()
    for violation in res.violations:
        if violation:
            first = violation[0].values
            accepted.add((int(first["setting"]), int(first["tid"])))
    return {t.name: {setting_name(s): (j, i) in accepted for j, s in enumerate(settings, 1)}
            for i, t in enumerate(traces, 1)}, res


def explain(traces: Sequence[Trace], settings: Sequence[tuple[str, ...]] = DEFAULT_SETTINGS,
            tla_dir: Path = TLA_DIR) -> dict[str, Verdict]:
    """Check every trace against the reference, each single switch and each pair of the
    six deployed faults: one TLC run per workflow shape.

    TLC sees each distinct trace once: traces with the same shape, observations, resume values and
    racers are the same question (whatever their names), and the recorded histories repeat a
    few dozen behaviours many times over (the exhaustive crash points of every framework), so
    checking each copy would make TLC's work grow with the campaigns' sample sizes."""
    names = [t.name for t in traces]
    if len(set(names)) != len(names):
        raise UsageError("trace names must be unique")
    verdicts = {t.name: Verdict(t.name) for t in traces}
    first: dict[tuple[Any, ...], Trace] = {}
    copies: dict[str, list[str]] = {}  # the name of the first trace of each question -> every name asking it
    for t in traces:
        rep = first.setdefault((t.n, t.ip, t.observations, t.values, t.racers), t)
        copies.setdefault(rep.name, []).append(t.name)
    shapes: dict[tuple[int, int], list[Trace]] = {}
    for t in first.values():
        shapes.setdefault((t.n, t.ip), []).append(t)
    for group in shapes.values():
        accepted, _ = check(group, settings, tla_dir)
        for name, by_setting in accepted.items():
            for copy in copies[name]:
                verdicts[copy].accepted.update(by_setting)
    return verdicts


# --- recorded histories from other campaigns' receipts -----------------------------------

# The classes of histories no setting admits (``Recorded.why_unadmitted``), each by what the model lacks for it.
CONCURRENT = "concurrent answers beyond the racers"
NO_PAUSE = "no pause recorded"
ABSORBED = "injected exception absorbed"
EFFECT_THEN_CRASH = "effect, then crash before its record"
REDONE_AFTER_SAVE = "step redone after a save past its effect"
RAN_AGAIN = "completed run ran again"
PAUSED_AGAIN = "completed run paused again"
PREFIX_RERUN = "answer re-ran work before the pause"
PAUSED_EARLY = "paused before an earlier step ran"
UNCLASSIFIED = "unclassified"
GAP_CLASSES = (CONCURRENT, NO_PAUSE, ABSORBED, EFFECT_THEN_CRASH, REDONE_AFTER_SAVE, RAN_AGAIN, PAUSED_AGAIN,
               PREFIX_RERUN, PAUSED_EARLY, UNCLASSIFIED)
# the rows of the hand-built histories (probes/tla/known_histories.py): the validator's own check, with a table of
# their own; one is built to be admitted by no setting, so they are not counted among the recorded ones
KNOWN = "known behaviours"

# Roles of the kit's workflows (``runtime.SHAPES``) the model has no step for: a step that fails and the error
# handler run in its place (the handler protocol), an effect fired before the pause by an approval callback
# (the callback protocol: the model's gated task fires nothing before its answer).
OUTSIDE_ROLES = {"pause-fails": "a step that fails and the error handler the framework runs in its place",
                 "callback-pause": "an approval callback that fires an effect before the pause"}


def _outside_roles(workflow: str) -> str | None:
    """Why a run of the kit's workflow ``workflow`` is outside the model, read from its roles (None: inside)."""
    found = [OUTSIDE_ROLES[role] for _, role in SHAPES.get(workflow, ()) if role in OUTSIDE_ROLES]
    return f"the run's workflow ({workflow}) has {'; '.join(found)} (the model has no such step)" if found else None


def _several_pauses(history: Any) -> str | None:
    """Why a history whose answers were consumed at two or more steps is outside the model (None: one step).

    Read off the history, whatever protocol recorded it: parallel branches paused at once and answered
    in one resume (LangGraph's fan-out, a resume map), or one pause after another, each answered in turn
    (LangGraph's sequential interrupts). ResumePlane has one gated task per run."""
    from probes.core.history import Kind

    by_incarnation: dict[str, list[str]] = {}
    for e in history.of(Kind.CONSUME):
        if e.step is not None and e.step not in by_incarnation.setdefault(e.incarnation, []):
            by_incarnation[e.incarnation].append(e.step)
    steps = list(dict.fromkeys(step for consumed in by_incarnation.values() for step in consumed))
    if len(steps) < 2:
        return None
    if any(len(consumed) >= 2 for consumed in by_incarnation.values()):
        return (f"parallel branches ({', '.join(steps)}) paused at once and one resume answered them all "
                "(the model has one pause of one task per run)")
    return (f"the run paused at {len(steps)} steps one after the other ({', then '.join(steps)}), each answered "
            "in turn (the model has one pause of one task per run)")


def _resumed_by(driver: Any) -> str:
    """The harness event that made a process run again, in words (None: no harness event: a restore)."""
    from probes.core.history import Kind

    if driver is None:
        return "a restore of its saved state"
    if driver.kind is Kind.RECOVER:
        return "a recovery"
    if driver.kind is Kind.ANSWER and not (driver.detail or {}).get("addressed", True):
        return "a stray answer"
    return "an answer" if driver.kind is Kind.ANSWER else f"a {driver.kind.value}"


def _ran_again_without_a_crash(events: Sequence[Any]) -> tuple[str, str] | None:
    """The first point where a history runs work again that no crash explains, in words (None: none).

    Three shapes, read off the history in order: an effect that had fired fires again with no crash
    since (the answer re-ran steps done before the pause, or something after completion ran the
    workflow again), or a completed run pauses again. ResumePlane has none of them: an answer
    continues at the paused task (only recovery from a crash re-enters earlier: Replay,
    PrefixReplay), and a resume of a completed run is inert (or, under DoubleConsume, refires the
    gated step only)."""
    from probes.core.history import Kind

    drivers = (Kind.ANSWER, Kind.RESUME, Kind.FORK, Kind.RECOVER)
    fired: dict[str, int] = {}       # effect -> where it last fired
    last_crash = -1
    completed = driver = None        # where the run completed; the last harness event since
    for i, e in enumerate(events):
        if e.kind in (Kind.CRASH, Kind.ERROR):
            last_crash = i
        elif e.kind is Kind.COMPLETE and completed is None:
            completed, driver = i, None
        elif e.kind in drivers:
            driver = e
        elif e.kind is Kind.PAUSE and completed is not None:
            return (PAUSED_AGAIN, f"{_resumed_by(driver)} after the run completed opened a pause again (at "
                    f"{e.step}): in ResumePlane a completed run is inert, no setting pauses it again")
        elif e.kind is Kind.EFFECT and e.effect is not None:
            if e.effect in fired and fired[e.effect] > last_crash:
                again = list(dict.fromkeys(x.effect for x in events[i:] if x.kind is Kind.EFFECT and x.effect in fired))
                if completed is not None:
                    return (RAN_AGAIN, f"{_resumed_by(driver)} after the run completed started the workflow "
                            f"again ({', '.join(again)} fired again): in ResumePlane a resume of a completed run is "
                            "inert (or, under DoubleConsume, refires the gated step only); no setting runs a "
                            "completed workflow again")
                if driver is not None and driver.kind in (Kind.ANSWER, Kind.RESUME):
                    return (PREFIX_RERUN, f"the answer re-ran work done before the pause ({', '.join(again)} fired "
                            "again, no crash between): in ResumePlane an answer continues at the paused task; only a "
                            "recovery from a crash re-enters earlier (Replay, PrefixReplay)")
            fired[e.effect] = i
    return None


@dataclass(frozen=True)
class Recorded:
    """One recorded history and where it came from."""

    name: str            # <campaign>/<probe>[/<trial>]
    campaign: str
    framework: str
    family: str          # the probe family: the probe id up to its first dot
    history: Any
    steps: tuple[str, ...] | None = None
    gate: str | None = None
    # the labels of the verdicts decided on this history (property -> label): a history on a
    # path the suite judged conformant (all ✓) must be a behaviour of the reference semantics
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def outside_model(self) -> str | None:
        """Why no setting of ResumePlane can admit this history, known before TLC runs: the
        harness edited durable state (the model has no step that does), a worker it had
        stopped went on beside the process that took its run over (the kit's stall protocol:
        two resumes of one run at once, which the model has no step for; likewise a racer cut off from
        the store by the partition protocol), or the answer ran changed code (the kit's change
        protocol: the model has one fixed workflow), or its step pauses twice (the pause-twice protocol), or
        two parallel branches pause at once (the parallel protocol), or, read off any history, answers
        were consumed at two steps (``_several_pauses``: LangGraph's fan-out and sequential interrupts)."""
        from probes.core.history import Kind

        if self.history.of(Kind.TAMPER):
            return "the harness edited durable state"
        if self.history.of(Kind.DELETE):
            return "the harness deleted the run while a process held it (the model has no deletion)"
        if any((e.detail or {}).get("stopped") for e in self.history.of(Kind.RECOVER)):
            return "a stopped worker went on beside the process that took its run over (concurrent resumes)"
        if any((e.detail or {}).get("partitioned") for e in self.history.of(Kind.ANSWER)):
            return "a process cut off from the store went on beside another that answered (concurrent resumes)"
        if any((e.detail or {}).get("code") for e in self.history.of(Kind.ANSWER)):
            return "the workflow's code changed between the pause and the answer (the model has one workflow)"
        workflow = next((e.detail["workflow"] for e in self.history.of(Kind.ANSWER) if (e.detail or {}).get("workflow")),
                        None)
        if workflow is not None and any(role == "pause-twice" for _, role in SHAPES.get(workflow, ())):
            return f"the run's workflow ({workflow}) pauses more than once in a step (the model has one pause)"
        if workflow is not None and (why := _outside_roles(workflow)):
            return why
        if workflow is not None and any(role == "branch-pause" for _, role in SHAPES.get(workflow, ())):
            return (f"the run's workflow ({workflow}) has parallel branches paused at once and a join (the model "
                    "has one pause of one task at a time)")
        return _several_pauses(self.history)  # None: a nested pause is one pause of one task to the model

    @property
    def gap(self) -> str:
        """For a history no setting admits: which part of it the model has no step for (``why_unadmitted``)."""
        return self.why_unadmitted[1]

    @property
    def why_unadmitted(self) -> tuple[str, str]:
        """For a history no setting admits: (its class, one of ``GAP_CLASSES``; which part of it the
        model has no step for), read off the history itself (so a reader can check it against the events)."""
        from probes.core.history import Kind

        events = list(self.history)
        kinds = [e.kind for e in events]
        if any(e.kind is Kind.ANSWER and e.detail.get("racers") for e in events) or self.family in ("grid", "race"):
            return (CONCURRENT, "concurrent answers to one pause that not even ConcurrentResume's racers (processes "
                    "that read the interrupt as pending, each consuming it and running the rest of the workflow) admit")
        first_resume = next((i for i, k in enumerate(kinds) if k in (Kind.ANSWER, Kind.RESUME)), None)
        if first_resume is not None and Kind.PAUSE not in kinds[:first_resume]:
            return NO_PAUSE, ("the probe recorded no pause before its first resume: the mapping cannot place the "
                              "interrupt")
        for i, e in enumerate(events):
            if e.kind not in (Kind.CRASH, Kind.ERROR):
                continue
            if e.detail.get("framework_status"):  # the victim returned: the exception did not end it
                return (ABSORBED, f"the framework absorbed the injected exception at {e.detail.get('at')} and went "
                        f"on (status {e.detail['framework_status']!r}, e.g. retrying the step or asking again in the "
                        "same process): the model's crash ends an incarnation, so it has no such step")
            victim = e.detail.get("victim", e.incarnation)
            before = [x for x in events[:i] if x.incarnation == victim]
            since_save = before[max((j + 1 for j, x in enumerate(before) if x.kind is Kind.PERSIST), default=0):]
            if any(x.kind is Kind.EFFECT for x in since_save):
                return (EFFECT_THEN_CRASH, "an effect fired after the victim's last durable save, then the crash: "
                        "ResumePlane's task step is atomic (effect and record together), so it has no state between "
                        "them")
            fired = {x.effect for x in before if x.kind is Kind.EFFECT}
            again = sorted({x.effect for x in events[i + 1:] if x.kind is Kind.EFFECT} & fired)
            if again:
                fired_at = max(j for j, x in enumerate(before) if x.kind is Kind.EFFECT and x.effect in again)
                saves = sorted({str(x.detail.get("what")) for x in before[fired_at:] if x.kind is Kind.PERSIST})
                return (REDONE_AFTER_SAVE, f"the recovery fired {', '.join(again)} again although the victim had "
                        f"saved after firing it ({', '.join(saves) or 'its saves'}): those saves did not record the "
                        "step done, and ResumePlane records a step with its effect (one atomic task step), so every "
                        "save it makes after an effect covers that effect's step")
        return (_ran_again_without_a_crash(events) or self._paused_before_earlier_steps()
                or (UNCLASSIFIED, "none of the above: read the history"))

    def _paused_before_earlier_steps(self) -> tuple[str, str] | None:
        """The run's first pause came before a step ordered earlier in its workflow fired its effect."""
        from probes.core.history import Kind

        events = list(self.history)
        pause = next((i for i, e in enumerate(events) if e.kind is Kind.PAUSE), None)
        if pause is None or not self.steps or self.gate not in self.steps:
            return None
        fired = {e.step or e.effect for e in events[:pause] if e.kind is Kind.EFFECT}
        unrun = [s for s in self.steps[:self.steps.index(self.gate)] if s not in fired]
        if not unrun:
            return None
        return (PAUSED_EARLY, f"the run paused at {self.gate} before {', '.join(unrun)}, ordered before it, had fired "
                "its effect: in ResumePlane every task before the gated one fires its effect before the pause")

    @property
    def conformant(self) -> bool:
        """Every verdict decided on this history is ✓ (n/a aside), and there is one."""
        measured = [lab for lab in self.labels.values() if lab != "n/a"]
        return bool(measured) and all(lab == "✓" for lab in measured)


def with_steps(history: Any) -> Any:
    """Name the step of events the oracles recorded by effect only.

    The effect oracles name an effect after the task that fires it (``A``, ``gate``), and
    a parking process records its pause without a step; the mapping needs steps. An
    effect's step is its effect name unless the event names one; a pause's step is the
    first effect fired after the first answer (the task the answer released).
    """
    from probes.core.history import History, Kind

    events = list(history)
    released = None
    for i, e in enumerate(events):
        if e.kind in (Kind.ANSWER, Kind.RESUME):
            released = next((x.step or x.effect for x in events[i:] if x.kind is Kind.EFFECT), None)
            break
    return History(tuple(replace(e, step=e.effect) if e.kind is Kind.EFFECT and e.step is None
                         else replace(e, step=released) if e.kind is Kind.PAUSE and e.step is None
                         else e for e in events))


def per_copy(events: list[Any]) -> list[tuple[str, list[Any]]]:
    """A history of the ``rd`` protocol split into one history per recovered copy.

    ``rd`` copies the crashed store byte for byte and recovers each copy in a fresh process, one after
    the other, into one history (each copy's RECOVER names it: ``detail["copy"]``). The model has one
    store and no copying, so the joined history reads as the same run recovered and answered once per
    copy (its effects fired once per copy): no setting admits it. Each copy's recovery is one
    crash-recovery of the crashed run, so each is validated as the events before the first copy's
    recovery followed by that copy's own (``(copy, events)``); any other history is one part,
    ``("", events)``. Event JSON (``History.to_json``) in, event JSON out."""
    starts = [i for i, e in enumerate(events)
              if e.get("kind") == "recover" and (e.get("detail") or {}).get("copy")]
    if len(starts) < 2:
        return [("", events)]
    prefix = events[:starts[0]]
    return [(str(events[a]["detail"]["copy"]), prefix + events[a:b])
            for a, b in zip(starts, starts[1:] + [len(events)])]


def recorded_histories(campaign: str, receipts: Iterable[Any]) -> tuple[list[Recorded], int]:
    """Histories stored in a campaign's receipts -> (histories, receipts without one).

    A receipt carries the histories its verdicts were decided on as ``histories`` (verdict
    path -> list of event JSON, ``probes.core.history.History.to_json``); a probe without
    them may keep one in ``observations["history"]`` or ``observations["histories"]``
    (read only then, so one history is never validated twice). Empty histories are skipped. The
    workflow, if the probe knows it, as ``observations["workflow"] = {"steps": [...],
    "gate": ...}``. Events the oracles recorded by effect only get their steps from
    ``with_steps``. An ``rd`` history is validated once per recovered copy (``per_copy``).
    """
    from probes.core.checker import WORST_FIRST
    from probes.core.history import History

    out: list[Recorded] = []
    without = 0
    for receipt in receipts:
        obs = receipt.observations or {}
        # the histories the verdicts were decided on; else what the probe kept in its observations
        found = {str(k): v for k, v in (getattr(receipt, "histories", None) or {}).items() if v}
        if not found and isinstance(obs.get("history"), list) and obs["history"]:
            found[""] = obs["history"]
        if not found and isinstance(obs.get("histories"), Mapping):
            found.update({str(k): v for k, v in obs["histories"].items() if isinstance(v, list) and v})
        if not found:
            without += 1
            continue
        frameworks = sorted({v.framework for v in receipt.verdicts}) or [campaign]
        workflow = obs.get("workflow") if isinstance(obs.get("workflow"), Mapping) else {}
        # one history decided on several properties of a path (``<path>#<prop>`` keys) is validated once,
        # with the labels of every verdict decided on it
        same: dict[str, list[str]] = {}
        for key, events in sorted(found.items()):
            first = next((k for k in same if found[k] == events), key)
            same.setdefault(first, []).append(key)
        for key, keys in same.items():
            events = found[key]
            decided = [v for v in receipt.verdicts  # "": the whole probe's
                       if not key or v.path in keys or f"{v.path}#{v.property.value}" in keys]
            labels: dict[str, str] = {}
            for v in sorted(decided, key=lambda v: WORST_FIRST.index(v.label)):
                labels.setdefault(v.property.value, v.label.value)
            for copy, part in per_copy(events):  # rd: one history per recovered copy of the store
                out.append(Recorded("/".join(x for x in (campaign, receipt.probe, key, copy) if x), campaign,
                                    ",".join(frameworks), receipt.probe.split(".")[0],
                                    with_steps(History.from_json(part)),
                                    tuple(workflow["steps"]) if workflow.get("steps") else None, workflow.get("gate"),
                                    dict(sorted(labels.items()))))
    return out, without


# --- the chapter's tables, from the traces receipt's rows --------------------------------------

def _outcome(row: Mapping[str, Any]) -> str:
    if "outside_model" in row:
        return "outside"
    if "mapping_error" in row:
        return "not mapped"
    explained = row.get("explained_by") or []
    return "reference" if explained == ["reference"] else "fault" if explained else "unexplained"


def family_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per campaign, framework and probe family: how many histories, and what admits them.

    ``conformant`` counts histories whose verdicts are all ✓; ``conformant, reference`` how
    many of those the reference semantics admits (each one it does not is a finding)."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["campaign"], row.get("framework", ""), row["family"]), []).append(row)
    table = []
    for (campaign, framework, family), members in groups.items():
        outcomes = [_outcome(r) for r in members]
        faults = sorted({s for r in members if _outcome(r) == "fault" for s in r["explained_by"]})
        conformant = [r for r in members if r.get("conformant")]
        table.append({"campaign": campaign, "framework": framework, "family": family, "histories": len(members),
                      "reference": outcomes.count("reference"), "by a fault": outcomes.count("fault"),
                      "faults that explain": ", ".join(faults), "unexplained": outcomes.count("unexplained"),
                      "outside the model": outcomes.count("outside"), "not mapped": outcomes.count("not mapped"),
                      "all verdicts ✓": len(conformant),
                      "of them reference": sum(_outcome(r) == "reference" for r in conformant)})
    return table


def _unadmitted(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The recorded histories (not the hand-built ones, ``KNOWN``) that no setting admits."""
    return [row for row in rows if _outcome(row) == "unexplained" and row["campaign"] != KNOWN]


def unexplained_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The recorded histories no setting admits, grouped by their class (``GAP_CLASSES``' order), campaign and
    what the model lacks for them."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for row in _unadmitted(rows):
        key = (row.get("gap_class", UNCLASSIFIED), row["campaign"], row.get("gap", ""))
        groups.setdefault(key, []).append(row["name"].split("/", 1)[-1])
    order = {name: i for i, name in enumerate(GAP_CLASSES)}
    return [{"class": cls, "campaign": c, "histories": len(names), "why no setting admits them": gap, "e.g.": names[0]}
            for (cls, c, gap), names in sorted(groups.items(), key=lambda kv: order.get(kv[0][0], len(order)))]


def gap_class_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many recorded histories no setting admits, per class (``GAP_CLASSES``' order, empty ones left out)."""
    counts = Counter(row.get("gap_class", UNCLASSIFIED) for row in _unadmitted(rows))
    return {name: counts[name] for name in GAP_CLASSES if counts[name]}


def conformant_findings(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Histories on which every verdict is ✓ but the reference semantics does not admit them:
    the verdict layer and the model disagree there (outside-the-model histories aside)."""
    return [{"history": r["name"], "verdicts": " ".join(f"{k} {v}" for k, v in r["verdicts"].items()),
             "admitted by": ", ".join(r.get("explained_by") or []) or "no setting",
             "why": r.get("gap") or r.get("mapping_error") or ""}
            for r in rows if r.get("conformant") and _outcome(r) not in ("reference", "outside")]
