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

The citation (``DocRef``: statement, source, version read) comes from the subject's
citation table (``probes.citations`` builds the tables; ``lookup`` below is the one
matching rule); a ``D`` or ``✗`` without one cannot be constructed.

Definitions (CONTRACT.md section 2 and the TLA+ model's invariants), each written once here:

* EO is *at most once*, and *exactly once* on a run that completed: no effect fired more
  than once (the model's ``effects[t] <= 1``), and -- when the run completed after its last
  crash -- every expected effect fired exactly once (a completed run that silently skipped
  an effect fails EO). A run that never completes is no EO failure: it is decided under LV
  on the same path (``check_lv``), which names why.
* CO is at most one gated effect per interrupt (EO specialised to the gate). A lost answer
  (an answer accepted, its gated effect never fired, no run completed) is not a CO
  violation: it is a liveness failure, and ``check_lv`` names it "lost answer".
* LV holds only for a completion whose outcome is the workflow's own result
  (``Expectation.result``): a run that "completed" with an error string as its outcome did
  not complete its work.
* A tamper edit of durable state has one of four outcomes (``TamperOutcome``: refused
  loudly; accepted, behaviour unchanged; accepted, behaviour changed; accepted although
  invalid). Only an edit invalid under the framework's declared state model is a CV
  question (``tamper_outcome``); a type-valid forgery is reported apart, never as a ✓.
* The observation helpers at the bottom (``effects_once``, ``gate_once``, ``completes``)
  apply the same rules to counts, for campaigns that record no history.
* TLC results: ``tlc_checks`` maps every violated invariant or temporal property and a
  deadlock to a failing check; an error or an invariant it cannot map raises
  ``HarnessError`` (reported, never a verdict, never dropped).

``collapse`` is the one function that folds the labels of a matrix cell into one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from fnmatch import fnmatchcase
from typing import Any, Iterable, Mapping, Sequence

from probes.core.errors import HarnessError
from probes.core.history import Event, History, Kind
from probes.core.visibility import anomalies


class Property(str, Enum):
    PC = "PC"  # prefix consistency
    EO = "EO"  # effect exactly-once
    FD = "FD"  # fork determinism
    CV = "CV"  # checkpoint validity
    CO = "CO"  # consume-once
    RD = "RD"  # recovery determinism
    FI = "FI"  # fork intent (protocol obligation)
    LV = "LV"  # liveness
    VO = "VO"  # effect visibility order (beyond the paper: probes.core.visibility)

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
    Property.VO: "visibility order",
}


class Label(str, Enum):
    PASS = "✓"
    FAIL = "✗"
    DOC = "D"
    UNDOC = "U"
    UNDECIDED = "?"  # a race whose budget ran out before it was decided (probes.core.race): never ✓
    NA = "n/a"

    @property
    def violates(self) -> bool:
        return self in (Label.FAIL, Label.DOC, Label.UNDOC)


# Worst first. U (violated, nothing documented) outranks ✗ (violated against a claim)
# only in the sense that a reader has nothing to go on; both are violations.
# An undecided race (?) ranks below every violation and above ✓, so a cell holding one never reads ✓.
WORST_FIRST: tuple[Label, ...] = (Label.UNDOC, Label.FAIL, Label.DOC, Label.UNDECIDED, Label.PASS, Label.NA)


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


# One entry of a citation table: the property names it labels, its path glob, the statement.
Entry = tuple[frozenset[str], str, DocRef]
# A citation table: "PROP path-glob" -> the statement (a kit adapter's ``citations``, or
# ``probes.citations.campaign_table``).
Table = Mapping[str, DocRef]
# Protocol families no statement speaks for unless it names them: a code change between a pause and
# its answer (the kit's change protocol) is a deploy, which a statement about resuming the same code
# ("EO *") does not cover. Their paths match only patterns that name the family ("EO change:*").
EXPLICIT_FAMILIES = ("change",)


def entries(table: Table) -> list[Entry]:
    """A citation table as lookup entries (its keys are "PROP path-glob"; no glob means "*")."""
    out: list[Entry] = []
    for key, ref in table.items():
        name, _, pattern = key.partition(" ")
        out.append((frozenset({Property(name).value}), pattern or "*", ref))
    return out


def lookup(table: Iterable[Entry], prop: Property | str, path: str) -> DocRef | None:
    """The one matching rule: the longest matching path glob naming ``prop`` wins (ties: the first
    declared); a path of ``EXPLICIT_FAMILIES`` matches only the globs that name its family."""
    name = Property(prop).value
    family = path.partition(":")[0]
    prefix = f"{family}:" if family in EXPLICIT_FAMILIES else ""
    best: Entry | None = None
    for entry in table:
        names, pattern, _ref = entry
        if (name in names and pattern.startswith(prefix) and fnmatchcase(path, pattern)
                and (best is None or len(pattern) > len(best[1]))):
            best = entry
    return best[2] if best else None


# The evidence of a violation no documentation statement is declared for (its label is U).
NO_CITATION = "no citation declared"


@dataclass(frozen=True)
class Subject:
    """Who a verdict is about: the framework (and arm) and the backend it ran on.

    ``citations`` is the subject's citation table (``"PROP glob" -> DocRef``: a kit adapter's,
    or a study's from ``probes.citations.subject``); it alone labels the subject's violations,
    no other framework's or campaign's table is consulted. A subject without one (``None``)
    cites nothing: its violations are U.
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
        citation. Without an explicit ``doc`` the subject's table is consulted (``lookup``,
        the one rule); a violation nothing cites is U and says so in its evidence ("no
        citation declared").
        """
        evidence = dict(evidence)
        if holds:
            doc = None
        elif doc is None and self.citations is not None:
            doc = lookup(entries(self.citations), prop, path)
        if not holds and doc is None:
            evidence["citation"] = NO_CITATION
        return Verdict(self.framework, self.backend, prop, path, label_for(holds, doc), evidence, summary, doc,
                       history)

    def not_applicable(self, prop: Property, path: str, why: str) -> Verdict:
        return Verdict(self.framework, self.backend, prop, path, Label.NA, {"why": why}, why)

    def undecided(self, prop: Property, path: str, evidence: Mapping[str, Any], summary: str,
                  history: History | None = None) -> Verdict:
        """A race cell whose budget ran out with no violation and a bound above its threshold
        (``probes.core.race``): no citation, no ✓."""
        return Verdict(self.framework, self.backend, prop, path, Label.UNDECIDED, dict(evidence), summary, None,
                       history)


# --- checks over histories ---------------------------------------------------------------


_UNSET: Any = object()
# "No expectation" for an ``Expectation`` field (``result``: any completion counts).
UNSET: Any = _UNSET


@dataclass(frozen=True)
class Expectation:
    """What the contract demands of one recorded protocol run.

    ``effects``: each fires at most once, and exactly once if the run completed (EO).
    ``gate``: the interrupt-gated effect (CO; LV names a lost answer by it). ``prefix``: the
    durable prefix at recovery (PC: none of it may run after the recovery starts).
    ``outcome``: f(v) a fork must observe (FD). ``result``: the workflow's own result, the
    value its completion must carry (LV); unset, any completion counts.
    """

    effects: tuple[str, ...] = ()
    gate: str | None = None
    prefix: tuple[str, ...] = ()
    outcome: Any = _UNSET
    result: Any = _UNSET


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
    """EO: nothing fired twice; on a run that completed, every expected effect fired exactly once.

    A run that did not complete is judged on the safety half only (at most once); its
    non-completion is LV's to report (``check_lv``), never an EO failure.
    """
    counts = history.effect_counts()
    completed, _stop = completed_after_last_crash(history)
    duplicated = {k: v for k, v in counts.items() if v > 1}
    missing = {k: 0 for k in expect.effects if counts.get(k, 0) == 0} if completed else {}
    shown = {**{k: 0 for k in expect.effects}, **counts}
    off = dict(sorted({**duplicated, **missing}.items()))
    witness = [e for e in history.of(Kind.EFFECT) if e.effect in duplicated]
    if missing:
        witness.extend(history.of(Kind.COMPLETE)[-1:])  # the completion that skipped them
    return Check(Property.EO, not off, tuple(sorted(witness, key=lambda e: e.seq)),
                 {"effect_counts": dict(sorted(shown.items())), "expected_once": list(expect.effects),
                  "off": off, "duplicated": dict(sorted(duplicated.items())), "skipped": dict(sorted(missing.items())),
                  "completed": completed}, history=history)


def lost_answer(history: History, gate: str | None) -> bool:
    """An answer was accepted, its gated effect never fired, and no run completed after the last crash."""
    if gate is None:
        return False
    answered = bool(history.of(Kind.ANSWER, Kind.RESUME))
    fired = any(e.effect == gate for e in history.of(Kind.EFFECT))
    return answered and not fired and not completed_after_last_crash(history)[0]


def check_co(history: History, expect: Expectation) -> Check:
    """CO: at most one gated effect per interrupt (none if it was never answered).

    A lost answer (answered, never fired) is no CO violation; ``check_lv`` reports it.
    """
    if expect.gate is None:
        raise ValueError("check_co needs Expectation.gate")
    fires = [e for e in history.of(Kind.EFFECT) if e.effect == expect.gate]
    answers = history.of(Kind.ANSWER, Kind.RESUME)
    allowed = len(answers[:1])  # one consumption if the interrupt was answered at all, else none
    witness = fires if len(fires) > allowed else []
    return Check(Property.CO, not witness, tuple(witness),
                 {"gate": expect.gate, "gate_fires": len(fires), "answers": len(answers),
                  "duplicate": len(fires) > 1, "lost_answer": lost_answer(history, expect.gate)}, history=history)


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


def liveness_reason(completed: bool, stopped_by: Sequence[str], outcome: Any, result: Any,
                    lost: bool) -> str | None:
    """Why a run is not live, in words (None when it is): the one sentence every LV verdict uses."""
    if lost:
        return "lost answer: the answer was accepted, its gated effect never fired and no run completed"
    if not completed:
        return "the run never completed" + (f" (stopped by {', '.join(stopped_by)})" if stopped_by else "")
    if result is not _UNSET and outcome != result:
        return f"completed with outcome {outcome!r}, not the workflow's own result {result!r}"
    return None


def check_lv(history: History, expect: Expectation | None = None) -> Check:
    """LV: the run completed after its last crash, with the workflow's own result as its outcome.

    A refusal to resume durable state, a lost answer and a completion carrying some other
    outcome (an error string) are all violations; the evidence's ``why`` names which.
    """
    expect = expect or Expectation()
    completed, stop = completed_after_last_crash(history)
    crash = _last(history, Kind.CRASH)
    tail = history.after(crash) if crash is not None else history
    done = tail.of(Kind.COMPLETE)
    outcome = done[-1].value if done else None
    lost = lost_answer(history, expect.gate)
    stopped_by = [e.kind.value + (f" {e.value}" if e.value is not None else "") for e in stop]
    why = liveness_reason(completed, stopped_by, outcome, expect.result, lost)
    witness = stop if not completed else (tuple(done[-1:]) if why else ())
    evidence: dict[str, Any] = {"completed": completed, "crashes": len(history.of(Kind.CRASH)),
                                "stopped_by": [e.kind.value for e in stop], "lost_answer": lost, "why": why}
    if expect.result is not _UNSET:
        evidence.update(outcome=outcome, expected_result=expect.result)
    return Check(Property.LV, why is None, witness, evidence, history=history)


class RepeatSide(str, Enum):
    """Which side of Proposition 1's fork/retry ambiguity a framework took on a second answer to
    an answered pause when the wire carries no discriminator: it served the new answer (the fork
    side); it refused loudly or ignored it (the retry side: the first outcome stands, the gated
    effect fired once); or neither -- the gated effect fired again without the new answer's outcome.
    Only the first satisfies FD; the verdict names the side, so a loud refusal is not read as the
    same failure as serving the wrong answer."""

    FORK = "fork: served the new answer"
    REFUSED = "retry: refused loudly"
    IGNORED = "retry: ignored, the first outcome stands"
    REFIRED = "neither: the gated effect fired again without the new answer's outcome"


def repeat_side(after_fork: History, holds: bool, gate: str | None) -> RepeatSide:
    """The side (``RepeatSide``) taken after the fork event, read from what followed it."""
    if holds:
        return RepeatSide.FORK
    fired = [e for e in after_fork.of(Kind.EFFECT) if gate is None or e.effect == gate]
    if fired:
        return RepeatSide.REFIRED
    return RepeatSide.REFUSED if after_fork.of(Kind.REFUSE, Kind.ERROR) else RepeatSide.IGNORED


def check_fd(history: History, expect: Expectation) -> Check:
    """FD: the fork (the last FORK, else the second RESUME) observed f(v) for its own v.

    The evidence names the side the framework took (``repeat_side``; with ``expect.gate`` the
    gated effect, else any effect, counts as fired again)."""
    if expect.outcome is _UNSET:
        raise ValueError("check_fd needs Expectation.outcome")
    forks = history.of(Kind.FORK)
    resumes = history.of(Kind.RESUME)
    fork = forks[-1] if forks else (resumes[1] if len(resumes) > 1 else None)
    after = history.after(fork) if fork is not None else History(())
    done = after.of(Kind.COMPLETE)
    before = history.events[: history.events.index(fork)] if fork is not None else history.events
    firsts = [e for e in before if e.kind is Kind.COMPLETE]
    first = firsts[0].value if firsts else None
    observed = done[-1].value if done else None
    holds = fork is not None and bool(done) and observed == expect.outcome
    witness = tuple(done[-1:]) if done else ((fork,) if fork is not None else ())
    side = repeat_side(after, holds, expect.gate) if fork is not None else None
    return Check(Property.FD, holds, () if holds else witness,
                 {"expected_f_v": expect.outcome, "observed": observed, "first_resume_outcome": first,
                  "served_first_outcome": bool(done) and observed == first and observed != expect.outcome,
                  "side": side.value if side is not None else None}, history=history)


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


class TamperOutcome(str, Enum):
    """The four outcomes of an edit of durable state, named so none looks like another."""

    REFUSED = "refused loudly"
    UNCHANGED = "accepted, behaviour unchanged"
    CHANGED = "accepted, behaviour changed"
    INVALID = "accepted although invalid under the framework's own schema"


def gate_due_after(history: History, edit: Event | None, gate: str) -> bool:
    """Is the gated effect due after ``edit`` (a TAMPER event)? Yes, unless it had fired before the
    edit and no answer follows the edit: then its one firing for the one answer is behind the run."""
    if edit is None:
        return True
    before = History(tuple(e for e in history.events if e.seq < edit.seq))
    fired = any(e.effect == gate for e in before.of(Kind.EFFECT))
    return not fired or bool(history.after(edit).of(Kind.ANSWER, Kind.RESUME))


def tamper_outcome(history: History, expect: Expectation, invalid: bool) -> Check:
    """What the framework did with an edit of its durable state (the TAMPER event), and CV.

    The behaviour after the edit is compared with the contract's for the answer that follows
    it: the gated effect (``expect.gate``) once, no other effect again, a completion with the
    workflow's own ``expect.result``. An edit made after the gated effect fired for an answer
    given before it, with no answer after it (an operator's hand repair after a crash inside
    the answered step), is followed by no answer: nothing is due after it, the gated effect
    included (``gate_due_after``). The outcome is REFUSED (a loud refusal after the edit),
    else INVALID when ``invalid`` (the edit breaks the framework's declared state model),
    else CHANGED (naming which effect or state differs) or UNCHANGED.

    ``holds`` is CV's for an invalid edit (``check_cv``: refused loudly, nothing invalid
    durable, no effect before the refusal); for a type-valid edit, which CV says nothing
    about, it records whether the forgery was detected (refused), for the forgery row.
    """
    cv = check_cv(history, expect)
    tamper = history.of(Kind.TAMPER)
    tail = history.after(tamper[0]) if tamper else history
    refused = bool(tail.of(Kind.REFUSE))
    after = tail.effect_counts()
    want = {expect.gate: 1} if expect.gate and gate_due_after(history, tamper[0] if tamper else None,
                                                              expect.gate) else {}
    changed = [f"{name} fired {after.get(name, 0)} time(s) after the edit, not {want.get(name, 0)}"
               for name in sorted(set(after) | set(want)) if after.get(name, 0) != want.get(name, 0)]
    done = tail.of(Kind.COMPLETE)
    if not done:
        changed.append("the run did not complete")
    elif expect.result is not _UNSET and done[-1].value != expect.result:
        changed.append(f"completed with {done[-1].value!r}, not {expect.result!r}")
    if refused:
        outcome = TamperOutcome.REFUSED
    elif invalid:
        outcome = TamperOutcome.INVALID
    else:
        outcome = TamperOutcome.CHANGED if changed else TamperOutcome.UNCHANGED
    holds = cv.holds if invalid else refused
    return Check(Property.CV, holds, cv.witness if not holds else (),
                 {**cv.evidence, "outcome": outcome.value, "invalid_edit": invalid, "effects_after_edit": after,
                  "changed": [] if refused else changed}, history=history)


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


def check_vo(history: History, expect: Expectation | None = None) -> Check:
    """VO: no ordering anomaly (``probes.core.visibility``): no effect seen before the durable record
    that caused it, no write by a superseded owner, no read from a superseded branch. The witness is
    every event an anomaly names; the evidence names each anomaly with its events' sequence numbers."""
    found = anomalies(history)
    seqs = sorted({e.seq for a in found for e in a.events})
    witness = tuple(e for e in history.events if e.seq in seqs)
    return Check(Property.VO, not found, witness, {"anomalies": [a.to_json() for a in found]}, history=history)


CHECKS = {Property.EO: check_eo, Property.CO: check_co, Property.PC: check_pc, Property.LV: check_lv,
          Property.FD: check_fd, Property.CV: check_cv, Property.FI: check_fi, Property.VO: check_vo}


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
    return "violates" if lab.violates else {Label.PASS: "holds", Label.UNDECIDED: "undecided", Label.NA: "n/a"}[lab]


# --- observation checks kept for protocols that record no history yet ---------------------


def at_most_once(effect_counts: Mapping[str, int]) -> tuple[bool, dict[str, Any]]:
    """Every effect fired at most once: EO's safety half, and CO over the gate's count."""
    dup = {k: v for k, v in sorted(effect_counts.items()) if v > 1}
    return not dup, {"effect_counts": dict(sorted(effect_counts.items())), "duplicated": dup}


def effects_once(effect_counts: Mapping[str, int], expected: Sequence[str], completed: bool) -> tuple[bool, dict[str, Any]]:
    """EO over counts (``check_eo``'s rule): nothing fired twice, and on a completed run every
    expected effect fired exactly once. A run that did not complete fails LV, not EO."""
    counts = {**{k: 0 for k in expected}, **{k: int(v) for k, v in effect_counts.items()}}
    duplicated = {k: v for k, v in sorted(counts.items()) if v > 1}
    skipped = {k: 0 for k in expected if counts[k] == 0} if completed else {}
    off = dict(sorted({**duplicated, **skipped}.items()))
    return not off, {"effect_counts": dict(sorted(counts.items())), "expected_once": list(expected), "off": off,
                     "duplicated": duplicated, "skipped": skipped, "completed": completed}


def exactly_once(effect_counts: Mapping[str, int], expected: list[str]) -> tuple[bool, dict[str, Any]]:
    """The regression atlas's count predicate: ``effects_once`` of a run that completed (the
    atlas's reproductions run to their end; a campaign passes its run's completion)."""
    return effects_once(effect_counts, expected, completed=True)


def gate_once(fires: int) -> tuple[bool, dict[str, Any]]:
    """CO over a count (``check_co``'s rule): the gated effect fired at most once. A lost
    answer (0 fires) holds here; ``completes(..., lost_answer=True)`` reports it under LV."""
    holds, ev = at_most_once({"gate": fires})
    return holds, {**ev, "gate_fires": fires, "lost_answer_is_lv": fires == 0}


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


def completes(completed: bool, detail: str, outcome: Any = _UNSET, result: Any = _UNSET,
              lost: bool = False) -> tuple[bool, dict[str, Any]]:
    """LV over observations (``check_lv``'s rule): the durable state was resumed to completion,
    with the workflow's own ``result`` as its ``outcome`` (when the campaign knows it), and no
    answer was lost. ``why`` names the failure."""
    why = liveness_reason(completed, (), outcome, result, lost and not completed)
    evidence: dict[str, Any] = {"completed": completed, "detail": detail, "lost_answer": lost and not completed,
                                "why": why}
    if result is not _UNSET:
        evidence.update(outcome=outcome, expected_result=result)
    return why is None, evidence
