"""Importing the optional packages the OpenTelemetry tests run with (the instrumentations,
pydantic-ai, ADK, the OTLP JSON file exporter)."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest


def import_or_skip(name: str) -> ModuleType:
    """The module `name`; the test skipped only when it is not installed (the module missing is
    `name` or a package above it).

    `pytest.importorskip` skips on any ImportError, so an instrumentation installed but broken
    was a skip, and a skip passes nothing: openai-v2 2.4b0 beside opentelemetry-util-genai 1.2b0
    or later (which renamed the `opentelemetry.util.genai.instruments` it imports) skipped
    every instrumentation test, OpenInference's and OpenLLMetry's with them, and the run
    stayed green. Such an import error now fails the test that needs it.
    """
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (name == missing or name.startswith(missing + ".")):
            pytest.skip(
                f"could not import {name!r}: {missing} is not installed", allow_module_level=True
            )
        raise
