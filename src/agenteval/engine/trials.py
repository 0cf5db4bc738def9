"""Running one (case, trial) job: attempts under a time limit, retries by reason, the record."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from agenteval.agents.calling import (
    Agent,
    InvalidOutputError,
    Invoke,
    call_agent,
    invoker,
    no_response_failure,
)
from agenteval.agents.environment import (
    EnvironmentPlan,
    ToolEnvironment,
    wants_environment,
)
from agenteval.agents.frameworks import FrameworkAgent
from agenteval.agents.injected import is_injected
from agenteval.agents.recorder import (
    TrialRecorder,
    claim_answered_tools,
    monotonic,
    start_recording,
    stop_recording,
)
from agenteval.agents.users import UserPlan, UserSession
from agenteval.case import EvalCase
from agenteval.engine.deadline import Deadline, grace_s
from agenteval.errors import ConfigError
from agenteval.failures import Classified, TrialTimeoutError, classify
from agenteval.interrupts import Interruption, interruption, settle_own_cancellations
from agenteval.otel.live import SpanCapture, span_capture
from agenteval.retry import RetryPolicy
from agenteval.trace import Failure, FailureCause, SimulatedConversation, Trial, Usage, utc_now

__all__ = ["RetryPolicy", "TrialRunner", "run_trial", "trace_trial"]


def trace_trial(case: EvalCase, index: int) -> Trial:
    """The trial a case's recorded `agent_trace` describes (scoring with no agent)."""
    trial = Trial(case_id=case.id, trial=index, steps=case.agent_trace or [], started_at=utc_now())
    trial.failure = no_response_failure(trial) if not trial.tool_calls else None
    return trial


def _merge(returned: Trial, recorder: TrialRecorder) -> Trial:
    """The agent's own record where it gave one, else what the recorder saw.

    Model calls: those the agent returned and those it recorded with `record_model_call` are
    all its own, and add up; but the spans' model calls describe the very calls an
    instrumented agent returned, so where it returned some the spans' add none (they cannot be
    matched call by call: a span may lack the model or tokens the agent's record has)."""
    updates: dict[str, object] = {}
    if not returned.tool_calls and recorder.tool_calls:
        updates["tool_calls"] = list(recorder.tool_calls)
    if recorder.model_calls and not (returned.model_calls and recorder.model_calls_from_spans):
        updates["model_calls"] = [*returned.model_calls, *recorder.model_calls]
    if not returned.node_visits and recorder.node_visits:
        updates["node_visits"] = list(recorder.node_visits)
    gaps = recorder.gaps(returned)
    if gaps is not returned.not_recorded:
        updates["not_recorded"] = gaps
    if recorder.tool_specs:
        updates["tool_specs"] = {**recorder.tool_specs, **returned.tool_specs}
    return returned.model_copy(update=updates) if updates else returned


class _Tally:
    """What adds up over the attempts of one trial (kept light: one is made per trial)."""

    __slots__ = ("attempts", "retries", "settled_s", "spent", "start", "started_at", "working_s")

    def __init__(self) -> None:
        self.started_at = utc_now()
        self.start = monotonic()
        self.working_s = 0.0
        self.settled_s = 0.0
        """Time spent waiting for an agent service's spans after it answered: not the
        agent's, so out of the latencies."""
        self.attempts = 0
        self.retries: dict[str, int] = {}
        self.spent: Usage | None = None

    def close_attempt(self, attempt_start: float, recorder: TrialRecorder, trial: Trial) -> None:
        settled, self.settled_s = self.settled_s, 0.0
        self.working_s += monotonic() - attempt_start - recorder.waits_s - settled
        self.start += settled  # the wait is not the trial's: its latency starts later
        for reason, count in recorder.retries.items():
            self.retry(reason, count)
        for call in trial.model_calls:
            self.spent = call.usage if self.spent is None else self.spent + call.usage

    def retry(self, reason: str, count: int = 1) -> None:
        self.retries[reason] = self.retries.get(reason, 0) + count

    def stamp(self, trial: Trial, case: EvalCase, index: int) -> Trial:
        values = {
            "case_id": case.id,
            "trial": index,
            "started_at": self.started_at,
            "latency_s": monotonic() - self.start,
            "working_latency_s": max(0.0, self.working_s),
            "attempts": self.attempts,
            "retries": self.retries,
            # Not `Usage.model_construct()`: it is slower than the validation (9.5 us against
            # 2.4 us a call measured; pydantic's construct is Python, its validation C).
            "usage": Usage() if self.spent is None else self.spent.model_copy(),
        }
        _assign(trial, values)
        return trial


def _assign(trial: Trial, values: dict[str, object]) -> None:
    """What pydantic's own assignment does for a model without `validate_assignment` (the
    values are the engine's, already valid), at a tenth of the cost of as many setattrs (three
    more a trial: 2-3 % of bench W1's profile)."""
    trial.__dict__.update(values)
    trial.__pydantic_fields_set__.update(values)


@dataclass(frozen=True)
class TrialRunner:
    """Runs one agent's trials, set up once per run: how to call the agent, how to capture its
    spans, the time limit, the retry policy and the exception classes the run declares as
    infrastructure."""

    invoke: Invoke | FrameworkAgent
    timeout_s: float | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    capture: SpanCapture | None = None
    declared: tuple[type[BaseException], ...] = ()
    remote_wait_s: float | None = None
    environment: EnvironmentPlan | None = None
    """The run's tool mocks and replay, added to each case's (None: the cases' own only)."""
    users: UserPlan | None = None
    """Who plays the simulated users of cases that have one (None: scripted users only)."""

    @classmethod
    def of(
        cls,
        agent: Agent,
        *,
        timeout_s: float | None,
        retry: RetryPolicy,
        declared: tuple[type[BaseException], ...] = (),
        remote_wait_s: float | None = None,
        environment: EnvironmentPlan | None = None,
        users: UserPlan | None = None,
    ) -> TrialRunner:
        """The runner of `agent` for this run (`remote_wait_s`: with an OTLP receiver on,
        how long a trial waits for its agent service's spans)."""
        capture = span_capture(remote_wait_s)
        return cls(
            invoker(agent), timeout_s, retry, capture, declared, remote_wait_s, environment, users
        )

    async def _attempt(
        self, case: EvalCase, index: int, recorder: TrialRecorder, tally: _Tally
    ) -> tuple[Trial, str | None]:
        """The agent's answer, and why spans its service exports may be missing (if so)."""
        token = start_recording(recorder)
        # The tools the attempt answers in place, refused from threads outside any trial while
        # it runs (`agents/recorder.py`): the claim ends with the attempt, so a later case that
        # mocks nothing runs them live.
        answered = (
            None if recorder.environment is None else claim_answered_tools(recorder.environment)
        )
        try:
            if self.capture is None:
                return await self._call(case, recorder), None
            # The agent's OpenTelemetry spans fill the recorder too; but a framework agent's run
            # objects are its whole record, which its spans (ADK's, say) would only repeat:
            # they go to a recorder of their own, and give the trial its trace ids alone.
            spans = TrialRecorder() if isinstance(self.invoke, FrameworkAgent) else recorder
            try:
                with self.capture(spans, case.id, index) as attempt:
                    returned = await self._call(case, recorder)
                    if self.remote_wait_s is None:  # no receiver: nothing comes later
                        return returned, None
                    # A service the agent called exports its spans after answering: wait.
                    settling = monotonic()
                    missing = await attempt.remote_spans()
                    tally.settled_s += monotonic() - settling
                    return returned, missing
            finally:
                recorder.trace_id, recorder.span_id = spans.trace_id, spans.span_id
        finally:
            stop_recording(token)
            if answered is not None:
                answered.release()

    async def _call(self, case: EvalCase, recorder: TrialRecorder) -> Trial:
        if self.timeout_s is None:
            return await call_agent(self.invoke, case, prepared=True)
        # Not `asyncio.timeout`: the deadline holds against an agent that blocks the event loop
        # or ignores its cancellation (see engine/deadline.py).
        deadline = Deadline(
            call_agent(self.invoke, case, prepared=True), self.timeout_s, grace_s(self.timeout_s)
        )
        if recorder.user_session is not None:  # the user's time is not the agent's
            recorder.user_session.clock_held = deadline.held
            recorder.user_session.reply_limit_s = self.timeout_s
        return await deadline

    async def run(self, case: EvalCase, index: int) -> Trial:
        """Run the agent on one case once (retrying infrastructure failures) and record it.

        Never raises for what the agent does: an exception (any `BaseException`, its own
        `CancelledError`, `KeyboardInterrupt` and `SystemExit` included), a timeout or an
        unreadable answer ends the trial with a `failure` naming its cause. Only the run being
        stopped propagates: a cancellation of this task by the run, or a real Ctrl-C. (An agent
        that cancels its own task ends with a `CancelledError` of its own, withdrawn from the
        task; one it survived, or left pending, is the worker's to withdraw.)
        """
        tally = _Tally()
        retry = self.retry
        earlier: SimulatedConversation | None = None  # the user's record of a retried attempt
        while True:
            tally.attempts += 1
            recorder = TrialRecorder()
            if wants_environment(case, self.environment):  # a few attribute reads otherwise
                recorder.environment = await ToolEnvironment.for_trial(
                    case, index, self.environment
                )
            if case.user_simulation is not None:
                recorder.user_session = self._user_session(case, index)
                recorder.user_session.spend_before(earlier)
            attempt_start = monotonic()
            try:
                returned, missing = await self._attempt(case, index, recorder, tally)
            except InvalidOutputError as exc:
                trial = _recorded(
                    recorder, Failure(cause=FailureCause.INVALID_OUTPUT, message=str(exc))
                )
            except BaseException as exc:  # whatever the agent raises is recorded
                why = interruption(exc)
                if why is Interruption.STOP:
                    raise
                # A failure a mock injected is the case's scenario: one the agent let out is its
                # own failure, never retried as infrastructure.
                # (The run's own time limit first: it stays a timeout, even when it ended an
                # injected delay.)
                own_limit = isinstance(exc, TrialTimeoutError)
                kind = _AGENT if not own_limit and _injected(exc) else classify(exc, self.declared)
                message = str(exc) or type(exc).__name__
                if why is Interruption.CANCELLED_ITSELF:
                    message = f"{_OWN_CANCELLATION}: {exc}" if str(exc) else _OWN_CANCELLATION
                failure = Failure(cause=kind.cause, message=message, error_type=type(exc).__name__)
                trial = _recorded(recorder, failure)
                if kind.retryable and tally.attempts <= retry.max_retries:
                    if recorder.user_session is not None:  # what it spent counts in the next
                        earlier = _settle_user(trial, recorder, recorder.user_session)
                    tally.close_attempt(attempt_start, recorder, trial)
                    tally.retry(kind.cause.value)
                    task = asyncio.current_task()
                    if task is not None and task.cancelling():  # one it left pending: not here
                        await settle_own_cancellations(task)
                    await asyncio.sleep(retry.wait_s(tally.attempts, exc))
                    continue
            else:
                trial = _merge(returned, recorder)
                if missing is not None and not returned.tool_calls:
                    trial.not_recorded.setdefault("tool_calls", missing)
                if trial.failure is None:
                    _assign(trial, {"failure": no_response_failure(trial)})
            if recorder.environment is not None:
                _settle_environment(trial, recorder.environment)
            if recorder.user_session is not None:
                trial.simulation = _settle_user(trial, recorder, recorder.user_session)
            if recorder.trace_id is not None and trial.trace_id is None:  # its OTel trace
                _assign(trial, {"trace_id": recorder.trace_id, "span_id": recorder.span_id})
            tally.close_attempt(attempt_start, recorder, trial)
            return tally.stamp(trial, case, index)

    def _user_session(self, case: EvalCase, index: int) -> UserSession:
        """The attempt's simulated user. A case no one can play (no script, and the run has no
        simulator) stops the run: the planner refuses such cases before it starts, so this
        is a stream of cases met one by one."""
        plan = self.users if self.users is not None else _SCRIPTS_ONLY
        assert case.user_simulation is not None
        try:
            user = plan.user_for(case.user_simulation)
        except ValueError as exc:
            raise ConfigError(str(exc), case=case.id, field="user_simulation") from None
        return UserSession(case, index, user)


_SCRIPTS_ONLY = UserPlan()


async def run_trial(
    agent: Agent,
    case: EvalCase,
    index: int,
    *,
    timeout_s: float | None,
    retry: RetryPolicy,
) -> Trial:
    """Run the agent on one case once (retrying infrastructure failures) and record it; see
    `TrialRunner.run`, which a run sets up once for all its trials."""
    return await TrialRunner.of(agent, timeout_s=timeout_s, retry=retry).run(case, index)


_OWN_CANCELLATION = (
    "the agent cancelled its own task (asyncio.current_task().cancel(), or a library it calls "
    "doing so), which ended it with a CancelledError; agenteval did not ask for it"
)


_AGENT = Classified(FailureCause.AGENT_ERROR, retryable=False)


def _injected(exc: BaseException) -> bool:
    """Whether `exc` is (or was raised from, as frameworks wrap a tool's error) a failure a
    tool mock injected, or is an exception group holding one (tools called in parallel in a
    `TaskGroup`): the group is then not all infrastructure, and the injected failure is the
    agent's to handle. At most `_INJECTED_LOOKS` exceptions are looked at."""
    pending: list[BaseException] = [exc]
    seen: set[int] = set()
    while pending and len(seen) < _INJECTED_LOOKS:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if is_injected(current):
            return True
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        following = current.__cause__ or current.__context__
        if following is not None:
            pending.append(following)
    return False


_INJECTED_LOOKS = 64


def _settle_environment(trial: Trial, environment: ToolEnvironment) -> None:
    """What the environment adds to the attempt's trial: the calls a mock or the replay
    answered marked so, the final state, and the harness's verdict on a call it refused
    (unmocked, a replay miss), which wins over whatever the agent made of the error."""
    if environment.answered:
        environment.mark_answered(trial.tool_calls)
    state = environment.final_state()
    if state is not None:
        trial.state = state
    if environment.violation is not None:
        trial.failure = environment.violation


def _settle_user(
    trial: Trial, recorder: TrialRecorder, session: UserSession
) -> SimulatedConversation:
    """The attempt's conversation with its simulated user, for `trial`; the time spent
    waiting for the user is left out of the agent's working latency."""
    recorder.add_wait(session.waited_s)
    return session.finish(trial)


def _recorded(recorder: TrialRecorder, failure: Failure) -> Trial:
    """A failed attempt's trial: whatever was recorded before it ended."""
    return Trial(
        tool_calls=list(recorder.tool_calls),
        model_calls=list(recorder.model_calls),
        node_visits=list(recorder.node_visits),
        failure=failure,
        not_recorded=recorder.gaps(),
        tool_specs=dict(recorder.tool_specs),
    )
