"""Cross-version resume (MV): a run paused under one release of a framework, resumed under another.

A user upgrades (or rolls back) a framework while runs wait for a human: the paused run was
written by release X, the answer is delivered by a process running release Y. The property
(issue 27): the resumed run behaves as a same-release resume does, or refuses loudly; silent
misbehaviour (an effect again, a lost answer, a wrong outcome) is a violation.

Each cell is the kit's two-step workflow through the framework's kit adapter, unchanged:
``start`` runs with X's interpreter, the answer with Y's (both against the same store), and the
history is judged by the kit's one judge (EO, CO, LV on the path ``mv:X->Y``, labelled from the
adapter's citations). X->X cells are the controls: the same-release resume each pair is read
against (``probes.studies.mv.report``). Releases come from version drift's side environments
(``probes.studies.drift``: ``drift-<dist>-<release>``, shared with it; the pin runs where the kit runs it):
LangGraph across ``langgraph_releases``, every other kit framework between its pin and its
newest release (``probes/studies/drift/targets.py``). A framework whose newest release is its pin has no
pair: n/a, with the date the releases were read. A release without the API the adapter imports
(``Target.needs``) is n/a with drift's reason. Each receipt records the versions the two
processes actually ran (an interpreter holding another release than asked is a harness error). An
answering process of the other release that never ends is the pair's behaviour (recorded as an
ERROR "hung" and judged), a hang of a same-release control a harness error.
"""

from __future__ import annotations

import subprocess
import sys
from itertools import product
from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.checker import Property
from probes.core.errors import HarnessError
from probes.core.receipt import ProbeResult

PROPS = (Property.EO, Property.CO, Property.LV)
LANGGRAPH = "langgraph_kit"
LANGGRAPH_RELEASES = ["1.0.10", "1.1.6", "1.1.10", "1.2.9", "1.2.13", "1.2.24"]  # the atlas's, pin 1.2.9


def kit_frameworks() -> tuple[str, ...]:
    """Drift's targets that are kit campaigns (the ones an adapter runs operation by operation)."""
    from probes import campaigns
    from probes.studies.drift.targets import TARGETS
    from probes.kit.suite import KIT_ADAPTERS

    for t in TARGETS:
        campaigns.get(t.campaign)  # registers a kit campaign's adapter
    return tuple(t.campaign for t in TARGETS if t.campaign in KIT_ADAPTERS)


PARAMS = (
    Param("frameworks", "list[str]", list(kit_frameworks()), [LANGGRAPH],
          "kit campaigns to resume across releases (LangGraph across langgraph_releases; the others pin <-> newest)",
          kit_frameworks()),
    Param("langgraph_releases", "list[str]", LANGGRAPH_RELEASES, ["1.2.9", "1.2.24"],
          "LangGraph releases: every ordered pair is a cell (X->X the controls)"),
    Param("seed", "int", 0, 0, "campaign seed (recorded; the protocol uses no randomness)"),
)


def releases(campaign: str, params: Mapping[str, Any]) -> list[str]:
    from probes.studies.drift.targets import by_campaign

    if campaign == LANGGRAPH:
        return list(dict.fromkeys(params["langgraph_releases"]))
    t = by_campaign(campaign)
    return list(dict.fromkeys((t.pin, t.newest)))


def check(params: Mapping[str, Any]) -> None:
    from probes.studies.atlas.envs import check_release
    from probes.core.errors import UsageError

    if LANGGRAPH in params["frameworks"] and len(set(params["langgraph_releases"])) < 2:
        raise UsageError("langgraph_releases: give at least two releases (a cross-version cell needs two)")
    for release in params["langgraph_releases"]:
        if not release[0].isdigit():
            raise UsageError(f"langgraph_releases: {release!r} is not a release number like 1.2.9")
        check_release(release)


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    specs = []
    for fw in params["frameworks"]:
        rel = releases(fw, params)
        if len(rel) < 2:
            specs.append(ProbeSpec(f"{fw}.only-{rel[0]}", {"campaign": fw, "from": rel[0], "to": rel[0], "na": True}))
            continue
        specs += [ProbeSpec(f"{fw}.{a}-to-{b}", {"campaign": fw, "from": a, "to": b}) for a, b in product(rel, rel)]
    return specs


def _python(campaign: str, release: str) -> tuple[str | None, list[str]]:
    """The interpreter holding ``release`` for the campaign's adapter, and what of ``needs`` it lacks;
    a harness error if it holds another release."""
    from probes.studies.drift.campaign import missing_api, side_env
    from probes.studies.drift.targets import by_campaign
    from probes.kit.suite import KIT_ENVS, operations_python

    t = by_campaign(campaign)
    python = operations_python(KIT_ENVS.get(campaign)) if release == t.pin else str(side_env(t, release).ensure().python)
    found = subprocess.run([python or sys.executable, "-c", f"import importlib.metadata as m; print(m.version({t.dist!r}))"],
                           capture_output=True, text=True, timeout=120).stdout.strip()
    if found != release:
        raise HarnessError(f"{campaign}: the interpreter for {t.dist} {release} holds {found or 'nothing'}")
    return python, missing_api(python or sys.executable, t.needs)


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    from probes.studies.drift.targets import CHECKED, by_campaign
    from probes.kit.protocols import Probe, Run, Target
    from probes.kit.runtime import STEPS
    from probes.kit.suite import KIT_ADAPTERS, KIT_SERVICES, adapter_class, store_factory

    fw, a, b = spec.args["campaign"], spec.args["from"], spec.args["to"]
    target = by_campaign(fw)
    adapter = KIT_ADAPTERS[fw]
    cls = adapter_class(adapter)
    backend = cls.backends[0]
    result = ProbeResult()
    store = store_factory(ctx, backend)
    path = f"mv:{a}->{b}"
    probe = Probe(Target(adapter, cls, backend), ctx.workdir, store)
    result.observations = probe.observations

    def not_applicable(why: str) -> ProbeResult:
        result.verdicts = [probe.judge.not_applicable(prop, path, why) for prop in PROPS]
        result.observations["judged"] = probe.judge.calls
        return result

    if spec.args.get("na"):
        return not_applicable(f"{target.dist} has no release other than the pin {a} (newest on {CHECKED}): "
                              "no pair to resume across")
    try:
        pythons = {}
        for release in (a, b):
            python, missing = _python(fw, release)
            if missing:
                return not_applicable(f"not in {target.dist} {release}: {', '.join(missing)}. {target.gone}".strip())
            pythons[release] = python
        services = KIT_SERVICES.get(fw)
        environ = tuple(sorted((services(ctx) if services else {}).items()))
        first = Run(Target(adapter, cls, backend, pythons[a], 120.0, environ), probe.root, "run", store("run"),
                    probe.history, probe.ledger, probe.observations)
        second = Run(Target(adapter, cls, backend, pythons[b], 120.0, environ), probe.root, "run", first.store,
                     probe.history, probe.ledger, probe.observations)
        answer = cls.answers[0]
        paused = first.start()
        ran = {"start": dict(probe.observations.pop("framework_versions", {}))}
        # The other release's process that never ends (DBOS 2.27.0 answering a run 3.4.0 paused logs a
        # TypeError in its recovery thread and waits) is silent: a behaviour of the pair, not of the
        # harness -- unless the same release hangs too (the control is then a harness error).
        second.hang_is_behaviour = a != b
        done = second.answer("answer", paused.get("handle"), answer)
        ran["answer"] = dict(probe.observations.pop("framework_versions", {}))
        probe.observations["mv"] = {"from": a, "to": b, "dist": target.dist, "ran": ran,
                                    "status": done.get("status"), "error": done.get("error")}
        h = probe.read()
        what = f"paused under {target.dist} {a}, answered under {b}"
        result.verdicts = [probe.judge.effects_once(path, h, what), probe.judge.gated_once(path, h, what),
                           probe.judge.live(path, h, what, cls.result(answer))]
        result.observations["history"] = h.to_json()
        result.observations["workflow"] = {"steps": list(STEPS), "gate": STEPS[-1]}
        result.observations["judged"] = probe.judge.calls
    except HarnessError as exc:
        result.harness_errors.append(str(exc))
    return result


def _sources() -> tuple[str, ...]:
    from probes import campaigns

    return ("probes/kit", "probes/studies/drift", *sorted({campaigns.package_dir(fw) for fw in kit_frameworks()}))


CAMPAIGN = Campaign(
    name="mv",
    title="Cross-version resume: paused under one release, answered under another",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    check=check,
    sources=_sources(),
    in_default_run=False,  # side environments per release: ./reproduce.sh --all or --only mv
)
