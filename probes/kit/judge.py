"""The kit's only door to the checker layer: histories in, verdicts out.

Every protocol hands its recorded ``History`` here; the functions below extract what a
property speaks about and call the checks of ``probes.core.checker``, which decide
whether the property holds. The label (✓ ✗ D U) is then set by ``Subject.verdict`` from
the adapter's citation for that property and path -- the adapter never sets one.

Witnesses are the events that matter for the property in their stable form (no pids,
no handles), so verdict files stay byte-identical across runs.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any, Mapping

from probes.core import checker
from probes.core.checker import DocRef, Property, Subject, Verdict
from probes.core.history import Event, History, Kind

_WITNESS_KINDS = (Kind.START, Kind.ANSWER, Kind.RESUME, Kind.CRASH, Kind.RECOVER, Kind.TAMPER, Kind.STEP_BEGIN,
                  Kind.EFFECT, Kind.PAUSE, Kind.CONSUME, Kind.REFUSE, Kind.ERROR, Kind.COMPLETE)


def witness(history: History, kinds: tuple[Kind, ...] = _WITNESS_KINDS) -> list[dict[str, Any]]:
    return [e.to_json() for e in history.of(*kinds)]


def cite(citations: Mapping[str, Mapping[str, str]], prop: Property, path: str) -> DocRef | None:
    """The adapter's citation for ``prop`` on ``path``: the longest matching pattern wins."""
    best: tuple[int, DocRef] | None = None
    for key, ref in citations.items():
        name, _, pattern = key.partition(" ")
        if name == prop.value and fnmatchcase(path, pattern or "*"):
            if best is None or len(pattern) > best[0]:
                best = (len(pattern), DocRef(ref["page"], ref["quote"], ref["stance"]))
    return best[1] if best else None


class Judge:
    """Verdicts for one framework and backend, labelled from the adapter's citations."""

    def __init__(self, framework: str, backend: str, citations: Mapping[str, Mapping[str, str]]) -> None:
        self.subject = Subject(framework, backend)
        self.citations = citations

    def verdict(self, prop: Property, path: str, holds: bool, evidence: Mapping[str, Any], summary: str) -> Verdict:
        return self.subject.verdict(prop, path, holds, evidence, summary, cite(self.citations, prop, path))

    def not_applicable(self, prop: Property, path: str, why: str) -> Verdict:
        return self.subject.not_applicable(prop, path, why)

    # --- properties over a history ----------------------------------------------------
    def effects_once(self, prop: Property, path: str, h: History, completed: bool, what: str,
                     expected: tuple[str, ...] = ("e1", "e2")) -> Verdict:
        """EO: every effect at most once; exactly once (the ``expected`` ones) when the run completed."""
        counts = h.effect_counts()
        if completed:
            holds, ev = checker.exactly_once(counts, list(expected))
        else:
            holds, ev = checker.at_most_once(counts)
        ev = {**ev, "completed": completed, "witness": witness(h, (Kind.CRASH, Kind.RECOVER, Kind.EFFECT))}
        return self.verdict(prop, path, holds, ev, f"{what}: effects {counts}, completed {completed}")

    def gated_once(self, path: str, h: History, what: str) -> Verdict:
        """CO: the gated effect e2 fired at most once whatever was delivered to the pause."""
        counts = {"e2": h.effect_counts().get("e2", 0)}
        holds, ev = checker.at_most_once(counts)
        consumed = [e.value for e in h.of(Kind.CONSUME)]
        ev = {**ev, "consumed": consumed, "refusals": [e.value for e in h.of(Kind.REFUSE)]}
        return self.verdict(Property.CO, path, holds, ev,
                            f"{what}: the gated effect fired {counts['e2']} time(s); the answer was consumed "
                            f"{len(consumed)} time(s)")

    def prefix(self, path: str, h: History) -> Verdict:
        """PC: no step whose completion was durable before the crash begins again after recovery."""
        crash = next(iter(h.of(Kind.CRASH)), None)
        recover = next(iter(h.of(Kind.RECOVER)), None)
        durable = durable_prefix(h, crash) if crash else []
        after = h.after(recover) if recover else History()
        runs = {s: sum(1 for e in after.of(Kind.STEP_BEGIN) if e.step == s) for s in ("s1", "s2")}
        holds, ev = checker.prefix_not_reentered(runs, durable)
        return self.verdict(Property.PC, path, holds, ev,
                            f"durable prefix {durable or 'empty'} at the crash; after recovery steps began {runs}")

    def live(self, path: str, h: History, what: str) -> Verdict:
        completes = bool(h.of(Kind.COMPLETE))
        last = h.events[-1].kind.value if h.events else "nothing"
        holds, ev = checker.completes(completes, f"last event: {last}")
        return self.verdict(Property.LV, path, holds, ev, f"{what}: {'completed' if completes else 'did not complete'}")

    def fork(self, observed: Any, expected: Any, first: Any) -> Verdict:
        holds, ev = checker.fork_outcome(observed, expected, first)
        return self.verdict(Property.FD, "fork:same-pause", holds, ev,
                            f"second answer at the answered pause gave {observed!r}; its own outcome is {expected!r}")

    def refused(self, path: str, h: History, tamper: Event) -> Verdict:
        """CV: a structurally broken durable state is refused loudly before any effect."""
        after = h.after(tamper)
        refusal = next(iter(after.of(Kind.REFUSE)), None)
        effects = after.effect_counts()
        loud = refusal is not None and not any(e.seq < refusal.seq for e in after.of(Kind.EFFECT))
        holds, ev = checker.invalid_state_refused(loud, not loud and bool(after.of(Kind.COMPLETE, Kind.PAUSE)),
                                                  refusal.value if refusal else None)
        ev = {**ev, "effects_after_edit": effects, "witness": witness(after)}
        summary = (f"refused loudly ({refusal.value}) before any effect" if loud else
                   f"accepted; effects after the edit {effects}")
        return self.verdict(Property.CV, path, holds, ev, summary)


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
