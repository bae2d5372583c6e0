"""The ``live`` campaign: the deterministic LangGraph protocols under real model traffic.

Cells are (model, protocol); each cell is one probe running ``trials`` trials plus one
*control* trial with the scripted model (the deterministic verdict on record beside
the live one). Providers: ``anthropic`` and ``openai`` through their official
LangChain clients, ``openai_compatible`` (any OpenAI-compatible ``base_url``, a local
server counts), and ``scripted`` (offline plumbing check; never a live result).

No key, no traffic: a provider whose key variable is unset gets one ``not_run.<provider>``
receipt saying "not run: no key" (no verdicts) and nothing is sent anywhere. The
per-run cap on calls and tokens is printed before the first call.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec, seed_for
from probes.core.receipt import ProbeResult
from probes.studies.live.providers import (PROVIDER_CHOICES, ModelRef, has_key, key_env_name,
                                   parse_models, public_base_url)

PROTOCOLS = ("fork", "approval", "session")  # mirrors probes.studies.live.protocols (kept import-free here)
NOT_RUN = "not run: no key"
NOT_RUN_HEADLINE = "not run here: needs API keys"
LIVE_PROVIDERS = ("anthropic", "openai", "openai_compatible")

PARAMS = (
    Param("provider", "str", "per_model", "per_model",
          "who serves the models: anthropic, openai, openai_compatible (needs base_url), scripted (offline "
          "plumbing check), or per_model (each models entry is 'provider:model')", PROVIDER_CHOICES),
    Param("models", "list[str]",
          ["anthropic:claude-sonnet-4-5", "anthropic:claude-haiku-4-5", "openai:gpt-4.1", "openai:gpt-4.1-mini"],
          ["anthropic:claude-sonnet-4-5", "anthropic:claude-haiku-4-5", "openai:gpt-4.1", "openai:gpt-4.1-mini"],
          "model ids; 'provider:model' entries pick their own provider (the paper used two Claude and two GPT "
          "models; these ids are this artifact's choice)"),
    Param("protocols", "list[str]", list(PROTOCOLS), list(PROTOCOLS),
          "which live protocols each model runs: fork (#6663), approval (interrupt approval + stray resume), "
          "session (LangGraph thread restore with a tool-calling agent)", PROTOCOLS),
    Param("trials", "int", 40, 2, "trials per cell (model x protocol)", minimum=1),
    Param("seed", "int", 0, 0, "base seed: order/invoice numbers per trial; passed as `seed` to OpenAI clients"),
    Param("timeout_s", "float", 60.0, 30.0, "per-request timeout of the model client (seconds)", minimum=0, exclusive=True),
    Param("base_url", "str", "", "", "base URL of an OpenAI-compatible endpoint (provider openai_compatible)"),
    Param("api_key_env", "str", "OPENAI_COMPATIBLE_API_KEY", "OPENAI_COMPATIBLE_API_KEY",
          "name of the environment variable holding the openai_compatible key ('' = the endpoint needs none)"),
    Param("max_calls", "int", 2400, 120, "per-run cap on model calls (printed before the run; the run stops "
          "before exceeding it)", minimum=1),
    Param("max_tokens", "int", 2_000_000, 100_000, "per-run cap on input + output tokens", minimum=1),
)

# The budget of the current run: reset when a run plans its probes (once per run).
_budget: Any = None


def _refs(params: Mapping[str, Any]) -> list[ModelRef]:
    return parse_models(str(params["provider"]), list(params["models"]))


def cell_id(protocol: str, ref: ModelRef) -> str:
    return f"{protocol}.{ref.slug}"


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    """Cells for providers with a key; one not-run probe per provider without one."""
    global _budget
    from probes.studies.live.calls import Budget

    refs = _refs(params)
    protocols = [p for p in PROTOCOLS if p in params["protocols"]]
    specs: list[ProbeSpec] = []
    missing: dict[str, list[str]] = {}
    kept_all: set[str] = set()
    for ref in refs:
        for protocol in protocols:
            args = {"kind": "cell", "provider": ref.provider, "model": ref.model, "protocol": protocol,
                    "trials": int(params["trials"])}
            if has_key(ref.provider, params):
                specs.append(ProbeSpec(cell_id(protocol, ref), args))
            else:
                missing.setdefault(ref.provider, []).append(cell_id(protocol, ref))
    for provider, cells in missing.items():
        kept = _kept_cells(params, cells)
        kept_all.update(kept)
        specs.extend(ProbeSpec(c, {"kind": "cell", **_cell_args(c, refs, params)}) for c in kept)
        specs.append(ProbeSpec(f"not_run.{provider}", {"kind": "not_run", "provider": provider,
                                                         "key_env": _key_hint(provider, params),
                                                         "cells": sorted(set(cells) - set(kept))}))
    _budget = Budget(int(params["max_calls"]), int(params["max_tokens"]))
    cells = [s for s in specs if s.args.get("kind") == "cell" and s.id not in kept_all]
    if missing:
        print(f"live: not run -- no key for {', '.join(sorted(missing))} "
              f"({', '.join(_key_hint(p, params) for p in sorted(missing))} unset); nothing is sent to those APIs.")
    if cells:
        from probes.studies.live.protocols import CALLS_PER_TRIAL

        worst = sum(int(params["trials"]) * CALLS_PER_TRIAL[s.args["protocol"]] for s in cells)
        remote = sum(1 for s in cells if s.args["provider"] in LIVE_PROVIDERS)
        print(f"live: {len(cells)} cell(s) ({remote} on a model API) x {params['trials']} trials; cap per run: "
              f"max_calls={params['max_calls']}, max_tokens={params['max_tokens']} "
              f"(worst case for this plan: {worst} calls)")
    return specs


def _key_hint(provider: str, params: Mapping[str, Any]) -> str:
    if provider == "openai_compatible" and not params.get("base_url"):
        return "base_url"
    return key_env_name(provider, params) or "-"


def _cell_args(cell: str, refs: list[ModelRef], params: Mapping[str, Any]) -> dict[str, Any]:
    protocol = cell.split(".", 1)[0]
    ref = next(r for r in refs if cell_id(protocol, r) == cell)
    return {"provider": ref.provider, "model": ref.model, "protocol": protocol, "trials": int(params["trials"])}


def _kept_cells(params: Mapping[str, Any], cells: list[str]) -> list[str]:
    """Cells already measured for these parameters (with a key, earlier): keep, don't erase.

    Without this, a reader without keys rerunning the book would delete measured
    receipts as "no longer planned".
    """
    from probes import campaigns
    from probes.core.campaign import results_dir
    from probes.core.receipt import read_index
    from probes.core.runs import campaign_fingerprint

    campaign = campaigns.get("live")
    try:
        index = read_index(results_dir(campaign, params))
    except Exception:  # noqa: BLE001 -- a broken index just means nothing to keep
        return []
    if not index or index.get("fingerprint") != campaign_fingerprint(campaign, params):
        return []
    return [c for c in cells if c in index.get("receipts", {})]


def _no_tracing() -> Any:
    """LangSmith tracing off for the trials, whatever the environment says."""
    import contextlib

    try:
        from langsmith import tracing_context
    except ImportError:  # pragma: no cover
        return contextlib.nullcontext()
    return tracing_context(enabled=False)


def needs_rerun(params: Mapping[str, Any], receipts_root: Any = None) -> bool:
    """True when the receipts on disk say "not run: no key" for a provider that now has a key.

    The fingerprint (parameters + package versions) cannot see keys, so a driver that
    skips "complete" campaigns would otherwise never run the live cells once a key is set.
    """
    from probes.core.campaign import campaign_dir
    from probes.core.receipt import load_campaign

    try:
        receipts = load_campaign(campaign_dir("live", receipts_root))
    except Exception:  # noqa: BLE001 -- unreadable receipts: rerunning is the safe answer
        return True
    return any(r.observations.get("status") == NOT_RUN and r.observations.get("cells_not_run")
               and has_key(r.observations["provider"], params) for r in receipts)


def _not_run(provider: str, key_env: str, cells: list[str]) -> ProbeResult:
    return ProbeResult(observations={"status": NOT_RUN, "provider": provider, "key_env": key_env,
                                     "cells_not_run": cells,
                                     "note": "no model API was contacted; no verdicts recorded"})


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """One cell (or a not-run record); LangSmith tracing is off: prompts go to the provider only."""
    if spec.args["kind"] == "not_run":
        return _not_run(spec.args["provider"], spec.args["key_env"], list(spec.args["cells"]))
    with _no_tracing():
        return _run_cell(spec, ctx)


def _run_cell(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    global _budget
    args = spec.args
    if args["kind"] == "not_run":
        return _not_run(args["provider"], args["key_env"], list(args["cells"]))
    if not has_key(args["provider"], ctx.params):
        return _not_run(args["provider"], _key_hint(args["provider"], ctx.params), [spec.id])
    from probes import citations
    from probes.core.checker import Property
    from probes.studies.live.calls import Budget
    from probes.studies.live.protocols import PATHS, PROPERTIES, run_trial
    from probes.studies.live.providers import build_model, client_versions
    from probes.studies.live.scripted import ScriptedChatModel
    from probes.studies.live.stats import tally_trials

    if _budget is None:
        _budget = Budget(int(ctx.params["max_calls"]), int(ctx.params["max_tokens"]))
    ref = ModelRef(args["provider"], args["model"])
    protocol = args["protocol"]
    control = run_trial(protocol, ScriptedChatModel(), Budget(10**6, 10**9), ctx.workdir / "control", -1,
                        seed_for(ctx.seed, "control"))
    model = build_model(ref, ctx.params, ctx.seed)
    trials = [run_trial(protocol, model, _budget, ctx.workdir, i, seed_for(ctx.seed, i))
              for i in range(int(args["trials"]))]
    records = [t.to_json() for t in trials]
    tally = tally_trials(records)
    valid = [t for t in trials if t.status == "ok"]
    control_violation = control.violation
    subject = citations.subject("langgraph", "sqlite" if protocol == "session" else "memory")
    verdicts = []
    for prop in PROPERTIES[protocol]:
        if not valid:
            break  # every trial was a harness error: nothing to say about the framework
        holds = all(t.checks[prop][0] for t in valid)
        patterns = sorted({json.dumps(t.checks[prop][1], sort_keys=True) for t in valid})
        evidence = {"distinct_trial_evidence": [json.loads(p) for p in patterns],
                    "control_scripted_model_holds": control.checks[prop][0] if control.status == "ok" else None}
        verdicts.append(subject.verdict(Property(prop), f"{PATHS[protocol]} [{ref.label}]", holds, evidence,
                                        _summary(protocol, prop, holds, ref)))
    metrics = {**tally.row(), "runs": tally.runs, "error_kind_counts": dict(sorted(tally.error_kinds.items())),
               "agree_with_control": sum(1 for t in valid if t.violation == control_violation),
               "control_violation": control_violation, "budget_after_cell": _budget.snapshot(),
               "calls": sum(t.log.calls for t in trials),
               "input_tokens": sum(t.log.input_tokens for t in trials),
               "output_tokens": sum(t.log.output_tokens for t in trials)}
    observations = {"status": "ran", "provider": ref.provider, "model": ref.model, "protocol": protocol,
                    "live": ref.provider in LIVE_PROVIDERS, "base_url": public_base_url(str(ctx.params["base_url"]))
                    if ref.provider == "openai_compatible" else "", "clients": client_versions(),
                    "control": control.to_json(), "trials": records}
    errors = [f"trial {t.index}: {t.error_kind}: {t.error}" for t in trials if t.status != "ok"]
    if control.status != "ok":
        errors.append(f"control: {control.error_kind}: {control.error}")
    return ProbeResult(observations, verdicts, metrics, errors)


_SUMMARIES = {
    ("FD", False): "the fork (resume False at the interrupt checkpoint) was served the first resume's outcome",
    ("FD", True): "the fork observed f(False)",
    ("CO", True): "the gated effect fired once; the stray resume on the completed run was inert",
    ("CO", False): "the gated effect did not fire exactly once: the stray resume fired it again, or the answer "
                   "was never consumed",
    ("EO", True): "every effect fired exactly once",
    ("EO", False): "an effect fired more (or fewer) times than once",
    ("LV", True): "the run completed",
    ("LV", False): "the run did not complete (or the restored thread lost its history)",
    ("PC", True): "no turn-1 tool call ran again after the restore",
    ("PC", False): "a turn-1 tool call ran again after the restore",
}


def _summary(protocol: str, prop: str, holds: bool, ref: ModelRef) -> str:
    who = "the scripted model (offline plumbing check)" if ref.provider == "scripted" else ref.label
    when = "held in every valid trial" if holds else "violated in at least one valid trial"
    return f"{prop} {when} with {who}: {_SUMMARIES[(prop, holds)]}"


CAMPAIGN = Campaign(
    name="live",
    title="Live reproduction: the deterministic verdicts under real model traffic",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    packages=('langgraph', 'langgraph-checkpoint', 'langgraph-checkpoint-sqlite', 'langgraph-checkpoint-postgres', 'langchain-core', 'langchain-anthropic', 'langchain-openai'),
    needs_rerun=needs_rerun,
)
