"""Histories -> verdicts, in the contract's vocabulary: the one place a label is decided.

Campaigns *observe*: they record a ``probes.core.history.History`` (the harness's own
actions and, through the oracle, every effect the workflow fired, by which incarnation,
in commit order) and hand it to a checker here together with an ``Expectation`` (what
the contract demands of that protocol). A checker returns a ``Check``: whether the
property holds, the *witness* (the events that break it: the incarnation that fired a
duplicate, the answer nobody consumed, the crash after which the run never completed)
and the stable evidence. ``Check.verdict`` turns it into the label:

* ``✓``  the property holds on this path;
* ``✗``  violated, and the framework's documentation claims the property;
* ``D``  violated, and the documentation states the weaker behaviour;
* ``U``  violated, and the documentation is silent.

The citation (``DocRef``: statement, source, version read) comes from
``probes.citations``; a ``D`` or ``✗`` without one cannot be constructed.

Definitions (CONTRACT.md section 2, made sound where the paper's counting was not):

* EO is exactly-once *and* completion: every expected effect fired once and the run
  completed after its last crash. A run that never completes is not EO ✓ (and is
  reported as LV ✗ by ``check_lv``).
* CO fails on a lost answer (an answered interrupt whose gated effect never fired) as
  well as on a double consumption.
* TLC results: ``tlc_checks`` maps every violated invariant or temporal property and a
  deadlock to a failing check; an error or an invariant it cannot map raises
  ``HarnessError`` (reported, never a verdict, never dropped).

``collapse`` is the one function that folds the labels of a matrix cell into one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import Any, Iterable, Mapping, Sequence

from probes.core.errors import HarnessError
from probes.core.history import Event, History, Kind


class Property(str, Enum):
    PC = "PC"  # prefix consistency
    EO = "EO"  # effect exactly-once
    FD = "FD"  # fork determinism
    CV = "CV"  # checkpoint validity
    CO = "CO"  # consume-once
    RD = "RD"  # recovery determinism
    FI = "FI"  # fork intent (protocol obligation)
    LV = "LV"  # liveness

    @property
    def title(self) -> str:
        return PROPERTY_TITLES[self]


PROPERTY_TITLES = {
    Property.PC: "prefix consistency",
    Property.EO: "effect exactly-once",
    Property.FD: "fork determinism",
    Property.CV: "checkpoint validity",
    Property.CO: "consume-once",
    Property.RD: "recovery determinism",
    Property.FI: "fork intent",
    Property.LV: "liveness",
}


class Label(str, Enum):
    PASS = "✓"
    FAIL = "✗"
    DOC = "D"
    UNDOC = "U"
    NA = "n/a"

    @property
    def violates(self) -> bool:
        return self in (Label.FAIL, Label.DOC, Label.UNDOC)


# Worst first. U (violated, nothing documented) outranks ✗ (violated against a claim)
# only in the sense that a reader has nothing to go on; both are violations.
WORST_FIRST: tuple[Label, ...] = (Label.UNDOC, Label.FAIL, Label.DOC, Label.PASS, Label.NA)


@dataclass(frozen=True)
class DocRef:
    """A documentation statement a label rests on, and where and for which version it was read.

    ``source`` is the citation id in ``../shared/DOCS.md`` (``LG-8``), ``version`` the
    package version (or documentation snapshot) the statement was read for.
    """

    page: str
    quote: str
    stance: str  # "claims" (the property is promised) or "deviation" (weaker behaviour stated)
    source: str = ""
    version: str = ""

    def __post_init__(self) -> None:
        if self.stance not in ("claims", "deviation"):
            raise ValueError(f"DocRef.stance must be 'claims' or 'deviation', not {self.stance!r}")

    def cite(self) -> str:
        """The one-line citation shown beside a label."""
        ref = f"{self.source}: " if self.source else ""
        version = f" ({self.version})" if self.version else ""
        return f"{ref}\"{self.quote}\" -- {self.page}{version}"


@dataclass(frozen=True)
class Verdict:
    """One cell of the conformance matrix, with the path it was measured on."""

    framework: str
    backend: str
    property: Property
    path: str
    label: Label
    evidence: Mapping[str, Any]
    summary: str
    doc: DocRef | None = None
    # The recorded history the checker decided on. Kept out of to_json (and so out of the
    # stable verdict view, where a race's event order would vary); the receipt stores it.
    history: History | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        data = asdict(replace(self, history=None))
        del data["history"]
        data["property"] = self.property.value
        data["label"] = self.label.value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Verdict":
        doc = data.get("doc")
        return cls(
            framework=data["framework"],
            backend=data["backend"],
            property=Property(data["property"]),
            path=data["path"],
            label=Label(data["label"]),
            evidence=data.get("evidence", {}),
            summary=data.get("summary", ""),
            doc=DocRef(**doc) if doc else None,
        )


def label_for(holds: bool, doc: DocRef | None) -> Label:
    """holds -> ✓; otherwise ✗ / D / U by what the documentation says."""
    if holds:
        return Label.PASS
    if doc is None:
        return Label.UNDOC
    return {"deviation": Label.DOC, "claims": Label.FAIL}[doc.stance]


# The evidence of a violation no documentation statement is declared for (its label is U).
NO_CITATION = "no citation declared"


@dataclass(frozen=True)
class Subject:
    """Who a verdict is about: the framework (and arm) and the backend it ran on.

    ``citations`` is the subject's own citation table (a kit adapter's, ``"PROP glob" ->
    DocRef``); a subject without one (``None``) is a paper campaign's, labelled from the
    rows of ``probes.citations`` for its framework. A subject with a table is labelled
    from it alone: no other framework's or campaign's table is consulted.
    """

    framework: str
    backend: str = "-"
    citations: Mapping[str, DocRef] | None = field(default=None, compare=False, hash=False, repr=False)

    def verdict(
        self,
        prop: Property,
        path: str,
        holds: bool,
        evidence: Mapping[str, Any],
        summary: str,
        doc: DocRef | None = None,
        history: History | None = None,
    ) -> Verdict:
        """Label an observation: holds -> ✓; otherwise ✗ / D / U by the documentation.

        The documentation matters only for a violation: a holding cell carries no
        citation. Without an explicit ``doc`` the subject's table is consulted
        (``probes.citations.cite_in``, the one lookup); a violation nothing cites is U and
        says so in its evidence ("no citation declared").
        """
        evidence = dict(evidence)
        if holds:
            doc = None
        elif doc is None:
            from probes.citations import cite_in  # data about frameworks, kept out of the core

            doc = cite_in(self.citations, self.framework, prop, path)
        if not holds and doc is None:
            evidence["citation"] = NO_CITATION
        return Verdict(self.framework, self.backend, prop, path, label_for(holds, doc), evidence, summary, doc,
                       history)

    def not_applicable(self, prop: Property, path: str, why: str) -> Verdict:
        return Verdict(self.framework, self.backend, prop, path, Label.NA, {"why": why}, why)


# --- checks over histories ---------------------------------------------------------------


_UNSET: Any = object()


@dataclass(frozen=True)
class Expectation:
    """What the contract demands of one recorded protocol run.

    ``effects``: each fires exactly once over the whole history (EO). ``gate``: the
    interrupt-gated effect (CO). ``prefix``: the durable prefix at recovery (PC: none
    of it may run after the recovery starts). ``complete``: the run must complete after
    its last crash (EO and LV). ``outcome``: f(v) a fork must observe (FD).
    """

    effects: tuple[str, ...] = ()
    gate: str | None = None
    prefix: tuple[str, ...] = ()
    complete: bool = True
    outcome: Any = _UNSET


@dataclass(frozen=True)
class Check:
    """A checker's answer: holds or not, the witness events, and the run-stable evidence."""

    property: Property
    holds: bool
    witness: tuple[Event, ...]
    evidence: Mapping[str, Any]
    history: History | None = field(default=None, compare=False, repr=False)

    def label(self, doc: DocRef | None = None) -> Label:
        return label_for(self.holds, doc)

    def verdict(self, subject: Subject, path: str, summary: str, doc: DocRef | None = None,
                witness_in_evidence: bool = True, **extra: Any) -> Verdict:
        """The labelled verdict; ``witness_in_evidence=False`` where the event order is a race."""
        evidence = dict(self.evidence)
        if witness_in_evidence:
            evidence["witness"] = [e.to_json() for e in self.witness]
        evidence.update(extra)
        return subject.verdict(self.property, path, self.holds, evidence, summary, doc, self.history)


def _name(e: Event) -> str | None:
    return e.step if e.step is not None else e.effect


def _last(history: History, *kinds: Kind) -> Event | None:
    found = history.of(*kinds)
    return found[-1] if found else None


def completed_after_last_crash(history: History) -> tuple[bool, tuple[Event, ...]]:
    """Did the run complete after its last crash? If not, the witness is that crash (or the end)."""
    crash = _last(history, Kind.CRASH)
    tail = history.after(crash) if crash is not None else history
    if tail.of(Kind.COMPLETE):
        return True, ()
    stops = tuple(tail.of(Kind.ERROR, Kind.REFUSE))
    return False, ((crash,) if crash is not None else ()) + stops


def check_eo(history: History, expect: Expectation) -> Check:
    """EO: every expected effect fired exactly once, nothing fired twice, and the run completed."""
    counts = history.effect_counts()
    for name in expect.effects:
        counts.setdefault(name, 0)
    off = {k: v for k, v in sorted(counts.items()) if (v != 1 if k in expect.effects else v > 1)}
    witness = [e for e in history.of(Kind.EFFECT) if e.effect in off]
    completed, stop = completed_after_last_crash(history)
    if expect.complete and not completed:
        witness.extend(stop)
    holds = not off and (completed or not expect.complete)
    return Check(Property.EO, holds, tuple(sorted(witness, key=lambda e: e.seq)),
                 {"effect_counts": dict(sorted(counts.items())), "expected_once": list(expect.effects),
                  "off": off, "completed": completed}, history=history)


def check_co(history: History, expect: Expectation) -> Check:
    """CO: an answered interrupt's gated effect fires exactly once (no double, no lost answer)."""
    if expect.gate is None:
        raise ValueError("check_co needs Expectation.gate")
    fires = [e for e in history.of(Kind.EFFECT) if e.effect == expect.gate]
    answers = history.of(Kind.ANSWER, Kind.RESUME)
    want = len(answers[:1])  # one consumption if the interrupt was answered at all, else none
    lost = bool(answers) and not fires
    witness = fires if len(fires) > want else (answers if lost else [])
    return Check(Property.CO, not witness, tuple(witness),
                 {"gate": expect.gate, "gate_fires": len(fires), "answers": len(answers),
                  "duplicate": len(fires) > 1, "lost_answer": lost}, history=history)


def recovery_start(history: History) -> Event | None:
    """Where recovery begins: the first RECOVER, else the first RESUME (a fresh process resuming)."""
    for kinds in ((Kind.RECOVER,), (Kind.RESUME,)):
        found = history.of(*kinds)
        if found:
            return found[0]
    return None


def check_pc(history: History, expect: Expectation) -> Check:
    """PC: after recovery starts, no task of the durable prefix runs again.

    A task "runs" when it begins (STEP_BEGIN) where the workload records step markers,
    else when its effect fires.
    """
    start = recovery_start(history)
    tail = history.after(start) if start is not None else History()
    marker = Kind.STEP_BEGIN if history.of(Kind.STEP_BEGIN) else Kind.EFFECT
    witness = [e for e in tail.of(marker) if _name(e) in expect.prefix]
    return Check(Property.PC, not witness, tuple(witness),
                 {"durable_prefix": list(expect.prefix),
                  "reentered": dict(sorted(_count(str(_name(e)) for e in witness).items())),
                  "recovered": start is not None}, history=history)


def check_lv(history: History, expect: Expectation | None = None) -> Check:
    """LV: the run completed after its last crash (a refusal to resume durable state is a violation)."""
    completed, stop = completed_after_last_crash(history)
    return Check(Property.LV, completed, stop,
                 {"completed": completed, "crashes": len(history.of(Kind.CRASH)),
                  "stopped_by": [e.kind.value for e in stop]}, history=history)


def check_fd(history: History, expect: Expectation) -> Check:
    """FD: the fork (the last FORK, else the second RESUME) observed f(v) for its own v."""
    if expect.outcome is _UNSET:
        raise ValueError("check_fd needs Expectation.outcome")
    forks = history.of(Kind.FORK)
    resumes = history.of(Kind.RESUME)
    fork = forks[-1] if forks else (resumes[1] if len(resumes) > 1 else None)
    done = history.after(fork).of(Kind.COMPLETE) if fork is not None else []
    before = history.events[: history.events.index(fork)] if fork is not None else history.events
    firsts = [e for e in before if e.kind is Kind.COMPLETE]
    first = firsts[0].value if firsts else None
    observed = done[-1].value if done else None
    holds = fork is not None and bool(done) and observed == expect.outcome
    witness = tuple(done[-1:]) if done else ((fork,) if fork is not None else ())
    return Check(Property.FD, holds, () if holds else witness,
                 {"expected_f_v": expect.outcome, "observed": observed, "first_resume_outcome": first,
                  "served_first_outcome": bool(done) and observed == first and observed != expect.outcome}, history=history)


def check_cv(history: History, expect: Expectation | None = None) -> Check:
    """CV: an invalid state (a TAMPER edit, or a PERSIST marked invalid) is refused loudly before
    it becomes durable and before any effect runs on it."""
    tamper = history.of(Kind.TAMPER)
    start = tamper[0] if tamper else None
    tail = history.after(start) if start is not None else history
    refusals = tail.of(Kind.REFUSE)
    until_refused = tail.events[: tail.events.index(refusals[0])] if refusals else tail.events
    invalid = [e for e in tail.of(Kind.PERSIST) if e.detail.get("valid") is False]
    acted = [e for e in until_refused if e.kind is Kind.EFFECT] if start is not None else []
    holds = bool(refusals) and not invalid and not acted
    witness = tuple(invalid + acted) or tuple(tail.of(Kind.COMPLETE, Kind.ERROR)) or ((start,) if start else ())
    return Check(Property.CV, holds, () if holds else witness,
                 {"refused": bool(refusals), "became_durable": bool(invalid),
                  "effects_before_refusal": dict(sorted(_count(e.effect for e in acted).items())),
                  "error": refusals[0].value if refusals else None}, history=history)


def _count(items: Iterable[Any]) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def recovery_decision(history: History) -> tuple[tuple[str, str | None], ...]:
    """What recovery did: the steps begun and effects fired after it started, in order."""
    start = recovery_start(history)
    tail = history.after(start) if start is not None else History()
    return tuple((e.kind.value, _name(e)) for e in tail.of(Kind.STEP_BEGIN, Kind.EFFECT))


def check_rd(decisions: Mapping[str, Any]) -> Check:
    """RD: equal durable state gave equal recovery decisions in every arm (at least two arms)."""
    distinct = sorted({repr(v) for v in decisions.values()})
    holds = len(decisions) >= 2 and len(distinct) < 2
    return Check(Property.RD, holds, (),
                 {"decisions": {k: v for k, v in sorted(decisions.items())}, "distinct": len(distinct)})


def _retry_breaks(window: list[Event], expect: Expectation) -> list[Event]:
    """A declared RETRY must not fire the gated effect again (only effect events carry ``effect``)."""
    return [e for e in window if e.effect == expect.gate]


def _fork_breaks(window: list[Event], expect: Expectation) -> list[Event]:
    """A declared FORK must complete with f(v) for its own v."""
    done = [e for e in window if e.kind is Kind.COMPLETE]
    return [] if done and done[-1].value == expect.outcome else (done[-1:] or window[:1])


def _undeclared(window: list[Event], expect: Expectation) -> list[Event]:
    """A resume at an answered interrupt that declares neither FORK nor RETRY."""
    return window[:1]


INTENT_RULES = {"retry": _retry_breaks, "fork": _fork_breaks}


def check_fi(history: History, expect: Expectation) -> Check:
    """FI: every resume after the first (addressed to an interrupt already answered) declares
    FORK or RETRY, and the declaration is honoured: a RETRY fires no gated effect again, a
    FORK completes with f(v) for its own v (``expect.outcome``)."""
    if expect.gate is None or expect.outcome is _UNSET:
        raise ValueError("check_fi needs Expectation.gate and Expectation.outcome")
    resumes = history.of(Kind.RESUME)
    later = resumes[1:]
    at = [history.events.index(r) for r in later] + [len(history.events)]
    bad: list[Event] = []
    for i, r in enumerate(later):
        window = list(history.events[at[i]: at[i + 1]])  # from this resume to the next
        bad += INTENT_RULES.get(r.detail.get("mode"), _undeclared)(window, expect)
    holds = bool(later) and not bad
    return Check(Property.FI, holds, tuple(sorted(bad, key=lambda e: e.seq)) if later else tuple(resumes),
                 {"declared": [r.detail.get("mode") for r in later], "expected_fork_outcome": expect.outcome,
                  "honoured": holds}, history=history)


CHECKS = {Property.EO: check_eo, Property.CO: check_co, Property.PC: check_pc, Property.LV: check_lv,
          Property.FD: check_fd, Property.CV: check_cv, Property.FI: check_fi}


def check(prop: Property, history: History, expect: Expectation) -> Check:
    """Dispatch: the checker for ``prop`` over ``history`` (RD compares histories: ``check_rd``)."""
    if prop not in CHECKS:
        raise ValueError(f"no single-history checker for {prop.value}: use check_rd")
    return CHECKS[prop](history, expect)


def every(checks: Sequence[Check]) -> Check:
    """Several repetitions of one path: holds iff every repetition holds. The witness and evidence
    are the first failing repetition's (the first one's if all hold), plus how many held."""
    if not checks:
        raise ValueError("every() needs at least one check")
    failing = [c for c in checks if not c.holds]
    first = failing[0] if failing else checks[0]
    return Check(first.property, not failing, first.witness,
                 {**first.evidence, "repetitions": len(checks), "held": len(checks) - len(failing)},
                 history=first.history)


# --- TLC results -> checks ---------------------------------------------------------------

# Invariants that are not named after a property but stand for one: TypeOK is the model's
# state schema (a state outside it is an invalid state: CV); ConsumeCount is the consume
# race's count of consumptions per interrupt (more than one is a double consumption: CO).
TLC_INVARIANT_PROPERTY = {"ConsumeCount": Property.CO}
# Invariants about the model itself: violated, the model is wrong -- a harness error, no label.
TLC_MODEL_INVARIANTS = ("TypeOK",)


def tlc_checks(result: str, violated: str | None, invariants: Sequence[str], properties: Sequence[str]) -> list[Check]:
    """Map one TLC run onto checks; nothing is dropped.

    * ``holds``: every checked invariant that names a property holds (and LV when a temporal
      property was checked);
    * ``violated`` with an invariant named after a property: that property fails;
      ``ConsumeCount``: CO fails (``TLC_INVARIANT_PROPERTY``); ``TypeOK`` (the model's own
      typing) is a ``HarnessError``: a wrong model says nothing about a property; a temporal
      property: LV fails;
    * ``deadlock``: LV fails (a behaviour that cannot continue never completes);
    * ``error``, or a violated name this mapping does not know: ``HarnessError``.
    """
    names = {p.value for p in Property}
    if result == "holds":
        out = [Check(Property(i), True, (), {"tlc_result": result, "invariant": i}) for i in invariants if i in names]
        if properties:
            out.append(Check(Property.LV, True, (), {"tlc_result": result, "properties": list(properties)}))
        return out
    if result == "deadlock":
        return [Check(Property.LV, False, (), {"tlc_result": result, "violated": "deadlock"})]
    if result == "violated":
        if violated in TLC_MODEL_INVARIANTS:
            raise HarnessError(f"TLC reports {violated} violated: the model itself is wrong, which is no contract "
                               "property; no verdict")
        if violated in names and violated in invariants:
            prop = Property(str(violated))
        elif violated in TLC_INVARIANT_PROPERTY and violated in invariants:
            prop = TLC_INVARIANT_PROPERTY[str(violated)]
        elif properties and violated not in invariants:
            prop = Property.LV
        else:
            raise HarnessError(f"TLC reported {violated!r} violated, which is none of the checked invariants "
                               f"{list(invariants)} or properties {list(properties)}")
        return [Check(prop, False, (), {"tlc_result": result, "violated": violated})]
    raise HarnessError(f"TLC gave no verdict (result {result!r}, {violated!r})")


# --- one cell, many labels ---------------------------------------------------------------


def collapse(labels: Iterable[Label | str]) -> Label | None:
    """The one label for a matrix cell: the worst over its paths; n/a only if nothing was measured.

    None when there are no labels at all (the cell was not measured). Used by the CLI
    matrix, the book's matrix page and every campaign's row.
    """
    found = [Label(x) for x in labels]
    if not found:
        return None
    measured = [x for x in found if x is not Label.NA]
    return min(measured, key=WORST_FIRST.index) if measured else Label.NA


def cell_text(labels: Iterable[Label | str]) -> str:
    """A split cell in words: the collapsed label if every measured path agrees, else the
    collapsed label and then the others, each with its path count (``U×3 · ✓×2``). n/a
    paths count only when nothing was measured."""
    found = [Label(x) for x in labels]
    top = collapse(found)
    if top is None:
        return ""
    counts = _count(x for x in found if x is not Label.NA or top is Label.NA)
    first = f"{top.value}×{counts.pop(top)}"
    if not counts:
        return top.value
    return " · ".join([first] + [f"{lab.value}×{counts[lab]}" for lab in sorted(counts, key=WORST_FIRST.index)])


def comparable(label: str) -> str:
    """Class a label for comparison with the paper: ✗, D and U all mean 'violates'."""
    lab = Label(label)
    return "violates" if lab.violates else {Label.PASS: "holds", Label.NA: "n/a"}[lab]


# --- observation checks kept for protocols that record no history yet ---------------------


def at_most_once(effect_counts: Mapping[str, int]) -> tuple[bool, dict[str, Any]]:
    """Every effect fired at most once (a safety half; EO and CO use the history checkers)."""
    dup = {k: v for k, v in sorted(effect_counts.items()) if v > 1}
    return not dup, {"effect_counts": dict(sorted(effect_counts.items())), "duplicated": dup}


def exactly_once(effect_counts: Mapping[str, int], expected: list[str]) -> tuple[bool, dict[str, Any]]:
    """EO with liveness: every expected effect fired exactly once, nothing else fired twice."""
    counts = {k: int(effect_counts.get(k, 0)) for k in expected}
    extra = {k: v for k, v in effect_counts.items() if k not in counts}
    counts.update(extra)
    bad = {k: v for k, v in sorted(counts.items()) if (v != 1 if k in expected else v > 1)}
    return not bad, {"effect_counts": dict(sorted(counts.items())), "expected_once": list(expected), "off": bad}


def prefix_not_reentered(
    runs_after_recovery: Mapping[str, int], durable_prefix: list[str]
) -> tuple[bool, dict[str, Any]]:
    """PC: no task in the durable prefix ran again after recovery."""
    reentered = {t: runs_after_recovery[t] for t in durable_prefix if runs_after_recovery.get(t)}
    return not reentered, {
        "durable_prefix": list(durable_prefix),
        "runs_after_recovery": dict(sorted(runs_after_recovery.items())),
        "reentered": reentered,
    }


def fork_outcome(observed: Any, expected: Any, first_outcome: Any) -> tuple[bool, dict[str, Any]]:
    """FD: the fork observed f(v) for its own v, not the first resume's outcome."""
    return observed == expected, {
        "expected_f_v": expected,
        "observed": observed,
        "first_resume_outcome": first_outcome,
        "served_first_outcome": observed == first_outcome and observed != expected,
    }


def invalid_state_refused(
    refused_at_write: bool, became_durable: bool, error: str | None
) -> tuple[bool, dict[str, Any]]:
    """CV: the invalid state was refused loudly and never became durable."""
    return refused_at_write and not became_durable, {
        "refused_at_write": refused_at_write,
        "became_durable": became_durable,
        "error": error,
    }


def same_decision(decisions: Mapping[str, Any]) -> tuple[bool, dict[str, Any]]:
    """RD: equal durable state gave equal recovery decisions in every arm."""
    distinct = sorted({repr(v) for v in decisions.values()})
    return len(distinct) == 1, {"decisions": dict(sorted(decisions.items())), "distinct": len(distinct)}


def completes(completed: bool, detail: str) -> tuple[bool, dict[str, Any]]:
    """LV: the durable state could be resumed to completion."""
    return completed, {"completed": completed, "detail": detail}
