"""Fixtures for the tests with the real instrumentation packages: the loopback OpenAI server,
an app's own TracerProvider that also writes an OTLP JSON trace file, and each instrumentor,
instrumented for one test and uninstrumented after it.

The global TracerProvider is the app's, set per test as `tests/otel/conftest.py`'s
`user_exporter` sets it (the API's globals reset around the test). The instrumentors are
instrumented after it is set, with no provider of their own, so they use it as an app's
instrumentation does.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Each test module skips without the packages it drives (`families.require`): the Gemini
# instrumentation cannot be installed beside openai-v2 (see test_google_genai.py).
from opentelemetry import trace
from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

# `runs.check_as_expected` asserts for the tests: its failures say what differed.
pytest.register_assert_rewrite("tests.otel.instrumentations.runs")

from .families import ENVIRONMENT, Family  # noqa: E402
from .loopback import ScriptedOpenAI, scripted_openai  # noqa: E402
from .loopback_anthropic import ScriptedAnthropic, scripted_anthropic  # noqa: E402
from .loopback_gemini import ScriptedGemini, scripted_gemini  # noqa: E402
from .runs import TraceFile  # noqa: E402


@pytest.fixture(scope="session")
def openai_server() -> Iterator[ScriptedOpenAI]:
    with scripted_openai() as server:
        yield server


@pytest.fixture(scope="session")
def anthropic_server() -> Iterator[ScriptedAnthropic]:
    with scripted_anthropic() as server:
        yield server


@pytest.fixture(scope="session")
def gemini_server() -> Iterator[ScriptedGemini]:
    with scripted_gemini() as server:
        yield server


@pytest.fixture
def trace_file(user_exporter: InMemorySpanExporter, tmp_path: Path) -> TraceFile:
    """The app's TracerProvider (the global one) exporting to an OTLP JSON file as well."""
    stream = io.StringIO()
    provider: Any = trace.get_tracer_provider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(stream=stream)))
    return TraceFile(stream=stream, path=tmp_path / "traces.jsonl")


@pytest.fixture
def instrumented(
    request: pytest.FixtureRequest,
    user_exporter: InMemorySpanExporter,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Family]:
    """The family given as the test's parameter, instrumented on the app's provider (with its
    environment set first: openai-v2 reads it in `instrument()`), uninstrumented after."""
    family: Family = request.param
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    for name, value in family.env:
        monkeypatch.setenv(name, value)
    instrumentor = family.make()
    instrumentor.instrument()
    try:
        yield family
    finally:
        instrumentor.uninstrument()
        _unwrap_openai()


def _unwrap_openai() -> None:
    """Take off any wrapper an instrumentor left on the openai (or anthropic) SDK's methods.

    OpenLLMetry 0.62.4's `uninstrument()` leaves its wrappers on: it calls
    `unwrap("openai.resources.chat.completions", "Completions.create")`, and
    opentelemetry-instrumentation's `unwrap` (0.65b0) reads a dotted string as the path of the
    object holding the attribute, so it finds no `Completions.create` on the module and does
    nothing. Left on, the next test's spans would be OpenLLMetry's as well.
    """
    import inspect
    import sys

    import wrapt

    # wrapt 2 names the base of its function wrappers BaseObjectProxy (ObjectProxy before).
    proxy = getattr(wrapt, "BaseObjectProxy", wrapt.ObjectProxy)
    for name, module in list(sys.modules.items()):
        if not name.startswith(("openai.resources", "anthropic.resources")) or module is None:
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            for attr, value in list(vars(cls).items()):
                while isinstance(value, proxy) and hasattr(value, "__wrapped__"):
                    value = value.__wrapped__
                    setattr(cls, attr, value)
