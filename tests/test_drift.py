"""Version drift: the targets table, the comparison from receipts, and real runs at other releases.

The real runs: pydantic-graph 2.68.0's side of the paper campaign (the unchanged campaign
code runs there through the ordinary CLI, and the release's missing persistence API shows
up as n/a cells), the same release for the kit campaign (n/a before anything runs: drift
checks the API in the release's environment), and LangGraph's newest release under the
conformance kit (its adapter operations in drift's side environment, the harness here).
Each side environment takes a minute or two to create cold, seconds when cached.
"""

from __future__ import annotations

import contextlib
import importlib.metadata as md
import sys
from pathlib import Path

import pytest

from probes import campaigns
from probes.core.backends import StoreFactory
from probes.core.campaign import ProbeContext, ProbeSpec
from probes.core.errors import HarnessError
from probes.core.receipt import Receipt
from probes.studies.drift import plots, report
from probes.studies.drift.campaign import missing_api, side_env
from probes.studies.drift.targets import TARGETS, Target, by_campaign, requirement_name


def _receipt(side: str, labels: dict[tuple[str, str], str], release: str, campaign: str = "fw",
             **observations) -> Receipt:
    verdicts = [{"framework": "fw", "backend": "file", "property": prop, "path": path, "label": label,
                 "evidence": {}, "summary": f"{prop} {path} {label}"} for (prop, path), label in labels.items()]
    obs = {"release": release, "installed": {"fw": release}, **observations}
    if "na" not in observations:
        obs["verdicts"] = {"p1": {"verdicts": verdicts}}
    return Receipt("drift", f"{campaign}.{side}", {"campaign": campaign, "side": side, "release": release,
                                                   "profile": "quick"}, {}, obs, [], {"run_seconds": 1.0}, [])


PIN = {("EO", "a"): "✓", ("EO", "b"): "U", ("CO", "a"): "✓", ("LV", "a"): "✓"}
PATCH = {("EO", "a"): "✓", ("EO", "b"): "U", ("CO", "a"): "✓", ("LV", "a"): "✓"}
NEWEST = {("EO", "a"): "U", ("EO", "b"): "✓", ("CO", "a"): "✓", ("LV", "a"): "D"}


def _three() -> list[Receipt]:
    return [_receipt("pin", PIN, "1.0"), _receipt("patch", PATCH, "1.0.5"), _receipt("newest", NEWEST, "2.0")]


def test_every_other_release_is_compared_with_the_pin_cell_by_cell() -> None:
    changes = report.cell_changes(_three())
    assert [(c["side"], c["property"], c["path"], c["label"]) for c in changes] == [
        ("newest", "EO", "a", "✓ → U"), ("newest", "EO", "b", "U → ✓"), ("newest", "LV", "a", "✓ → D")]
    rows = {r["side"]: r for r in report.property_rows(_three())}
    assert rows["patch"]["changed"] == "—" and rows["patch"]["cells moved"] == 0
    new = rows["newest"]
    assert (new["pin"], new["release"], new["changed"], new["cells moved"]) == ("1.0", "2.0", "LV", 3)
    assert new["EO"] == "U×1 · ✓×1" and new["LV"] == "✓ → D"  # EO's worst label held, two of its paths moved
    assert new["receipt"] == ["fw.pin", "fw.newest"]


def test_the_figure_has_a_row_per_release_and_frames_what_moved() -> None:
    props, rows = plots.grid(_three())
    assert props == ["EO", "CO", "LV"]
    assert [(r["side"], r["release"]) for r in rows] == [("pin", "1.0"), ("patch", "1.0.5"), ("newest", "2.0")]
    eo, lv = rows[2]["cells"]["EO"], rows[2]["cells"]["LV"]
    assert (eo["label"].value, eo["pin"].value, eo["moved"]) == ("U", "U", 2)
    assert (lv["label"].value, lv["pin"].value, lv["moved"]) == ("D", "✓", 1)
    assert rows[0]["cells"]["EO"]["moved"] is None  # the pin is not compared with itself
    fig = plots.grid_figure(_three())
    frames = [p for p in fig.axes[0].patches if not p.get_fill()]
    assert sorted(p.get_linestyle() for p in frames) == ["-", "--"]  # EO: paths moved; LV: label changed
    urls = {p.get_url() for p in fig.axes[0].patches if p.get_url()}
    assert urls == {f"../receipts/drift/fw.{s}.json" for s in ("pin", "patch", "newest")}
    text = plots.grid_caption(_three())
    assert "2 of 6 cells compared with the pin moved (fw 2.0 EO, fw 2.0 LV); 3 verdicts changed label" in text


def test_a_release_without_the_api_is_an_na_row_with_its_reason() -> None:
    receipts = [_receipt("pin", PIN, "1.0"), _receipt("newest", {}, "2.0", na="not in fw 2.0: fw.persistence")]
    assert report.cell_changes(receipts) == [] and report.property_rows(receipts) == []
    assert report.not_applicable(receipts) == [{"campaign": "fw", "side": "newest", "release": "2.0",
                                                "why": "not in fw 2.0: fw.persistence", "receipt": "fw.newest"}]
    receipts[0].observations["verdicts"]["p2"] = {"verdicts": [  # a second verdict framework at the pin
        {"framework": "fw · tampered", "backend": "file", "property": "CV", "path": "t", "label": "U",
         "evidence": {}, "summary": "t"}]}
    props, rows = plots.grid(receipts)
    assert [(r["side"], r["status"]) for r in rows] == [("pin", "ran"), ("newest", "n/a")]  # frameworks folded
    assert rows[0]["cells"]["CV"]["label"].value == "U" and props == ["EO", "CV", "CO", "LV"]
    assert "measured nothing: fw 2.0 (n/a)" in plots.grid_caption(receipts)
    newest = plots.glance(receipts)[0]["sides"]["newest"]
    assert (newest["status"], newest["moved"]) == ("n/a", None)
    assert "n/a: fw 2.0" in plots.glance_caption(receipts)
    plots.grid_figure(receipts), plots.glance_figure(receipts)  # draw the bands


def test_the_glance_names_each_release_and_what_moved_in_it() -> None:
    (row,) = plots.glance(_three())
    assert {s: (c["release"], c["moved"]) for s, c in row["sides"].items()} == {
        "pin": ("1.0", None), "patch": ("1.0.5", {}), "newest": ("2.0", {"EO": 2, "LV": 1})}
    fig = plots.glance_figure(_three())
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "1.0  (4 cells)" in texts and "1.0.5  unchanged" in texts and "2.0  Δ3: EO, LV" in texts
    assert "1 of 2 releases compared with their pin moved: fw 2.0 (Δ3)" in plots.glance_caption(_three())


def test_sides_name_each_release_once() -> None:
    assert Target("x", "x", "1.0.1", "2.0.0", "1.0.4").sides() == (
        ("pin", "1.0.1"), ("patch", "1.0.4"), ("newest", "2.0.0"))
    assert Target("x", "x", "1.0.1", "1.0.4", "1.0.4").sides() == (("pin", "1.0.1"), ("newest", "1.0.4"))
    assert Target("x", "x", "1.0.1", "1.0.1", "1.0.1").sides() == (("pin", "1.0.1"), ("newest", "1.0.1"))


def test_every_target_is_a_campaign_pinned_as_the_suite_pins_it() -> None:
    from probes.kit.suite import KIT_ENVS

    assert len({t.campaign for t in TARGETS}) == len(TARGETS)
    for t in TARGETS:
        campaign = campaigns.get(t.campaign)
        own = KIT_ENVS.get(t.campaign)
        if own is not None:  # the campaign's own side environment pins it
            assert t.pinned() in own.requirements and t.pinned().endswith(f"=={t.pin}"), t
        else:
            assert t.dist in campaign.packages and md.version(t.dist) == t.pin, t
        assert t.patch.split(".")[:2] == t.pin.split(".")[:2], t
        assert t.requirements(t.newest)[0] == t.pinned().replace(f"=={t.pin}", f"=={t.newest}")
        assert bool(t.needs) == bool(t.gone), t
        if t.needs and own is None:  # what the campaign imports is there at the pin (the name is right)
            assert missing_api(sys.executable, t.needs) == [], t
    assert campaigns.get("drift").plan({"frameworks": ["pydantic_graph"], "profile": "quick", "seed": 0}) == [
        ProbeSpec(f"pydantic_graph.{side}", {"campaign": "pydantic_graph", "side": side, "release": rel,
                                             "profile": "quick"})
        for side, rel in (("pin", "1.107.1"), ("patch", "1.107.10"), ("newest", "2.68.0"))]


def test_a_kit_campaign_with_its_own_environment_keeps_its_other_pins(monkeypatch) -> None:
    adk = by_campaign("google_adk")
    assert adk.requirements("9.9.9")[:3] == ("google-adk==9.9.9", "sqlalchemy[asyncio]==2.1.9",
                                             "psycopg[binary]==3.3.9")
    assert requirement_name("sqlalchemy[asyncio]==2.1.9") == "sqlalchemy"
    # the extras a campaign asks its framework with stay with it at every release
    monkeypatch.setattr(Target, "_own", lambda self: ("agno[sqlite]==3.1.10", "psycopg[binary]==3.3.9"))
    assert Target("x", "agno", "3.1.10", "3.2.0", "3.1.10").requirements("3.2.0") == (
        "agno[sqlite]==3.2.0", "psycopg[binary]==3.3.9", "tqdm", "numpy")
    # a paper campaign and the kit campaign of one framework share one environment per release
    assert side_env(by_campaign("langgraph"), "1.2.24") == side_env(by_campaign("langgraph_kit"), "1.2.24")
    assert side_env(by_campaign("dbos"), "3.4.0") == side_env(by_campaign("dbos_kit"), "3.4.0")


def test_the_kit_swaps_its_interpreter_only_into_a_results_directory_of_its_own(monkeypatch) -> None:
    from probes.kit.suite import KIT_PYTHON, operations_python

    monkeypatch.setenv(KIT_PYTHON, "/elsewhere/bin/python")
    assert operations_python(None) == "/elsewhere/bin/python"
    monkeypatch.delenv("RC_RUNS_DIR")
    with pytest.raises(HarnessError, match="results directory of its own"):
        operations_python(None)
    monkeypatch.delenv(KIT_PYTHON)
    assert operations_python(None) is None


def test_a_kit_campaign_with_its_own_environment_runs_its_operations_where_drift_says(tmp_path, monkeypatch) -> None:
    """Drift's interpreter replaces the campaign's own side environment, which is neither built nor used."""
    from probes.kit.suite import KIT_ENVS, KIT_PYTHON, run_kit_probe

    campaigns.get("openai_agents")
    own = KIT_ENVS["openai_agents"]
    monkeypatch.setattr(type(own), "ensure", lambda self: pytest.fail("the campaign's own environment was used"))
    monkeypatch.setenv(KIT_PYTHON, str(tmp_path / "drift-env" / "bin" / "python"))
    spec = ProbeSpec("baseline.a0.sqlite.rep1", {"protocol": "baseline", "backend": "sqlite", "rep": 1, "answer": 0})
    with contextlib.ExitStack() as stack, pytest.raises(FileNotFoundError, match="drift-env"):
        ctx = ProbeContext(tmp_path, StoreFactory(tmp_path / "stores", stack), 0, {})
        run_kit_probe("probes.frameworks.openai_agents.adapter:OpenAIAgentsAdapter", own, spec, ctx)


def test_a_framework_run_past_its_time_leaves_no_process_behind(tmp_path: Path) -> None:
    """drift's child campaign and everything it started (here a grandchild) are stopped."""
    import os
    import time

    from probes.studies.drift.campaign import _run as run_group

    pidfile = tmp_path / "grandchild.pid"
    script = ("import subprocess, sys, time; p = subprocess.Popen(['sleep', '600']); "
              f"open({str(pidfile)!r}, 'w').write(str(p.pid)); time.sleep(600)")
    with pytest.raises(HarnessError, match="ran past"):
        run_group([sys.executable, "-c", script], dict(os.environ), timeout=20)  # ample to start it
    pid = int(pidfile.read_text())
    for _ in range(100):  # reaped by init once killed: wait for it to go (not a timed assertion)
        status = Path(f"/proc/{pid}/status")
        if not status.exists() or "\tZ" in status.read_text():
            break
        time.sleep(0.1)
    assert not status.exists() or "State:\tZ" in status.read_text()


def _run(tmp_path: Path, name: str, side: str):
    target = by_campaign(name)
    spec = ProbeSpec(f"{name}.{side}", {"campaign": name, "side": side, "release": target.release(side),
                                        "profile": "quick"})
    with contextlib.ExitStack() as stack:
        ctx = ProbeContext(tmp_path, StoreFactory(tmp_path / "stores", stack), 0, {})
        return campaigns.get("drift").run_probe(spec, ctx)


@pytest.mark.parametrize("name", ["pydantic_graph", "pydantic_graph_kit"])  # the paper's campaign is the kit's too
def test_the_kit_campaign_is_na_where_the_newest_release_dropped_persistence(tmp_path: Path, name: str) -> None:
    result = _run(tmp_path, name, "newest")
    assert result.harness_errors == [] and "verdicts" not in result.observations
    assert result.observations["missing"] == ["pydantic_graph.persistence.file:FileStatePersistence "
                                              "(ModuleNotFoundError)"]
    assert result.observations["na"].startswith("not in pydantic-graph 2.68.0") and "removed state persistence" in \
        result.observations["na"]
    assert "run_seconds" not in result.metrics  # nothing ran there


def test_langgraph_kit_at_its_newest_release_runs_the_kit_here_and_its_operations_there(tmp_path: Path) -> None:
    """The harness runs in the main environment (LangGraph 1.2.9); every adapter operation ran 1.2.24."""
    assert md.version("langgraph") == by_campaign("langgraph_kit").pin != "1.2.24"
    result = _run(tmp_path, "langgraph_kit", "newest")
    assert result.harness_errors == [] and result.observations["kind"] == "kit"
    installed = result.observations["installed"]  # as the receipts of the kit run recorded it
    assert installed["langgraph"] == "1.2.24" and installed["langgraph-checkpoint-sqlite"] != "3.1.0"
    planned = campaigns.get("langgraph_kit").plan(campaigns.get("langgraph_kit").resolve(quick=True))
    view = result.observations["verdicts"]
    assert sorted(view) == sorted(s.id for s in planned)
    got = {(v["property"], v["path"]): v["label"] for probe in view.values() for v in probe["verdicts"]}
    # what LangGraph 1.2.24's stock SQLite saver did (deterministic cells; the race's are left out)
    assert got[("LV", "baseline:yes")] == got[("EO", "park-kill")] == got[("CO", "stray-after-completion")] == "✓"
    assert got[("EO", "crash:kill@s2.effect/none-input")] == "D" and got[("PC", "crash:kill@s2.effect/none-input")] == "✓"
    assert got[("CO", "retry:same-pause×3")] == "✗" and got[("FD", "fork:same-pause")] == "✗"


@pytest.mark.parametrize("bad", [{"frameworks": ["nosuch"]}, {"profile": "huge"}])
def test_bad_drift_parameters_are_usage_errors(bad) -> None:
    from probes.core.errors import UsageError

    with pytest.raises(UsageError):
        campaigns.get("drift").resolve(bad)
