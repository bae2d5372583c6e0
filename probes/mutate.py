"""Mutation testing of the verdict layer (and any other target) with cosmic-ray.

``./reproduce.sh mutate [TARGET ...]`` runs every ``mutation/<target>.toml`` (a
cosmic-ray configuration: the module to mutate and the test command that must kill its
mutants), prints killed / survived per target, lists every survivor, and exits 1 if a
survivor is not listed as equivalent in ``mutation/<target>.equivalent.json``.

Why a copy: cosmic-ray mutates the module *in place* while the tests run. Each target
runs in a private copy of the checkout (the tracked and untracked-but-not-ignored
files, as they are on disk), so an interrupted run never leaves a mutant in the
working tree; a target's mutants are shared out over ``--jobs`` copies run side by side.

Equivalent mutants. One class is recognised by rule, not listed by hand: a mutation
inside a type annotation (``Label | None`` -> ``Label + None``) changes nothing at run
time because every module here starts with ``from __future__ import annotations``
(annotations are never evaluated); those mutants are marked skipped before the run and
counted as "equivalent by rule". So are ``is``/``==`` and ``is not``/``!=`` swaps where one
side is ``None`` or an Enum member (``x is Label.NA``): both are singletons and Enum
equality is identity, so the two operators agree. Every other equivalent mutant is an entry of the
target's ``.equivalent.json``: ``{"operator", "definition", "code", "mutant", "why"}`` --
the cosmic-ray operator, the enclosing function, the source line and the mutated line
(both stripped), and why no test can tell the mutant from the original. Matching by code rather than line
number keeps the list valid while unrelated code moves.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probes.core.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
MUTATION_DIR = ROOT / "mutation"


@dataclass
class Survivor:
    operator: str
    definition: str | None
    line: int
    code: str
    diff: str
    why: str | None = None  # the equivalence reason, if listed
    module: str = ""  # the mutated file (a target may be a whole package)

    @property
    def mutant(self) -> str:
        """The mutated line as the diff shows it (stripped)."""
        return next((line[1:].strip() for line in self.diff.splitlines()
                     if line.startswith("+") and not line.startswith("+++")), "")


@dataclass
class TargetResult:
    name: str
    module: str
    total: int = 0
    killed: int = 0
    annotation: int = 0
    singleton: int = 0
    incompetent: int = 0
    survivors: list[Survivor] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    unused_equivalents: list[dict[str, Any]] = field(default_factory=list)

    @property
    def bad(self) -> list[Survivor]:
        return [s for s in self.survivors if s.why is None]

    @property
    def failed(self) -> bool:
        """A non-equivalent survivor, a mutant that could not be tested, or a broken run."""
        return bool(self.error or self.bad or self.incompetent)


def targets(names: list[str] | None = None, directory: Path = MUTATION_DIR) -> list[Path]:
    """The target configs to run (all of them without names); an unknown name is a usage error."""
    found = {p.stem: p for p in sorted(directory.glob("*.toml"))}
    if not found:
        raise UsageError(f"no mutation targets in {directory}: add <target>.toml there")
    if not names:
        return list(found.values())
    unknown = [n for n in names if n not in found]
    if unknown:
        raise UsageError(f"unknown mutation target(s) {', '.join(unknown)}; known: {', '.join(found)}")
    return [found[n] for n in names]


def load_equivalents(config: Path) -> list[dict[str, Any]]:
    path = config.with_suffix(".equivalent.json")
    if not path.exists():
        return []
    try:
        entries = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc}); fix the file") from None
    for e in entries:
        missing = {"operator", "code", "mutant", "why"} - set(e)
        if missing or not str(e.get("why", "")).strip():
            raise UsageError(f"{path}: entry {e} needs operator, code, mutant and a non-empty why")
    return entries


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions of every annotation in a module (never evaluated under
    ``from __future__ import annotations``)."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        annotations: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            annotations += [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs]
            annotations += [a.vararg.annotation if a.vararg else None, a.kwarg.annotation if a.kwarg else None]
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        for ann in annotations:
            if ann is not None:
                spans.append(((ann.lineno, ann.col_offset), (ann.end_lineno or ann.lineno, ann.end_col_offset or 0)))
    return spans


ENUMS = {"Label", "Kind", "Property", "Intent", "Admission", "Outcome", "WorkerOutcome", "TestOutcome"}
IDENTITY_OPERATORS = {"core/ReplaceComparisonOperator_Is_Eq", "core/ReplaceComparisonOperator_IsNot_NotEq",
                      "core/ReplaceComparisonOperator_Eq_Is", "core/ReplaceComparisonOperator_NotEq_IsNot"}


def singleton_comparisons(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Spans of comparison operators between a value and ``None`` or an Enum member
    (``x is Label.NA``, ``y is not None``): there ``is`` and ``==`` (``is not`` and ``!=``)
    agree, because Enum members and None are singletons and Enum equality is identity."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for i, _op in enumerate(node.ops):
            pair = operands[i:i + 2]
            if any(_singleton(x) for x in pair):
                left, right = pair
                spans.append(((left.end_lineno or left.lineno, left.end_col_offset or 0),
                              (right.lineno, right.col_offset)))
    return spans


def _singleton(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and node.value is None:
        return True
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ENUMS


def _inside(start: tuple[int, int], end: tuple[int, int], spans: list) -> bool:
    return any(s <= tuple(start) and tuple(end) <= e for s, e in spans)


def _copy_checkout(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def _env(copy: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # No third-party pytest plugins in the mutants' test runs: loading hypothesis's alone costs
    # about 2 s per mutant on this machine; the targets' tests need none of them.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def run_target(config: Path, jobs: int = 1, keep: bool = False) -> TargetResult:
    """Init a cosmic-ray session in a private copy, mark the equivalent-by-rule mutants, then
    exec the rest in ``jobs`` shards (each shard its own copy and session: cosmic-ray mutates
    files in place), and collect the results."""
    import tomllib

    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    cfg = tomllib.loads(config.read_text())["cosmic-ray"]
    result = TargetResult(config.stem, cfg["module-path"])
    equivalents = load_equivalents(config)
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix=f"rc-mutate-{config.stem}-"))
    cr = [sys.executable, "-m", "cosmic_ray.cli"]
    try:
        copy = work / "checkout"
        copy.mkdir()
        _copy_checkout(copy)
        env = _env(copy)
        base = subprocess.run(cfg["test-command"], shell=True, cwd=copy, env=env, capture_output=True, text=True)
        if base.returncode != 0:
            result.error = f"the unmutated tests fail (exit {base.returncode}): {(base.stdout + base.stderr)[-800:]}"
            return result
        session = work / "session.sqlite"
        subprocess.run(cr + ["init", str(config), str(session)], cwd=copy, env=env, check=True, capture_output=True)
        sources = SourceFiles(copy)
        with use_db(str(session), WorkDB.Mode.open) as db:
            skip: dict[str, list[str]] = {"annotation": [], "singleton": []}
            pending = sorted(db.pending_work_items, key=lambda item: item.job_id)
            for item in pending:
                m = item.mutations[0]
                annotations, singletons = sources.spans(m.module_path)
                if _inside(m.start_pos, m.end_pos, annotations):
                    skip["annotation"].append(item.job_id)
                elif m.operator_name in IDENTITY_OPERATORS and _inside(m.start_pos, m.end_pos, singletons):
                    skip["singleton"].append(item.job_id)
            for why, ids in skip.items():  # one transaction each
                if ids:
                    db.set_multiple_results(ids, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                            output=f"equivalent: {why}"))
            todo = [item.job_id for item in pending if item.job_id not in set(skip["annotation"] + skip["singleton"])]
        shards = []
        for i in range(max(1, min(jobs, len(todo)))):
            shard = work / f"shard{i}"
            shutil.copytree(copy, shard / "checkout")
            shutil.copy2(session, shard / "session.sqlite")
            others = [j for n, j in enumerate(todo) if n % jobs != i]
            with use_db(str(shard / "session.sqlite"), WorkDB.Mode.open) as db:
                if others:
                    db.set_multiple_results(others, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                               output="another shard"))
            shards.append(subprocess.Popen(cr + ["exec", str(config), str(shard / "session.sqlite")],
                                           cwd=shard / "checkout", env=_env(shard / "checkout"),
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        for i, proc in enumerate(shards):
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise subprocess.CalledProcessError(proc.returncode, f"cosmic-ray exec (shard {i})", stderr=err)
        outcomes = []
        with use_db(str(session), WorkDB.Mode.open) as db:
            outcomes += [(item, res) for item, res in db.completed_work_items]
        for i in range(len(shards)):
            with use_db(str(work / f"shard{i}" / "session.sqlite"), WorkDB.Mode.open) as db:
                outcomes += [(item, res) for item, res in db.completed_work_items
                             if item.job_id in set(todo) and res.output != "another shard"]
        _collect(result, outcomes, sources, equivalents)
    except subprocess.CalledProcessError as exc:
        result.error = f"cosmic-ray failed: {exc.cmd}: {(exc.stderr or b'').decode()[-800:]}"
    except OSError as exc:  # one target's broken set-up must not lose the other targets' results
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        result.seconds = round(time.monotonic() - started, 1)
        if keep:
            print(f"{config.stem}: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return result


class SourceFiles:
    """The mutated files of a target (one module, or every module of a package), read once
    each from the private copy, with their equivalent-by-rule spans."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._text: dict[str, str] = {}
        self._spans: dict[str, tuple[list, list]] = {}

    def text(self, module_path: Any) -> str:
        key = str(module_path)
        if key not in self._text:
            path = Path(module_path)
            self._text[key] = (path if path.is_absolute() else self.root / path).read_text()
        return self._text[key]

    def spans(self, module_path: Any) -> tuple[list, list]:
        key = str(module_path)
        if key not in self._spans:
            source = self.text(module_path)
            self._spans[key] = (annotation_spans(source), singleton_comparisons(source))
        return self._spans[key]

    def line(self, module_path: Any, number: int) -> str:
        return self.text(module_path).splitlines()[number - 1].strip()


def _collect(result: TargetResult, outcomes: list, sources: SourceFiles, equivalents: list[dict[str, Any]]) -> None:
    """Count killed / survived / equivalent; match survivors against the listed equivalents."""
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    used: set[int] = set()
    for item, res in sorted(outcomes, key=lambda pair: (str(pair[0].mutations[0].module_path),
                                                        pair[0].mutations[0].start_pos, pair[0].job_id)):
        m = item.mutations[0]
        result.total += 1
        if res.worker_outcome is WorkerOutcome.SKIPPED and res.output == "equivalent: singleton":
            result.singleton += 1
        elif res.worker_outcome is WorkerOutcome.SKIPPED:
            result.annotation += 1
        elif res.test_outcome is TestOutcome.INCOMPETENT or res.worker_outcome is not WorkerOutcome.NORMAL:
            result.incompetent += 1
        elif res.test_outcome is TestOutcome.KILLED:
            result.killed += 1
        else:
            s = Survivor(m.operator_name, m.definition_name, m.start_pos[0], sources.line(m.module_path, m.start_pos[0]),
                         res.diff or "", module=str(m.module_path))
            for i, e in enumerate(equivalents):
                if e["operator"] == s.operator and e["code"] == s.code and e["mutant"] == s.mutant and \
                        e.get("definition", s.definition) == s.definition:
                    s.why = e["why"]
                    used.add(i)
                    break
            result.survivors.append(s)
    result.unused_equivalents = [e for i, e in enumerate(equivalents) if i not in used]


def report(results: list[TargetResult]) -> int:
    """Print the summary; 0 when every survivor is a listed equivalent and nothing failed."""
    status = 0
    for r in results:
        head = f"{r.name} ({r.module}): "
        if r.error:
            print(head + f"ERROR {r.error}")
            status = 1
            continue
        print(head + f"{r.total} mutants, {r.killed} killed, {len(r.survivors)} survived "
              f"({len(r.survivors) - len(r.bad)} equivalent, {len(r.bad)} not), "
              f"equivalent by rule: {r.annotation} inside an annotation, {r.singleton} is/== on None or an Enum "
              f"member; {r.incompetent} incompetent, "
              f"{r.seconds:.0f} s")
        for s in r.survivors:
            tag = "equivalent" if s.why else "SURVIVED"
            print(f"  {tag}: {s.operator} in {s.module}:{s.definition} line {s.line}: {s.code}")
            print(f"    mutant: {s.mutant}")
            if s.why:
                print(f"    why: {s.why}")
            else:
                print("    " + "\n    ".join(s.diff.strip().splitlines()[-6:]))
        for e in r.unused_equivalents:
            print(f"  note: listed equivalent no longer generated: {e['operator']}: {e['code']}")
        if r.incompetent:
            print(f"  {r.incompetent} mutant(s) could not be tested (cosmic-ray: incompetent): not killed")
        if r.failed:
            status = 1
    total = sum(r.total for r in results)
    print(f"all targets: {total} mutants, {sum(r.killed for r in results)} killed, "
          f"{sum(len(r.survivors) for r in results)} survived ({sum(len(r.bad) for r in results)} not equivalent), "
          f"{sum(r.annotation + r.singleton for r in results)} equivalent by rule, "
          f"{sum(r.seconds for r in results):.0f} s")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./reproduce.sh mutate", description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="mutation/<target>.toml names (default: all)")
    parser.add_argument("--jobs", type=int, default=2,
                        help="processes sharing each target's mutants (default 2: this machine's cores)")
    parser.add_argument("--keep", action="store_true", help="keep each target's copy and session for inspection")
    args = parser.parse_args(argv)
    try:
        configs = targets(args.targets)
        if args.jobs < 1:
            raise UsageError("--jobs must be at least 1")
        for c in configs:
            load_equivalents(c)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results = [run_target(c, args.jobs, args.keep) for c in configs]
    return report(results)


if __name__ == "__main__":
    sys.exit(main())
