"""ADK's efficiency metrics (`tool_call_count_v1`, `inference_call_count_v1`, `token_usage_v1`,
`invocation_duration_v1`) from an ADK `test_config.json` through `AgentEvaluator`: the values
per turn, computed by hand; reported, never a pass or a fail (a case's status, the pass rate,
`report.passed`, the run's trial verdicts and the summaries); a threshold refused as ADK
refuses it; and the same values as ADK 2.13's own evaluators on the same invocations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import ConfigError, EvalCase, Invocation, ToolCall
from agenteval.agents.recorder import record_model_call
from agenteval.criteria import CRITERIA_REGISTRY, CriterionConfig
from agenteval.evalset import AgentEvaluator, CaseStatus, CriteriaConfig, EvalConfig
from agenteval.records import TrialResult
from agenteval.report.statistics import trial_passed
from agenteval.report.summary import SummaryBuilder
from agenteval.score import Score
from agenteval.scorers.reported import REPORTED, is_reported, reported_value
from agenteval.store import RunStore
from agenteval.trace import ModelCall, Trial, Usage

EFFICIENCY = (
    "tool_call_count_v1",
    "inference_call_count_v1",
    "token_usage_v1",
    "invocation_duration_v1",
)


@agenteval.tool
def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city."""
    return {"temp_c": 18, "sky": "rain"}


def _said(messages: Any) -> str:
    return str(messages[-1]["content"] if isinstance(messages, list) else messages)


def metered_agent(messages: Any) -> str:
    """Turn "Paris": two model calls, two tool calls; turn "umbrella": one of each; "hello":
    no model call recorded, no tool."""
    said = _said(messages)
    if "Paris" in said:
        record_model_call("gpt-x", input_tokens=100, output_tokens=20, cached_tokens=40)
        get_weather(city="Paris")
        get_weather(city="Lyon")
        record_model_call("gpt-x", input_tokens=50, output_tokens=10, reasoning_tokens=4)
        return "It is 18°C and raining in Paris."
    if "umbrella" in said:
        record_model_call("gpt-x", input_tokens=30, output_tokens=5)
        get_weather(city="Paris")
        return "Yes, take an umbrella."
    return "Hello!"


TWO_TURNS = EvalCase(
    id="paris",
    conversation=[
        Invocation(
            input="Weather in Paris?",
            expected_tool_trajectory=[ToolCall(name="get_weather", arguments={"city": "Paris"})],
        ),
        Invocation(
            input="Do I need an umbrella?",
            expected_tool_trajectory=[ToolCall(name="get_weather", arguments={"city": "Paris"})],
        ),
    ],
)
HELLO = EvalCase(id="hello", input="hello", expected_trajectory=[])


def _config(tmp_path: Path, criteria: dict[str, Any]) -> EvalConfig:
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps({"criteria": criteria}), encoding="utf-8")
    return EvalConfig.load(path)


def _evaluator(tmp_path: Path, config: EvalConfig, **options: Any) -> AgentEvaluator:
    return AgentEvaluator(metered_agent, config, store=tmp_path / "runs.db", **options)


async def test_values_per_turn_as_computed_by_hand(tmp_path: Path) -> None:
    config = _config(tmp_path, {name: {} for name in EFFICIENCY})
    report = await _evaluator(tmp_path, config).evaluate([TWO_TURNS])
    [result] = report.results
    scores = result.criterion_results
    assert all(is_reported(scores[name]) for name in EFFICIENCY)
    assert all(scores[name].passed is None and scores[name].value is None for name in EFFICIENCY)
    # 3 tool calls in 2 turns, 2 then 1.
    calls = scores["tool_call_count_v1"]
    assert reported_value(calls) == 1.5
    assert calls.details["per_turn"] == [2, 1]
    assert calls.details[REPORTED]["unit"] == "tool calls per turn"
    assert reported_value(scores["inference_call_count_v1"]) == 1.5
    # (100 + 50 + 30) in, (20 + 10 + 5) out: 215 tokens over 2 turns.
    tokens = scores["token_usage_v1"]
    assert reported_value(tokens) == 107.5
    assert tokens.details["token_usage"] == {
        "total_tokens": 107.5,
        "input_tokens": 90.0,
        "cached_tokens": 20.0,
        "output_tokens": 17.5,
        "reasoning_tokens": 2.0,
    }
    # The engine's measured latency, over the two turns.
    with RunStore(tmp_path / "runs.db", create=False) as store:
        [stored] = list(store.iter_results(report.run_id))
    duration = reported_value(scores["invocation_duration_v1"])
    assert stored.trial.latency_s is not None and duration == stored.trial.latency_s / 2
    parts = scores["invocation_duration_v1"].details["duration"]
    assert parts["total_seconds"] == round(stored.trial.latency_s / 2, 3)
    # Nothing passed or failed: only reported metrics ran.
    assert result.status is CaseStatus.NOT_EVALUATED
    stats = report.summary.criterion_stats["tool_call_count_v1"]
    assert (stats.reported, stats.mean, stats.threshold, stats.pass_rate) == (1, 1.5, None, None)
    assert stats.unit == "tool calls per turn"
    assert "tool_call_count_v1" in report.format_summary()
    assert "reported 1.50 tool calls per turn" in report.format_summary()


async def test_never_a_pass_nor_a_fail(tmp_path: Path) -> None:
    """A failing trajectory fails its case and nothing else does; a passing one passes, however
    many calls, tokens or seconds the metrics report."""
    criteria: dict[str, Any] = {"tool_trajectory_avg_score": 1.0, **{n: {} for n in EFFICIENCY}}
    config = _config(tmp_path, criteria)
    report = await _evaluator(tmp_path, config, trials=2, concurrency=8).evaluate(
        [TWO_TURNS, HELLO]
    )
    paris = report.case("paris")
    hello = report.case("hello")
    # Turn 1 called get_weather twice where one call was expected.
    assert {r.status for r in paris} == {CaseStatus.FAILED}
    assert {tuple(r.failed_criteria) for r in paris} == {("tool_trajectory_avg_score",)}
    assert {r.status for r in hello} == {CaseStatus.PASSED}
    assert report.summary.pass_rate == 0.5
    # "hello" made no tool call (a count of 0) and recorded no model call (not measured: no 0).
    [first, *_] = hello
    assert reported_value(first.criterion_results["tool_call_count_v1"]) == 0.0
    for name in ("inference_call_count_v1", "token_usage_v1"):
        score = first.criterion_results[name]
        assert reported_value(score) is None
        assert score.reason is not None and score.reason.startswith("not measured")
    stats = report.summary.criterion_stats
    assert (
        stats["inference_call_count_v1"].reported,
        stats["inference_call_count_v1"].skipped,
    ) == (2, 2)
    assert all(stats[n].failed == 0 and stats[n].errors == 0 for n in EFFICIENCY)
    # The engine's own verdicts and summary agree: reported scores count in neither.
    assert report.run.summary is not None
    run_stats = report.run.summary.scorers
    assert run_stats["tool_call_count_v1"].reported == 4
    assert run_stats["tool_call_count_v1"].reported_mean == pytest.approx((1.5 + 1.5 + 0 + 0) / 4)
    assert run_stats["tool_call_count_v1"].scored == 0
    assert run_stats["tool_call_count_v1"].pass_rate is None
    assert run_stats["token_usage_v1"].skipped == 2
    assert report.run.summary.passed.count == 2  # the two "hello" trials


async def test_the_adk_drop_in_passes_with_only_efficiency_metrics_over(tmp_path: Path) -> None:
    config = EvalConfig.from_adk(
        {"criteria": {"tool_trajectory_avg_score": 1.0}}, report_efficiency=True
    )
    report = await _evaluator(tmp_path, config).evaluate([HELLO])
    assert report.passed
    assert list(report.summary.criterion_stats) == ["tool_trajectory_avg_score", *EFFICIENCY]
    assert report.failures() == []


def test_a_reported_score_gives_no_trial_verdict() -> None:
    """`trial_passed`, which the summary, reliability, compare, HTML and the gate share."""
    case = EvalCase(id="c", input="q")
    measured = Score(name="tool_call_count_v1", details={REPORTED: {"value": 40.0, "unit": "x"}})
    passing = Score(name="exact_match", value=1.0, passed=True)
    trial = Trial(output="a")
    assert trial_passed(TrialResult(case=case, trial=trial, scores={"t": measured})) is None
    both = {"t": measured, "e": passing}
    assert trial_passed(TrialResult(case=case, trial=trial, scores=both)) is True
    builder = SummaryBuilder(["t"])
    builder.add(TrialResult(case=case, trial=trial, scores={"t": measured}))
    stats = builder.build().scorers["t"]
    assert (stats.reported, stats.reported_mean, stats.skipped, stats.scored) == (1, 40.0, 0, 0)


@pytest.mark.parametrize(
    "setting", [0.5, 1, {"threshold": 0.5}, {"threshold": 0.5, "enabled": True}]
)
def test_a_threshold_is_refused_as_in_adk(tmp_path: Path, setting: Any) -> None:
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps({"criteria": {"token_usage_v1": setting}}), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        EvalConfig.load(path)
    error = caught.value
    assert error.field == "criteria.token_usage_v1" and error.line == 1
    assert "takes no threshold" in error.message
    assert error.hint == 'write "token_usage_v1": {}: it is reported, never passed or failed'
    with pytest.raises(ValueError, match="takes no threshold"):
        CriteriaConfig(token_usage_v1=setting)


def test_settings_it_takes(tmp_path: Path) -> None:
    config = EvalConfig.from_adk(
        {
            "criteria": {
                "tool_call_count_v1": {},
                "token_usage_v1": True,
                "inference_call_count_v1": {"enabled": False},
            }
        }
    )
    assert list(config.criteria.configured()) == ["tool_call_count_v1", "token_usage_v1"]
    with pytest.raises(ConfigError, match="unknown setting 'enabld'") as caught:
        EvalConfig.from_adk({"criteria": {"tool_call_count_v1": {"enabld": True}}})
    assert caught.value.hint == "did you mean 'enabled'?"
    # A criterion built by hand with a threshold is refused when the run starts.
    criterion = CRITERIA_REGISTRY["invocation_duration_v1"](CriterionConfig(threshold=0.2))
    assert criterion.validate_config() == [
        "invocation_duration_v1 reports a value and never passes or fails, so it takes no "
        "threshold (as in ADK): remove the threshold"
    ]


# --- the same invocations through ADK 2.13's own evaluators


def _adk_invocations() -> list[Any]:
    """TWO_TURNS as ADK records it: turn 1 two model events (the first asking for two tools),
    turn 2 one."""
    from google.adk.evaluation.eval_case import Invocation as AdkInvocation
    from google.adk.evaluation.eval_case import InvocationEvent, InvocationEvents
    from google.genai import types

    def model_event(
        prompt: int, out: int, calls: list[str], *, cached: int = 0, thoughts: int | None = None
    ) -> Any:
        parts = [
            types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": c}))
            for c in calls
        ]
        return InvocationEvent(
            author="weather",
            content=types.Content(role="model", parts=parts or [types.Part(text="...")]),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=prompt,
                candidates_token_count=out - (thoughts or 0),
                thoughts_token_count=thoughts,
                cached_content_token_count=cached,
            ),
            model_version="gpt-x",
        )

    def tool_event(city: str) -> Any:
        response = types.FunctionResponse(name="get_weather", response={"temp_c": 18, "city": city})
        return InvocationEvent(
            author="weather",
            content=types.Content(role="user", parts=[types.Part(function_response=response)]),
        )

    def turn(text: str, events: list[Any], duration: float) -> Any:
        return AdkInvocation(
            user_content=types.Content(role="user", parts=[types.Part(text=text)]),
            intermediate_data=InvocationEvents(invocation_events=events),
            duration=duration,
        )

    return [
        turn(
            "Weather in Paris?",
            [
                model_event(100, 20, ["Paris", "Lyon"], cached=40),
                tool_event("Paris"),
                tool_event("Lyon"),
                model_event(50, 10, [], thoughts=4),
            ],
            0.5,
        ),
        turn("Do I need an umbrella?", [model_event(30, 5, ["Paris"]), tool_event("Paris")], 0.25),
    ]


def _trial() -> Trial:
    """The same two turns as agenteval records them (latency 0.75 s)."""
    from agenteval.trace import AgentStep

    def call(city: str) -> ToolCall:
        return ToolCall(name="get_weather", arguments={"city": city}, result={"temp_c": 18})

    return Trial(
        steps=[
            AgentStep(tool_calls=[call("Paris"), call("Lyon")], output="It rains."),
            AgentStep(tool_calls=[call("Paris")], output="Yes."),
        ],
        model_calls=[
            ModelCall(
                model="gpt-x", usage=Usage(input_tokens=100, output_tokens=20, cached_tokens=40)
            ),
            ModelCall(
                model="gpt-x", usage=Usage(input_tokens=50, output_tokens=10, reasoning_tokens=4)
            ),
            ModelCall(model="gpt-x", usage=Usage(input_tokens=30, output_tokens=5)),
        ],
        latency_s=0.75,
        metadata={"turn_outputs": ["It rains.", "Yes."]},
    )


def _adk_evaluator(name: str) -> Any:
    """ADK's evaluator of the metric, from its registry; without pandas (ADK's `eval` extra,
    which the registry's Vertex AI facade imports), from the module the registry takes these
    four from, google-adk 2.13's `_efficiency_evaluators` (a test-only read of ADK's code)."""
    from google.adk.evaluation.eval_metrics import EvalMetric

    try:
        from google.adk.evaluation.metric_evaluator_registry import (
            DEFAULT_METRIC_EVALUATOR_REGISTRY,
        )
    except ImportError:
        import importlib

        module = importlib.import_module("google.adk.evaluation._efficiency_evaluators")
        classes = {
            "tool_call_count_v1": "_ToolCallCountV1Evaluator",
            "inference_call_count_v1": "_InferenceCallCountV1Evaluator",
            "token_usage_v1": "_TokenUsageV1Evaluator",
            "invocation_duration_v1": "_InvocationDurationV1Evaluator",
        }
        return getattr(module, classes[name])(EvalMetric(metric_name=name))
    return DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(EvalMetric(metric_name=name))


@pytest.mark.parametrize("name", EFFICIENCY)
async def test_the_same_value_as_adks_own_evaluator(name: str) -> None:
    adk = _adk_evaluator(name).evaluate_invocations(_adk_invocations())
    ours = await CRITERIA_REGISTRY[name]()(TWO_TURNS, _trial())
    assert adk.overall_score is not None
    assert reported_value(ours) == pytest.approx(adk.overall_score)
    if name == "token_usage_v1":
        details = adk.overall_token_usage_details
        assert details is not None
        assert ours.details["token_usage"] == pytest.approx(
            {
                "total_tokens": details.total_tokens,
                "input_tokens": details.input_tokens,
                "cached_tokens": details.cached_tokens,
                "output_tokens": details.output_tokens,
                "reasoning_tokens": details.reasoning_tokens,
            }
        )
    if name == "tool_call_count_v1":
        assert ours.details["per_turn"] == [r.score for r in adk.per_invocation_results]
