"""CrewAI's own protocols: the paper campaign's counter-flow cells, measured through the kit.

The paper's CrewAI campaign measured its restore cells on its own workload, the *counter flow*
(state ``{id, counter}``; ``s1`` adds 1, ``s2`` listening to it adds 10, so a run with each step
once ends at 11). The adapter builds that flow as a workflow variant (``probes.frameworks.crewai.adapter``,
``RC_CREWAI_WORKFLOW``: ``counter`` under ``@persist``, ``counter-checkpoint`` under
``CheckpointConfig(on_events=["*"])``); the human-feedback cells of the paper's campaign are the
kit's own protocols on the adapter's default flow. Each protocol here drives the variant through
the kit's operations (``probes.kit.protocols.Run``: every process fresh, the history recorded) and
is decided by the kit's judge on paths named after the variant (``counter:<path>``, a
``VariantJudge``), so its verdicts are labelled from the adapter's citations alone and can be
re-judged from the receipt like every kit verdict. The counter each run ended with, what it resumed
from and what exactly-once predicts are kept in the probe's observations (``counter``, one entry per
verdict path), which the paper's values read (``probes.paper.crewai``):

* ``persist_restore`` (``counter:crash:raise@s2.begin/persist-id``, ``counter:crash:kill@s2.begin/persist-id``):
  under ``@persist``, ``s2`` raises once, or its process is SIGKILLed, inside ``s2`` before its effect
  (where the paper's campaign raised and killed); a fresh process restores the flow by its id
  (``kickoff(inputs={"id": ...})``). EO, PC and LV.
* ``completed_restore`` (``counter:restore-completed/persist-id``): a flow that completed is restored
  by its id. EO, and PC with the durable prefix taken at the restore (everything had run and was saved).
* ``checkpoint_restore`` (``counter:crash:raise@s2.begin/latest-checkpoint``): the flow checkpointed on
  every event, no ``@persist``; ``s2`` raises once; a fresh process restores the most advanced
  checkpoint as ``kickoff(from_checkpoint=...)`` does. EO, PC and LV, with the checkpoint's own record
  (its completed methods and counter) and what the restored flow began from.

What exactly-once predicts for a restore is computed, not assumed: the counter the restore resumed
from (the state ``@persist`` saved last, or the checkpoint's) plus the increments of the steps outside
the durable prefix of the history (each runs once more, a durable one never again).
"""

from __future__ import annotations

from typing import Any

from probes.core.checker import Property, Verdict
from probes.core.errors import HarnessError
from probes.core.history import History, Kind
from probes.frameworks.crewai.adapter import (
    COUNTER,
    COUNTER_CHECKPOINT,
    COUNTER_RESULT,
    INCREMENTS,
    WORKFLOW_ENV,
    CrewAIAdapter,
)
from probes.kit.adapter import Capability
from probes.kit.judge import durable_prefix
from probes.kit.protocols import Probe, Run, _isolated, _needs, _prefix, ended, on_variant
from probes.kit.suite import Protocol

PREFIX = "counter:"  # what the counter flow's verdict paths begin with
CRASH_AT = "s2.begin"  # inside s2, before its effect: where the paper's campaign raised and killed
PERSIST_ID, LATEST_CHECKPOINT = CrewAIAdapter.recovery_modes
COMPLETED_PATH = f"restore-completed/{PERSIST_ID}"
HOWS = {"raise": "an exception raised once", "kill": "a SIGKILL"}
RESTORES = {PERSIST_ID: "@persist's kickoff(inputs={'id': ...})",
            LATEST_CHECKPOINT: "kickoff(from_checkpoint=...) of the most advanced checkpoint"}


def crash_path(how: str, mode: str) -> str:
    """The path of a crash inside ``s2`` recovered by ``mode`` (without the variant's prefix)."""
    return f"crash:{how}@{CRASH_AT}/{mode}"


def predicts(h: History, resumed_from: int | None, at: Kind = Kind.CRASH) -> int | None:
    """The counter exactly-once predicts after a restore that resumed from counter ``resumed_from``:
    that counter plus the increments of the steps outside the durable prefix of ``h`` at its first
    ``at`` event (the crash, or the restore of a flow that had completed). None when the restore
    resumed from no counter."""
    if resumed_from is None:
        return None
    cut = next(iter(h.of(at)), None)
    durable = durable_prefix(h, cut) if cut is not None else []
    return resumed_from + sum(n for step, n in INCREMENTS if step not in durable)


def _counter_workflow(p: Probe) -> None:
    """Say which workflow the probe's histories are of, for trace validation (``probes.tla.trace``): the
    counter flow's steps, and no gated step (it never pauses), not the kit's ``s1`` -> gated ``s2``."""
    p.observations["workflow"] = {"steps": [step for step, _ in INCREMENTS], "gate": None}


def _start(run: Run, variant: str, **fault: Any) -> dict[str, Any]:
    """Start the counter flow (it never pauses, so not ``Run.start``, which asks a clean start to)."""
    run.note(Kind.START, detail={"workflow": variant})
    return run.op("start", "start", **fault)


def _observe(p: Probe, path: str, variant: str, first: dict[str, Any], status: dict[str, Any], h: History,
             predicted: int | None) -> dict[str, Any]:
    """The counter run's record in the probe's observations (``counter``, by verdict path)."""
    record = {"workflow": variant, "first": ended(first), "restore": ended(status),
              "resumed_from": status.get("resumed_from"), "before_kickoff": status.get("before_kickoff"),
              "first_counter": (first.get("state") or {}).get("counter"),
              "counter": (status.get("state") or {}).get("counter"), "exactly_once_predicts": predicted,
              "effects": dict(sorted(h.effect_counts().items()))}
    p.observations.setdefault("counter", {})[PREFIX + path] = record
    return record


def _crash_restore(p: Probe, variant: str, how: str, mode: str) -> list[Verdict]:
    """The counter flow ``variant`` crashed inside ``s2`` (``how``), restored by ``mode`` in a fresh process."""
    path = crash_path(how, mode)
    _counter_workflow(p)
    sub, run = _isolated(on_variant(p, WORKFLOW_ENV, variant, PREFIX), f"{variant}-{how}")
    first = _start(run, variant, **({"park_at": CRASH_AT} if how == "kill" else {"fail_at": CRASH_AT}))
    if not sub.read().of(Kind.CRASH):
        raise HarnessError(f"the counter flow's crash point {CRASH_AT} was not reached ({how}): {ended(first)}")
    status = run.recover("restore", mode, None)
    h = sub.read()
    resumed = status.get("resumed_from") or {}
    seen = _observe(p, path, variant, first, status, h, predicts(h, resumed.get("counter")))
    what = (f"{HOWS[how]} inside s2 before its effect, restored by {RESTORES[mode]}"
            + (f" (the checkpoint records {resumed.get('completed_methods') or 'no method'} completed at counter "
               f"{resumed.get('counter')}; the restored flow began at counter "
               f"{(seen['before_kickoff'] or {}).get('counter')})" if mode == LATEST_CHECKPOINT else "")
            + f": counter {seen['counter']} where exactly-once predicts {seen['exactly_once_predicts']}")
    return [sub.judge.effects_once(path, h, what), _prefix(sub, run, path, h),
            sub.judge.live(path, h, what, COUNTER_RESULT)]


# --- the protocols -------------------------------------------------------------------------

def persist_restore(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Under ``@persist``: ``s2`` raised once, and (another run) SIGKILLed, inside ``s2`` before its
    effect; each restored by its flow id in a fresh process."""
    paths = [crash_path(how, PERSIST_ID) for how in HOWS]
    if why := _needs(p, Capability.RECOVER):
        return [p.judge.not_applicable(prop, PREFIX + path, why) for path in paths
                for prop in (Property.EO, Property.PC, Property.LV)]
    return [v for how in HOWS for v in _crash_restore(p, COUNTER, how, PERSIST_ID)]


def completed_restore(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Under ``@persist``: a flow that completed, restored by its flow id in a fresh process. Nothing it
    ran may run again: EO over both processes, PC with the durable prefix taken at the restore."""
    if why := _needs(p, Capability.RECOVER):
        return [p.judge.not_applicable(prop, PREFIX + COMPLETED_PATH, why) for prop in (Property.EO, Property.PC)]
    _counter_workflow(p)
    q = on_variant(p, WORKFLOW_ENV, COUNTER, PREFIX)
    run = q.run("run")
    first = _start(run, COUNTER)
    if first.get("status") != "completed":
        raise HarnessError(f"a clean run of the counter flow did not complete: {ended(first)}")
    status = run.recover("restore", PERSIST_ID, None)
    h = q.read()
    resumed = (status.get("resumed_from") or {}).get("counter")
    seen = _observe(p, COMPLETED_PATH, COUNTER, first, status, h, predicts(h, resumed, Kind.RECOVER))
    what = (f"a completed flow (counter {seen['first_counter']}) restored by {RESTORES[PERSIST_ID]}: counter "
            f"{resumed} -> {seen['counter']} where exactly-once predicts {seen['exactly_once_predicts']}")
    return [q.judge.effects_once(COMPLETED_PATH, h, what), q.judge.prefix(COMPLETED_PATH, h, at="recover")]


def checkpoint_restore(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Under ``CheckpointConfig(on_events=["*"])``: ``s2`` raised once inside ``s2`` before its effect; the
    most advanced checkpoint restored in a fresh process."""
    path = crash_path("raise", LATEST_CHECKPOINT)
    if why := _needs(p, Capability.RECOVER):
        return [p.judge.not_applicable(prop, PREFIX + path, why) for prop in (Property.EO, Property.PC, Property.LV)]
    return _crash_restore(p, COUNTER_CHECKPOINT, "raise", LATEST_CHECKPOINT)


PROTOCOLS: dict[str, Protocol] = {"persist_restore": persist_restore, "completed_restore": completed_restore,
                                  "checkpoint_restore": checkpoint_restore}
