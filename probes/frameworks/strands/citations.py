"""What Strands Agents' documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of strands-agents 1.62.0 as installed in its side
environment (``VERSION``, pinned: the release the sentences were read in, the one
``campaign.ENV`` installs; ``tests/test_citations.py`` checks both against the installed
package). A pattern with no sentence here is silent, so a violation there is U.

Read and left uncited (so their violations stay U): nothing in the session package speaks of
two processes resuming one session (the race), of answering an interrupt that was already
answered (the fork: refused with a ValueError whose text is code, not documentation), or of
``agent()`` executing a trailing tool call whose result was never saved (a kill inside ``s1``);
a tool's exception becomes an error result for the model ("automatic error handling and
reporting"), and calling the tool again is the scripted model's choice, not the framework's.
"""

from probes.citations import docstring

DISTRIBUTION, VERSION = "strands-agents", "1.62.0"

# The interrupt module's own account of the flow: a resume invokes the interrupted hook or tool
# again, and its interrupt() call then returns the answer -- the code before and after it runs again.
_RUNS_AGAIN = docstring("strands.types:interrupt",
                        "User resumes by invoking agent with interrupt responses. … "
                        "Second call to `event.interrupt()` returns user response.", "deviation", DISTRIBUTION, VERSION)

CITATIONS = {
    # A kill inside s2 after the answer leaves the agent in its interrupt state; the recovery resumes it,
    # and the tool runs from its top again (only the kill paths: a raised exception is reported to the model).
    "EO crash:kill@s2.*": _RUNS_AGAIN,
    # The same flow one level down (the nested workflow): answering the outer agent's interrupt resumes the
    # sub-agent (Agent.as_tool), whose interrupted tool is invoked again and whose interrupt() returns the answer.
    "EO nested:crash:kill@s2.*": _RUNS_AGAIN,
    # The callback workflow: the approval is a BeforeToolCallEvent hook that fires e_cb, then calls event.interrupt();
    # the resume invokes the hook again (the "second call" returns the answer), so e_cb fires again. Not keyed for
    # the kill after e_cb: there the restarted tool call is the uncited trailing call named above, too.
    "EO callback:clean": _RUNS_AGAIN, "EO callback:park-kill": _RUNS_AGAIN,
    # The handler workflow killed inside the error-handling hook: the agent is still in its interrupt state (the
    # tool's error result never saved), the recovery resumes it and the interrupted tool runs from its top again,
    # the answered effect e2 with it (as "EO crash:kill@s2.*").
    "EO handler:kill@*": _RUNS_AGAIN, "CO handler:kill@*": _RUNS_AGAIN,
    "LV *": docstring("strands.session.session_manager:SessionManager",
                      "A session manager is in charge of persisting the conversation and state of an agent across "
                      "its interaction.", "claims", DISTRIBUTION, VERSION),
}
