"""A pydantic-ai agent on its OpenAI chat model, against the loopback server: instrumented by
pydantic-ai itself (tool spans of its own), and with the official openai-v2 on as well, two
instrumentations at once, where each model call is a pydantic-ai span wrapping an openai-v2
span. Live capture and offline scoring must agree, and equal what the agent did: each model
call counted once, with the cached and reasoning tokens and the tool definitions pydantic-ai
records, and each tool call once (its tool span wins over the messages)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("pydantic_ai.models.openai")  # imported once, when collected

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from .agents import EXPECTED, expected_cost, expected_scores, expected_usage, pydantic_ai_agent
from .families import OPENAI_INSTRUMENTATIONS, OPENAI_V2, OPENAI_V2_NO_CONTENT, Family, require
from .loopback import ScriptedOpenAI
from .runs import TraceFile, facts, run_live, run_offline

require(*OPENAI_INSTRUMENTATIONS)


def _check(live: dict[str, Any], offline: dict[str, Any]) -> None:
    assert set(live) == set(offline) == set(EXPECTED)
    for case_id, expected in EXPECTED.items():
        seen = facts(live[case_id])
        assert seen == facts(offline[case_id]), case_id
        assert seen["calls"] == expected.calls, case_id
        for result, error, wanted in zip(
            seen["results"], seen["errors"], expected.results, strict=True
        ):
            if wanted is None:  # ModelRetry: pydantic-ai marks the tool span as failed
                assert error is not None and str(expected.error) in str(error or result), case_id
            else:
                assert (result, error) == (wanted, None), case_id
        assert seen["output"] == expected.output, case_id
        assert seen["failure"] is None, case_id
        assert seen["not_recorded"] == [], case_id
        assert seen["model_calls"] == expected.model_calls, case_id
        assert seen["usage"] == expected_usage(case_id, details=True), case_id
        assert seen["unpriced"] == [], case_id
        assert seen["cost"] == pytest.approx(expected_cost(case_id, details=True)), case_id
        # The tool definitions come from pydantic-ai's spans, live and offline alike.
        assert seen["scores"] == expected_scores(case_id, tool_schemas=True), case_id


def test_pydantic_ai_instrumenting_itself(
    user_exporter: InMemorySpanExporter,
    openai_server: ScriptedOpenAI,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    agent = pydantic_ai_agent(openai_server.base_url)
    offline = run_offline(agent, trace_file, tmp_path / "offline.db")
    live = run_live(agent, tmp_path / "live.db")
    _check(live, offline)


@pytest.mark.parametrize(
    "instrumented", [OPENAI_V2, OPENAI_V2_NO_CONTENT], ids=lambda f: f.name, indirect=True
)
def test_pydantic_ai_over_openai_v2_counts_each_call_once_and_keeps_its_fields(
    instrumented: Family,
    user_exporter: InMemorySpanExporter,
    openai_server: ScriptedOpenAI,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    agent = pydantic_ai_agent(openai_server.base_url)
    offline = run_offline(agent, trace_file, tmp_path / "offline.db")
    live = run_live(agent, tmp_path / "live.db")
    # Two instrumentations really were on: each model call is a span of each, nested.
    spans = user_exporter.get_finished_spans()
    names = [s.name for s in spans]
    scopes = {s.instrumentation_scope.name for s in spans if s.instrumentation_scope}
    assert "opentelemetry.util.genai.handler" in scopes, scopes
    assert names.count("chat gpt-test") == 2 * 2 * sum(e.model_calls for e in EXPECTED.values())
    _check(live, offline)
