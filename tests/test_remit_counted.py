"""REMIT's counted cost (campaign remit_cost): its arithmetic on hand-made inputs, its parsers on real valgrind and
strace output of tiny runs made here, its worker under strace, and its parameters' ranges."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from probes.core.errors import UsageError
from probes.studies.remit import counted
from probes.studies.remit.cost import CAMPAIGN, plan


def test_per_protocol_subtracts_the_start_up_and_divides() -> None:
    assert counted.per_protocol(1_000_500, 500, 100) == 10_000
    assert counted.per_protocol(300, 300, 7) == 0
    with pytest.raises(ValueError):
        counted.per_protocol(10, 5, 0)


def test_median_range_of_runs() -> None:
    assert counted.median_range([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0}
    assert counted.median_range([4.0, 1.0, 2.0, 3.0])["median"] == 2.5
    with pytest.raises(ValueError):
        counted.median_range([])


def _receipt(backend: str, arms: dict[str, Any]) -> Any:
    return SimpleNamespace(probe=f"counted.{backend}", metrics={"backend": backend, "arms": arms})


def _arm(arm: str, per_run: list[float], fdatasync: list[float], annotation: dict[str, float]) -> dict[str, Any]:
    return {"arm": arm, "backend": "sqlite", "protocols": 100, "runs": len(per_run),
            "instructions": {"per_run": per_run, "annotation": annotation},
            "syscalls": {"per_run": {"fsync": [0.0] * len(per_run), "fdatasync": fdatasync,
                                     "write": [10.0] * len(per_run), "pwrite64": [0.0] * len(per_run),
                                     "sendto": [0.0] * len(per_run)}}}


def test_counted_table_ratio_range_and_syscalls_from_receipts() -> None:
    table = counted.counted_table([_receipt("sqlite", {
        "stock": _arm("stock", [1000.0, 990.0, 1010.0], [4.0, 4.0, 4.0], {"a.c:f": 600.0, "b.c:g": 400.0}),
        "remit_gate": _arm("remit_gate", [1030.0, 1010.0, 1040.0], [5.0, 5.0, 5.0],
                           {"a.c:f": 610.0, "b.c:g": 400.0, "c.c:h": 10.0}),
    })])["sqlite"]
    gate = table["remit_gate"]
    assert gate["instructions"] == {"median": 1030.0, "min": 1010.0, "max": 1040.0}
    assert gate["ratio"] == pytest.approx(1.03)
    assert gate["ratio_range"] == pytest.approx([1.01, 1.04])
    assert gate["syscalls"]["fdatasync"] == 5.0 and gate["extra_syscalls"]["fdatasync"] == 1.0
    assert table["stock"]["ratio"] == 1.0
    assert counted.function_delta({"sqlite": table}, "sqlite", "remit_gate") == {"a.c:f": 10.0, "c.c:h": 10.0,
                                                                                  "b.c:g": 0.0}

    from probes.studies.remit import cost_report

    findings = cost_report.counted_findings({"sqlite": table})
    assert any("`remit_gate`: 1.0300x" in f and "met at the median, not in every run" in f for f in findings)
    assert any("than stock in every run: `remit_gate` fdatasync 5 vs 4" in f
               for f in findings)
    assert cost_report.counted_explained({"sqlite": table}) == [("sqlite", "remit_gate")]
    within = counted.counted_table([_receipt("sqlite", {
        "stock": _arm("stock", [1000.0], [4.0, 4.0, 5.0], {}),
        "remit_bare": _arm("remit_bare", [1001.0], [4.0, 5.0, 5.0], {})})])
    line = cost_report.counted_findings(within)[-1]
    assert "no arm makes more" in line and "within the runs' spread of stock: `remit_bare` fdatasync 5 vs 4" in line
    frame = cost_report.counted_frame({"sqlite": table})
    assert list(frame["arm"]) == ["stock", "remit_gate"]


def test_cachegrind_and_cg_annotate_parsers_on_a_real_tiny_run(tmp_path: Path) -> None:
    """Two runs of a tiny interpreter loop (no site packages): the longer loop costs more, and the
    per-function table cg_annotate prints (threshold 0) sums to the file's total. (The command is one
    line: cachegrind writes it into its output's header, where a newline breaks cg_annotate.)"""
    totals, tables = [], []
    for n in (0, 200_000):
        out = tmp_path / f"cg.{n}"
        subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
                        sys.executable, "-I", "-S", "-c", f"s = [i * 2 for i in range({n})]"],
                       check=True, capture_output=True)
        totals.append(counted.cachegrind_total(out))
        text = subprocess.run(["cg_annotate", "--threshold=0", "--auto=no", "--show-percs=no", str(out)],
                              check=True, capture_output=True, text=True).stdout
        tables.append(counted.parse_cg_annotate(text))
    assert all(sum(t.values()) == total for t, total in zip(tables, totals))
    per_iteration = counted.per_protocol(totals[1], totals[0], 200_000)
    assert 10 < per_iteration < 2_000
    assert any(fn.endswith(":_PyEval_EvalFrameDefault") for fn in tables[1])


def test_each_counted_run_is_a_valgrind_process_of_its_own(tmp_path: Path) -> None:
    """Two runs of stock, one protocol each: two processes, each with its own start-up subtracted (the
    two start-ups are counted apart), both per-protocol counts in the range of an interrupt-and-resume."""
    res = counted.count_instructions("stock", "sqlite", "", tmp_path, protocols=1, runs=2)
    assert res["processes"] == 2 and len(res["per_run"]) == 2 and len(res["startup_instructions"]) == 2
    assert all(s > 100 * p for s, p in zip(res["startup_instructions"], res["per_run"]))
    assert all(1e6 < p < 1e8 for p in res["per_run"]), res["per_run"]
    assert res["annotation"] and abs(res["annotated_total"] - res["per_run"][0]) < 0.01 * res["per_run"][0]
    assert not list(tmp_path.glob("cg-stock-*"))  # the cachegrind files are removed


def test_strace_parser_on_a_real_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "strace.txt"
    target = tmp_path / "f"
    code = (f"import os\nfd = os.open({str(target)!r}, os.O_WRONLY | os.O_CREAT)\n"
            "for _ in range(7): os.write(fd, b'x')\nos.fsync(fd); os.fdatasync(fd); os.fdatasync(fd)\n"
            "os.pwrite(fd, b'y', 0)")
    subprocess.run(["strace", "-f", "-c", "-o", str(out), "-e", "trace=" + ",".join(counted.TRACED),
                    sys.executable, "-I", "-S", "-c", code], check=True, capture_output=True)
    calls = counted.parse_strace_summary(out.read_text())
    assert calls.get("write", 0) >= 7 and calls["fsync"] == 1 and calls["fdatasync"] == 2 and calls["pwrite64"] == 1


def test_the_worker_counted_under_strace_writes_durably_per_protocol(tmp_path: Path) -> None:
    """Stock SqliteSaver, 2 protocols against 0: every protocol commits to the WAL (SQLite writes with
    pwrite64 and syncs with fdatasync), so each protocol adds both."""
    res = counted.count_syscalls("stock", "sqlite", str(tmp_path), tmp_path, protocols=2, runs=1)
    assert res["per_run"]["pwrite64"][0] > 0 and res["per_run"]["fdatasync"][0] > 0
    assert res["startup"]["pwrite64"] > 0 and res["startup"]["fdatasync"] > 0


def test_own_bytecodes_keeps_the_wrappers_functions_per_protocol() -> None:
    opcodes = {"langgraph/pregel/main.py:invoke": 900, "remit_ref/saver.py:put": 30, "remit/shim.py:put": 12,
               "remit_ref/core.py:first_invalid": 60, "sqlite3/dbapi2.py:x": 8}
    got = counted.own_bytecodes(opcodes, 3)
    assert got["total"] == round(1010 / 3, 1) and got["own_total"] == round(102 / 3, 1)
    assert list(got["own"]) == ["remit_ref/core.py:first_invalid", "remit_ref/saver.py:put", "remit/shim.py:put"]


def test_the_wrappers_own_bytecodes_are_counted_on_every_thread_and_repeat_exactly(tmp_path: Path) -> None:
    """A real traced session: stock runs none of REMIT's code; REMIT's default runs its validator on the
    write path (LangGraph's pool threads) and its read path, and its own count is the same in a second
    process, although the total (LangGraph's polling of its pool) may move."""
    stock = counted.count_bytecodes("stock", "sqlite", "", tmp_path / "a", protocols=3)
    first = counted.count_bytecodes("remit_default", "sqlite", "", tmp_path / "b", protocols=3)
    again = counted.count_bytecodes("remit_default", "sqlite", "", tmp_path / "c", protocols=3)
    assert stock["own_total"] == 0 and stock["total"] > 10_000
    assert {"remit_ref/saver.py:put_writes", "remit_ref/saver.py:_validate", "remit_ref/saver.py:get_tuple"} <= set(first["own"])
    assert first["own"] == again["own"] and first["own_total"] > 0


def test_a_failing_counting_child_is_an_error() -> None:
    good = '{"pid": 1, "size": 0, "protocols": 1, "fired": 1, "ok": true}'
    assert counted._children(good, [0])[0]["pid"] == 1
    with pytest.raises(counted.CountError):
        counted._children('{"pid": 1, "size": 0, "error": "boom"}', [0])
    with pytest.raises(counted.CountError):
        counted._children(good, [0, 5])
    with pytest.raises(counted.CountError):
        counted._children('{"pid": 1, "size": 0, "protocols": 2, "fired": 1, "ok": true}', [0])


@pytest.mark.parametrize("override", [{"counted_protocols": 0}, {"counted_runs": 0}, {"counted_jobs": 0},
                                      {"counted_arms": ["nope"]}, {"counted_backends": ["memory"]},
                                      {"counted_backends": []}])
def test_counted_parameters_are_validated_before_any_work(override: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        CAMPAIGN.resolve(override)


def test_the_counted_campaign_plans_one_probe_per_backend_and_shares_the_machine() -> None:
    from probes.studies.remit.bench import CAMPAIGN as BENCH

    assert [s.id for s in plan(CAMPAIGN.resolve(quick=True))] == ["counted.sqlite"]
    assert [s.id for s in plan(CAMPAIGN.resolve())] == ["counted.sqlite", "counted.postgres"]
    assert CAMPAIGN.resolve({}, quick=True)["counted_protocols"] < CAMPAIGN.resolve({})["counted_protocols"]
    # counts do not depend on load: unlike the wall-clock benchmark, it does not need the machine alone;
    # it is REMIT's measurement, not the paper's, so the plain run leaves it out
    assert not CAMPAIGN.runs_alone and BENCH.runs_alone and not CAMPAIGN.in_default_run
    assert not [s for s in BENCH.plan(BENCH.resolve()) if s.id.startswith("counted.")]


def test_the_bytecode_table_lists_the_wrappers_functions_and_its_share_of_stocks_total() -> None:
    from probes.studies.remit import cost_report

    table = {"sqlite": {"stock": {"bytecodes": {"total": 1000.0, "own_total": 0, "own": {}}},
                        "remit_gate": {"bytecodes": {"total": 1040.0, "own_total": 40.0,
                                                     "own": {"remit_ref/saver.py:put": 30.0, "remit_ref/core.py:x": 10.0}}},
                        "remit_bare": {"bytecodes": None}}}
    frame = cost_report.counted_bytecodes(table, "sqlite", "remit_gate")
    assert list(frame["bytecodes / protocol"]) == [30.0, 10.0, 40.0]
    assert list(frame["share of the wrapper's own"])[:2] == ["75.0 %", "25.0 %"]
    assert "4.00 % of stock's 1,000" in frame["share of the wrapper's own"].iloc[-1]
    assert cost_report.counted_bytecodes(table, "sqlite", "remit_bare") is None  # measured before the count existed
