"""`@agenteval.tool`: mark a function as a tool so every call made during a trial is recorded.

The function's signature gives the tool's JSON schema, which `tool_arguments_valid` checks calls
against. Every decorated tool is listed in `known_tools()`, and a run stores that list.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from types import MappingProxyType, TracebackType
from typing import Any, TypeVar, cast, overload

from pydantic import BaseModel, ConfigDict, TypeAdapter, create_model

from agenteval.agents.environment import Answer
from agenteval.agents.recorder import (
    TrialRecorder,
    current_recorder,
    monotonic,
    note_unrecorded_call,
)
from agenteval.jsonsafe import CUT_HEAD, plain_copy
from agenteval.trace import (
    ToolCall,
    ToolSpec,
)  # the model's; re-exported here, where tools are made

__all__ = ["ToolSpec", "error_text", "known_tools", "registered_tools", "tool"]

F = TypeVar("F", bound=Callable[..., Any])


_REGISTRY: dict[str, ToolSpec] = {}
_LIVE = MappingProxyType(_REGISTRY)


def known_tools() -> dict[str, ToolSpec]:
    """Every tool declared with `@agenteval.tool` so far, by name (a copy)."""
    return dict(_REGISTRY)


def registered_tools() -> Mapping[str, ToolSpec]:
    """The live, read-only registry: tools declared later appear in it too."""
    return _LIVE


def _describable(annotation: Any) -> Any:
    """The annotation if JSON Schema can describe it, else Any (a connection, a client...)."""
    try:
        TypeAdapter(annotation).json_schema()
    except Exception:  # pydantic refuses the type: the argument is then unconstrained
        return Any
    return annotation


def _parameters_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # an annotation that does not resolve: leave that argument unconstrained
        hints = {}
    fields: dict[str, Any] = {}
    open_ended = False
    for param in inspect.signature(fn).parameters.values():
        if param.kind is param.VAR_KEYWORD:
            open_ended = True
            continue
        if param.kind is param.VAR_POSITIONAL:
            continue
        annotation = _describable(hints.get(param.name, Any))
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    model = create_model(
        f"{fn.__name__}_arguments",
        __config__=ConfigDict(extra="allow" if open_ended else "forbid"),
        **fields,
    )
    schema = cast(type[BaseModel], model).model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def _snapshot(value: Any) -> Any:
    """The value as JSON-like data, taken now: what is scored live is what is stored (and
    rescored), and an agent that later changes the object it got back changes nothing.

    Never raises, and never touches the value: a circular or very deep value is copied cut
    (`jsonsafe`), so the tool call goes on exactly as without agenteval. Secret-named keys are
    masked when the trial is stored, in one place for every source of tool calls.
    """
    try:
        return plain_copy(value)[0]
    except Exception as exc:  # not even a cut copy (the stack is nearly full, say)
        return f"{CUT_HEAD}could not be recorded ({type(exc).__name__})>"


def error_text(exc: BaseException) -> str:
    """How a tool's error is recorded, by `@tool` and the framework agents alike: its type and
    message (the type alone when it has none; the message may fail to print)."""
    try:
        message = str(exc)
    except Exception:
        message = "<the message could not be read>"
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _bind(
    signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any]:
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        # Record what the caller passed even when it does not fit; the call itself will fail.
        named = dict(zip(signature.parameters, args, strict=False))
        return {**named, **kwargs}
    arguments = dict(bound.arguments)
    for name, param in signature.parameters.items():
        if param.kind is param.VAR_KEYWORD and name in arguments:
            arguments.update(arguments.pop(name))
    return arguments


class _Recording:
    """One call of a tool recorded in the trial: its arguments when it starts, its error when it
    raises (a CancelledError or KeyboardInterrupt too: the call failed, whatever ended it), and
    its duration. The caller records the result."""

    __slots__ = ("_call", "_start")

    def __init__(self, recorder: TrialRecorder, tool_name: str, arguments: dict[str, Any]) -> None:
        self._call = recorder.start_tool_call(tool_name, _snapshot(arguments))
        self._start = 0.0

    def __enter__(self) -> ToolCall:
        self._start = monotonic()
        return self._call

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if exc is not None:
            self._call.error = error_text(exc)
        self._call.duration_s = monotonic() - self._start


def _answered(
    recorder: TrialRecorder,
    call: ToolCall,
    arguments: dict[str, Any],
    spec: ToolSpec,
    defaults: dict[str, Any],
) -> Answer | None:
    """The trial environment's answer in the tool's place (a mock, the replay), the call
    marked so; None when the tool runs (no environment, or nothing answers)."""
    environment = recorder.environment
    if environment is None:
        return None
    answer = environment.answer(spec.name, arguments, spec, defaults=defaults)
    if answer is not None:
        call.mocked = answer.kind
    return answer


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(*, name: str | None = None, description: str | None = None) -> Callable[[F], F]: ...


def tool(
    fn: F | None = None, /, *, name: str | None = None, description: str | None = None
) -> F | Callable[[F], F]:
    """Mark a function (sync or async) as a tool of the agent.

    Each call made while a trial runs is recorded in that trial: name, arguments, result or
    error, start time and duration. A mock or a replayed run the trial's environment holds
    (`agents/environment.py`) answers in its place, the call marked so. Outside a trial the
    function runs unchanged.
    """

    def decorate(func: F) -> F:
        tool_name = name or func.__name__
        spec = ToolSpec(
            name=tool_name,
            description=description or inspect.getdoc(func) or "",
            parameters=_parameters_schema(func),
        )
        _REGISTRY[tool_name] = spec
        signature = inspect.signature(func)
        # What a mock's `when` sees of the arguments a call leaves out.
        defaults = {
            name: param.default
            for name, param in signature.parameters.items()
            if param.default is not inspect.Parameter.empty
        }

        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                recorder = current_recorder()
                if recorder is None:
                    note_unrecorded_call(tool_name)
                    return await func(*args, **kwargs)
                arguments = _bind(signature, args, kwargs)
                with _Recording(recorder, tool_name, arguments) as call:
                    answer = _answered(recorder, call, arguments, spec, defaults)
                    result = (
                        await func(*args, **kwargs) if answer is None else await answer.settle()
                    )
                    call.result = _snapshot(result)
                    return result

            wrapper: Any = async_wrapper
        else:

            @functools.wraps(func)
            def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
                recorder = current_recorder()
                if recorder is None:
                    note_unrecorded_call(tool_name)
                    return func(*args, **kwargs)
                arguments = _bind(signature, args, kwargs)
                with _Recording(recorder, tool_name, arguments) as call:
                    answer = _answered(recorder, call, arguments, spec, defaults)
                    result = func(*args, **kwargs) if answer is None else answer.settle_sync()
                    call.result = _snapshot(result)
                    return result

            wrapper = sync_wrapper
        wrapper.tool_spec = spec
        return cast(F, wrapper)

    if fn is not None:
        return decorate(fn)
    return decorate
