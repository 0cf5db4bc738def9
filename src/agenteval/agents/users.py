"""The user side of a conversation the agent does not know in advance (issue 18).

A case with a `user_simulation` gets one `UserSession` per attempt, held by the attempt's
`TrialRecorder.user_session` (so a case without one costs nothing). Every place that plays a
case's turns (`agents/calling.py` for callables, `frameworks/base.Conversation.play` for the
framework adapters) iterates the session: it yields the case's written turns first, as written,
then asks its `User` for each next message, given the conversation so far, until the user stops
or the conversation holds `max_turns` user messages. What it records becomes `Trial.simulation`
(`finish`, called by the engine).

A `User` is anything with a `label` and an async `reply(request) -> UserReply | None`: a
`ScriptedUser` (a Python function, here), or the run's simulator model (`simulation/`, a layer
below that knows nothing of agents). A user that cannot answer raises `UserSimulatorError`, an
infrastructure failure of the trial (retried, then left out of scoring), never the agent's.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

from agenteval.errors import InfrastructureError, UserSimulatorError
from agenteval.loading import load_object
from agenteval.trace import EndReason, ModelCall, SimulatedConversation, Trial, UserTurn
from agenteval.user_simulation import UserReply, UserRequest, UserSimulation

__all__ = [
    "ScriptedUser",
    "User",
    "UserPlan",
    "UserSession",
    "UserSimulatorError",
    "WrittenTurns",
]


class User(Protocol):
    """Who plays the user: gives the next message of a conversation, or a stop."""

    @property
    def label(self) -> str:
        """How the trial names the user (`openai:gpt-4o-mini`, `script:my_users:refund`)."""
        ...

    async def reply(self, request: UserRequest) -> UserReply | None:
        """The next message or a stop (None: the user has nothing more to say); raises
        `UserSimulatorError` when it cannot say."""
        ...


class ScriptedUser:
    """A user played by a Python function of the conversation so far (a list of
    `{"role", "content"}` dicts, oldest first) returning the next message (text), a
    `UserReply`, or None to stop. Sync or async. A function taking a second argument also gets
    the `UserRequest` (the case id, the trial index, the simulation's goal and persona): a
    script whose messages depend on the case or the trial, as a simulator's do."""

    def __init__(self, function: Callable[..., Any], reference: str) -> None:
        self.function = function
        self.reference = reference
        self._with_request = _takes_two(function)
        self._is_async = _is_async(function)

    @property
    def label(self) -> str:
        """`script:` and the function's reference."""
        return f"script:{self.reference}"

    async def reply(self, request: UserRequest) -> UserReply | None:
        """Call the function on a copy of the conversation (it may keep or change its list)."""
        messages = [dict(message) for message in request.messages]
        arguments = (messages, request) if self._with_request else (messages,)
        try:
            if self._is_async:
                value = self.function(*arguments)
            else:
                # A sync script may block (a model, a file, a service): in a thread, so the
                # trials running meanwhile keep the event loop, and their agents' time.
                value = await asyncio.to_thread(self.function, *arguments)
            if inspect.isawaitable(value):
                value = await value
        except _PASSED_ON:
            raise
        except BaseException as exc:  # `sys.exit()` in a script too: the user's, never the agent's
            raise UserSimulatorError(
                f"the scripted user {self.reference} raised {type(exc).__name__}: {exc}"
            ) from exc
        if value is None or isinstance(value, UserReply):
            return value
        if isinstance(value, str):
            return UserReply(message=value)
        raise UserSimulatorError(
            f"the scripted user {self.reference} returned {type(value).__name__}: return the "
            "next message as a str, a UserReply, or None to stop"
        )


_PASSED_ON = (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit)
"""What a user's reply lets through as it is: the time limit's or the run's cancellation, a
Ctrl-C, a coroutine being closed. Anything else it raises (an `Exception`, `SystemExit`, a test
framework's outcome) is the user's failure."""


def _is_async(function: Callable[..., Any]) -> bool:
    """Whether `function` is an async function (or an object whose `__call__` is one)."""
    call = type(function).__call__ if not inspect.isroutine(function) else None
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(call)


def _takes_two(function: Callable[..., Any]) -> bool:
    """Whether `function` can be called with two positional arguments (a signature that
    cannot be read is taken to take one: the documented form)."""
    try:
        inspect.signature(function).bind(None, None)
    except (TypeError, ValueError):
        return False
    return True


@dataclass
class UserPlan:
    """What a run gives its simulated users: the simulator model (None: the run has none, so
    only scripted users can play) and where scripts are loaded from. Made once per run."""

    simulator: User | None = None
    base_dir: Any = None
    """The folder a script's `path/to/file.py:function` is relative to (None: the current
    directory)."""
    owned: bool = False
    """Whether the run opened the simulator (from a setting naming its model), so closes it."""
    _scripts: dict[str, ScriptedUser] = field(default_factory=dict, repr=False)

    def user_for(self, simulation: UserSimulation) -> User:
        """The user who plays `simulation`: its script, else the run's simulator. Raises
        `ValueError` when neither (the engine checks every case before the run starts)."""
        if simulation.script is not None:
            return self.script(simulation.script)
        if self.simulator is None:
            raise ValueError(
                "a case simulates its user and the run has no user simulator: give one "
                "(`user_simulator: openai:gpt-4o-mini` in agenteval.yaml, --user-simulator, "
                "evaluate(user_simulator=...)) or a scripted user (`script: module:function`)"
            )
        return self.simulator

    async def aclose(self) -> None:
        """Close the simulator when the run opened it (a user object given is the giver's)."""
        close = getattr(self.simulator, "aclose", None)
        if self.owned and close is not None:
            self.owned = False
            await close()

    def script(self, reference: str) -> ScriptedUser:
        """The scripted user `reference` names, loaded once per run (an `AgentLoadError`
        naming the reference when it does not load)."""
        user = self._scripts.get(reference)
        if user is None:
            function = load_object(reference, base_dir=self.base_dir)
            if not callable(function):
                raise ValueError(f"{reference} is not a function")
            user = self._scripts[reference] = ScriptedUser(function, reference)
        return user


class UserSession:
    """One attempt's conversation with its user: an async iterator of the user's messages.

    `async for message in session.play(answer)`: `answer()` is called after each message has
    been played, for the agent's answer to it (None: no answer). The iteration ends when the
    user stops or the conversation holds `max_turns` user messages.
    """

    def __init__(self, case: Any, trial: int, user: User) -> None:
        simulation: UserSimulation = case.user_simulation
        self.simulation = simulation
        self.case_id: str = case.id
        self.trial = trial
        self.user = user
        before, written = case.written_opening()
        self.history = [{"role": m.role, "content": m.content} for m in before]
        if simulation.starting_prompt is not None:
            written.append(simulation.starting_prompt)
        self._written = written
        self.record = SimulatedConversation(user=user.label)
        self.waited_s = 0.0
        """Time spent waiting for the user (left out of the trial's working latency)."""
        self.clock_held: Callable[[], AbstractContextManager[None]] = nullcontext
        """Stops the attempt's time limit while the user writes (the engine sets it to its
        deadline's `held`): the limit is the agent's, the user's time is not."""
        self.reply_limit_s: float | None = None
        """How long the user may take for one message (the engine sets it to the trial's time
        limit): the clock is held for the user, so a user who never answers would hold the
        trial forever. None: no limit; a user that limits itself (`limits_itself`, the
        simulator's model, whose every call has its timeout and retries) has none."""

    @property
    def messages(self) -> list[dict[str, str]]:
        """The conversation so far, as the user sees it (history, then each turn)."""
        messages = list(self.history)
        for turn in self.record.turns:
            messages.append({"role": "user", "content": turn.user})
            if turn.agent is not None:
                messages.append({"role": "assistant", "content": turn.agent})
        return messages

    def play(self, answer: Callable[[], str | None]) -> _Turns:
        """The user's messages, each given once the agent answered the one before."""
        return _Turns(self, answer)

    async def next_message(self) -> str | None:
        """The next user message: a written one, else the user's; None when the conversation
        is over (its end reason recorded)."""
        turns = self.record.turns
        if len(turns) < len(self._written):
            return self._add(self._written[len(turns)], "written")
        if len(turns) >= self.simulation.max_turns:
            self._end(EndReason.MAX_TURNS)
            return None
        request = UserRequest(
            simulation=self.simulation,
            messages=self.messages,
            case_id=self.case_id,
            trial=self.trial,
        )
        started = time.monotonic()
        limit = None if getattr(self.user, "limits_itself", False) else self.reply_limit_s
        try:
            with self.clock_held():
                async with asyncio.timeout(limit) as limited:
                    reply = await self.user.reply(request)
        except TimeoutError as exc:
            raise UserSimulatorError(
                f"the user {self.user.label} gave no message within {limit:g} s (the trial's "
                "time limit)"
                if limit is not None and limited.expired()
                else f"the user {self.user.label} raised TimeoutError: {exc}"
            ) from exc
        except UserSimulatorError as exc:  # what its model spent before it gave up counts
            self._spent(exc.model_calls, 0, exc.cost_usd)
            raise
        except (InfrastructureError, *_PASSED_ON):
            raise
        except BaseException as exc:  # a user object's own bug: the user's failure, not the agent's
            raise UserSimulatorError(
                f"the user {self.user.label} raised {type(exc).__name__}: {exc}"
            ) from exc
        finally:
            self.waited_s += time.monotonic() - started
        if reply is None:
            self._stopped_before_speaking("stopped")
            self._end(EndReason.USER_STOPPED)
            return None
        if not isinstance(reply, UserReply):
            raise UserSimulatorError(
                f"the user {self.user.label} returned {type(reply).__name__}: a user's reply is "
                "a UserReply, or None to stop"
            )
        self._spent(reply.model_calls, reply.cached, reply.cost_usd)
        if reply.stop is not None:
            self._stopped_before_speaking(f"stopped ({reply.stop.value})")
            self._end(reply.stop, reply.detail)
            return None
        source = "scripted" if isinstance(self.user, ScriptedUser) else "simulated"
        return self._add(reply.message or "", source)

    def _spent(self, calls: list[ModelCall], cached: int, cost_usd: float | None) -> None:
        self.record.model_calls.extend(calls)
        self.record.cached_calls += cached
        if cost_usd is not None:
            self.record.cost_usd = (self.record.cost_usd or 0.0) + cost_usd

    def spend_before(self, earlier: SimulatedConversation | None) -> None:
        """Count what the user's model spent in the trial's earlier attempts (retried), as
        the agent's calls of every attempt are counted in the trial's usage."""
        if earlier is None:
            return
        self.record.model_calls[:0] = earlier.model_calls
        self._spent([], earlier.cached_calls, earlier.cost_usd)

    def _stopped_before_speaking(self, how: str) -> None:
        """A user who stops before its first message left the agent nothing to answer: the
        user's failure, never the agent's `no_response`."""
        if not self.record.turns:
            raise UserSimulatorError(
                f"the user {self.user.label} {how} before its first message: the agent was "
                "given nothing to answer"
            )

    def _add(self, message: str, source: str) -> str:
        self.record.turns.append(UserTurn.model_validate({"user": message, "source": source}))
        return message

    def _end(self, reason: EndReason, detail: str | None = None) -> None:
        self.record.end_reason = reason
        self.record.end_detail = detail

    def finish(self, trial: Trial) -> SimulatedConversation:
        """The record of the conversation for `trial` (the attempt's): a trial that failed
        before the user stopped ended on that failure (`trial_failed`)."""
        record = self.record.model_copy(deep=True)
        if record.end_reason is None and trial.failure is not None:
            record.end_reason = EndReason.TRIAL_FAILED
            record.end_detail = trial.failure.cause.value
        return record


class _Turns:
    """The async iterator `UserSession.play` returns (a class, not an async generator: an
    agent failing mid-conversation leaves nothing to finalise)."""

    def __init__(self, session: UserSession, answer: Callable[[], str | None]) -> None:
        self._session = session
        self._answer = answer
        self._played = False

    def __aiter__(self) -> _Turns:
        return self

    async def __anext__(self) -> str:
        session = self._session
        if self._played:
            session.record.turns[-1].agent = self._answer()
        message = await session.next_message()
        if message is None:
            raise StopAsyncIteration
        self._played = True
        return message


class WrittenTurns:
    """Turns known in advance, as an async iterator (as `UserSession.play` gives a simulated
    user's), so one loop plays both."""

    def __init__(self, turns: Iterable[str]) -> None:
        self._turns = iter(turns)

    def __aiter__(self) -> WrittenTurns:
        return self

    async def __anext__(self) -> str:
        try:
            return next(self._turns)
        except StopIteration:
            raise StopAsyncIteration from None
