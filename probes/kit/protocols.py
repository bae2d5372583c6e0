"""The protocols of the contract, written once, against any adapter.

Each protocol drives the kit's two-step workflow through adapter operations, every one
in a process of its own (``probes.kit.child``), records what it drives (start, answer,
crash, recover, tamper) into the probe's history next to what the workflow recorded
(steps, effects, pauses, consumes, refusals, saves), and hands the history to
``probes.kit.judge``. A protocol that needs a capability the adapter lacks returns
``n/a`` verdicts with the adapter's reason.

A harness failure (a child that dies unexpectedly, oracles that disagree, a crash
point that was never reached) raises ``HarnessError``; the campaign records it as a
harness error, never as a verdict.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from probes.core.checker import UNSET, Property, Verdict
from probes.core.errors import HarnessError
from probes.core.history import HARNESS, History, HistoryLog, Kind
from probes.core.nemesis import ChildOutcome, PausedChild, run_child
from probes.core.oracle import Ledger, cross_check
from probes.core.portable import portable_text, tail
from probes.core.visibility import found_after_delete
from probes.kit.adapter import NOTHING_DURABLE, READDRESS_PARTS, Adapter, Capability
from probes.kit.judge import Judge, VariantJudge
from probes.kit.runtime import CODE_ENV, HANDLER_POINTS, SAVE_POINTS, STEP_POINTS, WORKFLOWS, required_effects


@dataclass(frozen=True)
class Target:
    """What the kit measures: an adapter class (by ``module:Class``), where it runs, on what."""

    adapter: str
    cls: type[Adapter]
    backend: str
    python: str | None = None  # a side environment's interpreter; None: this one
    timeout: float = 120.0
    environ: tuple[tuple[str, str], ...] = ()  # for the adapter's processes, e.g. a campaign server's address


class Run:
    """One run of the workflow inside a probe: its own state directory, a shared history."""

    child = "probes.kit.child:op"  # the child entry of every operation (probes.kit.exhaustive traces its own)

    def __init__(self, target: Target, root: Path, name: str, store: str | None, history: HistoryLog,
                 ledger: Ledger, observations: dict[str, Any]) -> None:
        self.target, self.name, self.store = target, name, store
        self.workdir = root / name
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.history, self.ledger, self.obs = history, ledger, observations
        self.markers = root / name / ".markers"
        self.nothing_durable: str | None = None  # why a recovery found nothing to resume, if one did
        # A process of this run that never ends is the framework's behaviour, not the harness's (a
        # resume by another release: probes.studies.mv); it is killed at the timeout and recorded as hung.
        self.hang_is_behaviour = False
        self.code = "v1"  # the code version its processes run (``runtime.SHAPES``; the change protocol sets it)

    def _env(self) -> dict[str, str]:
        """The environment of this run's processes: the target's, and the code version they run."""
        return {**dict(self.target.environ), **({CODE_ENV: self.code} if self.code != "v1" else {})}

    def _preload(self) -> tuple[str, ...]:
        """What a fork server imports for this run's processes: the child's module, the adapter's and
        the framework modules the adapter declares (``Adapter.imports``)."""
        return (self.child.partition(":")[0], self.target.adapter.partition(":")[0], *self.target.cls.imports)

    def note(self, kind: Kind, **fields: Any) -> None:
        self.history.append(kind, HARNESS, **fields)

    def _args(self, inc: str, name: str, args: dict[str, Any], fail_at: str | None = None,
              barrier: str | None = None) -> dict[str, Any]:
        """What the kit's child (``probes.kit.child.op``) is handed for one operation."""
        return {"adapter": self.target.adapter, "workdir": str(self.workdir), "backend": self.target.backend,
                "store": self.store, "ledger": str(self.ledger.path), "history": str(self.history.path),
                "incarnation": inc, "markers": str(self.markers), "name": name, "args": args,
                "fail_at": fail_at, "barrier": barrier}

    def _observe(self, inc: str, name: str, out: ChildOutcome) -> dict[str, Any]:
        """Keep what a child did in observations; its result (empty when it left none)."""
        result = out.result or {}
        self.obs.setdefault("children", {})[inc] = {
            "op": name, "status": out.status, "parked_at": out.parked_at, "seconds": round(out.seconds, 3),
            "result": {k: v for k, v in result.items() if k not in ("counter", "versions")},
            "stderr_tail": tail(portable_text(out.stderr_tail), 12) if out.status != "ok" else ""}
        if result.get("versions"):
            self.obs["framework_versions"] = result["versions"]
        return result

    def op(self, incarnation: str, name: str, *, park_at: str | None = None, fail_at: str | None = None,
           barrier: str | None = None, **args: Any) -> dict[str, Any]:
        """Run adapter operation ``name``; with ``park_at`` the process must be killed there."""
        inc = f"{self.name}/{incarnation}"
        preload = self._preload()
        out = run_child(self.child, self._args(inc, name, args, fail_at, barrier), park_at=park_at,
                        timeout=self.target.timeout, python=self.target.python, env=self._env(),
                        preload=preload)
        result = self._observe(inc, name, out)
        if out.forked:  # provenance: these processes started from a server with these modules imported
            self.obs["fork_server"] = list(preload)
        if park_at:
            if out.status == "killed":
                self.note(Kind.CRASH, detail={"how": "SIGKILL", "at": park_at, "victim": inc})
                return {"status": "killed"}
            if out.status == "ok":
                cross_check(result["counter"], self.ledger, inc)
                return {**result, "not_reached": park_at}
        fired = fail_at is not None and (self.markers / f"failed-{fail_at}").exists()
        if out.status == "timeout" and fired:
            # The injected exception was raised and the framework went on, but its process never
            # ended (Temporal's worker swallows an exception in its report of an activity outcome
            # and then waits for that report forever on shutdown): behaviour after the fault, not a
            # broken harness. run_child killed the process at the timeout; recovery goes on as
            # after any crash, and the history says the process hung.
            self.note(Kind.CRASH, detail={"how": "exception", "at": fail_at, "victim": inc, "framework_status": "hung",
                                          "then": f"the process did not end within {self.target.timeout:g} s "
                                                  f"and was killed"})
            return {"status": "hung"}
        if out.status == "timeout" and self.hang_is_behaviour:
            return self._hung(inc)
        if out.status != "ok":
            raise HarnessError(f"{inc} ({name}) ended {out.ended}: {out.stderr_tail[-800:]}")
        cross_check(result["counter"], self.ledger, inc)
        if fired:
            self.note(Kind.CRASH, detail={"how": "exception", "at": fail_at, "victim": inc,
                                          "framework_status": result.get("status")})
        return result

    def _hung(self, inc: str) -> dict[str, Any]:
        """A process that never ended, killed at the timeout, where that is the framework's behaviour."""
        self.note(Kind.ERROR, value="hung", detail={"then": f"{inc} did not end within "
                                                            f"{self.target.timeout:g} s and was killed"})
        return {"status": "hung"}

    @contextlib.contextmanager
    def stopped(self, incarnation: str, name: str, at: str, **args: Any) -> Iterator[Callable[[], dict[str, Any]]]:
        """Operation ``name`` in a process frozen by SIGSTOP once it reaches crash point ``at``: the
        block runs while it is stopped; the function it is given sends SIGCONT, runs ``meanwhile``
        (if given) while the process goes on, waits for the process to end and returns its result.
        A process still alive after the block is killed."""
        inc = f"{self.name}/{incarnation}"
        with PausedChild(self.child, self._args(inc, name, args), pause_at=at, python=self.target.python,
                         env=self._env()) as child:
            child.stop(self.target.timeout)

            def go_on(meanwhile: Callable[[], None] | None = None) -> dict[str, Any]:
                child.resume()
                if meanwhile is not None:  # while the process runs on (its link to the store cut, say)
                    meanwhile()
                out = child.finish(self.target.timeout)
                result = self._observe(inc, name, out)
                if out.status == "timeout" and self.hang_is_behaviour:
                    return self._hung(inc)
                if out.status != "ok":
                    raise HarnessError(f"{inc} ({name}), let go on after a stop at {at}, ended {out.ended}: "
                                       f"{out.stderr_tail[-800:]}")
                cross_check(result["counter"], self.ledger, inc)
                return result

            yield go_on

    def across(self, python: str, store: str | None) -> "Run":
        """This run (its directory, history and oracles) driven by processes started with another
        interpreter and reaching the store at another address: a racer in a network namespace."""
        other = Run(dataclasses.replace(self.target, python=python), self.workdir.parent, self.name, store,
                    self.history, self.ledger, self.obs)
        other.code = self.code
        return other

    def start(self, incarnation: str = "start", **kw: Any) -> dict[str, Any]:
        self.note(Kind.START)
        status = self.op(incarnation, "start", **kw)
        if not kw and status.get("status") != "paused":  # no fault: the adapter's workflow must pause
            raise HarnessError(f"a clean start did not pause ({status.get('status')}: {status.get('error')} "
                               f"{status.get('message')}); the adapter is broken: {status.get('traceback', '')}")
        return status

    def answer(self, incarnation: str, handle: Any, answer: Any, **kw: Any) -> dict[str, Any]:
        code = {} if self.code == "v1" else {"workflow" if self.code in WORKFLOWS else "code": self.code}
        self.note(Kind.ANSWER, value=answer, detail={"addressed": handle is not None, **code})
        return self.op(incarnation, "resume", handle=handle, answer=answer, **kw)

    def recover(self, incarnation: str, mode: str, answer: Any, **why: Any) -> dict[str, Any]:
        """Recover by ``mode``; if the adapter finds nothing durable to resume from, start over
        (recorded: a START whose detail says why), as a user of the framework would have to.
        ``why``: more detail for the RECOVER event (what the recovery takes over from)."""
        self.note(Kind.RECOVER, detail={"mode": mode, **why})
        status = self.op(incarnation, "recover", mode=mode, answer=answer)
        if status.get("status") != NOTHING_DURABLE:
            return status
        self.nothing_durable = str(status.get("why") or "the adapter found no durable state")
        self.obs["nothing_durable"] = self.nothing_durable
        self.note(Kind.START, detail={"after": "nothing durable to resume from", "why": self.nothing_durable})
        return self.op(f"{incarnation}-start", "start")

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
        self.workflow = "v1"  # the workflow every run builds (``runtime.WORKFLOWS``; ``on_workflow`` sets it)

    def run(self, name: str) -> Run:
        run = Run(self.target, self.root, name, self.store(name), self.history, self.ledger, self.observations)
        run.code = self.workflow
        return run

    def read(self) -> History:
        return self.history.read()


def _isolated(p: Probe, name: str) -> tuple[Probe, Run]:
    """A run with its own history (a sub-probe), so its events judge only itself."""
    sub = Probe(p.target, p.root / name, p.store)
    sub.observations = p.observations.setdefault("runs", {}).setdefault(name, {})
    sub.judge = p.judge  # one log of the probe's deciding calls (``Judge.calls``)
    sub.workflow = p.workflow
    return sub, sub.run("run")


def on_variant(p: Probe, env: str, workflow: str, prefix: str = "") -> Probe:
    """``p`` (its directory, history, ledger and observations) with every process it starts building the
    adapter's workflow variant ``workflow``, named in the environment variable ``env`` the adapter reads
    (the adapter's default workflow is left as it is); with ``prefix``, its verdict paths named after the
    variant (``VariantJudge``), so they never mix with the default workflow's paths."""
    q = Probe(dataclasses.replace(p.target, environ=p.target.environ + ((env, workflow),)), p.root, p.store)
    q.observations = p.observations
    q.observations["workflow_variant"] = workflow
    q.judge = VariantJudge(p.judge, prefix) if prefix else p.judge
    return q


def on_workflow(p: Probe, workflow: str, prefix: str) -> Probe:
    """``p`` with every run it makes building the kit's workflow ``workflow`` (``runtime.WORKFLOWS``: each
    ANSWER it records names it) and its verdict paths named after it, so they never mix with the two-step
    workflow's paths."""
    q = Probe(p.target, p.root, p.store)
    q.observations, q.workflow = p.observations, workflow
    q.observations["workflow_shape"] = workflow
    q.judge = VariantJudge(p.judge, prefix)
    return q


def _needs(p: Probe, *caps: Capability) -> str | None:
    missing = [c for c in caps if not p.target.cls.declares(c)]
    if not missing:
        return None
    reasons = p.target.cls.missing

    def why(c: Capability) -> str:
        shorthand = reasons.get(Capability.READDRESS) if c in READDRESS_PARTS else None
        return reasons.get(c) or shorthand or f"the adapter does not declare {c.value}"

    return "; ".join(why(c) for c in missing)


def _prefix(p: Probe, run: Run, path: str, h: History) -> Verdict:
    """PC, unless the recovery found nothing durable to resume from: then there was no durable
    prefix to keep, and the path says so (n/a with the adapter's reason) instead of a PC verdict."""
    if run.nothing_durable is not None:
        return p.judge.not_applicable(Property.PC, path, f"nothing durable to resume from: {run.nothing_durable}; "
                                                         "the run was started over")
    return p.judge.prefix(path, h)


def ended(status: dict[str, Any]) -> str:
    """What an operation came to, in words, for a framework's own protocol to keep in a summary or
    an observation: deterministic (no handles, no times), a raise by its first line (a pydantic
    error goes on to list every error)."""
    if status.get("status") == "raised":
        return f"raised {status.get('error')}: {(str(status.get('message') or '').splitlines() or [''])[0]}"
    if status.get("status") == "completed":
        return f"completed with {status.get('outcome')!r}"
    return str(status.get("status"))


# --- the protocols ---------------------------------------------------------------------

def baseline(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """No fault: start, answer once. The run must complete with each effect exactly once. The framework
    refusing the answer (it raised) is its behaviour, judged like any other (LV then fails); an answer
    that leaves the run neither completed nor refused is a broken adapter."""
    if why := _needs(p, Capability.PAUSE):
        return [p.judge.not_applicable(Property.LV, "baseline", why)]
    answer = p.target.cls.answers[args.get("answer", 0)]
    run = p.run("run")
    done = run.to_completion(run.start(), answer, "answer")
    p.observations["outcome"] = done.get("outcome")
    if done.get("status") not in ("completed", "raised"):  # a raise is the framework refusing: measured below
        raise HarnessError(f"a clean run did not complete ({done.get('status')}: {done.get('error')} "
                           f"{done.get('message')}); the adapter is broken: {done.get('traceback', '')}")
    if done.get("status") == "raised":
        p.observations["refused"] = ended(done)
    h = p.read()
    path = f"baseline:{answer}"
    expected = ("e1",) if answer in p.target.cls.declines else ("e1", "e2")
    return [p.judge.effects_once(path, h, "no fault", expected),
            p.judge.live(path, h, "no fault", p.target.cls.result(answer))]


def crash_at(p: Probe, run: Run, how: str, point: str, answer: Any) -> dict[str, Any]:
    """Start ``run`` and crash it at step point ``point`` (``how``: SIGKILL at a barrier, or an
    exception raised once): in the start's part of the run, or else in the answer's (the pause
    answered with ``answer``). A point never reached because the framework raised first (it refused
    the start or the answer) is the framework's behaviour, kept in the observations and judged with
    the recovery that follows; a point never reached otherwise is the harness's failure."""
    fault = {"park_at": point} if how == "kill" else {"fail_at": point}
    first = run.start(**fault)
    if first.get("status") == "paused" and not p.read().of(Kind.CRASH):
        first = run.answer("answer", first.get("handle"), answer, **fault)
    if not p.read().of(Kind.CRASH):
        if first.get("status") != "raised":
            raise HarnessError(f"crash point {point} was not reached ({how}); status {first.get('status')}")
        p.observations["refused"] = f"{ended(first)} (before {point}: the crash point was never reached)"
    return first


def crash(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Crash at ``point`` (SIGKILL at a barrier, or an exception once), recover by ``mode``, finish."""
    how, point, mode = args["how"], args["point"], args["mode"]
    path = f"crash:{how}@{point}/{mode}"
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER):
        return [p.judge.not_applicable(prop, path, why) for prop in (Property.EO, Property.PC, Property.LV)]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    crash_at(p, run, how, point, answer)
    status = run.recover("recover", mode, answer)
    status = run.to_completion(status, answer, "recover-answer")
    h = p.read()
    return [p.judge.effects_once(path, h, f"{how} at {point}, recovered by {mode}"),
            _prefix(p, run, path, h),
            p.judge.live(path, h, f"{how} at {point}, recovered by {mode}", p.target.cls.result(answer))]


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
    return [p.judge.effects_once(path, h, "killed while parked, answered after"),
            p.judge.prefix(path, h),
            p.judge.live(path, h, "killed while parked, answered after", p.target.cls.result(answer))]


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
    return [p.judge.gated_once(path, h, what), p.judge.effects_once(path, h, what)]


def answers(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """The same pause (by its handle) answered ``n`` times in a row with the same answer (retries)."""
    n = args["n"]
    path = f"retry:same-pause×{n}"
    if why := _needs(p, Capability.PAUSE, Capability.RETRY):
        return [p.judge.not_applicable(Property.CO, path, why)]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    handle = run.start().get("handle")
    for i in range(1, n + 1):
        run.answer(f"answer-{i}", handle, answer)
    return [p.judge.gated_once(path, p.read(), f"the same pause answered {n} times")]


def race(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """``k`` processes answer the same pause at once (released by a barrier), in fresh trials
    until the cell is decided (``probes.core.race``; the kit's trial judgement and the
    re-judging of a stored receipt: ``probes.kit.race``).

    Which racer loads the pause before another has answered it is up to the scheduler, so
    one trial is one sample. Each trial is a fresh run with its own history, judged on CO
    and LV; the cell stops when each property is decided (a violation in some trial, or a
    Wilson 95 % bound of the per-trial violation rate at most the threshold) or when its
    budget of trials or seconds is spent, and then a property with neither is undecided
    (``?``), never ✓. Every trial's history and duration are kept in
    ``observations.race.trials``.
    """
    import time

    from probes.core.race import RaceRule, stop_reason, trial_record
    from probes.kit import race as cell

    k = args["k"]
    path = cell.race_path(k)
    if why := _needs(p, Capability.PAUSE, Capability.CONCURRENT):
        return [p.judge.not_applicable(prop, path, why) for prop in cell.RACE_PROPERTIES]
    rule = RaceRule(args["threshold"], args["min_trials"], args["max_trials"], args["max_seconds"])
    answer = p.target.cls.answers[0]
    result = p.target.cls.result(answer)
    record: dict[str, Any] = {"rule": rule.to_json(), "trials": []}
    if result is not UNSET:  # the workflow's own result LV expects (kept for a re-judge)
        record["result"] = result
    p.observations["race"] = record
    judged: list[dict[Property, Verdict]] = []
    seconds: list[float] = []
    stopped: str | None = None
    while stopped is None:
        t = len(judged) + 1
        t0 = time.monotonic()
        sub, run = _isolated(p, f"trial-{t}")
        handle = run.start().get("handle")
        run.note(Kind.ANSWER, value=answer, detail={"racers": k})
        outs = _answer_at_once(p, run, k, handle, answer)
        sub.observations["racers"] = [{"status": o.get("status"), "error": o.get("error")} for o in outs]
        h = sub.read()
        judged.append(cell.judge_trial(p.judge.unrecorded(), k, t, h, result))
        trial = trial_record(t, h, time.monotonic() - t0)
        record["trials"].append(trial)
        seconds.append(trial["seconds"])  # the rounded value the receipt keeps: a re-judge stops at the same trial
        stopped = stop_reason(judged, seconds, rule)
    record["stopped"] = stopped
    return cell.cell_verdicts(p.judge, k, judged, rule, stopped)


def _answer_at_once(p: Probe, run: Run, k: int, handle: Any, answer: Any) -> list[dict[str, Any]]:
    """``k`` answers released together. With ``Capability.CLIENT`` the framework is deployed as it
    is meant to be: one executor (``serve``) runs the paused workflow while ``k`` clients ``send``
    the answer; otherwise each racer resumes the pause itself."""
    import threading

    from probes.core.barrier import run_racers

    if not p.target.cls.declares(Capability.CLIENT):
        return run_racers(k, lambda i, sock: run.op(f"racer-{i}", "resume", barrier=sock, handle=handle,
                                                    answer=answer), timeout=run.target.timeout)
    served: dict[str, Any] = {}

    def serve() -> None:
        try:
            served["status"] = run.op("executor", "serve")
        except BaseException as exc:  # re-raised below, in the protocol's thread
            served["error"] = exc

    executor = threading.Thread(target=serve, name="kit-executor", daemon=True)
    executor.start()
    try:
        outs = run_racers(k, lambda i, sock: run.op(f"client-{i}", "send", barrier=sock, handle=handle,
                                                    answer=answer), timeout=run.target.timeout)
    finally:
        executor.join(run.target.timeout)
    if executor.is_alive():
        raise HarnessError(f"the executor did not end within {run.target.timeout:g} s after {k} clients answered")
    if "error" in served:
        raise served["error"]
    run.obs.setdefault("executor", []).append({"status": served["status"].get("status"),
                                               "error": served["status"].get("error")})
    return outs


def fork(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Answer the same pause twice with different answers: the second must be served f(v2)."""
    if why := _needs(p, Capability.PAUSE, Capability.FORK):
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


def edit_invalid(name: str, required: list[str] | None) -> bool:
    """Is edit ``name`` invalid under the framework's declared state model (``required``: the keys
    with no default; ``None``: no model declared, so a structural edit is taken as invalid)?

    A type-valid edit keeps every key and its type: valid. A container replaced by a scalar
    changes a field's type: invalid. Dropping a key (or every key) is invalid only if a dropped
    key has no default.
    """
    kind, _, key = name.partition(":")
    if kind in ("flip", "plus-one", "other-string"):
        return False
    if kind in ("not-an-object", "scalar-for") or required is None:
        return True
    if kind == "empty-object":
        return bool(required)
    if kind == "drop":
        return key in required
    raise ValueError(f"unknown edit {name!r}")


def state_model(p: Probe, run: Run, doc: Any) -> tuple[list[str] | None, str]:
    """The framework's declared model of the durable document ``doc``, read in a child of ``run``
    (the adapter's ``state_required``): its keys without a default (``None``: no model declared),
    and the text a tamper verdict names it by. Kept in the probe's observations."""
    schema = run.op("schema", "state_required", doc=doc)
    required, model = schema.get("required"), str(schema.get("model"))
    p.observations["state_model"] = {"model": model, "required": required}
    return required, (f"state model {model}: no default for {required or 'no field'}" if required is not None else
                      "state model undeclared: structural edits taken as invalid")


def tamper(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Edit the newest durable document at the pause, then answer from a fresh process.

    Each edit has one of four outcomes (``checker.TamperOutcome``): refused loudly; accepted,
    behaviour unchanged; accepted, behaviour changed; accepted although invalid. Whether an
    edit is invalid is read from the framework's declared state model (the adapter's
    ``state_required``, computed in a child from the framework's own schema). An invalid edit
    is a CV question (✓ only if refused loudly before any effect); a type-valid one goes to
    the "undetected forgery" row. An accepted edit is also judged under LV.
    """
    kind = args["kind"]
    if why := _needs(p, Capability.PAUSE, Capability.TAMPER):
        return [p.judge.not_applicable(Property.CV, f"tamper:{kind}", why)]
    answer = p.target.cls.answers[0]
    probe0, run0 = _isolated(p, "shape")
    run0.start()
    paths = p.target.cls(run0.workdir, p.target.backend, run0.store).state_paths()
    if not paths:  # e.g. a backend whose storage the adapter does not read
        return [p.judge.not_applicable(Property.CV, f"tamper:{kind}",
                                       f"the adapter locates no durable JSON document on backend {p.target.backend}")]
    doc0 = p.target.cls(run0.workdir, p.target.backend, run0.store).load_state(paths[-1])
    required, shown = state_model(p, run0, doc0)
    edits = _edits(doc0, kind)[: args.get("limit") or None]
    verdicts = []
    for i, (name, edit) in enumerate(edits):
        sub, run = _isolated(p, f"edit-{i}")
        handle = run.start().get("handle")
        inst = p.target.cls(run.workdir, p.target.backend, run.store)
        target = inst.state_paths()[-1]
        inst.save_state(target, edit(copy.deepcopy(inst.load_state(target))))
        run.note(Kind.TAMPER, detail={"edit": name})
        run.answer("answer", handle, answer)  # the pause the caller was given; its state edited underneath
        verdicts += sub.judge.tampered(f"tamper:{name}", sub.read(), edit_invalid(name, required),
                                       p.target.cls.result(answer), shown)
    return verdicts


def savekill(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """SIGKILL inside the framework's own n-th save (enter / mid-write / exit), recover, finish; with
    ``cap`` (the smoke profile's 1), only the first ``cap`` saves a kill reaches at each point."""
    points, cap = args["points"], args.get("cap") or 0
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
            if cap and len(verdicts) - before >= 3 * cap:  # three verdicts (EO, PC, LV) per measured save
                break
            sub, run = _isolated(p, f"{pt}-{n}")
            status = run.start(park_at=f"{pt}#{n}")
            if status.get("status") == "paused":  # the n-th save happens after the pause
                status = run.answer("answer", status.get("handle"), a, park_at=f"{pt}#{n - _count(sub)}")
            if status.get("not_reached") or not sub.read().of(Kind.CRASH):
                continue  # this save has no such point (e.g. it writes nothing): nothing to measure
            status = run.to_completion(run.recover("recover", p.target.cls.recovery_modes[0], a), a,
                                       "recover-answer")
            h = sub.read()
            path = f"save-kill:{pt}#{n}"
            verdicts += [sub.judge.effects_once(path, h, f"killed in save {n} at {pt}"),
                         _prefix(sub, run, path, h),
                         sub.judge.live(path, h, f"killed in save {n} at {pt}", p.target.cls.result(a))]
        if len(verdicts) == before:  # never reached: say so rather than measure nothing silently
            verdicts.append(p.judge.not_applicable(Property.EO, f"save-kill:{pt}",
                                                   f"none of the {saves} saves of a clean run reached {pt} "
                                                   "(the adapter hooks no lower-level write)" if pt == "save.write"
                                                   else f"none of the {saves} saves of a clean run reached {pt}"))
    return verdicts


STALL_POINTS = ("s2.consumed", "s2.effect")  # inside the answered step: the answer taken, e2 not yet / just fired


def stall(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """A paused worker (Jepsen's SIGSTOP): the process answering the run is frozen inside the
    gated step (``point``), another process takes the run over by ``mode`` and finishes it, then
    the frozen one goes on; last, a fresh recovery looks at what is durable.

    A worker stalled by a GC pause, a swapped-out VM or a debugger looks dead to a supervisor,
    which hands its run to another process; when the first wakes up it is a superseded owner.
    Its late work must not fire an effect again, and its late writes must not land (a later
    recovery must find the run complete, not paused again or forked). EO, CO and LV are judged
    over the whole history; what the superseded process did when it went on (completed
    silently, or refused) and what the last recovery found are kept in observations.
    """
    point, mode = args["point"], args["mode"]
    path = f"stall:{point}/{mode}"
    props = (Property.EO, Property.CO, Property.LV)
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER):
        return [p.judge.not_applicable(prop, path, why) for prop in props]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    handle = run.start().get("handle")
    run.note(Kind.ANSWER, value=answer, detail={"addressed": handle is not None})
    with run.stopped("answer", "resume", point, handle=handle, answer=answer) as go_on:
        taken = run.recover("takeover", mode, answer, stopped=f"{run.name}/answer", at=point)
        taken = run.to_completion(taken, answer, "takeover-answer")
        late = go_on()
    late_status = late.get("status") if late.get("status") != "raised" else f"raised {late.get('error')}"
    h = p.read()
    # The last look recovers the same store with a history and oracles of its own: what it finds is
    # an observation (a run paused again, a wrong outcome, an effect fired again: a late write
    # landed), kept apart from the judged history, where recovering a finished run would add
    # whatever the framework does with one.
    look = Run(p.target, p.root, run.name, run.store, HistoryLog(p.root / "look-history.sqlite"),
               Ledger(p.root / "look-ledger.sqlite"), p.observations.setdefault("look", {}))
    after = look.to_completion(look.recover("after", mode, answer), answer, "after-answer")
    fired = Counter(e.effect for e in look.history.read().of(Kind.EFFECT))
    p.observations["stall"] = {"point": point, "mode": mode, "takeover": taken.get("status"),
                               "superseded": late_status, "after": after.get("status"),
                               "after_outcome": after.get("outcome"), "after_effects": dict(sorted(fired.items()))}
    what = f"stopped at {point}, taken over by {mode}; the stopped worker then {late_status}"
    return [p.judge.effects_once(path, h, what), p.judge.gated_once(path, h, what),
            p.judge.live(path, h, what, p.target.cls.result(answer))]


def delete(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Delete the run while a process that holds it is frozen inside the answered step (SIGSTOP at
    ``point``), then let that process go on; last, a recovery looks for the run.

    A user deletes a conversation while a worker still runs its last answer (LangGraph #8796's
    write-ownership clauses: a superseded owner's writes must not land). The worker may finish
    what is inside its step's body, but its late writes must not bring the deleted run back: the
    recovery must find nothing to resume. What it found is in the history (a pause asked again, a
    step run on: VO's ``write-after-delete``); EO and CO are judged over the whole history, so a
    resurrected run that fires an effect again shows there too.
    """
    point, mode = args["point"], args["mode"]
    path = f"delete:{point}/{mode}"
    props = (Property.EO, Property.CO)
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER, Capability.DELETE):
        return [p.judge.not_applicable(prop, path, why) for prop in props]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    handle = run.start().get("handle")
    run.note(Kind.ANSWER, value=answer, detail={"addressed": handle is not None})
    with run.stopped("answer", "resume", point, handle=handle, answer=answer) as go_on:
        run.note(Kind.DELETE, detail={"while": f"{run.name}/answer", "at": point})
        deleted = run.op("delete", "delete")
        # A holder whose run was deleted under it may wait for that run forever (DBOS's get_result polls
        # for the deleted status row): the framework's behaviour, recorded as hung, not a broken harness.
        run.hang_is_behaviour = True
        late = go_on()
        run.hang_is_behaviour = False
    run.note(Kind.RECOVER, detail={"mode": mode, "after": "the run was deleted"})
    mark = len(p.read())
    status = run.op("after", "recover", mode=mode, answer=answer)
    h = p.read()
    found = found_after_delete(h, h.events[mark:], f"{run.name}/answer")
    seen = ended(status) if found is not None else "nothing to resume"
    p.observations["delete"] = {"point": point, "mode": mode, "deleted": deleted.get("status"),
                                "holder": ended(late), "recovery found": seen, "recovery": ended(status)}
    what = f"deleted while frozen at {point}; the holder then {ended(late)}; a recovery then found {seen}"
    return [p.judge.effects_once(path, h, what), p.judge.gated_once(path, h, what)]


def change(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """The code changed between the pause and its answer (a deploy while a run waits for a human):
    the run is paused under the original workflow, then answered by a process running the changed
    one (``kind``, one of ``runtime.CODE_CHANGES``: a step appended or inserted, the step that ran
    removed, the paused step renamed, the two steps swapped).

    What the contract asks of a framework here is a correct continuation or a loud refusal, never
    a silent skip or a repeated effect. EO decides the effects over the whole history (nothing
    fired twice; on completion, ``e1``, ``e2`` and a step appended after the pause each exactly
    once: a silent skip leaves one unfired); a framework that refused loudly has no LV verdict
    (the refusal is its answer), one that did not is judged under LV (completed, with the
    workflow's own result). Like a tamper edit, the outcome is named: refused, continued, or
    what went wrong.
    """
    kind = args["kind"]
    path = f"change:{kind}"
    if why := _needs(p, Capability.PAUSE, Capability.CODE_CHANGE):
        return [p.judge.not_applicable(prop, path, why) for prop in (Property.EO, Property.LV)]
    if kind not in p.target.cls.code_changes:
        why = f"the adapter builds its workflow with {', '.join(p.target.cls.code_changes)} only, not {kind}"
        return [p.judge.not_applicable(prop, path, why) for prop in (Property.EO, Property.LV)]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    handle = run.start().get("handle")
    run.code = kind
    status = run.answer("answer", handle, answer)  # the ANSWER event's process runs the changed code
    if status.get("status") == "paused":  # the changed workflow asked again: answered once more
        status = run.answer("answer-again", status.get("handle"), answer)
    h = p.read()
    refused = h.of(Kind.REFUSE)
    expected = required_effects(kind)
    fired = h.effect_counts()
    # continued: completed with every required effect fired, and nothing fired twice
    continued = (status.get("status") == "completed" and set(expected) <= set(fired)
                 and all(n == 1 for n in fired.values()))
    outcome = (f"refused loudly ({refused[0].value})" if refused else
               "continued" if continued else f"ended {status.get('status')}")
    p.observations["change"] = {"kind": kind, "status": status.get("status"), "outcome": outcome,
                                "error": status.get("error"), "message": status.get("message"),
                                "effects": dict(sorted(fired.items()))}
    what = f"paused under the original code, answered under code with {kind}: {outcome}"
    verdicts = [p.judge.effects_once(path, h, what, expected)]
    if not refused:
        verdicts.append(p.judge.live(path, h, what, p.target.cls.result(answer)))
    return verdicts


def pause_twice(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """A step that asks twice, answered one answer at a time (two questions in one node, two
    approvals in one tool call): ``e2`` fires after the first answer, ``e2b`` after the second.

    A framework that re-runs the step from its top on the second answer runs the code between the
    pauses again, and ``e2`` fires twice although it was answered once: EO (every effect exactly
    once on completion) and CO (the first answer's gated effect once) say so; LV asks that the run
    completes with the second answer's result.
    """
    path = "pause-twice:one-answer-at-a-time"
    props = (Property.EO, Property.CO, Property.LV)
    if why := _needs(p, Capability.PAUSE, Capability.TWO_PAUSES):
        return [p.judge.not_applicable(prop, path, why) for prop in props]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    run.code = "pause-twice"  # every process of this run builds the step that asks twice
    first = run.answer("first", run.start().get("handle"), answer)
    status = first
    if first.get("status") == "paused":
        status = run.answer("second", first.get("handle"), answer)
    h = p.read()
    fired = h.effect_counts()
    p.observations["pause_twice"] = {"after_first": first.get("status"), "after_second": status.get("status"),
                                     "effects": dict(sorted(fired.items()))}
    what = (f"the step asked twice; after the first answer the run was {first.get('status')}, after the second "
            f"{status.get('status')}; effects {dict(sorted(fired.items()))}")
    return [p.judge.effects_once(path, h, what, ("e1", "e2", "e2b")), p.judge.gated_once(path, h, what),
            p.judge.live(path, h, what, p.target.cls.result(answer))]


# The protocols the nested protocol runs on the nested workflow, and the properties each decides (its
# n/a verdicts, where the adapter declares no nested workflow).
NESTED_RUNS: dict[str, tuple[Property, ...]] = {
    "baseline": (Property.EO, Property.LV), "crash": (Property.EO, Property.PC, Property.LV),
    "parkkill": (Property.EO, Property.PC, Property.LV), "stray": (Property.CO, Property.EO),
    "fork": (Property.FD,)}
NESTED_PREFIX = "nested:"


def nested(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """A protocol's cell (``args["of"]``: baseline, crash, parkkill, stray or fork) on the kit's workflow
    with its pausing step inside a nested workflow of the framework's own (a subgraph, a child
    workflow, a sub-agent: ``runtime.SHAPES["nested"]``). The bodies, effects and checkers are the
    two-step workflow's; what changes is where the framework keeps the nested run's state, so a
    framework that resumes a nested pause from the outer workflow's record alone shows it here: the
    outer step begun again (PC), ``e1`` again (EO), the answer lost (LV)."""
    of = args["of"]
    if of not in NESTED_RUNS:
        raise HarnessError(f"the nested protocol runs {', '.join(NESTED_RUNS)}, not {of!r}")
    if why := _needs(p, Capability.NESTED):
        return [p.judge.not_applicable(prop, f"{NESTED_PREFIX}{of}", why) for prop in NESTED_RUNS[of]]
    return PROTOCOLS[of](on_workflow(p, "nested", NESTED_PREFIX), args)


# --- a step with an error handler, an approval callback with an effect (issue 27 item 1) ---------------
# The cells of the handler and callback protocols: no fault, or a SIGKILL at a point of the handler's step or
# the callback's body (recovered by the cell's mode), or at the durable pause (answered from a fresh process).
HANDLER_CELLS = ("clean", *HANDLER_POINTS)
CALLBACK_CELLS = ("clean", "park-kill", "cb.effect")
HANDLER_EFFECTS = ("e1", "e2", "e_handler")
CALLBACK_EFFECTS = ("e1", "e_cb", "e2")


def _shaped(p: Probe, workflow: str, at: str, mode: str, needs: tuple[Capability, ...]) -> tuple[str, str | None]:
    """A cell's path (``<workflow>:clean``, ``<workflow>:park-kill``, ``<workflow>:kill@<point>/<mode>``) and
    why it is n/a, if it is (the capabilities ``needs``, and RECOVER for a crash cell)."""
    crashed = at not in ("clean", "park-kill")  # park-kill answers the durable pause: no recovery of the adapter's
    path = f"{workflow}:kill@{at}/{mode}" if crashed else f"{workflow}:{at}"
    caps = (Capability.PAUSE, *needs) + ((Capability.RECOVER,) if crashed else ())
    return path, _needs(p, *caps)


def _driven(p: Probe, run: Run, at: str, mode: str, answer: Any) -> dict[str, Any]:
    """Drive ``run`` through one cell: no fault (start, answer); ``park-kill`` (killed at the durable pause,
    answered from a fresh process); else killed at step point ``at`` and recovered by ``mode``."""
    if at == "clean":
        return run.to_completion(run.start(), answer, "answer")
    if at == "park-kill":
        run.start(park_at="kit.paused")
        run.note(Kind.RECOVER, detail={"mode": "answer the durable pause"})
        return run.answer("answer", None, answer)
    crash_at(p, run, "kill", at, answer)
    return run.to_completion(run.recover("recover", mode, answer), answer, "recover-answer")


def handler(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """The answered step fails after its effect and the framework's own error handler runs a step with an
    effect of its own (``runtime.SHAPES["handler"]``): no fault, or a SIGKILL at the handler's begin or
    effect, recovered by ``mode``.

    The contract's questions are EO's and CO's: the handler's effect fires once, and the failed step's
    effect (the gated ``e2``) fires no second time on recovery -- a framework that records the failure and
    the handler chosen resumes into the handler; one that did not runs the failed step again. LV asks that
    the run completes with the handler's result (the adapter's ``handled``, ``runtime.handled``'s by default)."""
    at, mode = args["at"], args["mode"]
    path, why = _shaped(p, "handler", at, mode, (Capability.HANDLER,))
    if why:
        return [p.judge.not_applicable(prop, path, why) for prop in (Property.EO, Property.CO, Property.LV)]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    run.code = "handler"  # every process of this run builds the workflow with the failing step and its handler
    done = _driven(p, run, at, mode, answer)
    h = p.read()
    fired = h.effect_counts()
    # what each run of the handler was handed as the failure (the exception's type, as the adapter passed it)
    handed = [e.detail.get("handed", "?") for e in h.of(Kind.STEP_BEGIN) if e.step == "h"]
    p.observations["handler"] = {"at": at, "mode": mode, "ended": ended(done), "effects": dict(sorted(fired.items())),
                                 "handed": handed}
    what = ("no fault" if at == "clean" else f"kill at {at}, recovered by {mode}") + \
           f"; s2 failed after its effect, the handler ran {len(handed)}x, handed {', '.join(handed) or 'nothing'}"
    return [p.judge.effects_once(path, h, what, HANDLER_EFFECTS), p.judge.gated_once(path, h, what),
            p.judge.live(path, h, what, p.target.cls.handled(answer))]


def callback(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """The framework asks for the approval through a callback or hook of its own that fires ``e_cb`` before
    the pause (``runtime.SHAPES["callback"]``): no fault, killed at the durable pause and answered from a
    fresh process, or killed just after the callback's effect and recovered by ``mode``.

    One approval should fire the callback's effect once (EO over ``e1``, ``e_cb``, ``e2``): a framework that
    calls the callback again when the answer arrives (LangGraph re-runs the node from its top) fires it
    twice, where its documentation may say so (then D). CO and LV as for the two-step workflow."""
    at, mode = args["at"], args["mode"]
    path, why = _shaped(p, "callback", at, mode, (Capability.CALLBACK,))
    if why:
        return [p.judge.not_applicable(prop, path, why) for prop in (Property.EO, Property.CO, Property.LV)]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    run.code = "callback"  # every process of this run builds the step whose approval a callback asks for
    done = _driven(p, run, at, mode, answer)
    h = p.read()
    fired = h.effect_counts()
    p.observations["callback"] = {"at": at, "mode": mode, "ended": ended(done), "effects": dict(sorted(fired.items()))}
    what = {"clean": "no fault", "park-kill": "killed while parked, answered after"}.get(
        at, f"kill at {at}, recovered by {mode}") + f"; the approval callback fired e_cb {fired.get('e_cb', 0)}x"
    return [p.judge.effects_once(path, h, what, CALLBACK_EFFECTS), p.judge.gated_once(path, h, what),
            p.judge.live(path, h, what, p.target.cls.result(answer))]
PARALLEL_RUNS: dict[str, tuple[Property, ...]] = {  # the parallel protocol's cells and what each decides
    "partly": (Property.EO, Property.CO, Property.LV), "crash": (Property.EO, Property.CO, Property.LV)}
PARALLEL = "parallel"  # the kit's workflow of two paused branches and a join (runtime.SHAPES)


def parallel_path(of: str, mode: str, point: str | None = None) -> str:
    """A parallel cell's path: ``parallel:partly/<mode>``, ``parallel:crash@<join point>/<mode>``."""
    return f"{PARALLEL}:{of}{'@' + point if point else ''}/{mode}"


def branch_answers(cls: type[Adapter]) -> dict[str, Any]:
    """Each branch's answer: the first branch the adapter's first answer, the second its other answer
    (so the join's outcome tells which answer reached which branch) unless that one declines, which
    would skip the branch's effect: then the first answer again."""
    from probes.kit.runtime import branches

    first, other = cls.answers
    names = branches()
    return {name: (first if i == 0 or other in cls.declines else other) for i, name in enumerate(names)}


def _asking(status: dict[str, Any]) -> str:
    """``ended`` of a status of the parallel workflow, a pause with the branches it asks."""
    return f"paused, asking {', '.join(status.get('pending') or []) or 'nothing named'}" \
        if status.get("status") == "paused" else ended(status)


def _answer_branch(run: Run, incarnation: str, status: dict[str, Any], branch: str, answer: Any,
                   **fault: Any) -> dict[str, Any]:
    """Answer parallel branch ``branch`` of the pause ``status`` gave, from a process of its own; the
    ANSWER event names the branch (CO counts each gate's answers to its own pause)."""
    run.note(Kind.ANSWER, value=answer, detail={"addressed": status.get("handle") is not None, "branch": branch,
                                                "workflow": PARALLEL})
    return run.op(incarnation, "resume_branch", handle=status.get("handle"), branch=branch, answer=answer, **fault)


def _answer_pending(run: Run, status: dict[str, Any], answers: dict[str, Any], label: str,
                    log: list[str]) -> dict[str, Any]:
    """While the run is paused, answer the first branch its status says is asking, each from a fresh
    process, as a user answering whatever the run asks; a branch asked again is answered again (the
    history then shows what that did). At most one round per branch and one more, so a run that asks
    forever ends here paused (LV says so)."""
    for i in range(len(answers) + 1):
        if status.get("status") != "paused":
            break
        pending = [b for b in status.get("pending") or [] if b in answers]
        if not pending:
            raise HarnessError(f"the parallel workflow paused without naming a branch it asks ({status}); the "
                               "adapter's paused status must say which branches are pending")
        status = _answer_branch(run, f"{label}-{pending[0]}" + (f"-{i + 1}" if i else ""), status, pending[0],
                                answers[pending[0]])
        log.append(f"{pending[0]} answered: {_asking(status)}")
    return status


def parallel(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Two parallel branches that each pause for an answer of their own, then a join
    (``runtime.SHAPES["parallel"]``): ``s1`` fires ``e1``, branch ``b1`` and ``b2`` each fire ``e_<branch>``
    after its answer, the join fires ``e_join`` and gives the outcome ``runtime.joined``.

    ``partly`` (``args["of"]``): the run starts (both branches ask), ``b1`` alone is answered by a process
    that then ends, and a fresh process recovers by ``mode``: ``b2`` must still be asking (asked again,
    not lost, not answered by itself), and its answer, in a fresh process, runs the join. ``crash``:
    both answered, each from a process of its own, the one that runs the join SIGKILLed at ``point``
    (``runtime.JOIN_POINTS``), recovered by ``mode`` and answered on whatever it asks. EO: every effect
    at most once, each exactly once on completion; CO: each branch's effect at most once, and only once
    that branch was answered (``Judge.gated_once`` with ``pauses``: fired with no answer to its own
    branch, the framework answered it by itself or with the other's answer); LV: the run completes with
    both answers joined (a lost branch: never completed, or EO's missing effect).
    """
    from probes.kit.runtime import JOIN_POINTS, parallel_effects

    of, mode, point = args["of"], args["mode"], args.get("point")
    if of not in PARALLEL_RUNS or (of == "crash") != (point in JOIN_POINTS):
        raise HarnessError(f"the parallel protocol runs partly or crash@<{'|'.join(JOIN_POINTS)}>, not {of} {point}")
    path = parallel_path(of, mode, point)
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER, Capability.PARALLEL):
        return [p.judge.not_applicable(prop, path, why) for prop in PARALLEL_RUNS[of]]
    answers = branch_answers(p.target.cls)
    first, second = list(answers)
    run = p.run("run")
    run.code = PARALLEL  # every process of this run builds the parallel workflow
    p.observations["workflow_shape"] = PARALLEL
    started = run.start()
    log = [f"started: {_asking(started)}"]
    fault = {"park_at": point} if point else {}
    status = _answer_branch(run, f"answer-{first}", started, first, answers[first], **fault)
    log.append(f"{first} answered: {_asking(status)}")
    if of == "crash" and not p.read().of(Kind.CRASH) and status.get("status") == "paused":
        status = _answer_branch(run, f"answer-{second}", status, second, answers[second], **fault)
        log.append(f"{second} answered: {_asking(status)}")
    if of == "crash" and not p.read().of(Kind.CRASH):
        if any(e.step == "join" for e in p.read().of(Kind.STEP_BEGIN)):  # the join ran and the kill missed it
            raise HarnessError(f"crash point {point} was not reached although the join ran; the run {_asking(status)}")
        # the framework never ran the join with both branches answered (it lost a branch, refused, or asks
        # again): its behaviour, judged with the recovery that follows
        log.append(f"the join never ran, so {point} was never reached")
    elif of == "crash":
        log.append(f"killed at {point}")
    status = run.recover("recover", mode, answers[second])
    log.append(f"recovered by {mode}: {_asking(status)}")
    status = _answer_pending(run, status, answers, "recover-answer", log)
    h = p.read()
    fired = dict(sorted(h.effect_counts().items()))
    p.observations["parallel"] = {"cell": of, "point": point, "mode": mode, "steps": log, "end": _asking(status),
                                  "effects": fired}
    what = "; ".join(log)
    gates = tuple(f"e_{b}" for b in answers)
    return [p.judge.effects_once(path, h, what, parallel_effects()),
            p.judge.gated_once(path, h, what, gates=gates, pauses={f"e_{b}": b for b in answers}),
            p.judge.live(path, h, what, p.target.cls.parallel_result(answers), gate=None)]


def _count(p: Probe) -> int:
    return len(p.read().of(Kind.PERSIST))


PROTOCOLS: dict[str, Callable[[Probe, dict[str, Any]], list[Verdict]]] = {
    "baseline": baseline, "crash": crash, "parkkill": parkkill, "stray": stray, "answers": answers,
    "race": race, "fork": fork, "tamper": tamper, "savekill": savekill, "stall": stall,
    "change": change, "pause_twice": pause_twice, "nested": nested, "delete": delete, "parallel": parallel,
    "handler": handler, "callback": callback,
}


def _partition(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    from probes.kit.partition import partition  # imported on use: that module builds on this one
    return partition(p, args)


PROTOCOLS["partition"] = _partition  # a racer cut off from its store mid-consume (probes.kit.partition)


def _exhaustive(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    from probes.kit.exhaustive import exhaustive  # imported on use: that module builds on this one
    return exhaustive(p, args)


PROTOCOLS["exhaustive"] = _exhaustive  # every crash point of a traced baseline (probes.kit.exhaustive)


def _rd(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    from probes.kit.rd import rd  # imported on use: that module builds on this one
    return rd(p, args)


PROTOCOLS["rd"] = _rd  # byte-identical copies of a crashed store, each recovered (probes.kit.rd)
CRASH_POINTS = STEP_POINTS
KILL_POINTS_IN_SAVE = SAVE_POINTS
