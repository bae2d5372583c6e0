"""One probe's protocol, step by step, each step in a fresh interpreter.

Every step a probe takes (start, park, restore, answer, recover) runs through
``run_child``; this keeps what each step did (status, park point, result, stderr on
failure) as observations, turns an unexpected end into a ``HarnessError``, and
cross-checks the step's in-process effect counter against the ledger -- so a campaign
only writes the protocol, not the plumbing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from probes.core.checker import Subject, Verdict, check_cv
from probes.core.history import History, HistoryLog, Kind
from probes.core.nemesis import ChildOutcome, run_child
from probes.core.oracle import Ledger, cross_check
from probes.core.portable import portable_text, tail


class ProtocolSteps:
    """Run ``<workload>:<fn>`` steps with a shared ledger; subclass to add protocol helpers.

    Each workload function takes ``ledger`` and ``incarnation`` (plus ``common`` and
    its own arguments) and returns a dict with its oracle's ``counter``.
    """

    def __init__(self, workload: str, workdir: Path, timeout: float = 180.0,
                 common: Mapping[str, Any] | None = None) -> None:
        self.workload = workload
        self.timeout = timeout
        self.common = dict(common or {})
        self.ledger_path = Path(workdir) / "ledger.sqlite"
        self.ledger = Ledger(self.ledger_path)
        self.log = HistoryLog(self.ledger_path)
        self.observations: dict[str, Any] = {"children": {}}

    def child(self, fn: str, incarnation: str, park_at: str | None = None, **args: Any) -> ChildOutcome:
        """One step; with ``park_at`` it must be killed there, otherwise it must end normally."""
        out = run_child(f"{self.workload}:{fn}",
                        {"ledger": str(self.ledger_path), "incarnation": incarnation, **self.common, **args},
                        park_at=park_at, timeout=self.timeout)
        self.observations["children"][incarnation] = {
            "status": out.status, "parked_at": out.parked_at, "seconds": round(out.seconds, 3),
            "result": out.result, "stderr_tail": tail(portable_text(out.stderr_tail), 10) if out.status != "ok" else "",
        }
        if park_at:
            out.require_killed()
        else:
            out.require_ok()
            cross_check(out.result["counter"], self.ledger, incarnation)
        return out

    def counts(self, incarnation: str | None = None) -> dict[str, int]:
        return self.ledger.counts(incarnation)

    def history(self, incarnation: str | None = None) -> History:
        """The probe's history so far (effects from every step, plus the harness's events),
        or only one incarnation's events."""
        h = self.ledger.history()
        return h if incarnation is None else History(tuple(e for e in h if e.incarnation == incarnation))

    def tampered_restore(self, subject: Subject, kind: str, incarnation: str, restore: Any,
                         evidence: Mapping[str, Any] | Callable[[], Mapping[str, Any]]) -> Verdict:
        """The one tamper protocol: record the edit, restore, record what the framework did, judge CV.

        ``restore()`` performs the edit's restore step (a child under ``incarnation``) and
        returns ``(error_type or None, stage, outcome)``; ``evidence`` (or a function giving
        it, read after the restore) is added to the verdict's. CV holds when the framework
        refused loudly before any effect ran on the edited state (``checker.check_cv``).
        """
        self.log.append(Kind.TAMPER, incarnation, detail={"edit": kind})
        error, stage, outcome = restore()
        if error is not None:
            self.log.append(Kind.REFUSE, incarnation, value=error, detail={"stage": stage})
        else:
            self.log.append(Kind.COMPLETE, incarnation, value=outcome)
        cv = check_cv(self.history(incarnation))
        counts = self.counts(incarnation)
        if cv.holds:
            summary = f"refused loudly at {stage} ({error}) before any effect ran"
        elif error is not None:
            summary = f"error at {stage} ({error}) only after effects {counts}"
        else:
            summary = f"accepted silently; the continued run produced {outcome!r}, effects {counts or 'none'}"
        extra = evidence() if callable(evidence) else evidence
        return cv.verdict(subject, f"tamper:{kind}", summary,
                          **{"effect_counts": counts, "stage": stage, "outcome": outcome, **extra})
