"""Every run directory holds an RO-Crate (Workflow Run Crate profile) naming what made it.

roc-validator cannot be installed beside the project's pins (it requires rich<14; the lock
pins rich 14.3.4), so the crate is read back with ``rocrate``'s own reader and checked
against the profile's MUST entities by ``probes.core.crate.profile_problems``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from probes import PROJECT_ROOT, campaigns
from probes.core.campaign import run_campaign
from probes.core.crate import CRATE_NAME, PROFILES, crate_copy, profile_problems
from probes.figures import figure_html


def _graph(directory: Path) -> dict[str, dict]:
    return {e["@id"]: e for e in json.loads((directory / CRATE_NAME).read_text())["@graph"]}


def test_a_real_campaign_run_writes_a_crate_that_meets_the_profile(sandbox: dict) -> None:
    campaign = campaigns.get("llamaindex_kit")  # defined in its own package's campaign.py (the crate's workflow)
    params = campaign.resolve({"protocols": ["baseline", "fork"]}, quick=True)
    run = run_campaign(campaign, params)
    assert (run.directory / CRATE_NAME).is_file()
    assert profile_problems(run.directory) == []
    graph = _graph(run.directory)
    index = json.loads((run.directory / "_campaign.json").read_text())
    root = graph["./"]
    assert {c["@id"] for c in root["conformsTo"]} == set(PROFILES)
    workflow = graph[root["mainEntity"]["@id"]]
    assert workflow["version"] == index["provenance"]["commit"]  # the commit measured
    assert (run.directory / workflow["@id"]).read_bytes() == (PROJECT_ROOT / "probes/frameworks/llamaindex/campaign.py").read_bytes()
    [action] = [e for e in graph.values() if e["@type"] == "CreateAction"]
    assert action["startTime"] == index["provenance"]["started"] and action["endTime"] == index["provenance"]["finished"]
    values = {graph[o["@id"]]["name"]: json.loads(graph[o["@id"]]["value"]) for o in action["object"]}
    assert values == index["params"]  # every parameter, with the value the run used
    results = {r["@id"] for r in action["result"]}
    assert {f"{p}.json" for p in index["receipts"]} <= results  # every receipt ...
    for probe, digest in index["receipts"].items():
        assert graph[f"{probe}.json"]["sha256"] == digest  # ... with the hash the index holds
    manifest = json.loads((run.directory / f"{sorted(index['receipts'])[0]}.json").read_text())["manifest"]
    requirements = [graph[r["@id"]] for r in workflow["softwareRequirements"]]
    versions = {r["name"]: r["softwareVersion"] for r in requirements if r["@id"].startswith("#package-")}
    assert versions["llama-index-workflows"] == manifest["packages"]["llama-index-workflows"]
    machine = graph["#machine"]
    assert machine["operatingSystem"] == manifest["platform"] and machine["processorRequirements"] == manifest["machine"]
    assert graph["#python"]["softwareVersion"] == manifest["python"]

    # a resumed run reads its receipts back beside the crate (the crate is not taken for a receipt)
    again = run_campaign(campaign, params)
    assert again.ran == [] and profile_problems(again.directory) == []


def test_the_profile_check_fails_on_a_broken_crate(sandbox: dict, tmp_path: Path) -> None:
    crate = crate_copy(PROJECT_ROOT / "data/reference/drift", tmp_path / "drift")
    assert profile_problems(crate.parent) == []
    data = json.loads(crate.read_text())
    root = next(e for e in data["@graph"] if e["@id"] == "./")
    del root["mentions"]
    crate.write_text(json.dumps(data))
    (crate.parent / "crewai.pin.json").unlink()
    problems = profile_problems(crate.parent)
    assert any("mentions" in p for p in problems)
    assert any("crewai.pin.json is not in the crate" in p for p in problems)


def test_a_read_only_reference_run_gets_its_crate_in_a_copy(tmp_path: Path) -> None:
    reference = PROJECT_ROOT / "data/reference/atlas"
    before = sorted(p.name for p in reference.rglob("*"))
    out = tmp_path / "atlas"
    ran = subprocess.run([sys.executable, "-m", "probes", "crate", str(reference), "--out", str(out)],
                         cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert sorted(p.name for p in reference.rglob("*")) == before  # nothing written into the reference
    graph = _graph(out)
    [action] = [e for e in graph.values() if e["@type"] == "CreateAction"]
    results = {r["@id"] for r in action["result"]}
    assert "chapter.ipynb" in results  # the chapter rendered into the run, and its figures
    assert {"figures/atlas-grid.png", "figures/atlas-grid.svg", "figures/atlas-grid.json"} <= results
    bad = subprocess.run([sys.executable, "-m", "probes", "crate", str(tmp_path / "nothing")],
                         cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_a_figure_caption_links_the_notebook_receipts_and_crate() -> None:
    sidecar = {"campaign": "atlas", "run": "default-x"}
    html = figure_html("atlas-grid", 1, "c", {}, b"", provenance=sidecar)
    for href in ("../receipts/atlas/chapter.ipynb", "../receipts/atlas/_campaign.json",
                 f"../receipts/atlas/{CRATE_NAME}"):
        assert f'href="{href}"' in html
    assert "Drawn from" not in figure_html("atlas-grid", 1, "c", {}, b"")  # no provenance, no invented links


def test_a_paper_campaigns_crate_names_the_module_that_defines_it() -> None:
    """The paper's campaigns run on the kit are defined beside their framework's kit campaign: the crate's
    workflow is that module, not nothing (a kit framework measured alone keeps its own package's)."""
    from probes.core.crate import campaign_source

    frameworks = PROJECT_ROOT / "probes" / "frameworks"
    assert campaign_source("langgraph") == frameworks / "langgraph" / "campaign.py"
    assert campaign_source("langgraph_kit") == frameworks / "langgraph" / "campaign.py"
    assert campaign_source("crewai") == frameworks / "crewai" / "campaign.py"
    assert campaign_source("maf") == frameworks / "maf" / "campaign.py"
    assert campaign_source("remit_bench") == PROJECT_ROOT / "probes" / "studies" / "remit" / "bench.py"
    assert campaign_source("no_such_campaign") is None
