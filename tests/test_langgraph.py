"""The LangGraph campaign against the real LangGraph 1.2.9 (no mocks).

Kept small: one durable backend (SQLite), few kill points, one rep. Every assertion is
about something the real framework or the harness could get wrong.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from probes.core.campaign import ProbeContext, ProbeSpec, run_campaign
from probes.core.errors import UsageError
from probes.core.receipt import VIEW_NAME
from probes.langgraph.campaign import CAMPAIGN, plan_for

ROOT = Path(__file__).resolve().parent.parent

SMALL = {
    "backends": ["sqlite"],
    "kill_points": ["A", "window"],
    "recovery_modes": ["none", "resubmit"],
    "reps": 1,
    "durability_modes": ["exit"],
    "durability_points": ["A"],
    "rd_drops": ["nothing"],
}


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("lg-receipts")
    params = CAMPAIGN.resolve(SMALL, quick=True)
    run = run_campaign(CAMPAIGN, params, receipts_root=root, render_only=False)
    return run, {r.probe: r for r in run.receipts}


def _verdict(receipt, prop: str):
    return next(v for v in receipt.verdicts if v.property.value == prop)


def test_plan_ids_unique_file_safe_and_remit_arm_is_separate() -> None:
    params = CAMPAIGN.resolve()
    stock = plan_for(params, "stock")
    remit = plan_for(params, "remit")
    ids = [s.id for s in stock]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-]+", i) for i in ids)
    assert {s.args["arm"] for s in stock} == {"stock"} and {s.args["arm"] for s in remit} == {"remit"}
    assert not set(ids) & {s.id for s in remit}
    # every cell of the crash sweep names its recovery mode, both modes present
    crash = [s for s in stock if s.args["kind"] == "crash" and "durability_path" not in s.args]
    assert {s.args["mode"] for s in crash} == {"none", "resubmit"}
    assert len(crash) == len(params["backends"]) * len(params["kill_points"]) * 2


def test_notebook_parameters_cell_matches_campaign_defaults() -> None:
    nb = nbformat.read(ROOT / "notebooks" / "langgraph.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    ns: dict = {}
    exec(cell.source, ns)
    got = {k: v for k, v in ns.items() if not k.startswith("__")}
    assert got == CAMPAIGN.resolve()


def test_bad_parameter_is_a_one_line_usage_error() -> None:
    with pytest.raises(UsageError, match="choose from"):
        CAMPAIGN.resolve({"kill_points": ["Z"]})
    from probes.langgraph.versions import ensure_env

    with pytest.raises(UsageError, match="pip index versions"):
        ensure_env("latest")


def test_no_harness_errors_and_stable_evidence(small_run) -> None:
    run, _ = small_run
    assert run.harness_errors == []
    view = (run.directory / VIEW_NAME).read_text()
    # no interrupt/checkpoint ids, pids or temp paths in the verdict view
    assert not re.search(r"[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-|/tmp/|rc-child", view)


def test_fd_second_resume_served_first_answer_but_forks_work(small_run) -> None:
    _, R = small_run
    for variant in ("bare", "map"):
        v = _verdict(R[f"fd.{variant}.sqlite"], "FD")
        assert v.label.violates and v.evidence["observed"] == 2 and v.evidence["served_first_outcome"]
    for variant in ("update_state", "replay"):
        v = _verdict(R[f"fd.{variant}.sqlite"], "FD")
        assert v.label.value == "✓" and v.evidence["observed"] == 1


def test_cv_none_persisted_and_thread_wedged(small_run) -> None:
    _, R = small_run
    r = R["cv.sqlite"]
    v = _verdict(r, "CV")
    assert v.label.violates
    assert r.observations["became_durable"] is True
    assert any(None in items for items in r.observations["durable_items"])
    assert v.evidence["wedged"] is True


def test_interrupt_path_and_park_kill_exactly_once(small_run) -> None:
    _, R = small_run
    for api in ("functional", "graph"):
        for probe in (f"eo.interrupt.{api}.sqlite", f"parkkill.{api}.sqlite"):
            eo = _verdict(R[probe], "EO")
            assert eo.label.value == "✓", probe
            assert eo.evidence["effect_counts"] == {"gate": 1, "s1": 1, "s3": 1}
        assert R[f"parkkill.{api}.sqlite"].observations["killed"]["killed_at"] == "parked#1"


def test_crash_cells_depend_on_recovery_mode(small_run) -> None:
    _, R = small_run
    counts = {(p, m): _verdict(R[f"crash.{p}.{m}.sqlite"], "EO").evidence["effect_counts"]
              for p in ("A", "window") for m in ("none", "resubmit")}
    assert counts[("A", "none")] == {"s1": 1, "s2": 1}  # s1's durable result is reused
    assert counts[("A", "resubmit")]["s1"] == 2  # a new run on the thread
    assert counts[("window", "none")] == {"s1": 1, "s2": 2}  # window of s2
    pc = _verdict(R["crash.A.resubmit.sqlite"], "PC")
    assert pc.label.violates and pc.evidence["reentered"] == {"s1": 1}
    assert _verdict(R["crash.A.none.sqlite"], "PC").label.value == "✓"


def test_exit_durability_loses_the_run_and_rd_copies_agree(small_run) -> None:
    _, R = small_run
    eo = _verdict(R["durability.exit.A.none.sqlite"], "EO")
    ev = eo.evidence
    assert ev["recovered"] == [False] and ev["effect_counts"]["s2"] == 0
    # a lost run fired nothing twice: EO (at most once) ✓; it is not live, which the docs state (LG-8): D, cited
    assert ev["completed"] == [False] and eo.label.value == "✓" and eo.doc is None
    lv = _verdict(R["durability.exit.A.none.sqlite"], "LV")
    assert lv.label.value == "D" and lv.doc.source == "LG-8"
    assert [w["kind"] for w in lv.evidence["witness"]][0] == "crash"
    assert _verdict(R["durability.exit.A.none.sqlite"], "PC").label.value == "✓"
    # the documented recovery after a kill in s2 before its effect completes: every verdict ✓
    assert {v.property.value: v.label.value for v in R["crash.A.none.sqlite"].verdicts} == {
        "EO": "✓", "PC": "✓", "LV": "✓"}
    assert R["ops.sqlite"].observations["ops"]["exit"] == ["put"]
    assert R["ops.sqlite"].observations["ops"]["sync"][0] == "put"
    rd = _verdict(R["rd.nothing.sqlite"], "RD")
    assert rd.label.value == "✓" and set(rd.evidence["decisions"]) == {"copy1", "copy2"}


def test_headlines_from_receipts(small_run) -> None:
    run, _ = small_run
    got = CAMPAIGN.headlines(run.receipts)
    assert got["langgraph.fd_outcome"].value["observed"] == 2
    assert got["langgraph.crash_s1_runs"].value["s1_runs"] == 2  # A with the input re-submitted
    row = got["langgraph.row"].value
    assert row["FD"] == "✗" and row["CV"] == "✗" and row["EO interrupt"] == "✓"


def test_unreached_kill_point_is_a_harness_error_not_a_verdict(tmp_path: Path) -> None:
    from probes.core.backends import StoreFactory
    import contextlib

    from probes.langgraph.probes import probe_crash

    spec = ProbeSpec("crash.K5.none.sqlite", {"arm": "stock", "kind": "crash", "backend": "sqlite", "point": "K5",
                                              "mode": "none", "durability": "exit", "reps": 1})
    with contextlib.ExitStack() as stack:
        ctx = ProbeContext(tmp_path, StoreFactory(tmp_path / "stores", stack), 0, {})
        res = probe_crash(spec, ctx)
    assert res.verdicts == [] and len(res.harness_errors) == 1
    assert "never reached" in res.harness_errors[0]


def test_in_memory_determinism(tmp_path: Path) -> None:
    """Two runs of the in-process probes give byte-identical verdict views."""
    params = CAMPAIGN.resolve({"backends": ["memory"], "kill_points": ["exc"], "durability_modes": [],
                               "rd_drops": ["nothing"]}, quick=True)
    views = []
    for n in range(2):
        run = run_campaign(CAMPAIGN, params, receipts_root=tmp_path / f"r{n}", render_only=False)
        assert run.harness_errors == []
        views.append((run.directory / VIEW_NAME).read_bytes())
    assert views[0] == views[1]
    data = json.loads(views[0])
    assert {v["label"] for v in data["probes"]["parkkill.graph.memory"]["verdicts"]} == {"n/a"}
    assert data["probes"]["fd.bare.memory"]["verdicts"][0]["evidence"]["observed"] == 2
