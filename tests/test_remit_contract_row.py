"""remit-contract 0.1.2 (the paper's build) through the LangGraph protocols on the conformance kit: the
plan runs the same kit cells for both builds (the partition kind aside), each on its own adapter; the ``langgraph+remit-contract``
row on SQLite for a few protocols; the measured refusal of its gate in memory; and ``remit.row`` scored
on that build with remit_ref beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes.paper import remit as remit_paper
from probes.studies.remit import campaign as rc
from probes.studies.remit.verdicts import CONTRACT, FRAMEWORK, saver_only
from tests.kit_checks import run_probes


def test_plan_runs_the_same_kit_cells_for_both_builds() -> None:
    params = {p.name: p.quick for p in rc.PARAMS}
    params.update(backends=["memory", "sqlite"], langgraph_kinds=list(rc.LG_KINDS))
    lg = [s for s in rc.plan(params) if s.id.startswith("lg.")]
    ours = {s.id.removeprefix("lg.remit_ref.") for s in lg if s.args["build"] == "remit_ref"}
    theirs = {s.id.removeprefix("lg.remit-contract.") for s in lg if s.args["build"] == "remit-contract"}
    # but the partition kind: remit_ref's gate only (rc.PARTITION_BUILDS: remit-contract has no lease, and its gate
    # refuses the racer to be cut off before its cut point), as built and with the lease variant
    assert ours - theirs == {"partition.s2.consumed.sqlite.rep1", "lease.partition.s2.consumed.sqlite.rep1"}
    assert theirs <= ours and theirs and rc.PARTITION_BUILDS == ("remit_ref",)
    assert all(s.args["backend"] == "sqlite" for s in lg)  # the kit measures across processes: no memory cells
    adapters = {s.id: s.args["adapter"].rpartition(":")[2] for s in lg}
    assert adapters["lg.remit-contract.fork.sqlite.rep1"] == "ContractAdapter"
    assert adapters["lg.remit_ref.intent.sqlite.rep1"] == "RemitAdapter"
    # the crash-type protocols measure the wrapper alone: the saver-only subject, on either API
    assert adapters["lg.remit_ref.crash.kill.s2.begin.none-input.sqlite.rep1"] == "RemitSaverOnlyAdapter"
    assert adapters["lg.remit-contract.functional.crash.kill.s2.begin.none-input.sqlite.rep1"] == "ContractSaverOnlyAdapter"
    assert {s.args.get("of", s.args["protocol"]) for s in lg} >= {"fork", "fork_ways", "intent", "stray", "baseline",
                                                                  "parkkill", "crash", "savekill", "rd"}
    # every legacy kind is measured by protocols that exist (none plans nothing silently)
    assert {p for ps in rc.KIND_PROTOCOLS.values() for p in ps} <= set(rc.available_protocols())


def test_the_adapters_name_their_subjects_and_carry_the_legacy_citations() -> None:
    from probes.kit.adapter import Capability
    from probes.studies.remit import kit_adapters as ka

    assert (ka.RemitAdapter.framework, ka.ContractAdapter.framework) == (FRAMEWORK, CONTRACT)
    assert ka.ContractSaverOnlyAdapter.framework == saver_only(CONTRACT)
    assert ka.RemitAdapter.citations == {} and ka.RemitSaverOnlyAdapter.citations == {}
    assert {k: d.source for k, d in ka.ContractAdapter.citations.items()} == {
        "CV *": "RC-1", "FI second-resume:declared-intent": "RC-2"}
    assert ka.ContractSaverOnlyAdapter.citations == {}
    assert all(a.declares(Capability.INTENT) for a in (ka.RemitAdapter, ka.ContractAdapter))


def test_gate_is_refused_in_memory() -> None:
    """remit-contract's gate needs a durable saver: in memory it refuses, loudly (the LangGraph arm measures
    on SQLite and PostgreSQL only)."""
    import remit
    from langgraph.checkpoint.memory import InMemorySaver

    with pytest.raises(RuntimeError, match="cross_process_gate"):
        remit.wrap(InMemorySaver, cross_process_gate=True)
    remit.wrap(InMemorySaver)  # the README's quick start: the default wrap is accepted


def test_contract_row_on_sqlite(tmp_path: Path, outside_basetemp: Path) -> None:
    params = {p.name: p.quick for p in rc.PARAMS}
    params.update(backends=["sqlite"], builds=["remit-contract"], langgraph_kinds=["fd", "co_stray", "eo_interrupt", "fi"])
    wanted = {"lg.remit-contract.fork.sqlite.rep1", "lg.remit-contract.stray.sqlite.rep1",
              "lg.remit-contract.baseline.a0.sqlite.rep1", "lg.remit-contract.intent.sqlite.rep1"}
    specs = [s for s in rc.plan(params) if s.id in wanted]
    assert {s.id for s in specs} == wanted
    labels = {}
    for s, res in run_probes(rc.run_probe, specs, params, tmp_path, outside_basetemp / "stores"):
        for v in res.verdicts:
            assert v.framework == CONTRACT
            labels[(s.id, v.property.value)] = v
    # measured on remit-contract 0.1.2: the fork is served its own value, the clean run fires each effect once
    assert labels[("lg.remit-contract.fork.sqlite.rep1", "FD")].label.value == "✓"
    assert labels[("lg.remit-contract.baseline.a0.sqlite.rep1", "EO")].label.value == "✓"
    # from a fresh process, with fork_on_explicit_checkpoint=False, its gate refuses even the first answer
    # (the parked run's own process holds the claim): the declarations are not honoured, a documented deviation
    fi = labels[("lg.remit-contract.intent.sqlite.rep1", "FI")]
    assert fi.label.value == "D" and fi.doc.source == "RC-2"


def test_remit_row_headline_scores_the_papers_build() -> None:
    m = remit_paper.remit_row_headline({"FD": "✓", "CV": "U"}, {"FD": "✓", "CV": "✓"}, [], [])
    assert m.value["CV"] == "U" and m.value["reimplementation"] == {"FD": "✓", "CV": "✓"}
    assert m.build.startswith("remit-contract")
    alone = remit_paper.remit_row_headline({}, {"FD": "✓"}, [], [])
    assert "remit_ref" in alone.build and "reimplementation" not in alone.value
    assert isinstance(remit_paper.remit_row_headline({}, {}, [], []), str)
    assert FRAMEWORK != CONTRACT


def test_the_row_says_which_paths_give_a_label_other_than_pass() -> None:
    """``remit.row``'s explanation names where a non-✓ label comes from (path and backends), so a reader
    sees that FD's U is one fork path, not forking as such."""
    from types import SimpleNamespace

    from probes.core.checker import Label, Property
    from probes.studies.remit.verdicts import where_not_conformant

    def v(prop: str, label: Label, path: str, backend: str, framework: str = CONTRACT) -> SimpleNamespace:
        return SimpleNamespace(framework=framework, property=Property(prop), label=label, path=path, backend=backend)

    rec = SimpleNamespace(verdicts=[
        v("FD", Label.PASS, "fork:same-pause", "sqlite"), v("FD", Label.UNDOC, "fork:update-state", "sqlite"),
        v("FD", Label.UNDOC, "fork:update-state", "postgres"), v("CV", Label.PASS, "tamper:typed", "sqlite"),
        v("LV", Label.UNDOC, "park-kill", "sqlite"),  # not one of the row's published properties
        v("EO", Label.UNDOC, "crash:kill", "sqlite", framework=saver_only(CONTRACT))])
    assert where_not_conformant([rec], CONTRACT) == "FD U: fork:update-state (postgres, sqlite)"
    assert where_not_conformant([rec], FRAMEWORK) == ""


def test_contract_row_on_the_papers_build_is_not_a_reimplementation() -> None:
    """With receipts recording remit-contract 0.1.2, remit.row is compared as the paper's build."""
    from types import SimpleNamespace

    from probes.headline import REIMPLEMENTATION, compare, load_published

    rec = SimpleNamespace(probe="lg.remit-contract.fork.sqlite.rep1", verdicts=[],
                          manifest={"fingerprint_inputs": {"packages": {"remit-contract": "0.1.2"}, "code": "c0de"}})
    entry = next(e for e in load_published() if e["id"] == "remit.row")
    labels = {"FD": "✓", "CV": "✓", "CO": "✓", "EO": "✓", "PC": "✓", "RD": "✓"}
    on_build = remit_paper.remit_row_headline(labels, labels, [rec], [])
    assert on_build.build == "remit-contract 0.1.2"
    assert compare(entry, on_build, "").status != REIMPLEMENTATION
    ours = remit_paper.remit_row_headline({}, labels, [], [rec])
    assert compare(entry, ours, "").status == REIMPLEMENTATION


def test_a_refused_answer_before_the_crash_point_is_measured(tmp_path: Path, outside_basetemp: Path) -> None:
    """remit-contract refuses a functional-API answer from a process other than the parked run's, so a crash
    point inside the answered step is never reached: that refusal is the framework's behaviour (kept in the
    observations, LV not ✓), not a harness error."""
    params = {p.name: p.default for p in rc.PARAMS}
    params.update(backends=["sqlite"], builds=["remit-contract"], langgraph_kinds=["crash", "eo_interrupt"])
    wanted = "lg.remit-contract.functional.crash.kill.s2.effect.none-input.sqlite.rep1"
    specs = [s for s in rc.plan(params) if s.id == wanted]
    assert [s.id for s in specs] == [wanted]
    [(_, res)] = run_probes(rc.run_probe, specs, params, tmp_path, outside_basetemp / "stores")
    assert "RemitConsumeConflict" in res.observations["refused"] and "never reached" in res.observations["refused"]
    labels = {v.property.value: v.label.value for v in res.verdicts}
    assert labels["EO"] == "✓" and labels["LV"] != "✓"
