"""The adapter interface: what a framework must translate for the kit to measure it.

An adapter is small (50-100 lines for a framework with a pause and durable state). It
builds the kit's two-step workflow in its framework around ``probes.kit.runtime``'s
step bodies and maps five operations onto the framework's API. It never decides a
verdict: it declares capabilities, answers and documentation citations, and the
protocols (``probes.kit.protocols``) and checkers decide.

Every operation runs in a fresh interpreter started by the kit (``probes.kit.child``),
so a crash is a real process death and a recovery really starts from durable state.
``workdir`` is the probe's own directory for the framework's files; ``store`` is a
backend location the harness created (an SQLite path or a PostgreSQL DSN) or ``None``.

Status: every run-driving operation returns ``{"status": "paused" | "completed",
"outcome": <JSON>, "handle": <JSON or None>}``. ``handle`` addresses *this* pause (a
checkpoint id, a serialized run state's file, an interrupt id): resuming the same
handle again is how the kit answers the same pause twice (fork, retries, races). The
operation raises when the framework raises; the kit records that as the framework's
behaviour (a loud refusal), not as a harness error.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, Mapping

from probes.core.checker import DocRef


class Capability(str, Enum):
    PAUSE = "pause"            # the workflow can pause for a human answer and resume with it
    RECOVER = "recover"        # a crashed run can be continued from durable state
    READDRESS = "readdress"    # a pause can be answered again by its handle (fork, retries, races)
    TAMPER = "tamper"          # the durable state is a JSON document the kit can load, edit and save
    SAVE_HOOK = "save-hook"    # the framework's own save is hooked (runtime.hook_save): kills inside it


class Adapter:
    """Subclass and fill in. Class attributes describe; methods translate."""

    framework: ClassVar[str] = ""                 # the framework's name in verdicts
    packages: ClassVar[tuple[str, ...]] = ()      # distributions it imports (versions go into receipts)
    backends: ClassVar[tuple[str, ...]] = ("file",)
    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    recovery_modes: ClassVar[tuple[str, ...]] = ("latest",)  # each mode the documentation gives
    answers: ClassVar[tuple[Any, Any]] = ("yes", "no")       # two answers the pause accepts; the first
    declines: ClassVar[tuple[Any, ...]] = ()                 # lets s2 run; answers here decline it (reject)
    # Documentation sentences, keyed "PROP path-pattern" (fnmatch), e.g. "EO crash:*"; the longest
    # matching pattern wins (probes.citations.lookup). Each value has a source and a version:
    # probes.citations.doc("LG-8", stance) for a DOCS.md statement, or probes.citations.docstring(
    # "module:qualname", quote, stance, distribution, version) for the installed package's docstring.
    # The verdicts of this adapter are labelled from this table alone: a violation with no entry is U
    # ("no citation declared"), never labelled from another table.
    citations: ClassVar[Mapping[str, DocRef]] = {}
    # Why a capability is missing, shown as the reason of an n/a verdict.
    missing: ClassVar[Mapping[Capability, str]] = {}

    def __init__(self, workdir: Path, backend: str, store: str | None) -> None:
        self.workdir = Path(workdir)
        self.backend = backend
        self.store = store

    # --- driving the run ---------------------------------------------------------
    def start(self) -> dict[str, Any]:
        """Start a new run: ``s1``, then the pause in ``s2``. Returns a status."""
        raise NotImplementedError

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        """Answer the pause ``handle`` (``None``: the run's current pause, found in durable state)."""
        raise NotImplementedError

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        """Continue after a crash the way ``mode`` of the documentation says; ``answer`` is
        delivered again if the recovered run asks for it."""
        raise NotImplementedError

    # --- the durable state ---------------------------------------------------------
    def state_paths(self) -> list[Path]:
        """Locate: the JSON documents that hold the run's durable state, newest last."""
        return []

    def load_state(self, path: Path) -> Any:
        """Load one durable document as JSON (override for a non-plain encoding)."""
        import json
        return json.loads(Path(path).read_text())

    def save_state(self, path: Path, data: Any) -> None:
        import json
        Path(path).write_text(json.dumps(data))

    # --- the framework's own save --------------------------------------------------
    def hook(self) -> None:
        """Call ``runtime.hook_save(...)`` on the framework's save (with SAVE_HOOK)."""
