"""What the OpenAI Agents SDK's documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of openai-agents 0.24.0 as installed in its side
environment (``VERSION``, pinned: the release the sentences were read in, the one
``campaign.ENV`` installs; ``tests/test_citations.py`` checks both against the installed
package). A pattern with no sentence here is silent, so a violation there is U.
"""

from probes.citations import docstring

DISTRIBUTION, VERSION = "openai-agents", "0.24.0"

_NOT_AUTHENTICATED = docstring(
    "agents.run_state:RunState.from_string",
    "Serialized state includes tool approvals and pending tool calls; this method does not authenticate that state.",
    "deviation", DISTRIBUTION, VERSION)

# The k racers each restore the same stored RunState and resume it at once, against the one
# SQLiteSession the adapter gives every run: what the class docstring says must not be done.
_NOT_CONCURRENTLY = docstring(
    "agents.run_state:RunState",
    "Resume with the original Session backend and session ID, with exclusive access to that history. … "
    "Independently restored snapshots must not be resumed concurrently against the same Session.",
    "deviation", DISTRIBUTION, VERSION)

CITATIONS = {
    "CV tamper:*": _NOT_AUTHENTICATED,
    "EO tamper:*": _NOT_AUTHENTICATED,
    "CO race:*": _NOT_CONCURRENTLY,
}
