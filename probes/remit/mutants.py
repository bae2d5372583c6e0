"""Mutation adequacy: deliberately broken variants of ``remit_ref.core``.

Each mutant replaces one core function for the duration of a check (the saver and
the ledger call the core through the module, so a mutant reaches the real LangGraph
runs too). Detectors, each reporting verdict-relevant booleans only -- a property
holds or not, a decision conforms or not -- never run-varying ids:

* ``model``       conformance to the reference model at reference bounds + the six
                  invariants over the core-driven state space;
* ``contracts``   the finite-domain contracts and the z3 gate proof (``verify``);
* ``hypothesis``  the stateful interleavings (``props``), a short run;
* ``langgraph``   real LangGraph 1.2.9 + REMIT on InMemorySaver: FD fork outcome, CV
                  refused, CO (a live claim blocks a second resume; a stray is
                  inert), EO through the ledger after an injected crash, LV (a dead
                  owner's claim is taken over).

A mutant is killed when some detector's verdict differs from the unmutated core's.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator


@dataclass(frozen=True)
class Mutant:
    name: str
    function: str
    what: str
    make: Callable[[Any], Callable[..., Any]]  # core module -> replacement


def _m(name: str, function: str, what: str, make: Callable[[Any], Callable[..., Any]]) -> Mutant:
    return Mutant(name, function, what, make)


MUTANTS: tuple[Mutant, ...] = (
    _m("recovery_restart", "recovery_decision", "recovery restarts from task 1 (Replay)", lambda c: lambda log: 1),
    _m("recovery_reexec_frontier", "recovery_decision", "recovery re-executes the frontier task",
       lambda c: lambda log: max((i for i, v in log if v), default=1)),
    _m("recovery_counts_invalid", "recovery_decision", "recovery trusts invalid records",
       lambda c: lambda log: 1 + max((i for i, _v in log), default=0)),
    _m("admit_done_fires", "admit_effect", "a recorded effect fires again",
       lambda c: lambda r: c.Admission.FIRE if r in (None, "done") else c.Admission.IN_DOUBT),
    _m("admit_pending_fires", "admit_effect", "an in-doubt effect fires again",
       lambda c: lambda r: {None: c.Admission.FIRE, "pending": c.Admission.FIRE, "done": c.Admission.SKIP}[r]),
    _m("admit_none_skips", "admit_effect", "a new effect is skipped (never fires)",
       lambda c: lambda r: c.Admission.SKIP if r in (None, "done") else c.Admission.IN_DOUBT),
    _m("intent_always_retry", "resume_intent", "every resume is a retry (ForkIgnore)",
       lambda c: lambda addressed, flag, fork_intent: c.Intent.RETRY),
    _m("intent_ignores_flag", "resume_intent", "the explicit remit_intent flag is ignored",
       lambda c: lambda addressed, flag, fork_intent: (c.Intent.FORK if addressed and fork_intent else c.Intent.RETRY)),
    _m("intent_always_fork", "resume_intent", "every resume is a fork (retries see no recorded answer)",
       lambda c: lambda addressed, flag, fork_intent: c.Intent.FORK if fork_intent else c.Intent.RETRY),
    _m("fork_view_identity", "fork_view", "a fork still sees the recorded answer",
       lambda c: lambda writes, intent: list(writes)),
    _m("fork_view_drops_interrupts", "fork_view", "a fork also loses the interrupt records",
       lambda c: lambda writes, intent: list(writes) if intent is c.Intent.RETRY else
       [w for w in writes if w[1] not in ("__resume__", "__interrupt__")]),
    _m("claim_nothing", "claim_targets", "the gate claims nothing (no consume-once)",
       lambda c: lambda ids, answered: []),
    _m("claim_ignores_map", "claim_targets", "a resume map claims every interrupt, not the ones it answers",
       lambda c: lambda ids, answered: sorted(set(ids))),
    _m("gate_loser_consumes", "gate_decision", "the loser of the insert consumes too (lost update)",
       lambda c: lambda inserted, owner, me, alive, expired: c.GateDecision.CONSUME),
    _m("gate_takeover_live", "gate_decision", "a live owner's claim is taken over",
       lambda c: lambda inserted, owner, me, alive, expired: c.GateDecision.CONSUME if inserted or owner == me
       else c.GateDecision.TAKEOVER),
    _m("gate_never_takeover", "gate_decision", "a dead owner's claim blocks forever",
       lambda c: lambda inserted, owner, me, alive, expired: c.GateDecision.CONSUME if inserted or owner == me
       else c.GateDecision.CONFLICT),
    _m("persist_always", "persist_decision", "invalid state is persisted (InvalidPersist)",
       lambda c: lambda reason: True),
    _m("first_invalid_never", "first_invalid", "the validator's findings are dropped",
       lambda c: lambda values, check: None),
)


@contextlib.contextmanager
def applied(mutant: Mutant | None) -> Iterator[Any]:
    from remit_ref import core

    if mutant is None:
        yield core
        return
    original = getattr(core, mutant.function)
    setattr(core, mutant.function, mutant.make(core))
    try:
        yield core
    finally:
        setattr(core, mutant.function, original)


# ---- detectors -------------------------------------------------------------------------------


def detect_model(core: Any) -> dict[str, bool]:
    from probes.remit import model

    b = model.Bounds()
    conf = model.conformance(b, model.core_decisions(core))
    exp = model.explore(b, model.core_decisions(core))
    out = {"conforms": conf["conforms"]}
    out.update({f"inv.{k}": k in exp["holds"] for k in model.INVARIANTS})
    out["no_stuck_states"] = exp["stuck_states"] == 0
    return out


def detect_contracts(core: Any) -> dict[str, bool]:
    from probes.remit import verify

    out = {name: r["failures"] == 0 for name, r in verify.finite_contracts(core).items()}
    out["z3_gate"] = verify.z3_gate(core)["proved"]
    return out


def detect_hypothesis(core: Any) -> dict[str, bool]:
    from probes.remit import props

    return {"six_invariants": props.run(40, 25, core)["holds"]}


def _fd_app(saver: Any) -> Any:
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    class S(TypedDict):
        value: int

    def node(s: S) -> dict[str, int]:
        answer = interrupt("q")
        return {"value": s["value"] + 1 if answer else s["value"]}

    g = StateGraph(S)
    g.add_node("n", node)
    g.add_edge(START, "n")
    g.add_edge("n", END)
    return g.compile(checkpointer=saver)


def _attempt(fn: Callable[[], Any]) -> tuple[Any, str | None]:
    try:
        return fn(), None
    except Exception as exc:  # noqa: BLE001 - an error is an observation here
        return None, type(exc).__name__


def detect_langgraph(core: Any) -> dict[str, bool]:
    """Real LangGraph runs through REMIT (InMemorySaver); booleans = property holds."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command
    from pydantic import BaseModel

    from remit_ref import EffectLedger, wrap
    from remit_ref.claims import ClaimRow, Owner

    out: dict[str, bool] = {}
    cfg = {"configurable": {"thread_id": "t"}}
    # FD: addressed fork
    app = _fd_app(wrap(InMemorySaver()))
    app.invoke({"value": 1}, cfg)
    cid = app.get_state(cfg).config["configurable"]["checkpoint_id"]
    addressed = {"configurable": {"thread_id": "t", "checkpoint_id": cid}}
    first, _ = _attempt(lambda: app.invoke(Command(resume=True), addressed))
    fork, _ = _attempt(lambda: app.invoke(Command(resume=False), addressed))
    out["FD.fork"] = (first or {}).get("value") == 2 and (fork or {}).get("value") == 1
    # FI: the explicit flag decides when checkpoint ids travel on the ordinary path
    app = _fd_app(wrap(InMemorySaver(), addressed_is_fork=False))
    app.invoke({"value": 1}, cfg)
    cid = app.get_state(cfg).config["configurable"]["checkpoint_id"]
    a1, _ = _attempt(lambda: app.invoke(Command(resume=True), {"configurable": {"thread_id": "t", "checkpoint_id": cid}}))
    a2, _ = _attempt(lambda: app.invoke(Command(resume=False), {"configurable": {
        "thread_id": "t", "checkpoint_id": cid, "remit_intent": "fork"}}))
    out["FI.flag"] = (a1 or {}).get("value") == 2 and (a2 or {}).get("value") == 1
    # retry re-delivery (thread-only) after completion: first answer stands
    app = _fd_app(wrap(InMemorySaver(), consume_gate=True))
    app.invoke({"value": 1}, cfg)
    r1, _ = _attempt(lambda: app.invoke(Command(resume=True), cfg))
    r2, _ = _attempt(lambda: app.invoke(Command(resume=False), cfg))
    out["CO.stray_inert"] = (r1 or {}).get("value") == 2 and (r2 or {}).get("value") == 2
    # CO: a live claim blocks a second consumer, before any node runs
    base = InMemorySaver()
    saver = wrap(base, consume_gate=True)
    app = _fd_app(saver)
    app.invoke({"value": 1}, cfg)
    tup = base.get_tuple(cfg)
    iid = next(w[2][0].id for w in tup.pending_writes if w[1] == "__interrupt__")
    key = ("t", "", tup.config["configurable"]["checkpoint_id"], iid)
    saver._claims.try_insert(key, Owner.new())
    _res, err = _attempt(lambda: app.invoke(Command(resume=True), cfg))
    out["CO.live_claim_blocks"] = err == "ConsumeConflict" and app.get_state(cfg).next == ("n",)
    # LV: a dead owner's claim is taken over
    saver._claims._rows[key] = ClaimRow("host/999999999/x/y", saver._claims._rows[key].host, 999999999, "x", 0.0)
    res, err = _attempt(lambda: app.invoke(Command(resume=True), cfg))
    out["LV.dead_owner_takeover"] = err is None and (res or {}).get("value") == 2
    # CV: invalid state refused, nothing persisted

    class P(BaseModel):
        items: list[str] = []

    g = StateGraph(P)
    g.add_node("bad", lambda s: {"items": s.items + [None]})
    g.add_edge(START, "bad")
    g.add_edge("bad", END)
    base = InMemorySaver()
    capp = g.compile(checkpointer=wrap(base))
    _res, err = _attempt(lambda: capp.invoke({"items": ["a"]}, {"configurable": {"thread_id": "c"}}))
    durable_none = any(None in (t.checkpoint["channel_values"].get("items") or [])
                       for t in base.list({"configurable": {"thread_id": "c"}}))
    out["CV.refused"] = err == "InvalidCheckpoint" and not durable_none
    # EO: crash (exception) in s2, recovery re-runs s1; the ledger keeps s1 at one firing
    from langgraph.func import entrypoint, task

    fired: list[str] = []
    ledger = EffectLedger(None)
    state = {"failed": False}

    @task
    def s1(x: int) -> str:
        ledger.once("t", "s1", "e", lambda: fired.append("s1") or "s1")
        return "a"

    @task
    def s2(a: str) -> str:
        if not state["failed"]:
            state["failed"] = True
            raise RuntimeError("injected")
        ledger.once("t", "s2", "e", lambda: fired.append("s2") or "s2")
        return a + "b"

    @entrypoint(checkpointer=wrap(InMemorySaver()))
    def wf(x: int) -> str:
        return s2(s1(x).result()).result()

    _attempt(lambda: wf.invoke(1, cfg))
    rec, err = _attempt(lambda: wf.invoke(1, cfg))  # recovery with the input re-submitted (s1 re-runs)
    out["EO.crash_ledger"] = err is None and sorted(fired) == ["s1", "s2"]
    return out


DETECTORS: dict[str, Callable[[Any], dict[str, bool]]] = {
    "model": detect_model,
    "contracts": detect_contracts,
    "hypothesis": detect_hypothesis,
    "langgraph": detect_langgraph,
}


def evaluate(mutant: Mutant | None) -> dict[str, dict[str, bool]]:
    with applied(mutant) as core:
        out = {}
        for name, fn in DETECTORS.items():
            try:
                out[name] = fn(core)
            except Exception as exc:  # noqa: BLE001 - a crashing detector under a mutant is a detection
                out[name] = {"detector_completed": False, "error": False}
                out[name]["_error"] = f"{type(exc).__name__}"  # type: ignore[assignment]
        return out


def kills(baseline: dict[str, dict[str, Any]], mutated: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Per detector, the verdict fields that differ from the baseline (the kill evidence)."""
    out = {}
    for det, base in baseline.items():
        got = mutated.get(det, {})
        diff = sorted(k for k in set(base) | set(got) if not k.startswith("_") and base.get(k, True) != got.get(k, True))
        if diff:
            out[det] = diff
    return out
