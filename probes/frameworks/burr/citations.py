"""What Apache Burr's documentation says, keyed "PROPERTY path-pattern".

Quotes are verbatim docstrings of apache-burr 0.43.0 as installed in its side environment
(``VERSION``, pinned: the release the sentences were read in, the one ``campaign.ENV``
installs; ``tests/test_citations.py`` checks both against the installed package). A
pattern with no sentence here is silent, so a violation there is U.

Burr's unit of durability is the completed action: the persister saves after each action,
and a restarted application is built from "the state from the latest fully completed
action" and resumes at the action after it. An action interrupted before its save (killed,
or failed: a failed action is saved with the state from before it, and the application
resumes at that action) is that next action, and runs again with its effects. That sentence
is cited, as the documented weaker behaviour, for the crash and save-kill paths.

Read and left uncited (so their violations stay U): nothing says what answering a halted
application a second time at the same sequence id does (the retries, the race and the fork
run the action again; the second save then breaks the table's primary key, which
``BaseStateSaver.save`` names as "a unique identifier for the state", but only after the
action's effect), nor what a paused worker does on waking (the stall). Burr's own way to answer
a past point with another value, ``initialize_from(fork_from_app_id=...)`` into a new app id, is
not what the kit's fork drives (it answers through ``resume``, the same call as the retries).
No docstring claims that a resumed application completes, so LV cites nothing.
"""

from probes.citations import docstring

DISTRIBUTION, VERSION = "apache-burr", "0.43.0"

# BaseStateLoader.load: with no sequence id, the loader returns the state at the end of the latest fully
# completed action; initialize_from(resume_at_next_action=True) goes on from there.
_LATEST_COMPLETED = docstring("burr.core.persistence:BaseStateLoader.load",
                              "If sequence_id is not provided, persistor should return the state from the latest "
                              "fully completed action.", "deviation", DISTRIBUTION, VERSION)

CITATIONS = {
    # A crash inside an action (kill or raise, s1 or s2): recovery resumes after the latest completed action,
    # so the interrupted action runs again (the exhaustive protocol's points are labelled from these paths).
    "EO crash:*": _LATEST_COMPLETED,
    # A kill inside the persister's save of an action: that action is not saved, so it is not completed.
    "EO save-kill:*": _LATEST_COMPLETED,
}
