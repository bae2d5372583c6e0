"""The architecture as layers: which module belongs where, and the two rules every import keeps.

A module imports only from its own layer or below (``upward_imports``), counting function-local
imports and ``TYPE_CHECKING`` ones too: a deferred import is still a dependency. No two modules of
different packages import each other (``mutual_imports``). And a framework (a third-party agent
framework's distribution) is imported only by the package that adapts it or by a package declared
to import it too (``framework_imports``; each package says so in its ``__init__``: ``ADAPTS``,
``ALSO_IMPORTS``): the kit, the runner, the paper and the book know no framework.
``tests/test_layers.py`` checks all three over every module of ``probes`` and checks that each
rule fails on an import that breaks it.

The layers, lowest first (a module is in the layer of the longest prefix below that names it):

* **base** -- paths, errors, the documentation statements: no behaviour;
* **contract** -- properties, labels, histories, checkers, the race rule, the citation tables: no I/O;
* **harness** -- processes, the nemesis, oracles, barriers, backends, side environments;
* **runner** -- campaigns, receipts, run directories, fingerprints, discovery, figures' files;
* **kit** -- the adapter interface and the protocols, written once;
* **frameworks and studies** -- one package per framework under ``probes/frameworks/`` (its adapter,
  citations, own protocols) and, under ``probes/studies/``, the studies that are not conformance
  cells (consume race, REMIT, live, atlas, drift, MV);
* **formal** -- the TLA+ side: model checking and trace validation;
* **paper** -- the published values as functions over receipts, the headline statuses, the matrix;
* **book** -- presentation: chapters (executing their notebooks), pages, figures and tables;
* **cli** -- the commands, the pytest plugin, the JUnit report, mutation runs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from probes import PROJECT_ROOT

BASE, CONTRACT, HARNESS, RUNNER, KIT, FRAMEWORKS, FORMAL, PAPER, BOOK, CLI = range(10)
NAMES = ("base", "contract", "harness", "runner", "kit", "frameworks and studies", "formal", "paper", "book",
         "cli")

# module prefix -> layer (the longest prefix naming a module decides)
LAYER_OF: dict[str, int] = {
    "probes": BASE, "probes.core.errors": BASE, "probes.docs_statements": BASE, "probes.layers": BASE,
    "probes.core.checker": CONTRACT, "probes.core.history": CONTRACT, "probes.core.stats": CONTRACT,
    "probes.core.race": CONTRACT, "probes.core.visibility": CONTRACT, "probes.citations": CONTRACT,
    "probes.core": HARNESS,  # atomic, nemesis, forkserver, child, portable, oracle, barrier, backends, envs, ...
    "probes.core.campaign": RUNNER, "probes.core.receipt": RUNNER, "probes.core.runs": RUNNER,
    "probes.core.manifest": RUNNER, "probes.core.crate": RUNNER, "probes.campaigns": RUNNER,
    "probes.figures": RUNNER, "probes.timing": RUNNER, "probes.schedules": RUNNER,
    "probes.kit": KIT, "probes.frameworks": FRAMEWORKS, "probes.studies": FRAMEWORKS,
    "probes.tla": FORMAL,
    "probes.paper": PAPER, "probes.headline": PAPER, "probes.matrix": PAPER,
    "probes.book": BOOK, "probes.execute": BOOK, "probes.notebook": BOOK, "probes.pages": BOOK, "probes.chapter": BOOK, "probes.cite": BOOK, "probes.report": BOOK,
    "probes.matrix_figure": BOOK, "probes.kit.chapter": BOOK, "probes.kit.exhaustive_chapter": BOOK,
    "probes.tla.trace_report": BOOK, "probes.tla.tlc_report": BOOK, "probes.studies.atlas.table": BOOK, "probes.studies.drift.plots": BOOK,
    "probes.studies.mv.report": BOOK, "probes.studies.live.report": BOOK, "probes.studies.consume_race.report": BOOK,
    "probes.studies.remit.report": BOOK, "probes.studies.remit.bench_report": BOOK,
    "probes.studies.remit.cost_report": BOOK,
    "probes.__main__": CLI, "probes.reproduce": CLI, "probes.rejudge": CLI, "probes.mutate": CLI,
    "probes.kit.pytest_plugin": CLI, "probes.kit.junit": CLI,
}

FRAMEWORKS_DIR = PROJECT_ROOT / "probes" / "frameworks"
STUDIES_DIR = PROJECT_ROOT / "probes" / "studies"


def declared(package: Path, name: str, default: Any) -> Any:
    """A literal a framework or study package declares in its ``__init__`` (read, not imported: this
    module is the base layer, they are above it)."""
    init = package / "__init__.py"
    tree = ast.parse(init.read_text()) if init.is_file() else ast.Module(body=[], type_ignores=[])
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    return default


def declarations(frameworks: Path = FRAMEWORKS_DIR, studies: Path = STUDIES_DIR) -> dict[str, tuple[str, ...]]:
    """Third-party agent frameworks (top-level import names) -> the packages that may import each: the
    framework package that ``ADAPTS`` it, and every framework or study package whose ``ALSO_IMPORTS``
    names it (``"*"``: every framework, the atlas). Adding a framework is its package's declaration;
    nothing here changes."""
    owners: dict[str, list[str]] = {}
    packages = [p for root in (frameworks, studies) for p in sorted(root.iterdir()) if (p / "__init__.py").is_file()]
    for package in packages:
        for framework in declared(package, "ADAPTS", ()):
            owners.setdefault(framework, []).insert(0, f"probes.{package.parent.name}.{package.name}")
    for package in packages:
        for framework in declared(package, "ALSO_IMPORTS", {}):
            for target in (owners if framework == "*" else [framework]):
                owners.setdefault(target, []).append(f"probes.{package.parent.name}.{package.name}")
    return {framework: tuple(names) for framework, names in owners.items()}


def layer_of(module: str) -> int:
    """The layer of ``module`` (a dotted name under ``probes``): its longest prefix's; a framework or
    study package not listed is in the frameworks-and-studies layer."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYER_OF and (n > 1 or len(parts) == 1):
            return LAYER_OF[prefix]
    return FRAMEWORKS


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # what it imports (a module, or the package a name was taken from)
    line: int


def module_name(path: Path, root: Path = PROJECT_ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_in(module: str, source: str, is_package: bool = False) -> Iterator[Import]:
    """Every import in ``source`` (module ``module``), wherever it stands: top level, in a function,
    under ``if TYPE_CHECKING``. ``from a.b import c`` yields ``a.b.c`` (a submodule or a name: the
    layer of either is decided by its prefix)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                yield Import(module, f"{base}.{alias.name}" if alias.name != "*" else base, node.lineno)


def modules(root: Path = PROJECT_ROOT / "probes") -> set[str]:
    """Every module of the tree at ``root`` (packages included), by dotted name."""
    return {module_name(path, root.parent) for path in root.rglob("*.py")}


MODULES = modules()


def all_imports(root: Path = PROJECT_ROOT / "probes") -> list[Import]:
    out: list[Import] = []
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root.parent)
        out += imports_in(name, path.read_text(), path.name == "__init__.py")
    return out


def _internal(target: str) -> bool:
    return target == "probes" or target.startswith("probes.")


def upward_imports(imports: list[Import]) -> list[str]:
    """Each import of a module in a higher layer than the importer's, as a sentence (a name imported
    from a module is in that module's layer: ``probes.PROJECT_ROOT`` is the base's)."""
    out = []
    for i in imports:
        if _internal(i.target):
            target = _module_of(i.target)
            if layer_of(target) > layer_of(i.module):
                out.append(f"{i.module}:{i.line} ({NAMES[layer_of(i.module)]}) imports {target} "
                           f"({NAMES[layer_of(target)]})")
    return out


def _module_of(target: str) -> str:
    """The module an import names: ``a.b.c`` is module ``a.b.c`` if it exists, else ``a.b`` (a name in it)."""
    while target not in MODULES and "." in target:
        target = target.rpartition(".")[0]
    return target


def _package(module: str) -> str:
    return module.rpartition(".")[0]


def mutual_imports(imports: list[Import]) -> list[str]:
    """Each pair of modules of two packages that import each other. Inside one package (one layer: a
    protocol module and the registry that dispatches to it) a deferred import back is allowed."""
    edges = {(i.module, _module_of(i.target)) for i in imports if _internal(i.target)}
    return sorted(f"{a} <-> {b}" for a, b in edges if a < b and (b, a) in edges and _package(a) != _package(b)
                  and not b.startswith(a + ".") and not a.startswith(b + "."))


def framework_imports(imports: list[Import], owners: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """Each import of an agent framework by a module of no package declared to import it
    (``declarations``)."""
    owners = declarations() if owners is None else owners
    out = []
    for i in imports:
        for framework, allowed in owners.items():
            if i.target == framework or i.target.startswith(framework + "."):
                if not any(i.module == o or i.module.startswith(o + ".") for o in allowed):
                    out.append(f"{i.module}:{i.line} imports {framework} (only {', '.join(allowed)} may)")
    return out
