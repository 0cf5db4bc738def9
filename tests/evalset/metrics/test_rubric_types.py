"""ADK's rubric `type` is kept: read from an eval set and a test_config.json, written back, and
it decides which metric grades a rubric: `TOOL_USE_QUALITY` ones grade tool use, not the final
response (ADK's `rubric_based_final_response_quality_v1` reads `FINAL_RESPONSE_QUALITY` ones;
agenteval's also reads the rubrics without a type, as before)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.judge.fakes import FakeOpenAI

from agenteval.evalset import AgentEvaluator, CaseStatus, EvalConfig, EvalSet
from agenteval.judge.judge import JudgeConfig

from .judging import ScriptedJudge, rubric_ids

EVAL_SET = {
    "eval_set_id": "typed",
    "eval_cases": [
        {
            "eval_id": "two_turns",
            "rubrics": [
                {
                    "rubric_id": "uses_search",
                    "rubric_content": {"text_property": "Searches before answering."},
                    "type": "TOOL_USE_QUALITY",
                }
            ],
            "conversation": [
                {
                    "user_content": {"parts": [{"text": "Find a flight"}]},
                    "rubrics": [
                        {
                            "rubric_id": "asks_dates",
                            "rubric_content": {"text_property": "Asks for the dates."},
                            "type": "FINAL_RESPONSE_QUALITY",
                        },
                        {
                            "rubric_id": "search_args",
                            "rubric_content": {"text_property": "Searches with the city named."},
                            "type": "TOOL_USE_QUALITY",
                        },
                    ],
                },
                {
                    "user_content": {"parts": [{"text": "June 3"}]},
                    "rubrics": [
                        {
                            "rubric_id": "books_only_when_asked",
                            "rubric_content": {"text_property": "Does not book yet."},
                            "type": "TOOL_USE_QUALITY",
                        }
                    ],
                },
            ],
        }
    ],
}


def test_the_type_is_read_and_written_back(tmp_path: Path) -> None:
    path = tmp_path / "typed.evalset.json"
    path.write_text(json.dumps(EVAL_SET), encoding="utf-8")
    [case] = EvalSet.load(path).cases
    assert [(r.rubric_id, r.type) for r in case.rubrics or []] == [
        ("uses_search", "TOOL_USE_QUALITY")
    ]
    assert case.conversation is not None
    assert [r.type for r in case.conversation[0].rubrics] == [
        "FINAL_RESPONSE_QUALITY",
        "TOOL_USE_QUALITY",
    ]
    again = tmp_path / "again.evalset.json"
    EvalSet.load(path).save(again)
    written = json.loads(again.read_text(encoding="utf-8"))["eval_cases"][0]
    assert written["rubrics"][0]["type"] == "TOOL_USE_QUALITY"
    assert [r["type"] for r in written["conversation"][0]["rubrics"]] == [
        "FINAL_RESPONSE_QUALITY",
        "TOOL_USE_QUALITY",
    ]
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

    AdkEvalSet.model_validate_json(again.read_text(encoding="utf-8"))  # ADK reads it


def test_a_config_rubric_keeps_its_type() -> None:
    config = EvalConfig.from_adk(
        {
            "criteria": {
                "rubric_based_tool_use_quality_v1": {
                    "threshold": 0.5,
                    "rubrics": [
                        {
                            "rubric_id": "r",
                            "rubric_content": {"text_property": "Calls search."},
                            "type": "TOOL_USE_QUALITY",
                        }
                    ],
                }
            }
        }
    )
    criterion = config.criteria.rubric_based_tool_use_quality_v1
    assert criterion is not None
    assert [(r.rubric_id, r.type) for r in criterion.rubrics] == [("r", "TOOL_USE_QUALITY")]


async def test_tool_use_rubrics_do_not_grade_the_final_response(
    tmp_path: Path, fake_judge: FakeOpenAI, judge_config: JudgeConfig
) -> None:
    """The final-response metric grades turn 1 by `asks_dates` alone, and turn 2, which has
    only a tool-use rubric, not at all; before the rubric's type was kept, all four were
    graded against the answers."""
    judge = ScriptedJudge(fake_judge)

    def answer(blocks: dict[str, str], seen: int) -> dict[str, Any]:
        ids = rubric_ids(blocks["rubrics"])
        return {
            "reasoning": "ok",
            "rubric_scores": [{"rubric_id": rid, "score": 1.0} for rid in ids],
            "score": 1.0,
        }

    judge.answers["rubric_based"] = answer
    path = tmp_path / "typed.evalset.json"
    path.write_text(json.dumps(EVAL_SET), encoding="utf-8")
    evaluator = AgentEvaluator(
        lambda messages: "Which dates?",
        EvalConfig.from_adk({"criteria": {"rubric_based_final_response_quality_v1": 0.5}}),
        store=tmp_path / "runs.db",
        judge=judge_config,
    )
    report = await evaluator.evaluate(EvalSet.load(path))
    [result] = report.results
    score = result.criterion_results["rubric_based_final_response_quality_v1"]
    assert (score.value, result.status) == (1.0, CaseStatus.PASSED)
    assert {tuple(rubric_ids(b["rubrics"])) for b in judge.of("rubric_based")} == {("asks_dates",)}


async def test_a_case_with_tool_use_rubrics_only_is_no_judge_tie_for_the_final_response(
    tmp_path: Path, fake_judge: FakeOpenAI, judge_config: JudgeConfig
) -> None:
    """Seen failing first: every turn had rubrics, none of them for the answer, and the per-turn
    grading found no turn to grade and called that a tie on every turn."""
    judge = ScriptedJudge(fake_judge)
    data = json.loads(json.dumps(EVAL_SET))
    first = data["eval_cases"][0]["conversation"][0]
    first["rubrics"] = [r for r in first["rubrics"] if r["type"] == "TOOL_USE_QUALITY"]
    path = tmp_path / "tool_only.evalset.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    evaluator = AgentEvaluator(
        lambda messages: "Which dates?",
        EvalConfig.from_adk({"criteria": {"rubric_based_final_response_quality_v1": 0.5}}),
        store=tmp_path / "runs.db",
        judge=judge_config,
    )
    report = await evaluator.evaluate(EvalSet.load(path))
    score = report.results[0].criterion_results["rubric_based_final_response_quality_v1"]
    assert not score.details.get("tie")
    assert score.reason == "No rubrics specified"  # RubricBasedCriterion's word for it
    assert judge.asked == []
