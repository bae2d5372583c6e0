"""The pydantic-graph atlas cells (``python -m probes.studies.atlas.cells_pydantic_graph``, in a release's env).

The vocabulary is ``probes.studies.atlas.cellkit``'s; pydantic-graph is imported inside the
cells, so one file drives the 0.x releases (persistence arrived in 0.0.3x), 1.x and
2.x (which removed state persistence: the cells say n/a there).
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probes.studies.atlas.cellkit import CellBase, Module, NotApplicable, Observed, Registry
from probes.core.history import Kind

CELLS = Registry()


def _persistence_api() -> tuple[Any, Any, Any, Any]:
    """(BaseNode, End, Graph, FullStatePersistence), or NotApplicable on a release without them."""
    try:
        from pydantic_graph import BaseNode, End, Graph
        from pydantic_graph.persistence.in_mem import FullStatePersistence
    except ImportError as exc:
        if not (exc.name or "").startswith("pydantic_graph"):
            raise  # a dependency missing from the environment: a harness error, not a finding
        raise NotApplicable(f"no in-memory state persistence in this release ({exc})") from None
    if not hasattr(Graph, "iter_from_persistence"):
        raise NotApplicable("Graph has no iter_from_persistence in this release")
    return BaseNode, End, Graph, FullStatePersistence


@CELLS.cell("1684")
def full_state_history_mutated(c: CellBase, start: int = 3) -> Observed:
    """A count-down graph resumed one node at a time from ``FullStatePersistence``; the history's
    recorded states are read right after each snapshot appears and again at the end."""
    BaseNode, End, Graph, FullStatePersistence = _persistence_api()

    @dataclass
    class Count:
        counter: int

    @dataclass
    class CountDown(BaseNode[Count, None, int]):  # type: ignore[misc, valid-type]
        async def run(self, ctx: Any) -> "CountDown | End[int]":  # type: ignore[name-defined]
            c.log(Kind.STEP_BEGIN, f"count@{ctx.state.counter}")
            ctx.state.counter -= 1
            c.fire(f"count:{ctx.state.counter}", "CountDown")
            c.log(Kind.STEP_END, f"count@{ctx.state.counter}")
            if ctx.state.counter <= 0:
                return End(ctx.state.counter)
            return CountDown()

    CountDown.run.__annotations__["return"] = CountDown | End[int]  # resolved here: local classes
    graph = Graph(nodes=[CountDown])

    def states(persistence: Any) -> list[Any]:
        return [getattr(s.state, "counter", None) for s in persistence.history]

    async def drive() -> tuple[list[Any], list[Any], int]:
        persistence = FullStatePersistence()
        await graph.initialize(CountDown(), state=Count(start), persistence=persistence)
        recorded = states(persistence)  # the value each snapshot had when it first appeared
        c.log(Kind.START, value=start)
        resumes = 0
        while resumes < 2 * start:
            c.log(Kind.RESUME, mode="next_from_persistence")
            async with graph.iter_from_persistence(persistence) as run:
                node = await run.next()
            resumes += 1
            now = states(persistence)
            recorded += now[len(recorded):]
            if isinstance(node, End):
                c.log(Kind.COMPLETE, value=node.data)
                break
        return recorded, states(persistence), resumes

    recorded, final, resumes = asyncio.run(drive())
    behaviour = (f"count-down from {start} resumed node by node with iter_from_persistence ({resumes} resumes): "
                 f"snapshot states as each was recorded {recorded}, in the history at the end {final}")
    return Observed(behaviour, {"decisions": {"as recorded": recorded, "history at the end": final}},
                    {"recorded": recorded, "final": final, "resumes": resumes})


DISTRIBUTIONS = ("pydantic-graph", "pydantic")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.studies.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
