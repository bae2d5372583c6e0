"""Every registered campaign has a thin notebook whose parameters match the campaign's."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from probes import campaigns
from probes.execute import notebook_path
from tests.conftest import ROOT

NAMES = [n for n in campaigns.REGISTRY if n in campaigns.available()]

# A thin chapter's code cells call report functions; rendering logic lives in report modules. These
# cells still build a table or figure in the notebook itself: each sits in a template or notebook whose report
# module belongs to a measured campaign's package, so moving it changes that campaign's fingerprint and
# waits for the campaign's next re-measure (first line of the cell -> why it is here).
NOT_YET_THIN = {
    "import pandas as pd": "the kit chapter template's verdict table (probes/kit/chapter.py, in every kit campaign's fingerprint)",
    "fig = exhaustive_chapter.figure(run,": "the kit chapter template's crash-point figure (probes/kit/chapter.py)",
    "fig = paper_dbos.latency_figure(run.receipts)": "the DBOS chapter's latency figure (the kit template's DBOS section)",
    "display(chapter.table(table.sweeps(run.receipts), campaign=\"atlas\", collapse=False))":
        "the atlas chapter's per-framework sections (probes/studies/atlas/table.py, in atlas's fingerprint)",
}
THIN_BANNED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.For, ast.While, ast.If,
               ast.With, ast.Try, ast.JoinedStr, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)


def _parameters_cell(name: str) -> dict:
    nb = json.loads(notebook_path(name).read_text())
    cells = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"{name}.ipynb needs exactly one cell tagged 'parameters'"
    values = {}
    for node in ast.parse("".join(cells[0]["source"])).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


@pytest.mark.parametrize("name", NAMES)
def test_notebook_parameters_match_the_campaign_defaults(name: str) -> None:
    campaign = campaigns.get(name)
    defaults = {p.name: p.default for p in campaign.params}
    assert _parameters_cell(name) == defaults
    for p in campaign.params:
        p.validate(p.default)
        p.validate(p.quick)
        assert p.doc, f"{name}.{p.name} has no documentation"
    assert "seed" in defaults, f"campaign {name} must record a seed parameter"


@pytest.mark.parametrize("name", NAMES)
def test_campaign_module_does_not_import_frameworks(name: str) -> None:
    """The book build and the registry import every campaign; frameworks load only in probes."""
    code = (f"import sys; from probes import campaigns; campaigns.get({name!r}); "
            "heavy = [m for m in ('crewai', 'dbos', 'autogen_agentchat', 'llama_index', 'langgraph', 'pydantic_graph') "
            "if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"importing campaign {name} imported {out.stdout.strip()}"


def _thickness(name: str) -> list[str]:
    """What makes a chapter's code cells more than calls: definitions, control flow, string building,
    imports other than the project's and IPython's display, or more than four statements in a cell."""
    found = []
    for cell in json.loads(notebook_path(name).read_text())["cells"]:
        if cell["cell_type"] != "code" or "parameters" in cell.get("metadata", {}).get("tags", []):
            continue
        lines = [line for line in "".join(cell["source"]).splitlines()
                 if line.strip() and not line.lstrip().startswith(("%", "#"))]
        if lines and any(lines[0].startswith(first) for first in NOT_YET_THIN):
            continue
        tree = ast.parse("\n".join(lines))
        where = f"{name}.ipynb cell {cell.get('id')}"
        found += [f"{where}: {type(node).__name__}" for node in ast.walk(tree) if isinstance(node, THIN_BANNED)]
        for node in ast.walk(tree):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{where}: imports {m}" for m in modules if not m.startswith(("probes", "IPython.display"))]
        statements = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
        if len(statements) > 4:
            found.append(f"{where}: {len(statements)} statements")
    return found


@pytest.mark.parametrize("name", campaigns.available())
def test_a_chapter_notebook_is_parameters_then_report_calls(name: str) -> None:
    assert _thickness(name) == []


def test_the_thinness_check_finds_a_loop_an_fstring_and_a_pandas_import(tmp_path, monkeypatch) -> None:
    cells = [{"cell_type": "code", "id": "thick", "metadata": {}, "outputs": [], "execution_count": None,
              "source": "import numpy as np\nfor r in run.receipts:\n    print(f\"{r.probe}\")"}]
    path = tmp_path / "thick.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    monkeypatch.setattr(sys.modules[__name__], "notebook_path", lambda name: path)
    found = _thickness("thick")
    assert {f.rsplit(": ", 1)[1] for f in found} == {"For", "JoinedStr", "imports numpy"}
