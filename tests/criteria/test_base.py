"""The criterion interface: abstract methods, async evaluate, results, config, registry."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from pydantic import ValidationError

from agenteval import (
    CRITERIA_REGISTRY,
    BaseCriterion,
    CriterionConfig,
    CriterionResult,
    EvalCase,
    ExactMatchCriterion,
    ExecutionResult,
    MatchType,
    ResponseMatchCriterion,
    Rubric,
    RubricBasedCriterion,
    SyncCriterion,
    Trial,
    WeightedCriterion,
)
from agenteval.criteria.judging import judge_spec
from agenteval.errors import ConfigError

CASE = EvalCase(input="q", expected_output="yes")


# The abstract-class TypeError and the never-awaited warning: see test_seed_examples.py.


async def test_a_sync_rule_of_the_users_runs_in_a_worker_thread() -> None:
    class WhereAmI(SyncCriterion):
        name = "where"

        def evaluate_sync(self, actual: Trial, expected: EvalCase) -> CriterionResult:
            return self._result(1.0, {"thread": threading.current_thread().name})

    result = await WhereAmI().evaluate(ExecutionResult(), CASE)
    assert result.details["thread"] != threading.main_thread().name


def test_result_helpers() -> None:
    criterion = ExactMatchCriterion(config=CriterionConfig(threshold=0.9))
    assert (criterion.threshold, criterion.is_enabled) == (0.9, True)
    passing = criterion._result(0.9, {"a": 1})
    assert (passing.criterion, passing.passed, passing.details, passing.error) == (
        "exact_match",
        True,
        {"a": 1},
        None,
    )
    assert criterion._result(0.89).passed is False
    assert criterion._result(None).passed is None
    failure = criterion._failure("boom")
    assert (failure.score, failure.passed, failure.error) == (0.0, False, "boom")
    assert not failure.scored


def test_a_result_becomes_a_score_named_after_the_criterion() -> None:
    result = ExactMatchCriterion()._result(1.0, {"match": True}, reason="same")
    score = result.to_score()
    assert (score.name, score.value, score.passed, score.reason, score.details) == (
        "exact_match",
        1.0,
        True,
        "same",
        {"match": True},
    )
    error = ExactMatchCriterion()._failure("All LLM samples failed").to_score()
    assert error.error == "All LLM samples failed" and not error.applied


def test_config_defaults() -> None:
    config = CriterionConfig()
    assert config.model_dump() == {
        "threshold": 0.8,
        "enabled": True,
        "judge_model": "gemini-2.5-flash",
        "num_samples": 3,
        "api_style": "responses",
        "rubrics": [],
        "keywords": [],
        "match_type": MatchType.EXACT,
        "check_args": False,
    }
    assert BaseCriterion.__init__.__defaults__ == (None,)


def test_config_checks_its_fields() -> None:
    with pytest.raises(ValidationError):
        CriterionConfig(threshold=80)
    with pytest.raises(ValidationError):
        CriterionConfig(num_samples=0)
    with pytest.raises(ValidationError):
        CriterionConfig(exact_match=True)  # type: ignore[call-arg]


@pytest.mark.parametrize("text", ["IN_ORDER", "in_order", "in-order", "In Order"])
def test_match_type_reads_names_and_values(text: str) -> None:
    assert MatchType(text) is MatchType.IN_ORDER
    assert CriterionConfig(match_type=text).match_type is MatchType.IN_ORDER  # type: ignore[arg-type]


def test_factories_set_the_fields_they_name() -> None:
    config = CriterionConfig.trajectory(threshold=1.0, match_type="ANY_ORDER", check_args=True)
    assert (config.threshold, config.match_type, config.check_args) == (
        1.0,
        MatchType.ANY_ORDER,
        True,
    )
    rubric = CriterionConfig.rubric_based(rubrics=["Be brief."], threshold=0.7)
    assert rubric.rubrics[0].content == "Be brief." and rubric.threshold == 0.7
    # Leaving the judge out keeps the default, which the run's judge replaces.
    assert "judge_model" not in CriterionConfig.response_match(threshold=0.8).model_fields_set
    assert CriterionConfig.safety(judge_model="openai:gpt-4o").judge_model == "openai:gpt-4o"
    assert CriterionConfig.contains_keywords(["a"]).keywords == ["a"]
    assert (
        CriterionConfig.node_order(match_type=MatchType.IN_ORDER).match_type is MatchType.IN_ORDER
    )
    for factory in ("exact_match", "rouge_match", "tool_name_match"):
        assert getattr(CriterionConfig, factory)(threshold=0.5).threshold == 0.5
    for factory in ("llm_judge", "factual_accuracy", "hallucination"):
        assert getattr(CriterionConfig, factory)(num_samples=5).num_samples == 5


@pytest.mark.parametrize(
    ("judge_model", "spec"),
    [
        ("gemini-2.5-flash", "google:gemini-2.5-flash"),
        ("models/gemini-2.0-flash", "google:gemini-2.0-flash"),
        ("gemini/gemini-2.5-pro", "google:gemini-2.5-pro"),
        ("claude-haiku-4-5", "anthropic:claude-haiku-4-5"),
        ("gpt-4o-mini", "openai:gpt-4o-mini"),
        ("o3-mini", "openai:o3-mini"),
        ("openai:llama3.1:8b", "openai:llama3.1:8b"),
        ("anthropic/claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
        ("llama3.1:8b", "openai:llama3.1:8b"),
    ],
)
def test_judge_model_names_a_judge(judge_model: str, spec: str) -> None:
    assert judge_spec(judge_model) == spec


def test_validate_config_lists_what_is_wrong() -> None:
    assert ResponseMatchCriterion().validate_config() == []
    criterion = ResponseMatchCriterion(config=CriterionConfig(api_style="soap", judge_model=" "))
    errors = criterion.validate_config()
    assert any("api_style" in e for e in errors) and any("judge_model" in e for e in errors)
    with pytest.raises(ConfigError):
        judge_spec("google:")
    negative = RubricBasedCriterion(
        config=CriterionConfig.rubric_based([Rubric(rubric_id="r", content="c", weight=-1)])
    )
    assert negative.validate_config() == ["rubric 'r' has a negative weight (-1.0)"]
    weighted = WeightedCriterion([(ExactMatchCriterion(), -1.0), (negative, 1.0)])
    assert len(weighted.validate_config()) == 2


def test_registry_names_every_criterion_built_from_a_config() -> None:
    assert set(CRITERIA_REGISTRY) == {
        "exact_match",
        "contains_keywords",
        "rouge_match",
        "response_match_score",
        "per_turn_user_simulator_quality_v1",
        "final_response_match_v2",
        "rubric_based_final_response_quality_v1",
        "factual_accuracy_v1",
        "hallucinations_v1",
        "safety_v1",
        "tool_trajectory_avg_score",
        "node_order_score",
        "tool_name_match_score",
        "rubric_based_tool_use_quality_v1",
        "multi_turn_task_success_v1",
        "multi_turn_trajectory_quality_v1",
        "multi_turn_tool_use_quality_v1",
        "rubric_based_multi_turn_trajectory_quality_v1",
        "tool_call_count_v1",
        "inference_call_count_v1",
        "token_usage_v1",
        "invocation_duration_v1",
    }
    for name, cls in CRITERIA_REGISTRY.items():
        assert cls.name == name
        criterion = cls(config=CriterionConfig())
        assert criterion.description and criterion.validate_config() == []


async def test_a_custom_criterion_is_registered_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    class Short(SyncCriterion):
        name = "short"
        description = "Under 10 characters"

        def evaluate_sync(self, actual: Any, expected: Any) -> CriterionResult:
            return self._result(1.0 if len(actual.actual_response) < 10 else 0.0)

    monkeypatch.setitem(CRITERIA_REGISTRY, "short", Short)
    criterion = CRITERIA_REGISTRY["short"](config=CriterionConfig(threshold=1.0))
    result = await criterion.evaluate(ExecutionResult(actual_response="hi"), CASE)
    assert (result.criterion, result.score, result.passed) == ("short", 1.0, True)
