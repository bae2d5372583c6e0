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
