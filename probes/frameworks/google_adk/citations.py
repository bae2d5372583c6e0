"""What Google ADK's documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of google-adk 2.13.0 as installed in its side environment
(``VERSION``, pinned: the release the sentences were read in, the one ``campaign.ENV``
installs; ``tests/test_citations.py`` checks both against the installed package). A
pattern with no sentence here is silent, so a violation there is U.
"""

from probes.citations import docstring

DISTRIBUTION, VERSION = "google-adk", "2.13.0"
_RESUMABILITY = "google.adk.apps._configs:ResumabilityConfig"  # marked experimental

_AT_LEAST_ONCE = docstring(
    _RESUMABILITY, "Tool call to resume needs to be idempotent because we only guarantee an at-least-once behavior "
                   "once resumed.", "deviation", DISTRIBUTION, VERSION)

# The step that asks twice is a node built with ``rerun_on_resume=True`` (``node(...)`` makes it a
# ``FunctionNode``), which ADK reruns on each answer: the code between its two questions runs again
# on the second. (``BaseNode.rerun_on_resume``'s own docstring says it more plainly, "the node reruns
# from scratch", but a pydantic field's docstring is no attribute ``inspect.getdoc`` can read back.)
_RERUN = docstring("google.adk.workflow._function_node:FunctionNode.__init__",
                   "rerun_on_resume: If True, the node will be rerun after being interrupted and resumed.",
                   "deviation", DISTRIBUTION, VERSION)

CITATIONS = {
    # Resuming an invocation that failed midway re-runs unfinished work: at-least-once, stated.
    "EO crash:*/resume-invocation": _AT_LEAST_ONCE,
    "EO nested:crash:*/resume-invocation": _AT_LEAST_ONCE,  # the same resumed invocation, its node nested
    "EO parallel:crash@*/resume-invocation": _AT_LEAST_ONCE,  # the same, the parallel workflow's join node
    "EO save-kill:*": _AT_LEAST_ONCE,  # the save-kill protocol recovers with the first mode, resume-invocation
    "EO pause-twice:*": _RERUN, "CO pause-twice:*": _RERUN,  # the first answer's effect again on the second
    # The callback workflow's confirmation callback (``require_confirmation``) is part of the confirmed tool call,
    # which the resumed invocation runs again (the tool node reruns on resume): at-least-once, stated for it.
    "EO callback:*": _AT_LEAST_ONCE,
    # The handler workflow killed inside the on_tool_error_callback: the resumed invocation runs the failed tool
    # call again (its answered effect e2 with it), the at-least-once of a resumed tool call.
    "EO handler:kill@*/resume-invocation": _AT_LEAST_ONCE, "CO handler:kill@*/resume-invocation": _AT_LEAST_ONCE,
    "LV *": docstring(_RESUMABILITY, "resume an invocation from the last event, if it's paused or failed midway through.",
                      "claims", DISTRIBUTION, VERSION),
}
