"""One adapter operation in a process of its own (``run_child`` target ``probes.kit.child:op``).

The parent (a protocol) chooses the operation, the incarnation label, the crash point
and, for a race, the barrier. Here the oracles and the history are installed, the
adapter is imported (its framework with it) and constructed, the operation runs, and
the result comes back as data: ``status`` is the adapter's status, or ``raised`` with
the exception's type when the framework raised (a measured behaviour, kept apart from
harness failures, which escape with a traceback).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import traceback
from pathlib import Path
from typing import Any

from probes.core.history import Kind
from probes.core.manifest import package_versions
from probes.core.nemesis import InjectedCrash, park
from probes.core.portable import portable_text, tail
from probes.kit import runtime
from probes.kit.adapter import Adapter


def load_adapter(spec: str) -> type:
    module, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"adapter must be 'module:Class', got {spec!r}")
    return getattr(importlib.import_module(module), attr)


def _raised_by(exc: BaseException, adapter_file: str | None) -> bool:
    """True when the innermost frame of the traceback is the adapter's own code."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and adapter_file is not None and tb.tb_frame.f_code.co_filename == adapter_file


def op(adapter: str, workdir: str, backend: str, store: str | None, ledger: str, history: str,
       incarnation: str, markers: str, name: str, args: dict[str, Any], fail_at: str | None = None,
       barrier: str | None = None) -> dict[str, Any]:
    runtime.install(ledger, history, incarnation, markers, fail_at)
    cls = load_adapter(adapter)
    instance = cls(Path(workdir), backend, store)
    instance.hook()
    if barrier:
        from probes.core.barrier import wait_at_barrier
        wait_at_barrier(barrier)
    out: dict[str, Any] = {"versions": package_versions(tuple(cls.packages))}
    try:
        result = getattr(instance, name)(**args)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        out.update(result or {})
        if out.get("status") == "paused":
            for step in out.get("pending") or ("s2",):  # the parallel workflow: one pause per open branch
                runtime.record(Kind.PAUSE, step=step)
            park("kit.paused")  # park-kill: SIGKILL while the run is parked at its pause
        elif out.get("status") == "completed":
            runtime.record(Kind.COMPLETE, value=out.get("outcome"))
    except InjectedCrash as exc:
        out.update(status="crashed", error="InjectedCrash", message=str(exc))
        runtime.record(Kind.ERROR, value="InjectedCrash")
    except Exception as exc:  # the framework refused or failed: data, not a harness error
        if _raised_by(exc, inspect.getsourcefile(cls)) or _raised_by(exc, inspect.getsourcefile(Adapter)):
            # the adapter's own bug, or an operation it declared but does not implement (the base
            # class's NotImplementedError): a harness error (the child exits non-zero), never a verdict
            raise
        out.update(status="raised", error=type(exc).__name__, message=portable_text(str(exc))[:300],
                   traceback=tail(portable_text(traceback.format_exc()), 24))
        runtime.record(Kind.REFUSE, value=type(exc).__name__)
    out["counter"] = runtime.counter()
    return out
