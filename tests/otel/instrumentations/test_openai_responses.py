"""The plain openai-SDK tool loop on the Responses API (`client.responses.create`, what OpenAI
recommends for new agents) under each real openai instrumentation that covers it, each response
taken whole or streamed: the same tool calls, results, errors, answer, tokens and cost as the
chat completions loop, live and offline.

OpenLLMetry 0.62.4 names a call in the response by its item id (`fc_...`) and its result in the
next request by its call id (`call_...`): the calls are paired with their results in order
(`otel/rebuilt.py`). Before, every result was lost, and a tool that failed passed
`tool_execution`. openai-v2 2.4b0 does not instrument the Responses API at all (no span).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from .agents import EXPECTED, openai_agent, responses_agent
from .families import (
    OPENAI_INSTRUMENTATIONS,
    OPENAI_V2,
    OPENINFERENCE,
    OPENLLMETRY,
    Family,
    require,
)
from .loopback import ScriptedOpenAI
from .runs import TraceFile, check_as_expected, facts, record_offline, run_live, run_offline

require(*OPENAI_INSTRUMENTATIONS)


@pytest.mark.parametrize(
    "instrumented", [OPENINFERENCE, OPENLLMETRY], ids=lambda f: f.name, indirect=True
)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_responses_api_agent_is_recorded_as_the_chat_one_is(
    instrumented: Family,
    openai_server: ScriptedOpenAI,
    trace_file: TraceFile,
    tmp_path: Path,
    stream: bool,
) -> None:
    agent = responses_agent(openai_server.base_url, stream=stream)
    offline = run_offline(agent, trace_file, tmp_path / "offline.db")
    live = run_live(agent, tmp_path / "live.db")
    assert set(live) == set(offline) == set(EXPECTED)
    for case_id, expected in EXPECTED.items():
        seen = facts(live[case_id])
        assert seen == facts(offline[case_id]), case_id
        assert seen["calls"] == expected.calls, case_id  # ids too: each call its call id
        check_as_expected(seen, case_id)


@pytest.mark.parametrize("instrumented", [OPENAI_V2], ids=lambda f: f.name, indirect=True)
def test_openai_v2_records_no_span_of_a_responses_api_call(
    instrumented: Family,
    openai_server: ScriptedOpenAI,
    trace_file: TraceFile,
    user_exporter: InMemorySpanExporter,
) -> None:
    """What the README's table says of openai-v2 and the Responses API: it has no span for
    it, so a trial records no model call nor tool call (use another family, or `@tool`)."""
    record_offline(responses_agent(openai_server.base_url))
    names = {span.name for span in user_exporter.get_finished_spans()}
    assert names == {"POST /ask"}


@pytest.mark.parametrize("instrumented", [OPENAI_V2], ids=lambda f: f.name, indirect=True)
def test_a_run_that_saw_no_call_of_an_agent_expected_to_call_tools_says_so(
    instrumented: Family,
    openai_server: ScriptedOpenAI,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Live under openai-v2, the Responses API agent is invisible: its cases fail
    tool_selection for "answered without calling any tool". The run says once why that may
    be a gap in what agenteval sees, and what to do."""
    with caplog.at_level(logging.WARNING, logger="agenteval"):
        live = run_live(responses_agent(openai_server.base_url), tmp_path / "live.db")
    assert live["paris"].trial.model_calls == [] == live["paris"].trial.tool_calls
    [warning] = [r.getMessage() for r in caplog.records if "recorded a tool call" in r.getMessage()]
    assert warning.startswith("none of the 2 trials whose case expects tool calls")
    assert "@agenteval.tool" in warning and "Responses API" in warning
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="agenteval"):
        run_live(openai_agent(openai_server.base_url), tmp_path / "chat.db")
    assert not [r for r in caplog.records if "recorded a tool call" in r.getMessage()]
