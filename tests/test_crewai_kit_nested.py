"""CrewAI 1.15.2 under the kit's nested protocol: not applicable, with the adapter's reason, measured.

A Flow knows nesting only as a method that kicks off another flow (the ``usage_metrics`` docstring's "a
parent flow calling a child flow's kickoff"). A pause there is the child's alone: the child's ``kickoff``
returns its ``HumanFeedbackPending`` as a value, the parent's method returns it and the parent completes,
with no ``pending_feedback`` row of its own; the one pending row is the child's, under the child's flow id,
so answering it (``Flow.from_pending``) continues the child and not the parent. A Crew's human input
(``Task.human_input``) is ``input()`` on the console, no pause that persists. So every nested cell is n/a
(``probes.frameworks.crewai.adapter``, ``missing``); the measurement is repeated here in a child process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.installed import require

require("crewai")

from probes import PROJECT_ROOT  # noqa: E402
from probes.core.campaign import run_campaign  # noqa: E402
from probes.frameworks.crewai.adapter import HERMETIC_ENV, CrewAIAdapter  # noqa: E402
from probes.frameworks.crewai.campaign import ADAPTER  # noqa: E402
from probes.kit.adapter import Capability  # noqa: E402
from probes.kit.protocols import NESTED_RUNS  # noqa: E402
from probes.kit.suite import kit_campaign  # noqa: E402

# A parent flow whose second method kicks off a child flow that pauses (@human_feedback, a provider that
# raises HumanFeedbackPending, as the adapter's); both under @persist(SQLiteFlowPersistence).
_NESTED_FLOWS = r"""
import json, sqlite3, sys
from crewai.flow import Flow, HumanFeedbackPending, human_feedback, listen, persist, start
from crewai.flow.persistence import SQLiteFlowPersistence

db = SQLiteFlowPersistence(sys.argv[1])

class Pause:
    def request_feedback(self, context, flow):
        raise HumanFeedbackPending(context=context)

@persist(db)
class Child(Flow):
    @start()
    @human_feedback(message="answer?", provider=Pause())
    def ask(self):
        return "asking"

    @listen(ask)
    def act(self, result):
        return f"served {result.feedback}"

seen = {}

@persist(db)
class Parent(Flow):
    @start()
    def s1(self):
        return "s1 done"

    @listen(s1)
    def s2(self, _):
        out = Child().kickoff()
        seen["child_returned"] = type(out).__name__
        return out

parent = Parent()
out = parent.kickoff()
rows = sqlite3.connect(sys.argv[1]).execute("SELECT flow_uuid FROM pending_feedback").fetchall()
print(json.dumps({**seen, "parent_returned": type(out).__name__, "parent_id": parent.state["id"],
                  "pending": [r[0] for r in rows]}))
"""


def test_the_adapter_declares_no_nested_workflow_and_says_why() -> None:
    assert not CrewAIAdapter.declares(Capability.NESTED)
    assert "1.15.2" in CrewAIAdapter.missing[Capability.NESTED]


def test_a_child_flows_pause_is_not_the_parents(tmp_path: Path) -> None:
    env = {**os.environ, **HERMETIC_ENV, "HOME": str(tmp_path), "PYTHONPATH": str(PROJECT_ROOT)}
    script = tmp_path / "nested_flows.py"  # a file: CrewAI reads the flow methods' source
    script.write_text(_NESTED_FLOWS)
    out = subprocess.run([sys.executable, str(script), str(tmp_path / "flows.db")], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    # the child's pause comes back as a value, which the parent's method returns: the parent ends
    assert seen["child_returned"] == seen["parent_returned"] == "HumanFeedbackPending"
    # one pending row, the child's: nothing of the parent waits for the answer
    assert len(seen["pending"]) == 1 and seen["parent_id"] not in seen["pending"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    campaign = kit_campaign("crewai_nested", "crewai_nested", ADAPTER)
    made = run_campaign(campaign, campaign.resolve({"protocols": ["nested"]}, quick=True),
                        tmp_path_factory.mktemp("crewai_nested"))
    assert made.harness_errors == []
    return made


def test_every_nested_cell_is_not_applicable_with_that_reason(run: Any) -> None:
    verdicts = [v for r in run.receipts for v in r.verdicts]
    assert {v.label.value for v in verdicts} == {"n/a"}
    assert {(v.path, v.property) for v in verdicts} == {(f"nested:{of}", prop) for of, props in NESTED_RUNS.items()
                                                       for prop in props}
    assert all(v.evidence["why"] == CrewAIAdapter.missing[Capability.NESTED] for v in verdicts)
