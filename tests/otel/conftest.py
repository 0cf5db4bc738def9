"""Fixtures for the OpenTelemetry tests: a clean global TracerProvider (and LoggerProvider)
per test.

The OpenTelemetry API lets a process set its TracerProvider and LoggerProvider once; these
tests each need to start from "none set" or from a provider of their own, so the API's globals
are reset around them (as OpenTelemetry's own test utilities do). Live capture installs both
when none is set.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry._logs import _internal as logs_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once


def _reset() -> None:
    trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
    trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
    logs_api._LOGGER_PROVIDER = None
    logs_api._LOGGER_PROVIDER_SET_ONCE = Once()


@pytest.fixture
def no_provider() -> Iterator[None]:
    """No TracerProvider (nor LoggerProvider) configured, as in a process that never set one
    up."""
    saved: Any = (trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE)  # type: ignore[attr-defined]
    saved_logs: Any = (logs_api._LOGGER_PROVIDER, logs_api._LOGGER_PROVIDER_SET_ONCE)
    _reset()
    yield
    trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE = saved  # type: ignore[attr-defined]
    logs_api._LOGGER_PROVIDER, logs_api._LOGGER_PROVIDER_SET_ONCE = saved_logs


@pytest.fixture
def user_exporter(no_provider: None) -> InMemorySpanExporter:
    """A TracerProvider the user configured, exporting to memory."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return exporter
