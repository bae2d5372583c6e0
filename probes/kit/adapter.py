"""The adapter interface: what a framework must translate for the kit to measure it.

An adapter is small (50-100 lines for a framework with a pause and durable state). It
builds the kit's two-step workflow in its framework around ``probes.kit.runtime``'s
step bodies and maps five operations onto the framework's API. It never decides a
verdict: it declares capabilities, answers and documentation citations, and the
protocols (``probes.kit.protocols``) and checkers decide.

Every operation runs in a process of its own started by the kit (``probes.kit.child``: a
fresh interpreter, or a fork of a server that imported ``imports`` and nothing else), so a
crash is a real process death and a recovery really starts from durable state.
``workdir`` is the probe's own directory for the framework's files; ``store`` is a
backend location the harness created (an SQLite path or a PostgreSQL DSN) or ``None``.

Status: every run-driving operation returns ``{"status": "paused" | "completed",
"outcome": <JSON>, "handle": <JSON or None>}`` (with ``"pending"`` on a paused run of the
parallel workflow: the branches whose pauses are open). ``handle`` addresses *this* pause (a
checkpoint id, a serialized run state's file, an interrupt id): resuming the same
handle again is how the kit answers the same pause twice (fork, retries, races). The
operation raises when the framework raises; the kit records that as the framework's
behaviour (a loud refusal), not as a harness error.

A recovery that finds nothing durable to resume from (no checkpoint written yet) says so,
``return self.nothing_durable(why)``, rather than starting the run over itself: the kit then
starts it over in a process of its own, records why, and decides no PC verdict on that path
(there was no durable prefix to keep).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from enum import Enum
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping

from probes.core.checker import DocRef


class Capability(str, Enum):
    PAUSE = "pause"            # the workflow can pause for a human answer and resume with it
    RECOVER = "recover"        # a crashed run can be continued from durable state
    # Answering a pause again by its handle, three behaviours a framework may take or refuse apart:
    RETRY = "retry"            # the current pause answered again, the same answer (``answers``)
    CONCURRENT = "concurrent"  # the current pause answered by several processes at once (``race``)
    FORK = "fork"              # a pause already answered answered again with another answer (``fork``)
    READDRESS = "readdress"    # shorthand for RETRY, CONCURRENT and FORK together (adapters written before the split)
    TAMPER = "tamper"          # the durable state is a JSON document the kit can load, edit and save
    SAVE_HOOK = "save-hook"    # the framework's own save is hooked (runtime.hook_save): kills inside it
    # The framework is deployed as a running executor that clients send answers to (a durable
    # workflow engine): ``serve`` runs the one executor, ``send`` answers as a client. Concurrent
    # answers (the race) then come from k clients to one executor, not from k executors.
    CLIENT = "client"
    # The workflow is built from ``runtime.shape()``, so a process can run changed code (the change
    # protocol: a deploy between a pause and its answer); ``code_changes`` lists the changes it builds.
    CODE_CHANGE = "code-change"
    # The pausing step can ask twice, one answer at a time, built from ``runtime.shape()`` role
    # "pause-twice" (``first_answer`` between the pauses, ``second_answer`` after): the pause-twice protocol.
    TWO_PAUSES = "two-pauses"
    # The pausing step can run inside a nested workflow of the framework's own (a subgraph, a child
    # workflow, a sub-agent), built from ``runtime.shape()`` role "nested-pause" with the same bodies as
    # "pause": the nested protocol runs the baseline, crash and stray cells on that workflow.
    NESTED = "nested"
    # Two parallel branches can each pause for an answer of their own, then a fan-in step joins them: the
    # workflow built from ``runtime.shape()`` "parallel" (roles "branch-pause": ``before_branch``, the pause,
    # ``branch``; "join": ``join`` with both branches' answers). A paused status names the branches still
    # asking (``pending``), and ``resume_branch(handle, branch, answer)`` answers one of them, leaving the
    # other open: the parallel protocol answers one branch, recovers, then the other.
    PARALLEL = "parallel"
    # The run can be deleted through the framework's own API (``delete``: its thread, workflow or
    # session): the delete protocol deletes it while a process that holds it is frozen.
    DELETE = "delete"
    # The answered step can fail after its effect and the framework's own error-handling construct (an error
    # edge, a fallback route, a try/except around a step in a durable workflow) run a handler step in its
    # place, built from ``runtime.shape()`` roles "pause-fails" and "handler": the handler protocol.
    HANDLER = "handler"
    # The framework asks for the answer through an approval callback or hook of its own whose body fires an
    # effect before the pause (``runtime.approval_callback``), built from ``runtime.shape()`` role
    # "callback-pause": the callback protocol counts that effect for one approval.
    CALLBACK = "callback"
    # The durable state can be copied byte for byte (``copy_store``): the rd protocol recovers copies of a
    # crashed store. Declared by default (the kit copies what it made: the run's directory and its SQLite
    # or PostgreSQL store); an adapter whose state a server holds names it in ``missing`` with the reason.
    COPY = "copy"
    # A resume at a pause already answered can declare its intent, FORK or RETRY (a discriminator on
    # the wire, CONTRACT.md's FI): the adapter's ``declare(handle, answer, intent)`` sends one (the
    # intent protocol, probes.frameworks.langgraph.intent). Without it, FI is n/a with ``missing``'s reason.
    INTENT = "intent"


READDRESS_PARTS = frozenset({Capability.RETRY, Capability.CONCURRENT, Capability.FORK})
# Capabilities every adapter has unless its ``missing`` names them (what the kit itself provides).
DEFAULT_ON = frozenset({Capability.COPY})

NOTHING_DURABLE = "nothing-durable"  # the status of a recovery that found no durable state to resume


class Adapter:
    """Subclass and fill in. Class attributes describe; methods translate."""

    framework: ClassVar[str] = ""                 # the framework's name in verdicts
    packages: ClassVar[tuple[str, ...]] = ()      # distributions it imports (versions go into receipts)
    # Modules its operations import (the framework's, lazily, inside methods): a fork server imports
    # them once and forks each operation's process from there (probes.core.forkserver), so an
    # operation does not pay the framework's import. A speed-up only: empty, each operation imports.
    # What the framework reads at import (a home, telemetry switches) belongs in ``environment``,
    # which the server starts under; ``hook`` runs after the import.
    imports: ClassVar[tuple[str, ...]] = ()
    backends: ClassVar[tuple[str, ...]] = ("file",)
    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    recovery_modes: ClassVar[tuple[str, ...]] = ("latest",)  # each mode the documentation gives
    answers: ClassVar[tuple[Any, Any]] = ("yes", "no")       # two answers the pause accepts; the first
    declines: ClassVar[tuple[Any, ...]] = ()                 # lets s2 run; answers here decline it (reject)
    # Documentation sentences, keyed "PROP path-pattern" (fnmatch), e.g. "EO crash:*"; the longest
    # matching pattern wins (probes.core.checker.lookup). Each value has a source and a version:
    # probes.citations.doc("LG-8", stance) for a DOCS.md statement, or probes.citations.docstring(
    # "module:qualname", quote, stance, distribution, version) for the installed package's docstring.
    # The verdicts of this adapter are labelled from this table alone: a violation with no entry is U
    # ("no citation declared"), never labelled from another table.
    citations: ClassVar[Mapping[str, DocRef]] = {}
    # With CODE_CHANGE: which of ``runtime.CODE_CHANGES`` the adapter's workflow can be built with.
    code_changes: ClassVar[tuple[str, ...]] = ()
    # Why a capability is missing, shown as the reason of an n/a verdict.
    missing: ClassVar[Mapping[Capability, str]] = {}

    @classmethod
    def declares(cls, capability: Capability) -> bool:
        """Whether the adapter declares ``capability`` (READDRESS stands for its three parts; one of
        ``DEFAULT_ON`` is declared unless ``missing`` gives a reason it is not)."""
        if capability in DEFAULT_ON:
            return capability in cls.capabilities or capability not in cls.missing
        return capability in cls.capabilities or (capability in READDRESS_PARTS
                                                  and Capability.READDRESS in cls.capabilities)

    def __init__(self, workdir: Path, backend: str, store: str | None) -> None:
        self.workdir = Path(workdir)
        self.backend = backend
        self.store = store

    # --- driving the run ---------------------------------------------------------
    def start(self) -> dict[str, Any]:
        """Start a new run: ``s1``, then the pause in ``s2``. Returns a status."""
        raise NotImplementedError

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        """Answer the pause ``handle``. ``None`` (park-kill, and the stray answer after completion):
        the run's current pause, found in durable state as a user without a handle would find it;
        when the run has none (it completed), address the run the same way and let the framework
        decide -- a refusal is the framework's to make, not the adapter's."""
        raise NotImplementedError

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        """Continue after a crash the way recovery ``mode`` (one of ``recovery_modes``) says, and
        return the status it reaches. The kit answers a pause it reaches: on ``paused`` it calls
        ``resume(handle, answer)`` once, in a fresh process. Deliver ``answer`` here only where the
        framework's documented recovery takes the answer in the same call (then do not also return
        ``paused``). Nothing durable to resume from: ``return self.nothing_durable(why)``."""
        raise NotImplementedError

    def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """With PARALLEL: answer the pause of parallel branch ``branch`` (a name of ``runtime.branches()``)
        alone, the other branch's pause left open, as the framework addresses one of several open pauses
        (an interrupt id, a signal or message to one child workflow, one tool call's approval). ``handle``:
        the handle the last paused status gave, or ``None`` (find the run's open pauses in durable state).
        A paused status says which branches are still asking: ``"pending": ["b2"]``, read from the
        framework's own record of its open pauses, never from what the adapter remembers answering. A
        ``recover`` of this workflow answers nothing itself (which branch an answer is for is the kit's
        to say): it returns the pause it finds, with its pending branches."""
        raise NotImplementedError

    def nothing_durable(self, why: str) -> dict[str, Any]:
        """The status of a recovery that finds no durable state (the kit starts the run over)."""
        return {"status": NOTHING_DURABLE, "why": why}

    def delete(self) -> dict[str, Any]:
        """Delete the run through the framework's own API (with DELETE), as a user deleting a
        conversation or a workflow would; return ``{"status": "deleted"}``."""
        raise NotImplementedError

    # --- executor and clients (with CLIENT) ---------------------------------------------
    def serve(self) -> dict[str, Any]:
        """Run the executor over the durable state until the paused run ends; returns its status."""
        raise NotImplementedError

    def send(self, handle: Any, answer: Any) -> dict[str, Any]:
        """Answer the pause ``handle`` as a client of the running executor (``serve``), and wait for
        the run's outcome; launches no executor of its own."""
        raise NotImplementedError

    # --- the durable state ---------------------------------------------------------
    def state_paths(self) -> list[Path]:
        """Locate: the JSON documents that hold the run's durable state, newest last."""
        return []

    def copy_store(self, workdir: Path, store: str | None) -> None:
        """Copy this run's durable state byte for byte to another run's place (``workdir``, ``store``:
        a fresh directory and a fresh store of the same backend the kit made), for the rd protocol.
        The default copies what the kit made (``probes.kit.copying``): the run's directory as a tree
        and its SQLite file (with -wal/-shm) or PostgreSQL database (a TEMPLATE copy). Runs in the
        kit's process, with no framework imported. Override where the state lives elsewhere; refuse
        with ``missing[Capability.COPY]`` where it cannot be copied (a server's)."""
        from probes.kit.copying import copy_state
        copy_state(self.workdir, self.backend, self.store, Path(workdir), store)

    def store_digest(self) -> str:
        """A digest of this run's durable state: equal digests are what makes two copies "the same
        durable state" (override together with ``copy_store``)."""
        from probes.kit.copying import state_digest
        return state_digest(self.workdir, self.backend, self.store)

    def load_state(self, path: Path) -> Any:
        """Load one durable document as JSON (override for a non-plain encoding)."""
        import json
        return json.loads(Path(path).read_text())

    def save_state(self, path: Path, data: Any) -> None:
        import json
        Path(path).write_text(json.dumps(data))

    def state_required(self, doc: Any) -> dict[str, Any]:
        """The framework's declared state model for the durable document ``doc``: which of its
        top-level keys have no default (``required_fields`` of the framework's own model), so
        the kit can tell an invalid edit (a required key dropped) from a valid one (a key with
        a default dropped). Runs in a child, in the framework's environment. ``required`` is
        ``None`` while the adapter declares no model: structural edits are then taken as
        invalid, and the verdict says so."""
        return {"status": "schema", "required": None, "model": "undeclared"}

    @classmethod
    def result(cls, answer: Any) -> Any:
        """The workflow's own result for ``answer``: what a completion must carry for LV."""
        from probes.core.checker import UNSET
        from probes.kit import runtime
        return UNSET if answer in cls.declines else runtime.outcome(answer)

    @classmethod
    def handled(cls, answer: Any) -> Any:
        """The handler workflow's own result for ``answer`` (with HANDLER): what its handler step returns
        (``runtime.handled``), as the run's outcome carries it; override where the framework wraps it (an
        agent's final message echoing the handled tool's output)."""
        from probes.kit import runtime
        return runtime.handled(answer)

    @classmethod
    def parallel_result(cls, answers: Mapping[str, Any]) -> Any:
        """The parallel workflow's own result for each branch's answer (``answers``: branch -> answer): what a
        completion must carry for LV. The join's ``runtime.joined(answers)``; override where the framework
        wraps it (as ``result`` is overridden)."""
        from probes.kit import runtime
        return runtime.joined(answers)

    @classmethod
    def environment(cls, root: Path) -> dict[str, str]:
        """The environment every operation's process starts under, before any import (and so the
        fork server it comes from): what the framework reads or writes at import time (a home,
        telemetry off), kept inside ``root``, a directory of the campaign's run that its probes
        share. Create the directories it names."""
        return {}

    # --- the framework's own save --------------------------------------------------
    def hook(self) -> None:
        """Call ``runtime.hook_save(...)`` on the framework's save (with SAVE_HOOK)."""


def required_fields(model: Any) -> list[str]:
    """The fields of a framework's state model that have no default, read from the model itself:
    a pydantic model (``is_required()``) or a (pydantic or standard) dataclass (no default, no
    default factory). The JSON keys are the serialisation aliases where the model has them."""
    import dataclasses

    fields = getattr(model, "model_fields", None)
    if fields is not None:
        return sorted((f.serialization_alias or f.alias or name) for name, f in fields.items() if f.is_required())
    if dataclasses.is_dataclass(model):
        return sorted(f.name for f in dataclasses.fields(model)
                      if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
    raise TypeError(f"{model!r} is neither a pydantic model nor a dataclass: declare its required fields by hand")


def keys_read(fn: Callable[..., Any], param: str) -> list[str]:
    """The keys ``fn`` reads from its argument ``param`` by subscript (``param["key"]``), read
    from ``fn``'s own source: a key read that way has no default (a missing one raises)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    return sorted({node.slice.value for node in ast.walk(tree)
                   if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                   and node.value.id == param and isinstance(node.slice, ast.Constant)
                   and isinstance(node.slice.value, str)})
