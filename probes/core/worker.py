"""Long-lived worker processes, released together through a barrier.

Why this exists: a race between *processes* is only informative when the racers start
together, and starting a fresh interpreter per racer per repetition costs seconds
(importing a framework), which both slows a grid to hours and smears the start.
So racers are started once, import once, and then race every repetition of a cell:

1. the parent sends each worker its task (``prepare``); the worker does everything
   that is not the race (build the app, open the store) and answers ``ready``;
2. when *every* worker is ready the parent releases them all (``go``) in one tight
   loop -- a barrier, coordinated through pipes, never a sleep;
3. each worker runs its racing step and answers ``done`` with a JSON value.

If a worker cannot get ready, no worker is released (``skip``): a partial race would
measure something else. A worker that dies (EOF on its pipe) or does not answer by
the deadline (it is SIGKILLed) is reported as an outcome with status ``crashed`` /
``timeout`` and the tail of its stderr; the pool starts a fresh worker at that slot
before the next round. Those are harness failures for the caller to report -- a
worker's *measured* behaviour (say, the framework raising) is the handler's job to
catch and return as data.

Wire: two dedicated pipes per worker, one JSON object per line. The worker's stdout
and stderr go to a log file, so framework chatter cannot corrupt the protocol.

Handlers: ``target`` names ``module:factory``; ``factory(**init)`` returns an object
with ``prepare(task) -> JSON`` and ``go() -> JSON`` (see ``Handler``).
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

from probes import PROJECT_ROOT

_CMD_FD = "RC_WORKER_CMD_FD"
_REPLY_FD = "RC_WORKER_REPLY_FD"
_TARGET = "RC_WORKER_TARGET"
_INIT = "RC_WORKER_INIT"
_IDLE = "RC_WORKER_IDLE_S"


class Handler(Protocol):
    """What a worker runs: a preparation outside the race, then the racing step."""

    def prepare(self, task: dict[str, Any]) -> Any: ...

    def go(self) -> Any: ...


@dataclass
class WorkerOutcome:
    """What one worker did in one round.

    status: ``ok`` (value is the handler's return), ``error`` (the handler raised:
    ``error`` holds the traceback), ``crashed`` (the process died), ``timeout`` (no
    answer by the deadline; the process was killed), ``skipped`` (prepared, but the
    round was not released because another worker failed to get ready).
    """

    worker: int
    status: str
    phase: str  # "prepare" or "go": where the round ended for this worker
    value: Any = None
    prepared: Any = None
    error: str = ""
    pid: int | None = None
    released_at: float | None = None  # time.monotonic() in the worker (system-wide clock)
    finished_at: float | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class RaceResult:
    released: bool
    outcomes: list[WorkerOutcome]
    release_spread_s: float | None = None  # max - min of the workers' release instants

    @property
    def failures(self) -> list[WorkerOutcome]:
        return [o for o in self.outcomes if o.status not in ("ok", "skipped")]


# --- parent side ---------------------------------------------------------------------


class _Worker:
    """One worker process and its two pipes (parent's view)."""

    def __init__(self, index: int, target: str, init: Mapping[str, Any], log_dir: Path,
                 env: Mapping[str, str] | None, idle_s: float) -> None:
        from probes.core.nemesis import child_env

        self.index = index
        self.log_path = log_dir / f"worker-{index}.log"
        cmd_r, self.cmd_w = os.pipe()
        self.reply_r, reply_w = os.pipe()
        extra = {_CMD_FD: str(cmd_r), _REPLY_FD: str(reply_w), _TARGET: target,
                 _INIT: json.dumps(dict(init)), _IDLE: str(idle_s)}
        extra.update(env or {})
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "probes.core.worker"],
                env=child_env(extra), pass_fds=(cmd_r, reply_w), stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, cwd=PROJECT_ROOT,
            )
        os.close(cmd_r)
        os.close(reply_w)
        self._buf = b""
        self.started = False
        self.log_mark = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: Mapping[str, Any]) -> bool:
        try:
            os.write(self.cmd_w, (json.dumps(message) + "\n").encode())
            return True
        except (BrokenPipeError, OSError):
            return False

    def take_line(self) -> dict[str, Any] | None:
        if b"\n" not in self._buf:
            return None
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def feed(self) -> bool:
        """Read what is available; False on EOF (the worker is gone)."""
        try:
            chunk = os.read(self.reply_r, 65536)
        except OSError:
            return False
        if not chunk:
            return False
        self._buf += chunk
        return True

    def mark_log(self) -> None:
        try:
            self.log_mark = self.log_path.stat().st_size
        except OSError:
            self.log_mark = 0

    def log_tail(self, limit: int = 4000) -> str:
        """What the worker wrote since the round started (bounded)."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self.log_mark)
                data = f.read()
        except OSError:
            return ""
        return data.decode(errors="replace")[-limit:]

    def kill(self) -> None:
        if self.alive():
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
            pass
        self.close_fds()

    def close_fds(self) -> None:
        for fd in (self.cmd_w, self.reply_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self.cmd_w = self.reply_r = -1

    def stop(self, grace: float = 5.0) -> None:
        if self.alive():
            self.send({"op": "exit"})
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        self.kill()


def _collect(workers: Sequence[_Worker], expect: str, deadline: float) -> dict[int, tuple[str, dict | None]]:
    """Wait for one reply from each worker until the deadline.

    Returns {index: (status, message)} with status ``reply`` / ``eof`` / ``timeout``.
    """
    out: dict[int, tuple[str, dict | None]] = {}
    pending = {w.reply_r: w for w in workers}
    for w in workers:  # a reply may already be buffered
        msg = w.take_line()
        if msg is not None:
            out[w.index] = ("reply", msg)
            pending.pop(w.reply_r, None)
    while pending:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        readable, _, _ = select.select(list(pending), [], [], min(remaining, 1.0))
        for fd in readable:
            w = pending[fd]
            if not w.feed():
                out[w.index] = ("eof", None)
                del pending[fd]
                continue
            msg = w.take_line()
            if msg is not None:
                out[w.index] = ("reply", msg)
                del pending[fd]
    for w in pending.values():
        out[w.index] = ("timeout", None)
    return out


_LIVE_POOLS: "weakref.WeakSet[WorkerPool]" = weakref.WeakSet()


@atexit.register
def _close_live_pools() -> None:  # pragma: no cover - runs at interpreter exit
    for pool in list(_LIVE_POOLS):
        pool.close()


class WorkerPool:
    """A fixed set of long-lived worker processes running the same handler.

    ``race(tasks, timeout)`` gives ``tasks[i]`` to worker ``i``, waits until every one
    is ready, releases them together and collects their answers. Dead or killed
    workers are replaced at the start of the next round (their start-up is not part of
    any race). The pool closes at interpreter exit; workers also exit on their own when
    the parent goes away (EOF) or after ``idle_s`` seconds without a command.
    """

    def __init__(self, target: str, size: int, *, init: Mapping[str, Any] | None = None,
                 start_timeout: float = 300.0, env: Mapping[str, str] | None = None,
                 idle_s: float = 900.0, log_dir: Path | None = None) -> None:
        self.target = target
        self.init = dict(init or {})
        self.start_timeout = start_timeout
        self.env = dict(env or {})
        self.idle_s = idle_s
        self._tmp = None
        if log_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="rc-workers-")
            log_dir = Path(self._tmp.name)
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.workers: list[_Worker | None] = [None] * size
        self.spawned = 0
        self.closed = False
        _LIVE_POOLS.add(self)

    @property
    def size(self) -> int:
        return len(self.workers)

    def resize(self, size: int) -> None:
        """Grow the pool (workers start lazily, at the next round that needs them)."""
        if size > len(self.workers):
            self.workers.extend([None] * (size - len(self.workers)))

    def _ensure(self, n: int) -> list[WorkerOutcome]:
        """Make workers 0..n-1 alive and started; failures to start are outcomes."""
        fresh: list[_Worker] = []
        for i in range(n):
            w = self.workers[i]
            if w is None or not w.alive() or w.cmd_w < 0:
                if w is not None:
                    w.kill()
                w = _Worker(i, self.target, self.init, self.log_dir, self.env, self.idle_s)
                self.workers[i] = w
                self.spawned += 1
                fresh.append(w)
        if not fresh:
            return []
        for w in fresh:
            w.mark_log()
        replies = _collect(fresh, "started", time.monotonic() + self.start_timeout)
        failed = []
        for w in fresh:
            status, msg = replies[w.index]
            if status == "reply" and msg and msg.get("ok") == "started":
                w.started = True
                continue
            if status == "timeout":
                w.kill()
            else:
                w.kill()
            detail = (msg or {}).get("error", "") if status == "reply" else ""
            failed.append(WorkerOutcome(w.index, "timeout" if status == "timeout" else "crashed", "start",
                                        error=(detail + "\n" + w.log_tail()).strip(), pid=w.pid))
        return failed

    def start(self, n: int | None = None) -> list[WorkerOutcome]:
        """Start workers ahead of the first round (optional: rounds start them too)."""
        return self._ensure(self.size if n is None else n)

    def race(self, tasks: Sequence[Mapping[str, Any]], timeout: float) -> RaceResult:
        """Prepare every worker, release all of them at once, collect the answers.

        ``timeout`` bounds each phase (getting ready; racing) for every worker.
        """
        if self.closed:
            raise RuntimeError("worker pool is closed")
        n = len(tasks)
        if n > self.size:
            self.resize(n)
        start_failures = self._ensure(n)
        if start_failures:
            failed = {o.worker for o in start_failures}
            outcomes = start_failures + [
                WorkerOutcome(i, "skipped", "start") for i in range(n) if i not in failed]
            return RaceResult(False, sorted(outcomes, key=lambda o: o.worker))
        workers = [self.workers[i] for i in range(n)]
        assert all(w is not None for w in workers)
        ws: list[_Worker] = workers  # type: ignore[assignment]
        for w in ws:
            w.mark_log()
        for w, task in zip(ws, tasks):
            w.send({"op": "prepare", "task": dict(task)})
        ready = _collect(ws, "ready", time.monotonic() + timeout)
        outcomes: dict[int, WorkerOutcome] = {}
        prepared: dict[int, Any] = {}
        for w in ws:
            status, msg = ready[w.index]
            if status == "reply" and msg and msg.get("ok") == "ready":
                prepared[w.index] = msg.get("value")
            else:
                outcomes[w.index] = self._failure(w, status, msg, "prepare")
        if outcomes:  # someone is not ready: release nobody
            for w in ws:
                if w.index in prepared:
                    w.send({"op": "skip"})
            skipped = _collect([w for w in ws if w.index in prepared], "skipped", time.monotonic() + timeout)
            for w in ws:
                if w.index in prepared:
                    status, msg = skipped[w.index]
                    if status == "reply":
                        outcomes[w.index] = WorkerOutcome(w.index, "skipped", "prepare", prepared=prepared[w.index],
                                                          pid=w.pid)
                    else:
                        outcomes[w.index] = self._failure(w, status, msg, "prepare")
            return RaceResult(False, [outcomes[i] for i in sorted(outcomes)])
        # The barrier: everyone is ready; release them all in one tight loop.
        for w in ws:
            w.send({"op": "go"})
        done = _collect(ws, "done", time.monotonic() + timeout)
        for w in ws:
            status, msg = done[w.index]
            if status == "reply" and msg and msg.get("ok") == "done":
                outcomes[w.index] = WorkerOutcome(w.index, "ok", "go", value=msg.get("value"),
                                                  prepared=prepared[w.index], pid=w.pid,
                                                  released_at=msg.get("released_at"),
                                                  finished_at=msg.get("finished_at"))
            else:
                o = self._failure(w, status, msg, "go")
                o.prepared = prepared[w.index]
                outcomes[w.index] = o
        releases = [o.released_at for o in outcomes.values() if o.released_at is not None]
        spread = (max(releases) - min(releases)) if releases else None
        return RaceResult(True, [outcomes[i] for i in sorted(outcomes)], spread)

    def call(self, task: Mapping[str, Any], timeout: float) -> WorkerOutcome:
        """One worker, one round: prepare then go (a pool of one is a remote call)."""
        return self.race([task], timeout).outcomes[0]

    def _failure(self, w: _Worker, status: str, msg: dict | None, phase: str) -> WorkerOutcome:
        if status == "reply":  # the handler raised: the worker is still usable
            return WorkerOutcome(w.index, "error", phase, error=str((msg or {}).get("error", msg)), pid=w.pid,
                                 released_at=(msg or {}).get("released_at"))
        if status == "timeout":
            w.kill()
            return WorkerOutcome(w.index, "timeout", phase, error=w.log_tail(), pid=w.pid)
        w.kill()  # EOF: reap it
        return WorkerOutcome(w.index, "crashed", phase,
                             error=f"exit status {w.proc.returncode}\n{w.log_tail()}".strip(), pid=w.pid)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for w in self.workers:
            if w is not None:
                w.stop()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- worker side -----------------------------------------------------------------------


def _resolve(target: str):
    module_name, _, attr = target.partition(":")
    if not attr:
        raise SystemExit(f"worker target must be 'module:factory', got {target!r}")
    return getattr(importlib.import_module(module_name), attr)


def _serve() -> int:
    cmd_fd = int(os.environ[_CMD_FD])
    reply_fd = int(os.environ[_REPLY_FD])
    idle_s = float(os.environ.get(_IDLE, "900"))

    def send(message: Mapping[str, Any]) -> None:
        os.write(reply_fd, (json.dumps(message, default=str) + "\n").encode())

    try:
        handler: Handler = _resolve(os.environ[_TARGET])(**json.loads(os.environ.get(_INIT, "{}")))
    except BaseException:
        send({"ok": "failed", "error": traceback.format_exc()})
        return 3
    send({"ok": "started", "pid": os.getpid()})
    buf = b""
    while True:
        while b"\n" not in buf:
            readable, _, _ = select.select([cmd_fd], [], [], idle_s)
            if not readable:
                return 0  # idle for too long: the parent will start a fresh worker if needed
            chunk = os.read(cmd_fd, 65536)
            if not chunk:
                return 0  # the parent went away
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        message = json.loads(line)
        op = message.get("op")
        if op == "exit":
            return 0
        if op == "prepare":
            try:
                send({"ok": "ready", "value": handler.prepare(message["task"])})
            except Exception:
                send({"ok": "error", "error": traceback.format_exc()})
        elif op == "go":
            released = time.monotonic()
            try:
                value = handler.go()
                send({"ok": "done", "value": value, "released_at": released, "finished_at": time.monotonic()})
            except Exception:
                send({"ok": "error", "error": traceback.format_exc(), "released_at": released})
        elif op == "skip":
            send({"ok": "skipped"})
        else:
            send({"ok": "error", "error": f"unknown op {op!r}"})


if __name__ == "__main__":
    sys.exit(_serve())
