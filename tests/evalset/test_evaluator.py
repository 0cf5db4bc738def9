"""`AgentEvaluator`: an agent over an ADK eval set, on agenteval's engine, with a report."""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.judge.fakes import FakeOpenAI, verdict

import agenteval
from agenteval import ConfigError, EvalCase, Invocation, ToolCall
from agenteval.criteria import (
    CriterionConfig,
    ExactMatchCriterion,
    MatchType,
    SyncCriterion,
)
from agenteval.evalset import (
    AgentEvaluator,
    CaseStatus,
    EvalConfig,
    EvalSet,
)
from agenteval.judge.judge import JudgeConfig
from agenteval.store import RunStore

DATA = Path(__file__).parent / "data"


# --- a weather agent and a home automation agent, with recorded tools


@agenteval.tool
def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city."""
    return {"temp_c": 18, "sky": "rain"}


@agenteval.tool
def set_device_info(location: str, device_id: str, status: str) -> str:
    """Switch a device."""
    return "ok"


@agenteval.tool
def get_device_info(device_id: str) -> dict[str, str]:
    """A device's status."""
    return {"status": "OFF"}


def last_user_turn(messages: Any) -> str:
    return str(messages[-1]["content"] if isinstance(messages, list) else messages)


def weather_agent(messages: Any) -> str:
    said = last_user_turn(messages)
    if "Paris" in said:
        get_weather(city="Paris")
        return "It is 18°C and raining in Paris."
    if "umbrella" in said:
        return "Yes, take an umbrella."
    return "Hello! Ask me about the weather."


def home_agent(messages: Any) -> str:
    said = last_user_turn(messages)
    if "Turn off" in said:
        set_device_info(location="Bedroom", device_id="device_2", status="OFF")
        return "I have set the device_2 status to off."
    get_device_info(device_id="device_2")
    return "device_2 is off."


TOOLS = EvalConfig(
    criteria={
        "tool_trajectory_avg_score": CriterionConfig.trajectory(threshold=1.0, check_args=True),
        "rouge_match": 0.5,
    }
)


# --- deterministic criteria


async def test_an_adk_eval_set_runs_turn_by_turn_and_reports_per_criterion(
    tmp_path: Path,
) -> None:
    evaluator = AgentEvaluator(weather_agent, TOOLS, store=tmp_path / "runs.db")

    report = await evaluator.evaluate(EvalSet.load(DATA / "weather.evalset.json"))

    assert report.eval_set_id == "weather_agent"
    assert [(r.eval_id, r.status) for r in report.results] == [
        ("paris_then_umbrella", CaseStatus.PASSED),
        ("greeting", CaseStatus.PASSED),
    ]
    paris = report.case("paris_then_umbrella")[0]
    assert paris.actual_response == "Yes, take an umbrella."  # the last turn's answer
    assert [c.name for c in paris.tool_calls] == ["get_weather"]

    summary = report.summary
    assert (summary.total_cases, summary.passed_cases, summary.pass_rate) == (2, 2, 1.0)
    trajectory = summary.criterion_stats["tool_trajectory_avg_score"]
    assert (trajectory.threshold, trajectory.mean, trajectory.passed, trajectory.scored) == (
        1.0,
        1.0,
        2,
        2,
    )
    rouge = summary.criterion_stats["rouge_match"]
    assert rouge.mean == pytest.approx(1.0) and rouge.pass_rate == 1.0
    # The Paris case expects a final session state the agent does not report, and the
    # greeting expects none: no score for either, with the reason.
    session = summary.criterion_stats["final_session_state_match"]
    assert (session.scored, session.skipped) == (0, 2)
    assert "reported no session state" in (
        paris.criterion_results["final_session_state_match"].reason or ""
    )


async def test_the_report_is_the_engines_run(tmp_path: Path) -> None:
    report = await AgentEvaluator(weather_agent, TOOLS, store=tmp_path / "runs.db").evaluate(
        DATA / "weather.evalset.json"
    )

    with RunStore(tmp_path / "runs.db", create=False) as store:
        info = store.get_info(report.run_id)
    assert info.builtins is False and info.trials == 1
    stored = {r.case.id: r.scores for r in report.run.results}
    assert set(stored["greeting"]) == {
        "tool_trajectory_avg_score",
        "rouge_match",
        "final_session_state_match",
    }
    document = report.to_json()
    assert document["run_id"] == report.run_id
    assert document["summary"]["criterion_stats"]["rouge_match"]["passed"] == 2
    json.dumps(document)


async def test_a_failing_case_names_the_criterion_that_failed(tmp_path: Path) -> None:
    def forgetful(messages: Any) -> str:  # answers Paris from memory, without the tool
        if "Paris" in last_user_turn(messages):
            return "It is 18°C and raining in Paris."
        return weather_agent(messages)

    report = await AgentEvaluator(forgetful, TOOLS, store=tmp_path / "runs.db").evaluate(
        EvalSet.load(DATA / "weather.evalset.json")
    )

    (failure,) = report.failures()
    assert failure.eval_id == "paris_then_umbrella"
    assert failure.failed_criteria == ["tool_trajectory_avg_score"]
    assert report.summary.pass_rate == 0.5
    text = report.format_summary()
    assert "1/2 cases passed" in text
    assert "FAILED paris_then_umbrella" in text
    assert "tool_trajectory_avg_score" in text


async def test_a_legacy_test_file_runs_with_the_test_config_beside_it(tmp_path: Path) -> None:
    evaluator = AgentEvaluator(home_agent, store=tmp_path / "runs.db")

    report = await evaluator.evaluate(DATA / "legacy" / "home.test.json")

    # test_config.json: tool_trajectory_avg_score 1.0 (with arguments), ROUGE-1 at 0.5.
    assert list(report.summary.criterion_stats) == ["tool_trajectory_avg_score", "rouge_match"]
    (result,) = report.results
    assert result.status is CaseStatus.PASSED
    assert [c.name for c in result.tool_calls] == ["set_device_info", "get_device_info"]


async def test_trials_are_adks_num_runs(tmp_path: Path) -> None:
    report = await AgentEvaluator(
        weather_agent, TOOLS, trials=2, store=tmp_path / "runs.db"
    ).evaluate(DATA / "weather.evalset.json")

    assert report.summary.trials == 4
    assert report.summary.total_cases == 2
    assert [r.trial for r in report.case("greeting")] == [0, 1]


async def test_criteria_attached_by_hand_run_beside_the_configured_ones(tmp_path: Path) -> None:
    class MaxLengthCriterion(SyncCriterion):
        name = "max_length"
        description = "Response must stay under 30 characters"

        def evaluate_sync(self, actual, expected):  # type: ignore[no-untyped-def]
            length = len(actual.actual_response)
            return self._result(1.0 if length <= 30 else 0.0, {"length": length})

    evaluator = AgentEvaluator(
        weather_agent,
        EvalConfig(criteria={"rouge_match": 0.5}, check_final_session_state=False),
        criteria=[ExactMatchCriterion(), MaxLengthCriterion()],
        store=tmp_path / "runs.db",
    )
    report = await evaluator.evaluate(DATA / "weather.evalset.json")

    assert list(report.summary.criterion_stats) == ["rouge_match", "exact_match", "max_length"]
    greeting = report.case("greeting")[0]
    assert greeting.criterion_results["exact_match"].passed is True
    assert greeting.criterion_results["max_length"].passed is False  # 32 characters
    assert report.summary.criterion_stats["max_length"].failed == 1


async def test_evaluate_case_and_evaluate_sync(tmp_path: Path) -> None:
    evaluator = AgentEvaluator(weather_agent, TOOLS, store=tmp_path / "runs.db")
    case = EvalCase(
        id="rome",
        conversation=[
            Invocation(
                input="Weather in Paris?",
                expected_tool_trajectory=[ToolCall(name="get_weather", args={"city": "Paris"})],
            )
        ],
    )
    result = await evaluator.evaluate_case(case)
    assert (result.eval_id, result.status) == ("rome", CaseStatus.PASSED)

    with pytest.raises(RuntimeError, match="running event loop"):
        evaluator.evaluate_sync([case])


def test_evaluate_sync_outside_an_event_loop(tmp_path: Path) -> None:
    report = AgentEvaluator(weather_agent, TOOLS, store=tmp_path / "runs.db").evaluate_sync(
        DATA / "weather.evalset.json"
    )
    assert report.passed


async def test_an_infrastructure_failure_is_not_judged(tmp_path: Path) -> None:
    release = threading.Event()

    def stuck(messages: Any) -> str:
        release.wait(5)
        return "too late"

    evaluator = AgentEvaluator(stuck, TOOLS, timeout=0.05, retries=0, store=tmp_path / "runs.db")
    try:
        report = await evaluator.evaluate([EvalCase(id="slow", input="Weather in Paris?")])
    finally:
        release.set()
    (result,) = report.results
    assert result.status is CaseStatus.ERROR
    assert result.error is not None and result.error.startswith("timeout")
    assert (report.summary.error_cases, report.summary.pass_rate) == (1, None)


async def test_configuration_mistakes(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="two criteria are named 'rouge_match'"):
        await AgentEvaluator(
            weather_agent,
            EvalConfig(criteria={"rouge_match": 0.5}),
            criteria=[agenteval.RougeMatchCriterion()],
            store=tmp_path / "runs.db",
        ).evaluate(DATA / "weather.evalset.json")

    with pytest.raises(ConfigError, match="no criteria"):
        await AgentEvaluator(
            weather_agent, EvalConfig(check_final_session_state=False), store=tmp_path / "r.db"
        ).evaluate([EvalCase(input="Hi")])

    with pytest.raises(TypeError, match="no trajectory collector is needed"):
        AgentEvaluator(weather_agent, object())  # type: ignore[arg-type]


# --- the judge: ties and per-turn rubrics


def alternating(fake: FakeOpenAI) -> None:
    """Judge samples that alternate between a pass (1.0) and a fail (0.0)."""
    counter = itertools.count()
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> Any:
        with lock:
            n = next(counter)
        return verdict({"reasoning": "coin", "score": 1.0 if n % 2 == 0 else 0.0})

    fake.handler = answer


async def test_a_judge_tie_is_undecided_not_a_fail(
    fake_judge: FakeOpenAI, judge_config: JudgeConfig, tmp_path: Path
) -> None:
    alternating(fake_judge)
    evaluator = AgentEvaluator(
        weather_agent,
        EvalConfig(
            criteria={"final_response_match_v2": {"threshold": 0.8, "num_samples": 2}},
            check_final_session_state=False,
        ),
        judge=judge_config,
        store=tmp_path / "runs.db",
        # One case at a time: the fake judge alternates its answers across all requests.
        concurrency=1,
    )

    report = await evaluator.evaluate(DATA / "weather.evalset.json")

    for result in report.results:
        score = result.criterion_results["final_response_match_v2"]
        assert (score.value, score.passed) == (None, None)
        assert score.details["tie"] is True
        assert score.details["tie_votes"] == {"pass": 1, "fail": 1}
        assert score.reason is not None and score.reason.startswith("judge tie: 1 of 2")
        assert result.status is CaseStatus.UNDECIDED
    stats = report.summary.criterion_stats["final_response_match_v2"]
    assert (stats.ties, stats.failed, stats.pass_rate) == (2, 0, None)
    assert (report.summary.undecided_cases, report.summary.failed_cases) == (2, 0)
    # The run store agrees: a tie is no score, not a failing one.
    assert report.run.summary.scorers["final_response_match_v2"].skipped == 2


async def test_a_majority_is_not_a_tie(
    fake_judge: FakeOpenAI, judge_config: JudgeConfig, tmp_path: Path
) -> None:
    alternating(fake_judge)  # 3 samples: pass, fail, pass
    report = await AgentEvaluator(
        weather_agent,
        EvalConfig(
            criteria={"final_response_match_v2": {"threshold": 0.6, "num_samples": 3}},
            check_final_session_state=False,
        ),
        judge=judge_config,
        store=tmp_path / "runs.db",
    ).evaluate([EvalCase(id="hi", input="Hi!", expected_output="Hello!")])

    score = report.results[0].criterion_results["final_response_match_v2"]
    assert score.value is not None and "tie" not in score.details


def rubric_judge(fake: FakeOpenAI, seen: list[str]) -> None:
    """A judge that passes a rubric only when the answer it grades meets it."""
    meets = {
        "gives_temperature": lambda answer: "°C" in answer,
        "answers_yes_or_no": lambda answer: answer.startswith(("Yes", "No")),
        "polite": lambda answer: True,
    }

    def answer(body: dict[str, Any]) -> Any:
        prompt = body["messages"][-1]["content"]
        graded = prompt.split("BEGIN answer", 1)[1].split("\n", 1)[1].split("<<<END", 1)[0]
        seen.append(graded.strip())
        ids = [rid for rid in meets if f"- {rid}:" in prompt]
        scores = [1.0 if meets[rid](graded.strip()) else 0.0 for rid in ids]
        return verdict(
            {
                "reasoning": "graded",
                "rubric_scores": [
                    {"rubric_id": rid, "score": s} for rid, s in zip(ids, scores, strict=True)
                ],
                "score": sum(scores) / len(scores),
            }
        )

    fake.handler = answer


async def test_every_turns_rubrics_are_graded_against_that_turns_answer(
    fake_judge: FakeOpenAI, judge_config: JudgeConfig, tmp_path: Path
) -> None:
    seen: list[str] = []
    rubric_judge(fake_judge, seen)
    evaluator = AgentEvaluator(
        weather_agent,
        EvalConfig(
            criteria={"rubric_based_final_response_quality_v1": {"num_samples": 1}},
            check_final_session_state=False,
        ),
        judge=judge_config,
        store=tmp_path / "runs.db",
    )

    report = await evaluator.evaluate(DATA / "weather.evalset.json")

    paris = report.case("paris_then_umbrella")[0].criterion_results[
        "rubric_based_final_response_quality_v1"
    ]
    # Turn 1 ("states the temperature") against turn 1's answer, turn 2 against turn 2's; the
    # case's own rubric ("polite") on both. ADK would have graded turn 2's rubrics only.
    assert paris.value == 1.0 and paris.passed is True
    assert [(t["turn"], t["rubrics"], t["score"]) for t in paris.details["per_turn"]] == [
        (1, ["polite", "gives_temperature"], 1.0),
        (2, ["polite", "answers_yes_or_no"], 1.0),
    ]
    # The greeting has no rubrics at all: it scores 1.0 without a judge call.
    assert sorted(seen) == ["It is 18°C and raining in Paris.", "Yes, take an umbrella."]


async def test_a_turn_that_misses_its_rubric_fails_the_case(
    fake_judge: FakeOpenAI, judge_config: JudgeConfig, tmp_path: Path
) -> None:
    rubric_judge(fake_judge, [])

    def vague(messages: Any) -> str:
        said = last_user_turn(messages)
        if "Paris" in said:
            get_weather(city="Paris")
            return "It is rainy in Paris."  # no temperature
        return "Yes, take an umbrella."

    report = await AgentEvaluator(
        vague,
        EvalConfig(
            criteria={"rubric_based_final_response_quality_v1": {"num_samples": 1}},
            check_final_session_state=False,
        ),
        judge=judge_config,
        store=tmp_path / "runs.db",
    ).evaluate(DATA / "weather.evalset.json")

    paris = report.case("paris_then_umbrella")[0]
    score = paris.criterion_results["rubric_based_final_response_quality_v1"]
    assert score.value == pytest.approx(0.75)  # turn 1: polite 1, temperature 0; turn 2: 1
    assert paris.status is CaseStatus.FAILED


async def test_without_a_judge_the_llm_criteria_give_no_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTEVAL_JUDGE"):
        monkeypatch.delenv(name, raising=False)
    config = EvalConfig(criteria={"final_response_match_v2": 0.8}, check_final_session_state=False)
    # A judge asked for that cannot run (no key) is refused before anything runs, as
    # `agenteval run --judge` and `evaluate(judge=...)` refuse it.
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        await AgentEvaluator(
            weather_agent, config, judge="openai:gpt-4o-mini", store=tmp_path / "runs.db"
        ).evaluate(DATA / "weather.evalset.json")
    report = await AgentEvaluator(weather_agent, config, store=tmp_path / "runs.db").evaluate(
        DATA / "weather.evalset.json"
    )

    for result in report.results:
        score = result.criterion_results["final_response_match_v2"]
        assert score.value is None and score.reason is not None
        assert result.status is CaseStatus.NOT_EVALUATED
    assert report.summary.not_evaluated_cases == 2


def test_match_type_reaches_the_criterion(tmp_path: Path) -> None:
    def chatty(messages: Any) -> str:
        get_weather(city="Lyon")
        return weather_agent(messages)

    def run(match: MatchType) -> CaseStatus:
        config = EvalConfig(
            criteria={"tool_trajectory_avg_score": CriterionConfig.trajectory(1.0, match, True)},
            check_final_session_state=False,
        )
        report = AgentEvaluator(chatty, config, store=tmp_path / "runs.db").evaluate_sync(
            EvalSet.load(DATA / "weather.evalset.json")
        )
        return report.case("paris_then_umbrella")[0].status

    assert run(MatchType.EXACT) is CaseStatus.FAILED
    assert run(MatchType.IN_ORDER) is CaseStatus.PASSED
