"""LlamaIndex Workflows 2.22.2 under the kit's nested protocol: not applicable, with the adapter's reason.

The release has no nesting that pauses and resumes (``probes.frameworks.llamaindex.adapter``, ``missing``): the
child workflows of the workflows-py docs (a typed ``Workflow`` field, ``stream_events(include_children=
True)``) are not in 2.22.2 -- ``Workflow.__init__`` refuses the child's keyword and a step cannot take the
child's ``StopEvent`` subclass -- and a workflow run from inside a step is a run of its own, whose context
the outer ``ctx.to_dict()`` snapshot does not hold. So every nested cell is n/a, and no process runs.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.installed import require

require("workflows")

from probes.core.campaign import run_campaign  # noqa: E402
from probes.kit.adapter import Capability  # noqa: E402
from probes.kit.protocols import NESTED_RUNS  # noqa: E402
from probes.kit.suite import kit_campaign  # noqa: E402
from probes.frameworks.llamaindex.adapter import LlamaIndexAdapter  # noqa: E402
from probes.frameworks.llamaindex.campaign import ADAPTER  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = kit_campaign("llamaindex_nested", "llamaindex_nested", ADAPTER)
    made = run_campaign(campaign, campaign.resolve({"protocols": ["nested"]}, quick=True),
                        tmp_path_factory.mktemp("llamaindex_nested"))
    assert made.harness_errors == []
    return made


def test_the_adapter_declares_no_nested_workflow_and_says_why() -> None:
    assert not LlamaIndexAdapter.declares(Capability.NESTED)
    assert "2.22.2" in LlamaIndexAdapter.missing[Capability.NESTED]


def test_every_nested_cell_is_not_applicable_with_that_reason(run: Any) -> None:
    verdicts = [v for r in run.receipts for v in r.verdicts]
    assert {v.label.value for v in verdicts} == {"n/a"}
    assert {v.path for v in verdicts} == {f"nested:{of}" for of in NESTED_RUNS}
    assert {(v.path, v.property) for v in verdicts} == {(f"nested:{of}", prop) for of, props in NESTED_RUNS.items()
                                                       for prop in props}
    assert all(v.evidence["why"] == LlamaIndexAdapter.missing[Capability.NESTED] for v in verdicts)
