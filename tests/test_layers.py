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
    [found] = upward_imports(list(imports_in("probes.consume_race.campaign", typing_only)))
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
    assert framework_imports(list(imports_in("probes.crewai_kit.adapter", "from crewai.flow import Flow\n"))) == []
    assert framework_imports(list(imports_in("probes.atlas.cells_agno", "import agno\n"))) == []  # the atlas


def test_every_top_level_module_has_a_layer_on_purpose() -> None:
    """A new top-level module or package must be placed in ``LAYER_OF``, unless it is a framework or
    study package (it holds a campaign or an adapter), which the default layer is for."""
    root = PROJECT_ROOT / "probes"
    for path in sorted(root.iterdir()):
        if path.name.startswith(("_", ".")) and path.name != "__main__.py" or path.suffix not in ("", ".py"):
            continue
        name = f"probes.{path.stem}"
        if name in layers.LAYER_OF:
            continue
        assert path.is_dir() and ({"campaign.py", "adapter.py"} & {p.name for p in path.iterdir()}), (
            f"{name} has no layer: add it to probes.layers.LAYER_OF")
        assert layer_of(name) == layers.FRAMEWORKS
