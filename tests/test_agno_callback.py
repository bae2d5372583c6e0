"""The callback protocol (``probes.kit.protocols.callback``) on agno 3.1.10, in its campaign's side environment
(quick profile, every callback cell).

Agno's approval callback is its conditional review: ``HumanReview(requires_output_review=<callable>)``, the
callable Agno asks after the reviewed step ran whether its output waits for a human. The adapter's callable fires
``e_cb`` and says yes; the answer goes in as the reviewer's edit and the next step fires ``e2`` on it. The cells
count ``e_cb`` for one approval: with no fault, after the process parked at the pause was killed (answered from a
fresh process), and after a kill just past the callback's effect (recovered by ``continue-run``).
"""

from __future__ import annotations

from typing import Any

from probes import campaigns
from probes.core.campaign import run_campaign
from probes.kit.protocols import CALLBACK_CELLS
from tests.kit_checks import cited_labels


def _run(tmp_path: Any) -> Any:
    """The agno campaign, quick profile, the callback protocol alone with all of its cells."""
    campaign = campaigns.get("agno")
    run = run_campaign(campaign, campaign.resolve({"protocols": ["callback"], "callback_cells": list(CALLBACK_CELLS)},
                                                  quick=True), tmp_path)
    assert run.harness_errors == []
    return run


def test_agno_declares_the_callback_workflow() -> None:
    """CALLBACK is declared, not named missing: its cells are measured, not n/a."""
    from probes.kit.adapter import Capability
    from probes.kit.suite import KIT_ADAPTERS, adapter_class

    campaigns.get("agno")
    cls = adapter_class(KIT_ADAPTERS["agno"])
    assert cls.declares(Capability.CALLBACK) and Capability.CALLBACK not in cls.missing


def test_agno_asks_the_review_callable_once_per_approval(tmp_path: Any) -> None:
    """The review callable is asked once when the step's draft is reviewed; ``continue_run`` with the edited review
    goes on to the next step without asking it again (clean and park-kill: e_cb once, ✓). Killed just past the
    callback's effect, before Agno saved anything (it saves the run at the pause), the recovery finds no run, and
    the run starts over: s1 and the callback fire again (e1 and e_cb twice). No Agno docstring speaks to a run
    started again after a kill before its first save: EO U, and VO U (e_cb seen ahead of any durable record)."""
    run = _run(tmp_path)
    seen = {r.args["at"]: r.observations["callback"] for r in run.receipts}
    assert set(seen) == set(CALLBACK_CELLS)
    assert {at: s["effects"] for at, s in seen.items()} == {
        "clean": {"e1": 1, "e2": 1, "e_cb": 1},
        "park-kill": {"e1": 1, "e2": 1, "e_cb": 1},
        "cb.effect": {"e1": 2, "e2": 1, "e_cb": 2},
    }
    # the answer reached the step after the review as the reviewer's edit, in every cell
    assert {s["ended"] for s in seen.values()} == {"completed with \"s2 served 'yes'\""}
    labels = cited_labels(run)
    for path in ("callback:clean", "callback:park-kill"):
        for prop in ("EO", "CO", "LV", "VO"):
            assert labels[(path, prop)] == ("✓", ""), (path, prop)
    crashed = "callback:kill@cb.effect/continue-run"
    assert labels[(crashed, "EO")] == ("U", "") and labels[(crashed, "VO")] == ("U", "")
    assert labels[(crashed, "CO")] == ("✓", "") and labels[(crashed, "LV")] == ("✓", "")
    assert len(labels) == 12
