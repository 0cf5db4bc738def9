"""Record the example agent's traces to an OTLP JSON file, as a deployed agent's would be.

    python examples/otel/record.py              # writes .agenteval/traces.jsonl (git ignores it)
    agenteval score .agenteval/traces.jsonl --cases examples/otel/cases.yaml

    python examples/otel/record.py FILE         # writes FILE; examples/otel/traces.jsonl, the
                                                # committed recording, only when named

It sets up the OpenTelemetry SDK the way an application does (a TracerProvider and a file
exporter writing OTLP JSON lines, the format of the Collector's file exporter), runs the agent
once per case, and tags each trace's root span with `agenteval.case.id`, the attribute
`agenteval score` matches traces to cases by. Needs `opentelemetry-sdk` and
`opentelemetry-exporter-otlp-json-file`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import agent  # noqa: E402  (the example's agent, next to this file)


def record(out: Path) -> None:
    """Run the agent on every case, writing one trace per case to `out`."""
    cases = yaml.safe_load((HERE / "cases.yaml").read_text(encoding="utf-8"))
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    with out.open("w", encoding="utf-8") as stream:
        provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(stream=stream)))
        tracer = provider.get_tracer("weather-app")
        agent.tracer = provider.get_tracer("weather-agent", "1.0")
        for case in cases:
            with tracer.start_as_current_span(
                "handle question", attributes={"agenteval.case.id": case["id"]}
            ):
                agent.answer(case["input"])
        provider.shutdown()


DEFAULT_OUT = Path(".agenteval") / "traces.jsonl"
"""Where a recording goes unless named: beside the run store, in a folder git ignores, so
running the example never rewrites a file of the repository."""


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    target.parent.mkdir(parents=True, exist_ok=True)
    record(target)
    print(f"wrote {target}")
    print(f"score it: agenteval score {target} --cases {HERE / 'cases.yaml'}")
