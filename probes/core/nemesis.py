"""Crash injection: exceptions inside tasks, and SIGKILL at named park points.

SIGKILL is synchronised with the point, never with a sleep: the victim runs until it
reaches the named park point, writes the point's name to a readiness pipe and sends
SIGKILL to itself, both without releasing the interpreter lock (``die_here``), so none of
its other threads moves on in between. The parent reads that line, reaps the process, and
recovery runs in a process of its own (``run_child``).

Park points are addressed as ``name`` (first hit) or ``name#n`` (n-th hit), through
the environment variable ``RC_PARK_AT`` of the child.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from probes import PROJECT_ROOT
from probes.core import forkserver
from probes.core.errors import HarnessError
from probes.core.portable import tail


class InjectedCrash(RuntimeError):
    """Raised by the nemesis inside a task to simulate a crash by exception."""


class FailOnce:
    """Raise ``InjectedCrash`` the first time a point is reached -- across processes.

    The 'already failed' fact is a marker file created with O_EXCL, so a recovery in a
    fresh interpreter does not fail again.
    """

    def __init__(self, marker_dir: Path | str) -> None:
        self.marker_dir = Path(marker_dir)
        self.marker_dir.mkdir(parents=True, exist_ok=True)

    def maybe_fail(self, point: str) -> None:
        try:
            fd = os.open(self.marker_dir / f"failed-{point}", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.close(fd)
        raise InjectedCrash(f"injected crash at {point}")


# --- park points (child side) ------------------------------------------------------

_hits: Counter[str] = Counter()


def _parse_targets(spec: str | None) -> dict[str, int]:
    targets: dict[str, int] = {}
    for item in filter(None, (spec or "").split(",")):
        name, _, nth = item.partition("#")
        targets[name] = int(nth or 1)
    return targets


def park(name: str) -> None:
    """A named place where this process is killed (``die_here``) when the parent targets it. No-op
    unless targeted."""
    targets = _parse_targets(os.environ.get("RC_PARK_AT"))
    if name not in targets:
        return
    _hits[name] += 1
    if _hits[name] != targets[name]:
        return
    die_here(f"{name}#{targets[name]}")


def die_here(point: str) -> None:
    """Tell the parent the point reached (the readiness pipe) and SIGKILL this process, holding the
    interpreter lock throughout (``ctypes.PyDLL`` calls do not release it), so no other thread of the
    framework runs a line of Python between the point and the death: a background writer finishing
    a save, the main loop starting the next step (measured: with the parent's SIGKILL a few
    milliseconds later, the same LangGraph save-kill cell gave ✓ in one run and U in another).
    The parent's own SIGKILL, on reading the line, finds the process dead or dying."""
    line = f"{point}\n".encode()
    try:
        libc = ctypes.PyDLL(None)
    except OSError:  # no C library to call with the lock held: the same, with a window
        os.write(int(os.environ["RC_READY_FD"]), line)
        os.kill(os.getpid(), signal.SIGKILL)
    else:
        libc.write(int(os.environ["RC_READY_FD"]), line, len(line))
        libc.kill(libc.getpid(), signal.SIGKILL)
    os._exit(70)  # not reached: the signal cannot be caught


# --- running a protocol step in a fresh interpreter (parent side) ---------------------


@dataclass
class ChildOutcome:
    """What happened to one child process."""

    status: str  # "ok" | "killed" | "error" | "timeout"
    result: Any = None
    parked_at: str | None = None
    returncode: int | None = None
    stderr_tail: str = ""
    seconds: float = 0.0
    forked: bool = False  # forked from a fork server (probes.core.forkserver), not a fresh interpreter

    @property
    def ended(self) -> str:
        """How it ended, for a message: the status, and for an error the exit status (a signal by name)."""
        if self.status != "error" or self.returncode is None:
            return self.status
        code = self.returncode
        how = f"signal {signal.Signals(-code).name}" if code < 0 and -code in signal.valid_signals() else f"exit {code}"
        return f"error ({how}{', forked from the fork server' if self.forked else ''})"

    def require_ok(self) -> Any:
        if self.status != "ok":
            raise HarnessError(f"child ended with status {self.ended}: {self.stderr_tail[-800:]}")
        return self.result

    def require_killed(self) -> None:
        if self.status != "killed":
            raise HarnessError(
                f"park point was never reached (status {self.status}); the kill did not happen: "
                f"{self.stderr_tail[-800:]}"
            )


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH", "")]))
    env.setdefault("PYTHONHASHSEED", "0")
    env.pop("RC_PARK_AT", None)
    env.pop("RC_PAUSE_AT", None)
    if extra:
        env.update(extra)
    return env


def run_child(
    target: str,
    args: Mapping[str, Any] | None = None,
    *,
    park_at: str | None = None,
    timeout: float = 120.0,
    env: Mapping[str, str] | None = None,
    python: str | None = None,
    preload: tuple[str, ...] = (),
) -> ChildOutcome:
    """Run ``module:function(**args)`` in a fresh interpreter; kill it at ``park_at``.

    The function's return value (JSON-serialisable) comes back in ``result``. With
    ``park_at`` set, the child is SIGKILLed as soon as it signals the park point.
    ``python`` runs it with another interpreter (a side environment's, see
    ``probes.core.envs``); the project root is on its ``PYTHONPATH`` either way.
    With ``preload`` (modules), the child is forked from a server that imported them once
    under the same environment (``probes.core.forkserver``), where that is safe.
    """
    with tempfile.TemporaryDirectory(prefix="rc-child-") as tmp:
        args_path = Path(tmp) / "args.json"
        result_path = Path(tmp) / "result.json"
        stderr_path = Path(tmp) / "stderr.txt"
        args_path.write_text(json.dumps(dict(args or {}), default=str))
        ready_r, ready_w = os.pipe()
        hold_r, hold_w = os.pipe()
        extra = {
            "RC_READY_FD": str(ready_w),
            "RC_HOLD_FD": str(hold_r),
            "RC_ARGS_PATH": str(args_path),
            "RC_RESULT_PATH": str(result_path),
        }
        if park_at:
            extra["RC_PARK_AT"] = park_at
        extra.update(env or {})
        started = time.monotonic()
        full_env = child_env(extra)
        server = forkserver.server_for(python or sys.executable, preload, full_env, PROJECT_ROOT) \
            if preload and forkserver.enabled() else None
        with open(stderr_path, "wb") as stderr:
            proc: subprocess.Popen | forkserver.ForkedChild
            if server is not None:
                proc = server.spawn(target, full_env, stderr.fileno(), ready_w, hold_r)
            else:
                proc = subprocess.Popen(
                    [python or sys.executable, "-m", "probes.core.child", target],
                    env=full_env,
                    pass_fds=(ready_w, hold_r),
                    stdin=subprocess.DEVNULL,
                    stdout=stderr,
                    stderr=stderr,
                    cwd=PROJECT_ROOT,
                )
        os.close(ready_w)
        os.close(hold_r)
        parked: str | None = None
        status = "ok"
        try:
            deadline = started + timeout
            buf = b""
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    status = "timeout"
                    proc.kill()
                    break
                readable, _, _ = select.select([ready_r], [], [], min(remaining, 0.5))
                if readable:
                    chunk = os.read(ready_r, 4096)
                    if chunk:
                        buf += chunk
                        if b"\n" in buf:
                            parked = buf.split(b"\n", 1)[0].decode()
                            with contextlib.suppress(ProcessLookupError):  # it killed itself (die_here)
                                os.kill(proc.pid, signal.SIGKILL)
                            status = "killed"
                            break
                        continue
                    # EOF: the child exited (or closed the pipe); wait for it below.
                    break
                if proc.poll() is not None:
                    break
            returncode = proc.wait(timeout=60)
        finally:
            os.close(ready_r)
            os.close(hold_w)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        stderr_tail = tail(stderr_path.read_text(errors="replace"), 60)  # whole lines: paths are never cut
        result = None
        if status == "ok":
            if returncode == 0 and result_path.exists():
                result = json.loads(result_path.read_text())
            else:
                status = "error"
        return ChildOutcome(status, result, parked, returncode, stderr_tail, time.monotonic() - started,
                            forked=server is not None)


# --- pause points: SIGSTOP a child at a named place, let it go on later --------------------


def pause(name: str) -> None:
    """A named place where the parent may freeze this process (SIGSTOP) and later let it go on.

    No-op unless ``RC_PAUSE_AT`` names it. Reached, it tells the parent (the readiness
    pipe) and blocks until the parent writes one byte to the hold pipe; in between the
    parent stops it. If the parent died, the pipe reaches EOF: leave.
    """
    targets = _parse_targets(os.environ.get("RC_PAUSE_AT"))
    if name not in targets:
        return
    _hits[name] += 1
    if _hits[name] != targets[name]:
        return
    os.write(int(os.environ["RC_READY_FD"]), f"{name}#{targets[name]}\n".encode())
    if os.read(int(os.environ["RC_HOLD_FD"]), 1) == b"":
        os._exit(70)


class PausedChild:
    """``module:function(**args)`` in a fresh interpreter, frozen with SIGSTOP at a pause point.

    Deterministic: ``stop()`` waits until the child has reached the pause point (its line
    on the readiness pipe), then sends SIGSTOP and waits until the kernel reports it
    stopped. ``resume()`` sends SIGCONT and releases the pause point; ``finish()`` waits for
    the end and reads the result. Leaving the ``with`` block kills a child still alive
    (SIGCONT, then SIGKILL), whatever happened.
    """

    def __init__(self, target: str, args: Mapping[str, Any] | None = None, *, pause_at: str,
                 env: Mapping[str, str] | None = None, python: str | None = None) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="rc-paused-")
        tmp = Path(self._tmp.name)
        self._result_path = tmp / "result.json"
        self._stderr_path = tmp / "stderr.txt"
        (tmp / "args.json").write_text(json.dumps(dict(args or {}), default=str))
        self._ready_r, ready_w = os.pipe()
        hold_r, self._hold_w = os.pipe()
        extra = {"RC_READY_FD": str(ready_w), "RC_HOLD_FD": str(hold_r), "RC_ARGS_PATH": str(tmp / "args.json"),
                 "RC_RESULT_PATH": str(self._result_path), "RC_PAUSE_AT": pause_at, **(env or {})}
        self.started = time.monotonic()
        with open(self._stderr_path, "wb") as stderr:
            self.proc = subprocess.Popen([python or sys.executable, "-m", "probes.core.child", target], env=child_env(extra),
                                         pass_fds=(ready_w, hold_r), stdin=subprocess.DEVNULL, stdout=stderr,
                                         stderr=stderr, cwd=PROJECT_ROOT)
        os.close(ready_w)
        os.close(hold_r)
        self.paused_at: str | None = None

    def __enter__(self) -> "PausedChild":
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def _stderr(self) -> str:
        return self._stderr_path.read_text(errors="replace")[-4000:] if self._stderr_path.exists() else ""

    def stop(self, timeout: float = 120.0) -> str:
        """Wait for the pause point, then SIGSTOP the child; returns the point reached."""
        deadline = time.monotonic() + timeout
        buf = b""
        while b"\n" not in buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise HarnessError(f"the child did not reach its pause point in {timeout:.0f} s: {self._stderr()}")
            readable, _, _ = select.select([self._ready_r], [], [], min(remaining, 0.5))
            if readable:
                chunk = os.read(self._ready_r, 4096)
                if not chunk:
                    raise HarnessError(f"the child ended before its pause point (rc {self.proc.wait()}): "
                                       f"{self._stderr()}")
                buf += chunk
        os.kill(self.proc.pid, signal.SIGSTOP)
        _pid, status = os.waitpid(self.proc.pid, os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            raise HarnessError(f"the child did not stop (wait status {status}): {self._stderr()}")
        self.paused_at = buf.split(b"\n", 1)[0].decode()
        return self.paused_at

    def resume(self) -> None:
        """SIGCONT the child and release its pause point: it goes on from there."""
        os.kill(self.proc.pid, signal.SIGCONT)
        os.write(self._hold_w, b"g")

    def finish(self, timeout: float = 120.0) -> ChildOutcome:
        """Wait for the child to end; its outcome (status "timeout" and killed if it does not)."""
        try:
            returncode = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return ChildOutcome("timeout", None, self.paused_at, None, self._stderr(),
                                time.monotonic() - self.started)
        result, status = None, "error"
        if returncode == 0 and self._result_path.exists():
            result, status = json.loads(self._result_path.read_text()), "ok"
        return ChildOutcome(status, result, self.paused_at, returncode, self._stderr(),
                            time.monotonic() - self.started)

    def kill(self) -> None:
        """End the child if it is still there (SIGCONT first: a stopped process takes SIGKILL only once
        running), close the pipes, remove the scratch directory. Idempotent."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGCONT)
                os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for fd in (self._ready_r, self._hold_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._ready_r = self._hold_w = -1
        self._tmp.cleanup()
