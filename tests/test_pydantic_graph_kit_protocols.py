"""pydantic-graph's own protocols (``probes.frameworks.pydantic_graph.protocols``) against pydantic-graph 1.107.1.

Each protocol runs for real, twice (``reps`` 2), in a throwaway kit campaign over the kit's
pydantic-graph adapter. The assertions are what the legacy paper campaign measured on this
release (``data/reference/pydantic_graph``: ``claimed-pause``, ``invalid-write``, ``tamper``),
now under the kit's workflow: a claimed pause whose claimer died is never resumed (LV D, PG-4);
a str in a declared int field is persisted without an error at the write, the framework raising
only when it reads its file again (CV U); the status reset is accepted silently and fires the
answered step's effect again (the undetected-forgery row). Then: the two
repetitions give byte-identical verdicts, and every verdict is decided again, identically, from
its receipt alone.
"""

from __future__ import annotations

import pytest

from tests.installed import require

require("pydantic_graph")

from probes.core import checker  # noqa: E402
from probes.core.campaign import CampaignRun, run_campaign  # noqa: E402
from probes.core.checker import Expectation, Verdict  # noqa: E402
from probes.core.history import Event, History, Kind  # noqa: E402
from probes.kit.judge import FORGERY_ROW  # noqa: E402
from probes.kit.suite import kit_campaign  # noqa: E402
from probes.frameworks.pydantic_graph.adapter import PydanticGraphAdapter  # noqa: E402
from probes.frameworks.pydantic_graph.protocols import PROTOCOLS  # noqa: E402
from probes.rejudge import kit_verdicts, stable  # noqa: E402

ADAPTER = "probes.frameworks.pydantic_graph.adapter:PydanticGraphAdapter"
RESULT = "s2 served 'yes'"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> CampaignRun:
    campaign = kit_campaign("pg_protocols_test", "pydantic-graph's own protocols", ADAPTER,
                            packages=("pydantic-graph",), protocols=PROTOCOLS)
    params = campaign.resolve({"protocols": list(PROTOCOLS), "reps": 2}, quick=True)
    done = run_campaign(campaign, params, tmp_path_factory.mktemp("pg_protocols"))
    assert done.harness_errors == []
    assert {r.observations.get("framework_versions", {}).get("pydantic-graph") for r in done.receipts} == {"1.107.1"}
    return done


def _rep(run: CampaignRun, rep: int) -> dict[tuple[str, str, str], Verdict]:
    return {(v.framework, v.property.value, v.path): v for r in run.receipts if r.args["rep"] == rep
            for v in r.verdicts}


@pytest.fixture(scope="module")
def verdicts(run: CampaignRun) -> dict[tuple[str, str, str], Verdict]:
    return _rep(run, 1)


def _observed(run: CampaignRun, protocol: str) -> dict:
    return next(r.observations[protocol] for r in run.receipts if r.args["protocol"] == protocol)


def _kinds(v: Verdict) -> list[str]:
    return [w["kind"] for w in v.evidence["witness"]]


def test_a_pause_claimed_by_a_process_that_died_is_never_resumed(run: CampaignRun, verdicts: dict) -> None:
    assert [k for k in verdicts if k[2] == "claimed-pause"] == [("pydantic-graph", "LV", "claimed-pause"),
                                                                ("pydantic-graph", "VO", "claimed-pause")]
    lv = verdicts[("pydantic-graph", "LV", "claimed-pause")]
    # load_next turned the pause 'pending' for the claimer; the recovery finds no 'created' snapshot
    assert lv.label.value == "D" and lv.doc.source == "PG-4" and lv.doc.stance == "deviation"
    assert lv.evidence["completed"] is False and lv.evidence["lost_answer"] is True
    assert _kinds(lv) == ["crash", "refuse"] and lv.evidence["witness"][-1]["value"] == "GraphRuntimeError"
    assert "raised GraphRuntimeError: Unable to restore snapshot from state persistence." in lv.summary
    seen = _observed(run, "claimed")
    assert seen["statuses_after_claim"] == ["S1 success", "Ask success", "S2 pending"]
    assert seen["effects"] == {"e1": 1}  # the answered node never ran: nothing fired twice, e2 never


def test_a_str_written_into_a_declared_int_field_is_persisted(run: CampaignRun, verdicts: dict) -> None:
    cv = verdicts[("pydantic-graph", "CV", "write:invalid-state")]
    assert cv.label.value == "U" and cv.doc is None and cv.evidence["citation"] == "no citation declared"
    assert cv.evidence["became_durable"] is True
    [persisted] = cv.evidence["witness"]  # the durable invalid state is the witness
    assert persisted["kind"] == "persist" and persisted["detail"]["valid"] is False
    seen = _observed(run, "invalid_write")
    # no error at the write (the serializer only warns): the snapshot of the next node, Ask, is saved
    # with the str; the framework raises only when it loads its own file again, to run Ask -- in the
    # same process, so the run never reaches its pause (the legacy campaign stopped after the first
    # node and met the same error at its recovery)
    # (its node serialized as {}: the state not matching, pydantic's serializer of the snapshot union
    # warned and fell back, writing the node without its id)
    assert seen["invalid_documents"] == ["graph-run.json#1 (Ask without node_id, created)"]
    assert seen["start"] == ("raised ValidationError: 2 validation errors for "
                             "list[tagged-union[NodeSnapshot,EndSnapshot]]") and seen["answer"] is None
    assert cv.evidence["refused"] is True and cv.evidence["error"] == "ValidationError"
    assert "the invalid state became durable; refused loudly (ValidationError)" in cv.summary


def test_the_status_reset_is_accepted_silently_and_fires_the_effect_again(run: CampaignRun, verdicts: dict) -> None:
    forged = verdicts[(f"pydantic-graph · {FORGERY_ROW}", "CV", "tamper:status-reset")]
    assert forged.label.value == "U" and forged.doc is None  # never a ✓ of a property: its own row
    assert forged.evidence["refused"] is False
    assert forged.evidence["outcome"] == checker.TamperOutcome.CHANGED.value
    assert forged.evidence["changed"] == ["e2 fired 1 time(s) after the edit, not 0"]
    assert forged.evidence["effects_after_edit"] == {"e2": 1}
    assert forged.history.effect_counts() == {"e1": 1, "e2": 2}  # e2 fired before the kill, and again
    lv = verdicts[("pydantic-graph", "LV", "tamper:status-reset")]
    assert lv.label.value == "✓" and lv.evidence["outcome"] == RESULT
    seen = _observed(run, "status_reset")
    assert seen["reset"] == "S2 running -> created" and seen["effects"] == {"e1": 1, "e2": 2}


def test_the_verdicts_are_deterministic_and_re_judged_from_the_receipt(run: CampaignRun) -> None:
    first, second = _rep(run, 1), _rep(run, 2)
    assert sorted(first) == sorted(second) and len(first) == 7  # 4, and VO on each of the 3 paths
    assert all(stable(first[k]) == stable(second[k]) for k in first)
    for receipt in run.receipts:
        again = kit_verdicts(receipt, PydanticGraphAdapter)
        assert again is not None and [stable(v) for v in again] == [stable(v) for v in receipt.verdicts]


def _h(*events: tuple[Kind, str | None]) -> History:
    return History.of_events(Event(kind, "i", effect=effect) for kind, effect in events)


def test_an_edit_after_the_answered_step_fired_owes_no_gated_effect() -> None:
    """``checker.tamper_outcome``: after an edit made once the gate had fired for the one answer, with
    no answer after it, the gate firing again is a change; an edit at the pause still owes it once."""
    expect = Expectation(gate="e2", result="r")
    reset = _h((Kind.ANSWER, None), (Kind.EFFECT, "e2"), (Kind.CRASH, None), (Kind.TAMPER, None),
               (Kind.RECOVER, None), (Kind.EFFECT, "e2"), (Kind.COMPLETE, None))
    assert checker.tamper_outcome(reset, expect, False).evidence["changed"][0] == \
        "e2 fired 1 time(s) after the edit, not 0"
    at_pause = _h((Kind.TAMPER, None), (Kind.ANSWER, None), (Kind.EFFECT, "e2"), (Kind.COMPLETE, None))
    assert checker.gate_due_after(at_pause, at_pause.of(Kind.TAMPER)[0], "e2") is True
    answered_again = _h((Kind.EFFECT, "e2"), (Kind.TAMPER, None), (Kind.ANSWER, None))
    assert checker.gate_due_after(answered_again, answered_again.of(Kind.TAMPER)[0], "e2") is True
