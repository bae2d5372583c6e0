"""The protocols of the contract, written once, against any adapter.

Each protocol drives the kit's two-step workflow through adapter operations, every one
in a fresh interpreter (``probes.kit.child``), records what it drives (start, answer,
crash, recover, tamper) into the probe's history next to what the workflow recorded
(steps, effects, pauses, consumes, refusals, saves), and hands the history to
``probes.kit.judge``. A protocol that needs a capability the adapter lacks returns
``n/a`` verdicts with the adapter's reason.

A harness failure (a child that dies unexpectedly, oracles that disagree, a crash
point that was never reached) raises ``HarnessError``; the campaign records it as a
harness error, never as a verdict.
"""

from __future__ import annotations

import copy
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from probes.core.checker import Property, Verdict
from probes.core.errors import HarnessError
from probes.core.history import History, HistoryLog, Kind
from probes.core.nemesis import run_child
from probes.core.oracle import Ledger, cross_check
from probes.core.portable import portable_text, tail
from probes.kit.adapter import Adapter, Capability
from probes.kit.judge import Judge
from probes.kit.runtime import SAVE_POINTS, STEP_POINTS

HARNESS = "harness"


@dataclass(frozen=True)
class Target:
    """What the kit measures: an adapter class (by ``module:Class``), where it runs, on what."""

    adapter: str
    cls: type[Adapter]
    backend: str
    python: str | None = None  # a side environment's interpreter; None: this one
    timeout: float = 120.0


class Run:
    """One run of the workflow inside a probe: its own state directory, a shared history."""

    def __init__(self, target: Target, root: Path, name: str, store: str | None, history: HistoryLog,
                 ledger: Ledger, observations: dict[str, Any]) -> None:
        self.target, self.name, self.store = target, name, store
        self.workdir = root / name
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.history, self.ledger, self.obs = history, ledger, observations
        self.markers = root / name / ".markers"

    def note(self, kind: Kind, **fields: Any) -> None:
        self.history.append(kind, HARNESS, **fields)

    def op(self, incarnation: str, name: str, *, park_at: str | None = None, fail_at: str | None = None,
           barrier: str | None = None, **args: Any) -> dict[str, Any]:
        """Run adapter operation ``name``; with ``park_at`` the process must be killed there."""
        inc = f"{self.name}/{incarnation}"
        out = run_child("probes.kit.child:op", {
            "adapter": self.target.adapter, "workdir": str(self.workdir), "backend": self.target.backend,
            "store": self.store, "ledger": str(self.ledger.path), "history": str(self.history.path),
            "incarnation": inc, "markers": str(self.markers), "name": name, "args": args,
            "fail_at": fail_at, "barrier": barrier}, park_at=park_at, timeout=self.target.timeout,
            python=self.target.python)
        result = out.result or {}
        self.obs.setdefault("children", {})[inc] = {
            "op": name, "status": out.status, "parked_at": out.parked_at, "seconds": round(out.seconds, 3),
            "result": {k: v for k, v in result.items() if k not in ("counter", "versions")},
            "stderr_tail": tail(portable_text(out.stderr_tail), 12) if out.status != "ok" else ""}
        if result.get("versions"):
            self.obs["framework_versions"] = result["versions"]
        if park_at:
            if out.status == "killed":
                self.note(Kind.CRASH, detail={"how": "SIGKILL", "at": park_at, "victim": inc})
                return {"status": "killed"}
            if out.status == "ok":
                cross_check(result["counter"], self.ledger, inc)
                return {**result, "not_reached": park_at}
        if out.status != "ok":
            raise HarnessError(f"{inc} ({name}) ended {out.status}: {out.stderr_tail[-800:]}")
        cross_check(result["counter"], self.ledger, inc)
        if fail_at and (self.markers / f"failed-{fail_at}").exists():
            self.note(Kind.CRASH, detail={"how": "exception", "at": fail_at, "victim": inc,
                                          "framework_status": result.get("status")})
        return result

    def start(self, incarnation: str = "start", **kw: Any) -> dict[str, Any]:
        self.note(Kind.START)
        status = self.op(incarnation, "start", **kw)
        if not kw and status.get("status") != "paused":  # no fault: the adapter's workflow must pause
            raise HarnessError(f"a clean start did not pause ({status.get('status')}: {status.get('error')} "
                               f"{status.get('message')}); the adapter is broken: {status.get('traceback', '')}")
        return status

    def answer(self, incarnation: str, handle: Any, answer: Any, **kw: Any) -> dict[str, Any]:
        self.note(Kind.ANSWER, value=answer, detail={"addressed": handle is not None})
        return self.op(incarnation, "resume", handle=handle, answer=answer, **kw)

    def recover(self, incarnation: str, mode: str, answer: Any) -> dict[str, Any]:
        self.note(Kind.RECOVER, detail={"mode": mode})
        return self.op(incarnation, "recover", mode=mode, answer=answer)

    def to_completion(self, status: dict[str, Any], answer: Any, incarnation: str) -> dict[str, Any]:
        """If the run is parked at its pause, answer it (the same answer, delivered again)."""
        if status.get("status") == "paused":
            return self.answer(incarnation, status.get("handle"), answer)
        return status


class Probe:
    """A probe's history and ledger shared by every run it makes."""

    def __init__(self, target: Target, workdir: Path, store: Callable[[str], str | None]) -> None:
        self.target, self.root, self.store = target, Path(workdir), store
        self.history = HistoryLog(self.root / "history.sqlite")
        self.ledger = Ledger(self.root / "ledger.sqlite")
        self.observations: dict[str, Any] = {}
        self.judge = Judge(target.cls.framework, target.backend, target.cls.citations)

    def run(self, name: str) -> Run:
        return Run(self.target, self.root, name, self.store(name), self.history, self.ledger, self.observations)

    def read(self) -> History:
        return self.history.read()


def _isolated(p: Probe, name: str) -> tuple[Probe, Run]:
    """A run with its own history (a sub-probe), so its events judge only itself."""
    sub = Probe(p.target, p.root / name, p.store)
    sub.observations = p.observations.setdefault("runs", {}).setdefault(name, {})
    return sub, sub.run("run")


def _needs(p: Probe, *caps: Capability) -> str | None:
    missing = [c for c in caps if c not in p.target.cls.capabilities]
    if not missing:
        return None
    return "; ".join(p.target.cls.missing.get(c, f"the adapter does not declare {c.value}") for c in missing)


# --- the protocols ---------------------------------------------------------------------

def baseline(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """No fault: start, answer once. The run must complete with each effect exactly once."""
    if why := _needs(p, Capability.PAUSE):
        return [p.judge.not_applicable(Property.LV, "baseline", why)]
    answer = p.target.cls.answers[args.get("answer", 0)]
    run = p.run("run")
    done = run.to_completion(run.start(), answer, "answer")
    p.observations["outcome"] = done.get("outcome")
    if done.get("status") != "completed":
        raise HarnessError(f"a clean run did not complete ({done.get('status')}: {done.get('error')} "
                           f"{done.get('message')}); the adapter is broken: {done.get('traceback', '')}")
    h = p.read()
    path = f"baseline:{answer}"
    expected = ("e1",) if answer in p.target.cls.declines else ("e1", "e2")
    return [p.judge.effects_once(Property.EO, path, h, bool(h.of(Kind.COMPLETE)), "no fault", expected),
            p.judge.live(path, h, "no fault")]


def crash(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Crash at ``point`` (SIGKILL at a barrier, or an exception once), recover by ``mode``, finish."""
    how, point, mode = args["how"], args["point"], args["mode"]
    path = f"crash:{how}@{point}/{mode}"
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER):
        return [p.judge.not_applicable(prop, path, why) for prop in (Property.EO, Property.PC, Property.LV)]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    fault = {"park_at": point} if how == "kill" else {"fail_at": point}
    first = run.start(**fault)  # the point is in the start's part of the run, or else in the answer's
    if first.get("status") == "paused" and not p.read().of(Kind.CRASH):
        first = run.answer("answer", first.get("handle"), answer, **fault)
    if not p.read().of(Kind.CRASH):
        raise HarnessError(f"crash point {point} was not reached ({how}); status {first.get('status')}")
    status = run.recover("recover", mode, answer)
    status = run.to_completion(status, answer, "recover-answer")
    h = p.read()
    done = bool(h.of(Kind.COMPLETE))
    return [p.judge.effects_once(Property.EO, path, h, done, f"{how} at {point}, recovered by {mode}"),
            p.judge.prefix(path, h),
            p.judge.live(path, h, f"{how} at {point}, recovered by {mode}")]


def parkkill(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """SIGKILL the process parked at the pause; answer the durable pause from a fresh process."""
    path = "park-kill"
    if why := _needs(p, Capability.PAUSE):
        return [p.judge.not_applicable(prop, path, why) for prop in (Property.EO, Property.PC, Property.LV)]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    run.start(park_at="kit.paused")
    run.note(Kind.RECOVER, detail={"mode": "answer the durable pause"})
    run.answer("answer", None, answer)
    h = p.read()
    done = bool(h.of(Kind.COMPLETE))
    return [p.judge.effects_once(Property.EO, path, h, done, "killed while parked, answered after"),
            p.judge.prefix(path, h), p.judge.live(path, h, "killed while parked, answered after")]


def stray(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Answer the run's pause after the run completed (no address): it must be inert, both for
    the gated effect (CO) and for every other effect (EO: a stray that starts the finished
    workflow again fires ``e1`` a second time)."""
    path = "stray-after-completion"
    if why := _needs(p, Capability.PAUSE):
        return [p.judge.not_applicable(prop, path, why) for prop in (Property.CO, Property.EO)]
    a, b = p.target.cls.answers
    run = p.run("run")
    run.to_completion(run.start(), a, "answer")
    run.answer("stray", None, b)
    h, what = p.read(), "a second answer after completion"
    return [p.judge.gated_once(path, h, what), p.judge.effects_once(Property.EO, path, h, True, what)]


def answers(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """The same pause (by its handle) answered ``n`` times in a row with the same answer (retries)."""
    n = args["n"]
    path = f"retry:same-pause×{n}"
    if why := _needs(p, Capability.PAUSE, Capability.READDRESS):
        return [p.judge.not_applicable(Property.CO, path, why)]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    handle = run.start().get("handle")
    for i in range(1, n + 1):
        run.answer(f"answer-{i}", handle, answer)
    return [p.judge.gated_once(path, p.read(), f"the same pause answered {n} times")]


def race(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """``k`` processes answer the same pause at once (released by a barrier), ``trials`` times.

    Which racer loads the pause before another has answered it is up to the scheduler, so
    one trial is one sample: a framework that lets two racers through now and then can
    serialise them in a given trial. Each trial is a fresh run with its own history; the
    verdict is the worst trial's (its history is the one kept), and the evidence lists how
    often the gated effect fired in every trial, so a ✓ says how many trials it rests on.
    """
    from probes.core.barrier import run_racers
    from probes.core.checker import WORST_FIRST

    k, trials = args["k"], args.get("trials", 1)
    path = f"race:same-pause×{k}"
    if why := _needs(p, Capability.PAUSE, Capability.READDRESS):
        return [p.judge.not_applicable(Property.CO, path, why)]
    answer = p.target.cls.answers[0]
    judged = []
    for t in range(1, trials + 1):
        sub, run = _isolated(p, f"trial-{t}")
        handle = run.start().get("handle")
        run.note(Kind.ANSWER, value=answer, detail={"racers": k})
        outs = run_racers(k, lambda i, sock: run.op(f"racer-{i}", "resume", barrier=sock, handle=handle,
                                                    answer=answer), timeout=run.target.timeout)
        sub.observations["racers"] = [{"status": o.get("status"), "error": o.get("error")} for o in outs]
        judged.append(p.judge.gated_once(path, sub.read(), f"{k} concurrent answers (trial {t} of {trials})",
                                         witness=False))  # racer order varies
    fires = [v.evidence["gate_fires"] for v in judged]
    worst = min(judged, key=lambda v: (WORST_FIRST.index(v.label), -abs(v.evidence["gate_fires"] - 1)))
    return [replace(worst, evidence={**worst.evidence, "gate_fires_by_trial": fires},
                    summary=f"{worst.summary}; over {trials} trial(s) the gated effect fired {fires} time(s)")]


def fork(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Answer the same pause twice with different answers: the second must be served f(v2)."""
    if why := _needs(p, Capability.PAUSE, Capability.READDRESS):
        return [p.judge.not_applicable(Property.FD, "fork:same-pause", why)]
    a, b = p.target.cls.answers
    ref_probe, ref = _isolated(p, "reference")
    expected = ref.to_completion(ref.start(), b, "answer").get("outcome")
    run = p.run("run")
    handle = run.start().get("handle")
    first = run.answer("first", handle, a)
    run.note(Kind.FORK, value=b, detail={"intent": "fork", "at": "the answered pause"})
    second = run.answer("fork", handle, b)
    p.observations["fork"] = {"first": first.get("status"), "second": second.get("status"),
                              "second_error": second.get("error")}
    return [p.judge.fork(p.read(), expected)]


def _edits(doc: Any, kind: str) -> list[tuple[str, Callable[[Any], Any]]]:
    """Edits of a JSON document: structural (a key removed, the shape broken) or type-valid."""
    if not isinstance(doc, dict):
        return [("not-an-object", lambda d: {})] if kind == "structural" else []
    out: list[tuple[str, Callable[[Any], Any]]] = []
    if kind == "structural":
        out.append(("empty-object", lambda d: {}))
        for key in sorted(doc):
            out.append((f"drop:{key}", lambda d, key=key: {k: v for k, v in d.items() if k != key}))
            if isinstance(doc[key], (dict, list)):
                out.append((f"scalar-for:{key}", lambda d, key=key: {**d, key: 0}))
        return out
    for key in sorted(doc):
        value = doc[key]
        if isinstance(value, bool):
            out.append((f"flip:{key}", lambda d, key=key: {**d, key: not d[key]}))
        elif isinstance(value, int):
            out.append((f"plus-one:{key}", lambda d, key=key: {**d, key: d[key] + 1}))
        elif isinstance(value, str):
            out.append((f"other-string:{key}", lambda d, key=key: {**d, key: d[key] + "-edited"}))
    return out


def tamper(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Edit the newest durable document at the pause, then answer from a fresh process.

    Structural edits must be refused loudly before any effect (CV); after a type-valid
    edit (the state still fits its schema) every effect must still fire at most once (EO).
    """
    kind = args["kind"]
    if why := _needs(p, Capability.PAUSE, Capability.TAMPER):
        return [p.judge.not_applicable(Property.CV if kind == "structural" else Property.EO, f"tamper:{kind}", why)]
    answer = p.target.cls.answers[0]
    probe0, run0 = _isolated(p, "shape")
    run0.start()
    paths = p.target.cls(run0.workdir, p.target.backend, run0.store).state_paths()
    if not paths:  # e.g. a backend whose storage the adapter does not read
        return [p.judge.not_applicable(Property.CV if kind == "structural" else Property.EO, f"tamper:{kind}",
                                       f"the adapter locates no durable JSON document on backend {p.target.backend}")]
    inst0 = p.target.cls(run0.workdir, p.target.backend, run0.store)
    edits = _edits(inst0.load_state(paths[-1]), kind)[: args.get("limit") or None]
    verdicts = []
    for i, (name, edit) in enumerate(edits):
        sub, run = _isolated(p, f"edit-{i}")
        handle = run.start().get("handle")
        inst = p.target.cls(run.workdir, p.target.backend, run.store)
        target = inst.state_paths()[-1]
        inst.save_state(target, edit(copy.deepcopy(inst.load_state(target))))
        run.note(Kind.TAMPER, detail={"edit": name})
        run.answer("answer", handle, answer)  # the pause the caller was given; its state edited underneath
        h = sub.read()
        path = f"tamper:{name}"
        if kind == "structural":
            verdicts.append(sub.judge.refused(path, h))
        else:
            done = bool(h.of(Kind.COMPLETE))
            verdicts.append(sub.judge.effects_once(Property.EO, path, h, done, f"type-valid edit {name}"))
    return verdicts


def savekill(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """SIGKILL inside the framework's own n-th save (enter / mid-write / exit), recover, finish."""
    points = args["points"]
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER, Capability.SAVE_HOOK):
        return [p.judge.not_applicable(Property.EO, f"save-kill:{pt}", why) for pt in points]
    a = p.target.cls.answers[0]
    probe0, run0 = _isolated(p, "count")
    run0.to_completion(run0.start(), a, "answer")
    saves = len([e for e in probe0.read().of(Kind.PERSIST)])
    if saves == 0:
        raise HarnessError("the hooked save never ran in a clean run")
    verdicts = []
    for pt in points:
        before = len(verdicts)
        for n in range(1, saves + 1):
            sub, run = _isolated(p, f"{pt}-{n}")
            status = run.start(park_at=f"{pt}#{n}")
            if status.get("status") == "paused":  # the n-th save happens after the pause
                status = run.answer("answer", status.get("handle"), a, park_at=f"{pt}#{n - _count(sub)}")
            if status.get("not_reached") or not sub.read().of(Kind.CRASH):
                continue  # this save has no such point (e.g. it writes nothing): nothing to measure
            status = run.to_completion(run.recover("recover", p.target.cls.recovery_modes[0], a), a,
                                       "recover-answer")
            h = sub.read()
            done = bool(h.of(Kind.COMPLETE))
            path = f"save-kill:{pt}#{n}"
            verdicts += [sub.judge.effects_once(Property.EO, path, h, done, f"killed in save {n} at {pt}"),
                         sub.judge.prefix(path, h), sub.judge.live(path, h, f"killed in save {n} at {pt}")]
        if len(verdicts) == before:  # never reached: say so rather than measure nothing silently
            verdicts.append(p.judge.not_applicable(Property.EO, f"save-kill:{pt}",
                                                   f"none of the {saves} saves of a clean run reached {pt} "
                                                   "(the adapter hooks no lower-level write)" if pt == "save.write"
                                                   else f"none of the {saves} saves of a clean run reached {pt}"))
    return verdicts


def _count(p: Probe) -> int:
    return len(p.read().of(Kind.PERSIST))


PROTOCOLS: dict[str, Callable[[Probe, dict[str, Any]], list[Verdict]]] = {
    "baseline": baseline, "crash": crash, "parkkill": parkkill, "stray": stray, "answers": answers,
    "race": race, "fork": fork, "tamper": tamper, "savekill": savekill,
}
CRASH_POINTS = STEP_POINTS
KILL_POINTS_IN_SAVE = SAVE_POINTS
