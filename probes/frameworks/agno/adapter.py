"""Agno: a two-step ``Workflow`` whose second step asks for user input (``HumanReview``).

Why a Workflow, not an Agent: the kit's workflow is two steps with a human answer in the
second, and an Agno Workflow is exactly that -- ``Step("s1")`` fires the first effect,
``Step("s2", human_review=HumanReview(requires_user_input=True, ...))`` pauses *before* its
executor runs and hands the user's input to it (``step_input.additional_data["user_input"]``),
so the kit's answer ("yes"/"no") travels as the framework's own payload and both answers let
s2 run. An Agent's ``@tool(requires_confirmation=True)`` only carries confirm/reject, and
needs a scripted model in between. Agno runs nothing of s2 before the pause, so the step
records its start (``runtime.before_pause``) when its executor begins, after the answer.

Durable state: Agno's ``SqliteDb`` (WAL mode) or ``PostgresDb`` on the harness's server; the
paused run is a row of ``agno_runs`` whose ``run_data`` is the JSON of ``WorkflowRunOutput``.
A pause's handle is its run id; answering is ``get_run_output`` + ``set_user_input`` +
``continue_run(run_id=..., session_id=..., step_requirements=...)``. Recovery
("continue-run") reads the session's last run: paused, it is continued with the answer
again; completed, its stored result is what there is; none stored, nothing is durable (a
kill before the first save: Agno writes nothing before the pause). Steps keep Agno's
defaults (``max_retries=3``): an exception in a step runs it again in the same process.

The step that asks twice (the pause-twice workflow) is Agno's executor-level HITL: ``Step("s2",
agent=...)`` whose agent calls two tools declared ``@tool(requires_user_input=True)``, ``s2``
(``before_pause``, ``first_answer``) and then ``s2b`` (``second_answer``). Each call pauses the
workflow inside the step (a ``StepRequirement`` with ``requires_executor_input``), and the answer
goes in as the tool's user input in the requirement's ``executor_requirements``. Agno's docs show
one step pausing twice (docs.agno.com/workflows/hitl/nested: a step-level gate, then the agent's
tool); its ``continue_run`` also continues an agent paused again in the same step ("chained HITL"),
which is what lets both pauses carry an answer the step's own code consumes. The agent's model
is scripted (``_asker``, no network): it calls ``s2``, then ``s2b``, then ends with ``s2b``'s result.

The handler workflow (the kit's handler protocol, roles "pause-fails" and "handler"): the reviewed step ``s2``
fires e2 and raises; declared ``max_retries=0, skip_on_failure=True``, Agno skips it (its output a failure with the
error's message) and goes on to the next step, ``h``, which runs the handler step on the answer ``s2`` kept in the
session state the steps share.
The callback workflow (the kit's callback protocol, role "callback-pause"): Agno's conditional review,
``HumanReview(requires_output_review=<callable>)``, whose callable (``Callable[[StepOutput], bool]``, asked by
``agno.workflow.utils.hitl.check_output_review_status`` after the step ran) decides whether the step's output
waits for a human: it is the application's approval callback, fires ``e_cb`` and says yes. Agno asks it after the
step's executor, so the reviewed step ``s2`` only drafts (``before_pause``, no effect) and the pause is the review
of that draft; the answer goes in as the reviewer's edit (``StepRequirement.edit``: confirmed, the output
replaced), and the next step, ``s2-approved``, runs the rest of ``s2`` on it (``step2``: e2). A confirmed or
edited review is not asked again: ``continue_run`` goes on after the reviewed step.
The parallel workflow (the kit's parallel protocol): Agno's ``Parallel`` refuses human review ("Parallel does
not support HITL pauses -- steps inside a Parallel execute concurrently and cannot be individually paused",
``validate_human_review_for_parallel``; an agent paused inside one raises "Executor HITL inside Parallel steps
is not supported"), so the two branches are two user-input tools that one step's agent calls in one model
response (parallel tool calls), then the join tool on their results. One branch is answered by the user
input of its tool's requirement alone (``resume_branch``); a paused status names the tools still missing it.

Hermetic and offline: telemetry is on by default (a completing run looks up Agno's API
host); ``AGNO_TELEMETRY=false`` is set here (it overrides the constructor argument) and
``telemetry=False`` passed. Audited (tests/test_agno.py): no socket is opened and no file
is opened for writing; the only file written is the SQLite store the harness gave it.
"""

import json
import os
import sqlite3
from typing import Any

from probes.frameworks.agno.citations import CITATIONS
from probes.kit import runtime
from probes.kit.adapter import Adapter, Capability, required_fields

NAME, SESSION = "kit", "s"
FIELD = "answer"
ANSWERED = "kit_answer"  # the handler workflow: the failed step's answer, in the session state the steps share


def _asker() -> Any:
    """The agent of the step that asks twice: a scripted model (an Agno ``Model`` that answers from
    the messages, no provider) calling the user-input tools ``s2`` then ``s2b``, then ending with
    ``s2b``'s result (the workflow's outcome)."""
    from agno.agent import Agent
    from agno.tools import tool

    order = ("s2", "s2b")

    def _next(messages: list[Any]) -> Any:
        from agno.models.response import ModelResponse
        done = {m.tool_name: m.content for m in messages if m.role == "tool"}
        todo = [name for name in order if name not in done]
        if not todo:
            return ModelResponse(role="assistant", content=done[order[-1]])
        call = {"id": f"call-{todo[0]}", "type": "function", "function": {"name": todo[0], "arguments": "{}"}}
        return ModelResponse(role="assistant", tool_calls=[call])

    @tool(name="s2", requires_user_input=True, user_input_fields=[FIELD])
    def s2(answer: str) -> str:
        runtime.before_pause()  # the step's first question was answered: its work starts here
        runtime.first_answer(answer)
        return "s2 answered once"

    @tool(name="s2b", requires_user_input=True, user_input_fields=[FIELD])
    def s2b(answer: str) -> str:
        return runtime.second_answer(answer)

    return Agent(name="asker", id="asker", model=_scripted(_next), tools=[s2, s2b], telemetry=False)


def _brancher(branches: tuple[str, ...], join: str) -> Any:
    """The parallel workflow's agent: a scripted model calling every branch's user-input tool in one response
    (parallel tool calls: ``before_branch``, then ``branch`` on its answer), then, with both results, the join
    tool on them (``runtime.join``), then ending with the join's result (the workflow's outcome)."""
    from agno.agent import Agent
    from agno.models.response import ModelResponse
    from agno.tools import tool

    def _next(messages: list[Any]) -> Any:
        done = {m.tool_name: m.content for m in messages if m.role == "tool" and not m.tool_call_error}
        if join in done:
            return ModelResponse(role="assistant", content=done[join])
        todo = [name for name in branches if name not in done]
        if todo:
            return ModelResponse(role="assistant", tool_calls=[
                {"id": f"call-{name}", "type": "function", "function": {"name": name, "arguments": "{}"}} for name in todo])
        return _call(join, {"answers": json.dumps({name: done[name] for name in branches})})

    def asking(name: str) -> Any:
        def branch(answer: str) -> str:
            runtime.before_branch(name)  # Agno runs nothing of the tool before the pause
            return runtime.branch(name, answer)
        return tool(name=name, requires_user_input=True, user_input_fields=[FIELD])(branch)

    def joining(answers: str) -> str:
        return runtime.join(json.loads(answers), join)

    return Agent(name="brancher", id="brancher", model=_scripted(_next),
                 tools=[*(asking(name) for name in branches), tool(name=join)(joining)], telemetry=False)


def _open_branches(requirement: Any) -> list[str]:
    """The tools of a step's agent whose user input is still missing (the parallel workflow's open branches),
    read from the paused step's requirement (its executor requirements, dicts as the run stores them)."""
    from agno.run.requirement import RunRequirement
    pending = [RunRequirement.from_dict(d) if isinstance(d, dict) else d for d in requirement.executor_requirements or []]
    return sorted(str(r.tool_execution.tool_name) for r in pending if r.tool_execution and not r.is_resolved())


def _scripted(respond: Any) -> Any:
    """A scripted Agno ``Model`` (no provider, no network): ``respond(messages)`` is its next
    ``ModelResponse``, a tool call or the final content."""
    from dataclasses import dataclass

    from agno.models.base import Model
    from agno.models.response import ModelResponse

    @dataclass
    class Scripted(Model):
        id: str = "kit-scripted"
        name: str = "kit-scripted"
        provider: str = "kit"

        def invoke(self, messages: list[Any], *_: Any, **__: Any) -> ModelResponse:
            return respond(messages)

        async def ainvoke(self, messages: list[Any], *_: Any, **__: Any) -> ModelResponse:
            return respond(messages)

        def invoke_stream(self, messages: list[Any], *_: Any, **__: Any) -> Any:
            yield respond(messages)

        async def ainvoke_stream(self, messages: list[Any], *_: Any, **__: Any) -> Any:
            yield respond(messages)

        def _parse_provider_response(self, response: Any, **_: Any) -> ModelResponse:
            return response

        def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
            return response

    return Scripted()


def _call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> Any:
    from agno.models.response import ModelResponse
    call = {"id": call_id or f"call-{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return ModelResponse(role="assistant", tool_calls=[call])


def _team(name: str) -> Any:
    """The nested workflow (role "nested-pause"): a ``Team`` whose one member agent owns the user-input
    tool ``s2`` (``before_pause``, then ``step2`` on the answer). The leader (scripted) delegates to the
    member (``delegate_task_to_member``); the member (scripted) calls ``s2``, which pauses it. Agno copies
    the member's requirement to the team run (``_propagate_member_pause``) and the step to the workflow
    run (an executor ``StepRequirement`` of type team), so the workflow pauses with the member's
    question; ``continue_run`` hands the answer down to the team and from it to the member's run."""
    from agno.agent import Agent
    from agno.models.response import ModelResponse
    from agno.team import Team
    from agno.tools import tool

    @tool(name="s2", requires_user_input=True, user_input_fields=[FIELD])
    def s2(answer: str) -> str:
        runtime.before_pause()  # Agno runs nothing of the tool before the pause (as in the flat step)
        return runtime.step2(answer)

    def member_next(messages: list[Any]) -> Any:
        # s2, again after a failed call (Agno hands a tool's exception to the model as the tool's result,
        # marked tool_call_error; a model asked to run the step calls it again), then s2's result
        runs = [m for m in messages if m.role == "tool" and m.tool_name == "s2"]
        if runs and not runs[-1].tool_call_error:
            return ModelResponse(role="assistant", content=runs[-1].content)
        return _call("s2", {}, f"call-s2-{len(runs)}")

    def leader_next(messages: list[Any]) -> Any:
        # delegate to the member, then answer with the member's result: uninterrupted, the delegation's
        # result is the member's content; continued after the member's pause, Agno gives it as
        # "Member results after human-in-the-loop resolution:\n[<member>]: <content>"
        done = [str(m.content) for m in messages if m.role == "tool"]
        if done:
            return ModelResponse(role="assistant", content=done[-1].split(f"[kit-{name}]: ", 1)[-1])
        return _call("delegate_task_to_member", {"member_id": f"kit-{name}", "task": "go"})

    member = Agent(name=f"kit-{name}", id=f"kit-{name}", model=_scripted(member_next), tools=[s2], telemetry=False)
    return Team(name=f"team-{name}", id=f"team-{name}", members=[member], model=_scripted(leader_next),
                telemetry=False)


def _answer(requirement: Any, answer: Any, only: str | None = None) -> None:
    """Put ``answer`` into the workflow's current pause: the step's user input, or (a pause inside
    the step's agent) the user input of the agent's unresolved tool requirement, which the
    ``StepRequirement`` carries as dicts; ``only``: that tool's requirement alone (a parallel branch)."""
    if requirement.requires_output_review:  # the callback workflow: the answer is the reviewer's edit of the draft
        requirement.edit(answer)
        return
    if not requirement.requires_executor_input:
        requirement.set_user_input(**{FIELD: answer})
        return
    from agno.run.requirement import RunRequirement
    pending = [RunRequirement.from_dict(d) if isinstance(d, dict) else d for d in requirement.executor_requirements]
    for tool_requirement in pending:
        if not tool_requirement.is_resolved() and (only is None or tool_requirement.tool_execution.tool_name == only):
            tool_requirement.provide_user_input({FIELD: answer})
    requirement.executor_requirements = [r.to_dict() for r in pending]


def _listed(built: Any) -> list[Any]:
    """A role's Agno steps as a list: most roles are one step, the callback workflow's is two (the reviewed
    draft and the step after the review)."""
    return built if isinstance(built, list) else [built]


def _workflow(db: Any) -> Any:
    os.environ["AGNO_TELEMETRY"] = "false"  # read by every run; wins over telemetry=
    from agno.workflow import HumanReview, Step, StepInput, StepOutput, Workflow

    def s1(step_input: StepInput) -> StepOutput:
        return StepOutput(content=runtime.step1())

    def s2(step_input: StepInput) -> StepOutput:
        runtime.before_pause()
        return StepOutput(content=runtime.step2(((step_input.additional_data or {}).get("user_input") or {}).get(FIELD)))

    def extra(name: str) -> Any:
        return lambda step_input: StepOutput(content=runtime.extra_step(name, step_input.previous_step_content))

    def s2_fails(step_input: StepInput, run_context: Any) -> StepOutput:  # the handler workflow's s2: e2, raises
        runtime.before_pause()
        answer = ((step_input.additional_data or {}).get("user_input") or {}).get(FIELD)
        # the answer kept for the handler in the session state the workflow's steps share (only the reviewed
        # step is handed the user's input)
        run_context.session_state[ANSWERED] = answer
        return StepOutput(content=runtime.step2_fails(answer))

    def on_failure(step_input: StepInput, run_context: Any) -> StepOutput:
        """The handler workflow's handler: the step after ``s2`` that ``skip_on_failure`` lets the workflow go on
        to (Agno's own construct for a failed step: "continue with the next step"); it runs the handler step on
        the answer the failed step kept, handed the failed step's output (its ``error``: a message)."""
        before = (step_input.previous_step_outputs or {}).get("s2")
        error = getattr(before, "error", None)
        return StepOutput(content=runtime.handler((run_context.session_state or {}).get(ANSWERED),
                                                  handed=type(error).__name__ if error is not None else "none"))

    def drafted(step_input: StepInput) -> StepOutput:
        """The callback workflow's reviewed step: Agno asks the review callable after the step ran, so the step
        only begins here and drafts what the reviewer answers; its effect comes after the answer."""
        runtime.before_pause()
        return StepOutput(content="approve s2?")

    def needs_review(output: StepOutput) -> bool:
        """The callback workflow's approval callback: the ``requires_output_review`` callable Agno asks whether the
        step's output waits for a human (conditional review); the application's code, with an effect of its own."""
        return runtime.approval_callback()

    def approved(step_input: StepInput) -> StepOutput:
        """The rest of ``s2`` once the review was answered: the reviewer's edit is the reviewed step's output,
        which Agno hands this next step as the previous step's content."""
        return StepOutput(content=runtime.step2(step_input.previous_step_content))

    review = HumanReview(requires_user_input=True, user_input_message="answer?",
                         user_input_schema=[{"name": FIELD, "field_type": "str", "required": True}])
    asking = HumanReview(requires_output_review=needs_review, output_review_message="approve?")
    steps = {"first": lambda name: Step(name=name, executor=s1),
             "pause": lambda name: Step(name=name, executor=s2, human_review=review),
             "extra": lambda name: Step(name=name, executor=extra(name)),
             "pause-twice": lambda name: Step(name=name, agent=_asker()),
             "nested-pause": lambda name: Step(name=name, team=_team(name)),
             # the handler workflow: the failing step is not retried and, failed, skipped to the handler step
             "pause-fails": lambda name: Step(name=name, executor=s2_fails, human_review=review, max_retries=0,
                                              skip_on_failure=True),
             "handler": lambda name: Step(name=name, executor=on_failure),
             # the callback workflow: the draft whose review the callable asks for, then the step that acts on it
             "callback-pause": lambda name: [Step(name=name, executor=drafted, human_review=asking),
                                             Step(name=f"{name}-approved", executor=approved)]}
    branches = runtime.branches(runtime.code())
    if branches:  # the parallel workflow: s1, then one step whose agent calls the branches' tools and the join
        join = next(name for name, role in runtime.shape() if role == "join")
        return Workflow(id=NAME, name=NAME, db=db, telemetry=False,
                        steps=[Step(name="s1", executor=s1), Step(name="parallel", agent=_brancher(branches, join))])
    # the steps of runtime.shape(): the original two, or the code a change protocol deployed
    return Workflow(id=NAME, name=NAME, db=db, telemetry=False,
                    steps=[step for name, role in runtime.shape() for step in _listed(steps[role](name))])


class AgnoAdapter(Adapter):
    framework = "agno"
    packages = ("agno",)
    imports = ("agno.agent", "agno.team", "agno.workflow", "agno.db.sqlite", "agno.db.postgres", "agno.tools", "agno.models.base")
    backends = ("sqlite", "postgres")
    capabilities = frozenset({Capability.PAUSE, Capability.RECOVER, Capability.RETRY,
                              Capability.CONCURRENT, Capability.FORK, Capability.TAMPER,
                              Capability.SAVE_HOOK, Capability.CODE_CHANGE, Capability.TWO_PAUSES,
                              Capability.DELETE, Capability.NESTED, Capability.HANDLER, Capability.PARALLEL,
                              Capability.CALLBACK})
    code_changes = runtime.CODE_CHANGES
    recovery_modes = ("continue-run",)
    answers = ("yes", "no")
    citations = CITATIONS

    def _db(self) -> Any:
        if self.backend == "postgres":
            from agno.db.postgres import PostgresDb
            return PostgresDb(db_url=self.store.replace("postgresql://", "postgresql+psycopg://", 1))
        from agno.db.sqlite import SqliteDb
        return SqliteDb(db_file=self.store)

    def hook(self) -> None:
        from agno.workflow import Workflow
        from sqlalchemy.engine.default import DefaultDialect
        runtime.hook_save(Workflow, "_persist_session_and_run", writes=((DefaultDialect, "do_commit"),))

    @staticmethod
    def _status(run: Any) -> dict[str, Any]:
        status = str(getattr(run.status, "value", run.status)).lower()
        if run.is_paused and runtime.branches(runtime.code()):  # the tools whose user input is missing
            requirements = getattr(run, "step_requirements", None) or []
            return {"status": "paused", "handle": run.run_id,
                    "pending": _open_branches(requirements[-1]) if requirements else []}
        if run.is_paused:
            return {"status": "paused", "handle": run.run_id}
        return {"status": status, "outcome": run.content}

    def start(self) -> dict[str, Any]:
        return self._status(_workflow(self._db()).run("go", session_id=SESSION))

    def resume(self, handle: Any, answer: Any) -> dict[str, Any]:
        wf = _workflow(self._db())
        run_id = handle or getattr(wf.get_last_run_output(session_id=SESSION), "run_id", None)
        saved = wf.get_run_output(run_id=run_id, session_id=SESSION) if run_id else None
        requirements = getattr(saved, "step_requirements", None)
        if requirements:  # else continue_run itself says what is missing (a stored run edited, say)
            _answer(requirements[-1], answer)
        return self._status(wf.continue_run(run_id=run_id, session_id=SESSION, step_requirements=requirements))

    def resume_branch(self, handle: Any, branch: str, answer: Any) -> dict[str, Any]:
        """One parallel branch answered: the user input of that tool's requirement alone, the other tool's left
        unresolved, then ``continue_run`` with the step's requirements."""
        wf = _workflow(self._db())
        run_id = handle or getattr(wf.get_last_run_output(session_id=SESSION), "run_id", None)
        saved = wf.get_run_output(run_id=run_id, session_id=SESSION) if run_id else None
        requirements = getattr(saved, "step_requirements", None)
        if requirements:
            _answer(requirements[-1], answer, only=branch)
        return self._status(wf.continue_run(run_id=run_id, session_id=SESSION, step_requirements=requirements))

    def recover(self, mode: str, answer: Any) -> dict[str, Any]:
        last = _workflow(self._db()).get_last_run_output(session_id=SESSION)
        if last is None:
            return self.nothing_durable("no run stored yet (Agno saves the run at the pause)")
        if last.is_paused and runtime.branches(runtime.code()):  # which branch an answer is for is the kit's
            return self._status(last)
        return self.resume(last.run_id, answer) if last.is_paused else self._status(last)

    def delete(self) -> dict[str, Any]:
        """``Workflow.delete_session``, the workflow's own deletion of its session: the database's
        ``delete_session`` deletes the session's row and, in the same transaction, its runs."""
        _workflow(self._db()).delete_session(session_id=SESSION)
        return {"status": "deleted"}

    # The durable documents: each run's run_data (WorkflowRunOutput as JSON), by run id.
    def _sql(self, query: str, *args: Any) -> list[Any]:
        with sqlite3.connect(self.store) as db:
            return db.execute(query, args).fetchall()

    def state_paths(self) -> list[Any]:
        if self.backend != "sqlite":
            return []
        try:
            return [r[0] for r in self._sql("SELECT run_id FROM agno_runs ORDER BY created_at, run_index")]
        except sqlite3.OperationalError:  # no table yet: nothing saved
            return []

    def load_state(self, path: Any) -> Any:
        return json.loads(self._sql("SELECT run_data FROM agno_runs WHERE run_id=?", path)[0][0])

    def save_state(self, path: Any, data: Any) -> None:
        self._sql("UPDATE agno_runs SET run_data=? WHERE run_id=?", json.dumps(data), path)

    def state_required(self, doc: Any) -> dict[str, Any]:
        """A run's document is Agno's ``WorkflowRunOutput`` dataclass (every field has a default)."""
        from agno.run.workflow import WorkflowRunOutput
        return {"status": "schema", "required": required_fields(WorkflowRunOutput),
                "model": "agno.run.workflow.WorkflowRunOutput"}
