"""Strands Agents 1.62.0 under the kit, in its side environment (created once, cached).

The first run creates ``strands-agents-py311-<hash>`` in the user cache with pip (under a
minute from the local wheel mirror); later runs reuse it. Asserts what the kit measured on
this release; a change here is a behaviour change of the framework (or of the kit).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from probes import PROJECT_ROOT, campaigns
from probes.core.campaign import run_campaign


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    campaign = campaigns.get("strands")
    params = campaign.resolve({"protocols": ["baseline", "crash", "fork", "answers"], "crash_points": ["s2.effect"],
                               "crash_hows": ["kill"], "answers_n": [2]}, quick=True)
    run = run_campaign(campaign, params, tmp_path_factory.mktemp("strands"))
    assert run.harness_errors == []
    assert {r.observations.get("framework_versions", {}).get("strands-agents") for r in run.receipts} == {"1.62.0"}
    return {(v.property.value, v.path): (v, r.observations) for r in run.receipts for v in r.verdicts}


def test_a_clean_run_completes_with_each_effect_once(verdicts: dict) -> None:
    for answer in ("yes", "no"):
        v, _ = verdicts[("EO", f"baseline:{answer}")]
        assert v.label.value == "✓" and v.evidence["effect_counts"] == {"e1": 1, "e2": 1}
        assert verdicts[("LV", f"baseline:{answer}")][0].label.value == "✓"


def test_an_answered_interrupt_is_gone_so_a_second_answer_is_refused(verdicts: dict) -> None:
    retry, _ = verdicts[("CO", "retry:same-pause×2")]
    assert retry.label.value == "✓" and retry.evidence["gate_fires"] == 1
    fork, obs = verdicts[("FD", "fork:same-pause")]
    assert fork.evidence["observed"] is None and fork.label.value == "U"  # no outcome for the second answer
    assert obs["fork"] == {"first": "completed", "second": "raised", "second_error": "ValueError"}


def test_a_kill_after_the_answer_runs_the_interrupted_tool_again_on_recovery(verdicts: dict) -> None:
    v, obs = verdicts[("EO", "crash:kill@s2.effect/session")]
    assert v.evidence["effect_counts"] == {"e1": 1, "e2": 2}
    assert v.label.value == "D" and "Second call to `event.interrupt()` returns user response." in v.doc.quote
    assert verdicts[("PC", "crash:kill@s2.effect/session")][0].label.value == "✓"  # s1 is not run again
    # the restored agent was still in its interrupt state: the recovery was a resume, in one operation
    assert obs["children"]["run/recover"]["result"]["status"] == "completed"


_AUDIT = r"""
import json, os, sys
from pathlib import Path
root = Path(sys.argv[1]).resolve()
outside = []
def inside(p):
    return str((Path.cwd() / os.fsdecode(p)).resolve()).startswith(str(root))
def hook(event, args):
    if event == "socket.connect":
        outside.append([event, str(args[1])])
    elif event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        writes = any(c in str(args[1] or "") for c in "wax+") or (args[2] or 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        if writes and not inside(args[0]):
            outside.append([event, os.fsdecode(args[0])])
    elif event in ("os.mkdir", "os.rename", "os.replace", "os.remove") and not inside(args[0]):
        outside.append([event, os.fsdecode(args[0])])
sys.addaudithook(hook)
from probes.kit import runtime
runtime.install(str(root / "ledger.sqlite"), str(root / "history.sqlite"), "audit", str(root / "markers"))
from probes.frameworks.strands.adapter import StrandsAdapter
adapter = StrandsAdapter(root / "work", "file", None)
adapter.hook()
paused = adapter.start()
done = adapter.resume(paused["handle"], "yes")
print(json.dumps({"paused": paused["status"], "done": done["status"], "outside": outside,
                  "home": sorted(os.listdir(os.environ["HOME"]))}))
"""


def test_the_adapter_is_hermetic(tmp_path: Path) -> None:
    """A start and a resume write nothing outside the probe's directory (HOME stays empty, no
    ``~/.strands``) and open no socket, with telemetry switched off by the adapter."""
    from probes.frameworks.strands.campaign import ENV

    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "PYTHONPATH": str(PROJECT_ROOT),
           "PYTHONDONTWRITEBYTECODE": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    proc = subprocess.run([str(ENV.ensure().python), "-c", _AUDIT, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert (out["paused"], out["done"]) == ("paused", "completed")
    assert out["outside"] == [] and out["home"] == []
    assert (tmp_path / "work" / "sessions" / "session_kit" / "agents" / "agent_kit" / "agent.json").exists()
