"""The live campaign without a network: scripted model end to end, no-key runs, statistics.

None of these tests may reach a model API: every test that runs the campaign blocks
sockets first and fails if anything tries to connect.
"""

from __future__ import annotations

import json

import math
import socket
from pathlib import Path
from typing import Any

import pytest

from probes.core.campaign import run_campaign
from probes.core.checker import Label
from probes.core.receipt import Receipt
from probes.studies.live import campaign as live
from probes.paper import live as live_paper
from probes.studies.live.calls import Budget, BudgetExhausted, redact
from probes.studies.live.stats import Tally, pooled, tally_trials, wilson

KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_COMPATIBLE_API_KEY")


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Block (and record) every attempt to resolve a name or open a connection."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args[1:] if args else kwargs)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv("RC_NO_PROGRESS", "1")
    return attempts


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)


def _params(**overrides: Any) -> dict[str, Any]:
    return live.CAMPAIGN.resolve(overrides, quick=True)


def _files_text(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(root.rglob("*")) if p.is_file())


# --- statistics --------------------------------------------------------------------


def _wilson_closed_form(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_wilson_matches_statsmodels_to_four_decimals() -> None:
    from statsmodels.stats.proportion import proportion_confint

    assert wilson(40, 40) == (0.9124, 1.0)
    assert wilson(0, 40) == (0.0, 0.0876)
    for k, n in [(40, 40), (80, 80), (0, 40), (0, 80), (17, 40), (3, 7), (1, 2)]:
        lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert wilson(k, n) == (round(lo, 4), round(hi, 4))
        cf_lo, cf_hi = _wilson_closed_form(k, n)  # independent of statsmodels
        assert abs(wilson(k, n)[0] - cf_lo) < 1e-4 and abs(wilson(k, n)[1] - cf_hi) < 1e-4
    assert wilson(0, 0) is None


def test_harness_errors_stay_out_of_numerator_and_denominator() -> None:
    trials = [{"status": "ok", "violation": True}, {"status": "ok", "violation": False},
              {"status": "harness_error", "error_kind": "timeout", "violation": None},
              {"status": "harness_error", "error_kind": "no_tool_call", "violation": None}]
    t = tally_trials(trials)
    assert (t.successes, t.trials, t.harness_errors, t.runs) == (1, 2, 2, 4)
    assert t.error_kinds == {"no_tool_call": 1, "timeout": 1}
    rows = pooled([{"provider": "p", "model": "a", "tally": t},
                   {"provider": "p", "model": "b", "tally": Tally(40, 40, 0)}], ("provider",))
    assert rows[0]["violations"] == 41 and rows[0]["trials"] == 42 and rows[0]["harness_errors"] == 2
    assert (rows[0]["wilson95_lo"], rows[0]["wilson95_hi"]) == wilson(41, 42)


def test_published_table_shows_counts_with_intervals_marked_not_rerun() -> None:
    from probes.studies.live import report

    table = report.published_table([])
    assert set(table["source"]) == {"published, not rerun here"}
    rows = {(r["count"], r["wilson95"]) for r in table.to_dict("records")}
    assert ("80/80", "[0.9542, 1.0000]") in rows
    assert ("40/40", "[0.9124, 1.0000]") in rows
    assert ("0/80", "[0.0000, 0.0458]") in rows
    assert "0 harness errors in 240 runs" in set(table["count"])


# --- no keys: nothing is sent -----------------------------------------------------------


def test_run_without_keys_never_touches_the_network(tmp_path: Path, no_network: list, no_keys: None,
                                                    capsys: pytest.CaptureFixture) -> None:
    run = run_campaign(live.CAMPAIGN, _params(), receipts_root=tmp_path)
    assert no_network == [], "a run without keys tried to open a connection"
    out = capsys.readouterr().out
    not_run_lines = [line for line in out.splitlines() if "not run" in line]
    assert len(not_run_lines) == 1 and "ANTHROPIC_API_KEY" in not_run_lines[0]
    assert sorted(r.probe for r in run.receipts) == ["not_run.anthropic", "not_run.openai"]
    for receipt in run.receipts:
        assert receipt.observations["status"] == "not run: no key"
        assert receipt.verdicts == [] and receipt.harness_errors == []
    assert len(run.receipts[0].observations["cells_not_run"]) == 6
    got = live_paper.headlines(run.receipts)
    assert got == {k: "not run here: needs API keys" for k in
                   ("live.claude_fork", "live.gpt_session_restore", "live.harness_errors")}


def test_compatible_endpoint_without_base_url_is_not_run(tmp_path: Path, no_network: list, no_keys: None) -> None:
    run = run_campaign(live.CAMPAIGN, _params(provider="openai_compatible", models=["llama3.1:8b"],
                                              api_key_env=""), receipts_root=tmp_path)
    assert [r.probe for r in run.receipts] == ["not_run.openai_compatible"]
    assert run.receipts[0].observations["key_env"] == "base_url"
    assert no_network == []


# --- the scripted model, end to end through real LangGraph ----------------------------------


def test_scripted_model_reproduces_the_fork_violation_end_to_end(tmp_path: Path, no_network: list) -> None:
    params = _params(provider="scripted", models=["scripted"], trials=2)
    run = run_campaign(live.CAMPAIGN, params, receipts_root=tmp_path / "a")
    assert no_network == []
    by_probe = {r.probe: r for r in run.receipts}
    assert sorted(by_probe) == ["approval.scripted.scripted", "fork.scripted.scripted", "session.scripted.scripted"]
    assert run.harness_errors == []

    fork = by_probe["fork.scripted.scripted"]
    (fd,) = fork.verdicts
    assert fd.property.value == "FD" and fd.label is Label.UNDOC
    (pattern,) = fd.evidence["distinct_trial_evidence"]
    assert pattern["expected_f_v"] == "cancel" and pattern["observed"] == "ship"
    assert pattern["served_first_outcome"] is True and pattern["value_seen_by_fork_node"] is True
    assert fork.metrics["violations"] == 2 and fork.metrics["trials"] == 2
    trial = fork.observations["trials"][0]
    assert trial["observations"]["resume_values"] == [True, False]  # the model's answers, in order
    assert trial["roles"] == ["reviewer", "executor", "reviewer", "executor"]

    labels = {(v.property.value, r.probe.split(".")[0]): v.label for r in run.receipts for v in r.verdicts}
    assert labels[("CO", "approval")] is Label.PASS and labels[("EO", "approval")] is Label.PASS
    assert labels[("EO", "session")] is Label.PASS and labels[("PC", "session")] is Label.PASS
    assert labels[("LV", "session")] is Label.PASS
    session = by_probe["session.scripted.scripted"].observations["trials"][0]["observations"]
    assert session["messages_restored"] == session["messages_after_turn_1"] > 0

    # scripted runs are plumbing, never live results
    assert live_paper.headlines(run.receipts)["live.claude_fork"] == "not run here: needs API keys"
    # the verdict view is deterministic: a second run elsewhere gives the same bytes
    again = run_campaign(live.CAMPAIGN, params, receipts_root=tmp_path / "b")
    assert again.ran and (tmp_path / "a/live/verdicts.json").read_bytes() == \
        (tmp_path / "b/live/verdicts.json").read_bytes()


@pytest.mark.parametrize("behaviour,kind", [("refuse", "no_tool_call"), ("malformed", "malformed_tool_call"),
                                            ("disobey", "off_script")])
@pytest.mark.parametrize("protocol", ["fork", "approval", "session"])
def test_model_misbehaviour_is_a_harness_error_not_a_verdict(tmp_path: Path, no_network: list, behaviour: str,
                                                              kind: str, protocol: str) -> None:
    from probes.studies.live.protocols import run_trial
    from probes.studies.live.scripted import ScriptedChatModel

    trial = run_trial(protocol, ScriptedChatModel(behaviour=behaviour), Budget(50, 10**6), tmp_path, 0, 7)
    assert trial.status == "harness_error" and trial.error_kind == kind
    assert trial.checks == {} and trial.violation is None


def test_cap_on_calls_stops_the_run_before_it_is_exceeded(tmp_path: Path, no_network: list) -> None:
    params = _params(provider="scripted", models=["scripted"], trials=3, max_calls=9)
    with pytest.raises(BudgetExhausted, match="per-run cap reached"):
        run_campaign(live.CAMPAIGN, params, receipts_root=tmp_path)
    assert live._budget is not None and live._budget.calls <= 9
    budget = Budget(max_calls=10, max_tokens=100)
    budget.charge({"input_tokens": 60, "output_tokens": 40})
    with pytest.raises(BudgetExhausted):
        budget.require(1)  # tokens used up, though calls are left


# --- keys never leak -----------------------------------------------------------------------


def test_a_key_never_appears_in_receipts_or_output(tmp_path: Path, no_network: list, no_keys: None,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capfd: pytest.CaptureFixture) -> None:
    fake = "sk-ant-api03-FAKEKEYfor-resume-contract-tests-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake)
    monkeypatch.setattr("probes.studies.live.providers.MAX_RETRIES", 0)  # no back-off sleeps in tests
    params = _params(provider="anthropic", models=["claude-test-model"], protocols=["fork"], trials=1,
                     timeout_s=2.0)
    run = run_campaign(live.CAMPAIGN, params, receipts_root=tmp_path)
    (cell,) = run.receipts
    assert cell.probe == "fork.anthropic.claude-test-model"
    assert cell.verdicts == [] and len(cell.harness_errors) == 1  # the blocked connection, not a verdict
    assert cell.observations["trials"][0]["error_kind"] == "api_error"
    assert no_network, "the client should have tried (and been refused) a connection"
    captured = capfd.readouterr()
    for text in (_files_text(tmp_path), captured.out, captured.err):
        assert fake not in text and "FAKEKEY" not in text
    assert fake not in redact(f"Error: invalid x-api-key {fake}")


# --- headlines from receipts -----------------------------------------------------------------


def _cell(provider: str, model: str, protocol: str, k: int, n: int, errors: int = 0) -> Receipt:
    return Receipt("live", f"{protocol}.{provider}.{model}", {}, {},
                   {"status": "ran", "live": True, "provider": provider, "model": model, "protocol": protocol},
                   [], {"violations": k, "trials": n, "harness_errors": errors}, [])


def test_headlines_compare_measured_counts_with_published() -> None:
    from probes.headline import compare, load_published

    receipts = [_cell("anthropic", "c1", "fork", 40, 40), _cell("anthropic", "c2", "fork", 40, 40),
                _cell("openai", "g1", "session", 0, 40), _cell("openai", "g2", "session", 0, 39, errors=1)]
    got = live_paper.headlines(receipts)
    published = {e["id"]: e for e in load_published()}
    row = compare(published["live.claude_fork"], got["live.claude_fork"], "")
    assert row.status == "reproduced", row
    assert got["live.claude_fork"].value["wilson95_pooled"] == [0.9542, 1.0]
    gpt = compare(published["live.gpt_session_restore"], got["live.gpt_session_restore"], "")
    assert gpt.status == "differs" and got["live.gpt_session_restore"].value["trials"] == 79
    runs = got["live.harness_errors"].value
    assert runs == {"runs": 160, "harness_errors": 1}


def test_model_entries_resolve_to_providers() -> None:
    from probes.core.errors import UsageError
    from probes.studies.live.providers import parse_models, public_base_url

    refs = parse_models("per_model", ["anthropic:claude-x", "openai_compatible:llama3.1:8b"])
    assert [(r.provider, r.model) for r in refs] == [("anthropic", "claude-x"), ("openai_compatible", "llama3.1:8b")]
    assert refs[1].slug == "openai_compatible.llama3.1_8b"
    with pytest.raises(UsageError):
        parse_models("per_model", ["claude-x"])
    with pytest.raises(UsageError):
        parse_models("openai", ["anthropic:claude-x"])
    assert public_base_url("http://user:secret@localhost:8000/v1?key=abc") == "http://localhost:8000/v1"


def test_rerun_without_keys_keeps_cells_measured_with_a_key(no_network: list, no_keys: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader without keys rebuilding the book must not erase receipts measured with one."""
    monkeypatch.setattr("probes.studies.live.providers.MAX_RETRIES", 0)
    params = _params(provider="anthropic", models=["claude-keep"], protocols=["fork"], trials=1, seed=4242)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-placeholder-for-keep-test")
    first = run_campaign(live.CAMPAIGN, params)  # the (sandboxed) default receipts directory
    assert [r.probe for r in first.receipts] == ["fork.anthropic.claude-keep"]
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    attempts = len(no_network)
    second = run_campaign(live.CAMPAIGN, params)
    assert sorted(r.probe for r in second.receipts) == ["fork.anthropic.claude-keep", "not_run.anthropic"]
    not_run = next(r for r in second.receipts if r.probe == "not_run.anthropic")
    assert not_run.observations["cells_not_run"] == []
    assert len(no_network) == attempts  # the keyless rerun sent nothing
    kept = first.receipts[0]
    if kept.harness_errors:  # no network here: the keyed cell failed, so it is retried -- and kept aside
        assert "fork.anthropic.claude-keep" in second.ran
        aside = json.loads((second.directory / "_superseded" / "fork.anthropic.claude-keep.json").read_text())
        assert aside["harness_errors"] == kept.harness_errors and aside["manifest"] == kept.manifest
    else:
        assert second.reused == ["fork.anthropic.claude-keep"] and second.ran == ["not_run.anthropic"]


def test_needs_rerun_when_a_key_appears_after_a_keyless_run(tmp_path: Path, no_network: list, no_keys: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    params = _params()
    run_campaign(live.CAMPAIGN, params, receipts_root=tmp_path)
    assert live.needs_rerun(params, tmp_path) is False
    monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder-never-used")
    assert live.needs_rerun(params, tmp_path) is True
    assert no_network == []


def test_tracing_is_off_during_trials(tmp_path: Path, no_network: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even with LangSmith tracing switched on in the environment, no trace leaves the machine."""
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2-placeholder")
    run = run_campaign(live.CAMPAIGN, _params(provider="scripted", models=["scripted"], protocols=["fork"],
                                              trials=1), receipts_root=tmp_path)
    from langchain_core.tracers.langchain import wait_for_all_tracers

    wait_for_all_tracers()  # a trace would be sent from a background thread; let it try
    assert run.harness_errors == [] and no_network == []
