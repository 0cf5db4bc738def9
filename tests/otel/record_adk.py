"""A Google ADK agent with an `output_schema` and a tool (a scripted model: it looks the weather
up in Paris and Oslo at once, then answers `{"city": "Paris", "celsius": CELSIUS}` through ADK's
`set_model_response`), run by an app under a span of its own naming the case, its spans (ADK's
own) written as OTLP JSON. A process of its own: ADK's tracer binds to the first
TracerProvider of the process.

    python record_adk.py OUT CELSIUS [content] [legacy]

`content`: with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY` (ADK 2's setting);
else ADK's default, no message content. `legacy`: ADK's older telemetry schema
(`ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`), whose content setting is
`ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS` (on by default: set to `true` with `content`, else
`false`).
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
from pathlib import Path

CASE_ATTRIBUTE = "agenteval.case.id"


def main(out: Path, celsius: int, content: bool, legacy: bool = False) -> None:
    if legacy:
        os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = "1"
        os.environ["ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS"] = "true" if content else "false"
        os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)
    elif content:
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    else:
        os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    stream = io.StringIO()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(stream=stream)))
    trace.set_tracer_provider(provider)

    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.genai import types
    from pydantic import BaseModel
    from tests.frameworks.adk.scripted import ScriptedModel, station_weather

    class Forecast(BaseModel):
        city: str
        celsius: int

    answer = {"city": "Paris", "celsius": celsius}
    script = {
        "weather Paris": [
            [("station_weather", {"city": "Paris"}), ("station_weather", {"city": "Oslo"})],
            [("set_model_response", answer)],
            "done",
        ]
    }
    agent = LlmAgent(
        name="forecaster",
        model=ScriptedModel(script=script),
        instruction="Give the forecast.",
        tools=[station_weather],
        output_schema=Forecast,
    )

    async def play() -> None:
        runner = InMemoryRunner(agent=agent, app_name="forecasts")
        session = await runner.session_service.create_session(app_name="forecasts", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="weather Paris")])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass

    tracer = trace.get_tracer("forecast-app")
    with tracer.start_as_current_span("forecast-app", attributes={CASE_ATTRIBUTE: "paris"}):
        asyncio.run(play())
    provider.shutdown()
    out.write_text(stream.getvalue())


if __name__ == "__main__":
    options = sys.argv[3:]
    main(Path(sys.argv[1]), int(sys.argv[2]), "content" in options, "legacy" in options)
