"""The kit's only door to the checker layer: histories in, verdicts out.

Every protocol hands its recorded ``History`` here; the functions below extract what a
property speaks about and call the checks of ``probes.core.checker``, which decide
whether the property holds. The label (✓ ✗ D U) is then set by ``Subject.verdict`` from
the adapter's citation for that property and path -- the adapter never sets one.

Witnesses are the events that matter for the property in their stable form (no pids,
no handles), so verdict files stay byte-identical across runs.
"""

from __future__ import annotations

from typing import Any, Mapping

from probes.citations import entries, lookup
from probes.core import checker
from probes.core.checker import DocRef, Property, Subject, Verdict
from probes.core.history import Event, History, Kind

_WITNESS_KINDS = (Kind.START, Kind.ANSWER, Kind.RESUME, Kind.CRASH, Kind.RECOVER, Kind.TAMPER, Kind.STEP_BEGIN,
                  Kind.EFFECT, Kind.PAUSE, Kind.CONSUME, Kind.REFUSE, Kind.ERROR, Kind.COMPLETE)


def witness(history: History, kinds: tuple[Kind, ...] = _WITNESS_KINDS) -> list[dict[str, Any]]:
    return [e.to_json() for e in history.of(*kinds)]


def cite(citations: Mapping[str, DocRef], prop: Property, path: str) -> DocRef | None:
    """The adapter's citation for ``prop`` on ``path`` (``probes.citations.lookup``, the one rule)."""
    return lookup(entries(citations), prop, path)


class Judge:
    """Verdicts for one framework and backend, labelled from the adapter's citations alone."""

    def __init__(self, framework: str, backend: str, citations: Mapping[str, DocRef]) -> None:
        self.subject = Subject(framework, backend, citations=citations)
        self.citations = citations

    def verdict(self, prop: Property, path: str, holds: bool, evidence: Mapping[str, Any], summary: str) -> Verdict:
        return self.subject.verdict(prop, path, holds, evidence, summary, cite(self.citations, prop, path))

    def not_applicable(self, prop: Property, path: str, why: str) -> Verdict:
        return self.subject.not_applicable(prop, path, why)

    # --- properties over a history: the checker layer decides (probes.core.checker) ------
    def _label(self, check: checker.Check, path: str, summary: str, witness: bool = True, **extra: Any) -> Verdict:
        return check.verdict(self.subject, path, summary, cite(self.citations, check.property, path),
                             witness_in_evidence=witness, **extra)

    def effects_once(self, prop: Property, path: str, h: History, completed: bool, what: str,
                     expected: tuple[str, ...] = ("e1", "e2")) -> Verdict:
        """EO: every effect at most once; exactly once (the ``expected`` ones) when the run completed."""
        expect = checker.Expectation(effects=expected if completed else (), complete=completed)
        counts = h.effect_counts()
        return self._label(checker.check_eo(h, expect), path, f"{what}: effects {counts}, completed {completed}")

    def gated_once(self, path: str, h: History, what: str, witness: bool = True) -> Verdict:
        """CO: the gated effect e2 fired once whatever was delivered to the pause (no double, no loss)."""
        check = checker.check_co(h, checker.Expectation(gate="e2"))
        consumed = len(h.of(Kind.CONSUME))
        return self._label(check, path, f"{what}: the gated effect fired {check.evidence['gate_fires']} time(s); "
                                        f"the answer was consumed {consumed} time(s)", witness)

    def prefix(self, path: str, h: History) -> Verdict:
        """PC: no step whose completion was durable before the crash begins again after recovery."""
        crash = next(iter(h.of(Kind.CRASH)), None)
        durable = durable_prefix(h, crash) if crash else []
        check = checker.check_pc(h, checker.Expectation(prefix=tuple(durable)))
        return self._label(check, path, f"durable prefix {durable or 'empty'} at the crash; re-entered after "
                                        f"recovery: {check.evidence['reentered'] or 'nothing'}")

    def live(self, path: str, h: History, what: str) -> Verdict:
        check = checker.check_lv(h)
        return self._label(check, path, f"{what}: {'completed' if check.holds else 'did not complete'}")

    def fork(self, h: History, expected: Any) -> Verdict:
        check = checker.check_fd(h, checker.Expectation(outcome=expected))
        return self._label(check, "fork:same-pause", f"second answer at the answered pause gave "
                                                     f"{check.evidence['observed']!r}; its own outcome is {expected!r}")

    def refused(self, path: str, h: History) -> Verdict:
        """CV: a structurally broken durable state is refused loudly before any effect."""
        check = checker.check_cv(h)
        summary = (f"refused loudly ({check.evidence['error']}) before any effect" if check.holds else
                   f"accepted; effects after the edit {h.after(h.of(Kind.TAMPER)[0]).effect_counts()}")
        return self._label(check, path, summary)


def durable_prefix(h: History, crash: Event) -> list[str]:
    """Steps whose end was followed by a durable write before ``crash`` (the frontier F)."""
    ended: list[str] = []
    durable: list[str] = []
    for e in h.events:
        if e.seq >= crash.seq:
            break
        if e.kind is Kind.STEP_END and e.step not in ended:
            ended.append(e.step)
        elif e.kind is Kind.PERSIST:
            durable = list(ended)
    return durable
