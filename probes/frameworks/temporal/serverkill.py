"""Temporal's own protocol: the server, not a worker, is killed (SIGKILL) and restarted on its file.

The kit's crashes kill the processes that execute the workflow; an engine whose durable state
lives in a server has a second process to lose. The campaign's dev server
(``probes.frameworks.temporal.server``) is SIGKILLed -- no shutdown of any kind -- and started again on the
same SQLite file and ports, at a place fixed by a barrier or between operations: the cells are
deterministic. ``server-kill:s1.effect``: the worker is held (alive) after s1's body fired its
effect, before it reports the outcome; the server dies and comes back, the worker goes on (EO,
PC, LV). ``server-kill:paused``: the run waits at its pause, the server dies, and after the
restart the pause is answered (EO, PC, LV). ``server-kill:completed``: the run has completed,
the server dies, and after the restart a new worker finds the run (its recorded outcome must
come back, s2 not run again) and a stray answer arrives (CO, EO, LV).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
from typing import Any

from probes.core.checker import Verdict
from probes.core.errors import HarnessError
from probes.core.history import Kind
from probes.kit.protocols import Probe, Run, _isolated
from probes.frameworks.temporal.server import RUNNING
from probes.frameworks.temporal.worker import ADDRESS


def _kill_server(p: Probe, run: Run, when: str) -> None:
    server = RUNNING.get(dict(p.target.environ).get(ADDRESS, ""))
    if server is None:
        raise HarnessError("server-kill: this process started no Temporal dev server at the adapter's address")
    run.note(Kind.CRASH, detail={"how": "SIGKILL", "at": when, "victim": "server"})
    server.crash_and_restart()
    p.observations.setdefault("server_restarts", []).append(when)


def _in_activity(p: Probe, run: Run) -> dict[str, Any]:
    """Start the run with its worker held after s1's body (``start_held``); kill and restart the
    server while it is held; release it; return the start's status."""
    tmp = tempfile.mkdtemp(prefix="rcb-", dir="/tmp")
    path, box = os.path.join(tmp, "b.sock"), {}
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    listener.settimeout(p.target.timeout)

    def start() -> None:
        try:
            box["status"] = run.op("start", "start_held", step="s1", barrier_at=path)
        except BaseException as exc:  # re-raised below, in the protocol's thread
            box["error"] = exc
    run.note(Kind.START)
    worker = threading.Thread(target=start, name="held-worker", daemon=True)
    worker.start()
    try:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            raise HarnessError("server-kill: the worker never reached the hold after s1") from None
        with conn:
            conn.settimeout(p.target.timeout)
            if conn.recv(16).strip() != b"ready":
                raise HarnessError("server-kill: the held worker did not signal ready")
            _kill_server(p, run, "s1's effect fired, its outcome unreported, the worker alive")
            run.note(Kind.RECOVER, detail={"mode": "the server restarted on its file; the same worker goes on"})
            conn.sendall(b"go")
        worker.join(p.target.timeout)
    finally:
        listener.close()
        shutil.rmtree(tmp, ignore_errors=True)
    if "error" in box:
        raise box["error"]
    if worker.is_alive():
        raise HarnessError(f"server-kill: the held worker did not end within {p.target.timeout:g} s")
    return box["status"]


def serverkill(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    cls = p.target.cls
    answer, other = cls.answers
    sub, run = _isolated(p, "in-activity")
    run.to_completion(_in_activity(p, run), answer, "answer")
    h, path, what = sub.read(), "server-kill:s1.effect", "server killed while s1's outcome was unreported"
    verdicts = [sub.judge.effects_once(path, h, what), sub.judge.prefix(path, h),
                sub.judge.live(path, h, what, cls.result(answer))]

    sub, run = _isolated(p, "paused")
    handle = run.start().get("handle")
    _kill_server(p, run, "the run paused")
    run.note(Kind.RECOVER, detail={"mode": "the server restarted on its file"})
    run.answer("answer", handle, answer)
    h, path, what = sub.read(), "server-kill:paused", "server killed while the run was paused, answered after"
    verdicts += [sub.judge.effects_once(path, h, what), sub.judge.prefix(path, h),
                 sub.judge.live(path, h, what, cls.result(answer))]

    sub, run = _isolated(p, "completed")
    run.to_completion(run.start(), answer, "answer")
    _kill_server(p, run, "the run completed")
    run.recover("recover", cls.recovery_modes[0], answer)  # a new worker: the run's recorded outcome
    run.answer("stray", None, other)
    h, path, what = sub.read(), "server-kill:completed", "server killed after completion, recovered and answered again"
    return verdicts + [sub.judge.gated_once(path, h, what), sub.judge.effects_once(path, h, what),
                       sub.judge.live(path, h, what, cls.result(answer))]
