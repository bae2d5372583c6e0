"""A cross-process start barrier over a Unix socket, for racers started with ``run_child``.

Racers connect, say ``ready`` and block on ``recv``; the parent accepts all of them
and only then sends ``go`` to each. No sleeps, and every wait has a deadline so a
racer that died before reaching the barrier becomes a harness error, not a hang.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from probes.core.errors import HarnessError


def run_racers(k: int, launch: Callable[[int, str], Any], timeout: float = 180.0) -> list[Any]:
    """Start ``k`` racers with ``launch(i, socket_path)`` (each in a thread), release them together.

    Returns the racers' results in index order. Raises ``HarnessError`` when not every
    racer reached the barrier before ``timeout``.
    """
    tmp = tempfile.mkdtemp(prefix="rcb-", dir="/tmp")
    path = os.path.join(tmp, "b.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(k)
    server.settimeout(timeout)
    conns: list[socket.socket] = []
    released = threading.Event()
    try:
        with ThreadPoolExecutor(max_workers=k) as pool:
            futures: list[Future] = [pool.submit(launch, i, path) for i in range(k)]
            try:
                while len(conns) < k:
                    conn, _ = server.accept()
                    conn.settimeout(timeout)
                    if conn.recv(16).strip() != b"ready":
                        raise HarnessError("a racer connected to the barrier without signalling ready")
                    conns.append(conn)
            except socket.timeout:
                raise HarnessError(f"only {len(conns)} of {k} racers reached the barrier") from None
            finally:
                for conn in conns:
                    try:
                        conn.sendall(b"go")
                    except OSError:
                        pass
                released.set()
            return [f.result() for f in futures]
    finally:
        for conn in conns:
            conn.close()
        server.close()
        try:
            os.unlink(path)
            os.rmdir(tmp)
        except OSError:
            pass


def wait_at_barrier(sock_path: str) -> None:
    """Racer side: tell the parent we are ready, then block until it releases every racer at once."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(sock_path)
        s.sendall(b"ready\n")
        if s.recv(16) != b"go":
            raise RuntimeError("barrier closed without release")
