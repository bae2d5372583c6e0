"""pydantic-graph workloads, each run in a fresh interpreter by ``run_child``.

The graph: ``NodeA`` fires effect ``A`` and adds 1 to ``state.counter``; ``NodeB``
fires effect ``B`` and adds 10, then ends with the counter (11 when each ran once).
Persistence is ``FileStatePersistence``: one JSON file of snapshots, each with a status
(``created``, ``pending``, ``running``, ``success``, ``error``). Recovery is
``Graph.iter_from_persistence`` in another process. Crashes: an exception injected
in ``NodeB`` (once across processes), or SIGKILL at a named park point inside
``NodeB`` (before or after its effect), between the nodes, or right after a process
claimed the paused snapshot (``load_next`` marks it ``pending``).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probes.core import oracle
from probes.core.nemesis import FailOnce, park


A_ADDS, B_ADDS = 1, 10  # what NodeA and NodeB add to the counter
RESULT = A_ADDS + B_ADDS  # the graph's own output when each node ran once (what LV expects)


def _error(exc: BaseException) -> dict[str, str]:
    first = (str(exc).splitlines() or [""])[0]
    first = re.sub(r" at 0x[0-9a-f]+", "", first)
    return {"type": type(exc).__name__, "message": first[:240]}


def _graph(fail_dir: str | None, invalid_state: bool = False):
    """The two-node graph; built lazily so only children import the framework."""
    from pydantic_graph import BaseNode, End, Graph, GraphRunContext

    @dataclass
    class CounterState:
        counter: int = 0

    @dataclass
    class NodeA(BaseNode[CounterState]):
        async def run(self, ctx: GraphRunContext[CounterState]) -> "NodeB":
            oracle.fire("A")
            if invalid_state:
                ctx.state.counter = "eleven"  # type: ignore[assignment]  # violates the declared int
            else:
                ctx.state.counter += A_ADDS
            return NodeB()

    @dataclass
    class NodeB(BaseNode[CounterState, None, int]):
        async def run(self, ctx: GraphRunContext[CounterState]) -> End[int]:
            if fail_dir:
                FailOnce(fail_dir).maybe_fail("nodeB")
            park("nodeB.before-effect")
            oracle.fire("B")
            park("nodeB.after-effect")
            ctx.state.counter += B_ADDS
            return End(ctx.state.counter)

    # The return annotation of NodeA names NodeB: resolve it in this scope.
    NodeA.run.__annotations__["return"] = NodeB
    return Graph(nodes=[NodeA, NodeB], name="two_nodes"), NodeA, CounterState


def _persistence(path: str):
    from pydantic_graph.persistence.file import FileStatePersistence

    return FileStatePersistence(Path(path))


def statuses(path: str) -> list[list[str]]:
    """(kind, node, status) of every snapshot in the file, read as plain JSON (no ids, no times)."""
    try:
        data = json.loads(Path(path).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return []
    out = []
    for s in data:
        node = (s.get("node") or {}).get("node_id", "?") if s.get("kind") == "node" else "End"
        out.append([s.get("kind", "?"), node, s.get("status", "-")])
    return out


async def _start(path: str, fail_dir: str | None, pause_after_a: bool, invalid_state: bool) -> dict[str, Any]:
    graph, node_a, state_cls = _graph(fail_dir, invalid_state)
    per = _persistence(path)
    try:
        if pause_after_a:
            async with graph.iter(node_a(), state=state_cls(), persistence=per) as run:
                await run.next()  # NodeA runs; NodeB's snapshot is persisted as 'created'
                park("between")
            return {"outcome": None, "error": None}
        result = await graph.run(node_a(), state=state_cls(), persistence=per)
        return {"outcome": result.output, "error": None}
    except Exception as exc:  # noqa: BLE001 - the injected crash (or a loud refusal) is the observation
        return {"outcome": None, "error": _error(exc)}


def start(ledger: str, incarnation: str, path: str, fail_dir: str | None = None,
          pause_after_a: bool = False, invalid_state: bool = False) -> dict[str, Any]:
    """Run the graph from NodeA with file persistence (to the end, or pausing after NodeA)."""
    o = oracle.install(ledger, incarnation)
    info = asyncio.run(_start(path, fail_dir, pause_after_a, invalid_state))
    return {"counter": o.counter.snapshot(), **info, "statuses": statuses(path)}


async def _recover(path: str, claim_only: bool) -> dict[str, Any]:
    graph, _, _ = _graph(None)
    per = _persistence(path)
    try:
        async with graph.iter_from_persistence(per) as run:
            if claim_only:
                park("claimed")  # the snapshot is now 'pending'; the parent kills us here
            async for _ in run:
                pass
            return {"outcome": run.result.output if run.result else None, "error": None}
    except Exception as exc:  # noqa: BLE001 - a refusal to restore is the observation
        return {"outcome": None, "error": _error(exc)}


def recover(ledger: str, incarnation: str, path: str, claim_only: bool = False) -> dict[str, Any]:
    """``iter_from_persistence`` in a fresh process: run whatever it restores to the end."""
    o = oracle.install(ledger, incarnation)
    info = asyncio.run(_recover(path, claim_only))
    return {"counter": o.counter.snapshot(), **info, "statuses": statuses(path)}


class Racer:
    """A long-lived worker: ``prepare`` builds the graph; ``go`` calls ``iter_from_persistence``.

    Two of these released together race for the same paused snapshot file.
    """

    def __init__(self) -> None:
        _graph(None)  # import the framework once, outside any race
        self.task: dict[str, Any] = {}

    def prepare(self, task: dict[str, Any]) -> dict[str, Any]:
        self.task = task
        self.oracle = oracle.install(task["ledger"], task["incarnation"])
        return {"statuses": statuses(task["path"])}

    def go(self) -> dict[str, Any]:
        info = asyncio.run(_recover(self.task["path"], False))
        return {"counter": self.oracle.counter.snapshot(), **info}
