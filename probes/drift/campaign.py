"""Version drift: every framework campaign at its pinned release and at its newest release.

Two probes per framework. ``<fw>.pin`` runs that framework's own campaign in the main
environment (the lock); ``<fw>.newest`` runs the *same campaign code, unchanged* in a
cached side environment holding the newest release (``targets.py``), exactly as a
user would: ``python -m probes run <campaign> [--quick]``, into a results directory of
its own (``RC_RUNS_DIR`` inside the probe's scratch directory, so nothing of this
machine's runs or of the reference is touched). Each probe keeps the verdict view the
framework campaign's checkers produced and the versions installed; drift itself sets
no label (its receipts carry no verdicts: the verdicts are the framework campaigns').
``report.py`` compares the two views per property and per path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.errors import HarnessError
from probes.core.receipt import ProbeResult


def _names() -> tuple[str, ...]:
    from probes.drift.targets import TARGETS

    return tuple(t.campaign for t in TARGETS)


PARAMS = (
    Param("frameworks", "list[str]", list(_names()), ["pydantic_graph"],
          "framework campaigns to run at the pin and at the newest release (rows of probes/drift/targets.py)",
          _names()),
    Param("profile", "str", "quick", "quick",
          "profile each framework campaign runs at, on both sides (quick: minutes; default: the paper's bounds, "
          "about half an hour per framework and side)", ("quick", "default")),
    Param("seed", "int", 0, 0, "base seed (recorded; each framework campaign uses its own seed parameter)"),
)


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    return [ProbeSpec(f"{fw}.{side}", {"campaign": fw, "side": side, "profile": params["profile"]})
            for fw in params["frameworks"] for side in ("pin", "newest")]


def side_env(campaign: str):
    from probes.core.envs import SideEnv
    from probes.drift.targets import by_campaign

    t = by_campaign(campaign)
    return SideEnv(f"drift-{t.campaign}-{t.newest}", t.requirements())


def _installed_here(names: list[str]) -> dict[str, str | None]:
    import importlib.metadata as md

    out: dict[str, str | None] = {}
    for n in names:
        try:
            out[n] = md.version(n)
        except md.PackageNotFoundError:
            out[n] = None
    return out


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    from probes import PROJECT_ROOT, campaigns
    from probes.core.receipt import read_index
    from probes.drift.targets import by_campaign

    name, side = spec.args["campaign"], spec.args["side"]
    target = by_campaign(name)
    packages = sorted({*campaigns.get(name).packages, target.dist})
    metrics: dict[str, Any] = {}
    try:
        if side == "pin":
            python = sys.executable
            installed = _installed_here(packages)
        else:
            env = side_env(name)
            t0 = time.monotonic()
            env.ensure()
            metrics["env_seconds"] = round(time.monotonic() - t0, 3)
            python = str(env.python)
            installed = env.versions(packages)
        runs = ctx.workdir / "runs"
        child = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME", "RC_RENDER_FROM")}
        child.update(PYTHONPATH=str(PROJECT_ROOT), RC_RUNS_DIR=str(runs), RC_NO_PROGRESS="1")
        cmd = [python, "-m", "probes", "run", name] + (["--quick"] if spec.args["profile"] == "quick" else [])
        t0 = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, env=child, cwd=str(PROJECT_ROOT))
        metrics["run_seconds"] = round(time.monotonic() - t0, 3)
        dirs = sorted(p for p in (runs / name).glob("*") if p.is_dir()) if (runs / name).exists() else []
        if proc.returncode not in (0, 1) or not dirs or read_index(dirs[-1]) is None:
            raise HarnessError(f"`{' '.join(cmd[1:])}` ({side}, {installed.get(target.dist)}) exited "
                               f"{proc.returncode} without a complete run: {proc.stderr.strip()[-900:]}")
        directory = dirs[-1]
        view = json.loads((directory / "verdicts.json").read_text())
        index = read_index(directory) or {}
    except HarnessError as exc:
        return ProbeResult(observations={"campaign": name, "side": side}, metrics=metrics,
                           harness_errors=[str(exc)])
    inner_errors = index.get("harness_errors") or []
    observations = {"campaign": name, "side": side, "release": installed.get(target.dist), "installed": installed,
                    "profile": spec.args["profile"], "verdicts": view["probes"],
                    "inner_harness_errors": inner_errors, "params": index.get("params", {})}
    # A framework run with harness errors measured nothing for those probes: surface them.
    errors = [f"{name} at {installed.get(target.dist)}: {e}" for e in inner_errors]
    return ProbeResult(observations=observations, metrics=metrics, harness_errors=errors)


CAMPAIGN = Campaign(
    name="drift",
    title="Version drift: each framework at its pin and at its newest release",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    packages=("crewai", "llama-index-workflows", "pydantic-graph", "autogen-agentchat", "autogen-core", "dbos",
              "langgraph", "pydantic"),
    sources=("probes/crewai", "probes/llamaindex", "probes/pydantic_graph", "probes/autogen", "probes/dbos"),
    # Every framework campaign twice (pin and newest): run with ./reproduce.sh --all or --only drift.
    in_default_run=False,
)
