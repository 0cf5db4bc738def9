"""Reading what an OpenAI Agents SDK run records into a trial (`openai_agents.py` runs it).

Where each part of the trial comes from:
- tool calls and their outputs: the run's items (`ToolCallItem`, `ToolCallOutputItem`), in the
  order the model asked, paired by call id (so parallel calls pair up). A run that raises
  keeps no items of its last model turn, so the function tools the SDK started are also seen
  live (the `on_tool_start` / `on_tool_end` run hooks, whose context names the call id): those
  the items never report are added when the run fails;
- a tool's error: the SDK turns a function tool's exception into a fixed message for the model
  (`default_tool_error_function`), which says nothing of the error; the run config's
  `tool_error_formatter`, which the SDK hands the exception first, records it by call id (a
  tool answering its errors by a handler of its own is noted by the copy of
  `openai_agents_mock.py`, `RunReader.tool_failed`);
- the agents that ran (`on_agent_start`: the starting agent, then each handoff's target) as
  node visits, and each model call with its usage (`on_llm_end`: the agent that asked, so the
  model named is the one that answered, for pricing), as they happen;
- the final output: text as it is, a structured output (`output_type`) as JSON text.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agenteval.agents.frameworks.base import TrialBuilder, answer_text
from agenteval.agents.tools import error_text
from agenteval.case import Message
from agenteval.jsonsafe import plain_copy
from agenteval.trace import ToolSpec, Usage

if TYPE_CHECKING:
    from agents import RunConfig, RunHooks

__all__ = [
    "NO_USAGE",
    "GuardrailTrip",
    "RunReader",
    "agents_of",
    "function_tool_spec",
    "guardrail_trip",
    "input_items",
    "tool_specs_of",
]

_ROLES = frozenset({"user", "assistant", "system", "developer"})


def input_items(history: Sequence[Message]) -> list[Any]:
    """A case's earlier messages as the SDK's input items (easy input messages)."""
    items: list[Any] = []
    for message in history:
        if message.role not in _ROLES:
            raise ValueError(
                f"a message of role {message.role!r} cannot be sent to an OpenAI Agents SDK "
                f"agent as input; give the case's messages roles among {sorted(_ROLES)}"
            )
        items.append({"role": message.role, "content": message.content})
    return items


def agents_of(agent: Any) -> list[Any]:
    """`agent` and every agent reachable through its handoffs given as agents, once each."""
    from agents import Agent

    seen: dict[int, Any] = {}
    pending = [agent]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen[id(current)] = current
        pending.extend(h for h in getattr(current, "handoffs", ()) if isinstance(h, Agent))
    return list(seen.values())


def function_tool_spec(tool: Any) -> ToolSpec:
    """A `FunctionTool` as agenteval's `ToolSpec`: the JSON schema the SDK sends the model."""
    schema, _ = plain_copy(tool.params_json_schema)
    return ToolSpec(
        name=tool.name,
        description=tool.description or "",
        parameters=schema if isinstance(schema, dict) else {},
    )


def agent_tool_specs(agent: Any) -> dict[str, ToolSpec]:
    """The function tools one agent declares, with the JSON schema the SDK sends the model.
    Hosted tools (web search, file search, ...) declare no argument schema: not listed."""
    from agents import FunctionTool

    return {
        tool.name: function_tool_spec(tool)
        for tool in getattr(agent, "tools", ())
        if isinstance(tool, FunctionTool)
    }


def tools_complete_of(agent: Any) -> bool:
    """Whether `tool_specs_of(agent)` lists every function tool a run can call: not when an
    agent of the graph has MCP servers, makes its tools itself (`get_all_tools` overridden),
    or hands off through a `handoff(...)` object (its target is not public until it runs)."""
    from agents import Agent

    for each in agents_of(agent):
        if getattr(each, "mcp_servers", None):
            return False
        if type(each).get_all_tools is not Agent.get_all_tools:
            return False
        if any(not isinstance(h, Agent) for h in getattr(each, "handoffs", ())):
            return False
    return True


def tool_specs_of(agent: Any) -> dict[str, ToolSpec]:
    """The function tools of `agent` and of the agents it can hand off to (the first agent
    declaring a name wins, as a model sees one tool of a name)."""
    specs: dict[str, ToolSpec] = {}
    for each in agents_of(agent):
        for name, spec in agent_tool_specs(each).items():
            specs.setdefault(name, spec)
    return specs


def model_name(agent: Any, config: RunConfig | None) -> str:
    """The model an agent's requests go to: the run config's (it overrides every agent's),
    else the agent's own; a `Model` object by its `model` attribute (the SDK's OpenAI models
    keep the name there); no model at all means the SDK's default."""
    model = config.model if config is not None and config.model is not None else agent.model
    if model is None:
        from agents.models import get_default_model

        return get_default_model()
    if isinstance(model, str):
        return model
    named = getattr(model, "model", None)
    return named if isinstance(named, str) else type(model).__name__


NO_USAGE = (
    "a model response reported no token usage (0 input tokens: the server or a proxy left "
    "`usage` out), so what it cost is unknown, not zero"
)
"""Why a call's tokens are unknown (`not_recorded["usage"]`)."""


def usage_of(usage: Any) -> Usage:
    """The SDK's usage of one model response as agenteval's (cached tokens are part of the
    input tokens, reasoning tokens part of the output tokens, in both)."""
    input_details = getattr(usage, "input_tokens_details", None)
    output_details = getattr(usage, "output_tokens_details", None)
    return Usage(
        input_tokens=getattr(usage, "input_tokens", 0) or 0,
        output_tokens=getattr(usage, "output_tokens", 0) or 0,
        cached_tokens=getattr(input_details, "cached_tokens", 0) or 0,
        reasoning_tokens=getattr(output_details, "reasoning_tokens", 0) or 0,
    )


def _field(raw: Any, name: str) -> Any:
    """A field of a raw item, which the SDK keeps as a pydantic model or as a plain dict."""
    return raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)


def _hosted_arguments(raw: Any) -> Any:
    """What a hosted tool's call carries (its action, query, ...), without the bookkeeping."""
    dumped = raw if isinstance(raw, dict) else getattr(raw, "model_dump", lambda: {})()
    skip = {"id", "type", "status", "call_id"}
    return {key: value for key, value in dict(dumped).items() if key not in skip}


@dataclass
class _Started:
    """A function tool the SDK started (seen by the `on_tool_start` hook)."""

    name: str
    arguments: str
    ended: bool = False
    result: Any = None


class RunReader:
    """What one trial's runs record, read into its `TrialBuilder`: one reader per trial, so
    concurrent trials never share one."""

    def __init__(self, builder: TrialBuilder) -> None:
        self.builder = builder
        self.errors: dict[str, str] = {}
        """A function tool's error by call id, as the tool error formatter saw it."""
        self._unkeyed: list[tuple[str, str, str]] = []
        """Errors noted with no call id: (tool name, arguments, error), in the order noted."""
        self._started: dict[str, _Started] = {}
        self._recorded: set[str] = set()
        self._function_calls: set[str] = set()
        """The call ids of the function tool calls the items reported."""
        self._rejected: dict[str, Any] = {}
        """What a tool returned, by call id, where a tool output guardrail rejected it (the
        items and hooks hold the guardrail's message, which the model was told instead)."""
        self._rejections: list[dict[str, Any]] = []
        """The trial's `metadata["tool_output_rejected"]`, in the order the guardrails ran."""

    # --- what the SDK calls during a run

    def tool_error_formatter(
        self, user: Callable[[Any], Any] | None
    ) -> Callable[[Any], Awaitable[str | None]]:
        """A `RunConfig.tool_error_formatter` recording each tool's exception by call id, then
        deferring to the user's own formatter (None: the SDK's default message)."""

        async def formatter(args: Any) -> str | None:
            error = args.error
            self.errors[str(args.call_id)] = (
                error_text(error) if error is not None else f"{args.kind}: {args.default_message}"
            )
            if user is None:
                return None
            message = user(args)
            return await message if isinstance(message, Awaitable) else message  # type: ignore[no-any-return]

        return formatter

    def hooks(
        self, config: RunConfig, guard: Callable[[Any, Any], None] | None = None
    ) -> RunHooks[Any]:
        """Run hooks reporting to this reader (one object per trial); `guard(context, tool)`
        is called as each function tool starts, after it is noted, and may stop the run."""
        hooks: RunHooks[Any] = _hooks_class()(self, config, guard)
        return hooks

    def tool_failed(self, call_id: str | None, name: str, arguments: str, error: str) -> None:
        """A tool's error noted by agenteval's copy of the tool (a mocked, injected or refused
        answer): by call id when the SDK gave the tool a `ToolContext`; a hand-made tool given a
        `RunContextWrapper` has none, and its error is matched to the started call of the same
        name and arguments (`read_started`)."""
        if call_id is not None:
            self.errors[call_id] = error
        else:
            self._unkeyed.append((name, arguments, error))

    def output_rejected(
        self,
        call_id: str | None,
        tool: str,
        guardrail: str,
        message: Any,
        output_info: Any,
        output: Any,
    ) -> None:
        """A tool output guardrail rejected what `tool` returned (`output`; noted by the
        copy's guardrails, `openai_agents_mock.py`): the call keeps `output` as its result, and
        the trial's `metadata["tool_output_rejected"]` says which guardrail told the model
        `message` in its place. (Its output goes through the run's items, so with no call id,
        which the SDK always gives an output guardrail, nothing could be paired: not noted.)"""
        if call_id is None:
            return
        self._rejected[call_id] = output
        info, _ = plain_copy(output_info)
        self._rejections.append(
            {
                "call_id": call_id,
                "tool": tool,
                "guardrail": guardrail,
                "message": message if isinstance(message, str) else str(message),
                "output_info": info,
            }
        )
        self.builder.metadata("tool_output_rejected", self._rejections)

    def started(self, call_id: str, name: str, arguments: str) -> None:
        self._started.setdefault(call_id, _Started(name, arguments))

    def ended(self, call_id: str, result: Any) -> None:
        started = self._started.get(call_id)
        if started is not None:
            started.ended, started.result = True, result

    # --- what a run leaves

    def read_items(self, items: Iterable[Any]) -> None:
        """The tool calls and outputs of a run's items, in order."""
        from agents import ToolCallItem, ToolCallOutputItem

        for item in items:
            if isinstance(item, ToolCallItem):
                raw = item.raw_item
                call_id = item.call_id
                if call_id is not None and _field(raw, "type") == "function_call":
                    self._function_calls.add(call_id)
                if call_id is not None and call_id in self._recorded:
                    continue
                arguments = _field(raw, "arguments")
                name = item.tool_name or str(_field(raw, "type") or "tool")
                self.builder.call(
                    name,
                    arguments if arguments is not None else _hosted_arguments(raw),
                    call_id,
                )
                if call_id is not None:
                    self._recorded.add(call_id)
            elif isinstance(item, ToolCallOutputItem):
                call_id = item.call_id
                error = self.errors.get(call_id) if call_id is not None else None
                if (
                    error is None
                    and call_id in self._function_calls
                    and call_id not in self._started
                ):
                    # A function tool the SDK answered without starting it, and not for an
                    # error the formatter saw (refused approval, unknown tool): a tool input
                    # guardrail rejected the call (`reject_content`), and the tool never ran.
                    error = f"not run: a tool input guardrail rejected the call: {item.output}"
                output = self._rejected.get(call_id, item.output) if call_id else item.output
                self.builder.result(call_id, output, error=error)

    def read_started(self, raised: BaseException | None = None) -> None:
        """The function tools the SDK started that no item reported (a run that raised while
        they ran, or just after): a call each, with its result if it finished, or its error if
        one was noted (`tool_failed`, the tool error formatter). When the run raised `raised`
        and no unfinished tool has an error noted, the one that raised it (`_culprit`) gets the
        exception the SDK wrapped (`UserError("Error running tool ...")`'s cause)."""
        self._match_unkeyed()
        running = [key for key, started in self._started.items() if not started.ended]
        explained = any(key in self.errors for key in running)
        culprit = self._culprit(running, raised)
        for call_id, started in self._started.items():
            if call_id not in self._recorded:
                self._recorded.add(call_id)
                self.builder.call(started.name, started.arguments, call_id)
            # A call the items reported but never answered is still open in the builder (an
            # answered one is not, and these are no-ops for it).
            if call_id in self.errors:
                self.builder.result(call_id, error=self.errors[call_id])
            elif started.ended:
                self.builder.result(call_id, self._rejected.get(call_id, started.result))
            elif call_id == culprit and raised is not None and not explained:
                self.builder.result(call_id, error=error_text(raised.__cause__ or raised))

    def _culprit(self, running: list[str], raised: BaseException | None) -> str | None:
        """The unfinished call that raised `raised`: the one tool the SDK's message names
        (`Error running tool NAME: ...`; the model turn's other calls may still be running,
        cancelled by the SDK), else the only unfinished call; None when it cannot be told."""
        if raised is None:
            return None
        message = str(raised)
        named = [
            key
            for key in running
            if message.startswith(f"Error running tool {self._started[key].name}: ")
        ]
        candidates = named or running
        return candidates[0] if len(candidates) == 1 else None

    def _match_unkeyed(self) -> None:
        """Each error noted with no call id, onto the earliest unfinished started call of its
        name and arguments with no error yet (calls alike in both are alike in the trial)."""
        for name, arguments, error in self._unkeyed:
            for call_id, started in self._started.items():
                if (
                    not started.ended
                    and call_id not in self.errors
                    and (started.name, started.arguments) == (name, arguments)
                ):
                    self.errors[call_id] = error
                    break
        self._unkeyed.clear()

    @staticmethod
    def final_text(output: Any) -> str | None:
        """The run's final output as text: a string as is, a structured output (a pydantic
        model, a dataclass, a mapping, ...) as its JSON."""
        return answer_text(output)


@functools.cache
def _hooks_class() -> type[Any]:
    """The `RunHooks` subclass (defined on first use: importing agenteval imports no SDK)."""
    from agents.tool_context import ToolContext

    from agents import RunHooks

    class Hooks(RunHooks[Any]):
        """The hooks of one trial's runs: agents and model calls into the builder as they
        happen, function tools started and ended into the reader."""

        def __init__(
            self,
            reader: RunReader,
            config: RunConfig,
            guard: Callable[[Any, Any], None] | None,
        ) -> None:
            self.reader = reader
            self.config = config
            self.guard = guard

        async def on_agent_start(self, context: Any, agent: Any) -> None:
            self.reader.builder.visit(str(agent.name))
            for spec in agent_tool_specs(agent).values():
                self.reader.builder.declare(spec)

        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            usage = usage_of(response.usage)
            # The SDK reads a response without usage (a proxy that strips it) as
            # `Usage(requests=1)`, every count 0, which no answered request is: a prompt has
            # input tokens. Its cost is then unknown, never free.
            unmeasured = not usage.input_tokens and not usage.output_tokens
            self.reader.builder.model_call(
                model_name(agent, self.config),
                usage,
                unrecorded=NO_USAGE if unmeasured else None,
            )

        async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
            if isinstance(context, ToolContext):
                self.reader.started(context.tool_call_id, context.tool_name, context.tool_arguments)
            if self.guard is not None:
                self.guard(context, tool)

        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
            if isinstance(context, ToolContext):
                self.reader.ended(context.tool_call_id, result)

    return Hooks


@dataclass(frozen=True)
class GuardrailTrip:
    """A guardrail's tripwire that stopped a run: what the trial records of it."""

    kind: str
    """`input`, `output`, `tool_input` or `tool_output`."""
    name: str
    output_info: Any

    @property
    def record(self) -> dict[str, Any]:
        """The trial's `metadata["guardrail"]`."""
        info, _ = plain_copy(self.output_info)
        return {"kind": self.kind, "name": self.name, "output_info": info}

    @property
    def message(self) -> str:
        """The trial's failure message."""
        return (
            f"the {self.kind.replace('_', ' ')} guardrail {self.name!r} tripped: the agent "
            "stopped without an answer (metadata 'guardrail' says which)"
        )


def guardrail_trip(exc: BaseException) -> GuardrailTrip | None:
    """The guardrail trip `exc` reports, or None for any other exception.

    A tripwire is the agent refusing by design, not a crash: the trial ends with no answer and
    an `agent_error` failure naming the guardrail (so scorers of the answer see no answer, and
    a case expecting a refusal can read `metadata["guardrail"]`).
    """
    from agents import (
        InputGuardrailTripwireTriggered,
        OutputGuardrailTripwireTriggered,
        ToolInputGuardrailTripwireTriggered,
        ToolOutputGuardrailTripwireTriggered,
    )

    if isinstance(exc, InputGuardrailTripwireTriggered | OutputGuardrailTripwireTriggered):
        result = exc.guardrail_result
        kind = "input" if isinstance(exc, InputGuardrailTripwireTriggered) else "output"
        return GuardrailTrip(kind, result.guardrail.get_name(), result.output.output_info)
    if isinstance(exc, ToolInputGuardrailTripwireTriggered | ToolOutputGuardrailTripwireTriggered):
        kind = (
            "tool_input" if isinstance(exc, ToolInputGuardrailTripwireTriggered) else "tool_output"
        )
        return GuardrailTrip(kind, exc.guardrail.get_name(), exc.output.output_info)
    return None
