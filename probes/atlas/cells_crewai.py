"""The CrewAI atlas cells (``python -m probes.atlas.cells_crewai``, in a release's side environment).

The vocabulary is ``probes.atlas.cellkit``'s. CrewAI is imported inside the cells
(its import costs seconds; the warm server pays it once per release). Flows only: no
agent, no model call. Telemetry is switched off before the import.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from probes.atlas.cellkit import CellBase, Module, NotApplicable, Observed, Registry, err
from probes.core.history import Kind

CELLS = Registry()
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")


@CELLS.cell("4501")
def cyclic_persisted_flow_by_id(c: CellBase, cycles: int = 3) -> Observed:
    """A ``@persist`` flow whose router loops ``cycles`` times, kicked off once, then again with
    ``kickoff(inputs={"id": <its id>})`` (the documented way to reload its state). Each run's start
    method resets the loop counter, so each run should loop ``cycles`` times and finish."""
    try:
        from crewai.flow.flow import Flow, listen, or_, router, start
        from crewai.flow.persistence import persist
        from crewai.flow.persistence.sqlite import SQLiteFlowPersistence
    except ImportError as exc:
        raise NotApplicable(f"no @persist flows with routers in this release ({exc})") from None
    from pydantic import BaseModel

    class LoopState(BaseModel):
        id: str = ""
        n: int = 0
        run: int = 0

    class Loop(Flow[LoopState]):  # type: ignore[misc, valid-type]
        @start()
        def begin(self) -> None:
            self.state.run += 1
            self.state.n = 0
            c.log(Kind.STEP_BEGIN, f"begin#{self.state.run}")

        @router(or_("begin", "work"))
        def route(self) -> str:
            return "again" if self.state.n < cycles else "done"

        @listen("again")
        def work(self) -> None:
            self.state.n += 1
            c.fire(f"run{self.state.run}:work{self.state.n}", "work")

        @listen("done")
        def finish(self) -> None:
            c.fire(f"run{self.state.run}:finish", "finish")
            c.log(Kind.COMPLETE, value=self.state.n)

    Persisted = persist(SQLiteFlowPersistence(str(c.workdir / "flows.sqlite")))(Loop)
    runs: dict[str, Any] = {}
    flow_id = None
    for label in ("first kickoff", "kickoff(inputs={'id': ...})"):
        flow = Persisted()
        c.log(Kind.START if flow_id is None else Kind.RESUME, value=label, mode="by id")
        try:
            flow.kickoff(inputs={"id": flow_id} if flow_id else None)
            error = None
        except Exception as exc:  # a loud failure is an observation
            error = err(exc)
        flow_id = flow_id or flow.state.id
        runs[label] = {"loops": flow.state.n, "run": flow.state.run, "error": error}
    counts = c.ledger.counts()
    second = runs["kickoff(inputs={'id': ...})"]
    finished = counts.get(f"run{second['run']}:finish", 0) == 1
    behaviour = "; ".join(f"{k}: looped {v['loops']}x of {cycles}" + (f", raised {v['error']}" if v["error"] else "")
                          for k, v in runs.items()) + f"; the reloaded run {'reached' if finished else 'never reached'} " \
                                                      f"its finish step"
    completed = finished and second["loops"] == cycles and second["error"] is None
    return Observed(behaviour, {"completed": completed,
                                "detail": f"reloaded run looped {second['loops']}x of {cycles}, finish "
                                          f"{'ran' if finished else 'did not run'}"},
                    {"runs": runs, "counts": counts})


DISTRIBUTIONS = ("crewai", "pydantic")
MODULE = Module(CELLS, lambda backend, location, workdir: CellBase(backend, location, Path(workdir)), DISTRIBUTIONS)

if __name__ == "__main__":
    from probes.atlas.cellkit import main

    sys.exit(main(MODULE, sys.argv))
