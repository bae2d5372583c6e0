"""REMIT's decision core: pure functions, no I/O, no LangGraph import.

Every decision REMIT takes lives here, and every function here is called by the saver
or the ledger (nothing is kept only to be verified). They are checked apart from the
code that talks to a database (``probes/studies/remit/verify.py``: the contract properties on
every input of their finite domains, z3 for the gate), and in place through the real
saver by the model-based stateful test (``probes/studies/remit/stateful.py``), and mutated by
cosmic-ray (``mutation/remit_ref.toml``).

The three decisions:

* ``admit_effect``       whether a side effect may fire, given the ledger's record (ledger);
* ``resume_intent``      is a resume a FORK (new branch, new value) or a RETRY (saver, read path);
* ``gate_decision``      who consumes an interrupt when several resumes race (saver, gate).

plus three pure transformations: ``fork_view`` (drop recorded answers for a FORK),
``claim_targets`` (which interrupt ids a resume consumes) and ``first_invalid`` (the
first schema violation among the values about to be written).

Where execution continues after a crash is LangGraph's decision (its durable
checkpoints and pending writes), not REMIT's: REMIT does not re-decide it.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Iterable

RESUME_CHANNEL = "__resume__"
INTERRUPT_CHANNEL = "__interrupt__"


class Intent(str, Enum):
    """The fork-intent discriminator (CONTRACT.md, FI)."""

    FORK = "fork"
    RETRY = "retry"


class Admission(str, Enum):
    """What the effect ledger lets a tool do with its side effect."""

    FIRE = "fire"          # never started: run it (after reserving the key)
    SKIP = "skip"          # recorded as done: return the recorded result, do not fire
    IN_DOUBT = "in_doubt"  # started, never recorded done: refuse loudly (EffectInDoubt)


class GateDecision(str, Enum):
    """Outcome of trying to consume an interrupt."""

    CONSUME = "consume"    # this resume owns the interrupt: run the nodes
    TAKEOVER = "takeover"  # the previous owner died (or its lease expired) before committing an answer: take it over
    CONFLICT = "conflict"  # someone alive owns it, or its answer is committed: ConsumeConflict before any node runs


def admit_effect(recorded: str | None) -> Admission:
    """Effect admission from the ledger record of (thread, task, effect id).

    ``None``: no record, fire. ``"done"``: fired and recorded, never again (EO).
    ``"pending"``: reserved but not recorded as done -- the process died between the
    reservation and the record, so the effect may or may not have happened: in doubt.
    """
    if recorded is None:
        return Admission.FIRE
    if recorded == "done":
        return Admission.SKIP
    if recorded == "pending":
        return Admission.IN_DOUBT
    raise ValueError(f"unknown ledger status {recorded!r}; expected None, 'pending' or 'done'")


def resume_intent(addressed: bool, flag: str | None, fork_intent: bool) -> Intent:
    """FORK or RETRY for one resume.

    An explicit flag (``remit_intent`` in the config) wins. Otherwise a resume
    addressed to an explicit checkpoint id is a FORK and a thread-only resume a RETRY.
    With ``fork_intent`` off every resume is a RETRY (stock behaviour).
    """
    if not fork_intent:
        return Intent.RETRY
    if flag is not None:
        try:
            return Intent(flag)
        except ValueError:
            raise ValueError(f"remit_intent must be 'fork' or 'retry', not {flag!r}") from None
    return Intent.FORK if addressed else Intent.RETRY


def fork_view(pending_writes: Iterable[tuple[str, str, Any]], intent: Intent) -> list[tuple[str, str, Any]]:
    """The pending writes a resume may see: a FORK does not see recorded answers.

    Dropping the recorded ``__resume__`` writes makes ``interrupt()`` take the fork's
    own value instead of the first answer (LangGraph #6663). A RETRY sees everything,
    exactly as stock.
    """
    writes = list(pending_writes)
    if intent is Intent.RETRY:
        return writes
    return [w for w in writes if w[1] != RESUME_CHANNEL]


def claim_targets(interrupt_ids: Iterable[str], answered_ids: Iterable[str] | None,
                  unanswered_ids: Iterable[str]) -> list[str]:
    """The interrupt ids a resume consumes (sorted, so claims are taken in one order).

    A resume map answers the ids it names. A bare ``Command(resume=v)`` (``answered_ids``
    None) answers the one interrupt still unanswered; with several unanswered LangGraph
    refuses it, so it consumes nothing and claims nothing. With none unanswered it is a
    late resume of a checkpoint someone already answered: it claims every interrupt, so
    that it loses to whoever answered. (Answered ids are likewise kept in a map's claims:
    a racer that reads the checkpoint after the winner recorded its answer must still
    lose.)
    """
    ids = set(interrupt_ids)
    if answered_ids is not None:
        ids &= set(answered_ids)
    else:
        unanswered = set(unanswered_ids)
        if len(unanswered) > 1:
            return []
        if unanswered:
            ids &= unanswered
    return sorted(ids)


def gate_decision(inserted: bool, owner_alive: bool | None, lease_expired: bool, answered: bool) -> GateDecision:
    """Who consumes an interrupt, after an atomic ``INSERT ... unique`` of the claim.

    ``inserted``: our insert won -- consume. Otherwise another resume holds the claim.
    ``answered``: the store already holds the answer to the claimed interrupt (its
    ``__resume__`` write is durable): the holder's consume is committed, whether or not its
    process still runs, so conflict -- taking it over would consume the interrupt a second
    time (CO) and serve a declared RETRY a new run of the gate (FI). A run whose answer is
    committed needs no takeover to finish: ``invoke(None)`` continues it with that answer.
    Otherwise (the holder never committed an answer): if its owner is a dead process on
    this host (``owner_alive is False``) or its lease expired, take it over (conditionally,
    so two takers still yield one winner); otherwise conflict. ``owner_alive is None``
    means "cannot tell" (another host): only the lease can free it.
    """
    if inserted:
        return GateDecision.CONSUME
    if answered:
        return GateDecision.CONFLICT
    if owner_alive is False or lease_expired:
        return GateDecision.TAKEOVER
    return GateDecision.CONFLICT


def first_invalid(values: dict[str, Any], check: Any) -> tuple[str, str] | None:
    """The first (channel, reason) whose value fails ``check(channel, value)``, in channel order.

    ``check`` returns ``None`` when valid or a reason string. Sorted order makes the
    reported channel deterministic.
    """
    for channel in sorted(values):
        reason = check(channel, values[channel])
        if reason is not None:
            return channel, reason
    return None
