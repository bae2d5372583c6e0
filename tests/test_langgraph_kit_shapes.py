"""Two interrupts in one run on LangGraph 1.2.9's stock SQLite saver (``probes.frameworks.langgraph.shapes``).

The paper's LangGraph campaign measured "CO ✓ sequential" (two interrupts in sequence, a restart
before each answer) and a parallel fan-out answered by one resume map and then by the same map again.
Here both run for real, twice, as kit protocols: each gate's effect fires once, the second answer
(or the map) runs the thread to its end, and the stray map is inert. Then: the two repetitions give
byte-identical verdicts, and every verdict is decided again, identically, from its receipt alone.
"""

from __future__ import annotations

import pytest

from tests.installed import require

require("langgraph.checkpoint.sqlite")

from probes import campaigns  # noqa: E402
from probes.core.campaign import CampaignRun, run_campaign  # noqa: E402
from probes.core.checker import Verdict  # noqa: E402
from probes.core.history import Event, History, Kind  # noqa: E402
from probes.kit.judge import Judge  # noqa: E402
from probes.frameworks.langgraph.adapter import StockSaverAdapter  # noqa: E402
from probes.rejudge import kit_verdicts, stable  # noqa: E402

SEQUENTIAL, FANOUT = "sequential:restart-between", "fan-out:resume-map"
RESULT = "s2 served 'no'"  # s2 is answered with the adapter's second answer in both workflows


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> CampaignRun:
    campaign = campaigns.get("langgraph_kit")
    params = campaign.resolve({"protocols": ["sequential", "fanout"], "reps": 2}, quick=True)
    done = run_campaign(campaign, params, tmp_path_factory.mktemp("langgraph_kit_shapes"))
    assert done.harness_errors == []
    assert sorted(r.probe for r in done.receipts) == ["fanout.sqlite.rep1", "fanout.sqlite.rep2",
                                                      "sequential.sqlite.rep1", "sequential.sqlite.rep2"]
    return done


def _rep(run: CampaignRun, rep: int) -> dict[tuple[str, str], Verdict]:
    return {(v.property.value, v.path): v for r in run.receipts if r.args["rep"] == rep for v in r.verdicts}


@pytest.fixture(scope="module")
def verdicts(run: CampaignRun) -> dict[tuple[str, str], Verdict]:
    return _rep(run, 1)


def _observed(run: CampaignRun, protocol: str) -> dict:
    return next(r.observations for r in run.receipts if r.args["protocol"] == protocol and r.args["rep"] == 1)


def _consumed(h: History) -> list[tuple[str | None, object, str]]:
    return [(e.step, e.value, e.incarnation) for e in h.of(Kind.CONSUME)]


def test_two_interrupts_in_sequence_each_fire_their_effect_once(run: CampaignRun, verdicts: dict) -> None:
    eo, co, lv = (verdicts[(prop, SEQUENTIAL)] for prop in ("EO", "CO", "LV"))
    assert eo.evidence["effect_counts"] == {"e2": 1, "e_g1": 1} and eo.evidence["completed"] is True
    assert co.evidence["gate_fires"] == 1
    assert lv.evidence["outcome"] == RESULT
    assert [v.label.value for v in (eo, co, lv)] == ["✓", "✓", "✓"]  # the paper's "CO ✓ sequential"
    # each answer consumed by its own gate, in a process of its own (a restart before each)
    assert _consumed(eo.history) == [("g1", "yes", "run/answer-g1"), ("s2", "no", "run/answer-s2")]
    # the first answer left the run paused at the second interrupt; the second ran it to its end
    seen = _observed(run, "sequential")["sequential"]
    assert seen["g1"] == "paused" and seen["s2"] == f"completed with {RESULT!r}"
    # LangGraph runs g1 again from its top when its answer arrives (the code before interrupt() twice)
    assert [e.incarnation for e in eo.history.of(Kind.STEP_BEGIN) if e.step == "g1"] == ["run/start",
                                                                                        "run/answer-g1"]


def test_parallel_interrupts_answered_by_one_resume_map_and_the_map_again(run: CampaignRun, verdicts: dict) -> None:
    eo, co, lv = (verdicts[(prop, FANOUT)] for prop in ("EO", "CO", "LV"))
    assert eo.evidence["effect_counts"] == {"e2": 1, "e_b1": 1} and eo.evidence["completed"] is True
    assert co.evidence["gate_fires"] == 1
    assert lv.evidence["outcome"] == RESULT
    assert [v.label.value for v in (eo, co, lv)] == ["✓", "✓", "✓"]
    # both interrupts were open at once and both answers consumed in the one process the map went to
    assert sorted(_consumed(eo.history)) == [("b1", "yes", "run/answer"), ("s2", "no", "run/answer")]
    obs = _observed(run, "fanout")
    assert obs["fanout"]["asked"] == ["b1", "s2"]
    # the stray carried the very interrupt ids the first map answered, on the completed thread: it
    # completed again with the same outcome and fired nothing
    children = obs["children"]
    assert children["run/stray"]["result"]["ids"] == children["run/answer"]["result"]["ids"]
    assert obs["fanout"]["stray"] == f"completed with {RESULT!r}"
    stray = [e for e in eo.history.of(Kind.ANSWER) if (e.detail or {}).get("stray")]
    assert len(stray) == 1 and not eo.history.after(stray[0]).of(Kind.EFFECT, Kind.CONSUME)


def test_the_verdicts_are_deterministic_and_re_judged_from_the_receipt(run: CampaignRun) -> None:
    first, second = _rep(run, 1), _rep(run, 2)
    assert sorted(first) == sorted(second) and len(first) == 8  # 6, and VO on each of the 2 paths
    assert all(stable(first[k]) == stable(second[k]) for k in first)
    for receipt in run.receipts:
        again = kit_verdicts(receipt, StockSaverAdapter)
        assert again is not None and [stable(v) for v in again] == [stable(v) for v in receipt.verdicts]


def test_the_first_gate_firing_twice_is_caught_by_eo_and_by_co_over_both_gates() -> None:
    """Each pause's gated effect at most once: CO names both gates (``gates``); the kit's default CO is
    about ``e2`` alone and would miss the first gate firing twice."""
    h = History.of_events(Event(kind, "i", step=step, effect=effect) for kind, step, effect in (
        (Kind.ANSWER, None, None), (Kind.EFFECT, "g1", "e_g1"), (Kind.EFFECT, "g1", "e_g1"),
        (Kind.ANSWER, None, None), (Kind.EFFECT, "s2", "e2"), (Kind.COMPLETE, None, None)))
    judge = Judge("langgraph", "sqlite", StockSaverAdapter.citations)
    eo = judge.effects_once(SEQUENTIAL, h, "g1 fired twice", ("e_g1", "e2"))
    assert eo.evidence["duplicated"] == {"e_g1": 2}
    assert eo.label.value == "✗" and eo.doc.source == "LG-15"  # against "it only runs once after approval"
    assert judge.gated_once(SEQUENTIAL, h, "g1 fired twice").label.value == "✓"
    both = judge.gated_once(SEQUENTIAL, h, "g1 fired twice", gates=("e_g1", "e2"))
    assert both.label.value == "✗" and "e_g1 2x" in both.summary
    assert judge.calls[-1]["gates"] == ["e_g1", "e2"]  # written down, so a re-judge decides it again
