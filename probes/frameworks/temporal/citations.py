"""What Temporal's Python SDK documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of temporalio 1.35.0 as installed in the campaign's side
environment (``VERSION``, pinned: the release the sentences were read in, the one
``campaign.ENV`` installs; ``tests/test_citations.py`` checks both against the installed
package). Temporal retries activities: an attempt that failed or outlived its start-to-close
timeout (as the attempt of a killed worker does) is made again, so an activity's effect can
run twice -- at-least-once activities, the documented semantics, hence a deviation (D) where an
effect is measured twice. A pattern with no sentence here is silent, so a violation there is U.
"""

from probes.citations import docstring

DISTRIBUTION, VERSION = "temporalio", "1.35.0"

_RETRIED = docstring(
    "temporalio.workflow:start_activity",
    "start_to_close_timeout: Max amount of time a single activity run can take from when it starts to when it "
    "completes. This is per retry.…retry_policy: How an activity is retried on failure. If unset, a server-defined "
    "default is used. Set maximum attempts to 1 to disable retries.", "deviation", DISTRIBUTION, VERSION)

CITATIONS = {
    # A worker killed (or an activity raising) after an activity's effect: the attempt is made again.
    "EO crash:*": _RETRIED,
    "EO nested:crash:*": _RETRIED,  # the same retry of the child workflow's activity (the nested protocol)
    "EO parallel:crash@*": _RETRIED,  # the parallel workflow's join, an activity, killed: attempted again
    "EO save-kill:*": _RETRIED,  # the worker died before it reported the activity's outcome
    "EO server-kill:s1.effect": _RETRIED,  # the server died before it recorded s1's outcome
    # A worker stopped (SIGSTOP) inside an activity outlives the attempt's start-to-close timeout:
    # the server makes the attempt again on the worker that took over, whatever the stopped one does.
    "EO stall:*": _RETRIED,
    # The handler workflow's handler is an activity the workflow's except runs: a worker killed inside it is
    # an attempt that outlived its start-to-close timeout, made again (the kit's handler protocol).
    "EO handler:kill@*": _RETRIED,
}
