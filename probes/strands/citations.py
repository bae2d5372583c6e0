"""What Strands Agents' documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of strands-agents 1.62.0 as installed in its side
environment (``VERSION``, pinned: the release the sentences were read in, the one
``campaign.ENV`` installs; ``tests/test_citations.py`` checks both against the installed
package). A pattern with no sentence here is silent, so a violation there is U.
"""

from probes.citations import docstring

DISTRIBUTION, VERSION = "strands-agents", "1.62.0"

CITATIONS: dict = {}
