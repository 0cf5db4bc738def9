"""The attribute names each instrumentation family writes, first match wins.

Each table lists the OpenTelemetry GenAI name first, then its deprecated names, then the other
families' (OpenInference `llm.*`, OpenLLMetry / traceloop `llm.*` and `gen_ai.*` variants,
pydantic-ai's `gen_ai.usage.details.*`, Google ADK's `gcp.vertex.agent.*`). Every name here was
checked against the source of the package that writes it (see the notes by each table), so a
reader never guesses.
"""

from __future__ import annotations

__all__ = [
    "AGENT_NAMES",
    "AGENT_OUTPUTS",
    "CACHED_TOKENS",
    "FINISH_REASONS",
    "INPUT_TOKENS",
    "MODEL_NAMES",
    "MODEL_OUTPUTS",
    "OUTPUT_TOKENS",
    "PROVIDER_NAMES",
    "REASONING_TOKENS",
    "TOOL_ARGUMENTS",
    "TOOL_CALL_IDS",
    "TOOL_FINISH_REASONS",
    "TOOL_NAMES",
    "TOOL_RESULTS",
]

MODEL_NAMES = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")
PROVIDER_NAMES = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
INPUT_TOKENS = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",  # deprecated GenAI name, OpenLLMetry before 0.4x
    "llm.token_count.prompt",  # OpenInference
    "llm.usage.prompt_tokens",  # OpenLLMetry's first names
)
OUTPUT_TOKENS = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
    "llm.usage.completion_tokens",
)
CACHED_TOKENS = (
    "gen_ai.usage.cache_read.input_tokens",  # GenAI, OpenLLMetry 0.62, pydantic-ai, Google ADK
    "gen_ai.usage.cache_read_input_tokens",  # OpenLLMetry's deprecated name
    "llm.token_count.prompt_details.cache_read",  # OpenInference
    "gen_ai.usage.details.cache_read_tokens",  # pydantic-ai (usage.py, "backwards compat")
)
REASONING_TOKENS = (
    "gen_ai.usage.reasoning.output_tokens",  # GenAI, Google ADK
    "gen_ai.usage.reasoning_tokens",  # OpenLLMetry 0.62
    "llm.token_count.completion_details.reasoning",  # OpenInference
    "llm.usage.reasoning_tokens",  # OpenLLMetry (semconv_ai LLM_USAGE_REASONING_TOKENS)
    "gen_ai.usage.details.reasoning_tokens",  # pydantic-ai (OpenAI models' usage details)
)
FINISH_REASONS = (
    "gen_ai.response.finish_reasons",  # GenAI: a list
    "llm.finish_reason",  # OpenInference: one string
    "anthropic.message.stop_reason",  # the anthropic SDK's own span (2.x): one string
)
TOOL_FINISH_REASONS = frozenset({"tool_calls", "tool_call", "function_call", "tool_use"})
"""Finish reasons that say the model asked for tools: OpenAI's `tool_calls` and older
`function_call`, OpenLLMetry's `tool_call`, Anthropic's `tool_use`."""

TOOL_NAMES = ("gen_ai.tool.name", "tool.name")
TOOL_CALL_IDS = ("gen_ai.tool.call.id", "tool_call.id")
TOOL_ARGUMENTS = (
    "gen_ai.tool.call.arguments",
    "tool_arguments",
    "gcp.vertex.agent.tool_call_args",
    "input.value",
    "traceloop.entity.input",
)
TOOL_RESULTS = (
    "gen_ai.tool.call.result",
    "tool_response",
    "gcp.vertex.agent.tool_response",
    "output.value",
    "traceloop.entity.output",
)
AGENT_NAMES = ("gen_ai.agent.name", "agent_name", "agent.name")
AGENT_OUTPUTS = ("final_result", "output.value", "traceloop.entity.output", "gen_ai.completion")
MODEL_OUTPUTS = (
    "gen_ai.completion.0.content",
    "llm.output_messages.0.message.content",
    "gen_ai.completion",
)
