"""``pytest --resume-contract MODULE:CLASS``: the kit's protocols as a framework's own tests.

A maintainer's test suite already runs under pytest; this plugin adds one test per kit
probe (``crash.kill.s1.effect.latest.sqlite.rep1``, ``race.k2.sqlite.rep1`` ...) for the
adapter named on the command line. The campaign is measured once, on the first probe's
test, into ``--resume-contract-out`` (default ``./kit-results``, never the installed
package) with the same engine as ``resume-contract run``; each test then fails when one
of its probe's verdicts carries a label of ``--resume-contract-fail-on`` (default ✗ and
U: violations the documentation does not excuse), with the summary, witness and
citation of each, errors on a harness error, and is skipped when every verdict is n/a.

Installed with the kit (entry point ``pytest11``); in a checkout, ``-p probes.kit.pytest_plugin``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from probes.core.checker import Label

_RUN_KEY = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("resume-contract", "Resume Contract conformance kit")
    group.addoption("--resume-contract", metavar="MODULE:CLASS", default=None,
                    help="run the conformance kit's protocols on this adapter, one test per probe")
    group.addoption("--resume-contract-quick", action="store_true", help="the kit's quick profile")
    group.addoption("--resume-contract-smoke", action="store_true",
                    help="the smoke profile: every protocol once (a pull-request check)")
    group.addoption("--resume-contract-param", action="append", default=[], metavar="NAME=VALUE",
                    help="a kit parameter (as resume-contract run -p)")
    group.addoption("--resume-contract-out", metavar="DIR", default="kit-results",
                    help="where receipts go (default ./kit-results)")
    group.addoption("--resume-contract-fail-on", metavar="LABELS", default="✗,U",
                    help="labels that fail a probe's test (default '✗,U')")


class ProbeItem(pytest.Item):
    """One kit probe; its verdicts come from the session's single campaign run."""

    def __init__(self, *, probe: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.probe = probe

    def runtest(self) -> None:
        run = _measured(self.config)
        receipt = run["receipts"].get(self.probe)
        if receipt is None:
            raise ProbeError(f"{self.probe}: no receipt was written")
        if receipt.harness_errors:
            raise ProbeError("harness error (no verdict): " + "; ".join(receipt.harness_errors))
        if receipt.verdicts and all(v.label is Label.NA for v in receipt.verdicts):
            pytest.skip("n/a: " + receipt.verdicts[0].summary)
        bad = [v for v in receipt.verdicts if v.label in run["fail_on"]]
        if bad:
            from probes.kit.junit import _failure_text

            raise ProbeFailure("\n\n".join(f"{v.label.value} {v.property.value} {v.path} [{v.backend}]\n"
                                           + _failure_text(v) for v in bad))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (ProbeFailure, ProbeError)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return Path(self.config.rootpath), 0, f"resume-contract {self.probe}"


class ProbeFailure(AssertionError):
    """A verdict with a failing label."""


class ProbeError(RuntimeError):
    """The measurement broke: no verdict."""


def _campaign_and_params(config: pytest.Config) -> tuple[Any, dict[str, Any]]:
    from probes.__main__ import _overrides, importable_from_here
    from probes.kit.suite import SMOKE, kit_campaign

    importable_from_here()
    adapter = config.getoption("resume_contract")
    name = adapter.partition(":")[0].split(".")[-1]
    campaign = kit_campaign(name, f"conformance kit: {adapter}", adapter)
    smoke = config.getoption("resume_contract_smoke")
    overrides = {**(SMOKE if smoke else {}),
                 **_overrides(config.getoption("resume_contract_param"))}
    params = campaign.resolve(overrides, quick=config.getoption("resume_contract_quick") or smoke)
    return campaign, params


def _measured(config: pytest.Config) -> dict[str, Any]:
    run = config.stash[_RUN_KEY]
    if "receipts" not in run:
        from probes.core.campaign import run_campaign

        result = run_campaign(run["campaign"], run["params"], Path(config.getoption("resume_contract_out")))
        run["receipts"] = {r.probe: r for r in result.receipts}
        run["directory"] = result.directory
    return run


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("resume_contract"):
        return
    from probes.core.errors import UsageError
    from probes.kit.junit import parse_fail_on

    try:  # bad input is refused before anything runs
        campaign, params = _campaign_and_params(config)
        fail_on = parse_fail_on(config.getoption("resume_contract_fail_on"))
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_RUN_KEY] = {"campaign": campaign, "params": params, "fail_on": fail_on}
    items.extend(ProbeItem.from_parent(session, name=f"resume-contract::{spec.id}", probe=spec.id)
                 for spec in campaign.plan(params))


def pytest_report_header(config: pytest.Config) -> str | None:
    adapter = config.getoption("resume_contract")
    return f"resume-contract: adapter {adapter}, results in {config.getoption('resume_contract_out')}" if adapter else None
