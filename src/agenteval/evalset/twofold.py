"""`ClassOrInstanceMethod`: one method name with two forms, for a class that answers two APIs.

`AgentEvaluator.evaluate` is Google ADK's static call on the class
(`await AgentEvaluator.evaluate(agent_module="my_agent", eval_dataset_file_path_or_dir=...)`)
and agenteval's method on an instance (`await AgentEvaluator(agent, config).evaluate(eval_set)`).
The attribute is this descriptor: read on the class it gives the class form bound to the class
(as a `classmethod` would), read on an instance the instance form bound to the instance. Both
forms are plain functions written in the class body, each typed; `help()` and the docstring of
each form stay their own.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

__all__ = ["ClassOrInstanceMethod"]

S = TypeVar("S")
P = ParamSpec("P")
R = TypeVar("R")
Q = ParamSpec("Q")
T = TypeVar("T")


class ClassOrInstanceMethod(Generic[S, P, R, Q, T]):
    """A method that is `on_class(cls, ...)` when read on the class and `on_instance(self, ...)`
    when read on an instance. Use it when one name must keep two established calling
    conventions (ADK's static `evaluate` and agenteval's instance `evaluate`); a subclass
    reading it gets itself as `cls`."""

    def __init__(
        self,
        on_instance: Callable[Concatenate[S, P], R],
        on_class: Callable[Concatenate[type[S], Q], T],
    ) -> None:
        self.on_instance = on_instance
        self.on_class = on_class
        self.__doc__ = on_instance.__doc__

    @overload
    def __get__(self, instance: None, owner: type[S]) -> Callable[Q, T]: ...

    @overload
    def __get__(self, instance: S, owner: type[S] | None = None) -> Callable[P, R]: ...

    def __get__(self, instance: S | None, owner: type[S] | None = None) -> Callable[..., Any]:
        if instance is None:
            if owner is None:  # not reached: Python passes the owner when reading on a class
                raise AttributeError("a class-or-instance method is read on a class")
            return cast(Callable[..., Any], types.MethodType(self.on_class, owner))
        return cast(Callable[..., Any], types.MethodType(self.on_instance, instance))
