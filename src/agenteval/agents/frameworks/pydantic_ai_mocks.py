"""Tool mocks and replay for pydantic-ai agents (`pydantic_ai.PydanticAIAgent`): the per-run
capability through which a trial's environment (`agents/environment.py`) answers the run's tool
calls.

The capability (given to each run beside the one that observes the tools offered) wraps the run's
assembled toolset (`get_wrapper_toolset`), so each call pydantic-ai has validated reaches
`env.answer` where the tool would run (`call_tool`). A mocked or replayed call gets its answer
after the latency, and the tool never runs; an injected error is raised there, so the hooks of the
agent's own capabilities (`on_tool_execute_error`, turning it into a `ModelRetry` say) see it as
the tool's. Arguments that fail pydantic-ai's validation never reach the mock: they take
pydantic-ai's own retry path, as for a real call. The user's agent is not changed: the capability
is given to each run (`capabilities=`), never added to the agent.

The arguments the environment sees are the model's, as the trial records them (pydantic-ai
has validated them; its defaults are not added): a `when`, a replayed call and the recorded
call then agree, and the engine marks the recorded call as answered.
"""

from __future__ import annotations

import contextvars
import functools
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_jsonable_python

from agenteval.agents.environment import ToolEnvironment
from agenteval.agents.frameworks.base import tool_arguments
from agenteval.errors import AgentLoadError

__all__ = ["answering_capability", "answers"]


@dataclass(frozen=True)
class _Asked:
    """The call pydantic-ai is executing, as the model made it (its arguments as recorded)."""

    name: str
    call_id: str
    arguments: dict[str, Any]


_ASKED: contextvars.ContextVar[_Asked | None] = contextvars.ContextVar(
    "agenteval_pydantic_ai_asked", default=None
)
"""Set around the execution of each call (`wrap_tool_execute`, which sees the call), read where
the tool would run (`call_tool`, which sees only the validated arguments)."""


def answers(environment: ToolEnvironment) -> bool:
    """Whether the trial's environment may answer a call in place of a tool (a state alone
    never does: then the run's tools are left as they are)."""
    return bool(environment.mocks or environment.replay is not None or environment.mocks_only)


def answering_capability(environment: ToolEnvironment) -> Any:
    """The per-run capability through which `environment` answers the run's tool calls."""
    answering = _answering_class()
    if answering is None:
        raise AgentLoadError(
            "this pydantic-ai is too old for agenteval to mock or replay its agents' tools (it "
            "needs the capabilities' get_wrapper_toolset and wrap_tool_execute)",
            hint="pip install -U 'agenteval[pydantic-ai]'",
        )
    return answering(environment)


@functools.cache
def _answering_class() -> type[Any] | None:
    """The capability that has the trial's environment answer the run's tool calls in place of
    the tools (see the module); None for a pydantic-ai without the hooks it needs."""
    try:
        from pydantic_ai.capabilities import AbstractCapability
        from pydantic_ai.toolsets import WrapperToolset
    except ImportError:
        return None
    hooks = ("get_wrapper_toolset", "wrap_tool_execute")
    if not all(hasattr(AbstractCapability, hook) for hook in hooks):
        return None

    @dataclass
    class Answered(WrapperToolset[Any]):
        """The run's tools, each call first asked of the environment: its answer, or the tool
        (`None`: nothing mocks or replays it). Raised here, an error is the tool's."""

        environment: ToolEnvironment

        async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
            # No `spec`: pydantic-ai has validated the arguments against the tool's own
            # validator (the source of its JSON schema, and laxer: "3" for an int passes), and
            # sent invalid ones back to the model; the schema would only refuse what it took.
            answer = self.environment.answer(name, _arguments(name, tool_args, ctx))
            if answer is None:
                return await super().call_tool(name, tool_args, ctx, tool)
            return await answer.settle()

    class Answering(AbstractCapability[Any]):
        """Puts `Answered` around the run's tools, and notes the call being executed."""

        def __init__(self, environment: ToolEnvironment) -> None:
            self.environment = environment

        def get_wrapper_toolset(self, toolset: Any) -> Any:
            return Answered(toolset, self.environment)

        async def wrap_tool_execute(
            self, ctx: Any, *, call: Any, tool_def: Any, args: Any, handler: Any
        ) -> Any:
            asked = _Asked(call.tool_name, call.tool_call_id, tool_arguments(call.args))
            token = _ASKED.set(asked)
            try:
                return await handler(args)
            finally:
                _ASKED.reset(token)

    return Answering


def _arguments(name: str, validated: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The arguments a mock or the replay sees: the model's, as the trial records them (so a
    `when`, a replayed call and the recorded call agree; pydantic-ai has validated them, and
    its defaults are not added), else the validated ones as plain data (a call some wrapper
    makes on its own)."""
    asked = _ASKED.get()
    if asked is not None and asked.name == name and asked.call_id == ctx.tool_call_id:
        return asked.arguments
    plain = to_jsonable_python(validated, fallback=str)
    return plain if isinstance(plain, dict) else {"input": plain}
