"""The version sweep's environments are built in the background while other probes run."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from probes.core.campaign import ProbeContext, ProbeSpec
from probes.core.receipt import ProbeResult
from probes.langgraph import campaign as lg
from probes.langgraph import probes as lg_probes
from probes.langgraph import versions


def test_envs_prefetched_in_background_and_awaited_by_their_probe(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    release = threading.Event()
    built: list[tuple[str, str]] = []

    def fake_ensure(version: str) -> Path:
        release.wait(30)
        built.append((version, threading.current_thread().name))
        if version == "9.9.9":
            raise RuntimeError("install failed")
        return tmp_path / version

    seen: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(versions, "ensure_env", fake_ensure)
    monkeypatch.setattr(lg, "_ENV_BUILDS", {})
    monkeypatch.setitem(lg_probes.KINDS, "fd", lambda spec, ctx: seen.append(("fd", list(built))) or ProbeResult())
    monkeypatch.setitem(lg_probes.KINDS, "version",
                        lambda spec, ctx: seen.append((spec.args["version"], list(built))) or ProbeResult())
    ctx = ProbeContext(tmp_path, None, 0, {"versions": ["1.0.0", "9.9.9"]})  # type: ignore[arg-type]

    lg.run_probe(ProbeSpec("fd.x", {"kind": "fd"}), ctx)
    assert seen == [("fd", [])]  # the probe did not wait for the builds
    release.set()
    lg.run_probe(ProbeSpec("version.1.0.0", {"kind": "version", "version": "1.0.0"}), ctx)
    lg.run_probe(ProbeSpec("version.9.9.9", {"kind": "version", "version": "9.9.9"}), ctx)
    assert [v for v, _ in built] == ["1.0.0", "9.9.9"]
    assert all(name == "langgraph-envs" for _, name in built)  # built off the probe's thread
    # The version probe ran only after its own environment was built.
    assert seen[1][0] == "1.0.0" and seen[1][1][0][0] == "1.0.0"
    # A failed background build is forgotten, so the probe's own ensure_env retries and reports it.
    assert "9.9.9" not in lg._ENV_BUILDS and "1.0.0" in lg._ENV_BUILDS
