"""A trial's tool environment: the state its tools read and change, the mocks that answer in
place of the tools, and the replay of a stored run's tool results.

One `ToolEnvironment` per attempt of a trial, held by the attempt's `TrialRecorder`, so
concurrent trials (and the threads their sync tools run in) never see each other's state or
where each other's mock sequences stand, and a retried attempt starts again from the case's
`initial_state`. Every place agenteval sees a tool called asks it first (`answer`; the running
trial's is `agents/trial_state.current_environment()`): `@tool`
(and so the built-in agent), and the four framework adapters. An answer of None means "run the
tool for real".

What the harness sees is the verdict, whatever the agent makes of it: a call no mock answers in
a `tool_mocks_only` case, or a call a replayed run never made, raises into the agent *and* is
noted (`violation`), so the engine fails the trial even when the agent caught the error.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agenteval.agents.injected import InjectedError, injected_error, mark_injected, named_error
from agenteval.case import state_numbers
from agenteval.jsonsafe import plain_copy
from agenteval.tool_mocks import CALLABLE_KEY, MockAnswer, ToolMock
from agenteval.trace import Failure, FailureCause, ToolCall, ToolSpec

__all__ = [
    "Answer",
    "EnvironmentPlan",
    "InjectedError",
    "ReplayBook",
    "ReplayMissError",
    "ToolArgumentsError",
    "ToolEnvironment",
    "UnmockedToolError",
    "replayed_error",
    "wants_environment",
]

AnswerKind = Literal["mock", "replay"]


class UnmockedToolError(RuntimeError):
    """A `tool_mocks_only` case called a tool that no mock answers."""


class ReplayMissError(RuntimeError):
    """Replaying a stored run, the agent made a call that run never made."""


class ToolArgumentsError(ValueError):
    """A mocked call's arguments do not fit the tool's schema (as a real call's would not)."""


@dataclass(frozen=True)
class Answer:
    """What a mocked or replayed call gives the agent, after `latency_s`: `result`, or `error`
    raised."""

    kind: AnswerKind
    result: Any = None
    error: BaseException | None = None
    latency_s: float = 0.0

    def value(self) -> Any:
        """The result, or the error raised."""
        if self.error is not None:
            raise self.error
        return self.result

    async def settle(self) -> Any:
        """The answer for an async caller: waits `latency_s` in the event loop."""
        if self.latency_s:
            try:
                await asyncio.sleep(self.latency_s)
            except asyncio.CancelledError as exc:
                # The delay is the case's scenario (a slow tool): a time limit of the agent's
                # own that ends it raises its TimeoutError from this cancellation, which marks
                # it the agent's to handle, never infrastructure (the run's own limit is told
                # apart by the engine).
                mark_injected(exc)
                raise
        result = self.value()
        return await result if inspect.isawaitable(result) else result

    def settle_sync(self) -> Any:
        """The answer for a sync caller (a tool in its thread): waits `latency_s` there."""
        if self.latency_s:
            time.sleep(self.latency_s)
        return self.value()


class ReplayBook:
    """The tool calls one stored trial made, handed out as the agent makes the same calls (the
    same tool name, equal arguments), each at most once.

    In order (the default) the agent must make them in the order the stored trial did; calls
    the stored trial made at once (their recorded times overlap: parallel calls, which may
    start in either order) form one round, taken in any order within it, and the next round
    opens once the round before is used up. A call the stored trial never made, made again
    more often than it was, or made out of turn, is a miss. In any order (`any_order`), a call
    takes the first unused recorded call equal to it, wherever it stands. Either way identical
    calls get the recorded answers of that call in their order: the first use the first
    answer, the second the second, so a tool polled until it changes replays the change.

    `stored_form` gives a live call's arguments as the store would have written them (lists
    for tuples, secrets redacted, deep data cut), so equal means equal as stored. `absent`
    says why a book is empty: the replayed run has no such case (every call misses). Calls the
    harness refused in the stored run (its own replay misses, unmocked calls) are left out: no
    tool answered them."""

    def __init__(
        self,
        calls: Sequence[ToolCall],
        *,
        run_id: str,
        any_order: bool = False,
        trial: int | None = None,
        stored_form: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
        absent: str | None = None,
    ) -> None:
        self.run_id = run_id
        self.any_order = any_order
        self.trial = trial
        """The replayed trial's index (in its case), for the miss message."""
        self.absent = absent
        # A call the harness refused in the stored run (a miss of its own replay, an unmocked
        # call) got no answer from any tool: there is nothing to replay.
        self._calls = [c for c in calls if not (c.error or "").startswith(_REFUSED)]
        self._used = [False] * len(self._calls)
        self._rounds = _rounds(self._calls)
        self._stored_form = stored_form
        self._lock = threading.Lock()

    def take(self, name: str, arguments: Mapping[str, Any]) -> ToolCall | None:
        """The recorded call that answers this one, or None (a miss)."""
        args = dict(arguments)
        stored: dict[str, Any] | None = None
        with self._lock:
            for index in self._candidates():
                call = self._calls[index]
                if call.name != name:
                    continue
                if call.arguments != args:
                    if stored is None:
                        stored = self._stored(name, args)
                    if call.arguments != stored:
                        continue
                self._used[index] = True
                return call
            return None

    def _candidates(self) -> list[int]:
        unused = [i for i, used in enumerate(self._used) if not used]
        if self.any_order or not unused:
            return unused
        current = self._rounds[unused[0]]
        return [i for i in unused if self._rounds[i] == current]

    def _stored(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if self._stored_form is None:
            return args
        try:
            return self._stored_form(name, args)
        except Exception:  # arguments that cannot even be encoded match nothing stored
            return args

    def miss(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Why this call is a miss, naming it: never called in the stored trial, called there
        fewer times, or (in order) not the next call, naming the one the stored trial made."""
        args = dict(arguments)
        shown = f"{name}({_shown(args)})"
        if self.absent is not None:
            return f"{shown} is not replayed: {self.absent}"
        of = f"the replayed run {self.run_id}"
        if self.trial is not None:
            of += f" (its trial {self.trial} of this case)"
        stored = self._stored(name, args)
        with self._lock:
            equal = [
                i
                for i, call in enumerate(self._calls)
                if call.name == name and call.arguments in (args, stored)
            ]
            candidates = self._candidates()
        if not equal:
            return f"{shown} was never called in {of}"
        if all(self._used[i] for i in equal):
            times = len(equal)
            return (
                f"{shown} was never called a {_ordinal(times + 1)} time in {of}: it was "
                f"called {times} time{'s' if times > 1 else ''}"
            )
        expected = self._calls[candidates[0]]
        also = f" (or {len(candidates) - 1} more made at once)" if len(candidates) > 1 else ""
        return (
            f"{shown} is not the next call in {of}: it made "
            f"{expected.name}({_shown(expected.arguments)}){also} at this point"
        )


def replayed_error(text: str, tool: str) -> BaseException:
    """A recorded call's error (`TypeName: message`, or a bare `TypeName`, as `@tool` and the
    adapters record it) raised again, of a class named `TypeName` with the message
    (`named_error`); one of Python's own (`ValueError`, `KeyError`, `TimeoutError`) is also
    that class, so the agent's `except ValueError:` catches it as it caught the real one; a
    recorded injected timeout or rate limit is injected again. Always an `InjectedError`: one
    that escapes the agent is its own failure, never retried."""
    if text.isidentifier():  # an error with no message is recorded as its type alone
        text = f"{text}: "
    head = text.partition(": ")[0]
    if head in ("InjectedTimeout", "InjectedRateLimit"):
        return injected_error("timeout" if head == "InjectedTimeout" else "rate_limited", tool)
    return named_error(text)


_REFUSED = (f"{ReplayMissError.__name__}: ", f"{UnmockedToolError.__name__}: ")


def _rounds(calls: Sequence[ToolCall]) -> list[int]:
    """Each recorded call's round: consecutive calls whose recorded times overlap (one started
    before another ended) were made at once and share one. A call with no recorded time (a
    framework agent's) is a round of its own."""
    rounds: list[int] = []
    current, ends = -1, None  # the round's latest recorded end, in seconds since the epoch
    for call in calls:
        start = call.started_at
        if start is None or ends is None or not start.timestamp() < ends:
            current, ends = current + 1, None
        rounds.append(current)
        if start is not None and call.duration_s is not None:
            end = start.timestamp() + call.duration_s
            ends = end if ends is None else max(ends, end)
    return rounds


@dataclass(frozen=True)
class EnvironmentPlan:
    """What a run adds to every case's environment: its own `tool_mocks` (a case's mock of the
    same tool wins), and the replay of a stored run (`replay(case_id, trial)` gives that
    trial's `ReplayBook`, an empty one naming why when the stored run has no such case)."""

    tool_mocks: Mapping[str, ToolMock] = field(default_factory=dict)
    replay: Callable[[str, int], Awaitable[ReplayBook | None]] | None = None
    replay_fallthrough: bool = False
    """A call the replayed run never made runs for real instead of failing the trial."""

    @property
    def empty(self) -> bool:
        """Whether the plan adds nothing (then cases without mocks or state get no
        environment: nothing on the hot path)."""
        return not self.tool_mocks and self.replay is None


_NO_PLAN = EnvironmentPlan()


def wants_environment(case: Any, plan: EnvironmentPlan | None) -> bool:
    """Whether an attempt of `case` (an `EvalCase`) gets an environment: the case or the run
    asks for one. Checked per trial, so it stays a few attribute reads."""
    return bool(
        case.tool_mocks
        or case.tool_mocks_only
        or case.initial_state is not None
        or case.expected_state is not None
        or (plan is not None and not plan.empty)
    )


class ToolEnvironment:
    """One attempt's environment (see the module)."""

    def __init__(
        self,
        *,
        tool_mocks: Mapping[str, ToolMock] | None = None,
        mocks_only: bool = False,
        initial_state: Mapping[str, Any] | None = None,
        replay: ReplayBook | None = None,
        replay_fallthrough: bool = False,
        stateful: bool = False,
    ) -> None:
        self.mocks: Mapping[str, ToolMock] = tool_mocks or {}
        self.mocks_only = mocks_only
        self.replay = replay
        self.replay_fallthrough = replay_fallthrough
        # No copy to make without an initial state (W1-mocks: the common case costs nothing).
        self.state: dict[str, Any] = copy.deepcopy(dict(initial_state)) if initial_state else {}
        self.stateful = stateful or initial_state is not None
        """Whether the trial's final state is stored (it has a state to speak of)."""
        self.violation: Failure | None = None
        """The first call the harness refuses (unmocked, replay miss): it fails the trial."""
        self.answered: list[tuple[str, dict[str, Any], AnswerKind]] = []
        """Each call answered in place of the tool, in order: the engine marks the trial's
        recorded calls with it (`mark_answered`)."""
        self._positions: dict[str, int] = {}
        self._lock = threading.Lock()

    @classmethod
    async def for_trial(
        cls, case: Any, index: int, plan: EnvironmentPlan | None
    ) -> ToolEnvironment | None:
        """The environment of one attempt of `case` (an `EvalCase`), or None when neither the
        case nor the run asks for one."""
        if not wants_environment(case, plan):
            return None
        plan = plan or _NO_PLAN
        mocks = {**plan.tool_mocks, **(case.tool_mocks or {})}
        replay = await plan.replay(case.id, index) if plan.replay is not None else None
        return cls(
            tool_mocks=mocks,
            mocks_only=case.tool_mocks_only,
            initial_state=case.initial_state,
            replay=replay,
            replay_fallthrough=plan.replay_fallthrough,
            stateful=case.expected_state is not None,
        )

    def answer(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        spec: ToolSpec | None = None,
        *,
        defaults: Mapping[str, Any] | None = None,
    ) -> Answer | None:
        """How a call of `tool` is answered: a mock's answer, a replayed one, or None to run
        the tool. Raises (into the agent, where the tool would have raised) for arguments that
        do not fit `spec`, an unmocked call of a `tool_mocks_only` case, and a replay miss.

        The arguments are matched, checked and logged in their JSON form, as the trace records
        them (a tuple is a list, an object its fields); a `when` also sees the tool's
        `defaults` for the arguments the call left out. A mock's function result gets them as
        given."""
        given = dict(arguments)
        args = _plain(given)
        mock = self.mocks.get(tool)
        matching = {**_plain(dict(defaults)), **args} if defaults else args
        if mock is not None and spec is not None and mock.answers(matching):
            # Refused before the mock answers: a refused call takes no answer of a sequence
            # and applies no `set_state`, as a real tool would not have run.
            self._check(tool, args, spec)
        answer = self._mocked(tool, matching, mock, given) if mock is not None else None
        if answer is not None and self.replay is not None:
            # The mock wins, and uses up the equal recorded call: the replay stays in step.
            self.replay.take(tool, args)
        elif answer is None and self.replay is not None:
            answer = self._replayed(tool, args)
            if answer is None and not self.replay_fallthrough:
                raise self._refuse(
                    FailureCause.REPLAY_MISS, ReplayMissError(self.replay.miss(tool, args))
                )
        if answer is None:
            if self.mocks_only:
                raise self._refuse(
                    FailureCause.UNMOCKED_TOOL,
                    UnmockedToolError(
                        f"{tool}({_shown(args)}) has no mock, and the case allows mocked "
                        "calls only (tool_mocks_only)"
                    ),
                )
            return None
        # A replayed answer is the recorded run's outcome for these very arguments: not checked
        # again (the real tool took them then).
        with self._lock:
            self.answered.append((tool, args, answer.kind))
        return answer

    @staticmethod
    def _check(tool: str, args: dict[str, Any], spec: ToolSpec) -> None:
        problem = _argument_problem(tool, args, spec)
        if problem is not None:
            raise ToolArgumentsError(f"{tool}: the arguments do not fit its schema: {problem}")

    def _mocked(
        self, tool: str, args: dict[str, Any], mock: ToolMock, given: dict[str, Any]
    ) -> Answer | None:
        if mock.sequence is not None:
            with self._lock:
                position = self._positions.get(tool, 0)
                self._positions[tool] = position + 1
            chosen: MockAnswer = mock.sequence[min(position, len(mock.sequence) - 1)]
        else:
            rule = next((r for r in mock.rules or () if r.applies(args)), None)
            if rule is None:
                return None
            chosen = rule
        if chosen.set_state:
            with self._lock:
                self.stateful = True
                self.state.update(copy.deepcopy(chosen.set_state))
        latency = chosen.latency_s or 0.0
        if chosen.raises:
            return Answer("mock", error=injected_error(chosen.error or "", tool), latency_s=latency)
        try:
            result = _result(chosen, given)
        except Exception as exc:  # the case's function answers with its error: injected too
            return Answer("mock", error=mark_injected(exc), latency_s=latency)
        return Answer("mock", result=result, latency_s=latency)

    def _replayed(self, tool: str, args: dict[str, Any]) -> Answer | None:
        assert self.replay is not None
        call = self.replay.take(tool, args)
        if call is None:
            return None
        if call.error is not None:  # raised again, of the same type name
            return Answer("replay", error=replayed_error(call.error, tool))
        return Answer("replay", result=copy.deepcopy(call.result))

    def refuse(self, cause: FailureCause, error: Exception) -> Exception:
        """Note `error` as the call the harness refuses (the first one fails the trial, even
        if the agent catches it), and return it to raise: for an adapter that cannot answer a
        mocked call where the framework made it."""
        return self._refuse(cause, error)

    def _refuse(self, cause: FailureCause, error: Exception) -> Exception:
        with self._lock:
            if self.violation is None:
                self.violation = Failure(
                    cause=cause, message=str(error), error_type=type(error).__name__
                )
        return error

    def mark_answered(self, calls: Sequence[ToolCall]) -> None:
        """Mark the calls a mock or the replay answered (`ToolCall.mocked`), matching the
        answers to the calls in order by tool name and arguments: every argument the answered
        call gave, with an equal value (a call an agent reports itself may also list the
        defaults it left out)."""
        pending = list(self.answered)
        for call in calls:
            given = _plain(call.arguments)
            for position, (tool, args, kind) in enumerate(pending):
                if tool == call.name and all(
                    key in given and given[key] == value for key, value in args.items()
                ):
                    if call.mocked is None:
                        call.mocked = kind
                    del pending[position]
                    break

    def final_state(self) -> dict[str, Any] | None:
        """The state to store with the trial, or None when it had none: its JSON copy (a
        `Decimal` as the number it stands for, `state_numbers`; a value that is not JSON, a
        lock or a connection, as its text; never raising), taken under the lock, again if a
        tool thread still running changed it meanwhile."""
        if not self.stateful:
            return None
        for _ in range(3):
            try:
                with self._lock:
                    copied = _plain(state_numbers(dict(self.state)))
            except RuntimeError:  # changed while copied (a thread left running after a timeout)
                continue
            return copied
        return {"agenteval.state": "<not recorded: the state kept changing while it was copied>"}


def _result(answer: MockAnswer, args: dict[str, Any]) -> Any:
    function, result = answer.function, answer.result
    if function is None and isinstance(result, dict) and set(result) == {CALLABLE_KEY}:
        # A stored case's function (a resumed run, a streamed case), loaded by its reference.
        from agenteval.loading import load_object

        function = load_object(result[CALLABLE_KEY])
    if function is not None:
        return function(**args)
    return copy.deepcopy(result)


def _plain(value: dict[str, Any]) -> dict[str, Any]:
    """A mapping's JSON form, as the trace records it (never raises: `jsonsafe`)."""
    copied = plain_copy(value)[0]
    return copied if isinstance(copied, dict) else {}


_VALIDATORS: dict[str, tuple[ToolSpec, Any]] = {}


def _argument_problem(tool: str, args: dict[str, Any], spec: ToolSpec) -> str | None:
    """What is wrong with a mocked call's arguments for its tool's schema, as a framework
    would refuse the real call (JSON Schema, Draft 2020-12; the agents sit below the scorers'
    own check, `scorers/tools/schemas.py`)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    cached = _VALIDATORS.get(tool)
    if cached is not None and cached[0] == spec:
        validator = cached[1]
    else:
        validator = Draft202012Validator(spec.parameters)
        _VALIDATORS[tool] = (spec, validator)
    error = best_match(validator.iter_errors(args))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def _ordinal(number: int) -> str:
    if 11 <= number % 100 <= 13:
        return f"{number}th"
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th') }"


def _shown(args: Mapping[str, Any]) -> str:
    text = ", ".join(f"{key}={value!r}" for key, value in args.items())
    return text if len(text) <= 200 else text[:197] + "..."
