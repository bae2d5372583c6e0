"""Observations -> verdicts, in the contract's vocabulary.

The checker is the only place where a verdict label is decided. Framework adapters
report what they observed (counts, outcomes, errors); the functions here compare those
observations with what the contract demands and attach the evidence. A violation is
labelled by what the framework's documentation says about it:

* ``✗``  the documentation claims the property (or the property is the contract's own
         requirement and the caller reasonably relies on it -- the paper's usage),
* ``D``  the documentation states the weaker behaviour (cite the sentence and page),
* ``U``  no documentation addresses it (a ``✗`` with no documented excuse).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, Mapping


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


@dataclass(frozen=True)
class DocRef:
    """A sentence from a framework's documentation that a label rests on."""

    page: str
    quote: str
    stance: str  # "claims" (the property is promised) or "deviation" (weaker behaviour stated)

    def __post_init__(self) -> None:
        if self.stance not in ("claims", "deviation"):
            raise ValueError(f"DocRef.stance must be 'claims' or 'deviation', not {self.stance!r}")


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

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
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


@dataclass(frozen=True)
class Subject:
    """Who a verdict is about: the framework (and arm) and the backend it ran on."""

    framework: str
    backend: str = "-"

    def verdict(
        self,
        prop: Property,
        path: str,
        holds: bool,
        evidence: Mapping[str, Any],
        summary: str,
        doc: DocRef | None = None,
    ) -> Verdict:
        """Label an observation: holds -> ✓; otherwise ✗ / D / U by the documentation."""
        if holds:
            label = Label.PASS
        elif doc is None:
            label = Label.UNDOC
        elif doc.stance == "deviation":
            label = Label.DOC
        else:
            label = Label.FAIL
        return Verdict(self.framework, self.backend, prop, path, label, dict(evidence), summary, doc)

    def not_applicable(self, prop: Property, path: str, why: str) -> Verdict:
        return Verdict(self.framework, self.backend, prop, path, Label.NA, {"why": why}, why)


# --- the property checks ----------------------------------------------------------
# Each takes plain observations and returns (holds, evidence). They are deliberately
# small so that a reader can check each against CONTRACT.md section 2.


def at_most_once(effect_counts: Mapping[str, int]) -> tuple[bool, dict[str, Any]]:
    """EO / CO: every effect fired at most once."""
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
    reentered = {t: runs_after_recovery.get(t, 0) for t in durable_prefix if runs_after_recovery.get(t, 0) > 0}
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


def comparable(label: str) -> str:
    """Class a label for comparison with the paper: ✗, D and U all mean 'violates'."""
    lab = Label(label)
    if lab.violates:
        return "violates"
    return "holds" if lab is Label.PASS else "n/a"
