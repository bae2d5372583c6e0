"""The partition protocol (``probes.kit.protocols.partition``) and its harness (``probes.core.netns``).

Two racers in network namespaces of their own answer one paused LangGraph run on PostgreSQL;
racer A's link to the store is cut inside the answered step, B answers meanwhile, then the link
comes back. The stock PostgresSaver lets both consume; REMIT's consume gate refuses B (A's claim
is held by a live process); with a lease (``claim_ttl``) B takes the partitioned owner's claim
over, and both consume. Every namespace, veth pair and bridge is gone afterwards. Needs root (as
CI runs) and iproute2; skipped with the reason where namespaces cannot be made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from probes.core import netns
from probes.core.backends import postgres_service
from probes.core.campaign import run_campaign
from probes.core.checker import Property
from probes.core.history import History
from probes.kit.suite import kit_campaign
from probes.tla.trace import Recorded
from tests.installed import require

WHY = netns.unavailable()
pytestmark = pytest.mark.skipif(WHY is not None, reason=f"network namespaces: {WHY}")


def _partition(name: str, adapter: str, out: Path, **params: Any) -> Any:
    campaign = kit_campaign(name, name, adapter)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["partition"], "backends": ["postgres"], **params},
                                                  quick=True), out)
    assert run.harness_errors == []
    (receipt,) = run.receipts
    assert netns.leftovers() == []
    return receipt


def _labels(receipt: Any) -> dict[Property, str]:
    return {v.property: v.label.value for v in receipt.verdicts}


@pytest.mark.parametrize("saver, b, consumed", [
    (None, "completed", 2),
    ("tests.fixtures.remit_savers:gated_postgres", "raised ConsumeConflict", 1),
    # with a lease the claim of the cut-off racer expires, but its answer is already durable: REMIT's gate
    # never takes over a stored answer (before the fix of 2026-12-03 it did, and the gate fired twice)
    ("tests.fixtures.remit_savers:gated_postgres_lease", "raised ConsumeConflict", 1),
])
def test_a_racer_cut_off_from_the_store_and_another_that_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, saver: str | None, b: str, consumed: int) -> None:
    require("langgraph.checkpoint.postgres")
    if saver:
        monkeypatch.setenv("RC_KIT_SAVER", saver)
    adapter = "probes.frameworks.langgraph.saver:SaverAdapter" if saver else "probes.frameworks.langgraph.adapter:StockSaverAdapter"
    receipt = _partition("lg_partition", adapter, tmp_path)
    seen = receipt.observations["partition"]
    assert (seen["a"], seen["b"]) == ("completed", b)  # A's writes landed once its link came back
    co = next(v for v in receipt.verdicts if v.property is Property.CO)
    assert co.evidence["gate_fires"] == consumed
    labels = _labels(receipt)
    assert labels[Property.LV] == "✓"
    if saver is None:  # a second invocation before the first finished: LangGraph documents it (LG-28)
        assert (labels[Property.CO], labels[Property.EO]) == ("D", "D")
    else:
        assert labels[Property.CO] == ("✓" if consumed == 1 else "✗")
    history = History.from_json(receipt.observations["history"])
    assert Recorded("x", "lg_partition", "langgraph", "partition", history).outside_model.startswith(
        "a process cut off from the store")


def test_on_another_backend_the_partition_is_not_applicable(tmp_path: Path) -> None:
    campaign = kit_campaign("plain_partition", "plain", "tests.fixtures.plain_adapter:PlainAdapter")
    run = run_campaign(campaign, campaign.resolve({"protocols": ["partition"]}, quick=True), tmp_path)
    (receipt,) = run.receipts
    assert {v.label.value for v in receipt.verdicts} == {"n/a"}
    assert "the file backend has no link to cut" in receipt.verdicts[0].summary


def test_a_partition_leaves_nothing_behind_when_its_block_fails() -> None:
    with postgres_service() as service:
        dsn = service.fresh_dsn("netns")
        with pytest.raises(RuntimeError, match="inside"):
            with netns.Partition(dsn, 2, "python3") as net:
                assert len(net.tcp) == 2 and len(set(net.tcp)) == 2
                assert all(name.startswith(netns.PREFIX) for name in netns.leftovers())
                net.cut(0)
                raise RuntimeError("inside the partition")
    assert netns.leftovers() == []


def test_the_socket_of_a_dsn_by_directory() -> None:
    assert netns.unix_socket("postgresql://postgres:@/db1?host=/tmp/pg") == ("/tmp/pg/.s.PGSQL.5432", "db1")
    with pytest.raises(ValueError, match="TCP"):
        netns.unix_socket("postgresql://postgres@localhost:5432/db1")
