"""Concurrent first use of the consume gate on a fresh PostgreSQL database.

Before this was fixed, two racers creating the claim table at once could get
``psycopg.errors.DuplicateObject: type "remit_claims" already exists`` instead of
``ConsumeConflict``. Each round here: a fresh database, a thread parked at its
interrupt (no claim table yet), then k racer processes resume it at a barrier. Every
round must give exactly one completion and k-1 ConsumeConflicts, and the gated effect
fires once (the harness's crash-surviving ledger).

``RC_FIRST_USE_ROUNDS`` sets the number of rounds (default 10 in the suite; the
issue's acceptance run is 100).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path

import pytest

from probes.core.backends import postgres_service
from probes.core.oracle import Ledger
from probes.remit.workloads import park_to_interrupt, racer_loop

GATE = {"consume_gate": True}


def _rounds() -> int:
    return int(os.environ.get("RC_FIRST_USE_ROUNDS", "10"))


@pytest.mark.slow
def test_first_use_races_on_fresh_postgres(tmp_path: Path) -> None:
    k, rounds = 8, _rounds()
    ctx = mp.get_context("spawn")
    barrier, outbox = ctx.Barrier(k), ctx.Queue()
    inboxes = [ctx.Queue() for _ in range(k)]
    procs = [ctx.Process(target=racer_loop, args=("postgres", GATE, f"racer-{i}", barrier, inboxes[i], outbox))
             for i in range(k)]
    for p in procs:
        p.start()
    bad: list[str] = []
    started = time.monotonic()
    try:
        with postgres_service(tmp_path / "pg") as service:
            for n in range(rounds):
                dsn = service.fresh_dsn(f"first{n}")
                ledger = str(tmp_path / f"effects-{n}.sqlite")
                park_to_interrupt("postgres", dsn, ledger, GATE)
                for q in inboxes:
                    q.put((dsn, ledger))
                results = [outbox.get(timeout=300) for _ in range(k)]
                outcomes = sorted(r["outcome"] for r in results)
                fires = Ledger(ledger).counts().get("gate", 0)
                if outcomes != ["completed"] + ["conflict"] * (k - 1) or fires != 1:
                    bad.append(f"round {n}: outcomes {outcomes}, fired {fires}x, "
                               f"errors {[r.get('error') for r in results if r.get('error')]}")
    finally:
        for q in inboxes:
            q.put(None)
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
    print(f"{rounds} first-use races, k={k}: {time.monotonic() - started:.1f} s")
    assert not bad, bad
