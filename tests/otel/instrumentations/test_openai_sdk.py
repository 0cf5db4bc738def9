"""A plain openai-SDK tool loop under each real openai instrumentation: the official openai-v2
(with content capture, and without), OpenInference and OpenLLMetry. These emit model-call
spans only, no tool spans: the tool calls are in the messages (or, without content capture,
nowhere). Live capture and offline scoring of the same agent must record the same tool calls,
arguments, results, errors, tokens and cost, and those must be what the agent did."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry import trace

from agenteval.records import TrialResult

from .agents import (
    EXPECTED,
    TOOLS,
    expected_cost,
    expected_scores,
    expected_usage,
    openai_agent,
)
from .families import (
    OPENAI_INSTRUMENTATIONS,
    OPENAI_V2,
    OPENAI_V2_NO_CONTENT,
    OPENINFERENCE,
    OPENINFERENCE_HIDDEN,
    OPENLLMETRY,
    OPENLLMETRY_NO_CONTENT,
    Family,
    require,
)
from .loopback import ScriptedOpenAI
from .runs import TraceFile, check_as_expected, facts, run_live, run_offline

require(*OPENAI_INSTRUMENTATIONS)


WITH_CONTENT = [OPENAI_V2, OPENINFERENCE, OPENLLMETRY]


def _both(
    server: ScriptedOpenAI, trace_file: TraceFile, tmp_path: Path
) -> tuple[dict[str, TrialResult], dict[str, TrialResult]]:
    agent = openai_agent(server.base_url)
    offline = run_offline(agent, trace_file, tmp_path / "offline.db")
    live = run_live(agent, tmp_path / "live.db")
    return live, offline


@pytest.mark.parametrize("instrumented", WITH_CONTENT, ids=lambda f: f.name, indirect=True)
def test_live_and_offline_agree_on_what_the_agent_did(
    instrumented: Family,
    openai_server: ScriptedOpenAI,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    live, offline = _both(openai_server, trace_file, tmp_path)
    assert set(live) == set(offline) == set(EXPECTED)
    for case_id, expected in EXPECTED.items():
        seen = facts(live[case_id])
        assert seen == facts(offline[case_id]), case_id
        # Agreeing is not enough: both must be what the agent did.
        assert seen["calls"] == expected.calls, case_id
        for result, call_error, wanted in zip(
            seen["results"], seen["call_errors"], expected.results, strict=True
        ):
            if wanted is None:  # the failed call: its error shows, as error or as result
                assert expected.error is not None and expected.error in str(call_error)
            else:
                assert result == wanted and call_error is None, case_id
        assert seen["output"] == expected.output, case_id
        assert seen["failure"] is None, case_id
        assert seen["not_recorded"] == [], case_id
        assert seen["model_calls"] == expected.model_calls, case_id
        details = instrumented.token_details
        assert seen["usage"] == expected_usage(case_id, details=details), case_id
        assert seen["unpriced"] == [], case_id
        assert seen["cost"] == pytest.approx(expected_cost(case_id, details=details)), case_id
        assert seen["scores"] == expected_scores(case_id, tool_schemas=instrumented.tool_schemas), (
            case_id
        )


TOOL_SCORES = ("tool_selection", "trajectory_order", "tool_call_accuracy[require_order]")
"""The scores that judge which tools were called, and in which order."""


WITHOUT_CONTENT = [OPENAI_V2_NO_CONTENT, OPENINFERENCE_HIDDEN, OPENLLMETRY_NO_CONTENT]


@pytest.mark.parametrize("instrumented", WITHOUT_CONTENT, ids=lambda f: f.name, indirect=True)
def test_without_content_capture_tool_calls_are_unknown_not_absent(
    instrumented: Family,
    openai_server: ScriptedOpenAI,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    """openai-v2's default records no message content (nor does OpenLLMetry with
    `TRACELOOP_TRACE_CONTENT=false`, or OpenInference told to hide inputs and outputs): a
    model call says it asked for tools (its finish reason) but not which. The honest reading is
    "not recorded": no tool score, with a reason naming the variable that turns capture on;
    never "answered without calling any tool", and never a trial failed for giving no answer.
    Tokens and cost are on the spans whatever the content setting."""
    variable = instrumented.content_variable
    details = instrumented.token_details
    live, offline = _both(openai_server, trace_file, tmp_path)
    assert set(live) == set(offline) == set(EXPECTED)
    for case_id, expected in EXPECTED.items():
        for way, result in (("live", live[case_id]), ("offline", offline[case_id])):
            seen = facts(result)
            where = f"{case_id} ({way})"
            assert seen["failure"] is None, where
            assert seen["model_calls"] == expected.model_calls, where
            assert seen["usage"] == expected_usage(case_id, details=details), where
            assert seen["cost"] == pytest.approx(expected_cost(case_id, details=details)), where
            if not expected.calls:
                continue  # no tool asked for: whether that reads as "none" is not specified
            assert seen["calls"] == [], where
            assert "tool_calls" in seen["not_recorded"], where
            for name in (*TOOL_SCORES, "tool_arguments_valid", "tool_execution"):
                assert result.scores[name].value is None, f"{where}: {name}"
            for name in TOOL_SCORES:
                assert variable in str(result.scores[name].reason), f"{where}: {name}"
        # Live, the answer is what the agent returned; offline it is nowhere in the trace.
        assert live[case_id].trial.output == expected.output, case_id
        assert live[case_id].scores["exact_match"].value == 1.0, case_id
        assert offline[case_id].trial.output is None, case_id
        assert "output" in offline[case_id].trial.not_recorded, case_id
        answer = offline[case_id].scores["exact_match"]
        assert answer.value is None and variable in str(answer.reason), case_id
        # Live and offline agree on what the trace records; the scores may differ where live
        # has the answer the agent handed back and offline has not.
        same = ("calls", "usage", "cost", "model_calls", "failure")
        assert {k: facts(live[case_id])[k] for k in same} == {
            k: facts(offline[case_id])[k] for k in same
        }, case_id


@pytest.mark.parametrize("instrumented", [OPENINFERENCE], ids=lambda f: f.name, indirect=True)
def test_tool_spans_of_the_app_win_over_the_messages_and_count_once(
    instrumented: Family,
    openai_server: ScriptedOpenAI,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    """The app also traces its tools, with OpenInference's own `@tracer.tool` (TOOL spans with
    `tool.name`, `input.value`, `output.value`, and the exception of the one that fails): the
    calls are then in the tool spans and in the messages both, and each counts once. A TOOL
    span carries no tool-call id; whether the messages lend it theirs is not specified."""
    from openinference.instrumentation import OITracer, TraceConfig

    tracer = OITracer(trace.get_tracer("weather-app"), config=TraceConfig())
    traced = {name: tracer.tool(name=name)(function) for name, function in TOOLS.items()}
    agent = openai_agent(openai_server.base_url, tools=traced)
    offline = run_offline(agent, trace_file, tmp_path / "offline.db")
    live = run_live(agent, tmp_path / "live.db")
    assert set(live) == set(offline) == set(EXPECTED)
    for case_id in EXPECTED:
        seen = facts(live[case_id])
        assert seen == facts(offline[case_id]), case_id
        check_as_expected(seen, case_id)
