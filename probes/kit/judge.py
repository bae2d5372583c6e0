"""The kit's only door to the checker layer: histories in, verdicts out.

Every protocol hands its recorded ``History`` here; the functions below extract what a
property speaks about and call the checks of ``probes.core.checker``, which decide
whether the property holds. The label (✓ ✗ D U) is then set by ``Subject.verdict`` from
the adapter's citation for that property and path -- the adapter never sets one.

Witnesses are the events that matter for the property in their stable form (no pids,
no handles), so verdict files stay byte-identical across runs.
"""

from __future__ import annotations

import dataclasses
import glob
from collections import Counter
from typing import Any, Mapping, Sequence

from probes.core import checker
from probes.core.checker import DocRef, Property, Subject, Verdict, entries, lookup
from probes.core.history import Event, History, Kind

FORK_PATH = "fork:same-pause"  # the kit's fork protocol's path (a framework's own fork names its own)

_WITNESS_KINDS = (Kind.START, Kind.ANSWER, Kind.RESUME, Kind.CRASH, Kind.RECOVER, Kind.TAMPER, Kind.STEP_BEGIN,
                  Kind.EFFECT, Kind.PAUSE, Kind.CONSUME, Kind.REFUSE, Kind.ERROR, Kind.COMPLETE)


def witness(history: History, kinds: tuple[Kind, ...] = _WITNESS_KINDS) -> list[dict[str, Any]]:
    return [e.to_json() for e in history.of(*kinds)]


def cite(citations: Mapping[str, DocRef], prop: Property, path: str) -> DocRef | None:
    """The adapter's citation for ``prop`` on ``path`` (``probes.core.checker.lookup``, the one rule)."""
    return lookup(entries(citations), prop, path)


GATE = "e2"  # the kit workflow's interrupt-gated effect (probes.kit.runtime.step2)


class Judge:
    """Verdicts for one framework and backend, labelled from the adapter's citations alone.

    Every deciding call is written down, in order, with its arguments but without its history
    (``calls``; the receipt keeps each verdict's history under its path): ``replay`` makes the
    same calls again over a stored receipt's histories, so a verdict can be recomputed from the
    receipt alone. Judges that share a ``calls`` list (a protocol's sub-runs) write one log.
    ``cite_as=(path, as_path)`` labels ``path``'s verdicts with the citations ``as_path`` has
    (the exhaustive protocol cites a crash point as the crash or save-kill path of its experiment).
    """

    def __init__(self, framework: str, backend: str, citations: Mapping[str, DocRef],
                 calls: list[dict[str, Any]] | None = None, cite_as: tuple[str, str] | None = None) -> None:
        self.cite_as = cite_as
        if cite_as is not None:
            path, as_path = cite_as
            citations = {f"{prop.value} {glob.escape(path)}": doc for prop in Property
                         if (doc := cite(citations, prop, as_path)) is not None}
        self.subject = Subject(framework, backend, citations=citations)
        self.citations = citations
        self.calls: list[dict[str, Any]] = [] if calls is None else calls
        self._quiet = False

    def _note(self, call: str, **args: Any) -> None:
        if not self._quiet:
            self.calls.append({"call": call, **args, **({"cite_as": list(self.cite_as)} if self.cite_as else {})})

    def unrecorded(self) -> "Judge":
        """The same judge, writing nothing down (a race trial's verdicts feed the race rule, which
        ``probes.kit.race.rejudge`` replays from the trials themselves)."""
        quiet = Judge.__new__(Judge)
        quiet.__dict__.update(self.__dict__, _quiet=True)
        return quiet

    def not_applicable(self, prop: Property, path: str, why: str) -> Verdict:
        self._note("not_applicable", prop=prop.value, path=path, why=why)
        return self.subject.not_applicable(prop, path, why)

    # --- properties over a history: the checker layer decides (probes.core.checker) ------
    def _label(self, check: checker.Check, path: str, summary: str, witness: bool = True, **extra: Any) -> Verdict:
        return check.verdict(self.subject, path, summary, cite(self.citations, check.property, path),
                             witness_in_evidence=witness, **extra)

    def effects_once(self, path: str, h: History, what: str,
                     expected: tuple[str, ...] = ("e1", "e2")) -> Verdict:
        """EO (``checker.check_eo``): every effect at most once; exactly once (the ``expected``
        ones) when the run completed. Whether it completed is read from the history."""
        self._note("effects_once", path=path, what=what, expected=list(expected))
        check = checker.check_eo(h, checker.Expectation(effects=expected))
        return self._label(check, path, f"{what}: effects {check.evidence['effect_counts']}, "
                                        f"completed {check.evidence['completed']}")

    def gated_once(self, path: str, h: History, what: str, witness: bool = True,
                   gates: tuple[str, ...] = (GATE,), pauses: Mapping[str, str] | None = None) -> Verdict:
        """CO: the gated effect e2 fired at most once whatever was delivered to the pause (a lost
        answer is LV's: ``live``). ``gates``: a workflow with more than one pause (LangGraph's
        sequential interrupts and fan-out) names each pause's gated effect; each must hold.
        ``pauses``: gate -> the pause its answers name (an ANSWER's ``detail["branch"]``, the parallel
        workflow's): each gate is then checked over the answers to its own pause alone
        (``answered_pause``), so the effect of a pause never answered itself (the framework answered it
        by itself, or with another branch's answer) is a violation."""
        self._note("gated_once", path=path, what=what, witness=witness, **({} if gates == (GATE,) else
                                                                              {"gates": list(gates)}),
                   **({"pauses": dict(pauses)} if pauses else {}))
        checks = [dataclasses.replace(checker.check_co(answered_pause(h, pauses[gate]) if pauses else h,
                                                       checker.Expectation(gate=gate)), history=h)
                  for gate in gates]
        check = checks[0] if len(checks) == 1 else checker.every(checks)
        if gates == (GATE,):
            consumed = len(h.of(Kind.CONSUME))
            return self._label(check, path, f"{what}: the gated effect fired {check.evidence['gate_fires']} "
                                            f"time(s); the answer was consumed {consumed} time(s)", witness)
        fired = ", ".join(f"{c.evidence['gate']} {c.evidence['gate_fires']}x" for c in checks)
        return self._label(check, path, f"{what}: the gated effects fired {fired}", witness)

    def prefix(self, path: str, h: History, at: str = "crash") -> Verdict:
        """PC: no step whose completion was durable before the crash begins again after recovery.

        ``at="recover"``: the durable prefix is taken at the first recovery instead, for a run that is
        recovered with no crash before it (CrewAI's ``@persist`` restore of a flow that had completed:
        everything it ran was durable, and nothing of it may run again)."""
        if at not in ("crash", "recover"):
            raise ValueError(f"the durable prefix is taken at the crash or at the recovery, not {at!r}")
        self._note("prefix", path=path, **({} if at == "crash" else {"at": at}))
        cut = next(iter(h.of(Kind.CRASH if at == "crash" else Kind.RECOVER)), None)
        durable = durable_prefix(h, cut) if cut else []
        check = checker.check_pc(h, checker.Expectation(prefix=tuple(durable)))
        where = "the crash" if at == "crash" else "the recovery"
        return self._label(check, path, f"durable prefix {durable or 'empty'} at {where}; re-entered after "
                                        f"recovery: {check.evidence['reentered'] or 'nothing'}")

    def live(self, path: str, h: History, what: str, result: Any = checker.UNSET, witness: bool = True,
             gate: str | None = GATE) -> Verdict:
        """LV (``checker.check_lv``): the run completed after its last crash with ``result``, the
        workflow's own result (the adapter's ``result(answer)``); a lost answer is named as such.
        ``gate``: the effect whose absence names an answer lost (``None``: a workflow with no one gate,
        the parallel workflow's, whose run that never completed is named so)."""
        self._note("live", path=path, what=what, witness=witness, **({} if result is checker.UNSET else {"result": result}),
                   **({} if gate == GATE else {"gate": gate}))
        return self._live(path, h, what, result, witness, gate)

    def _live(self, path: str, h: History, what: str, result: Any, witness: bool, gate: str | None = GATE) -> Verdict:
        check = checker.check_lv(h, checker.Expectation(gate=gate, result=result))
        return self._label(check, path, f"{what}: {check.evidence['why'] or 'completed'}", witness)

    def fork(self, h: History, expected: Any, path: str = FORK_PATH) -> Verdict:
        """FD for a second, different answer at the answered pause, with no discriminator on the
        wire (Proposition 1): the summary names the side the framework took. ``path``: where a
        framework's own protocol forks by its own API instead (DBOS's ``fork_workflow``); the kit's
        own path is not written into the log, so logs of the kit's fork read as they always did."""
        self._note("fork", expected=expected, **({} if path == FORK_PATH else {"path": path}))
        check = checker.check_fd(h, checker.Expectation(outcome=expected, gate=GATE))
        return self._label(check, path, f"second answer at the answered pause gave "
                                        f"{check.evidence['observed']!r}; its own outcome is {expected!r} "
                                        f"({check.evidence['side']})")

    def intent(self, path: str, h: History, expected: Any) -> Verdict:
        """FI (``checker.check_fi``): every resume after the first at the answered pause declared FORK or
        RETRY (``Kind.RESUME`` events with ``mode``), and each declaration was honoured -- a RETRY fired
        the gated effect no second time, a FORK completed with ``expected``, its own answer's outcome.
        The summary is read from ``h`` alone (what each resume came to), so a re-judge writes it again."""
        self._note("intent", path=path, expected=expected)
        check = checker.check_fi(h, checker.Expectation(gate=GATE, outcome=expected))
        return self._label(check, path, f"{_resumes(h)}; the gated effect fired {h.effect_counts().get(GATE, 0)} "
                                        f"time(s); a declared FORK's own outcome is {expected!r}"
                                        + ("" if check.holds else " -- a declaration was not honoured"))

    def valid_state(self, path: str, h: History, what: str) -> Verdict:
        """CV (``checker.check_cv``) of a state the workflow itself wrote, invalid under the framework's
        declared model: ✓ only when the framework refused it loudly and it never became durable. That
        it became durable is a PERSIST event marked ``valid: False`` in ``h`` (the protocol saw the
        invalid value in the durable state)."""
        self._note("valid_state", path=path, what=what)
        check = checker.check_cv(h)
        durable = "became durable" if check.evidence["became_durable"] else "never became durable"
        refused = f"refused loudly ({check.evidence['error']})" if check.evidence["refused"] else "never refused"
        return self._label(check, path, f"{what}: the invalid state {durable}; {refused}")

    def tampered(self, path: str, h: History, invalid: bool, result: Any, model: str) -> list[Verdict]:
        """A tamper edit's outcome (``checker.tamper_outcome``), in the row it belongs to.

        An edit invalid under the framework's declared state model is a CV question on the
        framework's row (✓ only when refused loudly before any effect). A type-valid edit is
        no CV question: its outcome goes to the framework's "undetected forgery" row, where
        ✓ means the forgery was detected -- never a ✓ of a safety property. An accepted edit
        (no refusal) is also decided under LV on the same path.
        """
        self._note("tampered", path=path, invalid=invalid, model=model,
                   **({} if result is checker.UNSET else {"result": result}))
        check = checker.tamper_outcome(h, checker.Expectation(gate=GATE, result=result), invalid)
        outcome = check.evidence["outcome"]
        changed = check.evidence["changed"]
        summary = (f"{outcome} ({check.evidence['error']})" if check.evidence["refused"] else
                   f"{outcome}" + (f": {'; '.join(changed)}" if changed else "")) + f" [{model}]"
        if invalid:
            verdict = check.verdict(self.subject, path, summary, cite(self.citations, Property.CV, path),
                                    state_model=model)
        else:  # only the adapter's own "CV forgery:..." statement: no other table speaks of forgeries
            row = forgery_subject(self.subject)
            doc = None if check.holds else cite(self.citations, Property.CV, f"forgery:{path}")
            evidence = {**check.evidence, "witness": [e.to_json() for e in check.witness], "state_model": model}
            verdict = Verdict(row.framework, row.backend, Property.CV, path, checker.label_for(check.holds, doc),
                              evidence, summary, doc, h)
        out = [verdict]
        if not check.evidence["refused"]:
            out.append(self._live(path, h, "after the edit", result, witness=True))
        return out

    def visibility(self, path: str, h: History) -> Verdict:
        """VO (``checker.check_vo``): no effect seen ahead of the durable record that caused it, no write
        by a superseded owner, no read from a superseded branch; each anomaly named with its events."""
        self._note("visibility", path=path)
        check = checker.check_vo(h)
        found = check.evidence["anomalies"]
        summary = ("; ".join(f"{a['anomaly']}: {a['explanation']}" for a in found) if found else
                   f"no ordering anomaly in {len(h)} events")
        return self._label(check, path, summary, witness=False)

    def same_decision(self, path: str, h: History, what: str, copies: Sequence[str]) -> Verdict:
        """RD (``checker.same_decision``): byte-identical copies of one crashed store, each recovered
        by processes of its own (incarnations ``<copy>/...``), made the same recovery decision. The
        decisions are read from ``h`` (``copy_decisions``), not handed in, so a re-judge of the
        receipt reads them again from the stored history rather than trusting a recorded summary."""
        self._note("same_decision", path=path, what=what, copies=list(copies))
        decisions = copy_decisions(h, copies)
        holds, evidence = checker.same_decision(decisions)
        witness = () if holds else tuple(e for e in h.of(*_DECISION_KINDS)
                                         if any(e.incarnation.startswith(f"{c}/") for c in copies))
        check = checker.Check(Property.RD, holds, witness, evidence, history=h)
        if holds:
            summary = (f"{what}: {len(copies)} byte-identical copies of the crashed store, the same decision: "
                       f"{_decided(decisions[copies[0]])}")
        else:
            summary = f"{what}: different decisions: " + "; ".join(f"{c} {_decided(decisions[c])}" for c in copies)
        return self._label(check, path, summary)


def answered_pause(h: History, pause: str) -> History:
    """``h`` with the answers to other pauses left out: the ANSWER and RESUME events whose
    ``detail["branch"]`` names another pause (the parallel workflow's branches). CO's checker counts
    every answer as an answer to the one pause; over this projection it counts the answers to ``pause``."""
    def other(e: Event) -> bool:
        branch = (e.detail or {}).get("branch")
        return e.kind in (Kind.ANSWER, Kind.RESUME) and branch is not None and branch != pause

    return History(tuple(e for e in h.events if not other(e)))


class VariantJudge(Judge):
    """The kit's judge with every path it decides on named after a workflow variant (``wait:park-kill``):
    the verdicts, the citations looked up for them and the calls it records (so a re-judge replays them
    with the plain judge) carry the variant's path. Shared by the adapters whose workflow variants run
    protocols (LlamaIndex's ``wait_for_event``, CrewAI's counter flow)."""

    def __init__(self, judge: Judge, prefix: str) -> None:
        super().__init__(judge.subject.framework, judge.subject.backend, judge.citations, judge.calls)
        self.variant = prefix

    def not_applicable(self, prop: Property, path: str, why: str) -> Verdict:
        return super().not_applicable(prop, self.variant + path, why)

    def effects_once(self, path: str, *args: Any, **kw: Any) -> Verdict:
        return super().effects_once(self.variant + path, *args, **kw)

    def gated_once(self, path: str, *args: Any, **kw: Any) -> Verdict:
        return super().gated_once(self.variant + path, *args, **kw)

    def prefix(self, path: str, *args: Any, **kw: Any) -> Verdict:
        return super().prefix(self.variant + path, *args, **kw)

    def live(self, path: str, *args: Any, **kw: Any) -> Verdict:
        return super().live(self.variant + path, *args, **kw)

    def valid_state(self, path: str, *args: Any, **kw: Any) -> Verdict:
        return super().valid_state(self.variant + path, *args, **kw)

    def tampered(self, path: str, *args: Any, **kw: Any) -> list[Verdict]:
        return super().tampered(self.variant + path, *args, **kw)

    def intent(self, path: str, *args: Any, **kw: Any) -> Verdict:
        return super().intent(self.variant + path, *args, **kw)

    def fork(self, h: History, expected: Any, path: str = FORK_PATH) -> Verdict:
        return super().fork(h, expected, self.variant + path)


def replay(calls: Sequence[Mapping[str, Any]], histories: Mapping[str, Any], framework: str, backend: str,
           citations: Mapping[str, DocRef]) -> list[Verdict]:
    """The verdicts ``calls`` (a ``Judge``'s log) decide over ``histories`` (a receipt's, per verdict
    path, or ``<path>#<property>`` where properties of a path were decided on different runs)."""
    main = Judge(framework, backend, citations)
    out: list[Verdict] = []
    for call in calls:
        args = dict(call)
        name, cite_as = args.pop("call"), args.pop("cite_as", None)
        judge = Judge(framework, backend, citations, cite_as=tuple(cite_as)) if cite_as else main
        if "result" not in args and name in ("live", "tampered"):
            args["result"] = checker.UNSET
        if name == "not_applicable":
            out.append(judge.not_applicable(Property(args["prop"]), args["path"], args["why"]))
            continue
        prop = {"effects_once": Property.EO, "gated_once": Property.CO, "prefix": Property.PC,
                "live": Property.LV, "fork": Property.FD, "tampered": Property.CV,
                "valid_state": Property.CV, "same_decision": Property.RD, "intent": Property.FI,
                "visibility": Property.VO}[name]
        path = args.get("path", FORK_PATH)
        stored = histories.get(f"{path}#{prop.value}", histories.get(path))
        if stored is None:
            raise ValueError(f"no history stored for {prop.value} on {path}: the receipt cannot be re-judged")
        h = History.from_json(stored)
        match name:
            case "effects_once":
                out.append(judge.effects_once(path, h, args["what"], tuple(args["expected"])))
            case "gated_once":
                out.append(judge.gated_once(path, h, args["what"], args["witness"],
                                            tuple(args.get("gates", (GATE,))), args.get("pauses")))
            case "prefix":
                out.append(judge.prefix(path, h, args.get("at", "crash")))
            case "live":
                out.append(judge.live(path, h, args["what"], args["result"], args["witness"], args.get("gate", GATE)))
            case "fork":
                out.append(judge.fork(h, args["expected"], path))
            case "tampered":
                out += judge.tampered(path, h, args["invalid"], args["result"], args["model"])
            case "valid_state":
                out.append(judge.valid_state(path, h, args["what"]))
            case "same_decision":
                out.append(judge.same_decision(path, h, args["what"], tuple(args["copies"])))
            case "intent":
                out.append(judge.intent(path, h, args["expected"]))
            case "visibility":
                out.append(judge.visibility(path, h))
    return out


FORGERY_ROW = "undetected forgery"


def forgery_subject(subject: Subject) -> Subject:
    """The matrix row of type-valid forgeries: outside the contract, so never a property's ✓. Its
    table is empty (its citation is given explicitly: the adapter's "CV forgery:..." entry), so the
    paper campaigns' rows for the framework's name are never consulted for it."""
    return Subject(f"{subject.framework} · {FORGERY_ROW}", subject.backend, citations={})


def visibility_verdicts(judge: Judge, verdicts: Sequence[Verdict]) -> list[Verdict]:
    """VO on every path a protocol decided with a recorded history, over that path's longest one.

    A race's verdicts are the race rule's over many trials (``probes.core.race``), not one
    history's: its paths get no VO verdict here rather than a ✓ from one trial."""
    by_path: dict[str, list[Verdict]] = {}
    for v in verdicts:
        by_path.setdefault(v.path, []).append(v)
    out: list[Verdict] = []
    for path, group in by_path.items():
        recorded = [v.history for v in group if v.history is not None]
        if not recorded or any("race_decision" in v.evidence for v in group):
            continue
        out.append(judge.visibility(path, max(recorded, key=len)))
    return out


def durable_prefix(h: History, crash: Event) -> list[str]:
    """Steps whose end was followed by a durable write before ``crash`` (the frontier F)."""
    ended: list[str] = []
    durable: list[str] = []
    for e in h.events[: h.events.index(crash)]:
        if e.kind is Kind.STEP_END and e.step not in ended:
            ended.append(e.step)
        elif e.kind is Kind.PERSIST:
            durable = list(ended)
    return durable


_DECISION_KINDS = (Kind.STEP_BEGIN, Kind.EFFECT, Kind.PAUSE, Kind.COMPLETE, Kind.REFUSE, Kind.ERROR)


def copy_decisions(h: History, copies: Sequence[str]) -> dict[str, dict[str, Any]]:
    """What each copy's processes (incarnations ``<copy>/<op>``) decided, in a run-stable form: the
    operations that ran (a ``-start`` one: the recovery found nothing durable and started over), the
    steps they began, the effects they fired, and how each process ended (paused, completed with
    its outcome, refused or failed with the error's type). No handles, no pids: equal durable state
    must give equal values here."""
    out: dict[str, dict[str, Any]] = {}
    for c in copies:
        mine = [e for e in h.events if e.incarnation.startswith(f"{c}/")]
        out[c] = {"ops": list(dict.fromkeys(e.incarnation[len(c) + 1:] for e in mine)),
                  "steps": [e.step for e in mine if e.kind is Kind.STEP_BEGIN],
                  "effects": dict(sorted(Counter(e.effect for e in mine if e.kind is Kind.EFFECT).items())),
                  "ended": [_ending(e) for e in mine if e.kind in _DECISION_KINDS[2:]]}
    return out


def _ending(e: Event) -> str:
    return {Kind.PAUSE: "paused", Kind.COMPLETE: f"completed with {e.value!r}", Kind.REFUSE: f"refused {e.value}",
            Kind.ERROR: f"failed {e.value}"}[e.kind]


def _resumes(h: History) -> str:
    """What each resume of ``h`` declared and came to, in words (a FI summary): the run's first
    PAUSE, COMPLETE, REFUSE or ERROR after each ``Kind.RESUME`` and before the next one."""
    out: list[str] = []
    resumes = h.of(Kind.RESUME)
    for i, r in enumerate(resumes):
        stop = resumes[i + 1].seq if i + 1 < len(resumes) else None
        ends = [e for e in h.of(Kind.PAUSE, Kind.COMPLETE, Kind.REFUSE, Kind.ERROR)
                if e.seq > r.seq and (stop is None or e.seq < stop)]
        mode = r.detail.get("mode")
        said = f"{'a declared ' + mode.upper() + ' of' if mode else 'answered'} {r.value!r}"
        out.append(f"{said}: {_ending(ends[0]) if ends else 'no end recorded'}")
    return "; ".join(out) or "no resume recorded"


def _decided(d: Mapping[str, Any]) -> str:
    """A copy's decision in words, for a summary."""
    over = ", started over (nothing durable)" if any(op.endswith("-start") for op in d["ops"]) else ""
    return (f"fired {d['effects'] or 'nothing'}, then {' -> '.join(d['ended']) or 'no end recorded'}{over}")
