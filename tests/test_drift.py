"""Version drift: the comparison from receipts, and one real newest-release run.

The real run is pydantic-graph 2.68.0's side of the drift (about 2 minutes to create its
environment cold, a few seconds cached): the unchanged campaign code runs there through
the ordinary CLI, and the release's missing persistence API shows up as n/a cells.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from probes import campaigns
from probes.core.backends import StoreFactory
from probes.core.campaign import ProbeContext, ProbeSpec
from probes.core.receipt import Receipt
from probes.drift import report
from probes.drift.targets import TARGETS, by_campaign


def _receipt(side: str, labels: dict[tuple[str, str], str], release: str) -> Receipt:
    verdicts = [{"framework": "fw", "backend": "file", "property": prop, "path": path, "label": label,
                 "evidence": {}, "summary": f"{prop} {path} {label}"} for (prop, path), label in labels.items()]
    return Receipt("drift", f"fw.{side}", {"campaign": "fw", "side": side, "profile": "quick"}, {},
                   {"release": release, "installed": {"fw": release}, "verdicts": {"p1": {"verdicts": verdicts}}},
                   [], {"run_seconds": 1.0}, [])


def test_property_rows_mark_what_moved() -> None:
    pin = _receipt("pin", {("EO", "a"): "✓", ("EO", "b"): "U", ("CO", "a"): "✓"}, "1.0")
    new = _receipt("newest", {("EO", "a"): "✓", ("EO", "b"): "✓", ("CO", "a"): "✓"}, "2.0")
    rows = report.property_rows([pin, new])
    assert len(rows) == 1
    row = rows[0]
    assert (row["pin"], row["newest"]) == ("1.0", "2.0")
    assert row["EO"] == "U×1 · ✓×1 → ✓" and row["CO"] == "✓" and row["changed"] == "EO"
    changes = report.path_changes([pin, new])
    assert [(c["property"], c["path"], c["pin"], c["newest"]) for c in changes] == [("EO", "b", "U", "✓")]


def test_the_drift_figure_shows_each_side_and_frames_what_moved() -> None:
    pin = _receipt("pin", {("EO", "a"): "✓", ("EO", "b"): "U", ("CO", "a"): "✓"}, "1.0")
    new = _receipt("newest", {("EO", "a"): "✓", ("EO", "b"): "✓", ("CO", "a"): "✓"}, "2.0")
    props, rows = report.grid([pin, new])
    assert props == ["EO", "CO"]
    eo = rows[0]["cells"]["EO"]
    assert (eo["pin"]["label"].value, eo["pin"]["violating"], eo["pin"]["paths"]) == ("U", 1, 2)
    assert (eo["newest"]["label"].value, eo["newest"]["violating"]) == ("✓", 0)
    fig = report.figure([pin, new])
    halves = [p for p in fig.axes[0].patches if p.get_url()]
    assert sorted({p.get_url() for p in halves}) == ["../receipts/drift/fw.newest.json", "../receipts/drift/fw.pin.json"]
    assert len(halves) == 4  # two properties, two sides each
    frames = [p for p in fig.axes[0].patches if not p.get_fill()]
    assert len(frames) == 1  # EO moved, CO did not
    assert "1 of 2 cells changed their label (fw EO)" in report.caption([pin, new])


def test_every_target_is_a_campaign_with_a_pinned_release() -> None:
    for t in TARGETS:
        campaign = campaigns.get(t.campaign)
        assert t.requirements()[0] == f"{t.dist}=={t.newest}"
        assert t.dist in campaign.packages
    assert campaigns.get("drift").plan({"frameworks": ["crewai"], "profile": "quick", "seed": 0}) == [
        ProbeSpec("crewai.pin", {"campaign": "crewai", "side": "pin", "profile": "quick"}),
        ProbeSpec("crewai.newest", {"campaign": "crewai", "side": "newest", "profile": "quick"})]


def test_pydantic_graph_newest_runs_unchanged_campaign_code_in_its_side_env(tmp_path: Path) -> None:
    campaign = campaigns.get("drift")
    spec = ProbeSpec("pydantic_graph.newest", {"campaign": "pydantic_graph", "side": "newest", "profile": "quick"})
    with contextlib.ExitStack() as stack:
        ctx = ProbeContext(tmp_path, StoreFactory(tmp_path / "stores", stack), 0, {})
        result = campaign.run_probe(spec, ctx)
    assert result.harness_errors == []
    assert result.verdicts == []  # drift observes; the verdicts are the framework campaign's
    assert result.observations["release"] == by_campaign("pydantic_graph").newest
    labels = [v for probe in result.observations["verdicts"].values() for v in probe["verdicts"]]
    assert labels and all(v["label"] == "n/a" and "no state persistence" in v["summary"] for v in labels)
    planned = campaigns.get("pydantic_graph").plan(campaigns.get("pydantic_graph").resolve(quick=True))
    assert sorted(result.observations["verdicts"]) == sorted(s.id for s in planned)


@pytest.mark.parametrize("bad", [{"frameworks": ["nosuch"]}, {"profile": "huge"}])
def test_bad_drift_parameters_are_usage_errors(bad) -> None:
    from probes.core.errors import UsageError

    with pytest.raises(UsageError):
        campaigns.get("drift").resolve(bad)
