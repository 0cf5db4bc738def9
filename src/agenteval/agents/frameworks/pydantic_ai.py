"""A pydantic-ai agent (`Agent`, a `WrapperAgent`, any `AbstractAgent`) run by agenteval.

Each user turn of a case is one run of the agent (`agent.iter`, driven to its end as `agent.run`
drives it, so that a run that raises still gives the messages it made), the next turn continuing
from the previous run's `all_messages()` as its `message_history`. A case whose input is a list
of messages starts from them as the history. What a trial records is read from each run's new
messages: the tool calls (`ToolCallPart`) and their returns (`ToolReturnPart`, paired by
`tool_call_id`), a return the framework marks `retried` (the tool raised `ModelRetry`, its
arguments failed validation, the tool is unknown) as the call's error and one `tool_retry`, the
usage and model of every `ModelResponse`, and the run's `output` as the answer (structured output
as JSON text). Output tools (`final_result`) are how pydantic-ai carries a structured answer, not
a tool the agent called: they are left out, and a retry of one counts as `output_retry`.

The tools offered are pydantic-ai's own `ToolDefinition`s: read during the run by a capability
agenteval adds to it (`prepare_tools` / `prepare_output_tools`, observe-only), so tools a
`prepare` function or a dynamic toolset offers are the ones recorded; before any run, from the
function toolsets among `agent.toolsets` (inside prefixed, renamed and combined ones too).

Tool mocks and replay: a second per-run capability has the trial's environment answer the tool
calls where the tools would run (`pydantic_ai_mocks.py`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, cast

import pydantic_ai.messages as pai_messages
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.toolsets import (
    CombinedToolset,
    FunctionToolset,
    PrefixedToolset,
    RenamedToolset,
    WrapperToolset,
)
from pydantic_core import to_json

from agenteval.agents.frameworks.base import FrameworkAgent, TrialBuilder, conversation
from agenteval.agents.frameworks.pydantic_ai_mocks import answering_capability, answers
from agenteval.agents.recorder import record_retry
from agenteval.agents.tools import error_text
from agenteval.agents.trial_state import current_environment
from agenteval.case import EvalCase, Message
from agenteval.errors import AgentLoadError
from agenteval.trace import ToolSpec, Trial, Usage

__all__ = ["PydanticAIAgent"]

# Retry parts some pydantic-ai releases have and others not: `RetryPromptPart` (older ones; now
# deprecated, split into `ToolReturnPart(outcome='retried')` and `RetryFeedbackPart`, newer).
_RETRY_PROMPT: Any = getattr(pai_messages, "RetryPromptPart", ())
_RETRY_FEEDBACK: Any = getattr(pai_messages, "RetryFeedbackPart", ())
# Calls and returns of function tools and of the provider's own (native) tools alike.
_TOOL_CALL: Any = getattr(pai_messages, "BaseToolCallPart", pai_messages.ToolCallPart)
_TOOL_RETURN: Any = getattr(pai_messages, "BaseToolReturnPart", pai_messages.ToolReturnPart)

_NOT_EXECUTED = "Tool not executed - a final result was already processed."
"""What pydantic-ai answers a function tool call it did not run because an output tool of the
same response already gave the final result (`end_strategy='early'`), as a successful return."""

TOOL_RETRY = "tool_retry"
"""The retry reason of a tool call the framework answered `retried`: the tool raised
`ModelRetry`, its arguments failed validation, or the model named a tool that does not exist."""
OUTPUT_RETRY = "output_retry"
"""The retry reason of an answer the framework sent back: a structured output (or an output
tool's arguments) that failed validation, or an output validator raising `ModelRetry`."""

DepsFactory = Callable[..., Any]
"""Makes one trial's `deps`: called with no argument, or with the case when it takes one; may be
async."""


class PydanticAIAgent(FrameworkAgent):
    """A pydantic-ai agent as agenteval runs it, one fresh run (or chain of runs, one per user
    turn) per trial.

    `deps`: for an agent that declares `deps_type`, a factory making the deps of one trial
    (called once per trial, so concurrent trials never share them; with the case as its one
    argument when it takes one; sync or async). Without it the agent runs with `deps=None`, and
    an agent declaring a `deps_type` is refused (wrap it: `PydanticAIAgent(agent, deps=...)`).
    `model`: the model every run uses instead of the agent's own (what `agent.run(model=...)`
    takes), to evaluate one agent on several models, or one built without a model.
    """

    framework = "pydantic-ai"

    def __init__(self, agent: Any, *, deps: DepsFactory | None = None, model: Any = None) -> None:
        if isinstance(agent, type) or not isinstance(agent, AbstractAgent):
            raise AgentLoadError(
                f"{_describe(agent)} is not a pydantic-ai agent agenteval can run",
                hint="pass the pydantic-ai Agent itself (an instance of pydantic_ai.Agent)",
            )
        if _offered_class() is None:
            raise AgentLoadError(
                "this pydantic-ai is too old for agenteval to read the tools its agents offer "
                "(it needs pydantic-ai's capabilities, with prepare_tools and "
                "prepare_output_tools)",
                hint="pip install -U 'agenteval[pydantic-ai]'",
            )
        if model is None and getattr(agent, "model", None) is None:
            raise AgentLoadError(
                f"pydantic-ai agent {_agent_name(agent)!r} has no model, and agenteval does not "
                "choose one for it",
                hint=(
                    "give the agent its model (Agent('openai:gpt-4o-mini', ...)), or wrap it: "
                    "`agent = PydanticAIAgent(my_agent, model='openai:gpt-4o-mini')`"
                ),
            )
        if deps is not None and not callable(deps):
            raise AgentLoadError(
                f"deps={deps!r} is not a factory: agenteval makes fresh deps for each trial",
                hint="pass a function returning the deps, e.g. deps=lambda: MyDeps(...)",
            )
        deps_type = _deps_type(agent)
        if deps is None and deps_type is not None:
            raise AgentLoadError(
                f"pydantic-ai agent {_agent_name(agent)!r} declares deps_type="
                f"{getattr(deps_type, '__name__', deps_type)}, and agenteval has no deps to "
                "give its runs",
                hint=(
                    "in your agent module, wrap it with a factory making each trial's deps: "
                    "`from agenteval.agents.frameworks.pydantic_ai import PydanticAIAgent`; "
                    "`agent = PydanticAIAgent(my_agent, deps=make_deps)`, and point agenteval "
                    "at that"
                ),
            )
        super().__init__(agent)
        self._deps = deps
        self._model = model

    @property
    def name(self) -> str:
        return _agent_name(self.agent)

    def tool_specs(self) -> dict[str, ToolSpec]:
        """The function tools registered on the agent (its function toolsets among
        `agent.toolsets`, also inside prefixed, renamed and combined ones, by the names the
        model is offered), read without a run; a run records what it actually offered (an MCP
        server's or a dynamic toolset's tools are known only then)."""
        specs: dict[str, ToolSpec] = {}
        for toolset in self.agent.toolsets:
            specs.update(_registered(toolset))
        return specs

    def tools_complete(self) -> bool:
        return all(_all_registered(toolset) for toolset in self.agent.toolsets)

    async def run_case(self, case: EvalCase) -> Trial:
        talk = conversation(case)
        # The tools as the run offered them first; then those it never offered, as registered.
        builder = TrialBuilder(talk, {})
        registered = self.tool_specs()
        offered: Any = cast("type[Any]", _offered_class())()  # not None: __init__ checked
        capabilities = [offered]
        environment = current_environment()
        if environment is not None and answers(environment):
            capabilities.append(answering_capability(environment))
        reader = _Reader(builder, offered)
        history: list[Any] = _history(talk.history)
        deps = await self._make_deps(case)
        with builder.kept_on_failure():
            async for turn in talk.play(builder):
                builder.visit(self.name)
                run: Any = None
                try:
                    async with self.agent.iter(
                        turn,
                        message_history=history,
                        deps=deps,
                        model=self._model,
                        capabilities=capabilities,
                        infer_name=False,  # pydantic-ai would rename the user's agent
                    ) as run:
                        async for _node in run:
                            pass
                finally:
                    # Also when the run raised: the calls made before are the failed trial's.
                    for spec in offered.tools.values():
                        builder.declare(_spec(spec))
                    for registered_spec in registered.values():
                        builder.declare(registered_spec)
                    if run is not None:
                        reader.read(_new_messages(run, len(history)), _run_usage(run))
                    # A tool that raised out of the run: no message answers its call.
                    for call_id, error in offered.errors.items():
                        builder.result(call_id, error=error)
                    offered.errors.clear()
                result = run.result
                history = list(result.all_messages())
                builder.answer(_answer(result.output))
        return builder.build()

    async def _make_deps(self, case: EvalCase) -> Any:
        if self._deps is None:
            return None
        made = self._deps(case) if _takes_an_argument(self._deps) else self._deps()
        return await made if inspect.isawaitable(made) else made


@functools.cache
def _offered_class() -> type[Any] | None:
    """The capability that observes, without changing them, the tools a run offers the model:
    its function tools (`tools`, by name) and its output tools (`output_names`); None for a
    pydantic-ai without capabilities. One instance per trial; pydantic-ai copies a capability
    per run, so what it sees goes into containers the copies share."""
    try:
        from pydantic_ai.capabilities import AbstractCapability
    except ImportError:
        return None
    if not all(hasattr(AbstractCapability, h) for h in ("prepare_tools", "prepare_output_tools")):
        return None

    class Offered(AbstractCapability[Any]):
        """Sees the tools each step of a run offers and passes them on unchanged."""

        def __init__(self) -> None:
            self.tools: dict[str, Any] = {}
            self.output_names: set[str] = set()
            self.errors: dict[str, str] = {}
            """What each tool that raised raised, by call id: a run that raises leaves no
            message answering that call, so the trial's call gets its error from here."""

        async def prepare_tools(self, ctx: Any, tool_defs: list[Any]) -> list[Any]:
            for tool in tool_defs:
                self.tools[tool.name] = tool
            return tool_defs

        async def prepare_output_tools(self, ctx: Any, tool_defs: list[Any]) -> list[Any]:
            self.output_names.update(tool.name for tool in tool_defs)
            return tool_defs

        async def on_tool_execute_error(
            self, ctx: Any, *, call: Any, tool_def: Any, args: Any, error: Exception
        ) -> Any:
            self.errors[str(call.tool_call_id)] = error_text(error)
            raise error

    return Offered


class _Reader:
    """Reads one run's new messages into the trial: calls, returns, retries, model calls."""

    def __init__(self, builder: TrialBuilder, offered: Any) -> None:
        self._builder = builder
        self._offered = offered
        self._output_calls: set[str] = set()

    def _is_output_tool(self, name: str | None) -> bool:
        return name is not None and name in self._offered.output_names

    def read(self, messages: Sequence[ModelMessage], run_usage: Usage | None) -> None:
        spent = Usage()
        for message in messages:
            if isinstance(message, ModelResponse):
                spent = spent + self._response(message)
            elif isinstance(message, ModelRequest):
                for part in message.parts:
                    self._return_part(part)
        if run_usage is not None:
            # Usage the run counted beyond its responses' (a delegate agent run with
            # `usage=ctx.usage`, a response a capability rejected): real spending, of no
            # model the messages name.
            rest = Usage(
                input_tokens=max(0, run_usage.input_tokens - spent.input_tokens),
                output_tokens=max(0, run_usage.output_tokens - spent.output_tokens),
                cached_tokens=max(0, run_usage.cached_tokens - spent.cached_tokens),
                reasoning_tokens=max(0, run_usage.reasoning_tokens - spent.reasoning_tokens),
            )
            if rest.total_tokens or rest.cached_tokens or rest.reasoning_tokens:
                self._builder.model_call("unknown", rest)

    def _response(self, response: ModelResponse) -> Usage:
        for part in response.parts:
            if isinstance(part, _TOOL_CALL):
                if self._is_output_tool(part.tool_name):
                    self._output_calls.add(part.tool_call_id)
                else:
                    self._builder.call(part.tool_name, part.args, part.tool_call_id)
            elif isinstance(part, _TOOL_RETURN):  # a provider's own tool answers in its response
                self._return_part(part)
        usage = _usage(response.usage)
        # pydantic-ai counts a response that carried no usage (a proxy that strips it) as an
        # `unmeasured_requests` of 0 tokens: its cost is unknown, never free.
        unmeasured = bool(getattr(response.usage, "unmeasured_requests", 0))
        self._builder.model_call(
            response.model_name or "unknown",
            usage,
            provider=response.provider_name,
            unrecorded=_NO_USAGE if unmeasured else None,
        )
        return usage

    def _return_part(self, part: Any) -> None:
        """A tool's answer (its result or its error), or pydantic-ai's word that it retries."""
        if isinstance(part, _TOOL_RETURN):
            outcome = getattr(part, "outcome", "success")
            if part.tool_call_id in self._output_calls or self._is_output_tool(part.tool_name):
                if outcome == "retried":
                    record_retry(OUTPUT_RETRY)
                return
            if outcome == "success" and part.content == _NOT_EXECUTED:
                # pydantic-ai's stub for a call it skipped (`end_strategy='early'`): asked for,
                # never run, and the trial says so rather than pass it as a call that worked.
                error = f"not executed: {_NOT_EXECUTED} (end_strategy='early')"
                self._builder.result(part.tool_call_id, error=error, name=part.tool_name)
                return
            if outcome == "success":
                self._builder.result(part.tool_call_id, part.content, name=part.tool_name)
                return
            text = _text(part.content)
            error = text if outcome in ("failed", "retried") else f"{outcome}: {text}"
            self._builder.result(part.tool_call_id, error=error, name=part.tool_name)
            if outcome == "retried":
                record_retry(TOOL_RETRY)
        elif isinstance(part, _RETRY_PROMPT):  # pydantic-ai before `outcome='retried'`
            if part.tool_name is None or self._is_output_tool(part.tool_name):
                record_retry(OUTPUT_RETRY)
                return
            self._builder.result(part.tool_call_id, error=part.model_response(), name=None)
            record_retry(TOOL_RETRY)
        elif isinstance(part, _RETRY_FEEDBACK):
            record_retry(OUTPUT_RETRY)


def _history(messages: Sequence[Message]) -> list[ModelMessage]:
    """A case's messages before its first turn as pydantic-ai's history: user and system
    messages as requests (consecutive ones in one request), assistant messages as responses."""
    history: list[ModelMessage] = []
    pending: list[Any] = []
    for message in messages:
        if message.role == "assistant":
            if pending:
                history.append(ModelRequest(parts=pending))
                pending = []
            history.append(ModelResponse(parts=[TextPart(message.content)]))
        elif message.role == "system":
            pending.append(SystemPromptPart(message.content))
        else:
            pending.append(UserPromptPart(message.content))
    if pending:
        history.append(ModelRequest(parts=pending))
    return history


def _all_registered(toolset: Any) -> bool:
    """Whether `_registered` lists every tool of `toolset` (function toolsets, also wrapped or
    combined); an MCP server's or a dynamic toolset's tools are known only in a run."""
    if isinstance(toolset, FunctionToolset):
        return True
    if isinstance(toolset, CombinedToolset):
        return all(_all_registered(child) for child in toolset.toolsets)
    return isinstance(toolset, WrapperToolset) and _all_registered(toolset.wrapped)


def _registered(toolset: Any) -> dict[str, ToolSpec]:
    """The function tools under `toolset`, by the names a run offers them under (a prepare
    function or a filter, which only a run applies, left out)."""
    if isinstance(toolset, FunctionToolset):
        return {tool.name: _spec(tool.tool_def) for tool in toolset.tools.values()}
    if isinstance(toolset, CombinedToolset):
        merged: dict[str, ToolSpec] = {}
        for child in toolset.toolsets:
            merged.update(_registered(child))
        return merged
    if not isinstance(toolset, WrapperToolset):
        return {}
    inner = _registered(toolset.wrapped)
    if isinstance(toolset, PrefixedToolset):
        names = {name: f"{toolset.prefix}_{name}" for name in inner}
    elif isinstance(toolset, RenamedToolset):
        names = {original: new for new, original in toolset.name_map.items()}
    else:
        return inner
    return {
        names.get(name, name): ToolSpec(
            name=names.get(name, name), description=spec.description, parameters=spec.parameters
        )
        for name, spec in inner.items()
    }


_NO_USAGE = (
    "a model response carried no token usage (pydantic-ai's `unmeasured_requests`: the server "
    "or a proxy left `usage` out), so what it cost is unknown, not zero"
)


def _spec(tool: Any) -> ToolSpec:
    return ToolSpec(
        name=tool.name,
        description=tool.description or "",
        parameters=dict(tool.parameters_json_schema or {}),
    )


def _usage(usage: Any) -> Usage:
    """pydantic-ai's usage (`RequestUsage`, `RunUsage`) in agenteval's words."""
    if usage is None:
        return Usage()
    details = getattr(usage, "details", None) or {}
    return Usage(
        input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
        cached_tokens=int(getattr(usage, "cache_read_tokens", 0) or 0),
        reasoning_tokens=int(details.get("reasoning_tokens", 0) or 0),
    )


def _new_messages(run: Any, history: int) -> list[ModelMessage]:
    """The messages this run added to the history it was given (also after it raised)."""
    new_messages = getattr(run, "new_messages", None)
    if callable(new_messages):
        return list(new_messages())
    return list(run.all_messages())[history:]


def _run_usage(run: Any) -> Usage | None:
    """The run's whole usage (`usage`, a method in older pydantic-ai, a property now)."""
    usage = getattr(run, "usage", None)
    if usage is not None and not hasattr(usage, "input_tokens") and callable(usage):
        usage = usage()
    return None if usage is None else _usage(usage)


def _answer(output: Any) -> str | None:
    """The run's output as the turn's answer: text as it is, structured output as JSON."""
    if output is None or isinstance(output, str):
        return output
    return to_json(output, fallback=str).decode()


def _text(content: Any) -> str:
    return content if isinstance(content, str) else to_json(content, fallback=str).decode()


def _deps_type(agent: Any) -> Any:
    """The agent's declared deps type, None when it declares none."""
    try:
        deps_type = agent.deps_type
    except Exception:  # a custom AbstractAgent that does not say
        return None
    # An agent that declares none says `NoneType` (`object` in recent pydantic-ai).
    return None if deps_type in (None, type(None), object, Any) else deps_type


def _agent_name(agent: Any) -> str:
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else type(agent).__name__


def _describe(obj: Any) -> str:
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    return f"{type(obj).__module__}.{type(obj).__qualname__} object"


def _takes_an_argument(factory: DepsFactory) -> bool:
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.kind is p.VAR_POSITIONAL
        or (p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty)
        for p in parameters
    )
