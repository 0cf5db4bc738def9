"""Tool mocks, injected failures and replayed answers for LangGraph graphs (for
`langgraph.GraphAgent`): a call the trial's environment answers never reaches the tool.

LangGraph's public place to answer a tool call without running it is a `ToolNode`'s
interceptor (`wrap_tool_call` / `awrap_tool_call`), given when the node is made. The user's
graph is never changed: the adapter makes one *answering copy* of it (`answering_graph`, on the
first trial with an environment), where each `ToolNode` (of the graph and of every subgraph
added as a node) is made again with the same tools and settings and agenteval's interceptor
innermost, under the user's own. The copy is shared by every trial: the interceptor asks the
environment of the trial it runs in (`current_environment()`, a context variable), so
concurrent trials never see each other's mocks; a trial without an environment runs the user's
graph itself, and pays nothing.

The interceptor does not answer by itself: it hands the `ToolNode` the same call with a
stand-in tool (`ToolCallRequest.override(tool=...)`) whose run gives the mock's result or raises
its error, after the mock's latency. So everything LangGraph does with a real tool's outcome
applies unchanged: the arguments validated by the tool's own schema first (`ToolInvocationError`
as for a real call), `handle_tool_errors` (an injected `timeout`, an `UnmockedToolError`, a
`ReplayMissError`, a `ToolArgumentsError` are handled, or not, exactly as if the tool raised
them), the `ToolMessage` LangChain makes of the returned value, the tool callbacks.

Tools run elsewhere (a node of the user's calling `tool.invoke`, a `ToolNode` subclass, a
`ToolNode` inside a function node's own graph) are seen by a callback on `on_tool_start`
(`ToolGuard`, raising: it runs before the tool): a mock's error, an unmocked call of a
`tool_mocks_only` case and a replay miss are raised there as the tool would raise them, but a
callback cannot give a result, so a mocked or replayed result there is refused
(`unmocked_tool`, `replay_miss`, saying where to call the tool instead): the real tool never
runs under a mock.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

from agenteval.agents.environment import (
    Answer,
    ReplayMissError,
    ToolEnvironment,
    UnmockedToolError,
)
from agenteval.agents.frameworks.langgraph_record import spec_of
from agenteval.agents.trial_state import current_environment
from agenteval.trace import FailureCause, ToolSpec

__all__ = ["ToolGuard", "answering_graph", "handled_as_without_wrapper", "tool_node_settings"]

_DECIDED: ContextVar[tuple[str, str | None] | None] = ContextVar(
    "agenteval_langgraph_decided", default=None
)
"""The call (tool name, call id) an interceptor has just decided, while the `ToolNode` runs it:
the guard leaves that one alone (asking twice would move a mock sequence on twice)."""

_SETTINGS = ("_handle_tool_errors", "_messages_key", "_wrap_tool_call", "_awrap_tool_call")
"""What a `ToolNode` was made with beyond its tools, name and tags. LangGraph keeps them only
in these attributes; a version without them gets no answering copy of its nodes (the guard
still stands), and a test holds the names to the installed LangGraph."""


def tool_node_settings(node: Any) -> dict[str, Any] | None:
    """The settings `node` (a `ToolNode`) was made with, or None when they cannot be read."""
    if not all(hasattr(node, name) for name in _SETTINGS):
        return None
    return {name: getattr(node, name) for name in _SETTINGS}


def answering_graph(graph: Any) -> Any:
    """A copy of `graph` (a compiled LangGraph graph) whose `ToolNode`s ask the running trial's
    environment before running a tool; `graph` itself, and every node it holds, unchanged. The
    graph itself when it has no `ToolNode` to answer for."""
    try:
        from langgraph.prebuilt import ToolNode
    except ImportError:  # langgraph without its prebuilt package: the guard alone
        return graph
    return _copy(graph, ToolNode)


def _copy(graph: Any, tool_node: type[Any]) -> Any:
    nodes = getattr(graph, "nodes", None)
    copy = getattr(graph, "copy", None)
    if not isinstance(nodes, Mapping) or not callable(copy):
        return graph
    changed: dict[str, Any] = {}
    for name, node in nodes.items():
        bound = getattr(node, "bound", None)
        if type(bound) is tool_node:  # a subclass may take other arguments: the guard's
            made = _answering_node(bound, tool_node)
            if made is not None:
                changed[name] = node.copy({"bound": made})
        elif bound is not None and _is_pregel(bound):
            sub = _copy(bound, tool_node)
            if sub is not bound:
                changed[name] = node.copy({"bound": sub, "subgraphs": [sub]})
    if not changed:
        return graph
    return copy({"nodes": {**nodes, **changed}})


def _is_pregel(value: Any) -> bool:
    return any(
        cls.__name__ == "Pregel" and cls.__module__.split(".")[0] == "langgraph"
        for cls in type(value).__mro__
    )


def _answering_node(node: Any, tool_node: type[Any]) -> Any | None:
    """`node` made again with agenteval's interceptor under the user's own (so a user's retry
    wrapper sees an injected error, as it would a real one), or None when its settings cannot
    be read. A node with only a sync wrapper keeps using it in async runs, as LangGraph does."""
    settings = tool_node_settings(node)
    if settings is None:
        return None
    tools = dict(node.tools_by_name)
    specs = {name: spec_of(tool) for name, tool in tools.items()}
    user_sync = settings["_wrap_tool_call"]
    user_async = settings["_awrap_tool_call"]
    handle = settings["_handle_tool_errors"]
    if user_sync is None and user_async is None:
        # With an interceptor, LangGraph also handles an error escaping it by the flag's
        # kind, not by the types it names: the node keeps the handling it had without one.
        handle = handled_as_without_wrapper(handle)
    intercept = _Interceptor(tools, specs)
    wrap = intercept.sync if user_sync is None else _under_sync(user_sync, intercept)
    awrap: Any
    if user_async is not None:
        awrap = _under_async(user_async, intercept)
    else:
        awrap = intercept.run_async if user_sync is None else None
    return tool_node(
        list(tools.values()),
        name=node.name,
        tags=node.tags,
        handle_tool_errors=handle,
        messages_key=settings["_messages_key"],
        wrap_tool_call=wrap,
        awrap_tool_call=awrap,
    )


def handled_as_without_wrapper(flag: Any) -> Callable[[Exception], str]:
    """A `handle_tool_errors` handler that handles an error as `flag` does in a `ToolNode`
    without an interceptor (the types it names, else none or all; its message), and raises
    the others. A `ToolNode` with one handles every error escaping the interceptor by a tuple
    or a type flag (not only those types): this handler, which names no type, is asked again
    there and raises again what it did not handle."""
    handled = _handled_types(flag)

    def handle(error: Exception) -> str:
        if not flag or not isinstance(error, handled):
            raise error
        if isinstance(flag, str):
            return flag
        if callable(flag) and not isinstance(flag, type):
            return str(flag(error))
        from langgraph.prebuilt.tool_node import TOOL_CALL_ERROR_TEMPLATE

        return TOOL_CALL_ERROR_TEMPLATE.format(error=repr(error))

    return handle


def _handled_types(flag: Any) -> tuple[type[BaseException], ...]:
    """The errors a `handle_tool_errors` flag handles: the type or types it is, a handler's
    by the annotation of its error parameter (a type or a union), else every error."""
    if isinstance(flag, type) and issubclass(flag, Exception):
        return (flag,)
    if isinstance(flag, tuple):
        return flag
    if not callable(flag) or isinstance(flag, bool | str):
        return (Exception,)
    try:
        params = list(inspect.signature(flag).parameters.values())
        hints = typing.get_type_hints(flag)
    except Exception:  # no signature or unresolvable hints: as LangGraph, every error
        return (Exception,)
    if params and params[0].name in ("self", "cls") and len(params) == 2:
        params = params[1:]
    hint = hints.get(params[0].name) if params else None
    kinds = (
        typing.get_args(hint)
        if typing.get_origin(hint) in (typing.Union, types.UnionType)
        else (hint,)
    )
    if kinds and all(isinstance(k, type) and issubclass(k, Exception) for k in kinds):
        return tuple(kinds)
    return (Exception,)


def _under_sync(user: Callable[..., Any], intercept: _Interceptor) -> Callable[..., Any]:
    def wrap(request: Any, execute: Callable[[Any], Any]) -> Any:
        return user(request, lambda inner: intercept.sync(inner, execute))

    return wrap


def _under_async(
    user: Callable[..., Awaitable[Any]], intercept: _Interceptor
) -> Callable[..., Awaitable[Any]]:
    async def wrap(request: Any, execute: Callable[[Any], Awaitable[Any]]) -> Any:
        return await user(request, lambda inner: intercept.run_async(inner, execute))

    return wrap


class _Interceptor:
    """One `ToolNode`'s interceptor: the call as the environment answers it, run by the node
    with a stand-in tool; the call untouched when no environment answers it."""

    def __init__(self, tools: Mapping[str, Any], specs: Mapping[str, ToolSpec | None]) -> None:
        self._tools = dict(tools)
        self._specs = dict(specs)

    def sync(self, request: Any, execute: Callable[[Any], Any]) -> Any:
        token = _DECIDED.set(_call_key(request))
        try:
            return execute(self._answered(request))
        finally:
            _DECIDED.reset(token)

    async def run_async(self, request: Any, execute: Callable[[Any], Awaitable[Any]]) -> Any:
        token = _DECIDED.set(_call_key(request))
        try:
            return await execute(self._answered(request))
        finally:
            _DECIDED.reset(token)

    def _answered(self, request: Any) -> Any:
        environment = current_environment()
        tool = request.tool
        if environment is None or tool is None:  # no trial's mocks; a tool the node lacks
            return request
        call = request.tool_call
        name = str(call["name"])
        spec = self._specs.get(name) if self._tools.get(name) is tool else spec_of(tool)
        outcome: Answer | BaseException
        try:
            answer = environment.answer(name, call.get("args") or {}, spec)
        except Exception as error:  # unmocked, replay miss, bad arguments: the tool raises it
            outcome = error
        else:
            if answer is None:
                return request
            outcome = answer
        return request.override(tool=_stand_in(tool, outcome))


def _call_key(request: Any) -> tuple[str, str | None]:
    call = request.tool_call
    return str(call["name"]), call.get("id")


def _stand_in(tool: Any, outcome: Answer | BaseException) -> Any:
    """A tool of `tool`'s name, description and call schema (so LangChain validates the
    arguments as it would for `tool`, and handles errors by its flags) that gives `outcome`."""
    schema = tool.args_schema if isinstance(tool.args_schema, dict) else tool.tool_call_schema
    return _stand_in_class()(
        name=tool.name,
        description=tool.description,
        args_schema=schema,
        handle_tool_error=tool.handle_tool_error,
        handle_validation_error=tool.handle_validation_error,
        tags=tool.tags,
        metadata=tool.metadata,
        outcome=outcome,
    )


@functools.cache
def _stand_in_class() -> type[Any]:
    """The stand-in tool class, made on first use: it subclasses LangChain's `BaseTool`, which
    importing agenteval must not import."""
    from langchain_core.tools import BaseTool

    class AnsweredTool(BaseTool):
        """A tool call answered by the trial's environment: its `outcome` (an `Answer`, given
        after its latency, or an exception raised) in place of the tool's own run."""

        outcome: Any = None

        def _run(self, *args: Any, **kwargs: Any) -> Any:
            if isinstance(self.outcome, BaseException):
                raise self.outcome
            return self.outcome.settle_sync()

        async def _arun(self, *args: Any, **kwargs: Any) -> Any:
            if isinstance(self.outcome, BaseException):
                raise self.outcome
            return await self.outcome.settle()

    return AnsweredTool


class ToolGuard:
    """One trial's guard on the tools run outside an answering `ToolNode` (see the module): a
    LangChain callback handler (`handler()`) whose `on_tool_start` raises what the environment
    says the call raises, and refuses a mocked result it cannot give."""

    def __init__(self, environment: ToolEnvironment) -> None:
        self.environment = environment

    def handler(self) -> Any:
        """The callback handler to run the trial with (`config["callbacks"]`)."""
        return _guard_class()(self)

    def check(self, name: str, inputs: Any, tool_call_id: str | None) -> None:
        """Raise, before the tool runs, what its call raises in this trial: the mock's error,
        an unmocked or replay-missed call's, or the refusal of a result given outside a
        `ToolNode`; return to let the tool run."""
        if _DECIDED.get() == (name, tool_call_id):
            return
        if not isinstance(inputs, Mapping) and name in self.environment.mocks:
            # Called with a plain string (`tool.invoke("Oslo")`): no argument names for a
            # `when` to match, so whether the mock answers cannot be said. Never run live.
            raise self.environment.refuse(
                FailureCause.UNMOCKED_TOOL,
                UnmockedToolError(
                    f"{name} is mocked, but it was called with a plain input rather than its "
                    "arguments by name (tool.invoke(text) in a node of the graph's own), so "
                    "agenteval cannot tell which of its mock's rules applies; the real tool did "
                    "not run. Call it with a mapping of its arguments, or through a ToolNode"
                ),
            )
        args = dict(inputs) if isinstance(inputs, Mapping) else {}
        answer = self.environment.answer(name, args)
        if answer is None:
            return
        if answer.error is not None:
            raise answer.error
        mocked = answer.kind == "mock"
        text = (
            f"{name} is {'mocked' if mocked else 'answered by the replayed run'}, but it was "
            "called outside a LangGraph ToolNode agenteval answers for (by a node of the "
            "graph's own, a ToolNode subclass, or a graph run inside a node), where agenteval "
            "can raise an error for it but cannot give its result; the real tool did not run. "
            "Call it through a ToolNode (or add the inner graph as a node), or have it call a "
            "function decorated with @agenteval.tool, and mock that"
        )
        if mocked:
            raise self.environment.refuse(FailureCause.UNMOCKED_TOOL, UnmockedToolError(text))
        raise self.environment.refuse(FailureCause.REPLAY_MISS, ReplayMissError(text))


@functools.cache
def _guard_class() -> type[Any]:
    """The guard's callback handler class, made on first use (it subclasses LangChain's)."""
    from langchain_core.callbacks import BaseCallbackHandler

    class Guard(BaseCallbackHandler):
        """Raises from `on_tool_start` what `ToolGuard.check` says the call raises."""

        raise_error = True  # what it raises is the tool's outcome, not a broken callback
        run_inline = True  # in the tool's own context, before it runs

        def __init__(self, guard: ToolGuard) -> None:
            self.guard = guard

        def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
            name = (serialized or {}).get("name") if isinstance(serialized, Mapping) else None
            if name:
                self.guard.check(str(name), kwargs.get("inputs"), kwargs.get("tool_call_id"))

    return Guard
