"""pydantic-graph 1.107.1 under the kit's nested protocol: not applicable, with the adapter's reason.

The release has no nesting that pauses and resumes (``probes.frameworks.pydantic_graph.adapter``, ``missing``): a
``Graph`` is no node of another (measured here: refused), the builder API's subgraphs are a TODO and that
API has no persistence, and a graph run from inside a node keeps its own persistence, which the outer
run's snapshots do not hold. So every nested cell is n/a, and no process runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.installed import require

require("pydantic_graph")

from probes.core.campaign import run_campaign  # noqa: E402
from probes.kit.adapter import Capability  # noqa: E402
from probes.kit.protocols import NESTED_RUNS  # noqa: E402
from probes.kit.suite import kit_campaign  # noqa: E402
from probes.frameworks.pydantic_graph.adapter import PydanticGraphAdapter  # noqa: E402
from probes.frameworks.pydantic_graph.campaign import ADAPTER  # noqa: E402


def test_the_adapter_declares_no_nested_workflow_and_says_why() -> None:
    assert not PydanticGraphAdapter.declares(Capability.NESTED)
    assert "1.107.1" in PydanticGraphAdapter.missing[Capability.NESTED]


def test_a_graph_is_not_a_node_of_another() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the BaseNode Graph's deprecation notice
        from pydantic_graph import BaseNode, End, GraphRunContext
        from pydantic_graph.graph import Graph

    @dataclass
    class Only(BaseNode[None, None, str]):
        async def run(self, ctx: GraphRunContext) -> End[str]:
            return End("done")

    Only.run.__annotations__ = {"ctx": GraphRunContext, "return": End[str]}
    with pytest.raises(AttributeError, match="get_node_id"):
        Graph(nodes=[Graph(nodes=[Only])])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = kit_campaign("pydantic_graph_nested", "pydantic_graph_nested", ADAPTER)
    made = run_campaign(campaign, campaign.resolve({"protocols": ["nested"]}, quick=True),
                        tmp_path_factory.mktemp("pydantic_graph_nested"))
    assert made.harness_errors == []
    return made


def test_every_nested_cell_is_not_applicable_with_that_reason(run: Any) -> None:
    verdicts = [v for r in run.receipts for v in r.verdicts]
    assert {v.label.value for v in verdicts} == {"n/a"}
    assert {(v.path, v.property) for v in verdicts} == {(f"nested:{of}", prop) for of, props in NESTED_RUNS.items()
                                                       for prop in props}
    assert all(v.evidence["why"] == PydanticGraphAdapter.missing[Capability.NESTED] for v in verdicts)
