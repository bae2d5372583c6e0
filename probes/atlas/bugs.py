"""The atlas table: one row per reported LangGraph resume behaviour (shared/ATLAS.md).

Adding a bug is this row plus one ``@cell("<ref>")`` function in ``cells.py``. A row
says which contract property the behaviour touches, on which backends it is measured
(PostgreSQL where the report is backend-specific or concurrent), and which check of
``probes.core.checker`` decides it from the cell's observations (``decide.py``).

``present_when`` is the checker outcome that means "the reported behaviour occurred":
every check here returns ``holds``; the reported behaviour is the violation, so it is
``False`` for all rows today (kept explicit so a row for a *fix* -- a behaviour that
should appear -- needs no code change).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bug:
    ref: str                     # langchain-ai/langgraph issue number
    prop: str                    # contract property (probes.core.checker.Property), first one named in ATLAS.md
    title: str                   # the reported behaviour, short
    check: str                   # name of the check in probes.core.checker that decides the cell
    backends: tuple[str, ...] = ("sqlite",)
    reported: str = ""           # versions the report names (for the chapter; never used to decide)
    present_when: bool = False   # the check's `holds` value that means "present"

    @property
    def url(self) -> str:
        return f"https://github.com/langchain-ai/langgraph/issues/{self.ref}"


BUGS: tuple[Bug, ...] = (
    Bug("6663", "FD", "second resume at one interrupt checkpoint returns the first outcome", "fork_outcome"),
    Bug("7361", "FD", "resume addressed to a checkpoint id replays instead of answering", "completes",
        reported="from 1.1.x; 1.0.x resumed"),
    Bug("6792", "PC", "interrupt in a subgraph re-runs completed parent tasks", "prefix_not_reentered"),
    Bug("7780", "PC", "interrupt() in a loop: later iterations get earlier answers", "same_decision"),
    Bug("8837", "CO", "consumed resume value delivered again by invoke(None)", "at_most_once",
        reported="open, filed 2026-09"),
    Bug("8836", "CO", "resume map with an unknown interrupt id silently ignored", "invalid_state_refused"),
    Bug("8039", "EO", "durability='sync' crash between put_writes and put re-runs a step", "exactly_once",
        ("sqlite", "postgres"), reported="1.2.4, 1.2.11 (PostgreSQL)"),
    Bug("8764", "LV", "crash before the first durable checkpoint drops an accepted run", "completes",
        ("sqlite", "postgres"), reported="async: ~90 of 200 runs"),
    Bug("8458", "PC", "time travel into a subgraph re-runs the whole subgraph", "prefix_not_reentered",
        reported="from 1.1.7; 1.1.6 worked; still in 1.2.9"),
    Bug("8443", "FD", "fork of a delta-channel thread replays the abandoned branch", "fork_outcome",
        reported="versions with delta channels"),
    Bug("8834", "PC", "exception in a conditional router: recovery skips the routing", "exactly_once"),
    Bug("8579", "CO", "one resume value accepted while two interrupts pend in one task", "invalid_state_refused"),
    Bug("6956", "PC", "get_state().next empty after a node's second interrupt()", "same_decision"),
    Bug("5952", "CO", "resolved parallel interrupts fire again on later resumes", "at_most_once"),
    Bug("8796", "CO", "concurrent resumes of one thread fork the checkpoint chain", "invalid_state_refused",
        ("sqlite", "postgres"), reported="1.2.11, PostgresSaver 3.1.2"),
    Bug("8810", "CV", "async shallow PostgreSQL saver overwrites a newer checkpoint after a cancel",
        "same_decision", ("postgres",)),
)


def by_ref(ref: str) -> Bug:
    for bug in BUGS:
        if bug.ref == ref:
            return bug
    raise KeyError(ref)
