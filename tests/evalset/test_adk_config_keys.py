"""ADK's `test_config.json`: a misspelt metric, setting or key is an error naming the file, the
line, the key and the one likely meant; every setting google-adk 2.13's criteria take is read."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agenteval import ConfigError
from agenteval.evalset import EvalConfig

adk_metrics = pytest.importorskip("google.adk.evaluation.eval_metrics")

CORPUS = Path(__file__).parent / "data" / "adk_corpus"


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize(
    ("data", "wrong", "field", "meant"),
    [
        (
            {"criteria": {"tool_trajectory_avg_scor": 1.0}},
            "tool_trajectory_avg_scor",
            "criteria.tool_trajectory_avg_scor",
            "tool_trajectory_avg_score",
        ),
        (
            {"criteria": {"response_match_score": {"threshhold": 0.8}}},
            "threshhold",
            "criteria.response_match_score.threshhold",
            "threshold",
        ),
        (
            {"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "matchTyp": "EXACT"}}},
            "matchTyp",
            "criteria.tool_trajectory_avg_score.matchTyp",
            "match_type",
        ),
        (
            {
                "criteria": {
                    "final_response_match_v2": {
                        "threshold": 0.5,
                        "judge_model_options": {"num_sample": 3},
                    }
                }
            },
            "num_sample",
            "criteria.final_response_match_v2.judge_model_options.num_sample",
            "num_samples",
        ),
        ({"critera": {"safety_v1": 0.9}}, "critera", "critera", "criteria"),
    ],
)
def test_a_misspelt_key_names_the_line_and_the_key_meant(
    tmp_path: Path, data: object, wrong: str, field: str, meant: str
) -> None:
    path = write(tmp_path, data)
    with pytest.raises(ConfigError) as caught:
        EvalConfig.load(path)
    error = caught.value
    assert (error.file, error.field) == (str(path), field)
    assert repr(wrong) in error.message
    assert error.hint == f"did you mean {meant!r}?"
    assert error.line == line_of(path, f'"{wrong}"')


def every_adk_setting() -> dict[str, dict[str, object]]:
    """A value for every setting of every criterion class of google-adk's eval_metrics."""
    values: dict[str, object] = {
        "threshold": 0.5,
        "include_intermediate_responses_in_final": False,
        "judge_model_options": {
            name: {"judge_model": "m", "num_samples": 2, "parallelism_limit": 4}.get(name)
            for name in adk_metrics.JudgeModelOptions.model_fields
            if name != "judge_model_config"
        },
        "rubrics": [{"rubric_id": "r", "rubric_content": {"text_property": "Kind."}}],
        "evaluate_intermediate_nl_responses": False,
        "match_type": "IN_ORDER",
        "ignore_args": False,
    }
    metric_of = {
        "ToolTrajectoryCriterion": "tool_trajectory_avg_score",
        "LlmAsAJudgeCriterion": "final_response_match_v2",
        "RubricsBasedCriterion": "rubric_based_final_response_quality_v1",
        "HallucinationsCriterion": "hallucinations_v1",
        "BaseCriterion": "response_match_score",
    }
    settings: dict[str, dict[str, object]] = {}
    for model, metric in metric_of.items():
        fields = getattr(adk_metrics, model).model_fields
        settings[metric] = {name: values[name] for name in fields}
    return settings


def test_every_setting_adks_criteria_take_is_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="agenteval"):
        config = EvalConfig.load(write(tmp_path, {"criteria": every_adk_setting()}))
    assert list(config.criteria.configured()) == [
        "tool_trajectory_avg_score",
        "rouge_match",
        "final_response_match_v2",
        "rubric_based_final_response_quality_v1",
        "hallucinations_v1",
    ]
    assert not caplog.records  # every setting either read or, at its default, meaning nothing


def test_ignore_args_compares_tool_names_only() -> None:
    config = EvalConfig.from_adk(
        {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "ignore_args": True}}}
    )
    trajectory = config.criteria.tool_trajectory_avg_score
    assert trajectory is not None and trajectory.check_args is False


def test_adks_own_test_config_is_read() -> None:
    config = EvalConfig.load(CORPUS / "test_config.json")
    assert list(config.criteria.configured()) == ["hallucinations_v1"]
