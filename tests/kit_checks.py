"""What several test files share: one kit protocol's cell run on the real framework, a campaign's probes run
directly."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Callable, Mapping

from probes import campaigns
from probes.core.backends import StoreFactory
from probes.core.campaign import ProbeContext, ProbeSpec, run_campaign
from probes.core.receipt import ProbeResult, Receipt

# what the pause-twice protocol observes when each answer is taken once and the run completes
EACH_ANSWER_ONCE = {"after_first": "paused", "after_second": "completed", "effects": {"e1": 1, "e2": 1, "e2b": 1}}


def cited_labels(run: Any) -> dict[tuple[str, str], tuple[str, str]]:
    """Every verdict of a campaign run: (path, property) -> (label, the citation's source or "")."""
    return {(v.path, v.property.value): (v.label.value, v.doc.source if v.doc else "")
            for r in run.receipts for v in r.verdicts}


def pause_twice(name: str, tmp_path: Path, **params: Any) -> Receipt:
    """The one receipt of campaign ``name``'s pause-twice cell (quick profile, ``params`` over it),
    measured without a harness error."""
    campaign = campaigns.get(name)
    run = run_campaign(campaign, campaign.resolve({"protocols": ["pause_twice"], **params}, quick=True), tmp_path)
    assert run.harness_errors == [] and len(run.receipts) == 1
    return run.receipts[0]


def run_probes(run_probe: Callable[[ProbeSpec, ProbeContext], ProbeResult], specs: list[ProbeSpec],
               params: Mapping[str, Any], work: Path, stores: Path) -> list[tuple[ProbeSpec, ProbeResult]]:
    """Each of ``specs`` run by a campaign's ``run_probe`` in a directory of its own under ``work``, its
    stores under ``stores`` (outside pytest's base temp where the embedded PostgreSQL needs it), each
    without a harness error; every server started is stopped before this returns."""
    out = []
    with contextlib.ExitStack() as stack:
        factory = StoreFactory(stores, stack)
        for spec in specs:
            (work / spec.id).mkdir()
            result = run_probe(spec, ProbeContext(work / spec.id, factory, 0, params))
            assert result.harness_errors == [], (spec.id, result.harness_errors)
            out.append((spec, result))
    return out
