"""LangGraph's checkpointer conformance suite (langgraph-checkpoint-conformance) on wrap(...) next to stock."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes.core.backends import postgres_service
from probes.studies.remit import lg_conformance


def _check(out: dict) -> None:
    assert out["remit_passes_all_stock_passes"], out["regressions"]
    assert out["stock_level"] == out["remit_level"] == "FULL"
    caps = {r["capability"]: r for r in out["capabilities"]}
    for base in ("put", "put_writes", "get_tuple", "list", "delete_thread"):
        assert caps[base]["stock_passed"] is True and caps[base]["remit_passed"] is True
        assert caps[base]["remit_tests"] == caps[base]["stock_tests"]


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_langgraph_conformance_suite(backend: str, tmp_path: Path) -> None:
    _check(lg_conformance.run(backend, "", tmp_path))


@pytest.mark.slow
def test_langgraph_conformance_suite_postgres(tmp_path: Path) -> None:
    with postgres_service() as service:
        _check(lg_conformance.run("postgres", service.fresh_dsn("lgconf"), tmp_path))
