"""pydantic-graph (BaseNode ``Graph``): a run that stops at a node needing the answer.

``S1`` runs the kit's first step; ``Ask`` starts the second and returns ``S2()`` with no
answer: the pause. The application stops iterating there (as the docs' question-graph
example stops at its ``Answer`` node), leaving ``S2()`` a ``'created'`` snapshot in
``FileStatePersistence``'s JSON file (one file per run, PG-9). Answering, in a fresh
process: ``graph.iter_from_persistence`` claims the first ``'created'`` snapshot
(``load_next``), then ``run.next(S2(answer))`` records the answered node and runs it
(``GraphRun.next``: "inspect or mutate the node before continuing"). A handle is the
pause's snapshot id, informative only: the framework has no addressed resume. Recovery
(PG-1) is ``iter_from_persistence``. Durable documents: the file's snapshots
(``<file>#<index>``, newest last). SAVE_HOOK: ``FileStatePersistence._save_sync``, through
which every write of the file goes (``Path.write_bytes``, in place, under its lock file).

Two hooks for pydantic-graph's own protocols (``probes.frameworks.pydantic_graph.protocols``), inert
otherwise: a park point ``claimed`` right after ``iter_from_persistence`` claimed the pause and
before the answered node runs (``nemesis.park``, not ``runtime.point``: the kit's traced
enumeration of crash points, ``probes.kit.exhaustive``, stays the kit's own); and the workflow
variant ``invalid-write`` (environment ``RC_PG_WORKFLOW``), whose state declares an ``int`` field
that ``S1`` writes a ``str`` into. Without the variable the graph is the kit's, unchanged.
"""

import asyncio
import json
import os
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probes.citations import doc
from probes.core.nemesis import park
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability, required_fields

FILE = "graph-run.json"
CLAIMED = "claimed"  # park point: the pause claimed by iter_from_persistence (load_next), its node not yet run
WORKFLOW_ENV = "RC_PG_WORKFLOW"  # the workflow variant a process builds; unset: the kit's workflow
INVALID_WRITE = "invalid-write"  # the variant whose S1 writes INVALID_VALUE into the declared int INVALID_FIELD
INVALID_FIELD, INVALID_VALUE = "count", "eleven"


def workflow() -> str | None:
    """The workflow variant this process builds (``WORKFLOW_ENV``), or None for the kit's."""
    return os.environ.get(WORKFLOW_ENV) or None


def _graph() -> Any:
    """The graph of ``runtime.shape()`` (the original ``S1 -> Ask -> S2``, or the code a change protocol
    deployed), a node class per step named after it (``s2r`` -> ``S2R``; the paused step's asking node
    ``Ask``, or ``AskS2R``), each ``run`` annotated with the node it returns (its edges). Returns the
    graph, the first node's class, the answered node's class and the state class."""
    from pydantic_graph import BaseNode, End, GraphRunContext
    from pydantic_graph.graph import Graph

    @dataclass
    class State:
        note: str = ""

    @dataclass
    class CountedState(State):
        count: int = 0  # declared int (INVALID_FIELD): the invalid-write variant's S1 writes a str into it

    invalid = workflow() == INVALID_WRITE
    state = CountedState if invalid else State

    def node(name: str, run: Any, returns: Any, **fields: Any) -> type:
        run.__annotations__ = {"ctx": GraphRunContext[state], "return": returns}
        def body(ns: dict[str, Any]) -> None:
            ns.update(run=run, __annotations__=dict.fromkeys(fields, Any), __module__=__name__, **fields)
        return dataclass(types.new_class(name, (BaseNode[state, None, str],), exec_body=body))

    def then(after: Any, value: Any) -> Any:  # the next node, given what this one produced
        return End(value) if after is End[str] else after(**({"passed": value} if "passed" in after.__dataclass_fields__
                                                             else {}))

    classes: list[type] = []
    answered: type | None = None
    after: Any = End[str]
    for index, (name, role) in reversed(list(enumerate(runtime.shape()))):
        if role == "first":  # after another step (the steps swapped) it takes that step's value
            extra = {"passed": None} if index > 0 else {}
            async def first(self: Any, ctx: Any, after: Any = after) -> Any:
                ctx.state.note = runtime.step1()
                if invalid:
                    setattr(ctx.state, INVALID_FIELD, INVALID_VALUE)  # a str into the declared int
                return then(after, ctx.state.note)
            after = node(name.upper(), first, after, **extra)
        elif role == "extra":
            async def more(self: Any, ctx: Any, after: Any = after, name: str = name) -> Any:
                return then(after, runtime.extra_step(name, self.passed))
            after = node(name.upper(), more, after, passed=None)
        else:
            async def take(self: Any, ctx: Any, after: Any = after) -> Any:
                return then(after, runtime.step2(self.answer))
            answered = node(name.upper(), take, after, answer=None)  # answer None: the pause

            async def ask(self: Any, ctx: Any, answered: Any = answered) -> Any:
                runtime.before_pause()
                return answered()
            after = node("Ask" if name == "s2" else f"Ask{name.upper()}", ask, answered)
            classes.append(answered)
        classes.append(after)
    return Graph(nodes=classes[::-1], name="kit"), after, answered, state


async def _drive(run: Any, node: Any, S2: type) -> dict[str, Any]:
    """Run node after node; stop at the pause (an ``S2`` without answer) or at the end."""
    from pydantic_graph import End
    while not isinstance(node, End):
        if isinstance(node, S2) and node.answer is None:
            return {"status": "paused", "handle": node.get_snapshot_id()}
        node = await run.next(node)
    return {"status": "completed", "outcome": node.data}


class PydanticGraphAdapter(Adapter):
    framework = "pydantic-graph"
    packages = ("pydantic-graph",)
    imports = ("pydantic_graph", "pydantic_graph.persistence.file")
    backends = ("file",)
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.CODE_CHANGE})
    # Read from 1.107.1 and measured: a BaseNode Graph's nodes are BaseNode classes (a Graph passed as a node is
    # refused: AttributeError, no get_node_id); the builder API's subgraphs are a TODO in graph_builder.py ("Support
    # adding subgraphs") and that API has no persistence; a graph iterated inside a node is a run with a
    # persistence of its own, and a node cannot stop its run: it returns the next node or End.
    missing = {Capability.DELETE: "pydantic-graph 1.107.1's state persistence has no deletion: BaseStatePersistence "
                                  "(FileStatePersistence, SimpleStatePersistence) snapshots, records runs and loads, "
                                  "and nothing deletes a run; its file is the persistence's own, not the adapter's",
               # Read from the installed source (1.107.1): BaseNode.run returns the one next node or End; the
               # builder's graphs (graph_builder.GraphBuilder) fork (broadcast, map) and join, but take no persistence.
               Capability.PARALLEL: "pydantic-graph 1.107.1 has no parallel branches that pause and resume: a BaseNode "
                                    "Graph, the one with state persistence (iter_from_persistence), runs one next node "
                                    "at a time (BaseNode.run returns one node or End), and GraphBuilder's graphs, which "
                                    "fork and join, have no state persistence to resume a paused branch from",
               Capability.NESTED: "pydantic-graph 1.107.1 has no nesting that pauses and resumes: a Graph is not a "
                                  "node of another (refused: no get_node_id), the builder API's subgraphs are a TODO "
                                  "and it has no persistence, and a graph run inside a node keeps its own "
                                  "persistence, which the outer run's snapshots do not hold (a node cannot stop "
                                  "the outer run to wait for it)"}
    code_changes = runtime.CODE_CHANGES
    # Read from the installed 1.107.1 source. HANDLER: GraphRun.next runs a node inside
    # persistence.record_run, which on an exception marks the snapshot 'error' and re-raises
    # (persistence/file.py), and next re-raises it (graph.py); a node's edges are its run's return
    # annotation, with no error edge. The builder's GraphRun yields an ErrorMarker its caller may
    # recover from with override_next (graph_builder.py), but that API has no persistence (PG-8), so
    # no pause of it outlives its process. CALLBACK: no Callable, hook or callback appears in graph.py,
    # basenode.py, nodes.py or persistence/ (the reasons name the parameters each entry point takes).
    missing = {**missing,
        Capability.HANDLER: "pydantic-graph 1.107.1 has no error handler for a run that pauses and resumes: in the "
                            "BaseNode Graph, the one with state persistence, a node's exception leaves "
                            "GraphRun.next (pydantic_graph/graph.py) after FileStatePersistence.record_run marks "
                            "its snapshot 'error' (persistence/file.py), and a node's edges are its run's return "
                            "annotation, none for an error; the builder API's GraphRun lets its caller recover "
                            "from a node's error (ErrorMarker, override_next in graph_builder.py) but has no state "
                            "persistence (PG-8)",
        Capability.CALLBACK: "pydantic-graph 1.107.1 has no approval callback or hook: Graph takes nodes, a name, "
                             "the state and end types and auto_instrument, Graph.iter a start node, state, deps, "
                             "persistence, a span and infer_name (iter_from_persistence the same but the node and "
                             "state), and nothing in pydantic_graph/graph.py, "
                             "basenode.py or persistence/ takes a callable to run around a node or a pause; a pause "
                             "is the application stopping its GraphRun.next loop at a node without its answer, and "
                             "the code before it is a node's run",
    }
    recovery_modes = ("iter-from-persistence",)
    answers = ("yes", "no")
    # As the paper's campaign cites them (probes/citations.py): the 1.107.1 status contract refuses a
    # snapshot left running by a crash (PG-2); load_next hands a 'created' snapshot out once (PG-4).
    # A pause claimed by a process that died is no longer 'created': load_next, as PG-4 states, hands
    # out only a 'created' snapshot, so recovery finds nothing to restore (the weaker behaviour, stated).
    citations = {"LV crash:*": doc("PG-2", "deviation"), "CO *": doc("PG-4", "claims"),
                 "LV claimed-pause": doc("PG-4", "deviation")}

    def hook(self) -> None:
        from pydantic_graph.persistence.file import FileStatePersistence
        runtime.hook_save(FileStatePersistence, "_save_sync", writes=((Path, "write_bytes"),))

    def _persistence(self, graph: Any) -> Any:
        from pydantic_graph.persistence.file import FileStatePersistence
        persistence = FileStatePersistence(self.workdir / FILE)
        persistence.set_graph_types(graph)
        return persistence

    def start(self) -> dict[str, Any]:
        graph, S1, S2, State = _graph()

        async def go() -> dict[str, Any]:
            async with graph.iter(S1(), state=State(), persistence=self._persistence(graph)) as run:
                return await _drive(run, run.next_node, S2)
        return asyncio.run(go())

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        graph, _, S2, _ = _graph()

        async def go() -> dict[str, Any]:
            async with graph.iter_from_persistence(self._persistence(graph)) as run:  # claims the pause
                park(CLAIMED)
                paused = isinstance(run.next_node, S2) and run.next_node.answer is None
                return await _drive(run, S2(answer=answer) if paused else run.next_node, S2)
        return asyncio.run(go())

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        from pydantic_graph.persistence import EndSnapshot, NodeSnapshot
        graph, _, S2, _ = _graph()

        async def go() -> dict[str, Any] | None:
            persistence = self._persistence(graph)
            snapshots = await persistence.load_all()
            if not snapshots:
                return self.nothing_durable("no snapshot persisted yet")
            if ends := [s for s in snapshots if isinstance(s, EndSnapshot)]:  # the run had finished
                return {"status": "completed", "outcome": ends[-1].result.data}
            created = [s for s in snapshots if isinstance(s, NodeSnapshot) and s.status == "created"]
            if created and isinstance(created[0].node, S2) and created[0].node.answer is None:
                return {"status": "paused", "handle": created[0].id}  # waits for its answer: do not claim it
            async with graph.iter_from_persistence(persistence) as run:
                return await _drive(run, run.next_node, S2)
        return asyncio.run(go()) or self.start()

    def state_paths(self) -> list[Any]:  # the file is a JSON list of snapshots, each one document
        path = self.workdir / FILE
        return [f"{FILE}#{i}" for i in range(len(json.loads(path.read_text())))] if path.exists() else []

    def load_state(self, path: Any) -> Any:
        return json.loads((self.workdir / FILE).read_text())[int(path.rpartition("#")[2])]

    def state_required(self, doc: Any) -> dict[str, Any]:
        """A document is one snapshot of the file: pydantic-graph's ``NodeSnapshot`` or
        ``EndSnapshot`` dataclass (by its ``kind``), whose fields without a default are required."""
        from pydantic_graph.persistence import EndSnapshot, NodeSnapshot
        model = EndSnapshot if isinstance(doc, dict) and doc.get("kind") == "end" else NodeSnapshot
        return {"status": "schema", "required": required_fields(model),
                "model": f"pydantic_graph.persistence.{model.__name__}"}

    def save_state(self, path: Any, data: Any) -> None:
        snapshots = json.loads((self.workdir / FILE).read_text())
        snapshots[int(path.rpartition("#")[2])] = data
        (self.workdir / FILE).write_text(json.dumps(snapshots))
