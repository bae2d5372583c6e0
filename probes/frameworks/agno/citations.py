"""What Agno's documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of agno 3.1.10 as installed in its side environment
(``VERSION``, pinned: the release the sentences were read in, the one ``campaign.ENV``
installs; ``tests/test_citations.py`` checks both against the installed package). A
pattern with no sentence here is silent, so a violation there is U: Agno's docstrings say
nothing about a step run twice (its in-process retries, ``Step.max_retries``, or a paused
run continued twice at once), nor about checking a stored run before continuing it.
"""

from probes.citations import docstring

DISTRIBUTION, VERSION = "agno", "3.1.10"
_CONTINUE = "agno.workflow.workflow:Workflow.continue_run"

CITATIONS = {
    "LV *": docstring(_CONTINUE, "This method resumes a workflow that was paused due to a step requiring "
                                 "user confirmation.", "claims", DISTRIBUTION, VERSION),
    # A second answer at the answered pause is a continue_run on a completed run: refused, as stated.
    "FD fork:*": docstring(_CONTINUE, "ValueError: If the run is not in a paused state.", "deviation",
                           DISTRIBUTION, VERSION),
    # The same sentence for the nested workflow's fork: the second answer is again a continue_run on the
    # outer workflow's completed run (a team's member paused inside it changes nothing of that check).
    "FD nested:fork:*": docstring(_CONTINUE, "ValueError: If the run is not in a paused state.", "deviation",
                                  DISTRIBUTION, VERSION),
}
