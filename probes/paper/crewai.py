"""CrewAI's published values: what ``@persist`` and ``CheckpointConfig`` restores do to the paper's counter flow.

The paper's counter flow adds 1 in ``s1`` and 10 in ``s2``, so a run with each step once ends at
counter 11. It reports three restores (``data/published.json``):

* ``crewai.persist_counter``: ``s2`` raises once under ``@persist``; restoring the flow by its id
  ends at counter 12 where exactly-once predicts 11 (``s1`` ran again);
* ``crewai.completed_restore``: restoring a flow that had completed by its id runs it again (11 -> 22);
* ``crewai.checkpointconfig``: restoring a ``CheckpointConfig(on_events=["*"])`` checkpoint after ``s2``
  raised once: the counter and how many times ``s1`` ran.

Measured through the kit by CrewAI's own protocols on the adapter's counter-flow variants
(``probes.frameworks.crewai.protocols``): each keeps, per verdict path, the counter the restored run ended
with, the counter it resumed from, what exactly-once predicts and the effect counts
(``observations.counter``); its verdicts (decided from the recorded history by the kit's judge) give
the labels and the documentation the explanation names. A value that differs between repetitions
is listed, each repetition's value once.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from probes.core.checker import Verdict
from probes.core.receipt import Receipt
from probes.frameworks.crewai.protocols import COMPLETED_PATH, LATEST_CHECKPOINT, PERSIST_ID, PREFIX, crash_path

PERSIST_RAISE = PREFIX + crash_path("raise", PERSIST_ID)
PERSIST_KILL = PREFIX + crash_path("kill", PERSIST_ID)
COMPLETED = PREFIX + COMPLETED_PATH
CHECKPOINT = PREFIX + crash_path("raise", LATEST_CHECKPOINT)
FRAMEWORK = "crewai"


def _runs(receipts: list[Receipt], path: str) -> list[tuple[Receipt, Mapping[str, Any]]]:
    """(receipt, the counter run's record) for every receipt that measured ``path``."""
    return [(r, r.observations["counter"][path]) for r in receipts
            if isinstance(r.observations.get("counter"), Mapping) and path in r.observations["counter"]]


def _one_or_all(values: Iterable[Any]) -> Any:
    """The value every repetition measured, or each distinct value (sorted) where they differ."""
    distinct = sorted({repr(v): v for v in values}.values(), key=repr)
    return distinct[0] if len(distinct) == 1 else distinct


def _verdicts(receipts: list[Receipt], path: str) -> list[Verdict]:
    return [v for r in receipts for v in r.verdicts if v.path == path and v.framework == FRAMEWORK]


def _labels(verdicts: list[Verdict]) -> str:
    """``EO D, PC D (CR-6, documents the deviation)``: each property's labels and the documentation cited."""
    by: dict[str, set[str]] = {}
    for v in verdicts:
        by.setdefault(v.property.value, set()).add(v.label.value)
    docs = sorted({f"{v.doc.source}, {'documents the deviation' if v.doc.stance == 'deviation' else 'claims'}"
                   for v in verdicts if v.doc is not None})
    return ", ".join(f"{prop} {'/'.join(sorted(labels))}" for prop, labels in sorted(by.items())) + \
        (f" ({'; '.join(docs)})" if docs else "")


def _reentered(verdicts: list[Verdict]) -> str:
    """What PC found of the durable steps begun again after the restore (``re-ran s1 (1 time)``), from
    its evidence."""
    found = sorted({", ".join(f"{step} ({n} time{'s' if n > 1 else ''})" for step, n in
                              sorted(v.evidence["reentered"].items()))
                    for v in verdicts if v.property.value == "PC" and v.evidence.get("reentered")})
    return f"re-ran {' / '.join(found)}" if found else "re-ran no durable step"


def _varies(value: Mapping[str, Any], reps: int) -> str:
    """The note on repetitions: which keys differ, or that every repetition agreed."""
    varies = [key for key, got in value.items() if key != "reps" and isinstance(got, list)]
    return (f"The {' and '.join(varies)} differ across the {reps} repetitions: see the receipts" if varies
            else f"The same in each of {reps} repetition(s)")


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    return {"crewai.persist_counter": _persist(receipts), "crewai.completed_restore": _completed(receipts),
            "crewai.checkpointconfig": _checkpoint(receipts)}


def _persist(receipts: list[Receipt]) -> Any:
    from probes.headline import Measured

    runs = _runs(receipts, PERSIST_RAISE)
    if not runs:
        return f"no {PERSIST_RAISE} run in these receipts (run CrewAI's persist_restore protocol)"
    value = {"counter": _one_or_all(seen["counter"] for _, seen in runs),
             "expected": _one_or_all(seen["exactly_once_predicts"] for _, seen in runs), "reps": len(runs)}
    resumed = _one_or_all((seen.get("resumed_from") or {}).get("counter") for _, seen in runs)
    s1 = _one_or_all(seen["effects"].get("e1", 0) for _, seen in runs)
    why = (f"After s2 raised once, the restore by id resumed from the saved counter {resumed} and ended at "
           f"{value['counter']} where exactly-once predicts {value['expected']}: s1's effect fired {s1} time(s), "
           f"the restore {_reentered(_verdicts(receipts, PERSIST_RAISE))}; "
           f"{_labels(_verdicts(receipts, PERSIST_RAISE))}.")
    killed = _runs(receipts, PERSIST_KILL)
    if killed:
        why += (f" After a SIGKILL inside s2 the same restore ended at "
                f"{_one_or_all(seen['counter'] for _, seen in killed)} (exactly-once predicts "
                f"{_one_or_all(seen['exactly_once_predicts'] for _, seen in killed)}); "
                f"{_labels(_verdicts(receipts, PERSIST_KILL))}.")
    return Measured(value, why=f"{why} {_varies(value, len(runs))}.", compare_keys=("counter", "expected"),
                    receipts=tuple(sorted({r.probe for r, _ in runs + killed})))


def _completed(receipts: list[Receipt]) -> Any:
    from probes.headline import Measured

    runs = _runs(receipts, COMPLETED)
    if not runs:
        return f"no {COMPLETED} run in these receipts (run CrewAI's completed_restore protocol)"
    value = {"counter": _one_or_all(seen["counter"] for _, seen in runs),
             "counter_before": _one_or_all((seen.get("resumed_from") or {}).get("counter") for _, seen in runs)}
    verdicts = _verdicts(receipts, COMPLETED)
    effects = _one_or_all(seen["effects"] for _, seen in runs)
    why = (f"Restoring the completed flow by id resumed from its saved counter {value['counter_before']} and ran "
           f"it again to {value['counter']} (exactly-once predicts "
           f"{_one_or_all(seen['exactly_once_predicts'] for _, seen in runs)}): effects {effects} over both "
           f"processes, the restore {_reentered(verdicts)}; {_labels(verdicts)}. "
           f"{_varies(value, len(runs))}.")
    return Measured(value, why=why, compare_keys=("counter",), receipts=tuple(sorted({r.probe for r, _ in runs})))


def _checkpoint(receipts: list[Receipt]) -> Any:
    from probes.headline import Measured

    runs = _runs(receipts, CHECKPOINT)
    if not runs:
        return f"no {CHECKPOINT} run in these receipts (run CrewAI's checkpoint_restore protocol)"
    value = {"counter": _one_or_all(seen["counter"] for _, seen in runs),
             "s1_runs": _one_or_all(seen["effects"].get("e1", 0) for _, seen in runs), "reps": len(runs)}
    taken = _one_or_all({k: (seen.get("resumed_from") or {}).get(k) for k in ("completed_methods", "counter")}
                        for _, seen in runs)
    began = _one_or_all(seen.get("before_kickoff") for _, seen in runs)
    verdicts = _verdicts(receipts, CHECKPOINT)
    why = (f"The most advanced checkpoint recorded {taken}; the flow restored from it began from {began} and "
           f"ended at counter {value['counter']} (exactly-once predicts "
           f"{_one_or_all(seen['exactly_once_predicts'] for _, seen in runs)}) with s1 run {value['s1_runs']} "
           f"time(s): the restore {_reentered(verdicts)}; {_labels(verdicts)}. "
           f"{_varies(value, len(runs))}.")
    return Measured(value, why=why, compare_keys=("counter", "s1_runs"),
                    receipts=tuple(sorted({r.probe for r, _ in runs})))
