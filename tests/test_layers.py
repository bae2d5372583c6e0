"""The architecture holds: every import of ``probes`` keeps the layers of ``probes.layers``, no two
packages import each other, and only a framework's own package (or a study of it) imports it. Each
rule is also shown failing on an import that breaks it."""

from __future__ import annotations

from probes import PROJECT_ROOT, layers
from probes.layers import all_imports, framework_imports, imports_in, layer_of, mutual_imports, upward_imports

IMPORTS = all_imports()


def test_no_module_imports_a_higher_layer() -> None:
    assert upward_imports(IMPORTS) == []


def test_no_two_packages_import_each_other() -> None:
    assert mutual_imports(IMPORTS) == []


def test_only_a_frameworks_own_package_or_a_study_of_it_imports_it() -> None:
    assert framework_imports(IMPORTS) == []


def test_an_upward_import_is_caught_wherever_it_stands() -> None:
    deferred = "def f():\n    from probes.book import build_book\n"
    assert upward_imports(list(imports_in("probes.core.checker", deferred))) == [
        "probes.core.checker:2 (contract) imports probes.book (book)"]
    typing_only = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from probes.headline import Measured\n"
    [found] = upward_imports(list(imports_in("probes.studies.consume_race.campaign", typing_only)))
    assert "imports probes.headline (paper)" in found
    relative = "from ..matrix import grid\n"
    assert upward_imports(list(imports_in("probes.tla.validation", relative))) != []
    # the same imports downward are fine
    assert upward_imports(list(imports_in("probes.pages", deferred + typing_only))) == []


def test_a_cycle_between_packages_is_caught_and_one_inside_a_package_is_not() -> None:
    across = [*imports_in("probes.core.runs", "from probes.kit import suite\n"),
              *imports_in("probes.kit.suite", "def f():\n    from probes.core import runs\n")]
    assert mutual_imports(across) == ["probes.core.runs <-> probes.kit.suite"]
    inside = [*imports_in("probes.kit.protocols", "def f():\n    from probes.kit.rd import rd\n"),
              *imports_in("probes.kit.rd", "from probes.kit.protocols import Probe\n")]
    assert mutual_imports(inside) == []


def test_a_framework_imported_outside_its_package_is_caught() -> None:
    assert framework_imports(list(imports_in("probes.kit.protocols", "def f():\n    import langgraph.graph\n")))
    assert framework_imports(list(imports_in("probes.paper.crewai", "from crewai.flow import Flow\n")))
    assert framework_imports(list(imports_in("probes.frameworks.crewai.adapter", "from crewai.flow import Flow\n"))) == []
    assert framework_imports(list(imports_in("probes.studies.atlas.cells_agno", "import agno\n"))) == []  # the atlas


def test_every_top_level_module_has_a_layer_on_purpose() -> None:
    """A new top-level module or package must be placed in ``LAYER_OF``; a framework or a study is a
    package under ``probes/frameworks/`` or ``probes/studies/``, which have theirs."""
    root = PROJECT_ROOT / "probes"
    for path in sorted(root.iterdir()):
        if path.name.startswith(("_", ".")) and path.name != "__main__.py" or path.suffix not in ("", ".py"):
            continue
        assert f"probes.{path.stem}" in layers.LAYER_OF, f"probes.{path.stem} has no layer: add it to probes.layers.LAYER_OF"
    for package in [*layers.FRAMEWORKS_DIR.iterdir(), *layers.STUDIES_DIR.iterdir()]:
        if package.is_dir() and package.name != "__pycache__":
            assert layer_of(layers.module_name(package / "__init__.py")) == layers.FRAMEWORKS, package


def test_each_framework_package_declares_the_framework_it_adapts_and_no_two_the_same() -> None:
    """``ADAPTS`` is what makes a framework's import its package's alone: a package without it would
    let every module import its framework unnoticed."""
    adapted: dict[str, str] = {}
    for package in sorted(layers.FRAMEWORKS_DIR.iterdir()):
        if (package / "campaign.py").is_file():
            adapts = layers.declared(package, "ADAPTS", ())
            assert adapts, f"{package.name}/__init__.py declares no ADAPTS"
            for framework in adapts:
                assert adapted.setdefault(framework, package.name) == package.name, framework
    assert {"langgraph", "crewai", "burr", "temporalio"} <= set(adapted), adapted  # the walk found the packages


def test_a_new_frameworks_declaration_is_all_the_layers_need(tmp_path) -> None:
    """A framework added as a package (its ``__init__`` says what it adapts) is owned by that package,
    and a study names it to import it: nothing in ``probes.layers`` is edited."""
    frameworks, studies = tmp_path / "probes" / "frameworks", tmp_path / "probes" / "studies"
    for package, text in ((frameworks / "newfw", 'ADAPTS = ("newfw_sdk",)\n'),
                          (studies / "newstudy", 'ALSO_IMPORTS = {"newfw_sdk": "it races newfw"}\n'),
                          (studies / "other", '"""no declaration"""\n')):
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(text)
    owners = layers.declarations(frameworks, studies)
    assert {k: [o.rpartition(".")[2] for o in v] for k, v in owners.items()} == {"newfw_sdk": ["newfw", "newstudy"]}
    use = "import newfw_sdk.session\n"
    assert framework_imports(list(imports_in("probes.frameworks.newfw.adapter", use)), owners) == []
    assert framework_imports(list(imports_in("probes.studies.newstudy.campaign", use)), owners) == []
    [caught] = framework_imports(list(imports_in("probes.studies.other.campaign", use)), owners)
    assert caught.startswith("probes.studies.other.campaign:1 imports newfw_sdk (only ")
