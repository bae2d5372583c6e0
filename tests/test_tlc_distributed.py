"""TLC's distributed mode end to end: a server and two worker processes on 127.0.0.1."""

from __future__ import annotations

import pytest

from probes.tla import configs
from probes.tla.distributed import java_can_launch_source, run_distributed
from probes.tla.runner import TlcError, find_java, run_tlc

BOUNDS = list(configs.REFERENCE_BOUNDS)


def test_server_and_two_workers_agree_with_one_process() -> None:
    if not java_can_launch_source(find_java()):
        pytest.fail("distributed TLC needs a Java with jdk.compiler (.ci/run installs default-jre-headless)")
    cfg = configs.reference(BOUNDS)
    dist = run_distributed(cfg, workers=2, threads=1, heap_mb=512, worker_heap_mb=384, timeout=600)
    local = run_tlc(cfg)
    assert dist.result.result == "holds", dist.result.error
    assert dist.result.distinct == local.distinct and dist.result.search_depth == local.search_depth
    assert dist.fpsets == 2                       # both workers' fingerprint sets took part
    assert all(w.exit_code == 0 for w in dist.workers), [w.log_tail for w in dist.workers]
    assert sum(w.computed or 0 for w in dist.workers) >= local.distinct
    assert dist.bind == "127.0.0.1"


def test_distributed_finds_the_same_violation() -> None:
    cfg = configs.fault("ForkIgnore", BOUNDS, "FD")
    dist = run_distributed(cfg, workers=2, heap_mb=512, worker_heap_mb=384, timeout=600)
    # TLC 2.15's distributed server does not name the invariant and shows only the last
    # two states; the violating state is the fork that observed the first answer
    assert dist.result.result == "violated" and "does not name" in dist.result.violated
    last = dist.result.trace[-1]
    assert last.action == "LaterResume" and 'intent |-> "fork"' in last.values["resumes"]
    assert last.values["writes"].replace(" ", "").count("<<<<") == 1


def test_a_timeout_reports_what_each_process_printed_last() -> None:
    """A run that does not finish says where each JVM was (the evidence for a hang), not only that it hung."""
    with pytest.raises(TlcError, match=r"within 1 s; last lines: server: .+ \| worker1: .+ \| worker2: .+"):
        run_distributed(configs.reference(BOUNDS), workers=2, heap_mb=512, worker_heap_mb=384, timeout=1)
