"""What Google ADK's documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of google-adk 2.13.0 as installed in its side
environment; a pattern with no sentence here is silent, so a violation there is U.
"""

_RESUMABILITY = "google/adk/apps/_configs.py: ResumabilityConfig docstring (google-adk 2.13.0; marked experimental)"
_AT_LEAST_ONCE = {
    "page": _RESUMABILITY,
    "quote": "Tool call to resume needs to be idempotent because we only guarantee an at-least-once behavior "
             "once resumed.",
    "stance": "deviation"}

CITATIONS: dict[str, dict[str, str]] = {
    # Resuming an invocation that failed midway re-runs unfinished work: at-least-once, stated.
    "EO crash:*/resume-invocation": _AT_LEAST_ONCE,
    "EO save-kill:*": _AT_LEAST_ONCE,  # the save-kill protocol recovers with the first mode, resume-invocation
    "LV *": {
        "page": _RESUMABILITY,
        "quote": "resume an invocation from the last event, if it's paused or failed midway through.",
        "stance": "claims"},
}
