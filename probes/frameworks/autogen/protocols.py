"""AutoGen's own protocols: the paper campaign's cells the kit's generic protocols lack.

The paper's AutoGen campaign asked two questions the kit's protocols do not: what loading a
saved state and running it on does (twice, in two processes), and what ``load_state`` does
with *named* forgeries of a saved state -- edits that mean something to AgentChat (a message
of a type it does not know, a rewound conversation, an answered handoff made unanswered
again, a speaker that is not in the team), where the kit's ``tamper`` edits the keys and values
of one document generically. Both run here on the kit's ``GraphFlow`` team
(``probes.frameworks.autogen.adapter``), record their history through the kit
(``probes.kit.protocols.Run``) and are decided by the kit's judge (``probes.kit.judge``), so
their verdicts are labelled from the adapter's citations alone and can be re-judged from the
receipt like every kit verdict:

* ``restore`` (EO, ``save-load:double-restore``): the completed run's saved team state is
  loaded into a new team in two fresh processes, each run on without a new task. Does an
  effect fire again?
* ``forgeries`` (``tamper:<name>``, one isolated run per forgery, ``FORGERIES``): a saved team
  state edited by hand, then ``load_state`` alone in a fresh process, then the run driven to
  its end as a user would (the pause answered; after an edit of a completed run, recovered
  first). Whether an edit is invalid is read from AgentChat's own models (the adapter's
  ``state_errors``, in a child): an invalid edit is a CV question on the framework's row, a
  type-valid one goes to the "undetected forgery" row (``Judge.tampered``). Where the
  framework refused -- at ``load_state``, or in the run after it -- is kept in the probe's
  observations (``forgeries``), which the paper's value reads (``probes.paper.autogen``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from probes.frameworks.autogen.adapter import MANAGER
from probes.core.checker import Property, Verdict
from probes.core.errors import HarnessError
from probes.core.history import Kind
from probes.kit.adapter import Adapter, Capability
from probes.kit.protocols import Probe, Run, _isolated, _needs, ended
from probes.kit.suite import Protocol

RESTORE_PATH = "save-load:double-restore"
RESTORES = 2  # fresh processes that each load the completed run's state and run it on
PAUSED = "s2"  # the agent that takes the answer: its buffer holds the conversation it will be shown
AT_PAUSE, AT_COMPLETION = "pause", "completion"
LOAD = "load-state"  # the incarnation of the child that only loads the edited state


@dataclass(frozen=True)
class Forgery:
    """A named edit of one agent's entry (``agent``) of a saved team state: of the state saved at
    the pause (``at`` = "pause"; then the pause is answered) or of the completed run's
    (``at`` = "completion"; then the run is recovered)."""

    name: str
    agent: str
    at: str
    what: str
    edit: Callable[[dict[str, Any]], dict[str, Any]]


def _buffer(entry: dict[str, Any], first: dict[str, Any]) -> dict[str, Any]:
    """``entry`` (an agent's) with its first buffered message updated by ``first``."""
    buffer = entry["message_buffer"]
    return {**entry, "message_buffer": [{**buffer[0], **first}, *buffer[1:]]}


def _until_handoff(entry: dict[str, Any]) -> dict[str, Any]:
    """The manager's entry with its thread cut after its last handoff and the paused step next:
    the handoff answered in the run made unanswered again."""
    thread = entry["message_thread"]
    last = max(i for i, m in enumerate(thread) if m.get("type") == "HandoffMessage")
    return {**entry, "message_thread": thread[: last + 1], "ready": [PAUSED]}


# The paper campaign's nine forgeries, on the GraphFlow team: its first six edited an agent's
# saved state (an AssistantAgent's model context there, the paused step's message buffer here),
# its last three the team manager's (the round-robin speaker index there, the graph's ready queue).
FORGERIES: tuple[Forgery, ...] = (
    Forgery("structural", PAUSED, AT_PAUSE, "the first buffered message given a type AgentChat does not know",
            lambda e: _buffer(e, {"type": "ForgedMessageType"})),
    Forgery("wrong-content-type", PAUSED, AT_PAUSE, "the first buffered message's text content made the int 42",
            lambda e: _buffer(e, {"content": 42})),
    Forgery("removed-context", PAUSED, AT_PAUSE, "the agent's message buffer removed",
            lambda e: {k: v for k, v in e.items() if k != "message_buffer"}),
    Forgery("wrong-version", PAUSED, AT_PAUSE, "the agent state's version set to 99.0.0",
            lambda e: {**e, "version": "99.0.0"}),
    Forgery("rewound-history", MANAGER, AT_PAUSE,
            "the thread rewound to the user's task and the first step made next, as if it had never run",
            lambda e: {**e, "message_thread": e["message_thread"][:1], "ready": ["s1"]}),
    Forgery("forged-unanswered-call", MANAGER, AT_COMPLETION,
            "the completed run's thread cut after its handoff to the user and the paused step made next: "
            "the answered call for an answer made unanswered", _until_handoff),
    Forgery("team-unknown-thread-type", MANAGER, AT_PAUSE,
            "the thread's second message given a type AgentChat does not know",
            lambda e: {**e, "message_thread": [e["message_thread"][0], {**e["message_thread"][1],
                                                                        "type": "ForgedMessageType"},
                                               *e["message_thread"][2:]]}),
    Forgery("rewound-speaker", MANAGER, AT_PAUSE, "the speaker before the pause (the thread's last) made next again",
            lambda e: {**e, "ready": [e["message_thread"][-1]["source"]]}),
    Forgery("speaker-out-of-range", MANAGER, AT_PAUSE, "a speaker that is not in the team made next",
            lambda e: {**e, "ready": ["nobody"]}),
)


def _newest(p: Probe, run: Run) -> tuple[Adapter, Path]:
    """The adapter and the newest saved team state's file of ``run``."""
    inst = p.target.cls(run.workdir, p.target.backend, run.store)
    paths = inst.state_paths()
    if not paths:
        raise HarnessError(f"{run.name}: no team state was saved")
    return inst, paths[-1][0]


def _answered(run: Run, handle: Any, answer: Any) -> None:
    """Answer the pause ``handle`` of a clean run: the run must complete."""
    done = run.answer("answer", handle, answer)
    if done.get("status") != "completed":
        raise HarnessError(f"a clean run did not complete: {ended(done)}")


# --- the protocols -------------------------------------------------------------------------

def restore(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """The completed run's saved state loaded into a new team and run on without a new task, in
    ``RESTORES`` fresh processes: does loading and continuing a saved state fire an effect again?"""
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER):
        return [p.judge.not_applicable(Property.EO, RESTORE_PATH, why)]
    run = p.run("run")
    _answered(run, run.start().get("handle"), p.target.cls.answers[0])
    _, saved = _newest(p, run)
    restored = [ended(run.op(f"restore-{i}", "proceed", handle=saved.name)) for i in range(1, RESTORES + 1)]
    h = p.read()
    p.observations["restore"] = {"restored": restored, "effects": h.effect_counts()}
    what = (f"the completed run's saved state loaded into a new team in {RESTORES} fresh processes, each run on "
            f"without a new task ({'; '.join(restored)})")
    return [p.judge.effects_once(RESTORE_PATH, h, what)]


def forgeries(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """Each named forgery (``FORGERIES``) in a run of its own: edit, ``load_state`` alone, then on to
    the end; judged by the kit's ``Judge.tampered`` with the invalidity AgentChat's models give."""
    if why := _needs(p, Capability.PAUSE, Capability.RECOVER, Capability.TAMPER):
        return [p.judge.not_applicable(Property.CV, f"tamper:{f.name}", why) for f in FORGERIES]
    cls = p.target.cls
    answer, mode = cls.answers[0], cls.recovery_modes[0]
    errors, model = _model_errors(p, answer)
    seen: dict[str, Any] = p.observations.setdefault("forgeries", {})
    verdicts = []
    for forgery, wrong in zip(FORGERIES, errors):
        sub, run = _isolated(p, f"forgery-{forgery.name}")
        handle = run.start().get("handle")
        if forgery.at == AT_COMPLETION:
            _answered(run, handle, answer)
        inst, saved = _newest(p, run)
        inst.save_state((saved, forgery.agent), forgery.edit(inst.load_state((saved, forgery.agent))))
        run.note(Kind.TAMPER, detail={"edit": forgery.name, "agent": forgery.agent, "at": forgery.at})
        status = run.op(LOAD, "load", handle=saved.name)
        refused_at = "load_state" if status.get("status") == "raised" else None
        if refused_at is None:
            status = (run.answer("answer-forged", saved.name, answer) if forgery.at == AT_PAUSE
                      else run.recover("recover", mode, answer))
            status = run.to_completion(status, answer, "answer-again")
            refused_at = "run" if status.get("status") == "raised" else None
        seen[forgery.name] = {"agent": forgery.agent, "at": forgery.at, "what": forgery.what,
                              "model_errors": wrong, "refused_at": refused_at, "ended": ended(status)}
        shown = f"{model}: " + ("; ".join(wrong) if wrong else "valid")
        verdicts += sub.judge.tampered(f"tamper:{forgery.name}", sub.read(), bool(wrong), cls.result(answer), shown)
    return verdicts


def _model_errors(p: Probe, answer: Any) -> tuple[list[list[str]], str]:
    """Every forgery's edit applied to a clean run's saved states (at its pause and at its
    completion), judged by AgentChat's own models in one child (the adapter's ``state_errors``):
    one list of errors per forgery, and the models' name."""
    _, run = _isolated(p, "shape")
    handle = run.start().get("handle")
    inst, at_pause = _newest(p, run)
    _answered(run, handle, answer)
    _, at_completion = _newest(p, run)
    entries = [[f.agent, f.edit(inst.load_state((at_pause if f.at == AT_PAUSE else at_completion, f.agent)))]
               for f in FORGERIES]
    schema = run.op("schema", "state_errors", entries=entries)
    return schema["errors"], f"state model {schema['model']}"


PROTOCOLS: dict[str, Protocol] = {"restore": restore, "forgeries": forgeries}
