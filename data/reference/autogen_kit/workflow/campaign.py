"""AutoGen AgentChat 0.7.5 under the conformance kit: the paper's campaign and every kit protocol.

One adapter (``probes.frameworks.autogen.adapter``: a ``GraphFlow`` team paused by a handoff to the
user, saved with its own ``save_state`` after every run), two campaigns over it:

* ``autogen``, the paper's campaign in the default reproduction: the kit's protocols the
  paper's cells need -- a SIGKILL at every step point, recovered from the newest saved state
  (the paper's kills before and after the effect), a kill while parked at the saved pause (its
  kill after the save), the same pause answered twice and with another answer (what a saved
  state addressed twice does) -- and AutoGen's own (``probes.frameworks.autogen.protocols``: a
  completed run's state restored twice, the named forgeries of a saved state). Its published
  value (``autogen.tamper``) is read from its receipts by ``probes.paper.autogen``.
* ``autogen_kit``, every kit protocol at the kit's bounds (``./reproduce.sh --all``).

Both join the ``autogen`` row of the matrix.
"""

from probes.frameworks.autogen.protocols import PROTOCOLS
from probes.kit.runtime import STEP_POINTS
from probes.kit.suite import kit_campaign

ADAPTER = "probes.frameworks.autogen.adapter:AutoGenAdapter"
PACKAGES = ("autogen-agentchat", "autogen-core")
# what the paper's cells need: kills in the steps and at the saved pause, a saved pause loaded twice, AutoGen's own
PAPER_PROTOCOLS = ["baseline", "crash", "parkkill", "answers", "fork", *PROTOCOLS]

CAMPAIGN = kit_campaign(
    "autogen_kit", "AutoGen AgentChat 0.7.5: a GraphFlow team's saved state under the conformance kit",
    ADAPTER, packages=PACKAGES, protocols=PROTOCOLS,
    description="GraphFlow team paused by a handoff to the user; team.save_state() after every run; all kit protocols.")

PAPER_CAMPAIGN = kit_campaign(
    "autogen", "AutoGen AgentChat 0.7.5: save_state / load_state, kills, tampered state", ADAPTER,
    packages=PACKAGES, protocols=PROTOCOLS, in_default_run=True,
    defaults={"protocols": PAPER_PROTOCOLS, "crash_points": list(STEP_POINTS), "crash_hows": ["kill"],
              "answers_n": [2]},
    quick={"protocols": PAPER_PROTOCOLS, "crash_points": ["s2.consumed", "s2.effect"], "crash_hows": ["kill"],
           "answers_n": [2]},
    description="The paper's campaign through the kit: a GraphFlow team paused by a handoff to the user, its "
                "save_state written after every run; SIGKILLed inside each step and recovered from the newest "
                "saved state, killed at the saved pause, the saved pause answered twice; then a completed run's "
                "state loaded and run on twice, and nine named forgeries of a saved state, each loaded with "
                "load_state alone before the run goes on (refused at load_state, in the run, or accepted).")
