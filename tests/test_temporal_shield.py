"""A cancellation temporalio raises inside a threaded activity never cuts a kit effect in two.

temporalio cancels a synchronous activity on a thread pool by raising ``CancelledError`` in its
thread. Landing between the effect counter and the ledger commit it made the two oracles disagree
(the drift campaign's Temporal stall cell, twice). ``probes.frameworks.temporal.worker.shield_effects`` runs each
effect inside temporalio's ``shield_thread_cancel_exception``. The test drives temporalio's own
``ActivityEnvironment`` (the thread-raising canceller the worker uses) in the Temporal side
environment: the cancellation arrives while the ledger row is being written, with and without the
shield.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from probes import PROJECT_ROOT
from probes.frameworks.temporal.campaign import ENV

SCRIPT = r"""
import json, sys, threading
from temporalio.exceptions import CancelledError
from temporalio.testing import ActivityEnvironment
from probes.core.oracle import cross_check
from probes.kit import runtime
from probes.frameworks.temporal import worker

work, shielded = sys.argv[1], sys.argv[2] == "shielded"
runtime.install(f"{work}/ledger.db", f"{work}/history.db", "run/answer", f"{work}/markers")
if shielded:
    worker.shield_effects()
oracle = runtime._p().oracle
inside, go = threading.Event(), threading.Event()
commit = oracle.ledger.record

def record_when_let(*args, **kwargs):  # the ledger write, held open until the cancellation is in
    inside.set()
    go.wait()
    commit(*args, **kwargs)

oracle.ledger.record = record_when_let
env, ended = ActivityEnvironment(), []

def activity():
    try:
        env.run(runtime.step, "s1")
        ended.append("returned")
    except CancelledError:
        ended.append("cancelled")

thread = threading.Thread(target=activity)
thread.start()
inside.wait(30)
env.cancel()  # temporalio raises CancelledError in the activity's thread (deferred while shielded)
go.set()
thread.join(30)
try:
    agreed = cross_check(oracle.counter.snapshot(), oracle.ledger, "run/answer")
except Exception as exc:
    agreed = str(exc)
events = [e.kind.value for e in runtime._p().log.read().events if e.kind.value == "effect"]
print(json.dumps({"ended": ended, "oracles": agreed, "effect_events": events}))
"""


def _cancelled_inside_an_effect(tmp_path: Path, how: str) -> dict:
    work = tmp_path / how
    (work / "markers").mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    out = subprocess.run([str(ENV.ensure().python), "-c", SCRIPT, str(work), how], capture_output=True, text=True,
                         env=env, timeout=120, cwd=PROJECT_ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(300)
def test_a_cancellation_during_an_effect_waits_for_the_whole_effect(tmp_path: Path) -> None:
    seen = _cancelled_inside_an_effect(tmp_path, "shielded")
    # the effect is in both oracles and the history, and the activity still ends cancelled
    assert seen == {"ended": ["cancelled"], "oracles": {"e1": 1}, "effect_events": ["effect"]}


@pytest.mark.timeout(300)
def test_without_the_shield_the_same_cancellation_splits_the_oracles(tmp_path: Path) -> None:
    seen = _cancelled_inside_an_effect(tmp_path, "plain")
    assert seen["ended"] == ["cancelled"] and seen["effect_events"] == []
    assert seen["oracles"] == "effect oracles disagree for incarnation 'run/answer': counter {'e1': 1} vs ledger {}"
