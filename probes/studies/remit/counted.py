"""Counted cost of the benchmark arms: instructions and durable-write syscalls per protocol.

Why: on a shared machine the wall-clock A/A arm moves by several per cent, more than the
cost targets, so the targets are judged on counts that do not depend on load:

* **instructions** under valgrind's cachegrind (``--cache-sim=no``, ``PYTHONHASHSEED``
  fixed). Each run is a valgrind process of its own that imports and warms up, then forks
  a child of 0 protocols and a child of N protocols (``bench_worker.count_run``); the
  N-child's total minus the 0-child's, over N, is that run's instructions per protocol
  (start-up subtracted). Runs are separate processes because that is where the spread is. ``cg_annotate`` of the same two children gives the
  per-function share (CPython's C functions: cachegrind sees the interpreter, not
  Python functions).
* **durable-write syscalls** (``fsync``, ``fdatasync``, ``write``, ``pwrite64``; and
  ``sendto``, a PostgreSQL client's requests to its server) under ``strace -f -c``, an
  N-protocol process minus a 0-protocol process of the same arm, over N.
* **bytecodes** (no valgrind): the Python bytecodes each function executes per protocol,
  on every thread, over one session of N protocols; the wrapper's own functions listed
  one by one. This is where an arm's extra instructions come from at the level a reader
  of REMIT's code can act on, which cachegrind's C-level view cannot say.

PostgreSQL: only the client process (and its threads and children) is traced; the
server is not a descendant of it, so its work is excluded from both counts.
The workload is the benchmark's (``bench_worker.build`` / ``make_saver``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from probes import PROJECT_ROOT
from probes.studies.remit.bench import ARMS, WORKER

# counted arm -> worker arm: stock, each REMIT feature alone, every feature off, default, the gate, remit-contract
COUNT_ARMS: dict[str, str] = {
    "stock": ARMS["stock"],
    "remit_bare": ARMS["remit_bare"],
    "remit_fork": ARMS["remit_fork"],
    "remit_validator": ARMS["remit_validator"],
    "remit_gate_alone": "remit:" + json.dumps({"fork_intent": False, "validator": False, "consume_gate": True}),
    "remit_default": ARMS["remit_default"],
    "remit_gate": ARMS["remit_gate"],
    "rc_default": ARMS["rc_default"],
    "rc_gate": ARMS["rc_gate"],
}
COUNT_DOC = {
    "remit_gate_alone": "wrap(consume_gate=True), fork intent and validator off: the gate alone",
}
DURABLE = ("fsync", "fdatasync", "write", "pwrite64")
TRACED = DURABLE + ("sendto",)
HASH_SEED = "0"
# Targets (issue 28): instructions per protocol / stock's, and no arm with more durable writes than stock.
INSTRUCTION_TARGETS = {"remit_bare": 1.005, "remit_default": 1.01, "remit_gate": 1.03}
ANNOTATION_FLOOR = 1.0  # functions kept in a receipt: those costing at least this many instructions per protocol


class CountError(RuntimeError):
    """A counting run failed: the message says which tool and why."""


# ---- arithmetic (pure) ---------------------------------------------------------------------


def per_protocol(total_with: float, total_without: float, protocols: int) -> float:
    """Start-up subtracted: (count of a run of ``protocols``) minus (count of a run of none), over ``protocols``."""
    if protocols <= 0:
        raise ValueError(f"protocols must be positive, not {protocols}")
    return (total_with - total_without) / protocols


def median_range(values: Sequence[float]) -> dict[str, float]:
    """The median of several runs and their range."""
    if not values:
        raise ValueError("median_range of no runs")
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


# ---- tool output parsers (pure) -------------------------------------------------------------


def cachegrind_total(path: Path) -> int:
    """A cachegrind output file's instruction total (its ``summary:`` line)."""
    for line in path.read_text().splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise CountError(f"{path.name}: no summary line (cachegrind did not finish)")


_CG_LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$")


def parse_cg_annotate(text: str) -> dict[str, int]:
    """``cg_annotate``'s per-function table -> {"file.c:function": Ir} (file reduced to its base name)."""
    out: dict[str, int] = {}
    in_table = False
    for line in text.splitlines():
        if line.strip().startswith("Ir") and "file:function" in line:
            in_table = True
            continue
        if not in_table:
            continue
        if line.startswith("-----"):
            if out:
                break
            continue
        m = _CG_LINE.match(line)
        if not m:
            if out and not line.strip():
                break
            continue
        where = m.group(2).strip()
        file, _, fn = where.rpartition(":")
        key = f"{os.path.basename(file)}:{fn}" if file else where
        out[key] = out.get(key, 0) + int(m.group(1).replace(",", ""))
    return out


def parse_strace_summary(text: str) -> dict[str, int]:
    """``strace -c``'s table -> {syscall: calls}."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 5 or parts[-1] in ("syscall", "total") or not re.fullmatch(r"\d+", parts[3]):
            continue
        out[parts[-1]] = int(parts[3])
    return out


# ---- running the tools ----------------------------------------------------------------------


def worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH", "")]))
    env["PYTHONHASHSEED"] = HASH_SEED
    return env


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise CountError(f"{name} is not installed (Debian: apt-get install -y valgrind strace)")
    return path


def _worker_cmd(arm: str, backend: str, location: str, sizes: Sequence[int]) -> list[str]:
    return [sys.executable, str(WORKER), "--count", COUNT_ARMS[arm], backend, location,
            ",".join(str(s) for s in sizes)]


def _children(stdout: str, sizes: Sequence[int]) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    if len(rows) != len(sizes):
        raise CountError(f"expected {len(sizes)} counting children, got {len(rows)}: {stdout[-300:]!r}")
    for row, size in zip(rows, sizes):
        if "error" in row or not row.get("ok") or row.get("fired") != row.get("protocols") or row["size"] != size:
            raise CountError(f"counting child failed: {row}")
    return rows


def _location(backend: str, location: str, workdir: Path, tag: str) -> str:
    if backend != "sqlite":
        return location
    d = workdir / f"db-{tag}"
    d.mkdir(parents=True, exist_ok=True)
    return str(d)


def count_instructions(arm: str, backend: str, location: str, workdir: Path, protocols: int,
                       runs: int) -> dict[str, Any]:
    """``runs`` valgrind processes, each its own interpreter: a 0-protocol child and a child of ``protocols``;
    per-run figures, and the first process's per-function annotation.

    Why one process per run: two processes of the same arm differ by about 1 % (stock, 20 protocols:
    9.57 to 9.69 M per protocol, with or without address randomisation), because LangGraph's own work
    per protocol varies between processes, while children forked from one warmed process agree within
    0.1 %. Runs that share a parent would state a range far narrower than the real spread."""
    valgrind, annotate = _tool("valgrind"), _tool("cg_annotate")

    def functions(path: Path) -> dict[str, int]:
        res = subprocess.run([annotate, "--threshold=0", "--auto=no", "--show-percs=no", str(path)],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise CountError(f"cg_annotate {path.name}: {res.stderr[-300:]!r}")
        return parse_cg_annotate(res.stdout)

    per_run: list[float] = []
    startup: list[int] = []
    delta: dict[str, float] = {}
    for r in range(runs):
        out_dir = workdir / f"cg-{arm}-{r}"
        out_dir.mkdir(parents=True, exist_ok=True)
        sizes = [0, protocols]
        cmd = [valgrind, "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out_dir}/cg.%p",
               *_worker_cmd(arm, backend, _location(backend, location, workdir, f"cg-{arm}-{r}"), sizes)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=worker_env(), cwd=str(PROJECT_ROOT))
        if proc.returncode != 0:
            raise CountError(f"cachegrind run {r + 1} of {arm} exited {proc.returncode}: {proc.stderr[-400:]!r}")
        files = [out_dir / f"cg.{k['pid']}" for k in _children(proc.stdout, sizes)]
        zero, full = (cachegrind_total(f) for f in files)
        per_run.append(per_protocol(full, zero, protocols))
        startup.append(zero)
        if r == 0:
            base, first = functions(files[0]), functions(files[1])
            delta = {fn: per_protocol(first.get(fn, 0), base.get(fn, 0), protocols) for fn in set(base) | set(first)}
        shutil.rmtree(out_dir, ignore_errors=True)
    top = dict(sorted(((fn, v) for fn, v in delta.items() if abs(v) >= ANNOTATION_FLOOR), key=lambda kv: -abs(kv[1])))
    return {"startup_instructions": startup, "per_run": [round(x, 1) for x in per_run], "processes": runs,
            "annotation_run": 1, "annotation": {fn: round(v, 1) for fn, v in top.items()},
            "annotated_total": round(sum(delta.values()), 1)}


def count_syscalls(arm: str, backend: str, location: str, workdir: Path, protocols: int, runs: int) -> dict[str, Any]:
    """One strace process of 0 protocols, then ``runs`` of ``protocols``: per-run calls per protocol."""
    strace = _tool("strace")
    counts = []
    for r, size in enumerate([0] + [protocols] * runs):
        out = workdir / f"strace-{arm}-{r}.txt"
        cmd = [strace, "-f", "-c", "-o", str(out), "-e", "trace=" + ",".join(TRACED),
               *_worker_cmd(arm, backend, _location(backend, location, workdir, f"st-{arm}-{r}"), [size])]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=worker_env(), cwd=str(PROJECT_ROOT))
        if proc.returncode != 0:
            raise CountError(f"strace run of {arm} exited {proc.returncode}: {proc.stderr[-400:]!r}")
        _children(proc.stdout, [size])
        counts.append(parse_strace_summary(out.read_text()))
        out.unlink()
    return {"startup": counts[0],
            "per_run": {name: [round(per_protocol(c.get(name, 0), counts[0].get(name, 0), protocols), 3)
                               for c in counts[1:]] for name in TRACED}}


# Code of the wrapper under test: this project's REMIT and remit-contract (import name ``remit``).
OWN_CODE = ("remit_ref/", "remit/")


def own_bytecodes(opcodes: Mapping[str, int], protocols: int) -> dict[str, Any]:
    """Per protocol: every function's bytecodes in total, and the wrapper's own functions one by one."""
    own = {fn: n / protocols for fn, n in opcodes.items() if fn.startswith(OWN_CODE)}
    return {"total": round(sum(opcodes.values()) / protocols, 1), "own_total": round(sum(own.values()), 1),
            "own": {fn: round(v, 1) for fn, v in sorted(own.items(), key=lambda kv: (-kv[1], kv[0]))}}


def count_bytecodes(arm: str, backend: str, location: str, workdir: Path, protocols: int) -> dict[str, Any]:
    """One traced process (no valgrind): the Python bytecodes per protocol, in all and per function of the
    wrapper's own code (``bench_worker.opcode_run``): where the arm's extra instructions come from."""
    cmd = [sys.executable, str(WORKER), "--opcodes", COUNT_ARMS[arm], backend,
           _location(backend, location, workdir, f"op-{arm}"), str(protocols)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=worker_env(), cwd=str(PROJECT_ROOT))
    if proc.returncode != 0:
        raise CountError(f"bytecode run of {arm} exited {proc.returncode}: {proc.stderr[-400:]!r}")
    [row] = _children(proc.stdout, [protocols])
    return own_bytecodes(row["opcodes"], row["protocols"])


def probe_counted(arm: str, backend: str, location: str, workdir: Path,
                  params: Mapping[str, Any]) -> dict[str, Any]:
    """Both counts of one arm on one backend (the campaign's ``counted.<backend>.<arm>`` probe)."""
    protocols, runs = params["counted_protocols"], params["counted_runs"]
    return {"arm": arm, "backend": backend, "protocols": protocols, "runs": runs, "hash_seed": HASH_SEED,
            "worker_arm": COUNT_ARMS[arm],
            "instructions": count_instructions(arm, backend, location, workdir, protocols, runs),
            "syscalls": count_syscalls(arm, backend, location, workdir, protocols, runs),
            "bytecodes": count_bytecodes(arm, backend, location, workdir, protocols),
            "postgres_server": "excluded (not a descendant of the traced client)" if backend == "postgres" else None}


# ---- the table, from receipts -------------------------------------------------------------------


def counted_table(receipts: Sequence[Any]) -> dict[str, Any]:
    """Per (backend, arm): instructions per protocol (median of runs, range), its ratio to the same
    backend's stock median (range: each run over stock's median), syscalls per protocol (medians)."""
    metrics = [m for r in receipts if r.probe.startswith("counted.") and r.metrics
               for m in r.metrics.get("arms", {}).values()]
    out: dict[str, Any] = {}
    for m in metrics:
        ins = median_range(m["instructions"]["per_run"])
        calls = {name: v for name, v in m["syscalls"]["per_run"].items() if v}
        sys_med = {name: statistics.median(v) for name, v in calls.items()}
        out.setdefault(m["backend"], {})[m["arm"]] = {
            "protocols": m["protocols"], "runs": m["runs"], "instructions": ins, "syscalls": sys_med,
            "syscalls_range": {name: [min(v), max(v)] for name, v in calls.items()},
            "per_run": m["instructions"]["per_run"], "annotation": m["instructions"]["annotation"],
            "bytecodes": m.get("bytecodes")}  # receipts before the bytecode count have none
    for arms in out.values():
        stock = arms.get("stock")
        for arm, e in arms.items():
            if stock is None:
                continue
            s = stock["instructions"]["median"]
            e["ratio"] = e["instructions"]["median"] / s
            e["ratio_range"] = [e["instructions"]["min"] / s, e["instructions"]["max"] / s]
            e["extra_syscalls"] = {n: e["syscalls"].get(n, 0) - stock["syscalls"].get(n, 0) for n in DURABLE}
    return out


def function_delta(table: Mapping[str, Any], backend: str, arm: str, baseline: str = "stock") -> dict[str, float]:
    """Per-protocol instructions by C function, ``arm`` minus ``baseline``, largest first (from both annotations)."""
    a, b = table[backend][arm]["annotation"], table[backend][baseline]["annotation"]
    delta = {fn: a.get(fn, 0.0) - b.get(fn, 0.0) for fn in set(a) | set(b)}
    return dict(sorted(delta.items(), key=lambda kv: -kv[1]))
