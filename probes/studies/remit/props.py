"""Hypothesis stateful tests: random interleavings of interrupts, crashes, forks and
strays, driven by REMIT's decision core, with all six invariants re-checked after
every step (``probes.studies.remit.model.check_invariants``).

Bounds are larger than the exhaustive reference bounds (N up to 6, 3 values, up to 4
resumes, 3 crashes, 3 strays), so this covers states the BFS does not; it samples
them, it does not enumerate them. ``derandomize=True`` makes a run reproducible.
"""

from __future__ import annotations

from typing import Any

from probes.studies.remit import model


def run(max_examples: int = 200, steps: int = 40, core: Any = None, seed: int = 0) -> dict[str, Any]:
    """Run the state machine; returns counts and the first failure (if any)."""
    from hypothesis import HealthCheck, settings
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

    decisions = model.core_decisions(core)
    stats = {"steps": 0, "runs": 0, "actions": {}}

    class Machine(RuleBasedStateMachine):
        @initialize(n=st.integers(2, 6), ip_off=st.integers(0, 4), nv=st.integers(1, 3),
                    resumes=st.integers(1, 4), crashes=st.integers(0, 3), strays=st.integers(0, 3))
        def setup(self, n: int, ip_off: int, nv: int, resumes: int, crashes: int, strays: int) -> None:
            ip = 2 + ip_off % (n - 1)
            self.b = model.Bounds(N=n, IP=ip, V=tuple(range(nv)), max_resumes=resumes, max_crashes=crashes,
                                  max_strays=strays)
            self.s = model.init(self.b)
            stats["runs"] += 1

        @rule(choice=st.integers(0, 1000))
        def step(self, choice: int) -> None:
            if not hasattr(self, "s"):
                return
            succ = model.successors(self.s, self.b, decisions)
            if not succ:
                return
            label, self.s = succ[choice % len(succ)]
            stats["steps"] += 1
            kind = label.split("(")[0]
            stats["actions"][kind] = stats["actions"].get(kind, 0) + 1

        @invariant()
        def six_invariants(self) -> None:
            if hasattr(self, "s"):
                bad = model.check_invariants(self.s, self.b)
                assert not bad, f"{bad} violated in {self.s} (bounds {self.b})"

    Machine.TestCase.settings = settings(max_examples=max_examples, stateful_step_count=steps, derandomize=True,
                                         database=None, deadline=None,
                                         suppress_health_check=list(HealthCheck))
    failure = None
    try:
        run_state_machine_as_test(Machine, settings=Machine.TestCase.settings)
    except AssertionError as exc:
        failure = str(exc).splitlines()[0][:300]
    return {"examples": max_examples, "max_steps": steps, "runs": stats["runs"], "steps": stats["steps"],
            "actions": dict(sorted(stats["actions"].items())), "failure": failure, "holds": failure is None}
