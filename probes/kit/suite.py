"""A framework's campaign from its adapter: the protocols as probes, run into receipts.

``kit_campaign`` turns an adapter into a ``Campaign`` (``probes.core.campaign``): the
parameters choose protocols, crash points, recovery modes and bounds; ``plan`` lists one
probe per protocol cell; ``run_probe`` runs it with ``probes.kit.protocols`` and returns
its verdicts and history. A framework that cannot share the main environment names a
``SideEnv``: its operations then run with that environment's interpreter, and each
receipt records the versions that actually ran there.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from typing import Any, Callable, Mapping

from probes.core import race
from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.envs import SideEnv
from probes.core.errors import HarnessError, UsageError
from probes.core.receipt import ProbeResult
from probes.kit.adapter import Adapter
from probes.kit.judge import visibility_verdicts
from probes.kit.partition import PARTITION_POINTS
from probes.kit.protocols import (CALLBACK_CELLS, HANDLER_CELLS, NESTED_RUNS, PARALLEL_RUNS, PROTOCOLS, STALL_POINTS,
                                  Probe, Target)
from probes.kit.runtime import CODE_CHANGES, JOIN_POINTS, SAVE_POINTS, STEP_POINTS, STEPS

PROTOCOL_NAMES = tuple(PROTOCOLS)
KIT_ADAPTERS: dict[str, str] = {}  # campaign name -> its adapter (module:Class), filled by kit_campaign
KIT_ENVS: dict[str, SideEnv] = {}  # campaign name -> its own side environment, for a campaign that has one
KIT_SERVICES: dict[str, "Services"] = {}  # campaign name -> the servers its adapter's processes talk to, if any
# Version drift (probes/studies/drift) measures a kit campaign at another release of its framework: this
# process stays the harness, the adapter's operations run with the interpreter named here (a side
# environment of drift's holding that release) instead of the campaign's own. Its runs go to a
# results directory of drift's (RC_RUNS_DIR), never beside the pinned runs (the fingerprint cannot
# see the swap; each receipt records the versions that ran).
KIT_PYTHON = "RC_KIT_PYTHON"


def adapter_class(spec: str) -> type[Adapter]:
    """Import ``module:Class`` (adapter modules import their framework only inside methods)."""
    module, _, attr = spec.partition(":")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise UsageError(f"cannot import adapter {spec!r} ({exc}); give it as module:Class on PYTHONPATH") from None
    if not (isinstance(cls, type) and issubclass(cls, Adapter)):
        raise UsageError(f"{spec} is not a subclass of probes.kit.adapter.Adapter")
    return cls


def kit_params(cls: type[Adapter], protocols: tuple[str, ...] = PROTOCOL_NAMES) -> tuple[Param, ...]:
    modes = tuple(cls.recovery_modes)
    return (
        Param("seed", "int", 0, 0, "campaign seed (recorded; the protocols use no randomness)"),
        Param("reps", "int", 1, 1, "repetitions of every probe", minimum=1),
        Param("backends", "list[str]", list(cls.backends), list(cls.backends[:1]), "durable stores to measure",
              tuple(cls.backends)),
        Param("protocols", "list[str]", list(protocols), list(protocols), "protocols to run", protocols),
        Param("crash_points", "list[str]", list(STEP_POINTS), ["s1.effect", "s2.effect"],
              "where in the steps the crash protocol crashes", STEP_POINTS),
        Param("crash_hows", "list[str]", ["kill", "raise"], ["kill", "raise"],
              "how it crashes: SIGKILL at a barrier, or an exception raised once", ("kill", "raise")),
        Param("recovery_modes", "list[str]", list(modes), list(modes[:1]), "recoveries the documentation gives",
              modes),
        Param("answers_n", "list[int]", [2, 4, 8], [3], "how many times the same pause is answered in a row",
              minimum=2),
        Param("race_k", "list[int]", [2, 4], [2], "how many processes answer the same pause at once", minimum=2),
        # A race cell runs fresh trials until decided (probes.core.race): a violation in some trial
        # (after race_min_trials), or a ✓ whose Wilson 95 % bound of the per-trial violation rate is at
        # most race_threshold (0 of 35 trials at 10 %); else, its budget spent, undecided (?).
        Param("race_threshold", "float", race.DEFAULT_THRESHOLD, race.DEFAULT_THRESHOLD,
              "largest Wilson 95 % upper bound of the per-trial violation rate a race ✓ may state",
              minimum=0.0, maximum=1.0, exclusive=True),
        Param("race_min_trials", "int", race.DEFAULT_MIN_TRIALS, 1,
              "trials every race cell runs before it may stop (a violation then states k of n)", minimum=1),
        Param("race_max_trials", "int", race.DEFAULT_MAX_TRIALS, 3,
              "trial budget of a race cell: spent with the bound above the threshold, the cell is undecided",
              minimum=1, maximum=10_000),
        Param("race_max_seconds", "float", race.DEFAULT_MAX_SECONDS, 60.0,
              "time budget of a race cell (seconds of trials): spent with the bound above the threshold, "
              "the cell is undecided", minimum=0.0, exclusive=True, maximum=86_400.0),
        Param("tamper_limit", "int", 0, 2, "edits per tamper kind (0: every edit of the document)", minimum=0),
        Param("save_points", "list[str]", list(SAVE_POINTS), ["save.write"], "kill points in the framework's save",
              SAVE_POINTS),
        Param("savekill_cap", "int", 0, 0, "most saves killed per save point, the first ones a kill reaches "
              "(0: every save of a clean run)", minimum=0),
        # exhaustive: one probe per crash_hows x recovery_modes, each over the points a traced baseline
        # reached; with more than the cap, that many spread evenly from the first point to the last
        Param("stall_points", "list[str]", list(STALL_POINTS), ["s2.consumed"],
              "where in the answered step the stall and delete protocols freeze the worker (SIGSTOP) before "
              "another process takes the run over or the run is deleted", STALL_POINTS),
        Param("nested_runs", "list[str]", list(NESTED_RUNS), list(NESTED_RUNS),
              "the protocols whose cells the nested protocol runs on the workflow with a nested pausing step",
              tuple(NESTED_RUNS)),
        # the handler and callback protocols (issue 27 item 1): each cell one run, the first recovery mode only
        Param("handler_cells", "list[str]", list(HANDLER_CELLS), ["clean", "h.effect"],
              "the handler protocol's cells: no fault, or a SIGKILL in the error handler's step", HANDLER_CELLS),
        Param("callback_cells", "list[str]", list(CALLBACK_CELLS), ["clean", "park-kill"],
              "the callback protocol's cells: no fault, killed at the pause, or a SIGKILL after the approval "
              "callback's effect", CALLBACK_CELLS),
        Param("parallel_runs", "list[str]", list(PARALLEL_RUNS), list(PARALLEL_RUNS),
              "the parallel protocol's cells: one branch answered, then a recovery (partly); both answered and the "
              "join killed (crash)", tuple(PARALLEL_RUNS)),
        Param("parallel_points", "list[str]", list(JOIN_POINTS), ["join.effect"],
              "where in the join (the fan-in step after the two paused branches) the parallel protocol's crash "
              "cell SIGKILLs the process", JOIN_POINTS),
        Param("code_changes", "list[str]", list(CODE_CHANGES), ["paused-step-renamed", "steps-swapped"],
              "the code changes the change protocol deploys between a pause and its answer", CODE_CHANGES),
        Param("partition_points", "list[str]", ["s2.consumed"], ["s2.consumed"],
              "where in the answered step the partition protocol cuts the answering process's link to the store",
              PARTITION_POINTS),
        Param("partition_seconds", "float", 30.0, 20.0, "the longest the link stays cut while the other racer "
              "answers: it comes back as soon as that racer has ended, or after this long whatever it did (a racer "
              "blocked on the cut-off one)", minimum=0.5, maximum=120.0),
        Param("rd_points", "list[str]", ["s2.begin", "s2.effect"], ["s2.begin"],
              "where in the steps the rd protocol SIGKILLs the run before copying its durable state", STEP_POINTS),
        Param("rd_copies", "int", 2, 2, "byte-identical copies of the crashed store the rd protocol recovers, "
              "each in processes of its own", minimum=2, maximum=16),
        Param("exhaustive_cap", "int", 100, 4, "most crash points the exhaustive protocol measures per probe "
              "(of those a traced baseline reached: every step boundary and save write)", minimum=1),
    )


# The smoke profile: the quick profile cut to one cell per protocol, for a pull-request check
# (``resume-contract run ... --smoke``, ``pytest --resume-contract-smoke``). Every protocol runs
# once; a race gets one trial, so its cell is a violation or undecided, never a ✓.
SMOKE: dict[str, Any] = {"crash_points": ["s2.effect"], "crash_hows": ["kill"], "answers_n": [2], "race_k": [2],
                         "race_min_trials": 1, "race_max_trials": 1, "tamper_limit": 1, "save_points": ["save.write"],
                         "savekill_cap": 1, "exhaustive_cap": 1,
                         "stall_points": ["s2.consumed"], "code_changes": ["paused-step-renamed"],
                         "rd_points": ["s2.begin"], "rd_copies": 2, "nested_runs": ["crash"],
                         "parallel_runs": ["crash"], "parallel_points": ["join.effect"],
                         "handler_cells": ["h.effect"], "callback_cells": ["clean"]}


def kit_check(params: Mapping[str, Any]) -> None:
    """Combinations one parameter cannot judge, before any work."""
    if params["race_min_trials"] > params["race_max_trials"]:
        raise UsageError(f"race_min_trials ({params['race_min_trials']}) must not exceed race_max_trials "
                         f"({params['race_max_trials']})")


def _cells(params: Mapping[str, Any], protocols: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
    """The cells (id, arguments) of the selected ``protocols`` on one backend, one repetition."""
    cells: list[tuple[str, dict[str, Any]]] = []
    for proto in protocols:
        if proto not in params["protocols"]:
            continue
        if proto == "baseline":
            cells += [(f"baseline.a{i}", {"answer": i}) for i in (0, 1)]
        elif proto == "crash":
            cells += [(f"crash.{how}.{pt}.{mode}", {"how": how, "point": pt, "mode": mode})
                      for pt in STEP_POINTS if pt in params["crash_points"]
                      for how in params["crash_hows"] for mode in params["recovery_modes"]]
        elif proto == "answers":
            cells += [(f"answers.n{n}", {"n": n}) for n in params["answers_n"]]
        elif proto == "race":
            cells += [(f"race.k{k}", {"k": k, "threshold": params["race_threshold"],
                                      "min_trials": params["race_min_trials"],
                                      "max_trials": params["race_max_trials"],
                                      "max_seconds": params["race_max_seconds"]}) for k in params["race_k"]]
        elif proto == "tamper":
            cells += [(f"tamper.{kind}", {"kind": kind, "limit": params["tamper_limit"]})
                      for kind in ("structural", "typed")]
        elif proto == "exhaustive":
            cells += [(f"exhaustive.{how}.{mode}", {"how": how, "mode": mode, "cap": params["exhaustive_cap"]})
                      for how in params["crash_hows"] for mode in params["recovery_modes"]]
        elif proto in ("stall", "delete"):  # both freeze the worker inside the answered step
            cells += [(f"{proto}.{pt}.{mode}", {"point": pt, "mode": mode})
                      for pt in STALL_POINTS if pt in params["stall_points"] for mode in params["recovery_modes"]]
        elif proto == "change":
            cells += [(f"change.{kind}", {"kind": kind}) for kind in CODE_CHANGES if kind in params["code_changes"]]
        elif proto == "partition":
            cells += [(f"partition.{pt}", {"point": pt, "seconds": params["partition_seconds"]})
                      for pt in PARTITION_POINTS if pt in params["partition_points"]]
        elif proto == "rd":
            cells += [(f"rd.{pt}.{mode}", {"point": pt, "mode": mode, "copies": params["rd_copies"]})
                      for pt in STEP_POINTS if pt in params["rd_points"] for mode in params["recovery_modes"]]
        elif proto == "nested":  # the same cells as those protocols', on the nested workflow
            runs = params["nested_runs"]
            cells += [(f"nested.{cid}", {**args, "of": cid.split(".")[0]})
                      for cid, args in _cells({**params, "protocols": runs, "crash_points": [
                          pt for pt in params["crash_points"] if pt.startswith("s2.")]}, tuple(runs))]
        elif proto in ("handler", "callback"):  # one run per cell, recovered by the first recovery mode
            kinds = HANDLER_CELLS if proto == "handler" else CALLBACK_CELLS
            cells += [(f"{proto}.{at}", {"at": at, "mode": params["recovery_modes"][0]})
                      for at in kinds if at in params.get(f"{proto}_cells", kinds)]  # a hand-made plan: every cell
        elif proto == "parallel":  # one branch answered then a recovery; the join killed at each point
            runs, modes = params["parallel_runs"], params["recovery_modes"]
            cells += [(f"parallel.partly.{mode}", {"of": "partly", "mode": mode}) for mode in modes if "partly" in runs]
            cells += [(f"parallel.crash.{pt}.{mode}", {"of": "crash", "point": pt, "mode": mode})
                      for pt in JOIN_POINTS if pt in params["parallel_points"] and "crash" in runs for mode in modes]
        elif proto == "savekill":
            cells.append(("savekill", {"points": [p for p in SAVE_POINTS if p in params["save_points"]],
                                       "cap": params["savekill_cap"]}))
        else:
            cells.append((proto, {}))
    return cells


def kit_plan(params: Mapping[str, Any], protocols: tuple[str, ...] = PROTOCOL_NAMES) -> list[ProbeSpec]:
    specs: list[ProbeSpec] = []
    for backend in params["backends"]:
        cells = _cells(params, protocols)
        for rep in range(1, params["reps"] + 1):
            for cid, args in cells:
                specs.append(ProbeSpec(f"{cid}.{backend}.rep{rep}", {"protocol": cid.split(".")[0],
                                                                     "backend": backend, "rep": rep, **args}))
    return specs


# A campaign's servers for its adapter's processes (``ctx.stores.service``: started once, stopped at the
# campaign's end) -> the environment variables that tell those processes where they are.
Services = Callable[[ProbeContext], Mapping[str, str]]
Protocol = Callable[[Probe, dict[str, Any]], list[Any]]  # as in probes.kit.protocols: -> verdicts


def run_kit_probe(adapter: str, env: SideEnv | None, spec: ProbeSpec, ctx: ProbeContext,
                  timeout: float = 120.0, services: Services | None = None,
                  protocols: Mapping[str, Protocol] | None = None,
                  environ: Mapping[str, str] | None = None) -> ProbeResult:
    cls = adapter_class(adapter)
    result = ProbeResult()
    backend = spec.args["backend"]
    store = store_factory(ctx, backend)
    try:
        python = operations_python(env)
        own = cls.environment((ctx.shared or ctx.workdir) / f"{cls.framework}-environment")
        variables = tuple(sorted({**own, **(environ or {}), **(services(ctx) if services else {})}.items()))
        probe = Probe(Target(adapter, cls, backend, python, timeout, variables), ctx.workdir, store)
        result.observations = probe.observations
        if environ:
            result.observations["environ"] = dict(sorted(environ.items()))
        result.verdicts = {**PROTOCOLS, **(protocols or {})}[spec.args["protocol"]](probe, dict(spec.args))
        result.verdicts += visibility_verdicts(probe.judge, result.verdicts)  # VO: one checker, every protocol
        if "runs" not in result.observations:  # a protocol of isolated runs keeps each one's history there
            result.observations["history"] = probe.read().to_json()
        # for trace validation: the kit's workflow, unless the protocol ran another and said which (a variant's)
        result.observations.setdefault("workflow", {"steps": list(STEPS), "gate": STEPS[-1]})
        if probe.judge.calls:  # what decided the verdicts, for a re-judge (``probes.kit.judge.replay``)
            result.observations["judged"] = probe.judge.calls
    except HarnessError as exc:
        result.harness_errors.append(str(exc))
    return result


def store_factory(ctx: ProbeContext, backend: str) -> Callable[[str], str | None]:
    """Label -> a fresh durable store of the probe (SQLite file or PostgreSQL database), or None for
    a backend whose store the adapter keeps itself (a directory of files, memory)."""
    def store(label: str) -> str | None:
        if backend in ("sqlite", "postgres"):
            return ctx.stores.fresh(backend, label.replace("/", "-")).location
        return None
    return store


def operations_python(env: SideEnv | None) -> str | None:
    """The interpreter the adapter's operations run with: ``RC_KIT_PYTHON`` (drift), else the
    campaign's side environment, else this one (None)."""
    override = os.environ.get(KIT_PYTHON)
    if override:
        if not os.environ.get("RC_RUNS_DIR"):
            raise HarnessError(f"{KIT_PYTHON} swaps the framework's release; it needs a results directory of its "
                               "own (RC_RUNS_DIR), as version drift gives it")
        return override
    return str(env.ensure().python) if env else None


def kit_campaign(name: str, title: str, adapter: str, *, packages: tuple[str, ...] = (),
                 env: SideEnv | None = None, description: str = "", timeout: float = 120.0,
                 in_default_run: bool = False, services: Services | None = None,
                 protocols: Mapping[str, Protocol] | None = None,
                 defaults: Mapping[str, Any] | None = None, quick: Mapping[str, Any] | None = None,
                 environ: Mapping[str, str] | None = None) -> Campaign:
    """The campaign of one adapter. ``packages``: what the main process imports for it (fingerprint);
    left empty, the adapter's own declared ``packages`` (a third party's ``--adapter``: upgrading its
    framework changes the fingerprint). With a side environment ``env`` its pinned requirements
    are part of the campaign's sources instead. ``services``: servers the adapter's processes talk
    to (a durable-execution engine's), see ``Services``. ``protocols``: this framework's own
    protocols, run after the kit's (e.g. killing its server). ``defaults`` and ``quick``: the default
    and quick profiles' values of some parameters in place of the kit's (a paper campaign measures
    the paper's cells through the kit: the protocols its published values read, in the paper's
    default reproduction). ``environ``: the configuration every process of the adapter runs under, in
    environment variables the adapter reads (LangGraph's durability mode for the paper's campaign);
    recorded in each receipt's observations (``environ``) so a reader sees it.

    Frameworks measured with the kit are beyond the paper: by default they run with
    ``./reproduce.sh --all`` or by name, not in the paper's default reproduction.
    """
    cls = adapter_class(adapter)
    packages = packages or (tuple(cls.packages) if env is None else ())
    KIT_ADAPTERS[name] = adapter
    names = PROTOCOL_NAMES + tuple(protocols or {})
    if env is not None:
        KIT_ENVS[name] = env
    if services is not None:
        KIT_SERVICES[name] = services
    return Campaign(
        name=name, title=title, params=with_profiles(kit_params(cls, names), defaults or {}, quick or {}),
        plan=kit_plan if not protocols else (lambda params: kit_plan(params, names)),
        run_probe=lambda spec, ctx: run_kit_probe(adapter, env, spec, ctx, timeout, services, protocols, environ),
        description=description, packages=packages, sources=("probes/kit",) + adapter_sources(adapter),
        in_default_run=in_default_run, check=kit_check, chapter_template="kit",
    )


def with_profiles(params: tuple[Param, ...], defaults: Mapping[str, Any], quick: Mapping[str, Any]) -> tuple[Param, ...]:
    """``params`` with the default and quick values ``defaults`` and ``quick`` give (each name a parameter)."""
    unknown = sorted((set(defaults) | set(quick)) - {p.name for p in params})
    if unknown:
        raise ValueError(f"profile values for parameters the kit does not have: {unknown}")
    return tuple(dataclasses.replace(p, default=p.validate(defaults[p.name]) if p.name in defaults else p.default,
                                     quick=p.validate(quick[p.name]) if p.name in quick else p.quick)
                 for p in params)


def adapter_sources(adapter: str) -> tuple[str, ...]:
    """The adapter's own package, when it lives in this checkout (``probes/frameworks/google_adk`` for
    ``probes.frameworks.google_adk.adapter:...``): its code and its side environment's pinned
    requirements are then part of the campaign's fingerprint. An adapter from elsewhere
    is named by its ``module:Class`` in the campaign's parameters only."""
    from probes import PROJECT_ROOT

    package = adapter.partition(":")[0].rpartition(".")[0].replace(".", "/")
    return (package,) if package and (PROJECT_ROOT / package).is_dir() else ()
