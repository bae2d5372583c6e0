"""The Microsoft Agent Framework atlas cells (``python -m probes.studies.atlas.cells_maf``, in a release's env).

Executor workflows only (no agent, no model): each executor fires its effect through the
harness oracle and forwards a message. Checkpoints go to ``FileCheckpointStorage`` in the
cell's scratch directory; the storage's save method is wrapped so the history records,
for every checkpoint, which effects had fired when it was written (the durable prefix a
resume from it must not run again). One file drives the betas (``WorkflowBuilder()
.set_start_executor().with_checkpointing()``, ``run_from_checkpoint``, ``save_checkpoint``)
and the 1.x API (``WorkflowBuilder(start_executor=..., checkpoint_storage=...)``,
``run(checkpoint_id=...)``, ``save``). Telemetry is off unless an exporter is configured.

No ``from __future__ import annotations`` here: the framework reads a handler's
``WorkflowContext[...]`` annotation at registration, and the cells import it locally.
"""

import asyncio
import inspect
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from probes.studies.atlas.cellkit import CellBase, Module, NotApplicable, Observed, Registry, err
from probes.core.history import Kind

CELLS = Registry()
NAME = "atlas"


def _storage(c: CellBase, saved: dict[str, list[str]], where: str = "checkpoints") -> Any:
    """A ``FileCheckpointStorage`` whose save records the effects fired so far under the checkpoint's id."""
    import agent_framework  # a release that does not import is a broken environment, not n/a

    FileCheckpointStorage = getattr(agent_framework, "FileCheckpointStorage", None)
    if FileCheckpointStorage is None:
        raise NotApplicable("no FileCheckpointStorage in this release")
    method = "save_checkpoint" if hasattr(FileCheckpointStorage, "save_checkpoint") else "save"
    original = getattr(FileCheckpointStorage, method)

    async def save(self: Any, checkpoint: Any) -> Any:
        out = await original(self, checkpoint)
        fired = sorted(k for k, v in c.ledger.counts().items() if v)
        saved[checkpoint.checkpoint_id] = fired
        c.log(Kind.PERSIST, value=len(saved), fired=fired)
        return out

    recording = type("RecordingStorage", (FileCheckpointStorage,), {method: save})
    return recording(str(c.workdir / where))


def _workflow(storage: Any, chain: Sequence[Any]) -> Any:
    """``chain[0] -> chain[1] -> ...`` with checkpointing to ``storage``, in whichever builder API the release has."""
    from agent_framework import WorkflowBuilder

    params = inspect.signature(WorkflowBuilder.__init__).parameters
    if "start_executor" in params:
        builder = WorkflowBuilder(start_executor=chain[0], checkpoint_storage=storage, name=NAME)
    else:
        builder = WorkflowBuilder(**({"name": NAME} if "name" in params else {}))
        builder = builder.set_start_executor(chain[0]).with_checkpointing(storage)
    for a, b in zip(chain, chain[1:]):
        builder = builder.add_edge(a, b)
    return builder.build()


def _executor(c: CellBase, ident: str, body: Callable[[], None], forward: bool = True) -> Any:
    """An executor that runs ``body`` (its effects), notes its progress in the workflow's shared
    state (as the framework's checkpoint sample does), and forwards the message unless it is last."""
    from agent_framework import Executor, WorkflowContext, handler

    class Step(Executor):  # type: ignore[misc, valid-type]
        @handler
        async def go(self, msg: str, ctx: WorkflowContext[str]) -> None:
            c.log(Kind.STEP_BEGIN, ident)
            body()
            if hasattr(ctx, "set_shared_state"):
                await ctx.set_shared_state(f"done:{ident}", True)
            elif hasattr(ctx, "set_state"):
                ctx.set_state(f"done:{ident}", True)
            c.log(Kind.STEP_END, ident)
            if forward:
                await ctx.send_message(f"{msg}>{ident}")

    return Step(id=ident)


async def _checkpoints(storage: Any) -> list[Any]:
    """Every checkpoint of the workflow, oldest first."""
    listing = storage.list_checkpoints
    params = inspect.signature(listing).parameters
    found = await (listing(workflow_name=NAME) if "workflow_name" in params else listing())
    return sorted(found, key=lambda p: (p.timestamp, getattr(p, "iteration_count", 0)))


async def _resume(wf: Any, storage: Any, checkpoint_id: str, stream: bool = False) -> Any:
    """Resume from ``checkpoint_id`` (``stream``: through the streaming entry point, draining its events)."""
    if not stream:
        if hasattr(wf, "run_from_checkpoint"):
            return await wf.run_from_checkpoint(checkpoint_id, checkpoint_storage=storage)
        return await wf.run(checkpoint_id=checkpoint_id, checkpoint_storage=storage)
    if hasattr(wf, "run_stream_from_checkpoint"):
        events = wf.run_stream_from_checkpoint(checkpoint_id, checkpoint_storage=storage)
    elif hasattr(wf, "run_stream"):
        events = wf.run_stream(checkpoint_id=checkpoint_id, checkpoint_storage=storage)
    else:
        events = wf.run(checkpoint_id=checkpoint_id, checkpoint_storage=storage, stream=True)
    async for _event in events:
        pass
    return None


def _state(result: Any) -> str | None:
    get = getattr(result, "get_final_state", None)
    return str(get()).rsplit(".", 1)[-1] if get else None


@CELLS.cell("1695")
def resume_latest_reruns_first(c: CellBase) -> Observed:
    """``s1 -> s2 -> s3`` runs to its end with checkpointing; a fresh workflow on the same storage is
    then resumed from the latest checkpoint -- once through the blocking entry point, once (on a
    second run in its own storage) through the streaming one. Every effect had fired when that
    checkpoint was written, so neither resume may run any of them again."""
    steps = ("s1", "s2", "s3")
    saved: dict[str, list[str]] = {}

    def build(arm: str) -> tuple[Any, Any]:
        storage = _storage(c, saved, arm)
        chain = [_executor(c, s, lambda s=s: c.fire(f"{arm}:{s}", s), forward=s != steps[-1]) for s in steps]
        return _workflow(storage, chain), storage

    async def arm(name: str) -> dict[str, Any]:
        wf, storage = build(name)
        c.log(Kind.START, mode=name)
        first = await wf.run("go")
        points = await _checkpoints(storage)
        if not points:
            raise NotApplicable("the run wrote no checkpoint")
        latest = points[-1]
        before = c.ledger.counts()
        wf, storage = build(name)
        c.log(Kind.RESUME, value=len(points), mode=f"latest checkpoint, {name}")
        try:
            second, error = await _resume(wf, storage, latest.checkpoint_id, stream=name == "stream"), None
        except Exception as exc:  # a loud refusal is an observation
            second, error = None, err(exc)
        after = c.ledger.counts()
        return {"first_state": _state(first), "checkpoints": len(points),
                "latest_pending": sorted(getattr(latest, "messages", {}) or {}),
                "prefix": [k.split(":", 1)[1] for k in saved.get(latest.checkpoint_id, []) if k.startswith(name)],
                "reran": {s: after.get(f"{name}:{s}", 0) - before.get(f"{name}:{s}", 0) for s in steps},
                "resume_state": _state(second) if second is not None else None, "resume_error": error}

    async def drive() -> dict[str, Any]:
        return {name: await arm(name) for name in ("run", "stream")}

    out = asyncio.run(drive())
    parts = []
    for name, o in out.items():
        ran = [s for s, n in o["reran"].items() if n]
        parts.append(f"{name}: the latest of {o['checkpoints']} checkpoints was written after "
                     f"{', '.join(o['prefix']) or 'nothing'} had fired; resuming from it "
                     + (f"raised {o['resume_error']}" if o["resume_error"] else
                        f"ran {', '.join(ran)} again" if ran else "ran no executor again"))
    reran = {f"{name}:{s}": n for name, o in out.items() for s, n in o["reran"].items()}
    prefix = [f"{name}:{s}" for name, o in out.items() for s in o["prefix"]]
    return Observed("; ".join(parts), {"runs_after_recovery": reran, "durable_prefix": prefix}, out)


@CELLS.cell("3938")
def failed_superstep_replays_turn(c: CellBase) -> Observed:
    """``a -> b``: ``b`` sends an email and writes a row (two effects), then fails once like a
    network timeout before its third (``notify``). The workflow is resumed from its latest
    checkpoint in a fresh workflow; an effect that had completed must not fire again."""
    saved: dict[str, list[str]] = {}
    failed = c.workdir / "b-failed-once"

    def b_body() -> None:
        c.fire("send_email", "b")
        c.fire("update_database", "b")
        if not failed.exists():
            failed.write_text("1")
            raise RuntimeError("notify: network timeout")
        c.fire("notify", "b")

    def build() -> tuple[Any, Any]:
        storage = _storage(c, saved)
        chain = [_executor(c, "a", lambda: c.fire("a", "a")), _executor(c, "b", b_body, forward=False)]
        return _workflow(storage, chain), storage

    async def drive() -> dict[str, Any]:
        wf, storage = build()
        c.log(Kind.START)
        try:
            first, first_error = _state(await wf.run("go")), None
        except Exception as exc:  # the failure the report describes
            first, first_error = None, err(exc)
        c.log(Kind.ERROR, "b", value=first_error or first)
        points = await _checkpoints(storage)
        if not failed.exists():
            raise NotApplicable("b never ran")
        if not points:
            raise NotApplicable("the failed run left no checkpoint to resume from")
        latest = points[-1]
        wf, storage = build()
        c.log(Kind.RESUME, value=len(points), mode="latest checkpoint")
        try:
            second, error = _state(await _resume(wf, storage, latest.checkpoint_id)), None
        except Exception as exc:  # a loud refusal is an observation
            second, error = None, err(exc)
        return {"first_state": first, "first_error": first_error, "checkpoints": len(points),
                "latest_written_after": saved.get(latest.checkpoint_id, []),
                "resume_state": second, "resume_error": error}

    out = asyncio.run(drive())
    counts = c.ledger.counts()
    out["counts"] = counts
    behaviour = (f"b failed after send_email and update_database ({out['first_error'] or out['first_state']}); "
                 f"the latest of {out['checkpoints']} checkpoints was written after "
                 f"{', '.join(out['latest_written_after']) or 'nothing'} had fired; resuming from it "
                 + (f"raised {out['resume_error']}" if out["resume_error"] else
                    f"sent the email {counts.get('send_email', 0)}x, wrote the row "
                    f"{counts.get('update_database', 0)}x, notified {counts.get('notify', 0)}x"))
    return Observed(behaviour, {"effect_counts": counts}, out)


DISTRIBUTIONS = ("agent-framework-core",)
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
