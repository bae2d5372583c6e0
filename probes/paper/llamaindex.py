"""LlamaIndex Workflows' published value: split steps conform; ``wait_for_event``'s prefix re-run is documented.

The paper (``llamaindex.row``) reads two cells. "split steps": the input request between steps,
the context snapshotted with ``ctx.to_dict()`` and restored in a fresh process -- each step once,
a fork served, two answers back to back "first wins", park-kill survived -- ✓. "wait_for_event
PC": a step paused inside itself by ``ctx.wait_for_event`` re-runs its code before the wait when
resumed, as its docstring says -- ``D``. Measured through the kit (``probes.frameworks.llamaindex``):

* split steps: the worst label on the kit's paths that ask those questions of the split-step
  workflow -- ``baseline:*`` (restored, answered once), ``park-kill``, ``fork:same-pause``,
  ``stray-after-completion`` and LlamaIndex's ``double-answer`` cells (with the answered step
  ending the run, and with a step after it as in the paper campaign's workflow). The race of two
  processes (``race:*``) is a row of its own, as it was in the paper campaign's chapter.
* wait_for_event PC: the worst PC label on the ``wait_for_event`` variant's paths (``wait:*``).

The explanation is built from the verdicts' own evidence: which cells do not conform, what two
answers back to back did (outcome, gated effect), what the stray did, and what the variant re-ran.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any, Iterable

from probes.core.checker import Property, Verdict, collapse
from probes.core.receipt import Receipt
from probes.frameworks.llamaindex.protocols import DOUBLE_PATH, STEP_AFTER, WAIT_PREFIX

HEADLINE = "llamaindex.row"
FRAMEWORK = "llamaindex"  # the framework's own row (not its "undetected forgery" row)
SPLIT_PATHS = ("baseline:*", "park-kill", "fork:same-pause", "stray-after-completion", DOUBLE_PATH, f"{DOUBLE_PATH}:*")
STRAY = "stray-after-completion"
WORKFLOWS = {DOUBLE_PATH: "the answered step ends the run",
             f"{DOUBLE_PATH}:{STEP_AFTER}": "a step after the answered one, as in the paper campaign's workflow"}


def _split(v: Verdict) -> bool:
    return v.framework == FRAMEWORK and any(fnmatchcase(v.path, glob) for glob in SPLIT_PATHS)


def _wait_pc(v: Verdict) -> bool:
    return v.framework == FRAMEWORK and v.path.startswith(WAIT_PREFIX) and v.property is Property.PC


def _worst(verdicts: Iterable[Verdict]) -> str:
    top = collapse(v.label for v in verdicts)
    return top.value if top is not None else "not measured"


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    from probes.headline import Measured

    split = [v for r in receipts for v in r.verdicts if _split(v)]
    wait = [v for r in receipts for v in r.verdicts if _wait_pc(v)]
    if not split and not wait:
        return {HEADLINE: "no split-step or wait_for_event probe in these receipts (run the paper's protocols)"}
    value = {"split steps": _worst(split), "wait_for_event PC": _worst(wait)}
    used = sorted({r.probe for r in receipts if any(_split(v) or _wait_pc(v) for v in r.verdicts)})
    return {HEADLINE: Measured(value, why=_why(split, wait), compare_keys=("split steps", "wait_for_event PC"),
                               receipts=tuple(used))}


def _why(split: list[Verdict], wait: list[Verdict]) -> str:
    """The explanation, from the measured verdicts."""
    parts = []
    off = sorted({(v.property.value, v.path, v.label.value) for v in split if v.label.value not in ("✓", "n/a")})
    if off:
        parts.append("split-step cells that do not conform: " + ", ".join(f"{p} {path} ({lab})" for p, path, lab in off)
                     + ".")
    for path, workflow in WORKFLOWS.items():
        co = [v for v in split if v.path == path and v.property is Property.CO]
        lv = [v for v in split if v.path == path and v.property is Property.LV]
        if not co:
            continue
        fires = sorted({v.evidence.get("gate_fires") for v in co if v.evidence.get("gate_fires") is not None})
        twice = [v for v in co if v.label.value not in ("✓", "n/a")]
        known = [v for v in lv if "outcome" in v.evidence]  # LV decided with the first answer's result
        outcomes = sorted({repr(v.evidence["outcome"]) for v in known})
        won = ("the outcome not recorded" if not known else "the first answer wins"
               if all(v.evidence["outcome"] == v.evidence.get("expected_result") for v in known)
               else "the first answer does not win")
        parts.append(f"Two answers sent back to back into one restored run ({workflow}): the run completed with "
                     f"{', '.join(outcomes) or 'an outcome'} ({won}), and the gated effect fired "
                     f"{'/'.join(map(str, fires))} time(s) (CO {_worst(co)} in {len(co)} probe(s)"
                     + (f", more than once in {len(twice)}" if twice else "") + ").")
    if any(v.path.startswith(DOUBLE_PATH) and v.property is Property.CO and v.label.value != "✓" for v in split):
        parts.append("The paper's 'first wins' looks at the outcome; the contract's CO counts the gated effect.")
    stray = [v for v in split if v.path == STRAY and v.property is Property.EO and v.label.value != "✓"]
    if stray:
        counts = sorted({str(v.evidence.get("effect_counts")) for v in stray})
        parts.append(f"A stray answer after completion, sent from a fresh process to the run's newest snapshot (the "
                     f"ended context), ran the workflow again: effects {', '.join(counts)} (EO {_worst(stray)}).")
    bad = [v for v in wait if v.label.value not in ("✓", "n/a")]
    if bad:
        docs = sorted({f"{v.doc.source} ({'documents the deviation' if v.doc.stance == 'deviation' else 'claims'})"
                       for v in bad if v.doc is not None})
        reentered = sorted({f"{v.path}: {v.evidence.get('reentered')}" for v in bad})
        parts.append(f"wait_for_event: resuming the step re-ran its work before the wait ({'; '.join(reentered)}); "
                     f"PC {_worst(wait)}" + (f", resting on {', '.join(docs)} in ../shared/DOCS.md" if docs else "")
                     + ".")
    return " ".join(parts)
