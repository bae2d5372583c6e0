"""The conformance kit: protocols written once, judged from histories, on the real MAF.

Microsoft Agent Framework runs in the main environment and imports fast, so the kit's
own behaviour is tested on it: n/a for a missing capability, adapter bugs as harness
errors, byte-identical verdicts across runs, the third-party ``--adapter`` entry.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from probes import campaigns
from probes.core.checker import DocRef, Property
from probes.core.history import Event, History, Kind
from probes.kit.judge import cite, durable_prefix
from probes.kit.protocols import _edits
from tests.conftest import ROOT
from tests.installed import require

require("agent_framework")


def _h(*events: tuple) -> History:
    return History.of_events(Event(k, inc, step) for k, inc, step in events)


def test_durable_prefix_needs_a_write_after_the_step_ended() -> None:
    h = _h((Kind.STEP_END, "a", "s1"), (Kind.CRASH, "harness", None))
    assert durable_prefix(h, h.of(Kind.CRASH)[0]) == []
    h = _h((Kind.STEP_END, "a", "s1"), (Kind.PERSIST, "a", None), (Kind.STEP_END, "a", "s2"),
           (Kind.CRASH, "harness", None))
    assert durable_prefix(h, h.of(Kind.CRASH)[0]) == ["s1"]


def test_citation_lookup_takes_the_most_specific_pattern() -> None:
    refs = {"EO *": DocRef("p1", "q1", "claims", "X-1", "x 1"),
            "EO crash:*/resume": DocRef("p2", "q2", "deviation", "X-2", "x 1")}
    assert cite(refs, Property.EO, "crash:kill@s1.effect/resume").page == "p2"
    assert cite(refs, Property.EO, "park-kill").page == "p1"
    assert cite(refs, Property.CV, "park-kill") is None


def test_tamper_edits_are_structural_or_type_valid() -> None:
    doc = {"a": 1, "b": "x", "c": {"d": 1}, "e": True}
    structural = dict(_edits(doc, "structural"))
    assert structural["drop:a"](doc) == {"b": "x", "c": {"d": 1}, "e": True}
    assert structural["scalar-for:c"](doc)["c"] == 0
    typed = dict(_edits(doc, "typed"))
    assert set(typed) == {"plus-one:a", "other-string:b", "flip:e"}
    assert typed["flip:e"](doc)["e"] is False and typed["plus-one:a"](doc)["a"] == 2


def _run(adapter: str, out: Path, *params: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "probes", "run", "kit_test", "--adapter", adapter, "--quick", "--out", str(out)]
    for p in params:
        args += ["-p", p]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "RC_NO_PROGRESS": "1", "PYTHONPATH": str(ROOT)})


def _verdicts(out: Path) -> list[dict]:
    view = json.loads((out / "kit_test" / "verdicts.json").read_text())
    return [v for probe in view["probes"].values() for v in probe["verdicts"]]


def test_third_party_adapter_runs_and_verdicts_are_byte_identical(tmp_path: Path) -> None:
    """``--adapter module:Class``: real runs, twice; the verdict view must not change by a byte."""
    params = ('protocols=["baseline","fork","crash"]', 'crash_points=["s2.effect"]', 'crash_hows=["kill"]')
    first = _run("probes.frameworks.maf.adapter:MafAdapter", tmp_path / "a", *params)
    assert first.returncode == 0, first.stderr[-2000:]
    second = _run("probes.frameworks.maf.adapter:MafAdapter", tmp_path / "b", *params)
    assert second.returncode == 0, second.stderr[-2000:]
    a = (tmp_path / "a" / "kit_test" / "verdicts.json").read_bytes()
    assert a == (tmp_path / "b" / "kit_test" / "verdicts.json").read_bytes()
    by = {(v["property"], v["path"]): v for v in _verdicts(tmp_path / "a")}
    assert by[("EO", "baseline:yes")]["label"] == "✓"
    assert by[("FD", "fork:same-pause")]["evidence"]["observed"] == "s2 served 'no'"
    assert by[("FD", "fork:same-pause")]["evidence"]["side"] == "fork: served the new answer"
    # a kill after the gated effect fired and before its checkpoint: recovery answers again
    crash = by[("EO", "crash:kill@s2.effect/latest-checkpoint")]
    assert crash["evidence"]["effect_counts"] == {"e1": 1, "e2": 2}


def test_missing_capability_is_not_applicable_with_the_adapters_reason(tmp_path: Path) -> None:
    out = _run("tests.fixtures.kit_adapters:NoReaddress", tmp_path, 'protocols=["fork","answers"]')
    assert out.returncode == 0, out.stderr[-2000:]
    verdicts = _verdicts(tmp_path)
    assert {v["label"] for v in verdicts} == {"n/a"}
    assert all(v["evidence"]["why"] == "test: this adapter cannot address an answered pause" for v in verdicts)


def test_answering_a_pause_again_is_three_capabilities(tmp_path: Path) -> None:
    """A framework that takes a retry of the current pause but refuses a fork is measured on the
    retry: only the fork is n/a, with the adapter's reason."""
    out = _run("tests.fixtures.kit_adapters:NoFork", tmp_path, 'protocols=["fork","answers"]')
    assert out.returncode == 0, out.stderr[-2000:]
    by = {v["path"].split(":")[0]: v for v in _verdicts(tmp_path)}
    assert by["fork"]["label"] == "n/a" and by["fork"]["evidence"]["why"] == "test: a second answer of another value is refused"
    assert by["retry"]["label"] != "n/a"


def test_an_adapter_bug_is_a_harness_error_not_a_verdict(tmp_path: Path) -> None:
    out = _run("tests.fixtures.kit_adapters:BrokenStart", tmp_path, 'protocols=["baseline"]')
    assert out.returncode == 1
    assert "harness error" in out.stderr and "KeyError" in out.stderr
    assert _verdicts(tmp_path) == []


def test_bad_adapter_is_a_one_line_usage_error(tmp_path: Path) -> None:
    out = _run("no.such.module:Adapter", tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and out.stderr.startswith("error: cannot import adapter")
    assert not (tmp_path / "kit_test").exists()


KIT_FRAMEWORKS = [n for n, target in campaigns.discovered().items() if ".frameworks." in target]


def test_the_kit_frameworks_are_discovered() -> None:
    """The template test below is parametrized by discovery: an empty discovery would leave it no case."""
    assert {"maf", "langgraph_kit", "burr", "temporal"} <= set(KIT_FRAMEWORKS), KIT_FRAMEWORKS


@pytest.mark.parametrize("name", KIT_FRAMEWORKS)
def test_kit_chapters_are_the_template(name: str) -> None:
    """Every kit chapter is generated from one template (cells with stable ids) when it runs: none
    is committed, and generating it twice gives the same bytes (a run's chapter stamp hashes them)."""
    from probes import NOTEBOOKS_DIR
    from probes.execute import notebook_path
    from probes.kit.chapter import notebook

    assert not (NOTEBOOKS_DIR / f"{name}.ipynb").exists()
    path = notebook_path(name)
    first = path.read_bytes()
    assert json.loads(first) == json.loads(json.dumps(notebook(name)))
    assert notebook_path(name).read_bytes() == first


def test_a_kit_campaign_fingerprint_covers_its_adapter_package() -> None:
    """Editing the adapter or its side environment's pins makes the campaign out of date."""
    from probes import campaigns
    from probes.core.runs import campaign_sources
    from probes.kit.suite import adapter_sources

    assert "probes/frameworks/google_adk" in campaign_sources(campaigns.get("google_adk"))
    assert "probes/kit" in campaign_sources(campaigns.get("maf"))
    assert adapter_sources("probes.frameworks.maf.adapter:MafAdapter") == ("probes/frameworks/maf",)
    assert adapter_sources("somewhere_else.adapter:X") == ()


def test_a_race_receipt_is_rejudged_from_its_trials_byte_identical(tmp_path: Path) -> None:
    """Every trial's history is in the receipt, and the cell's verdicts follow from it alone."""
    from probes.core.atomic import canonical_json
    from probes.core.history import History
    from probes.core.receipt import load_campaign
    from probes.kit.race import rejudge_receipt
    from probes.frameworks.maf.adapter import MafAdapter

    out = _run("probes.frameworks.maf.adapter:MafAdapter", tmp_path, 'protocols=["race"]', "race_k=[2]",
               "race_max_trials=2", "race_min_trials=1")
    assert out.returncode == 0, out.stderr[-2000:]
    receipts = load_campaign(tmp_path / "kit_test")
    assert [r.probe for r in receipts] == ["race.k2.file.rep1"]
    receipt = receipts[0]
    trials = receipt.observations["race"]["trials"]
    assert [t["trial"] for t in trials] == list(range(1, len(trials) + 1)) and 1 <= len(trials) <= 2
    for t in trials:  # each trial's whole history: its own start, its k racers' answer, their effects
        h = History.from_json(t["history"])
        assert len(h.of(Kind.START)) == 1 and len(h.of(Kind.ANSWER)) == 1 and h.of(Kind.EFFECT)
    stored = json.loads(receipt.path.read_text())["verdicts"]
    again = rejudge_receipt(receipt, MafAdapter)
    assert canonical_json([v.to_json() for v in again]) == canonical_json(stored)
    co = {v["property"]: v for v in stored}["CO"]
    assert co["evidence"]["trials"] == len(trials)
    assert co["evidence"]["gate_fires_by_trial"] == [
        len([e for e in History.from_json(t["history"]).of(Kind.EFFECT) if e.effect == "e2"]) for t in trials]
    # a receipt missing a trial the rule ran, or holding one it never would, is refused
    if len(trials) == 2:
        receipt.observations["race"]["trials"] = trials[:1]
        with pytest.raises(ValueError, match="would have run another trial"):
            rejudge_receipt(receipt, MafAdapter)
    receipt.observations["race"]["trials"] = trials + [dict(trials[0], trial=len(trials) + 1)]
    with pytest.raises(ValueError, match="after the rule stopped"):
        rejudge_receipt(receipt, MafAdapter)


def test_race_budgets_are_checked_before_any_work(tmp_path: Path) -> None:
    for bad, words in (("race_threshold=1.0", "race_threshold: 1.0 is out of range"),
                       ("race_max_seconds=0", "race_max_seconds: 0.0 is out of range"),
                       ("race_max_trials=0", "race_max_trials: 0 is out of range"),
                       ("race_min_trials=5", "race_min_trials (5) must not exceed race_max_trials (3)")):
        out = _run("probes.frameworks.maf.adapter:MafAdapter", tmp_path, 'protocols=["race"]', bad)
        assert out.returncode == 2 and words in out.stderr, out.stderr[-500:]
        assert not (tmp_path / "kit_test").exists()


def test_the_smoke_profile_runs_every_protocol_in_one_or_two_cells() -> None:
    """--smoke: each protocol once (baseline's two answers and tamper's two kinds are its cells)."""
    from collections import Counter

    from probes.kit.suite import PROTOCOL_NAMES, SMOKE, kit_campaign

    campaign = kit_campaign("plain_smoke", "smoke", "tests.fixtures.plain_adapter:PlainAdapter")
    specs = campaign.plan(campaign.resolve(SMOKE, quick=True))
    per_protocol = Counter(s.args["protocol"] for s in specs)
    assert set(per_protocol) == set(PROTOCOL_NAMES)
    assert {p: n for p, n in per_protocol.items() if n > 1} == {"baseline": 2, "tamper": 2}
    race = next(s for s in specs if s.args["protocol"] == "race")
    assert (race.args["min_trials"], race.args["max_trials"]) == (1, 1)
    savekill = next(s for s in specs if s.args["protocol"] == "savekill")
    assert savekill.args["cap"] == 1  # the first save a kill reaches, not every save of the run


def test_a_third_party_adapters_framework_is_in_its_fingerprint() -> None:
    """``--adapter`` names no packages: the adapter's declared ``packages`` are fingerprinted, so an
    upgrade of its framework is a new run, not the old one's results."""
    from probes.core.runs import fingerprint_inputs
    from probes.kit.suite import kit_campaign

    campaign = kit_campaign("kit_test", "t", "tests.fixtures.kit_adapters:NoReaddress")
    assert campaign.packages == ("agent-framework-core",)
    assert "agent-framework-core" in fingerprint_inputs(campaign, campaign.resolve(quick=True))["packages"]
