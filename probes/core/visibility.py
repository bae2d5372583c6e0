"""Effect visibility ordering: anomalies read off one recorded history, in the manner of Elle.

Elle infers from what clients observed which orders a database must have followed, and names
each cycle it finds with the operations involved. Here the observations are a probe's history
(``probes.core.history``): what each process of the run did, in commit order, with the
harness's crashes, recoveries, takeovers and forks between them. An effect the world has seen
is a fact; what a later process does shows what the durable state held when that effect
became visible. Four anomalies follow, each named with the events that make it:

``effect-before-cause``
    An effect fired on a consumed answer with no durable write recorded between the consume and
    the effect; its process died before the step ended, and a later process asked for the same
    answer again: the answer that caused the effect was not durable when the effect became
    visible.
``effect-ahead-of-record``
    An effect of one step was seen with no durable write recorded since an earlier step first ended;
    its process died, and a later process began that earlier step again: the earlier step's
    record was not durable when the later step's effect became visible. (Where a write *was*
    recorded and the step still ran again, the recovery ignored a durable record: that is
    prefix consistency's question, PC, not an ordering one.)
``superseded-write``
    A process frozen while answering (the stall protocol's SIGSTOP) was taken over by another
    process that ran the run on; on waking, the superseded process still fired an effect or
    wrote durable state. The write-ownership clauses proposed for LangGraph's checkpoint
    conformance suite (#8796) reject both.
``stale-read``
    A fork (or a resume declared a fork) gave the pause a new answer; the next process that
    consumed the pause read an earlier answer instead: a reader saw state from the superseded
    branch.
``write-after-delete``
    The run was deleted through the framework's own API while a process that held it was frozen
    (the delete protocol); that process then went on, and a later recovery found the run again
    (paused, or run on): the late writes of a process that no longer owned anything brought a
    deleted run back. (A run found again although nothing went on after the delete is the
    delete's own failure, not an ordering one; a recovery that begins the first step and asks the
    question again found nothing and started the run over: no anomaly either.)

A window ends at a fork, a tamper, a code change, a fresh start or a recovery that hands the
run its input again (``resend-input``): there the harness itself changed what the durable state
says or asked for the run anew, and what follows is no evidence about the order before.
Everything here is a pure function of the history, so a verdict over it can be recomputed
from a stored receipt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from probes.core.history import HARNESS, Event, History, Kind

EFFECT_BEFORE_CAUSE = "effect-before-cause"
EFFECT_AHEAD_OF_RECORD = "effect-ahead-of-record"
SUPERSEDED_WRITE = "superseded-write"
STALE_READ = "stale-read"
WRITE_AFTER_DELETE = "write-after-delete"
RESENDS_INPUT = "resend-input"  # the recovery mode that invokes the run with its input again (a restart asked for)


@dataclass(frozen=True)
class Anomaly:
    """One ordering anomaly: its name, the events that make it (in history order), and why."""

    name: str
    events: tuple[Event, ...]
    explanation: str

    def to_json(self) -> dict[str, Any]:
        return {"anomaly": self.name, "events": [e.seq for e in self.events], "explanation": self.explanation}


def _ends_window(e: Event) -> bool:
    """The harness changed the durable state's meaning here (a branch, an edit, other code, a new run)."""
    return (e.kind in (Kind.FORK, Kind.TAMPER)
            or (e.kind is Kind.START and e.seq > 1 and not e.detail.get("after"))
            or (e.kind in (Kind.ANSWER, Kind.RESUME, Kind.RECOVER) and "code" in e.detail)
            or (e.kind is Kind.RECOVER and str(e.detail.get("mode", "")).startswith(RESENDS_INPUT)))


def _window(h: History, start: Event) -> list[Event]:
    """The events after ``start`` up to (not including) the next window end."""
    out: list[Event] = []
    for e in h.events[h.events.index(start) + 1:]:
        if _ends_window(e):
            break
        out.append(e)
    return out


def _death(h: History, effect: Event) -> Event | None:
    """The crash that ended ``effect``'s process before it finished the effect's step, if one did."""
    for e in _window(h, effect):
        if e.incarnation == effect.incarnation and e.kind is Kind.STEP_END and e.step == effect.step:
            return None
        if e.kind is Kind.CRASH and e.detail.get("victim", effect.incarnation) == effect.incarnation:
            return e
    return None


def _written_between(h: History, first: Event, last: Event) -> bool:
    """Was a durable write recorded after ``first`` and before ``last``?"""
    return any(e.kind is Kind.PERSIST for e in h.events[h.events.index(first) + 1: h.events.index(last)])


def _step_order(h: History) -> dict[str, int]:
    """Each step's place in the workflow: the order in which the run first began them."""
    order: dict[str, int] = {}
    for e in h.of(Kind.STEP_BEGIN):
        if e.step is not None:
            order.setdefault(e.step, len(order))
    return order


def effects_before_cause(h: History) -> list[Anomaly]:
    out: list[Anomaly] = []
    for effect in h.of(Kind.EFFECT):
        mine = [e for e in h.events[: h.events.index(effect)] if e.incarnation == effect.incarnation]
        cause = next((e for e in reversed(mine) if e.kind is Kind.CONSUME and e.step == effect.step), None)
        crash = _death(h, effect) if cause is not None and not _written_between(h, cause, effect) else None
        if crash is None:
            continue
        asked = next((e for e in _window(h, crash) if e.kind is Kind.PAUSE and e.step == effect.step
                      and e.incarnation != effect.incarnation), None)
        if asked is not None:
            out.append(Anomaly(EFFECT_BEFORE_CAUSE, (cause, effect, crash, asked),
                               f"{effect.effect} fired on the answer {cause.value!r} ({effect.incarnation}); after "
                               f"the crash {asked.incarnation} asked for the answer at {asked.step} again"))
    return out


def effects_ahead_of_record(h: History) -> list[Anomaly]:
    order = _step_order(h)
    out: list[Anomaly] = []
    for effect in h.of(Kind.EFFECT):
        crash = _death(h, effect)
        if crash is None or effect.step not in order:
            continue
        earlier = next((e for e in _window(h, crash) if e.kind is Kind.STEP_BEGIN and e.incarnation != effect.incarnation
                        and order.get(e.step, order[effect.step]) < order[effect.step]), None)
        ended = earlier and [e for e in h.events[: h.events.index(effect)] if e.kind is Kind.STEP_END
                             and e.step == earlier.step]
        if ended and not _written_between(h, ended[0], effect):
            out.append(Anomaly(EFFECT_AHEAD_OF_RECORD, (effect, crash, earlier),
                               f"{effect.effect} of {effect.step} was seen ({effect.incarnation}); after the crash "
                               f"{earlier.incarnation} began the earlier step {earlier.step} again"))
    return out


def superseded_writes(h: History) -> list[Anomaly]:
    out: list[Anomaly] = []
    for takeover in (e for e in h.of(Kind.RECOVER) if e.detail.get("stopped")):
        stopped = takeover.detail["stopped"]
        after = _window(h, takeover)
        took = next((e for e in after if e.incarnation not in (stopped, takeover.incarnation)
                     and e.kind in (Kind.CONSUME, Kind.EFFECT, Kind.PERSIST, Kind.COMPLETE)), None)
        if took is None:  # nobody ran the run on: the stopped process still owns it
            continue
        for late in after[after.index(took) + 1:]:
            if late.incarnation == stopped and late.kind in (Kind.EFFECT, Kind.PERSIST):
                what = f"fired {late.effect}" if late.kind is Kind.EFFECT else "wrote durable state"
                out.append(Anomaly(SUPERSEDED_WRITE, (takeover, took, late),
                                   f"{stopped} was taken over by {took.incarnation} and, on waking, {what}"))
    return out


def stale_reads(h: History) -> list[Anomaly]:
    out: list[Anomaly] = []
    branch_at = [i for i, e in enumerate(h.events) if e.kind is Kind.FORK
                 or (e.kind is Kind.RESUME and e.detail.get("mode") == "fork")]
    for n, at in enumerate(branch_at):
        branch = h.events[at]
        if branch.value is None:
            continue
        # answers may be unhashable (dicts), so the earlier reads stay a list
        before = [e.value for e in h.events[:at] if e.kind is Kind.CONSUME]
        end = branch_at[n + 1] if n + 1 < len(branch_at) else len(h.events)
        later = h.events[at + 1:end]
        stop = next((i for i, e in enumerate(later) if e.kind is Kind.TAMPER), len(later))
        read = next((e for e in later[:stop] if e.kind is Kind.CONSUME), None)
        if read is not None and read.value != branch.value and read.value in before:
            out.append(Anomaly(STALE_READ, (branch, read),
                               f"the fork answered {branch.value!r}; {read.incarnation} read {read.value!r}, "
                               f"the superseded branch's answer"))
    return out


def found_after_delete(h: History, recovering: Sequence[Event], holder: str | None) -> Event | None:
    """What a recovery after a delete found of the run: its first decision (a pause asked, a step run
    on, a completion), or ``None`` when it found nothing -- it did nothing, or started the run over:
    began the workflow's first step and then paused as a new run does. A recovery that began the
    first step and then completed without asking found the late writes' answer: that completion."""
    first_step = next(iter(_step_order(h)), None)
    mine = [e for e in recovering if e.incarnation not in (holder, HARNESS)]
    found = next((e for e in mine if e.kind in (Kind.PAUSE, Kind.STEP_BEGIN, Kind.EFFECT, Kind.COMPLETE)), None)
    if found is None or not (found.kind is Kind.STEP_BEGIN and found.step == first_step):
        return found
    if any(e.kind is Kind.PAUSE for e in mine):
        return None  # started over: a new run, asking its question
    return next((e for e in mine if e.kind is Kind.COMPLETE), None)


def writes_after_delete(h: History) -> list[Anomaly]:
    out: list[Anomaly] = []
    for at, delete in ((i, e) for i, e in enumerate(h.events) if e.kind is Kind.DELETE):
        holder = delete.detail.get("while")  # the process that held the run, frozen when it was deleted
        later = h.events[at + 1:]
        late = next((e for e in later if e.incarnation == holder and e.kind in (Kind.STEP_BEGIN, Kind.EFFECT,
                     Kind.PERSIST, Kind.STEP_END, Kind.COMPLETE)), None)
        look = next((i for i, e in enumerate(later) if e.kind is Kind.RECOVER and e.incarnation != holder), None)
        if late is None or look is None:
            continue
        found = found_after_delete(h, later[look + 1:], holder)
        if found is not None:
            what = "asked again" if found.kind is Kind.PAUSE else f"ran it on ({found.kind.value})"
            out.append(Anomaly(WRITE_AFTER_DELETE, (delete, late, found),
                               f"the run was deleted while {holder} held it; {holder} went on, and "
                               f"{found.incarnation} then found the run again and {what}"))
    return out


def anomalies(h: History) -> list[Anomaly]:
    """Every ordering anomaly in ``h``, by kind then history order."""
    return [*effects_before_cause(h), *effects_ahead_of_record(h), *superseded_writes(h), *stale_reads(h),
            *writes_after_delete(h)]
