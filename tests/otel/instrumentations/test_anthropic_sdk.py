"""A plain anthropic-SDK tool loop under the Anthropic instrumentations people run:
OpenInference's (`openinference-instrumentation-anthropic`) and OpenLLMetry's
(`opentelemetry-instrumentation-anthropic`). The anthropic SDK (2.x) also traces its own API
calls (a CLIENT span per call, metadata only by default), so each model call has two spans.

The calls are `tool_use` content blocks, their results `tool_result` blocks (the failed one
with `is_error`), and the tokens are split as Anthropic splits them (cache reads and writes
apart from `input_tokens`). Live capture and offline scoring of the same agent must record the
calls, arguments, results, the error, the answer, each model call once (the SDK's span and the
instrumentation's are one call, nested or not) with the whole prompt as its input tokens, and
the cost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anthropic")
pytest.importorskip("openinference.instrumentation.anthropic")
pytest.importorskip("opentelemetry.instrumentation.anthropic")

from agenteval.records import TrialResult

from .agents import EXPECTED, expected_scores
from .agents_anthropic import CLAUDE_PRICES, anthropic_agent, claude_cost, claude_usage
from .families import ANTHROPIC_FAMILIES, ANTHROPIC_WITHOUT_CONTENT, Family
from .loopback_anthropic import ScriptedAnthropic
from .runs import TraceFile, facts, live_and_offline


def _both(
    server: ScriptedAnthropic, trace_file: TraceFile, tmp_path: Path, *, stream: bool = False
) -> tuple[dict[str, TrialResult], dict[str, TrialResult]]:

    agent = anthropic_agent(server.base_url, stream=stream)
    return live_and_offline(agent, trace_file, tmp_path, CLAUDE_PRICES)


def _seen(result: TrialResult) -> dict[str, Any]:
    seen = facts(result)
    trial = result.trial
    seen["cost"] = sum(CLAUDE_PRICES.cost(m.model, m.usage) or 0.0 for m in trial.model_calls)
    seen["unpriced"] = sorted(
        {m.model for m in trial.model_calls if CLAUDE_PRICES.cost(m.model, m.usage) is None}
    )
    return seen


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
@pytest.mark.parametrize("instrumented", ANTHROPIC_FAMILIES, ids=lambda f: f.name, indirect=True)
def test_live_and_offline_read_the_anthropic_agent_right(
    instrumented: Family,
    stream: bool,
    anthropic_server: ScriptedAnthropic,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    """`stream`: each response streamed (`client.messages.stream`), as chat front ends do: the
    instrumentations put the message together from its events, the tokens from
    `message_start` and `message_delta`."""
    live, offline = _both(anthropic_server, trace_file, tmp_path, stream=stream)
    assert set(live) == set(offline) == set(EXPECTED)
    for case_id, expected in EXPECTED.items():
        seen = _seen(live[case_id])
        assert seen == _seen(offline[case_id]), case_id
        # A family that drops `is_error` records results without saying whether they failed:
        # every rebuilt call's success is then unknown, never a silent pass.
        unflagged = bool(expected.calls) and not instrumented.tool_errors
        assert seen["calls"] == expected.calls, case_id
        for result, call_error, wanted in zip(
            seen["results"], seen["call_errors"], expected.results, strict=True
        ):
            if wanted is None and unflagged:  # the text sent back, its flag lost
                assert result == expected.error and call_error is None, case_id
            elif wanted is None:  # the failed call: its error, sent back with `is_error`
                assert expected.error is not None and expected.error in str(call_error)
            else:
                assert result == wanted and call_error is None, case_id
        assert seen["output"] == expected.output, case_id
        gaps = ["tool_results"] if unflagged else []
        assert (seen["failure"], seen["not_recorded"]) == (None, gaps), case_id
        assert seen["model_calls"] == expected.model_calls, case_id
        assert seen["usage"] == claude_usage(case_id), case_id
        assert seen["unpriced"] == [], case_id
        assert seen["cost"] == pytest.approx(claude_cost(case_id)), case_id
        scores = expected_scores(case_id, tool_schemas=True)
        if unflagged:
            scores["tool_execution"] = (None, None)
            for way in (live, offline):
                assert "is_error" in str(way[case_id].scores["tool_execution"].reason), case_id
        assert seen["scores"] == scores, case_id


@pytest.mark.parametrize(
    "instrumented", ANTHROPIC_WITHOUT_CONTENT, ids=lambda f: f.name, indirect=True
)
def test_without_content_the_spans_say_what_they_leave_out(
    instrumented: Family,
    anthropic_server: ScriptedAnthropic,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    """No messages on the spans: only the anthropic SDK's own spans (no instrumentation; a
    TracerProvider is set, so it traces its calls: tokens and the stop reason, never the
    messages), or an instrumentation told to record no content. Each call counts once with its
    tokens; a call that stopped for `tool_use` says the tool calls are not recorded, naming the
    setting that records them (for the SDK alone, which has none, an instrumentation that
    does), never the SDK's span nested in or beside the instrumentation's; one that stopped
    with `end_turn` says no tool was asked for."""
    live, offline = _both(anthropic_server, trace_file, tmp_path)
    for case_id, expected in EXPECTED.items():
        for way, result in (("live", live[case_id]), ("offline", offline[case_id])):
            seen, where = _seen(result), f"{case_id} ({way})"
            assert (seen["failure"], seen["model_calls"]) == (None, expected.model_calls), where
            assert seen["usage"] == claude_usage(case_id), where
            assert seen["cost"] == pytest.approx(claude_cost(case_id)), where
            assert seen["calls"] == [], where
            if expected.calls:
                assert "tool_calls" in seen["not_recorded"], where
                reason = str(result.scores["tool_selection"].reason)
                assert instrumented.content_variable in reason, where
            else:
                assert "tool_calls" not in seen["not_recorded"], where
                assert seen["scores"]["tool_selection"] == (1.0, True), where
        assert "output" in offline[case_id].trial.not_recorded, case_id
        assert live[case_id].trial.output == expected.output, case_id
