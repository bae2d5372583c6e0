"""The atlas table: one row per reported resume behaviour (shared/ATLAS.md, shared/BUGS.md).

Adding a bug is this row plus one ``@cell("<ref>")`` function in its framework's cells
module (``probes/studies/atlas/frameworks.py`` names it: ``cells.py`` for LangGraph,
``cells_<framework>.py`` for the others). A row says which framework the report is
against, which contract property the behaviour touches, on which backends it is
measured, and which check of ``probes.core.checker`` decides it from the cell's
observations (``decide.py``).

``present_when`` is the checker outcome that means "the reported behaviour occurred":
every check here returns ``holds``; the reported behaviour is the violation, so it is
``False`` for all rows today (kept explicit so a row for a *fix* -- a behaviour that
should appear -- needs no code change).

The releases a row runs on: LangGraph rows run on the campaign's ``versions`` list.
The other frameworks' rows are swept (``sweep.py``) over their distribution's release
list from ``since`` (the oldest release the cell can express; default the oldest in
the list) to the newest: the release the report names as bad (``bad``), the pin and
the newest are run, then the boundaries are bisected, at most ``cap`` releases in all.
``pre`` adds pre-releases to a row's list (a behaviour that lived only in a development window).
``bad``, ``since`` and ``pre`` only choose where to look; what each release does is measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from probes.studies.atlas.frameworks import Framework, framework

LANGGRAPH = "langgraph"


@dataclass(frozen=True)
class Bug:
    ref: str                     # tracker issue / pull request number
    prop: str                    # contract property (probes.core.checker.Property), first one the report maps to
    title: str                   # the reported behaviour, short
    check: str                   # name of the check in probes.core.checker that decides the cell
    backends: tuple[str, ...] = ("sqlite",)
    reported: str = ""           # versions the report names (for the chapter; never used to decide)
    present_when: bool = False   # the check's `holds` value that means "present"
    fw: str = LANGGRAPH          # row of probes/studies/atlas/frameworks.py
    pull: bool = False           # the reference is a pull request (else an issue)
    repo: str | None = None      # the tracker, when not the framework's own (e.g. a companion server)
    bad: str | None = None       # a release the report names as having the behaviour (where the sweep looks first)
    since: str | None = None     # the oldest release the cell can express (the sweep's lower end)
    cap: int = 6                 # at most this many releases run by the bisecting sweep
    # pre-releases swept besides the framework's list: a report whose behaviour lived in a development
    # window that no final release had (release numbers from `pip index versions <dist> --pre`)
    pre: tuple[str, ...] = ()

    @property
    def framework(self) -> Framework:
        return framework(self.fw)

    def releases(self) -> list[str]:
        """The releases this row's sweep chooses among, oldest first: its distribution's list
        (``releases.json``) and the row's ``pre``-releases."""
        from probes.studies.atlas import releases

        return sorted({*releases.releases(self.framework.dist), *self.pre}, key=releases.key)

    @property
    def key(self) -> str:
        """Unique across frameworks: the number for LangGraph (as before), ``<framework>-<number>`` else."""
        return self.ref if self.fw == LANGGRAPH else f"{self.fw}-{self.ref}"

    @property
    def url(self) -> str:
        repo = self.repo or self.framework.repo
        return f"https://github.com/{repo}/{'pull' if self.pull else 'issues'}/{self.ref}"

    @property
    def cite(self) -> str:
        """``owner/name#N`` (with "PR" for a pull request), for tables."""
        repo = self.repo or self.framework.repo
        return f"{repo}{' PR' if self.pull else ''}#{self.ref}"


# LangGraph's rows (shared/ATLAS.md, and three more from shared/BUGS.md).
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
    # --- shared/BUGS.md: three more LangGraph reports (run on the same `versions`) ---
    Bug("6050", "PC", "@task completed before an interrupt() inside a subgraph runs again on resume", "exactly_once",
        reported="fix PR #6161 merged 2025-09-17, reverted by PR #6227 2025-09-30"),
    Bug("8234", "RD", "durability='sync': a crash between a superstep's task writes and its checkpoint restores a state "
        "or effects unlike an uninterrupted run", "same_decision", ("sqlite", "postgres"),
        reported="open (2026-06-30), after the #8039 fixes (PRs #8050, #8055)"),
    Bug("5672", "RD", "a task cancelled in flight leaves no error record under durability='exit'",
        "same_decision", reported="PR #8634 (closed 2026-08-17): sync/async record CancelledError, exit does not"),
)

# shared/BUGS.md: the other frameworks' reports (swept over their release lists).
OTHERS: tuple[Bug, ...] = (
    Bug("1684", "CV", "in-memory FullStatePersistence: load_next hands out the live snapshot, resuming mutates "
        "the recorded history", "same_decision", ("memory",), "reported 2025-05; fix PR #3077 merged 2025-10",
        fw="pydantic-graph", bad="0.2.0", since="0.1.0", cap=12),
    Bug("4501", "LV", "@persist cyclic flow kicked off with inputs={'id': ...} ends after one cycle", "completes",
        ("sqlite",), "fix PR #4501 merged 2026-02-16", fw="crewai", pull=True, bad="1.9.3", since="1.0.0", cap=7),
    # the report places the behaviour in 1.14.7's development (PR #5896 made the executor register in the
    # checkpointed state; the fix merged the day 1.14.7 was released): its alphas and candidates are swept too
    Bug("6113", "PC", "checkpointing on, one agent, two tasks: the reused executor takes a live snapshot for a resume "
        "and the second task replays the first's completed steps (never asks the model)", "exactly_once", ("file",),
        "1.14.2 to 1.14.7 dev; fix PR #6113 merged 2026-06-11", fw="crewai", pull=True, bad="1.14.7rc1",
        since="1.14.2", cap=9, pre=("1.14.7a1", "1.14.7a2", "1.14.7a3", "1.14.7a4", "1.14.7rc1", "1.14.7rc2")),
    Bug("5528", "PC", "fork resume with two tasks in progress: an in-progress agent restarts from scratch (reported: "
        "only the first task's agent is marked resuming)", "prefix_not_reentered", ("file",),
        "review finding on PR #5528 (merged 2026-04-17)",
        fw="crewai", pull=True, bad="1.14.3", since="1.14.2", cap=6),
    Bug("18023", "PC", "InputRequiredEvent stays in progress in the saved context: restoring relaunches the asking "
        "step", "exactly_once", ("memory",), "issue #18019; fix PR #18023 merged 2025-03-05", fw="llamaindex",
        pull=True, bad="0.12.20", since="0.12.0", cap=8),
    # the companion server's own releases (llama-agents-server, run-llama/llama-agents); its store persists
    # a run as ticks from 0.2.0 (PR #342), before which a handler's row carried its whole context
    Bug("564", "LV", "workflow server restart: a handler that crashed before persisting any state is run again from an "
        "empty StartEvent (and its result recorded) instead of being marked failed", "invalid_state_refused",
        ("sqlite",), "fix PR #564 merged 2026-04-22", fw="llama-agents", pull=True, bad="0.4.6", since="0.2.0",
        cap=7),
    Bug("4244", "LV", "approval on a JSON-restored RunState is not honoured when Runner.run gets a context: the run "
        "interrupts again", "completes", ("memory",), "closed 2026-08-06", fw="openai-agents", bad="0.22.0",
        since="0.6.0", cap=6),
    Bug("1695", "PC", "resuming a workflow from its latest checkpoint re-runs the first executor",
        "prefix_not_reentered", ("file",), "a fix on main 2025-11-04", fw="agent-framework", bad="1.0.0b251016",
        cap=8),
    Bug("3938", "EO", "an executor failing mid-superstep leaves no checkpoint for it: resuming replays its "
        "completed effects", "at_most_once", ("file",), "open (2026-02-14)", fw="agent-framework",
        bad="1.0.0b260212", cap=6),
    # the AG-UI server's own releases (agent-framework-ag-ui). Canonical interrupt outcomes that a `resume`
    # answers arrived in 1.0.0rc8 (PR #6925, 2026-07-07), but rc8, rc9 and 1.0.0 import a private core
    # function (agent_framework._tools._try_execute_function_calls) that the agent-framework-core pip
    # resolves for them today (1.23.0) no longer has (measured: n/a, they do not import); 1.0.1 on import.
    Bug("7458", "CO", "AG-UI: an approval resume is consumed and the approved tool run before the run fails; the "
        "retried resume is refused, the approved call cannot be completed", "completes", ("memory",),
        "filed against 1.0.1 (2026-07); closed", fw="agent-framework-ag-ui", bad="1.0.1", since="1.0.1", cap=6),
    Bug("8029", "LV", "route-mode team: acontinue_run drops the paused member run and restarts the leader; the "
        "confirmed tool never runs", "completes", ("sqlite",), "v2.6.8; open (2026-05-21)", fw="agno", bad="2.6.8",
        since="2.5.0", cap=8),
    Bug("7697", "PC", "member-level HITL resume: acontinue_run loses the conversation and the leader re-delegates "
        "the finished work", "prefix_not_reentered", ("sqlite",), "closed (2026-04-27)", fw="agno", bad="2.5.17",
        since="2.5.0", cap=7),
    Bug("10086", "CV", "background + streaming continue of an external_execution tool sends the run's own "
        "tool-call turn twice", "at_most_once", ("sqlite",), "open (2026-09-09)", fw="agno", bad="3.0.0",
        since="2.5.0", cap=9),
    Bug("6198", "PC", "ADK 2.0: resuming after a ToolConfirmation runs the sequential pipeline's invocation again",
        "exactly_once", ("sqlite",), "2.0; closed as stale (2026-06-23)", fw="google-adk", bad="2.0.0",
        since="1.14.0", cap=8),
    Bug("5349", "LV", "sub-agent with sequential long-running tools: the second resumption ends the agent early",
        "completes", ("sqlite",), "1.27-1.30, worked in 1.26 (open, PR #5386)", fw="google-adk", bad="1.30.0",
        since="1.14.0", cap=8),
    Bug("3355", "CO", "a message history ending in an unapproved tool call is resumed as if the call were approved",
        "same_decision", ("memory",), "issue #3350; a regression from PR #2913; fix merged 2025-11-06",
        fw="pydantic-ai", pull=True, bad="1.11.0", since="1.0.0", cap=12),
    # pydantic/pydantic-ai-harness: StepPersistence ships from 0.4.0 (the wheels of 0.1.1-0.3.0 have no
    # step_persistence module). The report names no release ("the current implementation", the snapshot
    # code as #251 added it), so the sweep starts at the first release that has it. Measured (2026-12-02,
    # cap 8): present on 0.4.0, 0.8.0, 0.9.0 (continue_run raises LookupError: no snapshot at all), absent
    # on 0.10.0, 0.11.0, 0.14.0, 0.26.0, 0.62.0 (it resumes from the tool's return): first fixed 0.10.0.
    Bug("373", "LV", "StepPersistence: the snapshot after a CallToolsNode omits the tool-return request; a worker "
        "stopped after the tool ran leaves continue_run() nothing to resume without repeating the tool",
        "exactly_once", ("sqlite",), "closed 2026-07-15; fix PR #374 merged 2026-07-15", fw="pydantic-ai-harness",
        bad="0.4.0", since="0.4.0", cap=8),
    # openai-agents below 0.21 resolve an openai 2.x whose usage models they cannot build (the first
    # model call fails in the SDK), so the sweep starts at 0.21.0, the first that takes openai 3.
    Bug("2500", "LV", "nested approval of an agent.as_tool() re-interrupts after a to_json()/from_json() round "
        "trip", "completes", ("memory",), "issue #2487; fix PR #2500 merged 2026-02-17", fw="openai-agents",
        pull=True, since="0.21.0", cap=4),
)


# Every row: LangGraph's (``BUGS``, run on the campaign's ``versions``) and the others'.
ALL: tuple[Bug, ...] = BUGS + OTHERS


def by_ref(ref: str, fw: str = LANGGRAPH) -> Bug:
    for bug in ALL:
        if bug.ref == ref and bug.fw == fw:
            return bug
    raise KeyError(f"{fw}#{ref}")


def by_key(key: str) -> Bug:
    for bug in ALL:
        if bug.key == key:
            return bug
    raise KeyError(key)


def of(fw: str) -> tuple[Bug, ...]:
    """The rows of one framework, in table order."""
    return tuple(b for b in ALL if b.fw == fw)
