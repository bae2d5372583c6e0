"""The stall protocol (``probes.kit.protocols.stall``): a worker frozen by SIGSTOP inside the
answered step, the run taken over by another process, then the frozen worker let go on.

On a framework-free adapter the verdicts are byte-identical run to run; on LangGraph the stock
SqliteSaver lets the superseded worker finish silently, while REMIT with write ownership makes
it raise ``WriteSuperseded`` -- and in both the worker's in-flight effect fires on waking (no
checkpointer can fence an effect already inside the step's body), which EO and CO report.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from probes.core.campaign import run_campaign
from probes.core.checker import Property
from probes.kit import chapter
from probes.kit.suite import kit_campaign
from tests.installed import require


def _stall(name: str, adapter: str, out: Path, **params: Any) -> dict[str, Any]:
    campaign = kit_campaign(name, name, adapter)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["stall"], **params}, quick=True), out)
    assert run.harness_errors == []
    return {r.probe: r for r in run.receipts}


def test_a_stalled_worker_on_a_plain_file_fires_its_effect_again_and_the_verdicts_repeat(tmp_path: Path) -> None:
    runs = [_stall("plain_stall", "tests.fixtures.plain_adapter:PlainAdapter", tmp_path / str(i),
                   stall_points=["s2.consumed", "s2.effect"]) for i in (1, 2)]
    receipts = runs[0]
    assert sorted(receipts) == ["stall.s2.consumed.latest.file.rep1", "stall.s2.effect.latest.file.rep1"]
    for receipt in receipts.values():
        labels = {v.property: v.label.value for v in receipt.verdicts}
        assert labels == {Property.EO: "U", Property.CO: "U", Property.LV: "✓", Property.VO: "U"}
        vo = next(v for v in receipt.verdicts if v.property is Property.VO)
        assert {a["anomaly"] for a in vo.evidence["anomalies"]} == {"superseded-write"}
        eo = next(v for v in receipt.verdicts if v.property is Property.EO)
        assert eo.evidence["effect_counts"] == {"e1": 1, "e2": 2}
        assert receipt.observations["stall"]["superseded"] == "completed"
        kinds = [e["kind"] for e in receipt.observations["history"]]
        assert kinds.count("recover") == 1  # the takeover; the last look has a history of its own
        seen = receipt.observations["stall"]
        assert (seen["after"], seen["after_outcome"], seen["after_effects"]) == ("completed", "s2 served 'yes'", {})
    rows = chapter.stall_rows(SimpleNamespace(receipts=list(receipts.values())))  # the chapter's stall table
    assert [(r["stopped at"], r["superseded worker"], r["EO"]) for r in rows] == [
        ("s2.consumed", "completed", "U"), ("s2.effect", "completed", "U")]
    anomalies = chapter.visibility_rows(SimpleNamespace(receipts=list(receipts.values())))  # the chapter's VO table
    assert {(r["path"].split("/")[0], r["anomaly"]) for r in anomalies} == {
        ("stall:s2.consumed", "superseded-write"), ("stall:s2.effect", "superseded-write")}
    first, second = ((d / "plain_stall" / "verdicts.json").read_bytes() for d in (tmp_path / "1", tmp_path / "2"))
    assert first == second


@pytest.mark.parametrize("factory, superseded, vo", [
    ("probes.frameworks.langgraph.saver:sqlite_saver", "completed", "U"),
    ("tests.fixtures.remit_savers:owned_sqlite", "raised WriteSuperseded", "✓"),
])
def test_on_langgraph_only_write_ownership_refuses_the_superseded_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: str, superseded: str, vo: str) -> None:
    require("langgraph.checkpoint.sqlite")
    monkeypatch.setenv("RC_KIT_SAVER", factory)
    receipts = _stall("saver_stall", "probes.frameworks.langgraph.saver:SaverAdapter", tmp_path,
                      backends=["sqlite"], stall_points=["s2.effect"])
    (receipt,) = receipts.values()
    observed = receipt.observations["stall"]
    assert (observed["takeover"], observed["superseded"], observed["after"]) == ("completed", superseded, "completed")
    eo = next(v for v in receipt.verdicts if v.property is Property.EO)
    assert eo.evidence["effect_counts"] == {"e1": 1, "e2": 2}  # the stopped worker had fired e2; the takeover again
    # its late checkpoint write lands on the stock saver (a superseded write); ownership refuses it
    assert next(v for v in receipt.verdicts if v.property is Property.VO).label.value == vo
