"""Re-judge stored receipts in memory with today's checker, and list the labels that change.

When the definitions of ``probes.core.checker`` change (issue 24: EO at most once and
exactly once on a completed run, CO without the lost answer, LV with the workflow's own
result, tamper outcomes by the declared state model), the receipts of a run measured
before say what the old judge decided. This module reads them (never writes them),
decides each EO / CO / LV / CV verdict again from what the receipt holds -- the recorded
history of its path where there is one, else the observations in its evidence (effect
counts, completion) -- and reports each label that moves, with why. It is a preview of
the re-measurement, not a substitute: verdicts a campaign adds today (an LV beside a race,
a forgery row) appear only where the receipt holds what they are decided on. A REMIT race
cell is decided again as a whole, by its stored rule over its stored trials
(``probes.studies.remit.race.rejudge``): unchanged code gives byte-identical verdicts.

``python -m probes.rejudge [DIRECTORY]`` (default ``data/reference``) prints, per campaign,
the label counts before and after and every change.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from probes import citations
from probes.core import checker
from probes.core.checker import UNSET, Check, DocRef, Expectation, Label, Property, Verdict
from probes.core.history import History, Kind
from probes.core.receipt import Receipt, load_campaign


@dataclass(frozen=True)
class Change:
    campaign: str
    probe: str
    framework: str
    property: str
    path: str
    before: str
    after: str
    why: str


def _adapter(campaign: str) -> Any | None:
    """The kit adapter class of a kit campaign (adapter modules import their framework lazily)."""
    from probes import campaigns
    from probes.kit.suite import KIT_ADAPTERS, adapter_class

    campaigns.get(campaign)  # registers kit campaigns' adapters
    spec = KIT_ADAPTERS.get(campaign)
    return adapter_class(spec) if spec else None


def _label(old: Verdict, holds: bool, doc: DocRef | None, prop: Property | None = None) -> tuple[Label, DocRef | None]:
    """✓, or the old citation when the old verdict already failed, else the adapter's / table's."""
    if holds:
        return Label.PASS, None
    if old.label.violates and old.doc is not None and (prop or old.property) is old.property:
        doc = old.doc
    if doc is None:
        probe = citations.subject(old.framework, old.backend).verdict(prop or old.property, old.path, False, {}, "")
        return probe.label, probe.doc
    return checker.label_for(False, doc), doc


def _verdict(old: Verdict, check: Check | None, holds: bool, summary: str, doc: DocRef | None,
             prop: Property | None = None, framework: str | None = None, **extra: Any) -> Verdict:
    label, cited = _label(old, holds, doc, prop)
    # the old evidence (what the campaign added: per-rep counts, outcomes), updated by the new check's
    evidence = {**dict(old.evidence), **(dict(check.evidence) if check is not None else {}), **extra}
    for key, value in old.evidence.items():  # a campaign's own per-rep value (a list) stays as it wrote it
        if isinstance(value, list) and not isinstance(evidence[key], list):
            evidence[key] = value
    if check is not None and "witness" in old.evidence:
        evidence["witness"] = [e.to_json() for e in check.witness]
    return Verdict(framework or old.framework, old.backend, prop or old.property, old.path, label, evidence, summary,
                   cited)


def _history(receipt: Receipt, path: str) -> History | None:
    data = receipt.histories.get(path)
    return History.from_json(data) if data else None


def _rep_histories(receipt: Receipt) -> list[History]:
    reps = receipt.observations.get("reps")
    if isinstance(reps, list) and reps and isinstance(reps[0], dict) and "history" in reps[0]:
        return [History.from_json(r["history"]) for r in reps]
    return []


def _completed(receipt: Receipt, v: Verdict) -> bool:
    """Did the run on ``v``'s path complete, from what the receipt says (evidence, else the path's LV)?"""
    if isinstance(v.evidence.get("completed"), bool):
        return bool(v.evidence["completed"])
    lv = [w for w in receipt.verdicts if w.property is Property.LV and w.path == v.path and w.label is not Label.NA]
    if lv:
        return all(w.evidence.get("completed", w.label is Label.PASS) for w in lv)
    return True  # the protocol's children ran to their end (a child that raised is a harness error)


def _kit_result(cls: Any, h: History) -> Any:
    answers = h.of(Kind.ANSWER)
    return cls.result(answers[0].value) if answers and cls is not None else UNSET


def stable(v: Verdict) -> str:
    """A verdict as its receipt stores it (JSON: tuples read back as lists), to compare by."""
    return json.dumps(v.to_json(), sort_keys=True, ensure_ascii=False)


def kit_verdicts(receipt: Receipt, adapter: Any) -> list[Verdict] | None:
    """A kit receipt's verdicts decided again exactly as its campaign decided them: the judge's
    recorded calls replayed over the stored histories (``probes.kit.judge.replay``), or a race
    cell's rule over its stored trials (``probes.kit.race.rejudge``). None for a receipt measured
    before its judge kept that record."""
    from probes.kit import race
    from probes.kit.judge import replay

    if "judged" in receipt.observations:
        return replay(receipt.observations["judged"], receipt.histories, adapter.framework,
                      receipt.args["backend"], adapter.citations)
    if "race" in receipt.observations:
        return race.rejudge_receipt(receipt, adapter)
    return None


def rejudge_receipt(campaign: str, receipt: Receipt, adapter: Any | None = None) -> tuple[list[Verdict], list[str]]:
    """The receipt's verdicts decided again, and why each changed one changed (same order; additions last).

    A kit receipt that records how its verdicts were decided is re-judged exactly (``kit_verdicts``),
    a REMIT race cell from its stored trials; older receipts are re-read heuristically, from their
    histories or evidence, with today's checks. A kit cell of a campaign that is not a kit campaign
    (the REMIT campaign's LangGraph arm) names its own adapter in its arguments, and is re-judged with it."""
    if adapter is None and isinstance(receipt.args.get("adapter"), str):
        from probes.kit.suite import adapter_class
        adapter = adapter_class(receipt.args["adapter"])
    if adapter is not None and (exact := kit_verdicts(receipt, adapter)) is not None:
        old = {(v.framework, v.property, v.path): stable(v) for v in receipt.verdicts}
        why = ["" if old.get((v.framework, v.property, v.path)) == stable(v) else "decided again from the recorded calls"
               for v in exact]
        return exact, why
    race = _race_cell(campaign, receipt)
    if race is not None:
        before = {(v.framework, v.property, v.path): v.label for v in receipt.verdicts}
        return race, ["" if before.get((v.framework, v.property, v.path)) == v.label else
                      "race cell decided again from its stored trials" for v in race]
    out: list[Verdict] = []
    added: list[Verdict] = []
    why: dict[int, str] = {}
    for v in receipt.verdicts:
        new, reason, extra = _one(campaign, receipt, v, adapter)
        if new.label != v.label or new.framework != v.framework or new.property != v.property:
            why[len(out)] = reason
        out.append(new)
        added += extra
    return out + added, [why.get(i, "") for i in range(len(out))] + ["added by today's protocol"] * len(added)


def _race_cell(campaign: str, receipt: Receipt) -> list[Verdict] | None:
    """A REMIT race cell's verdicts decided again by its own rule from its stored trials
    (``probes.studies.remit.race.rejudge``); None for any other receipt.

    Why whole-cell: a race verdict is a decision over every trial (k of n, or a bound), not a
    judgement of one history, so it is re-made the way the campaign made it, not per verdict.
    """
    race = receipt.observations.get("race") if isinstance(receipt.observations, Mapping) else None
    if campaign != "remit" or not isinstance(race, Mapping) or "rule" not in race:
        return None
    from probes.studies.remit.race import rejudge
    from probes.studies.remit.verdicts import FRAMEWORK

    return rejudge(receipt, citations.subject(FRAMEWORK, receipt.args["backend"]))


def _one(campaign: str, receipt: Receipt, v: Verdict, adapter: Any | None) -> tuple[Verdict, str, list[Verdict]]:
    if v.label is Label.NA:
        return v, "", []
    h = _history(receipt, v.path)
    kit = adapter is not None
    doc = None
    if kit:
        from probes.kit.judge import cite
        doc = cite(adapter.citations, v.property, v.path)
    if kit and v.path.startswith("tamper:") and h is not None:
        return _tamper(v, h, adapter)
    if v.property is Property.EO:
        return _eo(receipt, v, h, doc)
    if v.property is Property.CO:
        return _co(v, h, doc)
    if v.property is Property.LV and h is not None:
        result = _kit_result(adapter, h) if kit else UNSET
        reps = _rep_histories(receipt)
        gate = "e2" if kit else None
        checks = [checker.check_lv(x, Expectation(gate=gate, result=result)) for x in (reps or [h])]
        c = checker.every(checks) if len(checks) > 1 else checks[0]
        return (_verdict(v, c, c.holds, f"{v.summary} [re-judged: {c.evidence['why'] or 'completed'}]", doc),
                f"LV: {c.evidence['why'] or 'completed with its own result'}", [])
    return v, "", []


def _eo(receipt: Receipt, v: Verdict, h: History | None, doc: DocRef | None) -> tuple[Verdict, str, list[Verdict]]:
    expected = tuple(v.evidence.get("expected_once") or ())
    reps = _rep_histories(receipt)
    if h is not None or reps:
        checks = [checker.check_eo(x, Expectation(effects=expected)) for x in (reps or [h])]
        c = checker.every(checks) if len(checks) > 1 else checks[0]
        ev = c.evidence
        return (_verdict(v, c, c.holds, v.summary, doc),
                f"EO from the history: duplicated {ev['duplicated'] or 'nothing'}, skipped on a completed run "
                f"{ev['skipped'] or 'nothing'} (completed {ev['completed']})", [])
    counts = v.evidence.get("effect_counts")
    if not isinstance(counts, Mapping) or not expected:
        return v, "", []  # nothing to decide EO on again (a per-branch or whole-protocol rule): unchanged
    completed = _completed(receipt, v)
    holds, ev = checker.effects_once(counts, expected, completed)
    predicted = v.evidence.get("exactly_once_predicts")  # crewai @persist: the counter EO predicts
    if "exactly_once_predicts" in v.evidence:
        holds = holds and v.evidence.get("counter") == predicted
    return (_verdict(v, None, holds, v.summary, doc, **{**v.evidence, **ev}),
            f"EO from the counts: off {ev['off'] or 'nothing'} (completed {completed}); a result check moved to LV"
            if "result" in v.evidence and "expected" in v.evidence else
            f"EO from the counts: off {ev['off'] or 'nothing'} (completed {completed})", [])


def _co(v: Verdict, h: History | None, doc: DocRef | None) -> tuple[Verdict, str, list[Verdict]]:
    ev = v.evidence
    if h is not None and ev.get("gate"):
        c = checker.check_co(h, Expectation(gate=ev["gate"]))
        extra = []
        if c.evidence["lost_answer"]:
            lv = checker.check_lv(h, Expectation(gate=ev["gate"]))
            extra.append(_verdict(v, lv, lv.holds, f"re-judged: {lv.evidence['why']}", None, Property.LV))
        return _verdict(v, c, c.holds, v.summary, doc), "CO from the history: a lost answer is LV's", extra
    if "lost_answers_observed" in ev and "duplicates_observed" in ev:  # the consume race's stable evidence
        holds = not ev["duplicates_observed"]
        return _verdict(v, None, holds, v.summary, doc, **ev), "CO: a lost answer is LV's", []
    counts = ev.get("effect_counts")
    if not isinstance(counts, Mapping):
        return v, "", []
    holds, new_ev = checker.at_most_once(counts)
    if v.label is Label.PASS or not holds:
        return v, "", []  # at most once is weaker than the old exactly once: a ✓ stays, a double stays
    unfired = sorted(k for k, n in counts.items() if n == 0)
    if not unfired and not ev.get("lost_answers"):
        return v, "", []  # the old failure came from another condition of the campaign's: unchanged
    new = _verdict(v, None, True, v.summary, doc, **{**ev, **new_ev})
    lv_ok, lv_ev = checker.completes(False, f"re-judged from the counts: {dict(counts)}", lost=True)
    lv = _verdict(v, None, lv_ok, f"re-judged: {lv_ev['why']}", None, Property.LV, **lv_ev)
    return new, f"CO: nothing fired twice; {unfired or 'racers left without an answer'} never fired: a lost answer, LV's", [lv]


def _tamper(v: Verdict, h: History, adapter: Any) -> tuple[Verdict, str, list[Verdict]]:
    from probes.kit.judge import Judge
    from probes.kit.protocols import edit_invalid

    name = v.path.split(":", 1)[1]
    try:
        schema = adapter.state_required(adapter.__new__(adapter), None)
    except Exception as exc:  # the framework is not importable here: say so, decide as undeclared
        schema = {"required": None, "model": f"not computable here ({type(exc).__name__})"}
    required = schema.get("required")
    judged = Judge(adapter.framework, v.backend, adapter.citations).tampered(
        v.path, h, edit_invalid(name, required), _kit_result(adapter, h), str(schema.get("model")))
    first, rest = judged[0], judged[1:]
    return first, f"tamper: {first.evidence['outcome']} (state model {schema.get('model')}: required {required})", rest


def _campaign_name(directory: Path) -> str:
    import json

    try:
        name = json.loads((directory / "_campaign.json").read_text()).get("campaign")
    except (OSError, ValueError):
        name = None
    return name if isinstance(name, str) and name else directory.name


def rejudge_campaign(directory: Path) -> tuple[list[Change], Counter, Counter]:
    """Every label change of one campaign's receipts, and the label counts before and after.

    The campaign is the one the run's ``_campaign.json`` names (a run under ``runs/<campaign>/<run id>``
    is named by its id), else the directory's name (``data/reference/<campaign>``).
    """
    campaign = _campaign_name(Path(directory))
    adapter = _adapter(campaign)
    changes: list[Change] = []
    before: Counter = Counter()
    after: Counter = Counter()
    for r in load_campaign(Path(directory)):
        new, reasons = rejudge_receipt(campaign, r, adapter)
        old_keys = {(v.framework, v.property.value, v.path): v for v in r.verdicts}
        for v in r.verdicts:
            before[(v.property.value, v.label.value)] += 1
        for v, reason in zip(new, reasons):
            after[(v.property.value, v.label.value)] += 1
            key = (v.framework, v.property.value, v.path)
            old = old_keys.get(key)
            if old is None or old.label != v.label:
                changes.append(Change(campaign, r.probe, v.framework, v.property.value, v.path,
                                      old.label.value if old else "(none)", v.label.value, reason))
        for key, old in old_keys.items():  # a verdict that moved to another row or property
            if not any((v.framework, v.property.value, v.path) == key for v in new):
                changes.append(Change(campaign, r.probe, old.framework, old.property.value, old.path,
                                      old.label.value, "(moved)", "decided on another row or property now"))
    return changes, before, after


PAPER_CAMPAIGNS = ("langgraph", "crewai", "llamaindex", "autogen", "pydantic_graph", "dbos", "consume_race")


def main(argv: Iterable[str] = ()) -> int:
    args = list(argv)
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent / "data" / "reference"
    if not root.is_dir():
        print(f"rejudge: {root} is not a directory of campaign runs", file=sys.stderr)
        return 2
    names = args[1:] or [p.name for p in sorted(root.iterdir()) if (p / "_campaign.json").exists()]
    for name in names:
        changes, before, after = rejudge_campaign(root / name)
        props = sorted({p for p, _ in before} | {p for p, _ in after})
        counts = "; ".join(f"{p}: " + " ".join(f"{lab}{before[(p, lab)]}→{after[(p, lab)]}"
                                               for lab in ("✓", "✗", "D", "U", "n/a")
                                               if before[(p, lab)] or after[(p, lab)]) for p in props)
        print(f"## {name}: {len(changes)} change(s)  [{counts}]")
        grouped = Counter((c.framework, c.property, c.before, c.after, c.why) for c in changes)
        for (framework, prop, b, a, why), n in sorted(grouped.items()):
            print(f"  {n:3d}× {framework} {prop} {b} → {a}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
