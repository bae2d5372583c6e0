"""The paper's pydantic-graph campaign, measured through the kit (quick profile, the real framework),
and its published value read from the receipts by the paper layer (``probes.paper.pydantic_graph``).

What the paper reports (``pydantic_graph.liveness``): a crash inside a node leaves a snapshot
``iter_from_persistence`` refuses, so the run never completes, while no effect fires twice.
"""

from __future__ import annotations

import inspect

import pytest

from tests.installed import require

require("pydantic_graph")

from probes import campaigns  # noqa: E402
from probes.core.campaign import run_campaign  # noqa: E402
from probes.core.receipt import VIEW_NAME  # noqa: E402
from probes.kit.runtime import STEP_POINTS  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    campaign = campaigns.get("pydantic_graph")
    params = campaign.resolve({"protocols": ["crash", "stray", "tamper"], "tamper_limit": 2}, quick=True)
    return run_campaign(campaign, params, receipts_root=tmp_path_factory.mktemp("receipts"))


def cells(run) -> dict:
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


def test_the_paper_campaign_is_the_kit_over_the_pydantic_graph_adapter() -> None:
    from probes.kit.suite import KIT_ADAPTERS

    paper, kit = campaigns.get("pydantic_graph"), campaigns.get("pydantic_graph_kit")
    assert paper.in_default_run and not kit.in_default_run
    assert KIT_ADAPTERS["pydantic_graph"] == KIT_ADAPTERS["pydantic_graph_kit"]
    # the default profile is the paper's cells, not every kit protocol: no exhaustive or save-kill sweep
    protocols = paper.resolve()["protocols"]
    assert "crash" in protocols and "exhaustive" not in protocols and "savekill" not in protocols
    assert paper.resolve()["crash_points"] == list(STEP_POINTS)
    assert "exhaustive" in kit.resolve()["protocols"]


def test_no_harness_errors(run) -> None:
    assert run.harness_errors == []


@pytest.mark.parametrize("how", ["kill", "raise"])
@pytest.mark.parametrize("point", ["s1.effect", "s2.effect"])
def test_a_crash_inside_a_node_is_safe_but_not_live(run, how: str, point: str) -> None:
    c = cells(run)
    path = f"crash:{how}@{point}/iter-from-persistence"
    eo = c[("EO", path)]
    # nothing fired twice: EO (at most once) holds; the run never completed, which LV reports
    assert eo.label.value == "✓" and eo.evidence["completed"] is False
    assert all(n <= 1 for n in eo.evidence["effect_counts"].values())
    assert c[("PC", path)].label.value == "✓"
    lv = c[("LV", path)]
    # the 1.107.1 status contract documents the refusal (DOCS.md PG-2): D, cited
    assert lv.evidence["completed"] is False and lv.label.value == "D" and lv.doc.source == "PG-2"
    assert [w["kind"] for w in lv.evidence["witness"]][-1] == "refuse"
    assert "GraphRuntimeError" in lv.evidence["why"]


def test_doc_quote_is_in_installed_docstring(run) -> None:
    """The LV label's citation (DOCS.md PG-2) is the installed record_run docstring, fragment by fragment."""
    from pydantic_graph.persistence import BaseStatePersistence

    lv = cells(run)[("LV", "crash:raise@s2.effect/iter-from-persistence")]
    assert lv.doc.source == "PG-2" and "record_run" in lv.doc.page
    doc = " ".join(inspect.getdoc(BaseStatePersistence.record_run).split())
    fragments = [f.strip().strip('"') for f in lv.doc.quote.split("…")]
    assert len(fragments) == 2 and all(f in doc for f in fragments), fragments


def test_the_published_value_is_read_from_the_kit_receipts(run) -> None:
    """The paper layer over this run's receipts: the behaviour the paper reports, from measured verdicts."""
    from probes.headline import BEHAVIOUR, VARIANT, Measured, chapter_rows, compare, load_published
    from probes.paper.pydantic_graph import HEADLINE, headlines

    measured = headlines(run.receipts)[HEADLINE]
    assert isinstance(measured, Measured)
    crash_lv = [v for r in run.receipts for v in r.verdicts if v.path.startswith("crash:") and v.property.value == "LV"]
    assert measured.value["mid_node_crash_probes"] == len(crash_lv) == 2 * len(run.params["crash_points"])
    assert measured.value["LV"] == "D" and measured.value["safety"] == "✓"
    assert measured.value["effect_fired_twice"] is False and measured.value["restore_refused"] is True
    assert measured.value["completed"] is False
    assert "PG-2 (documents the deviation)" in measured.why and "liveness failure only" in measured.why
    # published LV ✗ (the paper's label), measured D: the behaviour is reproduced, the label differs
    [entry] = [e for e in load_published() if e["id"] == HEADLINE]
    assert compare(entry, measured, "").status == BEHAVIOUR
    [row] = chapter_rows(campaigns.get("pydantic_graph"), run)  # this quick run is a variant: never scored
    assert row.status == VARIANT


def test_the_paper_layer_says_why_without_crash_receipts(run) -> None:
    from probes.paper.pydantic_graph import HEADLINE, headlines

    others = [r for r in run.receipts if not r.probe.startswith("crash.")]
    assert "no crash probe" in headlines(others)[HEADLINE]


def test_stray_and_tamper(run) -> None:
    c = cells(run)
    stray = c[("CO", "stray-after-completion")]
    assert stray.label.value == "✓" and stray.evidence["gate_fires"] == 1
    tampered = [v for (prop, path), v in c.items() if prop == "CV" and path.startswith("tamper:")]
    assert tampered and all(v.label.value in ("✓", "U", "n/a") for v in tampered)


def test_view_has_no_temp_paths(run) -> None:
    assert "/tmp" not in (run.directory / VIEW_NAME).read_text()
