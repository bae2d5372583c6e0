"""Version drift: every framework campaign at its pinned release and at other releases.

One probe per campaign and release (``targets.py``): ``<campaign>.pin`` runs the
campaign as it is (the lock, or the campaign's own side environment); ``<campaign>.patch``
(the newest patch of the pinned minor, where that is another release) and
``<campaign>.newest`` run *the same campaign code, unchanged* with the framework at
that release, in a cached side environment, exactly as a user would:
``python -m probes run <campaign> [--quick]``, into a results directory of its own
(``RC_RUNS_DIR`` inside the probe's scratch directory, so nothing of this machine's
runs or of the reference is touched).

How the release is swapped depends on the campaign. A paper campaign runs whole in the
side environment. A kit campaign keeps its harness here and runs its adapter's
operations with the side environment's interpreter (``RC_KIT_PYTHON``,
``probes.kit.suite``): for a campaign whose framework already lives in a side
environment of its own (OpenAI Agents, Google ADK) that environment is the one
replaced, never the main one. Each receipt of the run records the versions that ran,
and drift checks them against the release it asked for.

A release without the API the campaign's code imports (``Target.needs``, checked in its
side environment) is n/a with the target's reason; nothing is run there. Each probe
keeps the verdict view the framework campaign's checkers produced and the versions
installed; drift itself sets no label (its receipts carry no verdicts). ``report.py``
compares every other release with the pin, per verdict and per property.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.errors import HarnessError
from probes.core.receipt import ProbeResult
from probes.studies.drift.targets import TARGETS, Target


def _names() -> tuple[str, ...]:
    return tuple(t.campaign for t in TARGETS)


PARAMS = (
    Param("frameworks", "list[str]", list(_names()), ["pydantic_graph"],
          "framework campaigns to run at the pin and at its other releases (rows of probes/studies/drift/targets.py)",
          _names()),
    Param("profile", "str", "quick", "quick",
          "profile each framework campaign runs at, on every side (quick: minutes; default: the paper's bounds, "
          "about half an hour per framework and side)", ("quick", "default")),
    Param("seed", "int", 0, 0, "base seed (recorded; each framework campaign uses its own seed parameter)"),
)


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    from probes.studies.drift.targets import by_campaign

    return [ProbeSpec(f"{fw}.{side}", {"campaign": fw, "side": side, "release": release, "profile": params["profile"]})
            for fw in params["frameworks"] for side, release in by_campaign(fw).sides()]


def side_env(target: Target, release: str):
    """The cached environment holding ``target.dist`` at ``release`` (shared by the targets of one framework)."""
    from probes.core.envs import SideEnv

    return SideEnv(f"drift-{target.dist}-{release}", target.requirements(release))


_MISSING = """import importlib, json, sys
missing = []
for need in json.loads(sys.argv[1]):
    module, _, attr = need.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in filter(None, attr.split(".")):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        missing.append(f"{need} ({type(exc).__name__})")
print(json.dumps(missing))
"""


def missing_api(python: str, needs: tuple[str, ...]) -> list[str]:
    """Which of ``needs`` (``module`` or ``module:attribute``) the interpreter cannot import."""
    if not needs:
        return []
    proc = subprocess.run([python, "-c", _MISSING, json.dumps(list(needs))], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        raise HarnessError(f"checking {', '.join(needs)} failed: {proc.stderr.strip()[-400:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _installed_here(names: list[str]) -> dict[str, str | None]:
    import importlib.metadata as md

    out: dict[str, str | None] = {}
    for n in names:
        try:
            out[n] = md.version(n)
        except md.PackageNotFoundError:
            out[n] = None
    return out


def _run(cmd: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    """Run the framework campaign in a process group of its own; on a timeout, Ctrl-C or SIGTERM of
    drift, interrupt it (it cleans up its children and servers), then kill whatever of its group is left."""
    from probes import PROJECT_ROOT

    def terminated(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, terminated) if main else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=str(PROJECT_ROOT), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException as exc:
        _stop_group(proc)
        if isinstance(exc, subprocess.TimeoutExpired):
            raise HarnessError(f"`{' '.join(cmd[1:])}` ran past {timeout:.0f} s") from None
        raise
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _stop_group(proc: subprocess.Popen) -> None:
    """SIGINT to the campaign's process group, up to 30 s to unwind, then SIGKILL to what is left of it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=10)


def _ran_versions(directory) -> dict[str, str | None]:
    """The framework versions a kit run's adapter operations reported (every receipt that ran one)."""
    from probes.core.receipt import load_campaign

    out: dict[str, str | None] = {}
    for r in load_campaign(directory, verify=False):
        out.update(r.observations.get("framework_versions") or {})
    return out


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    from probes import PROJECT_ROOT, campaigns
    from probes.core.receipt import read_index
    from probes.studies.drift.targets import by_campaign
    from probes.kit.suite import KIT_ADAPTERS, KIT_ENVS, KIT_PYTHON

    name, side, release = spec.args["campaign"], spec.args["side"], spec.args["release"]
    target = by_campaign(name)
    packages = sorted({*campaigns.get(name).packages, target.dist})
    kit = name in KIT_ADAPTERS
    observations: dict[str, Any] = {"campaign": name, "side": side, "release": release, "dist": target.dist,
                                    "kind": "kit" if kit else "paper", "profile": spec.args["profile"],
                                    "releases": {"pin": target.pin, "patch": target.patch, "newest": target.newest}}
    metrics: dict[str, Any] = {}
    child = {k: v for k, v in os.environ.items()
             if k not in ("VIRTUAL_ENV", "PYTHONHOME", "RC_RENDER_FROM", KIT_PYTHON)}
    runs = ctx.workdir / "runs"
    child.update(PYTHONPATH=str(PROJECT_ROOT), RC_RUNS_DIR=str(runs), RC_NO_PROGRESS="1")
    try:
        python, installed = sys.executable, {}
        if side == "pin":
            own = KIT_ENVS.get(name)  # a kit campaign's own side environment, where its pin lives
            installed = own.ensure().versions(packages) if own else _installed_here(packages)
            if missing_api(str(own.python) if own else sys.executable, target.needs):
                raise HarnessError(f"{name}: the pinned {target.dist} {release} lacks what probes/studies/drift/targets.py "
                                   f"says the campaign needs ({', '.join(target.needs)}): fix `needs` there")
        else:
            env = side_env(target, release)
            t0 = time.monotonic()
            env.ensure()
            metrics["env_seconds"] = round(time.monotonic() - t0, 3)
            installed = env.versions(packages)
            missing = missing_api(str(env.python), target.needs)
            if missing:
                return ProbeResult(observations={**observations, "installed": installed, "missing": missing,
                                                 "na": f"not in {target.dist} {release}: {', '.join(missing)}. "
                                                       f"{target.gone}".strip()}, metrics=metrics)
            if kit:
                child[KIT_PYTHON] = str(env.python)
            else:
                python = str(env.python)
        cmd = [python, "-m", "probes", "run", name] + (["--quick"] if spec.args["profile"] == "quick" else [])
        t0 = time.monotonic()
        proc = _run(cmd, child, 3600 if spec.args["profile"] == "quick" else 4 * 3600)
        metrics["run_seconds"] = round(time.monotonic() - t0, 3)
        dirs = sorted(p for p in (runs / name).glob("*") if p.is_dir()) if (runs / name).exists() else []
        if proc.returncode not in (0, 1) or not dirs or read_index(dirs[-1]) is None:
            raise HarnessError(f"`{' '.join(cmd[1:])}` ({side}, {release}) exited "
                               f"{proc.returncode} without a complete run: {proc.stderr.strip()[-900:]}")
        directory = dirs[-1]
        if kit:  # what the adapter's operations ran with, as each receipt recorded it
            installed = {**installed, **_ran_versions(directory)}
        if installed.get(target.dist) != release:
            raise HarnessError(f"{name} {side}: asked for {target.dist} {release}, ran "
                               f"{installed.get(target.dist)} (update probes/studies/drift/targets.py)")
        view = json.loads((directory / "verdicts.json").read_text())
        index = read_index(directory) or {}
    except HarnessError as exc:
        return ProbeResult(observations=observations, metrics=metrics, harness_errors=[str(exc)])
    # the index counts them; the receipts hold the texts
    inner_errors = _receipt_errors(directory) if index.get("harness_errors") else []
    observations.update(installed=installed, verdicts=view["probes"], inner_harness_errors=inner_errors,
                        params=index.get("params", {}))
    # A framework run with harness errors measured nothing for those probes: surface them.
    errors = [f"{name} at {release}: {e}" for e in inner_errors]
    return ProbeResult(observations=observations, metrics=metrics, harness_errors=errors)


def _receipt_errors(directory) -> list[str]:
    from probes.core.receipt import load_campaign

    return [f"{r.probe}: {e}" for r in load_campaign(directory, verify=False) for e in r.harness_errors]


def _sources() -> tuple[str, ...]:
    from probes import campaigns

    return ("probes/kit", *sorted({campaigns.package_dir(t.campaign) for t in TARGETS}))


CAMPAIGN = Campaign(
    name="drift",
    title="Version drift: each framework at its pin, the newest patch of its pinned minor and its newest release",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    packages=tuple(sorted({t.dist for t in TARGETS} | {"autogen-core", "langgraph-checkpoint",
                                                       "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres",
                                                       "pydantic"})),
    sources=_sources(),
    # Every framework campaign two or three times: run with ./reproduce.sh --all or --only drift.
    in_default_run=False,
)
