"""The long-lived worker pool: barrier release, and failures reported, bounded and recovered.

The handlers below run inside real worker processes (``tests.test_worker:...``).
No assertion depends on how fast the machine is: ordering is checked with the
system-wide monotonic clock, and the only bound is the pool's own timeout.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import pytest

from probes.core.worker import WorkerPool


class Recorder:
    """prepare may be slow for one worker; go reports when it was released."""

    def prepare(self, task: dict[str, Any]) -> dict[str, Any]:
        self.task = task
        if task.get("slow_prepare_s"):
            time.sleep(task["slow_prepare_s"])  # a slow preparation, the thing the barrier must wait for
        return {"prepared_until": time.monotonic(), "pid": os.getpid()}

    def go(self) -> dict[str, Any]:
        return {"released": time.monotonic(), "pid": os.getpid(), "echo": self.task.get("echo")}


class Faulty(Recorder):
    """Crashes, hangs or raises on request -- the deliberately broken racer."""

    def prepare(self, task: dict[str, Any]) -> dict[str, Any]:
        if task.get("fault") == "raise_in_prepare":
            raise RuntimeError("deliberate failure while getting ready")
        return super().prepare(task)

    def go(self) -> dict[str, Any]:
        fault = self.task.get("fault")
        if fault == "crash":
            print("deliberate crash: this worker exits with status 3", file=sys.stderr, flush=True)
            os._exit(3)
        if fault == "hang":
            print("deliberate hang: this worker never answers", file=sys.stderr, flush=True)
            time.sleep(3600)
        return super().go()


class BrokenFactory:
    def __init__(self) -> None:
        raise ImportError("deliberately broken worker target")


def test_release_waits_for_every_worker_and_all_answer() -> None:
    with WorkerPool("tests.test_worker:Recorder", 4) as pool:
        tasks = [{"echo": i, "slow_prepare_s": 0.5 if i == 2 else 0} for i in range(4)]
        race = pool.race(tasks, timeout=60)
        assert race.released
        assert [o.status for o in race.outcomes] == ["ok"] * 4
        assert [o.value["echo"] for o in race.outcomes] == [0, 1, 2, 3]
        slowest_ready = max(o.prepared["prepared_until"] for o in race.outcomes)
        # The barrier: nobody was released before the slowest worker was ready.
        assert all(o.released_at >= slowest_ready for o in race.outcomes)
        assert race.release_spread_s is not None and race.release_spread_s >= 0
        pids = {o.pid for o in race.outcomes}
        assert len(pids) == 4
        # Long-lived: the next round runs in the same processes.
        again = pool.race([{"echo": i} for i in range(4)], timeout=60)
        assert {o.pid for o in again.outcomes} == pids
        assert pool.spawned == 4


def test_crashed_and_hung_workers_are_reported_with_stderr_and_replaced() -> None:
    with WorkerPool("tests.test_worker:Faulty", 3) as pool:
        race = pool.race([{"echo": 0}, {"fault": "crash"}, {"fault": "hang"}], timeout=4)
        assert race.released
        ok, crashed, hung = race.outcomes
        assert ok.status == "ok" and ok.value["echo"] == 0
        assert crashed.status == "crashed" and crashed.phase == "go"
        assert "deliberate crash" in crashed.error and "exit status 3" in crashed.error
        assert hung.status == "timeout" and hung.phase == "go"
        assert "deliberate hang" in hung.error
        assert [o.worker for o in race.failures] == [1, 2]
        # The pool goes on: the two dead slots get fresh processes before the next round.
        again = pool.race([{"echo": i} for i in range(3)], timeout=60)
        assert [o.status for o in again.outcomes] == ["ok"] * 3
        assert again.outcomes[0].pid == ok.pid
        assert again.outcomes[1].pid != crashed.pid and again.outcomes[2].pid != hung.pid
        assert pool.spawned == 5


def test_a_worker_that_cannot_get_ready_releases_nobody() -> None:
    with WorkerPool("tests.test_worker:Faulty", 3) as pool:
        race = pool.race([{"echo": 0}, {"fault": "raise_in_prepare"}, {"echo": 2}], timeout=60)
        assert not race.released
        assert [o.status for o in race.outcomes] == ["skipped", "error", "skipped"]
        assert "deliberate failure while getting ready" in race.outcomes[1].error
        assert all(o.value is None and o.released_at is None for o in race.outcomes)
        # The handler's exception did not kill the worker: same processes next round.
        again = pool.race([{"echo": i} for i in range(3)], timeout=60)
        assert [o.status for o in again.outcomes] == ["ok"] * 3
        assert pool.spawned == 3


def test_a_target_that_cannot_start_is_reported_not_raised() -> None:
    with WorkerPool("tests.test_worker:BrokenFactory", 2, start_timeout=120) as pool:
        race = pool.race([{}, {}], timeout=30)
        assert not race.released
        assert {o.status for o in race.outcomes} == {"crashed"}
        assert all("deliberately broken worker target" in o.error for o in race.outcomes)


def test_closed_pool_refuses_rounds() -> None:
    pool = WorkerPool("tests.test_worker:Recorder", 1)
    assert pool.call({"echo": "x"}, timeout=60).value["echo"] == "x"
    proc = pool.workers[0].proc
    pool.close()
    assert proc.poll() is not None
    with pytest.raises(RuntimeError):
        pool.call({}, timeout=5)
