"""LangGraph 1.2.9's checkpoint validity under the kit (``probes.frameworks.langgraph.invalid_write``), for real.

The paper's CV cell (#6491 class) measured through the kit on the stock SQLite and PostgreSQL
savers: a node appends ``None`` to a pydantic ``items: list[str]``. What the legacy campaign
published is checked again from the kit's own record: no error at the write, the ``None`` durable
in a checkpoint and in the pending write before it, the run raising only when the next node's input
is validated, the thread unreadable afterwards; LG-21 documents it (D). Then the verdict is decided
again, identically, from its receipt alone.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from tests.installed import require

require("langgraph.checkpoint.sqlite")
require("langgraph.checkpoint.postgres")

from probes import campaigns  # noqa: E402
from probes.core.campaign import CampaignRun, run_campaign  # noqa: E402
from probes.frameworks.langgraph.adapter import StockSaverAdapter  # noqa: E402
from probes.rejudge import kit_verdicts, stable  # noqa: E402

BACKENDS = ("sqlite", "postgres")
INVALID = ["checkpoint step 1 (loop), pending write: items = ['ok', None]",
           "checkpoint step 2 (loop): items = ['ok', None]"]
REFUSED = "raised ValidationError: 1 validation error for State"


@pytest.fixture(scope="module")
def run() -> Iterator[CampaignRun]:
    """The protocol on both stock savers; the stores outside pytest's basetemp, where the embedded
    PostgreSQL's initdb (another user) can always reach them (see ``outside_basetemp`` in conftest)."""
    root = Path(tempfile.mkdtemp(prefix="rc-test-"))
    try:
        campaign = campaigns.get("langgraph_kit")
        params = campaign.resolve({"protocols": ["invalid_write"], "backends": list(BACKENDS)}, quick=True)
        done = run_campaign(campaign, params, root)
        assert done.harness_errors == []
        yield done
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _receipt(run: CampaignRun, backend: str) -> object:
    [receipt] = [r for r in run.receipts if r.args["backend"] == backend]
    return receipt


@pytest.mark.parametrize("backend", BACKENDS)
def test_none_in_a_list_of_str_becomes_durable_and_is_documented(run: CampaignRun, backend: str) -> None:
    receipt = _receipt(run, backend)
    assert sorted(v.property.value for v in receipt.verdicts) == ["CV", "VO"]
    [cv] = [v for v in receipt.verdicts if v.property.value == "CV"]
    assert (cv.property.value, cv.path) == ("CV", "write:invalid-state")
    assert cv.evidence["became_durable"] is True  # seen raw in the saver, not typed in
    assert cv.evidence["refused"] is True and cv.evidence["error"] == "ValidationError"
    assert [w["kind"] for w in cv.evidence["witness"]] == ["persist"]
    assert cv.evidence["witness"][0]["detail"]["valid"] is False
    assert cv.evidence["witness"][0]["detail"]["documents"] == INVALID
    assert cv.label.value == "D" and cv.doc.source == "LG-21" and cv.doc.stance == "deviation"
    assert "the invalid state became durable; refused loudly (ValidationError)" in cv.summary
    assert cv.history.effect_counts() == {"e1": 1}  # s1 ran once; the pausing step never did


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_write_is_not_refused_and_the_thread_is_wedged_after(run: CampaignRun, backend: str) -> None:
    seen = _receipt(run, backend).observations["invalid_write"]
    # the None is the write node's pending write and the next checkpoint's state: it was stored
    # without an error; the run raised only when s2's input was validated, past the write
    assert seen["invalid"] == INVALID
    assert "checkpoint step 1 (loop): items = ['ok']" in seen["durable"]  # the valid state before, not flagged
    assert seen["start"] == REFUSED
    # LangGraph's own reads of the thread, and its documented recovery, all fail on the stored state
    assert seen["reads_after_start"] == {"get_state": REFUSED, "get_state_history": REFUSED}
    assert seen["then"] == f"recovering by none-input: {REFUSED}"


def test_both_savers_store_the_same(run: CampaignRun) -> None:
    sqlite, postgres = (_receipt(run, backend).observations["invalid_write"] for backend in BACKENDS)
    assert sqlite == postgres


def test_the_verdict_is_re_judged_identically_from_the_receipt(run: CampaignRun) -> None:
    for receipt in run.receipts:
        again = kit_verdicts(receipt, StockSaverAdapter)
        assert again is not None and [stable(v) for v in again] == [stable(v) for v in receipt.verdicts]
