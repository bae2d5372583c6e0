"""The three live protocols, each one trial at a time, through real LangGraph 1.x.

* ``fork``     -- #6663. Run to the interrupt; a model (playing the reviewer) answers
  APPROVE via a tool call; resume True addressed to the interrupt checkpoint; the
  reviewer model then answers REJECT; resume False addressed to the *same*
  checkpoint. Inside the gated node a second model call acts on the answer it was
  given (tool ``execute``: ship/cancel). FD demands f(False) = cancel for the fork.
* ``approval`` -- the interrupt-approval path with a stray resume: the reviewer model
  approves, the run completes, then the reviewer model answers a duplicate delivery
  and that answer is resumed into the completed thread. CO: the gated effect fired at
  most once; EO: every effect exactly once; LV: the run completed.
* ``session``  -- session restore through LangGraph's own persistence: a tool-calling
  agent (model node + tool node, ``SqliteSaver``) sends invoice A in turn 1; the
  connection is closed; a fresh graph on a fresh connection restores the thread and
  turn 2 sends invoice B. EO: each tool call id executed once; PC: no turn-1 tool
  call re-executed after restore; LV: the thread restored and turn 2 completed.

Model judgement is checked separately from framework behaviour: a model that answers
with the wrong decision, routes against the decision it was shown, or sends another
invoice is a harness error (``off_script``), never a verdict. Verdict evidence holds
only run-independent values (decisions, outcomes, counts), never ids or timings.
"""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from probes.core import checker
from probes.core.errors import HarnessError
from probes.core.oracle import Oracle
from probes.studies.live.calls import Budget, Caller, CallLog, ModelHarnessError, redact

PROTOCOLS = ("fork", "approval", "session")
# Worst-case model calls per trial (checked against the budget before a trial starts).
CALLS_PER_TRIAL = {"fork": 4, "approval": 4, "session": 6}
# The properties each protocol measures; a trial "violates" when any of them fails.
PROPERTIES = {"fork": ("FD",), "approval": ("CO", "EO", "LV"), "session": ("EO", "PC", "LV")}
PATHS = {
    "fork": "live fork (#6663): resume True then False at the interrupt checkpoint",
    "approval": "live interrupt approval + stray resume",
    "session": "live session restore (SQLite thread)",
}
RECURSION_LIMIT = 12


def f(value: Any) -> str:
    """The routing function: injective and not the identity (FD is about routing)."""
    return "ship" if value is True else "cancel"


def _tool(name: str, description: str, props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": props, "required": sorted(props)}}}


SUBMIT_DECISION = _tool("submit_decision", "Record the reviewer's decision on the pending approval request.",
                        {"approve": {"type": "boolean", "description": "true to approve, false to reject"}})
EXECUTE = _tool("execute", "Carry out the reviewer's decision on the order.",
                {"action": {"type": "string", "enum": ["ship", "cancel"],
                            "description": "ship if approved, cancel if rejected"}})
SEND_INVOICE = _tool("send_invoice", "Send one invoice to the customer (an external, non-idempotent action).",
                     {"invoice_id": {"type": "integer", "description": "the invoice number"}})

AGENT_SYSTEM = ("You are a billing assistant. When the user's latest message asks you to send an invoice, call "
                "send_invoice exactly once with that invoice number, and only for the invoice named in that "
                "latest message. After the tool result, reply with one short sentence and call no tool.")


@dataclass
class Trial:
    """One trial's outcome: checks (deterministic evidence) and what it cost (run-varying)."""

    protocol: str
    index: int
    status: str = "ok"  # "ok" or "harness_error"
    error_kind: str | None = None
    error: str | None = None
    checks: dict[str, tuple[bool, dict[str, Any]]] = field(default_factory=dict)
    observations: dict[str, Any] = field(default_factory=dict)
    log: CallLog = field(default_factory=CallLog)

    @property
    def violation(self) -> bool | None:
        if self.status != "ok":
            return None
        return not all(holds for holds, _ in self.checks.values())

    def to_json(self) -> dict[str, Any]:
        return {"trial": self.index, "status": self.status, "error_kind": self.error_kind, "error": self.error,
                "violation": self.violation,
                "checks": {k: {"holds": h, "evidence": e} for k, (h, e) in sorted(self.checks.items())},
                "observations": self.observations,
                "calls": self.log.calls, "input_tokens": self.log.input_tokens,
                "output_tokens": self.log.output_tokens, "roles": self.log.roles}


# --- shared pieces -----------------------------------------------------------------


def _review(caller: Caller, order: int, decision: str, note: str) -> Any:
    """The reviewer is a model: its tool call is the resume value."""
    from langchain_core.messages import HumanMessage, SystemMessage

    system = ("You are the human reviewer of an order-fulfilment workflow that paused for approval. "
              f"{note} Your decision for this request is: {decision}. Record it by calling submit_decision "
              f"with approve={'true' if decision == 'APPROVE' else 'false'}.")
    args = caller.tool_call("reviewer", [SystemMessage(system), HumanMessage(
        f"Approval request: ship order #{order} to the customer?")], SUBMIT_DECISION)
    value = args["approve"]
    if value is not (decision == "APPROVE"):
        raise ModelHarnessError("off_script", f"reviewer was told {decision} and answered approve={value!r}")
    return value


class _GateState(TypedDict, total=False):
    order: int
    outcome: str


def _gated_graph(caller: Caller, oracle: Oracle, node_runs: list[dict[str, Any]]) -> Any:
    """t1 (effect) -> gate (interrupt; a model acts on the answer; effect) -> t3 (effect)."""
    from langchain_core.messages import HumanMessage, SystemMessage
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def t1(state: _GateState) -> dict[str, Any]:
        oracle.fire("t1")
        return {}

    def gate(state: _GateState) -> dict[str, Any]:
        seen = interrupt({"request": f"ship order #{state['order']}?"})
        recorded = "APPROVED" if seen is True else "REJECTED"
        args = caller.tool_call("executor", [
            SystemMessage("You carry out a reviewer's decision on an order. Call execute with action 'ship' if "
                          "the decision is APPROVED and action 'cancel' if it is REJECTED."),
            HumanMessage(f"Order #{state['order']}. Recorded reviewer decision: {recorded}.")], EXECUTE)
        action = args["action"]
        node_runs.append({"seen": seen, "action": action})
        if action != f(seen):
            raise ModelHarnessError("off_script", f"executor shown {recorded} chose {action!r}")
        oracle.fire(f"gate:{action}")
        return {"outcome": action}

    def t3(state: _GateState) -> dict[str, Any]:
        oracle.fire("t3")
        return {}

    graph = StateGraph(_GateState)
    graph.add_node("t1", t1)
    graph.add_node("gate", gate)
    graph.add_node("t3", t3)
    graph.add_edge(START, "t1")
    graph.add_edge("t1", "gate")
    graph.add_edge("gate", "t3")
    graph.add_edge("t3", END)
    return graph


def _order(seed: int) -> int:
    return 1000 + seed % 9000


# --- fork -------------------------------------------------------------------------


def fork_trial(caller: Caller, oracle: Oracle, seed: int, obs: dict[str, Any]) -> dict[str, tuple[bool, dict]]:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    node_runs: list[dict[str, Any]] = []
    app = _gated_graph(caller, oracle, node_runs).compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": f"fork-{uuid.uuid4().hex[:8]}"}}
    order = _order(seed)
    first = app.invoke({"order": order}, cfg)
    if not first.get("__interrupt__"):
        raise HarnessError("the run did not stop at the interrupt")
    at_interrupt = app.get_state(cfg).config  # addressed to the interrupt checkpoint
    obs["interrupt_checkpoint"] = at_interrupt["configurable"].get("checkpoint_id")
    v1 = _review(caller, order, "APPROVE", "")
    out1 = app.invoke(Command(resume=v1), at_interrupt).get("outcome")
    v2 = _review(caller, order, "REJECT", "You answered this request before and have changed your mind.")
    out2 = app.invoke(Command(resume=v2), at_interrupt).get("outcome")
    obs.update({"resume_values": [v1, v2], "outcomes": [out1, out2], "node_runs": node_runs,
                "effects": oracle.cross_check()})
    holds, evidence = checker.fork_outcome(observed=out2, expected=f(v2), first_outcome=out1)
    evidence["value_seen_by_fork_node"] = node_runs[-1]["seen"] if node_runs else None
    return {"FD": (holds, evidence)}


# --- approval + stray ----------------------------------------------------------------


def approval_trial(caller: Caller, oracle: Oracle, seed: int,
                   obs: dict[str, Any]) -> dict[str, tuple[bool, dict]]:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    node_runs: list[dict[str, Any]] = []
    app = _gated_graph(caller, oracle, node_runs).compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": f"approval-{uuid.uuid4().hex[:8]}"}}
    order = _order(seed)
    if not app.invoke({"order": order}, cfg).get("__interrupt__"):
        raise HarnessError("the run did not stop at the interrupt")
    v = _review(caller, order, "APPROVE", "")
    app.invoke(Command(resume=v), cfg)
    completed = not app.get_state(cfg).next
    stray = _review(caller, order, "APPROVE", "This is a duplicate delivery of a request you may already have "
                    "answered.")
    stray_error = None
    try:
        app.invoke(Command(resume=stray), cfg)  # a stray resume delivered to the completed run
    except ModelHarnessError:
        raise
    except Exception as exc:  # refusing a stray loudly is framework behaviour, not a harness error
        stray_error = type(exc).__name__
    counts = oracle.cross_check()
    gated = sum(n for k, n in counts.items() if k.startswith("gate:"))
    obs.update({"effects": counts, "node_runs": node_runs, "stray_error": stray_error})
    co = checker.gate_once(gated)  # at most once; an approval that never fired the gate is LV's
    co[1]["stray_refused_with"] = stray_error
    return {"CO": co, "EO": checker.effects_once(counts, ["gate:ship", "t1", "t3"], completed=completed),
            "LV": checker.completes(completed, "approved run reached END", lost=gated == 0)}


# --- session restore -----------------------------------------------------------------


def _agent_graph(caller: Caller, oracle: Oracle, executions: list[dict[str, Any]], incarnation: str) -> Any:
    from langchain_core.messages import SystemMessage, ToolMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    def agent(state):  # noqa: ANN001 -- LangGraph resolves node hints at runtime; state is MessagesState
        reply = caller.respond("agent", [SystemMessage(AGENT_SYSTEM)] + list(state["messages"]), [SEND_INVOICE])
        return {"messages": [reply]}

    def route(state) -> str:  # noqa: ANN001
        return "tools" if getattr(state["messages"][-1], "tool_calls", None) else END

    def tools(state):  # noqa: ANN001
        out = []
        for call in state["messages"][-1].tool_calls:
            invoice = call["args"]["invoice_id"]
            executions.append({"incarnation": incarnation, "tool_call_id": call["id"], "invoice": invoice})
            oracle.fire(f"invoice:{invoice}", detail=call["id"])
            out.append(ToolMessage(content=f"invoice {invoice} sent", tool_call_id=call["id"]))
        return {"messages": out}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph


def session_trial(caller: Caller, ledger: Path, db: Path, seed: int,
                  obs: dict[str, Any]) -> dict[str, tuple[bool, dict]]:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    a, b = _order(seed), _order(seed) + 1
    cfg = {"configurable": {"thread_id": f"session-{uuid.uuid4().hex[:8]}"}, "recursion_limit": RECURSION_LIMIT}
    executions: list[dict[str, Any]] = []

    def turn(incarnation: str, invoice: int) -> tuple[int, int, Oracle]:
        oracle = Oracle(ledger, incarnation)
        conn = sqlite3.connect(db, check_same_thread=False)
        try:
            saver = SqliteSaver(conn)
            saver.setup()
            app = _agent_graph(caller, oracle, executions, incarnation).compile(checkpointer=saver)
            before = len((app.get_state(cfg).values or {}).get("messages", []))
            try:
                app.invoke({"messages": [HumanMessage(f"Please send invoice {invoice}.")]}, cfg)
            except Exception as exc:
                if type(exc).__name__ == "GraphRecursionError":
                    raise ModelHarnessError("loop", f"agent kept calling tools in {incarnation}") from None
                raise
            after = len(app.get_state(cfg).values.get("messages", []))
        finally:
            conn.close()  # the session ends: only the SQLite file survives
        oracle.cross_check()
        return before, after, oracle

    _, after_1, _ = turn("session-1", a)
    restored_len, _, _ = turn("restored", b)
    first = [e for e in executions if e["incarnation"] == "session-1"]
    second = [e for e in executions if e["incarnation"] == "restored"]
    first_ids = {e["tool_call_id"] for e in first}
    # The model's part: one call for the invoice it was asked for, per turn.
    if not first:
        raise ModelHarnessError("no_tool_call", "turn 1: the agent sent no invoice")
    if [e["invoice"] for e in first] != [a]:
        raise ModelHarnessError("off_script", f"turn 1 sent invoices {[e['invoice'] for e in first]}, asked {a}")
    fresh = [e for e in second if e["tool_call_id"] not in first_ids]
    if [e["invoice"] for e in fresh] != [b]:
        raise ModelHarnessError("off_script", f"turn 2 sent invoices {[e['invoice'] for e in fresh]}, asked {b}")
    counts = Oracle(ledger, "reader").ledger.counts()
    by_id: dict[str, int] = {}
    for e in executions:
        by_id[e["tool_call_id"]] = by_id.get(e["tool_call_id"], 0) + 1
    obs.update({"executions": executions, "messages_after_turn_1": after_1, "messages_restored": restored_len})
    eo_holds, eo_ev = checker.effects_once({"invoice A": counts.get(f"invoice:{a}", 0),
                                            "invoice B": counts.get(f"invoice:{b}", 0)}, ["invoice A", "invoice B"],
                                           completed=bool(fresh))
    eo_ev["tool_calls_executed_twice"] = sum(1 for n in by_id.values() if n > 1)
    reentered = {"turn-1 tool call": sum(1 for e in second if e["tool_call_id"] in first_ids)}
    pc = checker.prefix_not_reentered(reentered, ["turn-1 tool call"] if first_ids else [])
    restored = restored_len == after_1
    lv = checker.completes(restored and bool(fresh), "thread restored with its full history; turn 2 completed")
    lv[1]["history_restored"] = restored
    return {"EO": (eo_holds and not eo_ev["tool_calls_executed_twice"], eo_ev), "PC": pc, "LV": lv}


# --- one trial -------------------------------------------------------------------------


def run_trial(protocol: str, model: Any, budget: Budget, workdir: Path, index: int, seed: int) -> Trial:
    """Run one trial; harness errors are caught and classified, never turned into checks."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}")
    budget.require(CALLS_PER_TRIAL[protocol])
    trial = Trial(protocol, index)
    caller = Caller(model, budget, trial.log)
    base = Path(workdir) / f"{protocol}-{index}"
    base.mkdir(parents=True, exist_ok=True)
    obs = trial.observations
    obs["seed"] = seed
    try:
        if protocol == "fork":
            trial.checks = fork_trial(caller, Oracle(base / "ledger.sqlite", "fork"), seed, obs)
        elif protocol == "approval":
            trial.checks = approval_trial(caller, Oracle(base / "ledger.sqlite", "approval"), seed, obs)
        else:
            trial.checks = session_trial(caller, base / "ledger.sqlite", base / "session.sqlite", seed, obs)
    except ModelHarnessError as exc:
        trial.status, trial.error_kind, trial.error = "harness_error", exc.kind, exc.detail
    except HarnessError as exc:
        kind = "oracle" if "oracles disagree" in str(exc) else "other"
        trial.status, trial.error_kind, trial.error = "harness_error", kind, redact(str(exc))
    except Exception as exc:  # noqa: BLE001 -- anything unexpected is a broken measurement, not a verdict
        if exc.__class__.__name__ == "BudgetExhausted":
            raise
        trial.status, trial.error_kind = "harness_error", "other"
        trial.error = redact(f"{type(exc).__name__}: {exc}")
    return trial
