"""Tool mocks, injected failures and replayed answers for OpenAI Agents SDK agents
(`openai_agents.py` runs with them when the trial has an environment).

How a function tool is answered without running: a trial with an environment
(`agents/environment.py`) runs a copy of the user's agent graph, `AnsweringGraph`: the agent,
and every agent its handoffs reach (given as agents, or as `handoff(...)` objects whose target
is swapped for its copy when the handoff runs), each `clone`d with its `FunctionTool`s replaced
by copies whose `on_invoke_tool` asks the running trial's environment first
(`current_environment().answer(name, arguments, spec)`), and runs the tool's own invoker only
when it says None. The user's objects are never changed, and the copy is made once per adapter:
the environment is per trial, reached through the recorder's context, which the SDK's tool
tasks (and the threads of sync tools, `asyncio.to_thread`) inherit.

A mocked answer goes where the tool's own would: its result is the tool's output (the SDK's
output guardrails, timeout and conversion to the model's message apply as to a real output);
its error (an injected one, `UnmockedToolError`, `ReplayMissError`, `ToolArgumentsError`) is
raised inside the SDK's failure handling for the tool (`with_function_tool_failure_error_handler`,
wrapping tools `function_tool` made, which handle their errors), so the tool's
`failure_error_function` decides, as for the real tool, whether the model gets a message or
the run stops. The error is also noted by call id for the trial (`recording_errors`), whatever
message the model got.

The copy also notes the errors a tool answers the model with by a handler of its own, which
the run config's `tool_error_formatter` never sees: its `failure_error_function`, and its
timeout (`timeout_error_function`, or the SDK's message): the copy's handlers (`_noting_copy`)
note the error, then answer as the user's would. And a tool output guardrail that rejects
hands the model its message in place of the tool's result, which is all the run's items then
hold: the copy's guardrails (`_noting_guardrail`) note the result the tool returned. An agent
with such a tool runs the copy in every trial (`notes_handled_errors`).

What a copy cannot reach: tools the agent makes during a run (an MCP server's tools, a
subclass's `get_all_tools`) and an agent-as-tool's inner agent (the agent tool itself is
answered like any tool). The run hooks' `guard` stops a call of such a tool that the environment
would answer or refuse, rather than let it run live (`UnanswerableToolError`).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from agenteval.agents.environment import ToolArgumentsError, ToolEnvironment
from agenteval.agents.frameworks.openai_agents_read import (
    RunReader,
    agents_of,
    function_tool_spec,
)
from agenteval.agents.tools import error_text
from agenteval.agents.trial_state import current_environment

__all__ = [
    "AnsweringGraph",
    "UnanswerableToolError",
    "notes_handled_errors",
    "recording_errors",
]

_ERRORS: ContextVar[RunReader | None] = ContextVar("agenteval_oai_tool_errors", default=None)
"""The running trial's reader, where a mocked call's error is noted (`RunReader.tool_failed`)."""


@contextmanager
def recording_errors(reader: RunReader) -> Iterator[None]:
    """Note every answered call's error into `reader` while the block runs: the SDK's
    `tool_error_formatter` sees a tool's error only with its default failure message, and
    never sees the error of a hand-made tool (which stops the run)."""
    token = _ERRORS.set(reader)
    try:
        yield
    finally:
        _ERRORS.reset(token)


class UnanswerableToolError(RuntimeError):
    """A tool the agent made during the run (an MCP server's, ...) was called while a mock or a
    replayed run was to answer it: agenteval cannot answer in its place, so it stops the run
    rather than let the tool run live."""


def _arguments(text: str) -> dict[str, Any] | None:
    """A call's arguments (JSON text, empty for none, as the SDK reads them), or None when
    they are not a JSON object."""
    try:
        value = json.loads(text) if text else {}
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _has_say(environment: ToolEnvironment, name: str) -> bool:
    """Whether the environment answers or refuses calls of `name` (else they run for real)."""
    return name in environment.mocks or environment.replay is not None or environment.mocks_only


def _note(context: Any, name: str, arguments: str, exc: BaseException) -> None:
    """Note an answered call's error for the trial: by the call id the SDK gave the tool (a
    `ToolContext`), else (a `RunContextWrapper`) by the call's name and arguments."""
    reader = _ERRORS.get()
    if reader is not None:
        call_id = getattr(context, "tool_call_id", None)
        reader.tool_failed(
            str(call_id) if call_id is not None else None, name, arguments, error_text(exc)
        )


def _custom_failure(tool: Any) -> Any:
    """The tool's own `failure_error_function` (None for the SDK's default, which hands the
    error to the run config's `tool_error_formatter`, and for none, which lets it out)."""
    from agents.tool import (
        default_tool_error_function,
        resolve_function_tool_failure_error_function,
    )

    handler = resolve_function_tool_failure_error_function(tool)
    return None if handler is default_tool_error_function else handler


def _timeout_answered(tool: Any) -> bool:
    """Whether the tool has a timeout whose expiry the model is told as if it were a result
    (`timeout_behavior="error_as_result"`): the SDK's message when the tool has no function of
    its own, which a copy may stand in for only when the tool declares no output schema (the
    SDK treats its own message apart from a function's only then)."""
    if tool.timeout_seconds is None or tool.timeout_behavior != "error_as_result":
        return False
    return tool.timeout_error_function is not None or tool.output_json_schema is None


def records_handled_errors(tool: Any) -> bool:
    """Whether an error of `tool` (a `function_tool`) can reach the model through a handler the
    SDK's `tool_error_formatter` never sees: the tool's own `failure_error_function`, or its
    timeout answered as a result. Such a tool's trials run a copy that notes the error."""
    if not callable(getattr(tool.on_invoke_tool, "__agents_bind_function_tool__", None)):
        return False  # a hand-made FunctionTool: its errors stop the run
    return _custom_failure(tool) is not None or _timeout_answered(tool)


def _guards_output(tool: Any) -> bool:
    """Whether `tool` has tool output guardrails: one that rejects (`reject_content`) hands
    the model its message in place of the tool's result, which is all the run's items and
    hooks see; the copy's guardrails note the result the tool returned (`_noting_guardrail`)."""
    return bool(getattr(tool, "tool_output_guardrails", None))


def notes_handled_errors(agent: Any) -> bool:
    """Whether a trial of `agent` runs the copy of its graph even with no environment: a
    function tool of it, or of an agent it hands off to, handles its errors where the trial
    would not see them (`records_handled_errors`), or has output guardrails that may hide its
    result from the trial (`_guards_output`)."""
    from agents import FunctionTool

    return any(
        isinstance(tool, FunctionTool) and (records_handled_errors(tool) or _guards_output(tool))
        for each in agents_of(agent)
        for tool in getattr(each, "tools", ())
    )


def _noting_guardrail(guardrail: Any, tool: str) -> Any:
    """A copy of the tool output guardrail `guardrail` (of the tool named `tool`) that, when
    it rejects the output, notes for the trial what the tool returned and what the model was
    told in its place (`RunReader.output_rejected`); its verdict is the user's guardrail's."""

    async def checked(data: Any) -> Any:
        verdict = await guardrail.run(data)
        behavior = getattr(verdict, "behavior", None)
        reader = _ERRORS.get()
        if (
            reader is not None
            and isinstance(behavior, dict)
            and behavior.get("type") == "reject_content"
        ):
            call_id = getattr(data.context, "tool_call_id", None)
            reader.output_rejected(
                None if call_id is None else str(call_id),
                tool,
                guardrail.get_name(),
                behavior.get("message"),
                verdict.output_info,
                data.output,
            )
        return verdict

    return dataclasses.replace(guardrail, guardrail_function=checked, name=guardrail.get_name())


def _noting_copy(tool: Any) -> Any:
    """`tool`, or a copy of it whose error handlers note the error for the trial
    (`recording_errors`) before answering the model as the user's handlers do: the SDK's
    message of an exception or a timeout is what the model sees, the exception is the call's
    error. Its output guardrails, if any, note a rejected output (`_noting_guardrail`)."""
    handles = records_handled_errors(tool)
    if not (handles or _guards_output(tool)):
        return tool
    from agents.tool import (
        default_tool_timeout_error_message,
        set_function_tool_failure_error_function,
    )

    name: str = tool.name
    changes: dict[str, Any] = {}
    if _guards_output(tool):
        changes["tool_output_guardrails"] = [
            _noting_guardrail(guardrail, name) for guardrail in tool.tool_output_guardrails
        ]
    if handles and _timeout_answered(tool):
        answer_timeout = tool.timeout_error_function
        seconds: float = tool.timeout_seconds

        def timed_out(context: Any, error: Exception) -> Any:
            _note(context, name, _arguments_of(context), error)
            if answer_timeout is None:
                return default_tool_timeout_error_message(tool_name=name, timeout_seconds=seconds)
            return answer_timeout(context, error)

        changes["timeout_error_function"] = timed_out
    # A copy rebinds the tool's own invoker to itself, so the handlers it reads are the copy's.
    copy = dataclasses.replace(tool, **changes)
    answer_failure = _custom_failure(tool) if handles else None
    if answer_failure is not None:

        def failed(context: Any, error: Exception) -> Any:
            _note(context, name, _arguments_of(context), error)
            return answer_failure(context, error)

        set_function_tool_failure_error_function(copy, failed)
    return copy


def _arguments_of(context: Any) -> str:
    return str(getattr(context, "tool_arguments", "") or "")


def _answering_tool(tool: Any) -> Any:
    """A copy of the `FunctionTool` `tool` answered by the trial's environment (see the
    module); every other field, its failure policy included, as the user made it (its error
    handlers noting the error, `_noting_copy`)."""
    from agents.tool import with_function_tool_failure_error_handler

    tool = _noting_copy(tool)
    inner: Callable[[Any, str], Awaitable[Any]] = tool.on_invoke_tool
    name: str = tool.name
    spec = function_tool_spec(tool)

    async def invoke(context: Any, arguments: str) -> Any:
        environment = current_environment()
        if environment is None:
            return await inner(context, arguments)
        parsed = _arguments(arguments)
        if parsed is None and not _has_say(environment, name):
            return await inner(context, arguments)  # the real tool says what is wrong
        try:
            if parsed is None:
                raise ToolArgumentsError(f"{name}: the arguments are not a JSON object")
            answer = environment.answer(name, parsed, spec)
        except Exception as exc:
            _note(context, name, arguments, exc)
            raise
        if answer is None:
            return await inner(context, arguments)  # the real tool
        try:
            return await answer.settle()
        except Exception as exc:
            _note(context, name, arguments, exc)
            raise

    # The SDK's approval policies read the prepared arguments of the tool's own invoker.
    prepare = getattr(inner, "prepare_arguments", None)
    if callable(prepare):
        invoke.__agents_prepare_arguments__ = prepare  # type: ignore[attr-defined]
    # A tool `function_tool` made handles its errors inside its invoker: so does the copy.
    if callable(getattr(inner, "__agents_bind_function_tool__", None)):
        on_invoke = with_function_tool_failure_error_handler(invoke, _traced)
    else:
        # A FunctionTool made by hand: the SDK chooses the context it passes by the annotation
        # of the invoker's first parameter, which the copy's invoker takes from the tool's.
        _same_signature(invoke, inner)
        on_invoke = invoke
    return dataclasses.replace(tool, on_invoke_tool=on_invoke)


def _same_signature(wrapper: Callable[..., Any], wrapped: Callable[..., Any]) -> None:
    try:
        signature = inspect.signature(wrapped)
    except (TypeError, ValueError):
        return
    wrapper.__signature__ = signature  # type: ignore[attr-defined]
    wrapper.__annotations__ = {}  # so the signature's annotations are the ones read


def _traced(tool: Any, error: Exception, arguments: str) -> None:
    """What the SDK's handler reports of a handled error: for its traces, which agenteval's
    runs turn off."""


class AnsweringGraph:
    """The copy of one user's agent graph whose function tools ask the trial's environment
    (see the module). Copies are made on first use, each agent and tool once, and kept with
    the originals they copy (so an id is never reused while the copy lives)."""

    def __init__(self) -> None:
        self._agents: dict[int, tuple[Any, Any]] = {}
        self._tools: dict[int, tuple[Any, Any]] = {}
        self._answering: set[int] = set()
        self._copies: set[int] = set()
        self._lock = threading.RLock()

    def agent(self, agent: Any) -> Any:
        """The copy of `agent` (an SDK `Agent`; anything else as it is)."""
        from agents import Agent

        if not isinstance(agent, Agent) or id(agent) in self._copies:
            return agent
        with self._lock:
            return self._copy(agent)

    def covers(self, tool: Any) -> bool:
        """Whether `tool` is one of the copies that ask the environment."""
        return id(tool) in self._answering

    def _copy(self, agent: Any) -> Any:
        from agents import Agent, FunctionTool, Handoff

        known = self._agents.get(id(agent))
        if known is not None:
            return known[1]
        tools = [self._tool(t) if isinstance(t, FunctionTool) else t for t in agent.tools]
        copy = agent.clone(tools=tools)
        self._agents[id(agent)] = (agent, copy)
        self._copies.add(id(copy))
        # After the copy is known: handoffs may lead back to this agent.
        copy.handoffs = [
            self._copy(h)
            if isinstance(h, Agent)
            else self._handoff(h)
            if isinstance(h, Handoff)
            else h
            for h in agent.handoffs
        ]
        return copy

    def _tool(self, tool: Any) -> Any:
        known = self._tools.get(id(tool))
        if known is None:
            known = self._tools[id(tool)] = (tool, _answering_tool(tool))
            self._answering.add(id(known[1]))
        return known[1]

    def _handoff(self, handoff: Any) -> Any:
        """A `handoff(...)` whose target agent is swapped for its copy when it runs."""
        original: Callable[[Any, Any], Any] = handoff.on_invoke_handoff

        async def invoke(context: Any, input_json: Any = None) -> Any:
            return self.agent(await original(context, input_json))

        return dataclasses.replace(handoff, on_invoke_handoff=invoke)

    def guard(self, context: Any, tool: Any) -> None:
        """For the run hooks' `on_tool_start`: stop a call of a function tool no copy covers
        (one the agent made during the run) that the trial's environment would answer or
        refuse; an unmocked call of a `tool_mocks_only` case and a replay miss raise as the
        environment raises (noted as the trial's failure)."""
        from agents import FunctionTool

        environment = current_environment()
        if environment is None or not isinstance(tool, FunctionTool) or self.covers(tool):
            return
        name = tool.name
        if not _has_say(environment, name):
            return
        if name not in environment.mocks:
            arguments = _arguments(str(getattr(context, "tool_arguments", "") or "")) or {}
            if environment.answer(name, arguments) is None:  # raises unmocked, replay miss
                return
        raise UnanswerableToolError(
            f"{name} is a tool the agent made during the run (an MCP server's tool, or one "
            "its get_all_tools adds), which agenteval cannot answer in its place; the run "
            "stopped rather than call it live. Mock the tools given in the agent's `tools`, "
            "or let this one run (no mock of it, no tool_mocks_only, --replay-fallthrough)"
        )
