"""What the OpenAI Agents SDK's documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of openai-agents 0.24.0 as installed in its side
environment; a pattern with no sentence here is silent, so a violation there is U.
"""

_FROM_STRING = "agents/run_state.py: RunState.from_string docstring (openai-agents 0.24.0)"
_NOT_AUTHENTICATED = {
    "page": _FROM_STRING,
    "quote": "Serialized state includes tool approvals and pending tool calls; this method does not "
             "authenticate that state.",
    "stance": "deviation"}

CITATIONS: dict[str, dict[str, str]] = {
    "CV tamper:*": _NOT_AUTHENTICATED,
    "EO tamper:*": _NOT_AUTHENTICATED,
}
