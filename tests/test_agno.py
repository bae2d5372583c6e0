"""Agno 3.1.10 under the kit, in its side environment (created once, cached).

The first run creates ``agno-py311-<hash>`` in the user cache with pip (about 35 s on two
cores); later runs reuse it. A quick subset runs through the real framework on SQLite (and
a baseline on the harness's embedded PostgreSQL); a child process audits that the adapter
opens no socket to a non-loopback address and writes no file outside its directory.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from probes import PROJECT_ROOT, campaigns
from probes.core.campaign import run_campaign
from tests.kit_checks import EACH_ANSWER_ONCE, pause_twice


def _verdicts(campaign: object, run: object) -> dict:
    assert run.harness_errors == []
    assert {r.observations.get("framework_versions", {}).get("agno") for r in run.receipts} == {"3.1.10"}
    return {(v.property.value, v.path): v for r in run.receipts for v in r.verdicts}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    campaign = campaigns.get("agno")
    params = campaign.resolve({"protocols": ["baseline", "crash", "fork", "answers", "stray"],
                               "crash_points": ["s1.effect", "s2.effect"], "crash_hows": ["kill", "raise"],
                               "answers_n": [2]}, quick=True)
    return _verdicts(campaign, run_campaign(campaign, params, tmp_path_factory.mktemp("agno")))


def test_both_answers_reach_s2_through_the_user_input(verdicts: dict) -> None:
    for answer in ("yes", "no"):
        assert verdicts[("EO", f"baseline:{answer}")].evidence["effect_counts"] == {"e1": 1, "e2": 1}
        assert verdicts[("LV", f"baseline:{answer}")].label.value == "✓"


def test_a_completed_run_refuses_another_answer(verdicts: dict) -> None:
    """continue_run raises on a run that is not paused: the retry is inert, the fork refused (documented)."""
    assert verdicts[("CO", "retry:same-pause×2")].evidence["gate_fires"] == 1
    assert verdicts[("CO", "stray-after-completion")].label.value == "✓"
    fd = verdicts[("FD", "fork:same-pause")]
    assert fd.evidence["observed"] is None and fd.label.value == "D"
    assert fd.evidence["side"] == "retry: refused loudly"
    assert "not in a paused state" in fd.doc.quote


def test_a_kill_inside_s2_continues_the_stored_pause_and_runs_s2_again(verdicts: dict) -> None:
    """The run row stays PAUSED while s2 runs; continuing it again re-runs s2, never s1."""
    assert verdicts[("EO", "crash:kill@s2.effect/continue-run")].evidence["effect_counts"] == {"e1": 1, "e2": 2}
    assert verdicts[("PC", "crash:kill@s2.effect/continue-run")].label.value == "✓"


def test_a_kill_inside_s1_leaves_nothing_durable(verdicts: dict) -> None:
    assert verdicts[("PC", "crash:kill@s1.effect/continue-run")].label.value == "n/a"
    assert verdicts[("EO", "crash:kill@s1.effect/continue-run")].evidence["effect_counts"]["e1"] == 2


def test_an_exception_in_a_step_is_retried_in_process(verdicts: dict) -> None:
    """Agno's default max_retries=3 runs the failed step again: its effect fires twice, the run completes."""
    for point, effect in (("s1.effect", "e1"), ("s2.effect", "e2")):
        v = verdicts[("EO", f"crash:raise@{point}/continue-run")]
        assert v.evidence["effect_counts"][effect] == 2 and v.evidence["completed"] is True


def test_postgres_backend_completes_a_clean_run(tmp_path: Path) -> None:
    campaign = campaigns.get("agno")
    params = campaign.resolve({"backends": ["postgres"], "protocols": ["baseline"]}, quick=True)
    got = _verdicts(campaign, run_campaign(campaign, params, tmp_path))
    assert got[("EO", "baseline:yes")].evidence["effect_counts"] == {"e1": 1, "e2": 1}
    assert got[("EO", "baseline:yes")].backend == "postgres"


_AUDITED = r"""
import atexit, json, socket, sys
from pathlib import Path
work = Path(sys.argv[1])
seen = {"connect": [], "getaddrinfo": [], "written": [], "sqlite": []}
def hook(event, args):
    if event == "socket.connect":
        seen["connect"].append(str(args[1]))
    elif event == "socket.getaddrinfo":
        seen["getaddrinfo"].append(str(args[0]))
    elif event == "open" and isinstance(args[0], (str, bytes)) and any(c in str(args[1] or "") for c in "wax+"):
        seen["written"].append(str(args[0]))
    elif event == "sqlite3.connect":
        seen["sqlite"].append(str(args[0]))
sys.addaudithook(hook)
# registered before agno is imported, so it runs after agno's own atexit (its telemetry flush)
atexit.register(lambda: print("AUDIT " + json.dumps(seen)))
from probes.kit import runtime
runtime.install(str(work / "ledger.sqlite"), str(work / "history.sqlite"), "audit", str(work / "markers"))
from probes.frameworks.agno.adapter import AgnoAdapter
adapter = AgnoAdapter(work / "run", "sqlite", str(work / "store.sqlite"))
paused = adapter.start()
done = adapter.resume(paused["handle"], "yes")
print("STATUS " + json.dumps([paused["status"], done["status"], done["outcome"]]))
# the hook records this connect (to a loopback listener): the audit's other entries are real observations
# (with telemetry on, a completing run looks up Agno's API host here)
with socket.socket() as server:
    server.bind(("127.0.0.1", 0)); server.listen(1)
    socket.create_connection(server.getsockname()).close()
"""


def test_the_adapter_is_offline_and_writes_only_its_store(tmp_path: Path) -> None:
    from probes.frameworks.agno.campaign import ENV

    proc = subprocess.run([str(ENV.ensure().python), "-c", _AUDITED, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env={"PYTHONPATH": str(PROJECT_ROOT), "HOME": str(tmp_path),
                                                          "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = {line.split(" ", 1)[0]: json.loads(line.split(" ", 1)[1]) for line in proc.stdout.splitlines()
           if line.startswith(("AUDIT ", "STATUS "))}
    assert out["STATUS"] == ["paused", "completed", "s2 served 'yes'"]
    audit = out["AUDIT"]
    assert audit["connect"] and audit["getaddrinfo"]  # the hook saw the script's own loopback connection...
    loopback = ("127.", "('127.", "localhost", "::1", "('::1'")
    assert [a for a in audit["connect"] + audit["getaddrinfo"] if not a.startswith(loopback)] == []  # ...and no other
    # nothing but the harness's own lock beside its ledger and history (probes.core.history.prepare_durable_file)
    assert set(audit["written"]) <= {str(tmp_path / f"{n}.sqlite.lock") for n in ("ledger", "history")}
    assert set(audit["sqlite"]) <= {str(tmp_path / n) for n in ("store.sqlite", "ledger.sqlite", "history.sqlite")}
    assert str(tmp_path / "store.sqlite") in audit["sqlite"]


def test_a_step_whose_agent_asks_twice_runs_each_answer_once(tmp_path: Path) -> None:
    """The pause-twice workflow on Agno's executor-level HITL: the step's agent calls two user-input
    tools, the workflow pauses inside the step at each, and each answer is given in a fresh process;
    continuing after the second answer does not run the first tool again."""
    receipt = pause_twice("agno", tmp_path)  # no harness error, on Agno 3.1.10
    assert receipt.observations["pause_twice"] == EACH_ANSWER_ONCE
    assert {v.property.value: v.label.value for v in receipt.verdicts} == {"EO": "✓", "CO": "✓", "LV": "✓", "VO": "✓"}
