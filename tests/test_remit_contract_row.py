"""remit-contract 0.1.2 (the paper's build) through the LangGraph campaign's own probes: the
``langgraph+remit-contract`` row on SQLite for a few protocols, the measured refusal of its gate in
memory, and ``remit.row`` scored on that build with remit_ref beside it."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from probes.core.backends import StoreFactory
from probes.core.campaign import ProbeContext
from probes.remit import campaign as rc
from probes.remit.verdicts import CONTRACT, FRAMEWORK


def test_plan_runs_the_same_probes_for_both_builds() -> None:
    params = {p.name: p.quick for p in rc.PARAMS}
    params.update(backends=["memory", "sqlite"])
    lg = [s for s in rc.plan(params) if s.id.startswith("lg.")]
    ours = {s.id.removesuffix(".remit") for s in lg if s.args["arm"] == "remit"}
    theirs = {s.id.removesuffix(".remit-contract") for s in lg if s.args["arm"] == "remit-contract"}
    assert ours == theirs and ours
    opts = {s.id: s.args["remit_options"] for s in lg if s.args["arm"] == "remit-contract"}
    assert opts["lg.fd.bare.sqlite.remit-contract"] == {"cross_process_gate": True}
    assert opts["lg.fd.bare.memory.remit-contract"] == {"cross_process_gate": False}
    assert opts["lg.cv.sqlite.remit-contract"]["validator"] == "cv_items"


def test_gate_is_refused_in_memory() -> None:
    """Why contract_options turns the gate off in memory: remit-contract refuses it there, loudly."""
    import remit
    from langgraph.checkpoint.memory import InMemorySaver

    with pytest.raises(RuntimeError, match="cross_process_gate"):
        remit.wrap(InMemorySaver, cross_process_gate=True)
    remit.wrap(InMemorySaver)  # the README's quick start: the default wrap is accepted


def test_contract_row_on_sqlite(tmp_path: Path, outside_basetemp: Path) -> None:
    params = {p.name: p.quick for p in rc.PARAMS}
    params.update(backends=["sqlite"], builds=["remit-contract"],
                  langgraph_kinds=["fd", "co_stray", "eo_interrupt", "fi"])
    wanted = {"lg.fd.bare.sqlite.remit-contract", "lg.co.stray.inprocess.sqlite.remit-contract",
              "lg.eo.interrupt.graph.sqlite.remit-contract", "lg.fi.sqlite.remit-contract"}
    specs = [s for s in rc.plan(params) if s.id in wanted]
    assert {s.id for s in specs} == wanted
    labels = {}
    with contextlib.ExitStack() as stack:
        stores = StoreFactory(outside_basetemp / "stores", stack)
        for s in specs:
            work = tmp_path / s.id
            work.mkdir()
            res = rc.run_probe(s, ProbeContext(work, stores, 0, params))
            assert res.harness_errors == [], (s.id, res.harness_errors)
            for v in res.verdicts:
                assert v.framework == CONTRACT
                labels[(s.id, v.property.value)] = v.label.value
    # measured on remit-contract 0.1.2: the fork is served its own value, a stray resume is inert,
    # the interrupt path fires once
    assert labels[("lg.fd.bare.sqlite.remit-contract", "FD")] == "✓"
    assert labels[("lg.co.stray.inprocess.sqlite.remit-contract", "CO")] == "✓"
    assert labels[("lg.eo.interrupt.graph.sqlite.remit-contract", "EO")] == "✓"
    # a declared retry on remit-contract's wire (explicit address, no remit_fork flag) re-fires the gate
    assert labels[("lg.fi.sqlite.remit-contract", "FI")] != "✓"


def test_remit_row_headline_scores_the_papers_build() -> None:
    m = rc.remit_row_headline({"FD": "✓", "CV": "U"}, {"FD": "✓", "CV": "✓"}, [], [])
    assert m.value["CV"] == "U" and m.value["reimplementation"] == {"FD": "✓", "CV": "✓"}
    assert m.build.startswith("remit-contract")
    alone = rc.remit_row_headline({}, {"FD": "✓"}, [], [])
    assert "remit_ref" in alone.build and "reimplementation" not in alone.value
    assert isinstance(rc.remit_row_headline({}, {}, [], []), str)
    assert FRAMEWORK != CONTRACT


def test_contract_row_on_the_papers_build_is_not_a_reimplementation() -> None:
    """With receipts recording remit-contract 0.1.2, remit.row is compared as the paper's build."""
    from types import SimpleNamespace

    from probes.headline import REIMPLEMENTATION, compare, load_published

    rec = SimpleNamespace(probe="lg.fd.bare.sqlite.remit-contract",
                          manifest={"fingerprint_inputs": {"packages": {"remit-contract": "0.1.2"}, "code": "c0de"}})
    entry = next(e for e in load_published() if e["id"] == "remit.row")
    labels = {"FD": "✓", "CV": "✓", "CO": "✓", "EO": "✓", "PC": "✓", "RD": "✓"}
    on_build = rc.remit_row_headline(labels, labels, [rec], [])
    assert on_build.build == "remit-contract 0.1.2"
    assert compare(entry, on_build, "").status != REIMPLEMENTATION
    ours = rc.remit_row_headline({}, labels, [], [rec])
    assert compare(entry, ours, "").status == REIMPLEMENTATION
