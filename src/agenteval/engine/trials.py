"""Running one (case, trial) job: attempts under a time limit, retries by reason, the record."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from agenteval.agents.calling import (
    Agent,
    InvalidOutputError,
    call_agent,
    no_response_failure,
)
from agenteval.agents.recorder import TrialRecorder, monotonic, recording
from agenteval.case import EvalCase
from agenteval.engine.failures import classify, retry_after_s
from agenteval.otel.live import capture_spans
from agenteval.trace import Failure, FailureCause, Trial, Usage, utc_now

__all__ = ["RetryPolicy", "run_trial", "trace_trial"]


@dataclass(frozen=True)
class RetryPolicy:
    """How a trial that failed for infrastructure reasons is retried.

    Waits grow exponentially from `initial_wait_s` up to `max_wait_s`, with full jitter; a
    provider's `Retry-After` is honoured (up to `max_wait_s`).
    """

    max_retries: int = 2
    initial_wait_s: float = 1.0
    max_wait_s: float = 30.0

    def wait_s(self, retry_number: int, exc: BaseException) -> float:
        """How long to wait before retry number `retry_number` (1-based)."""
        asked = retry_after_s(exc)
        if asked is not None:
            return min(asked, self.max_wait_s)
        ceiling = min(self.max_wait_s, self.initial_wait_s * 2 ** (retry_number - 1))
        return random.uniform(ceiling / 2, ceiling)


def trace_trial(case: EvalCase, index: int) -> Trial:
    """The trial a case's recorded `agent_trace` describes (scoring with no agent)."""
    trial = Trial(case_id=case.id, trial=index, steps=case.agent_trace or [], started_at=utc_now())
    trial.failure = no_response_failure(trial) if not trial.tool_calls else None
    return trial


async def _attempt(
    agent: Agent, case: EvalCase, index: int, recorder: TrialRecorder, timeout_s: float | None
) -> Trial:
    # The agent's OpenTelemetry spans, when the SDK is installed, fill the recorder too.
    with recording(recorder), capture_spans(recorder, case.id, index):
        if timeout_s is None:
            return await call_agent(agent, case)
        async with asyncio.timeout(timeout_s):
            return await call_agent(agent, case)


def _merge(returned: Trial, recorder: TrialRecorder) -> Trial:
    """The agent's own record where it gave one, else what the recorder saw."""
    updates: dict[str, object] = {}
    if not returned.tool_calls and recorder.tool_calls:
        updates["tool_calls"] = list(recorder.tool_calls)
    if recorder.model_calls:
        updates["model_calls"] = [*returned.model_calls, *recorder.model_calls]
    if not returned.node_visits and recorder.node_visits:
        updates["node_visits"] = list(recorder.node_visits)
    return returned.model_copy(update=updates) if updates else returned


def _usage_of(trial: Trial) -> Usage:
    total = Usage()
    for call in trial.model_calls:
        total = total + call.usage
    return total


@dataclass
class _Tally:
    """What adds up over the attempts of one trial."""

    started_at: datetime = field(default_factory=utc_now)
    start: float = field(default_factory=monotonic)
    working_s: float = 0.0
    attempts: int = 0
    retries: Counter[str] = field(default_factory=Counter)
    spent: Usage = field(default_factory=Usage)

    def close_attempt(self, attempt_start: float, recorder: TrialRecorder, trial: Trial) -> None:
        self.working_s += monotonic() - attempt_start - recorder.waits_s
        self.retries.update(recorder.retries)
        self.spent = self.spent + _usage_of(trial)

    def stamp(self, trial: Trial, case: EvalCase, index: int) -> Trial:
        trial.case_id = case.id
        trial.trial = index
        trial.started_at = self.started_at
        trial.latency_s = monotonic() - self.start
        trial.working_latency_s = max(0.0, self.working_s)
        trial.attempts = self.attempts
        trial.retries = dict(self.retries)
        trial.usage = self.spent
        return trial


async def run_trial(
    agent: Agent,
    case: EvalCase,
    index: int,
    *,
    timeout_s: float | None,
    retry: RetryPolicy,
) -> Trial:
    """Run the agent on one case once (retrying infrastructure failures) and record it.

    Never raises for what the agent does: an exception, a timeout or an unreadable answer ends
    the trial with a `failure` naming its cause.
    """
    tally = _Tally()
    while True:
        tally.attempts += 1
        recorder = TrialRecorder()
        attempt_start = monotonic()
        try:
            returned = await _attempt(agent, case, index, recorder, timeout_s)
        except InvalidOutputError as exc:
            trial = _recorded(
                recorder, Failure(cause=FailureCause.INVALID_OUTPUT, message=str(exc))
            )
        except (Exception, SystemExit) as exc:  # whatever the agent raises is recorded
            kind = classify(exc)
            if kind.cause is FailureCause.TIMEOUT and timeout_s is not None:
                message = f"no answer within {timeout_s:g} s"
            else:
                message = str(exc) or type(exc).__name__
            failure = Failure(cause=kind.cause, message=message, error_type=type(exc).__name__)
            trial = _recorded(recorder, failure)
            if kind.retryable and tally.attempts <= retry.max_retries:
                tally.close_attempt(attempt_start, recorder, trial)
                tally.retries[kind.cause.value] += 1
                await asyncio.sleep(retry.wait_s(tally.attempts, exc))
                continue
        else:
            trial = _merge(returned, recorder)
            if trial.failure is None:
                trial.failure = no_response_failure(trial)
        tally.close_attempt(attempt_start, recorder, trial)
        return tally.stamp(trial, case, index)


def _recorded(recorder: TrialRecorder, failure: Failure) -> Trial:
    """A failed attempt's trial: whatever was recorded before it ended."""
    return Trial(
        tool_calls=list(recorder.tool_calls),
        model_calls=list(recorder.model_calls),
        node_visits=list(recorder.node_visits),
        failure=failure,
    )
