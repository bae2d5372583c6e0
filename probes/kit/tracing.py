"""Inside the child: the kit's operation with every crash point it reaches written to a trace.

Every crash point of the kit goes through one function, ``probes.core.nemesis.park``, as
``probes.kit.runtime`` (the step bodies and the hooked save) and ``probes.kit.child`` (the
pause, ``kit.paused``) bind it. ``op`` wraps those two bindings for one operation, so each
point reached is appended to a trace file the moment it is reached, in the order the process
reaches it (a line is in the kernel before the point can be killed: the trace survives a
SIGKILL). The exhaustive protocol (``probes.kit.exhaustive``) reads the traces.

Two faults are addressed by occurrence, ``name#n`` (the n-th time this process reaches it):

* ``RC_PARK_AT`` (set by ``nemesis.run_child``): the process dies there by SIGKILL, as at any
  park point (``nemesis.die_here``: no other thread runs a line of Python between the point and
  the death).
* ``fail_at``: ``InjectedCrash`` is raised there once (a marker file, ``nemesis.FailOnce``), at
  a point inside the framework's code only (not at ``kit.paused``, reached after it returned).

Imports only the standard library and ``probes.core``/``probes.kit`` child modules, so it runs
in a framework's side environment too.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from probes.core.nemesis import FailOnce, die_here

TRACE_DIR = ".trace"


def trace_file(markers: str | Path, incarnation: str) -> Path:
    """Where the operation of ``incarnation`` writes its trace (beside the run's FailOnce markers)."""
    return Path(markers).parent / TRACE_DIR / (incarnation.replace("/", "--") + ".txt")


def read_trace(path: Path) -> list[tuple[str, bool, bool]]:
    """The points of one traced operation, in order: (name, an exception may be raised there,
    reached on the process's main thread)."""
    if not path.exists():
        return []
    rows = [line.split("\t") for line in path.read_text().splitlines() if line]
    return [(name, how == "raise", thread == "main") for name, how, thread in rows]


def _address(spec: str | None) -> tuple[str, int] | None:
    name, _, nth = (spec or "").partition("#")
    return (name, int(nth or 1)) if name else None


class Tracer:
    """Counts, traces and faults the points of one process."""

    def __init__(self, path: Path, markers: str, fail_at: str | None, kill_at: str | None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.out = path.open("a", buffering=1)  # line-buffered: one write(2) per point
        self.hits: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.fail_at, self.kill_at = _address(fail_at), _address(kill_at)
        self.fail = FailOnce(markers)

    def wrap(self, raisable: bool) -> Callable[[str], None]:
        def traced(name: str) -> None:
            with self.lock:
                self.hits[name] += 1
                nth = self.hits[name]
                main = threading.current_thread() is threading.main_thread()
                self.out.write(f"{name}\t{'raise' if raisable else 'kill'}\t{'main' if main else 'thread'}\n")
                if self.kill_at == (name, nth):
                    die_here(f"{name}#{nth}")
            if raisable and self.fail_at == (name, nth):
                self.fail.maybe_fail(f"{name}#{nth}")
        return traced


def op(**kw: Any) -> dict[str, Any]:
    """``probes.kit.child:op`` with its crash points traced and faulted by occurrence (above)."""
    from probes.kit import child, runtime

    tracer = Tracer(trace_file(kw["markers"], kw["incarnation"]), kw["markers"], kw.get("fail_at"),
                    os.environ.pop("RC_PARK_AT", None))  # popped: nemesis.park itself stays inert
    runtime.park = tracer.wrap(raisable=True)  # runtime.point: the step boundaries and the hooked save
    child.park = tracer.wrap(raisable=False)   # kit.paused: after the operation returned
    return child.op(**{**kw, "fail_at": None})  # the runtime's own exception (first occurrence only) stays off
