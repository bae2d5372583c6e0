"""A warm cell server per release: the atlas pays a framework's import once per release.

``run_cell(env, args, module)`` sends one cell to ``python -m <module> --serve`` (the
framework's cells module, ``probes.studies.atlas.cells`` for LangGraph) in the release's side
environment and reads its one-line JSON reply. One server is kept
alive at a time (the campaign plans probes grouped by release); it is stopped when
another release starts, at interpreter exit, and after any failure or timeout, so a
broken server never serves the next cell.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from probes import PROJECT_ROOT
from probes.core.envs import SideEnv
from probes.core.errors import HarnessError

_server: dict[str, Any] = {}


def _stop() -> None:
    proc = _server.pop("proc", None)
    log = _server.pop("log", None)
    _server.clear()
    if proc is not None and proc.poll() is None:
        try:
            proc.stdin.close()
            proc.wait(timeout=10)
        except Exception:
            proc.kill()
            proc.wait()
    if log is not None:
        log.close()


atexit.register(_stop)


def _start(env: SideEnv, module: str) -> None:
    _stop()
    env.ensure()
    child_env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME", "RC_PARK_AT")}
    child_env["PYTHONPATH"] = str(PROJECT_ROOT)
    child_env.setdefault("PYTHONHASHSEED", "0")
    log = tempfile.TemporaryFile(prefix="rc-atlas-server-")
    proc = subprocess.Popen([str(env.python), "-m", module, "--serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=log, env=child_env, cwd=str(PROJECT_ROOT))
    _server.update(proc=proc, log=log, key=(str(env.path), module), buf=b"")


def _stderr_tail() -> str:
    log = _server.get("log")
    if log is None:
        return ""
    log.seek(0)
    return log.read().decode(errors="replace")[-1500:]


def run_cell(env: SideEnv, args: Sequence[str], timeout: float = 900,
             module: str = "probes.studies.atlas.cells") -> dict[str, Any]:
    if _server.get("key") != (str(env.path), module) or _server["proc"].poll() is not None:
        _start(env, module)
    proc = _server["proc"]
    proc.stdin.write((json.dumps(list(args)) + "\n").encode())
    proc.stdin.flush()
    deadline = time.monotonic() + timeout
    buf = _server["buf"]
    fd = proc.stdout.fileno()
    while b"\n" not in buf:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            tail = _stderr_tail()
            _stop()
            raise HarnessError(f"atlas cell {args[0]} timed out after {timeout:.0f} s: {tail[-600:]}")
        readable, _, _ = select.select([fd], [], [], min(remaining, 5.0))
        if readable:
            chunk = os.read(fd, 65536)
            if not chunk:
                tail = _stderr_tail()
                _stop()
                raise HarnessError(f"atlas cell server for {Path(env.path).name} exited: {tail[-600:]}")
            buf += chunk
    line, _server["buf"] = buf.split(b"\n", 1)
    reply = json.loads(line)
    if reply.get("status") == "error":
        _stop()
        raise HarnessError(f"atlas cell {args[0]} failed: {reply['error'][-800:]}")
    return reply
