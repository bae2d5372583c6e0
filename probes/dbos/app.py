"""The DBOS 2.27.0 application under test: s1 -> durable recv -> gated step.

Imported only inside worker processes (it imports dbos and registers the workflow at
import time, which is how DBOS computes the application version a recovering worker
must match). The campaign module never imports it.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from dbos import DBOS

from probes.core import oracle
from probes.core.nemesis import park

TOPIC = "decision"
APP_NAME = "rc-dbos-probe"
RECV_TIMEOUT_S = 600.0

# Set by the latency driver: called with perf_counter() right after the gated
# effect's ledger row committed.
on_gate: Callable[[float], None] | None = None


def f(v: int) -> int:
    """The gated outcome for answer ``v``: injective and not the identity (FD is routing)."""
    return 10 * v + 1


@DBOS.step()
def s1_step() -> str:
    oracle.fire("s1")
    return "s1 done"


@DBOS.step()
def gated_step(v: int) -> int:
    oracle.fire("gate", str(v))
    if on_gate is not None:
        on_gate(time.perf_counter())
    return f(v)


@DBOS.workflow()
def approval_workflow() -> Any:
    s1_step()
    park("dbos.after_s1")  # SIGKILL point: s1's output is durable, recv not yet entered
    v = DBOS.recv(TOPIC, timeout_seconds=RECV_TIMEOUT_S)
    if v is None:
        return None
    return gated_step(int(v))


def launch(sysdb: str, poll_interval_s: float | None = None) -> None:
    """Start DBOS in this process on an embedded SQLite system database (no admin server)."""
    config: dict[str, Any] = {
        "name": APP_NAME,
        "system_database_url": f"sqlite:///{sysdb}",
        "run_admin_server": False,
        "log_level": "WARNING",
    }
    if poll_interval_s is not None:
        config["notification_listener_polling_interval_sec"] = poll_interval_s
    DBOS(config=config)  # type: ignore[arg-type]
    DBOS.launch()


def steps(workflow_id: str) -> list[dict[str, Any]]:
    """The durable step log of a workflow, without timestamps."""
    return [
        {"id": s["function_id"], "name": s["function_name"],
         "output": s["output"] if s["function_name"] != "DBOS.sleep" else "<deadline>",
         "error": None if s["error"] is None else type(s["error"]).__name__}
        for s in DBOS.list_workflow_steps(workflow_id)
    ]


def wait_in_recv(workflow_id: str, deadline_s: float = 120.0) -> None:
    """Block until the workflow has durably entered recv (its timeout sleep is recorded).

    This waits for a durable condition, not for a time window: the poll only decides
    how soon we notice.
    """
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if any(s["function_name"] == "DBOS.sleep" for s in DBOS.list_workflow_steps(workflow_id)):
            return
        time.sleep(0.005)
    raise TimeoutError(f"workflow did not reach recv within {deadline_s} s")
