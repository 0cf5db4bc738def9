"""The instrumentation packages under test, each as a test runs it (see `conftest.py`'s
`instrumented` fixture, which takes one of these as its parameter)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.otel.installed import import_or_skip

OPENAI_INSTRUMENTATIONS = (
    "openai",
    "opentelemetry.instrumentation.openai_v2",
    "openinference.instrumentation.openai",
    "opentelemetry.instrumentation.openai",
)
"""What the openai-SDK tests drive: the SDK and its three instrumentations."""


def require(*modules: str) -> None:
    """Skip the calling test module (at collection) when one of `modules` is not installed;
    one installed but failing to import fails it (`tests.otel.installed.import_or_skip`)."""
    for module in modules:
        import_or_skip(module)


CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""openai-v2's switch for message content (read when it instruments)."""


def _openai_v2() -> Any:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    return OpenAIInstrumentor()  # type: ignore[no-untyped-call]


def _openinference() -> Any:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _openllmetry() -> Any:
    with warnings.catch_warnings():
        # Its responses module declares a pydantic model the pre-2.0 way: not ours to fix.
        warnings.simplefilter("ignore", DeprecationWarning)
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.instrumentation.openai.v1 import responses_wrappers  # noqa: F401

    return OpenAIInstrumentor()


@dataclass(frozen=True)
class Family:
    """One instrumentation package as a test runs it: how to make its instrumentor, the
    environment it reads when instrumenting, and what it records of a chat completion."""

    name: str
    make: Callable[[], Any]
    env: tuple[tuple[str, str], ...] = ()
    content: bool = True
    """Whether it records message content (tool calls, results, answers)."""
    content_variable: str = ""
    """The environment variable that decides whether it records message content."""
    token_details: bool = True
    """Whether it records cached and reasoning tokens (openai-v2 2.4b0 does not)."""
    tool_schemas: bool = True
    """Whether it records the tools offered (openai-v2 2.4b0 does not)."""
    tool_errors: bool = True
    """Whether it records that a tool result was sent back as a failure (Anthropic's
    `tool_result` `is_error`: OpenLLMetry 0.62.4's Anthropic instrumentation drops it)."""


OPENAI_V2 = Family(
    "openai-v2",
    _openai_v2,
    # As the docs tell users: the opt-in is a no-op with util-genai 1.1b0 (it always runs the
    # latest conventions), the content mode is what turns capture on.
    env=(
        ("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental"),
        (CONTENT_VARIABLE, "SPAN_ONLY"),
    ),
    token_details=False,
    tool_schemas=False,
)
OPENAI_V2_NO_CONTENT = Family(
    "openai-v2-no-content",
    _openai_v2,
    content=False,
    content_variable=CONTENT_VARIABLE,
    token_details=False,
    tool_schemas=False,
)
OPENINFERENCE = Family("openinference", _openinference)
OPENINFERENCE_HIDDEN = Family(
    "openinference-hidden",
    _openinference,
    # OpenInference's TraceConfig switches (read when instrumenting), as a privacy-minded
    # deployment sets them: no inputs, no outputs on the spans.
    env=(("OPENINFERENCE_HIDE_INPUTS", "true"), ("OPENINFERENCE_HIDE_OUTPUTS", "true")),
    content=False,
    content_variable="OPENINFERENCE_HIDE_OUTPUTS",
)
OPENINFERENCE_HIDDEN_INPUTS = Family(
    "openinference-hidden-input-messages",
    _openinference,
    # Only the requests' messages hidden: the responses (and so the calls asked for) are
    # recorded, the tool results sent back are not.
    env=(("OPENINFERENCE_HIDE_INPUT_MESSAGES", "true"),),
    content_variable="OPENINFERENCE_HIDE_INPUT_MESSAGES",
)
OPENLLMETRY = Family("openllmetry", _openllmetry, env=(("TRACELOOP_TRACE_CONTENT", "true"),))
OPENLLMETRY_NO_CONTENT = Family(
    "openllmetry-no-content",
    _openllmetry,
    env=(("TRACELOOP_TRACE_CONTENT", "false"),),
    content=False,
    content_variable="TRACELOOP_TRACE_CONTENT",
)

ENVIRONMENT = (
    CONTENT_VARIABLE,
    "OTEL_SEMCONV_STABILITY_OPT_IN",
    "TRACELOOP_TRACE_CONTENT",
    "OPENINFERENCE_HIDE_INPUTS",
    "OPENINFERENCE_HIDE_OUTPUTS",
    "OPENINFERENCE_HIDE_INPUT_MESSAGES",
    "OPENINFERENCE_HIDE_OUTPUT_MESSAGES",
)
"""Every variable the families read about content: unset before each test, so only the
test's own apply."""


def _openinference_anthropic() -> Any:
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    return AnthropicInstrumentor()


def _openllmetry_anthropic() -> Any:
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    return AnthropicInstrumentor()


OPENINFERENCE_ANTHROPIC = Family("openinference-anthropic", _openinference_anthropic)
OPENLLMETRY_ANTHROPIC = Family(
    "openllmetry-anthropic",
    _openllmetry_anthropic,
    env=(("TRACELOOP_TRACE_CONTENT", "true"),),
    tool_errors=False,
)
ANTHROPIC_FAMILIES = [OPENINFERENCE_ANTHROPIC, OPENLLMETRY_ANTHROPIC]


class _Nothing:
    """No instrumentation: the SDK's own spans only."""

    def instrument(self) -> None:
        pass

    def uninstrument(self) -> None:
        pass


ANTHROPIC_SDK_ONLY = Family(
    "anthropic-sdk-only",
    _Nothing,
    content=False,
    # The SDK has no setting that records messages: the fix names an instrumentation.
    content_variable="openinference-instrumentation-anthropic",
)
OPENINFERENCE_ANTHROPIC_HIDDEN = Family(
    "openinference-anthropic-hidden",
    _openinference_anthropic,
    env=(("OPENINFERENCE_HIDE_INPUTS", "true"), ("OPENINFERENCE_HIDE_OUTPUTS", "true")),
    content=False,
    content_variable="OPENINFERENCE_HIDE_OUTPUTS",
)
OPENLLMETRY_ANTHROPIC_NO_CONTENT = Family(
    "openllmetry-anthropic-no-content",
    _openllmetry_anthropic,
    env=(("TRACELOOP_TRACE_CONTENT", "false"),),
    content=False,
    content_variable="TRACELOOP_TRACE_CONTENT",
)
ANTHROPIC_WITHOUT_CONTENT = [
    ANTHROPIC_SDK_ONLY,
    OPENINFERENCE_ANTHROPIC_HIDDEN,
    OPENLLMETRY_ANTHROPIC_NO_CONTENT,
]


def _google_genai() -> Any:
    from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor

    return GoogleGenAiSdkInstrumentor()


GOOGLE_GENAI = Family(
    "google-genai",
    _google_genai,
    # As its docs tell users: the latest conventions, content on the spans.
    env=(
        ("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental"),
        (CONTENT_VARIABLE, "SPAN_ONLY"),
    ),
)
