"""The one place an atlas cell's observations become a verdict.

The cell (its framework's cells module, ``cells.py`` for LangGraph) observes and hands back the inputs of the check its table row
(``bugs.py``) names; here that check of ``probes.core.checker`` is called and the
result labelled by ``Subject.verdict``. The atlas status of a cell follows from the
verdict alone:

* ``present``  -- the check does not hold (label ✗ / D / U): the reported behaviour occurred;
* ``absent``   -- the check holds (✓);
* ``n/a``      -- the release lacks the feature (label n/a, evidence ``atlas: n/a``);
* ``not reproduced`` -- the cell could not set up the reported situation (label n/a,
  evidence ``atlas: not reproduced``, with what was tried).

When the checkers move to histories (label + witness), only :func:`verdict` changes.
"""

from __future__ import annotations

from typing import Any, Mapping

from probes.studies.atlas.bugs import Bug
from probes import citations
from probes.core import checker
from probes.core.checker import Label, Property, Verdict

PRESENT, ABSENT, NA, NOT_REPRODUCED = "present", "absent", "n/a", "not reproduced"
STATUSES = (PRESENT, ABSENT, NA, NOT_REPRODUCED)

# The checks a row may name, with the cell keys each takes (validated when a row is added).
CHECKS: dict[str, tuple[str, ...]] = {
    "fork_outcome": ("observed", "expected", "first_outcome"),
    "completes": ("completed", "detail"),
    "prefix_not_reentered": ("runs_after_recovery", "durable_prefix"),
    "same_decision": ("decisions",),
    "at_most_once": ("effect_counts",),
    "exactly_once": ("effect_counts", "expected"),
    "invalid_state_refused": ("refused_at_write", "became_durable", "error"),
}


def path_of(bug: Bug, release: str) -> str:
    return f"#{bug.ref} @ {release}"


def verdict(bug: Bug, release: str, backend: str, cell: Mapping[str, Any]) -> Verdict:
    """The verdict of one cell run (``cell`` is the JSON ``cells.run_cell`` printed)."""
    subject = citations.subject(bug.fw, backend)
    prop = Property(bug.prop)
    path = path_of(bug, release)
    if cell["status"] == "n/a":
        v = subject.not_applicable(prop, path, f"not applicable: {cell['why']}")
        return Verdict(v.framework, v.backend, v.property, v.path, v.label, {**v.evidence, "atlas": NA}, v.summary)
    if cell["status"] == "not_reproduced":
        v = subject.not_applicable(prop, path, f"could not reproduce: {cell['tried']}")
        return Verdict(v.framework, v.backend, v.property, v.path, v.label,
                       {**v.evidence, "atlas": NOT_REPRODUCED}, v.summary)
    args = dict(cell["check"])
    wanted = CHECKS[bug.check]
    if sorted(args) != sorted(wanted):
        raise ValueError(f"cell {bug.cite} gave {sorted(args)} for check {bug.check}, which takes {list(wanted)}")
    holds, evidence = getattr(checker, bug.check)(**args)
    present = holds == bug.present_when
    summary = f"{'present' if present else 'absent'}: {cell['behaviour']}"
    # holds == False means "violated" for every check; a present behaviour is a violation
    return subject.verdict(prop, path, not present, {**evidence, "check": bug.check}, summary)


def status(v: Verdict) -> str:
    if v.label is Label.NA:
        return str(v.evidence.get("atlas", NA))
    return PRESENT if v.label.violates else ABSENT
