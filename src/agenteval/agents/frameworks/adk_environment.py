"""Tool mocks, injected failures, replayed answers and the environment state of a Google ADK
trial: what the trial's plugin (`adk.py`) does at each tool call.

Where a mock answers: in the plugin's `before_tool_callback`, the place ADK itself gives a
plugin to answer a call instead of the tool (its own `EnvironmentSimulationPlugin` and replay
plugin answer there). ADK's order is kept: the user's plugins first (they come before
agenteval's), then the agent's own `before_tool_callback`s (run here, before the mock, so a
guard the agent has still refuses a call the mock would have answered), then the mock instead of
the tool; the after-tool callbacks then see the mocked result as they see a tool's.

An error (an injected one, an unmocked call of a `tool_mocks_only` case, a replay miss,
arguments that do not fit the tool's schema) goes where a tool's exception goes in ADK 2.13
(`flows/llm_flows/tools/_caller.py`): to the `on_tool_error` callbacks, the plugins' then the
agent's, the first answer going to the model in the tool's place; with no answer, the exception
leaves the run. ADK's plugin manager wraps what a plugin raises in a `RuntimeError`; the
adapter takes the tool's own exception back out of it (`escaped`), so the trial fails with the
exception a raising tool would have let out.

The state: for an ADK agent the session state IS the trial's environment state. `StateMirror`
keeps `agenteval.state()` (the environment's `state`) and the session's state one: seeded from
the new session, brought up to date before each tool call, its changes (a tool writing
`agenteval.state()`, a mock's `set_state`) written into the call's `tool_context.state` (so ADK
records them as the call's state delta, as it records a tool's own writes), and set to the
session's state at the end (the trial's `Trial.state`).

ADK is imported only inside functions: importing agenteval imports no framework.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agenteval.agents.environment import ToolEnvironment
from agenteval.agents.recorder import current_recorder
from agenteval.trace import ToolSpec

__all__ = ["CONTROL_TOOLS", "StateMirror", "ToolAnswerer", "covers", "trial_answerer"]

CONTROL_TOOLS = frozenset(
    {"transfer_to_agent", "exit_loop", "set_model_response", "finish_task", "adk_request_input"}
)
"""ADK's own flow-control tools: they move the run between agents, end a loop, give the
structured answer, ask the user; they touch no outside system, and answering them in their place
would stop what they do (a transfer is an action the tool sets). So they always run, unless a
case mocks one by name; a `tool_mocks_only` case does not refuse them, and a replay passes over
the recorded call (it runs again)."""

_MISSING = object()


def _differs(known: Any, value: Any) -> bool:
    """Whether `value` is not `known` any more; a value that cannot say (an array's `!=`)
    counts as changed."""
    try:
        return bool(known != value)
    except Exception:
        return True


def _copied(value: Any) -> Any:
    """A deep copy, or the value itself when it cannot be copied (a session state may hold
    any object in memory)."""
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def covers(environment: ToolEnvironment, tool: str, arguments: Mapping[str, Any]) -> bool:
    """Whether `environment` answers (or refuses) a call of `tool` instead of letting it run: a
    mock that applies to these arguments, a replay, a `tool_mocks_only` case. Asked before the
    agent's own before-tool callbacks run here: a call the environment leaves alone has them run
    once, by ADK. (A call a replay lets through, `--replay-fallthrough`, has them run twice.)"""
    mock = environment.mocks.get(tool)
    if mock is not None:
        args = dict(arguments)
        return mock.sequence is not None or any(rule.applies(args) for rule in mock.rules or ())
    if tool in CONTROL_TOOLS:
        return False
    return environment.replay is not None or environment.mocks_only


class StateMirror:
    """One trial's environment state kept equal to its ADK session's state (see the module).

    `base` is the state both sides last agreed on: a key that differs from it in the session
    changed there (a tool's `tool_context.state`, an agent's `output_key`, a callback), one that
    differs in the environment changed here (`agenteval.state()`, a mock's `set_state`). ADK's
    session state has no deletion, so a key deleted from `agenteval.state()` stays in the
    session (set it to None instead)."""

    def __init__(self, environment: ToolEnvironment) -> None:
        self.environment = environment
        self.base: dict[str, Any] = {}

    def seed(self, session_state: Mapping[str, Any]) -> None:
        """The environment state becomes the session's (in place: a tool may hold the
        mapping `agenteval.state()` gave it)."""
        state = {key: _copied(value) for key, value in session_state.items()}
        self.environment.state.clear()
        self.environment.state.update(state)
        self.base = {key: _copied(value) for key, value in state.items()}

    def pull(self, session_state: Any) -> None:
        """What the session changed since the last agreement, into the environment state
        (`session_state`: ADK's `State`, or a mapping)."""
        current = session_state.to_dict() if hasattr(session_state, "to_dict") else session_state
        for key, value in current.items():
            if _differs(self.base.get(key, _MISSING), value):
                self.environment.state[key] = _copied(value)
                self.base[key] = _copied(value)

    def push(self, session_state: Any) -> None:
        """What the environment changed since the last agreement, into the session state
        (`session_state`: the call's `tool_context.state`, so ADK keeps it as its delta)."""
        for key, value in list(self.environment.state.items()):
            if _differs(self.base.get(key, _MISSING), value):
                session_state[key] = _copied(value)
                self.base[key] = _copied(value)


async def _first_answer(callbacks: Iterable[Callable[..., Any]], **kwargs: Any) -> Any:
    """The first non-None answer of an agent's callbacks, each called as ADK calls it (by
    keyword; a callback whose parameters are named otherwise, by position in ADK's order),
    awaited when it returns an awaitable."""
    for callback in callbacks:
        try:
            inspect.signature(callback).bind(**kwargs)
            by_name = True
        except TypeError:
            by_name = False
        except ValueError:  # no signature to read: called as ADK calls it first
            by_name = True
        answer = callback(**kwargs) if by_name else callback(*kwargs.values())
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is not None:
            return answer
    return None


class ToolAnswerer:
    """Answers one trial's tool calls from its environment (the plugin's `before_tool_callback`
    calls `before_tool`). `specs`: the tools' declared schemas, by name (the agent's, and those a
    toolset offered during the run), that mocked arguments are checked against. `noted`: told
    each error raised in a tool's place with the call's id, before any callback answers it (a
    plugin of the user's answering first would keep it from agenteval's own callback)."""

    def __init__(
        self,
        environment: ToolEnvironment,
        specs: dict[str, ToolSpec],
        noted: Callable[[str, BaseException], None] | None = None,
    ) -> None:
        self.environment = environment
        self.specs = specs
        self.noted = noted
        self.mirror = StateMirror(environment)
        self.escaped: BaseException | None = None
        """An error this trial's plugin raised for a tool (ADK wraps it): the run's failure."""

    async def before_tool(self, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> Any:
        """The call's answer in the tool's place, or None to let ADK run the tool."""
        self.mirror.pull(tool_context.state)  # the tool reads today's state in agenteval.state()
        if not covers(self.environment, tool.name, tool_args):
            replay = self.environment.replay
            if replay is not None and tool.name in CONTROL_TOOLS:
                # It runs for real, and takes its place in the replayed run's order, so the
                # calls after it are matched as they were made.
                replay.take(tool.name, dict(tool_args))
            return None
        context = tool_context.get_invocation_context()
        agent = context.agent
        own = await _first_answer(
            getattr(agent, "canonical_before_tool_callbacks", ()),
            tool=tool,
            args=tool_args,
            tool_context=tool_context,
        )
        if own is not None:  # the agent's guard answered: ADK would not have run the tool
            return own
        try:
            answer = self.environment.answer(tool.name, tool_args, self.specs.get(tool.name))
            if answer is None:  # a replay let it through: the tool runs
                return None
            self.mirror.push(tool_context.state)  # the mock's set_state, as the call's delta
            result = await answer.settle()
        except Exception as error:
            self.mirror.push(tool_context.state)
            call_id = getattr(tool_context, "function_call_id", None)
            if call_id and self.noted is not None:
                self.noted(str(call_id), error)
            handled = await context.plugin_manager.run_on_tool_error_callback(
                tool=tool, tool_args=tool_args, tool_context=tool_context, error=error
            )
            if handled is None:
                handled = await _first_answer(
                    getattr(agent, "canonical_on_tool_error_callbacks", ()),
                    tool=tool,
                    args=tool_args,
                    tool_context=tool_context,
                    error=error,
                )
            if handled is None:
                self.escaped = error
                raise
            return handled
        # None would tell ADK to run the tool: a tool returning None is answered so.
        return {"result": None} if result is None else result

    def unwrapped(self, error: BaseException) -> BaseException | None:
        """The tool's exception ADK wrapped `error` around (raised by this trial's plugin),
        or None when `error` is not that."""
        if self.escaped is None:
            return None
        current: BaseException | None = error
        for _ in range(8):
            if current is None:
                return None
            if current is self.escaped:
                return current
            current = current.__cause__
        return None


def trial_answerer(
    specs: dict[str, ToolSpec], noted: Callable[[str, BaseException], None]
) -> ToolAnswerer | None:
    """The trial's tool environment at work, when it runs under agenteval's engine: the
    environment the engine made (mocks, replay, state), else one made now, so that
    `agenteval.state()` in a tool is the session state too."""
    recorder = current_recorder()
    if recorder is None:
        return None
    if recorder.environment is None:
        recorder.environment = ToolEnvironment()
    return ToolAnswerer(recorder.environment, specs, noted)
