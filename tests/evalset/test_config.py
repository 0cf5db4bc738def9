"""`EvalConfig` and `CriteriaConfig`: agenteval's criterion names, and ADK's `test_config.json`."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agenteval import ConfigError, Rubric
from agenteval.criteria import (
    CRITERIA_REGISTRY,
    CriterionConfig,
    MatchType,
    RougeMatchCriterion,
    SafetyCriterion,
    SyncCriterion,
    TrajectoryMatchCriterion,
)
from agenteval.evalset import CriteriaConfig, EvalConfig

DATA = Path(__file__).parent / "data"


def test_criteria_take_a_threshold_a_criterion_config_or_settings() -> None:
    config = EvalConfig(
        criteria={
            "tool_trajectory_avg_score": CriterionConfig.trajectory(
                threshold=1.0, match_type=MatchType.IN_ORDER
            ),
            "safety_v1": 0.9,
            "contains_keywords": {"keywords": ["refund"], "threshold": 1.0},
        }
    )
    configured = config.criteria.configured()

    assert list(configured) == ["tool_trajectory_avg_score", "contains_keywords", "safety_v1"]
    assert configured["tool_trajectory_avg_score"].match_type is MatchType.IN_ORDER
    assert configured["safety_v1"].threshold == 0.9
    assert configured["contains_keywords"].keywords == ["refund"]


def test_an_unknown_criterion_field_is_a_value_error_with_exactly_this_message() -> None:
    with pytest.raises(ValueError) as caught:
        CriteriaConfig(exact_match=CriterionConfig())
    assert type(caught.value) is ValueError
    assert str(caught.value) == "Unknown criterion field: 'exact_match'"

    for attempt in (
        lambda: EvalConfig(criteria={"exact_match": 1.0}),
        lambda: EvalConfig.model_validate({"criteria": {"exact_match": 1.0}}),
        lambda: CriteriaConfig.model_validate({"exact_match": 1.0}),
    ):
        with pytest.raises(ValueError, match=r"^Unknown criterion field: 'exact_match'$"):
            attempt()


def test_adk_settings_are_read_in_either_key_style() -> None:
    config = EvalConfig(
        criteria={
            "rubric_based_final_response_quality_v1": {
                "threshold": 0.7,
                "judgeModelOptions": {"judgeModel": "gemini-2.5-pro", "numSamples": 5},
                "rubrics": [
                    {"rubricId": "concise", "rubricContent": {"textProperty": "Under 50 words."}}
                ],
            },
            "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": 1},
        }
    )
    rubric = config.criteria.rubric_based_final_response_quality_v1
    assert rubric is not None
    assert (rubric.judge_model, rubric.num_samples) == ("gemini-2.5-pro", 5)
    assert rubric.rubrics == [Rubric(rubric_id="concise", content="Under 50 words.")]
    trajectory = config.criteria.tool_trajectory_avg_score
    assert trajectory is not None and trajectory.match_type is MatchType.IN_ORDER


def test_bad_settings_are_named() -> None:
    with pytest.raises(ValueError, match="unknown setting 'treshold'"):
        EvalConfig(criteria={"safety_v1": {"treshold": 0.5}})
    with pytest.raises(ValueError, match="match_type should be EXACT, IN_ORDER or ANY_ORDER"):
        EvalConfig(criteria={"tool_trajectory_avg_score": {"match_type": "SOMETIMES"}})
    with pytest.raises(ValueError, match="less than or equal to 1"):
        EvalConfig(criteria={"safety_v1": 1.5})


def test_criteria_are_built_from_the_registry() -> None:
    built = EvalConfig(criteria={"safety_v1": 0.9, "rouge_match": 0.5}).criteria.build()

    assert [type(c) for c in built] == [RougeMatchCriterion, SafetyCriterion]
    assert [c.threshold for c in built] == [0.5, 0.9]


def test_a_class_registered_under_a_field_name_takes_its_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class StrictSafety(SyncCriterion):
        name = "safety_v1"

        def evaluate_sync(self, actual, expected):  # type: ignore[no-untyped-def]
            return self._result(1.0)

    monkeypatch.setitem(CRITERIA_REGISTRY, "safety_v1", StrictSafety)
    (built,) = EvalConfig(criteria={"safety_v1": 0.9}).criteria.build()
    assert isinstance(built, StrictSafety)


def test_a_disabled_criterion_does_not_run() -> None:
    config = EvalConfig(criteria={"safety_v1": {"enabled": False}, "rouge_match": 0.5})
    assert list(config.criteria.configured()) == ["rouge_match"]


# --- ADK's test_config.json


def test_adk_test_config_keeps_adks_meaning_of_its_metric_names() -> None:
    config = EvalConfig.load(DATA / "legacy" / "test_config.json")

    configured = config.criteria.configured()
    assert list(configured) == ["tool_trajectory_avg_score", "rouge_match"]
    # ADK compares tool arguments, and its response_match_score is ROUGE-1.
    assert configured["tool_trajectory_avg_score"].check_args is True
    assert configured["tool_trajectory_avg_score"].threshold == 1.0
    assert configured["rouge_match"].threshold == 0.5
    assert config.criteria.response_match_score is None


def test_every_adk_metric_with_its_criterion_settings(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="agenteval"):
        config = EvalConfig.load(DATA / "config_rubrics.json")

    c = config.criteria
    assert c.tool_trajectory_avg_score is not None
    assert c.tool_trajectory_avg_score.match_type is MatchType.IN_ORDER
    assert c.final_response_match_v2 is not None
    assert c.final_response_match_v2.num_samples == 5
    assert c.rubric_based_final_response_quality_v1 is not None
    assert [r.rubric_id for r in c.rubric_based_final_response_quality_v1.rubrics] == [
        "professional"
    ]
    assert c.hallucinations_v1 is not None and c.hallucinations_v1.threshold == 0.8
    assert c.safety_v1 is not None and c.safety_v1.threshold == 0.9
    assert not caplog.records  # evaluate_intermediate_nl_responses is false: nothing lost


def test_for_file_finds_test_config_beside_the_eval_set() -> None:
    beside = EvalConfig.for_file(DATA / "legacy" / "home.test.json")
    assert list(beside.criteria.configured()) == ["tool_trajectory_avg_score", "rouge_match"]

    default = EvalConfig.for_file(DATA / "weather.evalset.json")
    assert default == EvalConfig.default()
    assert default.criteria.tool_trajectory_avg_score is not None
    assert default.criteria.tool_trajectory_avg_score.threshold == 1.0
    assert default.criteria.rouge_match is not None
    assert default.criteria.rouge_match.threshold == 0.8


def test_adk_config_mistakes_name_the_file_and_metric(tmp_path: Path) -> None:
    def load(data: object) -> EvalConfig:
        path = tmp_path / "test_config.json"
        path.write_text(json.dumps(data))
        return EvalConfig.load(path)

    with pytest.raises(ConfigError) as caught:
        load({"criteria": {"tool_trajectory_avg_scor": 1.0}})
    assert caught.value.field == "criteria.tool_trajectory_avg_scor"
    assert caught.value.file is not None and caught.value.file.endswith("test_config.json")

    with pytest.raises(ConfigError, match="no agenteval criterion") as unsupported:
        load({"criteria": {"response_evaluation_score": 4.0}})
    assert unsupported.value.hint is not None

    with pytest.raises(ConfigError, match="custom metrics"):
        load({"criteria": {}, "custom_metrics": {"m": {"code_config": {"name": "a.b"}}}})

    with pytest.raises(ConfigError) as bad_value:
        load({"criteria": {"safety_v1": "high"}})
    assert bad_value.value.field == "criteria.safety_v1"

    (tmp_path / "broken.json").write_text('{"criteria": {')
    with pytest.raises(ConfigError, match="invalid JSON") as broken:
        EvalConfig.load(tmp_path / "broken.json")
    assert broken.value.line == 1


def test_unsupported_adk_options_are_named_in_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="agenteval"):
        config = EvalConfig.from_adk(
            {
                "criteria": {
                    "hallucinations_v1": {
                        "threshold": 0.8,
                        "evaluate_intermediate_nl_responses": True,
                    }
                },
                "user_simulator_config": {"model": "gemini-2.5-flash"},
                "live_model_config": {"model": "gemini-live-2.5-flash"},
            }
        )
    assert config.criteria.hallucinations_v1 is not None
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "evaluate_intermediate_nl_responses is not supported" in messages
    assert "live_model_config is not used" in messages
    # the simulator's config is kept, for the cases that simulate their user
    assert "user_simulator_config" not in messages
    assert config.user_simulator_config == {"model": "gemini-2.5-flash"}


def test_the_trajectory_criterion_reads_the_config_it_is_built_with() -> None:
    (built,) = EvalConfig.from_adk(
        {"criteria": {"tool_trajectory_avg_score": 1.0}}
    ).criteria.build()
    assert isinstance(built, TrajectoryMatchCriterion)
    assert (built.config.match_type, built.config.check_args) == (MatchType.EXACT, True)
