"""What Agno's documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of agno 3.1.10 as installed in its side environment
(``VERSION``, pinned: the release the sentences were read in, the one ``campaign.ENV``
installs; ``tests/test_citations.py`` checks both against the installed package). A
pattern with no sentence here is silent, so a violation there is U.
"""

from probes.citations import docstring

DISTRIBUTION, VERSION = "agno", "3.1.10"
_CONTINUE = "agno.workflow.workflow:Workflow.continue_run"

CITATIONS = {
    "LV *": docstring(_CONTINUE, "This method resumes a workflow that was paused due to a step requiring "
                                 "user confirmation.", "claims", DISTRIBUTION, VERSION),
}
