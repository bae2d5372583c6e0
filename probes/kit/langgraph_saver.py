"""Any LangGraph checkpointer under the kit: ``python -m probes run NAME --saver module:factory``.

The workflow is a two-node ``StateGraph`` (``s1``; ``s2`` calls ``interrupt()`` and then
runs the kit's second step) compiled with the checkpointer ``factory(location)`` returns,
where ``location`` is the SQLite file or PostgreSQL DSN the harness made for the probe.
The factory is named by ``RC_KIT_SAVER`` (the command line sets it), so every probe
process builds the same saver. A pause's handle is its checkpoint id; recovery is the
documented ``invoke(None, config)`` on the thread. Its ``put`` is hooked, so the kit
kills inside the checkpointer's own write. The saver's storage is opaque to the kit: no
tamper protocol.
"""

import importlib
import os
from typing import Any

from probes.citations import doc
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability

THREAD = {"configurable": {"thread_id": "kit"}}


def sqlite_saver(location: str) -> Any:
    """A factory for the stock ``SqliteSaver`` (langgraph-checkpoint-sqlite)."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver
    return SqliteSaver(sqlite3.connect(location, check_same_thread=False))


def _factory() -> Any:
    module, _, name = os.environ.get("RC_KIT_SAVER", "probes.kit.langgraph_saver:sqlite_saver").partition(":")
    return getattr(importlib.import_module(module), name)


class SaverAdapter(Adapter):
    framework = "langgraph"
    packages = ("langgraph", "langgraph-checkpoint")
    backends = ("sqlite", "postgres")
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.SAVE_HOOK,
                              Capability.CODE_CHANGE, Capability.TWO_PAUSES})
    code_changes = runtime.CODE_CHANGES
    missing = {Capability.TAMPER: "a checkpointer's storage is its own: the kit cannot edit it generically"}
    recovery_modes = ("none-input",)
    # As the paper's LangGraph campaign cites each property (probes/citations.py), and LG-4 where a crash
    # restarts the node that was running (recovery is invoke(None): the node's top, its effect again).
    citations = {
        "EO *": doc("LG-15", "claims"), "CO *": doc("LG-15", "claims"), "PC *": doc("LG-1", "claims"),
        "LV *": doc("LG-23", "claims"), "RD *": doc("LG-30", "claims"), "CV *": doc("LG-21", "deviation"),
        "EO crash:*": doc("LG-4", "deviation"), "EO save-kill:*": doc("LG-4", "deviation"),
        # a node with two interrupts re-runs from its top on the second answer (the code between them too)
        "EO pause-twice:*": doc("LG-14", "deviation"), "CO pause-twice:*": doc("LG-14", "deviation"),
    }

    def hook(self) -> None:
        self._saver = _factory()(self.store)
        runtime.hook_save(type(self._saver), "put")

    def _graph(self) -> Any:
        """The kit's workflow as a ``StateGraph`` chain, one node per step of ``runtime.shape()``
        (the original two steps, or the code a change protocol deployed)."""
        from typing import TypedDict

        from langgraph.graph import END, START, StateGraph
        from langgraph.types import interrupt

        class State(TypedDict):
            out: str

        def s1(state: State) -> dict:
            return {"out": runtime.step1()}

        def s2(state: State) -> dict:
            runtime.before_pause()
            return {"out": runtime.step2(interrupt("answer?"))}

        def s2_twice(state: State) -> dict:  # two interrupts in one node
            runtime.before_pause()
            runtime.first_answer(interrupt("first answer?"))
            return {"out": runtime.second_answer(interrupt("second answer?"))}

        def extra(name: str) -> Any:
            return lambda state: {"out": runtime.extra_step(name, state["out"])}

        bodies = {"first": lambda name: s1, "pause": lambda name: s2, "pause-twice": lambda name: s2_twice,
                  "extra": extra}
        graph = StateGraph(State)
        previous = START
        for name, role in runtime.shape():
            graph.add_node(name, bodies[role](name))
            graph.add_edge(previous, name)
            previous = name
        graph.add_edge(previous, END)
        return graph.compile(checkpointer=self._saver)

    def _invoke(self, payload: Any, checkpoint: str | None = None) -> dict[str, Any]:
        graph = self._graph()
        config = {"configurable": {**THREAD["configurable"], **({"checkpoint_id": checkpoint} if checkpoint else {})}}
        result = graph.invoke(payload, config)
        snapshot = graph.get_state(THREAD)
        # the returned ``__interrupt__`` is LangGraph's documented signal of a pause: after the first
        # answer to a node with two interrupts, 1.2.9's state lists no next node for the second
        if snapshot.next or (isinstance(result, dict) and result.get("__interrupt__")):
            return {"status": "paused", "handle": snapshot.config["configurable"]["checkpoint_id"]}
        return {"status": "completed", "outcome": snapshot.values.get("out")}

    def start(self) -> dict[str, Any]:
        return self._invoke({"out": ""})

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        from langgraph.types import Command
        return self._invoke(Command(resume=answer), handle)

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        if self._graph().get_state(THREAD).config.get("configurable", {}).get("checkpoint_id") is None:
            return self.start()  # nothing durable on the thread: start over
        return self._invoke(None)
