"""The built-in tool-calling agent: a model, a system prompt and `@agenteval.tool` functions.

For the question "how does model X do with my tools?", with no agent code to write: the agent
runs the real tool-calling loop through the provider's official SDK. Each turn sends the
conversation and the tool schemas (each tool's `ToolSpec.parameters`); when the model asks for
tools (several at once included: parallel tool calls), each is called through its
`@agenteval.tool` wrapper, so the call is recorded as any agent's would be, and the results go
back to the model; when it answers without asking for a tool, that answer is the trial's output.

Providers, as the judge has them (`provider:model`, the same keys and base-URL variables, from
`agenteval.providers`), each spoken by its module of `agenteval.agents.chats`:

- ``openai``: chat completions with ``tools`` (and ``tool_calls`` answers), against OpenAI or
  any OpenAI-compatible server (``base_url:`` or ``OPENAI_BASE_URL``);
- ``anthropic``: the Messages API with ``tool_use`` / ``tool_result`` blocks;
- ``google``: Gemini function calling through google-genai (automatic function calling off).

What is recorded: every model call (`record_model_call`, with input, output, cached and reasoning
tokens and its duration), every tool call (by the tool's own wrapper; a call of a tool that does
not exist, or with arguments that are not a JSON object, is recorded with its error too), and
every retry. Retries: the SDK's own retries are off; a model call that fails for an
infrastructure reason (as `agenteval.failures.classify` reads it: 429, 5xx, timeout,
connection error) is retried *inside* the agent, up to `retries` times, waiting as the engine
does (exponential backoff with jitter, honouring ``Retry-After``), each retry counted with
`record_retry` and each wait with `record_wait`. Retrying the call, not the trial, means the
tools already called (which may have side effects) are not called again. When the retries run
out, the SDK's error propagates and the engine classifies (and may retry) the whole trial.
With `adaptive` on (the default), each model call also holds a slot of its endpoint's adaptive
limit (`agenteval.providers.throttle`), shared with every judge and agent of the process on that
endpoint: 429s cut the calls in flight and pause them for their ``Retry-After``, and draw on a
retry budget of their own; the time spent held back is recorded with `record_wait`.

A conversation that is still asking for tools after `max_turns` model calls ends the trial as
the agent's own error (`agent_error`, "no final answer within max_turns"), with every call made
so far kept in the trial.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import to_jsonable_python

from agenteval.agents.chats import chat_class
from agenteval.agents.chats.conversation import (
    Chat,
    ChatSetup,
    ModelReply,
    ToolOutcome,
    ToolRequest,
    check_params,
    messages,
)
from agenteval.agents.recorder import (
    TrialRecorder,
    current_recorder,
    monotonic,
    record_model_call,
    record_retry,
    record_wait,
    recording,
)
from agenteval.agents.tools import ToolSpec, tool
from agenteval.errors import AgentLoadError, ConfigError
from agenteval.failures import classify
from agenteval.loading import import_file, import_named_module, load_object
from agenteval.providers import (
    BASE_URL_VARS,
    KEY_VARS,
    PLACEHOLDER_API_KEY,
    PROVIDERS,
    SDK_PACKAGES,
    env_value,
    first_env_value,
    import_sdk,
)
from agenteval.providers.throttle import RetryBudget, endpoint, shared_limit
from agenteval.retry import RetryPolicy
from agenteval.trace import AgentStep, ToolCall, Trial, Usage

__all__ = [
    "BUILTIN_PROVIDERS",
    "BuiltinAgent",
    "BuiltinAgentConfig",
    "MaxTurnsExceeded",
    "builtin_agent",
    "load_tools",
]

BUILTIN_PROVIDERS = PROVIDERS
"""The providers the built-in agent speaks, as `provider:model`."""


class MaxTurnsExceeded(Exception):
    """The model was still asking for tools when the agent's `max_turns` ran out."""


class BuiltinAgentConfig(BaseModel):
    """`agent:` in agenteval.yaml for the built-in agent (recognised by its `model:`)."""

    model_config = ConfigDict(extra="forbid")

    model: str
    """`provider:model`: `openai:gpt-4o-mini`, `anthropic:claude-haiku-4-5`,
    `google:gemini-2.5-flash`, `openai:llama3.1:8b` (the model may hold colons)."""
    system_prompt: str = ""
    tools: list[str] = Field(default_factory=list)
    """Where the tools are: a module (`my_pkg.tools`) or file (`tools.py`), whose every
    `@agenteval.tool` function is offered, or `module:function` / `file.py:function` for one
    function (decorated or not). One string or a list; files are relative to the config."""
    max_turns: int = Field(default=10, ge=1)
    """Model calls at most per answer (each turn that asks for tools is one)."""
    base_url: str | None = None
    """An OpenAI-compatible (or other) endpoint; else the provider's `*_BASE_URL` variable."""
    api_key_env: str | None = None
    """The environment variable holding the key, when not the provider's usual one."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Sent with every model call as they are: `temperature`, `max_tokens`, `tool_choice`,
    `parallel_tool_calls`, ... (a server's own options go in the request body)."""
    timeout: float = Field(default=60.0, gt=0)
    """Seconds per model call."""
    retries: int = Field(default=2, ge=0)
    """Retries of one model call that failed for an infrastructure reason (with `adaptive`,
    429s have a budget of their own: `agenteval.providers.throttle.RetryBudget`)."""
    adaptive: bool = True
    """Adapt the model calls in flight to the provider's 429s, pausing for their
    `Retry-After` (see `agenteval.providers.throttle`); False: only the retries."""
    parallel_tools: bool = False
    """Run the tool calls of one turn concurrently (recorded in the order they start); by
    default they run one after another in the order the model gave them."""

    @field_validator("tools", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("model")
    @classmethod
    def _provider_model(cls, value: str) -> str:
        provider, sep, model = value.partition(":")
        if not sep or not model or provider not in BUILTIN_PROVIDERS:
            raise ValueError(
                f"{value!r} is not provider:model; write e.g. openai:gpt-4o-mini, with a "
                f"provider among {', '.join(BUILTIN_PROVIDERS)}"
            )
        return value

    @property
    def provider(self) -> str:
        """The provider's name."""
        return self.model.partition(":")[0]

    @property
    def model_name(self) -> str:
        """The model's name, as the provider knows it."""
        return self.model.partition(":")[2]


# --- Tools ---------------------------------------------------------------------------------------


def _is_module_ref(ref: str) -> bool:
    """A module or file (all its tools), as opposed to `module:function` (one tool)."""
    module, sep, attr = ref.rpartition(":")
    if not sep:
        return True
    # `C:\tools.py` is a Windows path, not module `C` attribute `\tools.py`.
    return len(module) == 1 and attr.startswith(("\\", "/"))


def _import_tools_module(ref: str, base_dir: Path | None) -> ModuleType:
    if ref.endswith(".py") or "/" in ref or "\\" in ref:
        path = Path(ref)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.is_file():
            raise AgentLoadError(
                f"no file {path} (in tools {ref!r})",
                field="agent.tools",
                hint="check the path; it is relative to the config file",
            )
        return import_file(path, AgentLoadError, ref)
    return import_named_module(ref, AgentLoadError, ref, base_dir)


def load_tools(refs: Sequence[str], *, base_dir: Path | None = None) -> list[Callable[..., Any]]:
    """The tool functions the references name, each carrying its `tool_spec`.

    A module or file gives each of its `@agenteval.tool` functions, in the order they are
    defined; `module:function` gives that function (decorated here when it is not already).
    Two tools of the same name, or a module without tools, raise `AgentLoadError`.
    """
    found: dict[str, Callable[..., Any]] = {}
    for ref in refs:
        if _is_module_ref(ref):
            module = _import_tools_module(ref, base_dir)
            members = [
                value
                for value in vars(module).values()
                if callable(value) and isinstance(getattr(value, "tool_spec", None), ToolSpec)
            ]
            if not members:
                raise AgentLoadError(
                    f"{ref} has no @agenteval.tool function",
                    field="agent.tools",
                    hint="decorate the tool functions with @agenteval.tool, or name one "
                    "function as module:function",
                )
        else:
            obj = load_object(ref, base_dir=base_dir, kind=AgentLoadError)
            if not callable(obj):
                raise AgentLoadError(f"{ref!r} is not a function", field="agent.tools")
            if not isinstance(getattr(obj, "tool_spec", None), ToolSpec):
                obj = tool(obj)
            members = [obj]
        for member in members:
            spec: ToolSpec = member.tool_spec
            other = found.get(spec.name)
            if other is not None and other is not member:
                raise AgentLoadError(
                    f"two tools are named {spec.name!r}",
                    field="agent.tools",
                    hint="give one of them another name: @agenteval.tool(name=...)",
                )
            found[spec.name] = member
    return list(found.values())


# --- The agent -----------------------------------------------------------------------------------


def _credentials(config: BuiltinAgentConfig) -> tuple[str, str | None]:
    """The API key and base URL, resolved as the judge resolves them (see
    `agenteval.providers.access`): the config, then the provider's environment variables; a
    base URL without a key sends a placeholder key (local servers need none)."""
    provider = config.provider
    try:
        import_sdk(provider)
    except ImportError:
        raise ConfigError(
            f"the built-in agent on {provider} needs the {SDK_PACKAGES[provider]} package, "
            "which is not installed",
            field="agent.model",
            hint=f"pip install 'agenteval[{provider}]'",
        ) from None
    url = config.base_url or env_value(BASE_URL_VARS[provider])
    if config.api_key_env:
        key = env_value(config.api_key_env)
        if not key and not url:
            raise ConfigError(
                f"the agent's key variable {config.api_key_env} is not set",
                field="agent.api_key_env",
                hint=f"export {config.api_key_env}=...",
            )
    else:
        key = first_env_value(KEY_VARS[provider])
    if not key:
        if not url:
            names = " or ".join(KEY_VARS[provider])
            raise ConfigError(
                f"the built-in agent on {provider} needs an API key",
                field="agent.model",
                hint=f"set {names}, or a base_url of an OpenAI-compatible server that needs none",
            )
        key = PLACEHOLDER_API_KEY
    return key, url


class BuiltinAgent:
    """The built-in tool-calling agent: an async callable of the case input (see the module).

    Raises `ConfigError` up front for a missing SDK or key; loading the tools may raise
    `AgentLoadError`.
    """

    def __init__(
        self,
        config: BuiltinAgentConfig,
        *,
        base_dir: Path | None = None,
        tools: Sequence[Callable[..., Any]] | None = None,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        self.config = config
        self._api_key, self._base_url = _credentials(config)
        self.tools: list[Callable[..., Any]] = (
            list(tools) if tools is not None else load_tools(config.tools, base_dir=base_dir)
        )
        self.tool_specs: list[ToolSpec] = [fn.tool_spec for fn in self.tools]  # type: ignore[attr-defined]
        self._by_name = {
            spec.name: fn for spec, fn in zip(self.tool_specs, self.tools, strict=True)
        }
        self._retry = retry_policy or RetryPolicy(max_retries=config.retries)
        self._endpoint = endpoint(config.provider, self._base_url, config.model_name)
        self._chat = chat_class(config.provider)
        check_params(config.provider, config.params)
        self._setup = ChatSetup(
            model=config.model_name,
            system_prompt=config.system_prompt,
            params=config.params,
            timeout_s=config.timeout,
            api_key=self._api_key,
            base_url=self._base_url,
            tool_specs=self.tool_specs,
        )

    @property
    def reference(self) -> str:
        """How a run names this agent (no key, no URL credentials)."""
        return f"builtin:{self.config.model}"

    def __repr__(self) -> str:
        return f"BuiltinAgent({self.config.model!r}, tools={[s.name for s in self.tool_specs]})"

    async def __call__(self, prompt: Any) -> Trial:
        """Answer one case input (a string, or the conversation so far as messages)."""
        recorder = current_recorder()
        if recorder is not None:
            return await self._answer(prompt, recorder, own=False)
        # Outside a trial: record into a recorder of its own, returned with the answer.
        local = TrialRecorder()
        with recording(local):
            return await self._answer(prompt, local, own=True)

    async def _answer(self, prompt: Any, recorder: TrialRecorder, *, own: bool) -> Trial:
        chat = self._chat(self._setup, messages(prompt))
        steps: list[AgentStep] = []
        try:
            for turn in range(1, self.config.max_turns + 1):
                reply = await self._complete(chat)
                if not reply.calls:
                    steps.append(AgentStep(output=reply.text))
                    return Trial(
                        steps=steps,
                        output=reply.text,
                        model_calls=list(recorder.model_calls) if own else [],
                        not_recorded=dict(recorder.not_recorded) if own else {},
                        metadata={"turns": turn, "finish_reason": reply.finish_reason},
                    )
                if turn == self.config.max_turns:
                    break
                before = len(recorder.tool_calls)
                outcomes = await self._call_tools(reply.calls, recorder)
                steps.append(
                    AgentStep(thought=reply.text, tool_calls=list(recorder.tool_calls[before:]))
                )
                chat.add_results(outcomes)
        finally:
            await chat.aclose()
        raise MaxTurnsExceeded(
            f"no final answer within max_turns={self.config.max_turns} model calls: the model "
            "was still asking for tools"
        )

    def _slot(self, *, retry: bool) -> AbstractAsyncContextManager[float]:
        """A slot of the endpoint's adaptive limit for one model call (the seconds waited for
        it), or no limit at all with `adaptive` off."""
        if not self.config.adaptive:
            return nullcontext(0.0)
        # No ceiling of the agent's own: each trial makes one model call at a time, so the
        # run's concurrency bounds the calls in flight.
        limit = shared_limit(self._endpoint, None)
        return limit.slot(first=retry, max_pause_s=self._retry.max_wait_s)

    async def _complete(self, chat: Chat) -> ModelReply:
        """One model call, under the endpoint's adaptive limit, retried for infrastructure
        failures, and recorded."""
        budget = RetryBudget(self._retry.max_retries, adaptive=self.config.adaptive)
        while True:
            try:
                async with self._slot(retry=budget.used > 0) as waited_s:
                    if waited_s > 0:
                        record_wait(waited_s)  # held back by the provider's limit: not work
                    start = monotonic()
                    reply = await chat.complete()
            except Exception as exc:
                kind = classify(exc)
                number = budget.take(kind)
                if number is None:
                    raise
                wait = self._retry.wait_s(number, exc)
                record_retry(kind.cause.value)
                record_wait(wait)
                await asyncio.sleep(wait)
                continue
            usage = reply.usage or Usage()
            record_model_call(
                reply.model or self.config.model_name,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_tokens=usage.cached_tokens,
                reasoning_tokens=usage.reasoning_tokens,
                duration_s=monotonic() - start,
                provider=self.config.provider,
                usage_recorded=reply.usage is not None,
            )
            return reply

    async def _call_tools(
        self, calls: Sequence[ToolRequest], recorder: TrialRecorder
    ) -> list[ToolOutcome]:
        if self.config.parallel_tools:
            return list(await asyncio.gather(*(self._call_tool(c, recorder) for c in calls)))
        return [await self._call_tool(call, recorder) for call in calls]

    async def _call_tool(self, call: ToolRequest, recorder: TrialRecorder) -> ToolOutcome:
        fn = self._by_name.get(call.name)
        if fn is None:
            known = ", ".join(self._by_name) or "none"
            return _refused(
                recorder,
                call,
                call.arguments or {},
                f"no tool named {call.name!r} (tools: {known})",
            )
        if call.arguments is None:
            return _refused(
                recorder,
                call,
                {},
                f"the arguments are not a JSON object: {call.raw_arguments[:200]!r}",
            )
        try:
            if inspect.iscoroutinefunction(fn):
                value = await fn(**call.arguments)
            else:
                # In a worker thread, in a copy of this context: the call records into the trial.
                value = await asyncio.to_thread(fn, **call.arguments)
        except Exception as exc:  # the model sees the error, as it would in production
            return ToolOutcome(call, error=f"{type(exc).__name__}: {exc}")
        return ToolOutcome(call, value=to_jsonable_python(value, fallback=repr))


def _refused(
    recorder: TrialRecorder, call: ToolRequest, arguments: dict[str, Any], error: str
) -> ToolOutcome:
    """A call that could not be made is recorded too, so the scorers see the mistake."""
    record: ToolCall = recorder.start_tool_call(call.name, arguments)
    record.error = error
    record.duration_s = 0.0
    return ToolOutcome(call, error=error)


def builtin_agent(
    spec: BuiltinAgentConfig | Mapping[str, Any], *, base_dir: Path | None = None
) -> BuiltinAgent:
    """The built-in agent a config mapping (or `BuiltinAgentConfig`) describes."""
    config = (
        spec if isinstance(spec, BuiltinAgentConfig) else BuiltinAgentConfig.model_validate(spec)
    )
    return BuiltinAgent(config, base_dir=base_dir)
