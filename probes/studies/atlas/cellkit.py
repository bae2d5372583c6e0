"""What every atlas cells module shares, whatever framework it drives.

A cells module (``cells.py`` for LangGraph, ``cells_<framework>.py`` for the others)
runs *inside the side environment of one release of its framework*: at module level it
imports only the standard library, ``probes.core`` and this module; the framework is
imported inside the cell functions, so one file drives every release.

The vocabulary:

* :class:`Observed` -- what a cell hands back: the behaviour in words built from the
  measured values, the inputs of the check its table row names
  (``probes/studies/atlas/bugs.py``), and the raw observations;
* :class:`NotApplicable` -- the release lacks the feature the behaviour needs;
* :class:`NotReproduced` -- the cell could not drive the situation the report
  describes (the message says what was tried);
* any other exception -- a harness error (the measurement is broken), never a label.

A cell never decides a label -- ``probes/studies/atlas/decide.py`` does, through the checker.
:class:`CellBase` gives each cell its scratch directory, its ``HistoryLog`` and the
harness oracle (counter + crash-surviving ledger); :func:`main` is the entry point of
``python -m probes.studies.atlas.cells_<framework> [--serve]``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from probes.core import oracle
from probes.core.history import HistoryLog, Kind


class NotApplicable(Exception):
    """The release lacks the feature the reported behaviour needs."""


class NotReproduced(Exception):
    """The cell could not set up the reported situation; the message says what was tried."""


@dataclass
class Observed:
    behaviour: str                        # what happened, in words built from the measurements
    check: dict[str, Any]                 # inputs of the check named by the table row
    observations: dict[str, Any] = field(default_factory=dict)


class Registry(dict):
    """A cells module's cells by tracker reference: ``CELLS = Registry()``, ``@CELLS.cell("123")``."""

    def cell(self, ref: str) -> Callable[[Callable[..., Observed]], Callable[..., Observed]]:
        def register(fn: Callable[..., Observed]) -> Callable[..., Observed]:
            if ref in self:
                raise ValueError(f"two cells for #{ref}")
            self[ref] = fn
            return fn
        return register


@dataclass
class CellBase:
    """One probe's store, scratch directory, history and oracle (in this process)."""

    backend: str
    location: str
    workdir: Path
    incarnation: str = "driver"

    def __post_init__(self) -> None:
        self.workdir = Path(self.workdir)
        self.history = HistoryLog(self.workdir / "history.sqlite")
        oracle.install(self.workdir / "ledger.sqlite", self.incarnation)

    @property
    def ledger(self) -> oracle.Ledger:
        return oracle.Ledger(self.workdir / "ledger.sqlite")

    def log(self, kind: Kind, step: str | None = None, value: Any = None, **detail: Any) -> None:
        self.history.append(kind, self.incarnation, step=step, value=value, detail=detail or None)

    def fire(self, effect: str, step: str | None = None) -> None:
        """The external effect: oracle (counter + ledger row), then the history event."""
        oracle.fire(effect)
        self.history.append(Kind.EFFECT, self.incarnation, step=step, effect=effect)

    def consume(self, step: str, value: Any, **detail: Any) -> None:
        self.log(Kind.CONSUME, step, value, **detail)

    def args(self) -> dict[str, Any]:
        """What a child process needs to rebuild this cell."""
        return {"backend": self.backend, "location": self.location, "workdir": str(self.workdir)}


def killed_child(target: str, args: dict[str, Any], what: str, timeout: float = 120) -> Any:
    """Run ``target`` in a child that parks at its ``kill`` barrier and is SIGKILLed there (the
    nemesis's ``run_child``). A child that ended any other way is a harness error naming ``what``:
    the cell could not set up the crash it is about."""
    from probes.core.errors import HarnessError
    from probes.core.nemesis import run_child

    child = run_child(target, args, park_at="kill", timeout=timeout)
    if child.status != "killed":
        raise HarnessError(f"{what}: not killed at its barrier ({child.status}): {child.stderr_tail[-600:]}")
    return child


def err(exc: BaseException) -> str:
    """An exception as a stable one-liner (type and first line; no ids past 160 chars)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"[:160]


def installed(names: Sequence[str]) -> dict[str, str | None]:
    """Installed versions of ``names`` in this interpreter (None = not installed)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


@dataclass(frozen=True)
class Module:
    """A cells module as its entry point sees it: its cells, how a cell is built, what it reports."""

    cells: Registry
    make: Callable[[str, str, Path], CellBase]     # (backend, location, workdir) -> the cell's context
    distributions: tuple[str, ...]                 # versions reported with every reply


def run_cell(module: Module, ref: str, backend: str, location: str, workdir: Path) -> dict[str, Any]:
    """Run one cell; the JSON the parent turns into a receipt."""
    import warnings

    warnings.simplefilter("ignore")  # deprecation noise of older releases is not an observation
    c = module.make(backend, location, workdir)
    base = {"cell": ref, "backend": backend, "versions": installed(module.distributions)}
    try:
        obs = module.cells[ref](c)
    except NotApplicable as exc:
        return {**base, "status": "n/a", "why": str(exc)}
    except NotReproduced as exc:
        return {**base, "status": "not_reproduced", "tried": str(exc)}
    history = c.history.read()
    return {**base, "status": "observed", "behaviour": obs.behaviour, "check": obs.check,
            "observations": obs.observations, "effects": c.ledger.counts(), "events": len(history)}


def serve(module: Module) -> int:
    """Warm mode (``--serve``): one cell request per stdin line, one JSON reply per stdout line.

    Importing a framework release costs seconds; the campaign keeps one of these per
    release while it runs that release's cells. Every cell still gets its own store,
    scratch directory, history and oracle; victims of kill cells are fresh interpreters.
    Anything a framework prints goes to stderr, never into the reply stream.
    """
    import traceback

    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        if not line.strip():
            continue
        ref, backend, location, workdir = json.loads(line)
        try:
            reply = run_cell(module, ref, backend, location, Path(workdir))
        except Exception:
            reply = {"status": "error", "error": traceback.format_exc()[-3000:]}
        replies.write(json.dumps(reply, sort_keys=True, default=repr) + "\n")
        replies.flush()
    return 0


def main(module: Module, argv: list[str]) -> int:
    """``--serve``, or one cell: ``REF BACKEND LOCATION WORKDIR`` (prints its JSON)."""
    if argv[1:] == ["--serve"]:
        return serve(module)
    ref, backend, location, workdir = argv[1:5]
    print(json.dumps(run_cell(module, ref, backend, location, Path(workdir)), sort_keys=True, default=repr))
    return 0
