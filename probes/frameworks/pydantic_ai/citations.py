"""What pydantic-ai's and DBOS's installed docstrings say, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of pydantic-ai-slim 2.68.0 and dbos 3.4.0 as installed in the side
environment (``probes.frameworks.pydantic_ai.campaign.ENV`` pins both; ``tests/test_citations.py`` checks each
quote against the installed package). DOCS.md's DBOS statements (DB-1 ... DB-14) were read for dbos
2.27.0 and are not used here. A pattern with no sentence is silent, so a violation there is U; that
is the case for a step killed after its effect (no installed docstring says what DBOS does with a
step whose output was not recorded: at least once, per the 2.27 docs, DB-1) and for edited step
outputs (nothing documents checking them).
"""

from probes.citations import docstring

DISTRIBUTION, VERSION = "pydantic-ai-slim", "2.68.0"
DBOS_DISTRIBUTION, DBOS_VERSION = "dbos", "3.4.0"

CITATIONS = {
    # The capability's promise for the workflow the adapter builds around agent.run().
    "LV *": docstring("pydantic_ai.durable_exec.dbos:DBOSDurability",
                      "Call `agent.run()` inside your own `@DBOS.workflow` to make that run durable", "claims",
                      DISTRIBUTION, VERSION),
    # A workflow that raised (the kit's raise-once crash) is terminal: ERROR, never recovered. The sentence
    # is a private helper's docstring, the only installed one that says so.
    "LV crash:raise@*": docstring("dbos._core:_serialize_exception_for_persistence",
                                  "so the workflow is still terminalized as ERROR instead of being left PENDING and "
                                  "re-executed on every recovery", "deviation", DBOS_DISTRIBUTION, DBOS_VERSION),
    # The same for the nested workflow: the delegate's raise ends the outer agent run and the workflow.
    "LV nested:crash:raise@*": docstring("dbos._core:_serialize_exception_for_persistence",
                                         "so the workflow is still terminalized as ERROR instead of being left "
                                         "PENDING and re-executed on every recovery", "deviation",
                                         DBOS_DISTRIBUTION, DBOS_VERSION),
    # The pause is a recv: each message is consumed once, and the consume is recorded as the step's output.
    "CO *": docstring("dbos._sys_db:SystemDatabase.recv_consume",
                      "Transactionally consumes the oldest unconsumed message and records the operation result.",
                      "claims", DBOS_DISTRIBUTION, DBOS_VERSION),
    # Another answer to an answered pause is a fork, which DBOS gives a new workflow ID (its own send).
    "FD fork:same-pause": docstring("dbos._dbos:DBOS.fork_workflow",
                                    "Restart a workflow with a new workflow ID from a specific step", "deviation",
                                    DBOS_DISTRIBUTION, DBOS_VERSION),
    # The same for the nested workflow: its answer is a message to the same workflow ID.
    "FD nested:fork:same-pause": docstring("dbos._dbos:DBOS.fork_workflow",
                                           "Restart a workflow with a new workflow ID from a specific step",
                                           "deviation", DBOS_DISTRIBUTION, DBOS_VERSION),
}
