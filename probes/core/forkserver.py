"""Fresh processes without the import bill: a fork server per (interpreter, modules, environment).

Almost all of a kit operation's wall time is its interpreter importing the framework (about 2 s
for LangGraph with both savers), not the operation. A fork server is an interpreter that imports
those modules once, with the campaign's environment, and then forks one child per operation: the
child starts from the state a fresh interpreter has right after the same imports (no framework
object was ever built in the server, no store opened, no park point counted; ``random`` reseeds
itself at fork) and runs ``probes.core.child`` exactly as a fresh interpreter would. The parent's
protocol is unchanged: the same readiness and hold pipes, the same SIGKILL at a park point, the
same result file.

A server is used only where forking is safe: after its imports the server must have one thread
(``/proc/self/task``), else it says so and every operation of that key runs in a fresh
interpreter as before (``ForkServer.unsafe``). ``RC_FORK_SERVER=0`` turns servers off for a run.

A server leaves when its control socket closes (the parent ended, however it ended) or on SIGTERM,
killing and reaping the children it forked first; a child also dies with its server
(``PR_SET_PDEATHSIG``). ``stop_all()`` (at exit) stops every server and waits for it.

Wire: one ``SOCK_SEQPACKET`` control socket per server. A request is a JSON message (target and
the operation's own environment) with four descriptors: the operation's reply socket, its stderr
file, the readiness pipe's write end and the hold pipe's read end. The server replies on the
operation's socket with the child's pid, and later with its wait status.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Mapping

# A BLAS library starts a thread pool when numpy is imported (OpenBLAS: one thread per core), and a
# process with threads must not fork: the server imports with that pool at one thread, so a
# framework that imports numpy (CrewAI) can be served. Its children inherit it; none of the
# workloads does linear algebra.
SERVER_ONLY = {"OPENBLAS_NUM_THREADS": "1"}
PER_OPERATION = ("RC_READY_FD", "RC_HOLD_FD", "RC_ARGS_PATH", "RC_RESULT_PATH", "RC_PARK_AT", "RC_PAUSE_AT")
OFF_ENV = "RC_FORK_SERVER"
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """SIGKILL this process when its parent ends (Linux); a no-op elsewhere."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def enabled() -> bool:
    return os.environ.get(OFF_ENV, "1") != "0" and sys.platform.startswith("linux")


# --- parent side ----------------------------------------------------------------------

class ForkServer:
    """One server: ``python`` with ``modules`` imported under ``env``."""

    def __init__(self, python: str, modules: tuple[str, ...], env: Mapping[str, str], cwd: Path) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control, self.lock = ours, threading.Lock()
        self.busy = 0  # children forked and not yet reaped: a busy server is never stopped to make room
        self.proc = subprocess.Popen([python, "-m", "probes.core.forkserver", str(theirs.fileno()), *modules],
                                     env={**SERVER_ONLY, **env}, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                     cwd=cwd)
        theirs.close()
        ready = json.loads(self.control.recv(65536) or b'{"unsafe": "the fork server ended before it was ready"}')
        self.unsafe: str | None = ready.get("unsafe")
        if self.unsafe:
            self.stop()

    def spawn(self, target: str, env: Mapping[str, str], stderr_fd: int, ready_w: int, hold_r: int
              ) -> "ForkedChild":
        """Fork a child running ``target`` under ``env`` (the operation's full environment: the
        server's is the same but for the per-operation variables, which the child sets)."""
        reply, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        own = {k: env[k] for k in PER_OPERATION if k in env}
        message = json.dumps({"target": target, "env": own}).encode()
        try:
            with self.lock:
                socket.send_fds(self.control, [message], [theirs.fileno(), stderr_fd, ready_w, hold_r])
        finally:
            theirs.close()
        pid = json.loads(reply.recv(4096) or b"{}").get("pid")
        if not pid:
            reply.close()
            raise OSError("the fork server did not start the child (it ended?)")
        with _servers_lock:
            self.busy += 1
        return ForkedChild(int(pid), reply, self)

    def stop(self) -> None:
        """Stop the server and, before it exits, every child it forked that is still running (SIGTERM:
        the server kills and reaps them); SIGKILL if it has not ended within 30 s."""
        self.control.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.wait()


class ForkedChild:
    """A forked operation, with what ``run_child`` uses of ``subprocess.Popen``: pid, poll, kill, wait."""

    def __init__(self, pid: int, reply: socket.socket, server: ForkServer) -> None:
        self.pid, self._reply, self._server, self.returncode = pid, reply, server, None

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._reply], [], [], 0)[0]:
            self._read_status()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._reply], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(f"forked child {self.pid}", timeout or 0)
            self._read_status()
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def _read_status(self) -> None:
        message = self._reply.recv(4096)
        self._reply.close()
        # no message: the server ended (stopped at exit) and its child with it (PR_SET_PDEATHSIG)
        self.returncode = decode_status(json.loads(message)["status"]) if message else -signal.SIGKILL
        with _servers_lock:
            self._server.busy -= 1


_servers: dict[tuple, ForkServer] = {}
_servers_lock = threading.Lock()


MAX_SERVERS = 4  # live servers kept; the least recently used beyond it is stopped


def server_for(python: str, modules: tuple[str, ...], env: Mapping[str, str], cwd: Path) -> ForkServer | None:
    """The running server for this key (started on first use), or None when forking is not safe for it."""
    base = {k: v for k, v in env.items() if k not in PER_OPERATION}
    key = (python, modules, tuple(sorted(base.items())))
    with _servers_lock:
        server = _servers.pop(key, None)
        if server is None or (server.proc.poll() is not None and not server.unsafe):
            server = ForkServer(python, modules, base, cwd)
        _servers[key] = server  # last: the most recently used
        live = [k for k, s in _servers.items() if not s.unsafe]
        for old in live[:max(0, len(live) - MAX_SERVERS)]:
            if not _servers[old].busy:
                _servers.pop(old).stop()
    return None if server.unsafe else server


def stop_all() -> None:
    with _servers_lock:
        for server in _servers.values():
            if not server.unsafe:
                server.stop()
        _servers.clear()


atexit.register(stop_all)


def decode_status(status: int) -> int:
    """A wait status as ``subprocess`` reports a return code (negative: killed by that signal)."""
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


# --- server side ----------------------------------------------------------------------

def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _child(request: dict, fds: list[int]) -> None:
    """In the forked child: become the operation's process, run it, never return."""
    reply, stderr_fd, ready_w, hold_r = fds
    code = 1
    try:
        os.close(reply)
        _die_with_parent()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(stderr_fd, 1)
        os.dup2(stderr_fd, 2)
        os.environ.update(request["env"])
        os.environ.update(RC_READY_FD=str(ready_w), RC_HOLD_FD=str(hold_r))
        from probes.core import child

        code = child.main(["probes.core.child", request["target"]])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _stop_children(waiting: dict[int, socket.socket]) -> None:
    """SIGKILL every child still running and reap it: the server never leaves one behind."""
    for pid in list(waiting):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for pid in list(waiting):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def serve(control: socket.socket) -> None:
    waiting: dict[int, socket.socket] = {}

    def terminated(_signum: int, _frame: Any) -> None:
        _stop_children(waiting)
        os._exit(0)

    signal.signal(signal.SIGTERM, terminated)
    while True:
        readable, _, _ = select.select([control], [], [], 0.02 if waiting else None)
        if readable:
            try:
                message, fds, _, _ = socket.recv_fds(control, 65536, 4)
            except OSError:
                message, fds = b"", []
            if not message:  # the parent closed the control socket (it ended): leave, children first
                _stop_children(waiting)
                return
            # SIGTERM waits until the child is in ``waiting``: a stop never misses one just forked
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            pid = os.fork()
            if pid == 0:
                control.close()
                for s in waiting.values():
                    s.close()
                _child(json.loads(message), fds)
            reply = waiting[pid] = socket.socket(fileno=fds[0])
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            for fd in fds[1:]:
                os.close(fd)
            reply.send(json.dumps({"pid": pid}).encode())
        while waiting:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            reply = waiting.pop(pid, None)
            if reply is not None:
                try:
                    reply.send(json.dumps({"status": status}).encode())
                except OSError:
                    pass
                reply.close()


def main(argv: list[str]) -> int:
    # Not PR_SET_PDEATHSIG here: it follows the parent *thread* that started the server (a race's
    # short-lived thread). The server leaves when its control socket closes, which the kernel
    # does when the parent process ends in any way. Ctrl-C is the parent's to handle.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    control = socket.socket(fileno=int(argv[1]))
    unsafe = None
    try:
        for module in argv[2:]:
            __import__(module)
    except Exception as exc:  # the operation's own fresh interpreter will report it properly
        unsafe = f"importing {module} failed: {type(exc).__name__}: {exc}"
    if unsafe is None and _threads() != 1:
        unsafe = f"{_threads()} threads after importing {', '.join(argv[2:])}: forking would copy a locked state"
    control.send(json.dumps({"unsafe": unsafe}).encode())
    if unsafe:
        return 0
    serve(control)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
