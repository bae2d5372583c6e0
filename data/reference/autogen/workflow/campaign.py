"""AutoGen AgentChat 0.7.5 campaign: save/load around a tool effect, tampered state, kills per turn.

AgentChat has no durable execution: the caller checkpoints with ``save_state()``
between runs and recovers with ``load_state()`` into a new agent. So the questions
are (1) does loading and continuing a saved state re-fire an effect (EO), (2) is a
tampered state refused at ``load_state`` (the paper: the only framework of the five
that refuses tampered state loudly) -- and which type-valid forgeries pass, and (3)
what a SIGKILL at each point of each turn costs when the caller recovers from the
last saved state in a fresh process.
"""

from __future__ import annotations

from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.checker import Property, Subject, completes, effects_once, prefix_not_reentered
from probes.core.errors import HarnessError
from probes.core.steps import ProtocolSteps
from probes.core.receipt import ProbeResult, Receipt

NAME = "autogen"
SUBJECT = Subject("autogen", "json-file")
# Tampered durable state is behaviour the paper did not measure: its own matrix row.
TAMPERED = Subject("autogen · tampered state", "json-file")
WORKLOAD = "probes.autogen.workload"
CHILD_TIMEOUT = 180.0
ORDERS = ["o1", "o2", "o3"]
KILL_POINTS = ("before-effect", "after-effect", "after-save")
AGENT_TAMPERS = ("structural", "wrong-content-type", "removed-context", "wrong-version",
                 "rewound-history", "forged-unanswered-call")  # mirrors workload (kept import-free)
TEAM_TAMPERS = ("team-unknown-thread-type", "rewound-speaker", "speaker-out-of-range")
FAMILIES = ("restore", "tamper", "kill")

PARAMS = (
    Param("seed", "int", 0, 0, "campaign seed (recorded; the protocols use no randomness)"),
    Param("reps", "int", 3, 1, "repetitions of every protocol", minimum=1),
    Param("families", "list[str]", list(FAMILIES), list(FAMILIES), "protocol families", FAMILIES),
    Param("kill_turns", "list[int]", [1, 2, 3], [2], "turns (1..3) at which a SIGKILL is injected", (1, 2, 3)),
    Param("kill_points", "list[str]", list(KILL_POINTS), list(KILL_POINTS), "where in a turn to kill", KILL_POINTS),
)


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    specs = []
    for rep in range(1, params["reps"] + 1):
        if "restore" in params["families"]:
            specs.append(ProbeSpec(f"restore.rep{rep}", {"family": "restore", "rep": rep}))
        if "tamper" in params["families"]:
            specs.append(ProbeSpec(f"tamper.rep{rep}", {"family": "tamper", "rep": rep}))
        if "kill" in params["families"]:
            for turn in params["kill_turns"]:
                for point in KILL_POINTS:
                    if point in params["kill_points"]:
                        specs.append(ProbeSpec(f"kill.turn{turn}.{point}.rep{rep}",
                                               {"family": "kill", "turn": turn, "point": point, "rep": rep}))
    return sorted(specs, key=lambda s: s.id)


class _Probe(ProtocolSteps):
    def __init__(self, ctx: ProbeContext) -> None:
        super().__init__(WORKLOAD, ctx.workdir, CHILD_TIMEOUT)
        self.state_file = ctx.workdir / "agent-state.json"
        self.team_file = ctx.workdir / "team-state.json"


def _etype(info: Mapping[str, Any] | None) -> str | None:
    return None if not info else info["type"]


def _restore(p: _Probe) -> list:
    """One turn, save_state; load into a new agent and continue -- twice, in two processes."""
    p.child("session", "first", state_file=str(p.state_file), orders=["o1"])
    shapes = [p.child("restore", f"restore-{i}", state_file=str(p.state_file)).result["messages"] for i in (1, 2)]
    ok, ev = effects_once(p.ledger.counts(), ["charge:o1"], completed=True)  # every child ran its turn to the end
    ev = {**ev, "restored_run_messages": shapes}
    return [SUBJECT.not_applicable(
        Property.FI, "save-load:double-restore",
        "load_state overwrites an agent or team with a saved state and the run continues with a new task: no "
        "resume value addressed to an answered interrupt, so nothing that could declare FORK or RETRY"),
            SUBJECT.verdict(Property.EO, "save-load:double-restore", ok, ev,
                            f"state loaded into two new agents in two processes and continued: effects "
                            f"{ev['effect_counts']}")]


def _tamper(p: _Probe) -> list:
    """Tamper the saved agent and team states; is each refused at load_state, and what runs if not?"""
    p.child("session", "first", state_file=str(p.state_file), orders=["o1"])
    p.child("team_session", "team-first", state_file=str(p.team_file), order="o2")
    baseline = {
        "agent": p.child("restore", "untampered-agent", state_file=str(p.state_file)).result["messages"],
        "team": p.child("restore", "untampered-team", state_file=str(p.team_file), team=True).result["messages"],
    }
    verdicts = []
    for kind, team in [(k, False) for k in AGENT_TAMPERS] + [(k, True) for k in TEAM_TAMPERS]:
        inc = f"tamper-{kind}"
        def restore(kind: str = kind, team: bool = team, inc: str = inc) -> tuple[str | None, str, Any]:
            r = p.child("restore", inc, state_file=str(p.team_file if team else p.state_file), tamper_kind=kind,
                        team=team).result
            return _etype(r["error"]), r["stage"], r["messages"]

        verdicts.append(p.tampered_restore(TAMPERED, kind, inc, restore, {
            "target": "team" if team else "agent",
            "untampered_run_messages": baseline["team" if team else "agent"]}))
    return verdicts


def _kill(p: _Probe, turn: int, point: str) -> list:
    """SIGKILL at ``point`` of turn ``turn``; recover from the last saved state in a fresh process."""
    order = ORDERS[turn - 1]
    p.child("session", "first", park_at=f"{order}.{point}", state_file=str(p.state_file), orders=ORDERS)
    rec = p.child("session", "recover", state_file=str(p.state_file), orders=ORDERS).result
    total, after = p.ledger.counts(), p.ledger.counts("recover")
    saved_turns = rec["resumed_at_turn"]
    durable = [f"charge:{o}" for o in ORDERS[:saved_turns]]
    completed = len(rec["turn_messages"]) == len(ORDERS) - saved_turns  # the recovery ran every turn left
    eo_ok, eo_ev = effects_once(total, [f"charge:{o}" for o in ORDERS], completed=completed)
    lv_ok, lv_ev = completes(completed, f"the recovered session ran {len(rec['turn_messages'])} turn(s) after "
                                        f"resuming at turn {saved_turns}")
    pc_ok, pc_ev = prefix_not_reentered({k: after.get(k, 0) for k in durable}, durable)
    eo_ev = {**eo_ev, "killed_turn": turn, "turns_in_saved_state": saved_turns}
    return [
        SUBJECT.verdict(Property.EO, f"kill:{point}", eo_ok, eo_ev,
                        f"killed in turn {turn} {point.replace('-', ' ')}; the saved state held {saved_turns} "
                        f"turn(s); after recovery effects {eo_ev['effect_counts']}"),
        SUBJECT.verdict(Property.PC, f"kill:{point}", pc_ok, pc_ev,
                        f"turns in the saved state re-run after recovery: {pc_ev['reentered'] or 'none'}"),
        SUBJECT.verdict(Property.LV, f"kill:{point}", lv_ok, lv_ev, lv_ev["why"] or lv_ev["detail"]),
    ]


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    p = _Probe(ctx)
    result = ProbeResult(observations=p.observations)
    family = spec.args["family"]
    try:
        if family == "restore":
            result.verdicts = _restore(p)
        elif family == "tamper":
            result.verdicts = _tamper(p)
        else:
            result.verdicts = _kill(p, spec.args["turn"], spec.args["point"])
    except HarnessError as exc:
        result.verdicts = []
        result.harness_errors.append(str(exc))
    p.observations["ledger_rows"] = [list(r) for r in p.ledger.rows()]
    result.metrics["child_seconds"] = {k: v["seconds"] for k, v in p.observations["children"].items()}
    return result


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    """``autogen.tamper``: was tampered state refused at ``load_state``, and which kinds were not.

    Refused or accepted is read from each tamper verdict's evidence (``error``: the
    exception the restore raised, ``stage``: where), not from its label, so the
    sentence says what AutoGen did with every kind of edit in every repetition.
    """
    from probes.headline import Measured

    tampers = [v for r in receipts for v in r.verdicts if v.path.startswith("tamper:")]
    structural = [v for v in tampers if v.path == "tamper:structural"]
    if not structural:
        return {"autogen.tamper": "no tamper probe in these receipts"}
    rejected = all(v.evidence.get("stage") == "load" and v.evidence.get("error") for v in structural)
    by_kind: dict[str, list[Any]] = {}
    for v in tampers:
        by_kind.setdefault(v.path.removeprefix("tamper:"), []).append(v)
    refused = {k: sorted({str(v.evidence.get("stage")) for v in vs}) for k, vs in by_kind.items()
               if all(v.evidence.get("error") for v in vs)}
    accepted = sorted(k for k, vs in by_kind.items() if any(not v.evidence.get("error") for v in vs))
    value = {"rejected": rejected, "reps": len(structural), "kinds": len(by_kind),
             "refused": sorted(refused), "accepted_silently": [f"tamper:{k}" for k in accepted]}
    accepted_probes = sorted({r.probe for r in receipts for v in r.verdicts
                              if v.path.removeprefix("tamper:") in accepted and not v.evidence.get("error")})

    def where(stages: list[str]) -> str:
        return " / ".join("load_state" if s == "load" else f"the {s} after load_state" for s in stages)

    refused_text = ", ".join(f"{k} (at {where(s)})" for k, s in sorted(refused.items()))
    contradiction = (f"of {len(by_kind)} kinds of tampered state, {len(accepted)} were loaded by load_state without any "
                     f"error in at least one of {len(structural)} repetition(s) ({', '.join(accepted)}; "
                     f"{len(accepted_probes)} probe(s)) and {len(refused)} were refused in every repetition: "
                     f"{refused_text or 'none'}") if accepted else ""
    return {"autogen.tamper": Measured(value, compare_keys=("rejected",),
                                       receipts=tuple(r.probe for r in receipts),
                                       contradicted_by=tuple(f"tamper:{k}" for k in accepted),
                                       contradiction=contradiction)}


CAMPAIGN = Campaign(
    name=NAME,
    title="AutoGen AgentChat: save_state / load_state, tampered state, kills per turn",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    headlines=headlines,
    packages=('autogen-agentchat', 'autogen-core'),
    description=__doc__ or "",
)
