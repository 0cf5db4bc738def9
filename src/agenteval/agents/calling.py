"""Calling an agent on one case and reading what it returned as a `Trial`.

An agent is any callable, sync or async, taking the case input (a string, or a list of messages
for multi-turn cases) and returning the final answer as a string, a `Trial`, a list of
`AgentStep`s, a mapping with `output` (and optionally `steps`, `tool_calls`), or an object with
an `output` attribute.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextvars import copy_context
from typing import Any, TypeAlias, cast

from pydantic import ValidationError

from agenteval.agents.frameworks import FrameworkAgent, as_framework_agent
from agenteval.agents.recorder import TrialRecorder, current_recorder
from agenteval.agents.users import WrittenTurns
from agenteval.case import EvalCase
from agenteval.prebuilt import prebuilt
from agenteval.trace import AgentStep, Failure, FailureCause, ToolCall, Trial, Usage

__all__ = ["Agent", "InvalidOutputError", "Invoke", "call_agent", "invoker", "read_agent_output"]

Agent: TypeAlias = Callable[[Any], Any]
Invoke: TypeAlias = Callable[[Any], Awaitable[Any]]
"""One call of an agent on a prompt, awaitable whether the agent is sync or async."""


class InvalidOutputError(Exception):
    """The agent returned something agenteval cannot read as an answer."""


def _settle(
    future: asyncio.Future[tuple[Any, BaseException | None]],
    result: Any,
    error: BaseException | None,
) -> None:
    if future.done():  # the trial timed out (or was cancelled) while the agent worked on
        return
    # What the agent raised travels as a result, to be raised in the trial's own frame: a
    # future's exception is thrown into the awaiting task, and a thrown GeneratorExit (say)
    # would close the task's coroutines instead of reaching the trial.
    future.set_result((result, error))


async def _in_own_thread(agent: Agent, prompt: Any) -> Any:
    """Run a sync agent in a daemon thread of its own, in a copy of this context.

    Its own thread, not a pool's: a sync agent that never returns cannot be stopped, so after a
    timeout it is left running where it holds up nothing (no pool slot for the next trial, no
    exit of the process).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[tuple[Any, BaseException | None]] = loop.create_future()
    context = copy_context()  # the trial's recorder follows the agent into its thread

    def target() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            result = context.run(agent, prompt)
        except BaseException as exc:  # handed to the trial, which records it
            error = exc
        # When the run has ended and its loop is closed, there is no one left to tell.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, future, result, error)

    threading.Thread(target=target, name="agenteval-agent", daemon=True).start()
    result, error = await future
    if error is not None:
        # Raised again here, it would take as its context whatever this thread is handling
        # (a caller's `except`): the agent's own context is kept (the failure a tool mock
        # injected, which its error was raised while handling).
        handled = error.__context__
        try:
            raise error
        except BaseException as raised:
            raised.__context__ = handled
            raise
        finally:
            del error, handled  # no cycle through this frame
    if inspect.isawaitable(result):
        return await result
    return result


def invoker(agent: Agent) -> Invoke | FrameworkAgent:
    """How to call `agent`, decided once per run: an agent built on a framework through its
    adapter (`agents/frameworks/`), an async agent awaited in the event loop, a sync one in a
    thread of its own."""
    framework = as_framework_agent(agent)
    if framework is not None:
        return framework
    if inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(
        getattr(agent, "__call__", None)  # noqa: B004 - async callable objects
    ):
        return cast(Invoke, agent)
    return functools.partial(_in_own_thread, agent)


async def call_agent(
    agent: Agent | Invoke | FrameworkAgent, case: EvalCase, *, prepared: bool = False
) -> Trial:
    """Run the agent on the case and return what it did (not yet timed or recorded).

    `prepared`: `agent` is already an `invoker`. A multi-turn case calls the agent once per
    user turn with the conversation so far; a framework's agent plays the whole case itself,
    in one session.
    """
    call_once = agent if prepared else invoker(agent)
    if isinstance(call_once, FrameworkAgent):
        return await call_once.run_case(case)
    if case.user_simulation is not None:  # checked first: no context read for other cases
        recorder = current_recorder()
        session = recorder.user_session if recorder is not None else None
        if session is not None:
            return await _conversation(call_once, session.history, session.play, recorder)
    if not case.conversation:
        prompt: Any = (
            case.input
            if isinstance(case.input, str) or case.input is None
            else [m.model_dump() for m in case.input]
        )
        return read_agent_output(await call_once(prompt))
    written = case.turns
    return await _conversation(call_once, [], lambda _: WrittenTurns(written), current_recorder())


async def _conversation(
    call_once: Invoke,
    history: list[dict[str, str]],
    play: Callable[[Callable[[], str | None]], AsyncIterator[str]],
    recorder: TrialRecorder | None,
) -> Trial:
    """Play a conversation turn by turn: the agent is called once per user message with the
    conversation so far; `play(answer)` gives the user's messages (`answer()`: the agent's
    answer to the last one)."""
    messages: list[dict[str, str]] = list(history)
    steps: list[AgentStep] = []
    outputs: list[str | None] = []
    metadata: dict[str, Any] = {}
    async for turn in play(lambda: outputs[-1] if outputs else None):
        messages.append({"role": "user", "content": turn})
        before = len(recorder.tool_calls) if recorder is not None else 0
        trial = read_agent_output(await call_once(list(messages)))
        outputs.append(trial.output)
        # What a turn reports (its session state, say) is kept, the later turn's winning.
        metadata.update(trial.metadata)
        # A turn that returns no calls of its own made the ones `@tool` recorded meanwhile.
        calls = trial.tool_calls or (recorder.tool_calls[before:] if recorder is not None else [])
        steps.append(AgentStep(tool_calls=list(calls), output=trial.output))
        messages.append({"role": "assistant", "content": trial.output or ""})
    return Trial(
        steps=steps,
        output=outputs[-1] if outputs else None,
        metadata={**metadata, "turn_outputs": outputs},
    )


def answer_trial(output: str | None) -> Trial:
    """`Trial(output=output)` for a str or None, built without validating it.

    Why: a bare answer is what most agents return, and validating the 22 fields' defaults was
    the largest part of reading it: 7.1 -> 1.9 us a trial (bench W1: ~85 us a trial in all).
    The trial is what validation leaves: every field (the defaults, mutable ones fresh), the
    names given (`output`), no extra or private attributes (`extra="forbid"`, none declared);
    `_fill_from_steps` has nothing to fill without steps or model calls. Compared with
    `Trial(output=...)`, fields set and JSON included, by tests/agents/test_answer_trial.py,
    which also fails when `Trial` gains a field this does not list.
    """
    usage = prebuilt(Usage, dict(_NO_USAGE), set())
    return prebuilt(
        Trial,
        {
            "case_id": "",
            "trial": 0,
            "output": output,
            "steps": [],
            "tool_calls": [],
            "node_visits": [],
            "retrieved_docs": None,
            "model_calls": [],
            "usage": usage,
            "started_at": None,
            "latency_s": None,
            "working_latency_s": None,
            "attempts": 1,
            "retries": {},
            "failure": None,
            "metadata": {},
            "not_recorded": {},
            "tool_specs": {},
            "trace_id": None,
            "span_id": None,
            "state": None,
            "simulation": None,
        },
        {"output"},
    )


_NO_USAGE = {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "reasoning_tokens": 0}
"""`Usage()`'s fields."""


def read_agent_output(value: Any) -> Trial:
    """Read whatever the agent returned as a Trial; raise InvalidOutputError if it cannot."""
    if type(value) is str or value is None:  # the common case, checked first and exactly
        return answer_trial(value)
    if isinstance(value, Trial):
        return _own_copy(value)
    if isinstance(value, str):
        return Trial(output=value)
    if isinstance(value, list) and all(isinstance(step, AgentStep) for step in value):
        return Trial(steps=value)
    if isinstance(value, Mapping):
        if "output" not in value:
            raise InvalidOutputError(
                f"the agent returned a mapping without 'output' (keys: {sorted(map(str, value))})"
            )
        try:
            return Trial.model_validate(
                {
                    k: v
                    for k, v in value.items()
                    if k
                    in {
                        "output",
                        "steps",
                        "tool_calls",
                        "node_visits",
                        "retrieved_docs",
                        "metadata",
                    }
                }
            )
        except ValidationError as exc:
            raise InvalidOutputError(f"the agent's result is not valid: {exc}") from exc
    if hasattr(value, "output"):
        output = value.output
        if output is not None and not isinstance(output, str):
            raise InvalidOutputError(
                f"the agent's result has an output of type {type(output).__name__}, not str"
            )
        steps = getattr(value, "steps", None) or []
        calls = getattr(value, "tool_calls", None) or []
        try:
            return Trial(
                output=output,
                steps=[AgentStep.model_validate(s, from_attributes=True) for s in steps],
                tool_calls=[ToolCall.model_validate(c, from_attributes=True) for c in calls],
            )
        except ValidationError as exc:
            raise InvalidOutputError(f"the agent's result is not valid: {exc}") from exc
    raise InvalidOutputError(
        f"the agent returned {type(value).__name__}; return the answer as a str, a Trial, "
        "a list of AgentStep, or a mapping with 'output'"
    )


def _own_copy(trial: Trial) -> Trial:
    """A trial the agent returned, as the attempt's own: the engine stamps its case, index,
    timings, state and failure on it, and an agent may hand the same object to several trials
    (a cached answer, a constant of a test double), which would then overwrite each other.
    Deep, so the calls it marks (`mocked`) are its own too; a trial holding what cannot be
    copied (a lock in its metadata) is copied down to its calls and mappings."""
    try:
        return trial.model_copy(deep=True)
    except Exception:  # an object that does not copy: the engine's fields are copied still
        steps = [
            step.model_copy(update={"tool_calls": [c.model_copy() for c in step.tool_calls]})
            for step in trial.steps
        ]
        return trial.model_copy(
            update={
                "steps": steps,
                "tool_calls": [c.model_copy() for c in trial.tool_calls],
                "metadata": dict(trial.metadata),
                "not_recorded": dict(trial.not_recorded),
                "retries": dict(trial.retries),
            }
        )


def no_response_failure(trial: Trial) -> Failure | None:
    """The failure of a trial that finished without an answer, if it did. A trial whose trace
    does not record the answer (`Trial.not_recorded`: the model answered, the instrumentation
    kept no content) did not finish without one: it has no failure for it."""
    if "output" in trial.not_recorded:
        return None
    if trial.output is None or not trial.output.strip():
        return Failure(cause=FailureCause.NO_RESPONSE, message="the agent returned no answer")
    return None
