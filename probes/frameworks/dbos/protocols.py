"""DBOS's own protocol: the paper campaign's fork, which the kit's generic fork cannot ask.

The kit's fork (``fork:same-pause``) answers an answered pause again, with another answer,
on the same handle. DBOS ignores that second message (the workflow has consumed its one
answer), and its documentation says why: another answer is given by *forking* the workflow
(DB-10), which is what the paper's DBOS campaign measured. So the paper's FD cell is this
protocol, on the kit's workflow (``probes.frameworks.dbos.adapter``), recorded through the kit
(``probes.kit.protocols.Run``) and decided by the kit's judge, so it is labelled from the
adapter's citations alone and can be re-judged from its receipt like every kit verdict:

* ``fork_workflow`` (path ``fork:fork_workflow``): the run started, answered and completed;
  then, in a fresh process, ``DBOS.fork_workflow`` from the ``recv`` step and the fork
  answered with the other answer. FD: the fork's outcome is that answer's own. EO, on the
  fork's branch (``fork_branch``): the steps the fork inherited fired once, and the fork fired
  the gated effect once -- the legacy campaign's "every effect at most once per branch". The
  original's outcome read again after the fork is kept in the observations
  (``fork_workflow``), where the paper layer (``probes.paper.dbos``) reads it.
"""

from __future__ import annotations

from typing import Any

from probes.core.checker import Property, Verdict
from probes.core.errors import HarnessError
from probes.core.history import History, Kind
from probes.kit.adapter import Capability
from probes.kit.protocols import Probe, _needs, ended
from probes.kit.suite import Protocol

FORK_PATH = "fork:fork_workflow"


def fork_branch(h: History) -> History:
    """The fork's own branch of a ``fork_workflow`` history: what ``DBOS.fork_workflow`` copies
    into the new workflow (the run up to its pause, before the original was answered: every step
    before ``recv``) and what the fork ran after the FORK note. The original's answered step is
    the other branch's: counted with it, the gated effect would fire "twice" for two workflows."""
    answers, forks = h.of(Kind.ANSWER), h.of(Kind.FORK)
    if not answers or not forks:
        raise HarnessError("a fork_workflow history needs the original's answer and the FORK note")
    return History(tuple(e for e in h.events if e.seq < answers[0].seq or e.seq >= forks[-1].seq))


def fork_workflow(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Complete a run with the first answer, then fork it from its ``recv`` step with DBOS's own
    ``fork_workflow`` and answer the fork with the second: the fork must be served the second
    answer's outcome (FD), with no effect fired twice on its branch (EO)."""
    if why := _needs(p, Capability.PAUSE, Capability.FORK):
        return [p.judge.not_applicable(Property.FD, FORK_PATH, why),
                p.judge.not_applicable(Property.EO, FORK_PATH, why)]
    a, b = p.target.cls.answers
    run = p.run("run")
    first = run.to_completion(run.start(), a, "answer")
    if first.get("status") != "completed":
        raise HarnessError(f"a clean run did not complete: {ended(first)}")
    run.note(Kind.FORK, value=b, detail={"intent": "fork", "at": "the recv step", "by": "DBOS.fork_workflow"})
    fork = run.op("fork", "fork_workflow", answer=b)
    h = p.read()
    p.observations["fork_workflow"] = {
        "first": ended(first), "fork": ended(fork), "original_before": first.get("outcome"),
        "original_after": fork.get("original_outcome"), "forked_from_step": fork.get("forked_from_step"),
        "new_workflow_id": fork.get("new_workflow_id"), "effects": h.effect_counts()}
    what = f"the fork's branch (the steps before recv copied, then the fork answered {b!r})"
    return [p.judge.fork(h, p.target.cls.result(b), path=FORK_PATH),
            p.judge.effects_once(FORK_PATH, fork_branch(h), what)]


PROTOCOLS: dict[str, Protocol] = {"fork_workflow": fork_workflow}
