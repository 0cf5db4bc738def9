"""Recording what an agent does while a trial runs: tool calls, model calls and waits.

The recorder of the running trial lives in a context variable, so concurrent trials (tasks, and
the worker threads their sync code runs in) each record into their own trial and never mix.
Outside a trial, recording does nothing and tools behave as plain functions.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from agenteval.agents.environment import ToolEnvironment, UnmockedToolError
from agenteval.agents.users import UserSession
from agenteval.jsonsafe import safe_repr
from agenteval.trace import ModelCall, ToolCall, ToolSpec, Trial, Usage, utc_now

__all__ = [
    "AnsweredTools",
    "TrialRecorder",
    "claim_answered_tools",
    "current_recorder",
    "note_unrecorded_call",
    "record_model_call",
    "record_retry",
    "record_wait",
    "recording",
    "serve_trials",
    "start_recording",
    "stop_recording",
    "watch_unrecorded_calls",
]


@dataclass
class TrialRecorder:
    """Everything recorded during one attempt of one trial."""

    tool_calls: list[ToolCall] = field(default_factory=list)
    model_calls: list[ModelCall] = field(default_factory=list)
    node_visits: list[str] = field(default_factory=list)
    model_calls_from_spans: bool = False
    """Whether `model_calls` came from the attempt's spans (no `record_model_call`): an agent
    that also returns a `Trial` with model calls of its own recorded the same calls, and its
    list wins (`engine/trials.py` `_merge`), so no token counts twice."""
    waits_s: float = 0.0
    retries: dict[str, int] = field(default_factory=dict)
    not_recorded: dict[str, str] = field(default_factory=dict)
    """What the trial's spans say they leave unknown, by field, with why (`Trial.not_recorded`):
    the model asked for tools, and the instrumentation kept no content to say which."""
    tool_specs: dict[str, ToolSpec] = field(default_factory=dict)
    """The tools the spans say the model was offered, by name (`Trial.tool_specs`)."""
    trace_id: str | None = None
    """The attempt's OpenTelemetry trace (32 lowercase hex digits), set by live capture."""
    span_id: str | None = None
    """The trial's own span in it (16 lowercase hex digits), set by live capture."""
    environment: ToolEnvironment | None = None
    """The attempt's tool environment (state, mocks, replay: `agents/environment.py`); None
    when neither the case nor the run asks for one, until a tool asks for the state."""
    user_session: UserSession | None = None
    """The attempt's simulated user (`agents/users.py`); None when the case plays only its
    written turns."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _next_id: int = 0

    def start_tool_call(self, name: str, arguments: dict[str, Any]) -> ToolCall:
        """Open a tool call, in the order calls start, and return it to be completed."""
        with self._lock:
            self._next_id += 1
            call = ToolCall(
                name=name, arguments=arguments, id=f"call-{self._next_id}", started_at=utc_now()
            )
            self.tool_calls.append(call)
        return call

    def add_model_call(self, call: ModelCall) -> None:
        """Add a finished model call."""
        with self._lock:
            self.model_calls.append(call)

    def add_gap(self, kind: str, why: str) -> None:
        """Say the trial leaves `kind` unknown (`Trial.not_recorded`), with why; the first
        reason given stays."""
        with self._lock:
            self.not_recorded.setdefault(kind, why)

    def add_wait(self, seconds: float) -> None:
        """Count time the agent spent waiting (backoff, rate limit), to leave out of latency."""
        with self._lock:
            self.waits_s += max(0.0, seconds)

    def add_retry(self, reason: str) -> None:
        """Count one retry the agent made itself, by reason."""
        with self._lock:
            self.retries[reason] = self.retries.get(reason, 0) + 1

    def gaps(self, returned: Trial | None = None) -> dict[str, str]:
        """The `not_recorded` of the trial this recorder's attempt makes (`returned`, what the
        agent returned, if it returned one): the trial's own, the spans' word that the tool
        calls are unknown when neither the agent nor a `@tool` recorded any call, that
        their arguments or results are unknown when the calls came from the spans, and that
        the tokens of the spans' model calls are unknown (`usage`) when those are the trial's
        (the agent returned none of its own).

        The spans' word on the answer never applies here: what the agent returned is its answer,
        whatever the instrumentation kept of the model's text (an agent that returned nothing
        gave no answer)."""
        # The returned trial's own dict comes back as it is when the spans add nothing (the
        # engine then copies no trial: this runs once per attempt).
        gaps = returned.not_recorded if returned is not None else {}
        if not self.not_recorded:
            return gaps
        added: dict[str, str] = {}
        # The spans' model calls are the trial's unless the agent returned its own (which win:
        # `model_calls_from_spans`), so their tokens being unknown holds only then.
        usage = self.not_recorded.get("usage")
        spans_calls = returned is None or not returned.model_calls
        if usage is not None and "usage" not in gaps and spans_calls:
            added["usage"] = usage
        if returned is None or not returned.tool_calls:  # else the agent's own record wins
            added.update(
                (kind, why)
                for kind in ("tool_calls", "tool_arguments", "tool_results")
                if (why := self.not_recorded.get(kind)) is not None
                and kind not in gaps
                and not (kind == "tool_calls" and self.tool_calls)
            )
        return {**gaps, **added} if added else gaps


UNREPORTED_USAGE = (
    "some model calls' responses carried no token usage (a server or proxy that leaves it "
    "out), so what they cost is unknown, not zero"
)
"""Why a trial's tokens are unknown when `record_model_call` was told they were not reported."""

_current: ContextVar[TrialRecorder | None] = ContextVar("agenteval_recorder", default=None)


def current_recorder() -> TrialRecorder | None:
    """The recorder of the trial running in this context, if any."""
    return _current.get()


def start_recording(recorder: TrialRecorder) -> Token[TrialRecorder | None]:
    """Make `recorder` the current one until `stop_recording` with the token returned. (A
    token, not a context manager, for the engine's attempts: the generator-based `recording`
    cost each trial ~0.8 us more, ~1 % of bench W1's.)"""
    return _current.set(recorder)


def stop_recording(token: Token[TrialRecorder | None]) -> None:
    """Undo `start_recording`."""
    _current.reset(token)


@contextmanager
def recording(recorder: TrialRecorder) -> Iterator[TrialRecorder]:
    """Make `recorder` the current one for the code inside the block."""
    token = _current.set(recorder)
    try:
        yield recorder
    finally:
        _current.reset(token)


def record_model_call(
    model: str,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cached_tokens: int = 0,
    reasoning_tokens: int = 0,
    duration_s: float | None = None,
    provider: str | None = None,
    usage_recorded: bool = True,
) -> None:
    """Record one model call of the agent (its tokens are summed into the trial's usage).
    `usage_recorded=False`: the provider's response said nothing of the tokens (a proxy that
    strips `usage`), so what the call cost is unknown, never free (`ModelCall.usage_recorded`,
    and the trial's `not_recorded["usage"]`).

    Does nothing outside a trial. Never raises into the agent: a value of the wrong kind is
    recorded as best it can be (a count that is not a number as 0, a name as its text).
    """
    recorder = _current.get()
    if recorder is None:
        return
    duration = _seconds(duration_s)
    try:
        started = utc_now() - timedelta(seconds=duration) if duration is not None else None
    except OverflowError:
        started = None
    recorder.add_model_call(
        ModelCall(
            model=_name(model) or "unknown",
            provider=_name(provider),
            usage=Usage(
                input_tokens=_count(input_tokens),
                output_tokens=_count(output_tokens),
                cached_tokens=_count(cached_tokens),
                reasoning_tokens=_count(reasoning_tokens),
            ),
            started_at=started,
            duration_s=duration,
            usage_recorded=bool(usage_recorded),
        )
    )
    if not usage_recorded:
        recorder.add_gap("usage", UNREPORTED_USAGE)


def record_wait(seconds: float) -> None:
    """Record time the agent spent waiting (retry backoff, rate limiting).

    That time counts in the trial's total latency but not in its latency excluding waits.
    """
    recorder = _current.get()
    waited = _seconds(seconds)
    if recorder is not None and waited is not None:
        recorder.add_wait(waited)


def record_retry(reason: str) -> None:
    """Record a retry the agent made itself (`rate_limited`, `provider_error`, ...)."""
    recorder = _current.get()
    if recorder is not None:
        recorder.add_retry(_name(reason) or "unknown")


# What an agent passes to the functions above is recorded as best it can be: recording never
# raises into the agent, whatever it is given.


def _name(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return safe_repr(value)


def _count(value: object) -> int:
    try:
        count: int = int(value)  # type: ignore[call-overload]
    except Exception:
        return 0
    return max(count, 0)


def _seconds(value: object) -> float | None:
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except Exception:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


class _UnrecordedCalls:
    """Counts tool calls made outside any trial while a run is going, and refuses those of a
    tool a running trial answers in place.

    Those are calls from threads the agent started itself (`ThreadPoolExecutor.map`,
    `loop.run_in_executor`), which do not inherit the trial's context, so the calls cannot be
    told apart by trial. They are counted so the run can say so, instead of losing them quietly.
    And a tool a running trial mocks or replays (or every tool, for a `tool_mocks_only` case or
    a replay) must not run for real from there: its mock cannot answer it (which trial's would
    it be?), and running it would touch the live system the mock stands for and pass the trial
    on a scenario that never played (an injected failure that never came). So such a call
    raises into the agent instead (`UnmockedToolError`).

    A trial's claim lasts while its attempt runs, not the whole run: a case that mocks nothing
    runs the tool live from its threads, as it would in a run of its own, once no trial
    answering it is running (at `concurrency` 1, exactly the case's own mocks decide; beside
    a running trial that answers it, the call cannot be told apart, and is refused)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs = 0
        self.count = 0
        self._answered: dict[str, int] = {}
        """The tools running attempts answer in place, with how many attempts answer each."""
        self._every = 0
        """How many running attempts answer every tool in place."""
        self._generation = 0
        """Counts the times the claims were cleared (the last run ended): a claim made before
        is no longer counted, and its release takes nothing back."""

    def note(self, tool: str) -> bool:
        """Count one call of `tool` outside any trial; whether it is refused."""
        with self._lock:
            if not self._runs:
                return False
            self.count += 1
            return self._every > 0 or tool in self._answered

    def claim(self, tools: tuple[str, ...], every: bool) -> int | None:
        """A running attempt answers `tools` in place (`every`: all of them), until `release`
        with the same and the generation returned (None: no run goes, nothing was claimed)."""
        with self._lock:
            if not self._runs:
                return None
            for name in tools:
                self._answered[name] = self._answered.get(name, 0) + 1
            self._every += every
            return self._generation

    def release(self, tools: tuple[str, ...], every: bool, generation: int) -> None:
        """The attempt that claimed `tools` in `generation` ended (a claim the run's end
        cleared since is no longer counted: its release takes nothing back)."""
        with self._lock:
            if generation != self._generation:
                return
            for name in tools:
                left = self._answered.get(name, 0) - 1
                if left > 0:
                    self._answered[name] = left
                else:
                    self._answered.pop(name, None)
            if every and self._every:
                self._every -= 1

    @contextmanager
    def watching(self) -> Iterator[Callable[[], int]]:
        with self._lock:
            self._runs += 1
            start = self.count
        try:
            yield lambda: self.count - start
        finally:
            with self._lock:
                self._runs -= 1
                if not self._runs:  # outside any run, a tool runs as the plain function
                    self._answered.clear()
                    self._every = 0
                    self._generation += 1

    def serve(self) -> None:
        """This process runs trials for a run until it ends (a worker of the `process` or
        `ray` executor): a run is going for as long as it lives."""
        with self._lock:
            self._runs += 1


_unrecorded = _UnrecordedCalls()


def note_unrecorded_call(tool: str) -> None:
    """Count a call of `tool` made outside any trial (see `watch_unrecorded_calls`); raise
    `UnmockedToolError` when a running trial answers that tool in place."""
    if _unrecorded.note(tool):
        raise UnmockedToolError(
            f"{tool} was called outside any trial, from a thread the agent started itself "
            "(which does not carry the trial's context), so the trial's mock or replay cannot "
            "answer it, and agenteval does not run it for real while a running trial answers "
            "it in place; run it with asyncio.to_thread, or submit "
            "contextvars.copy_context().run to the executor"
        )


@dataclass(frozen=True)
class AnsweredTools:
    """What one attempt's environment answers in place, claimed while the attempt runs so a
    call of one of those tools from a thread outside any trial is refused rather than run
    for real (`_UnrecordedCalls`); `release` when the attempt ends."""

    tools: tuple[str, ...]
    every: bool
    generation: int

    def release(self) -> None:
        """The attempt ended: its tools run live again from threads outside any trial (unless
        another running attempt answers them)."""
        _unrecorded.release(self.tools, self.every, self.generation)


def claim_answered_tools(environment: ToolEnvironment) -> AnsweredTools | None:
    """Claim the tools `environment` (an attempt's) answers in place until the claim returned
    is released (None: it answers none, or no run goes)."""
    every = environment.mocks_only or environment.replay is not None
    if not (every or environment.mocks):
        return None
    tools = tuple(environment.mocks)
    generation = _unrecorded.claim(tools, every)
    return None if generation is None else AnsweredTools(tools, every, generation)


def watch_unrecorded_calls() -> AbstractContextManager[Callable[[], int]]:
    """While a run goes: yields a function telling how many tool calls ran outside any trial."""
    return _unrecorded.watching()


def serve_trials() -> None:
    """Mark this process as a run's worker for the rest of its life (`_UnrecordedCalls.serve`)."""
    _unrecorded.serve()


def monotonic() -> float:
    """The clock every duration is measured with."""
    return time.perf_counter()
