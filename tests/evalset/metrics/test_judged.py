"""ADK's judged metrics agenteval lacked, from an ADK `test_config.json` through
`AgentEvaluator`, judged by agenteval's judge (a scripted fake OpenAI server on 127.0.0.1):
`rubric_based_tool_use_quality_v1` per turn, `rubric_based_multi_turn_trajectory_quality_v1`
and the three `multi_turn_*_v1` over the whole conversation. The eval set is adk-samples'
travel concierge `inspire.test.json` (two turns, sub-agent transfers and tool calls), its
rubrics added in ADK's format with their `type`; the agent replays the file's turns. Values are
checked against the definitions by hand; judge ties are undecided, judge errors are errors."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.judge.fakes import FakeOpenAI, http_error

from agenteval import EvalCase
from agenteval.evalset import AgentEvaluator, CaseStatus, EvalConfig, EvalSet
from agenteval.judge.judge import JudgeConfig

from .judging import ScriptedJudge, checks_verdict, rubric_ids, rubric_verdict

CORPUS = Path(__file__).parents[1] / "data" / "adk_corpus"


def _rubric(rid: str, text: str, kind: str | None) -> dict[str, Any]:
    rubric: dict[str, Any] = {"rubric_id": rid, "rubric_content": {"text_property": text}}
    if kind is not None:
        rubric["type"] = kind
    return rubric


def inspire_with_rubrics(folder: Path) -> Path:
    """The travel concierge's eval set, with rubrics of three types on the case and its turns."""
    data = json.loads((CORPUS / "inspire.test.json").read_text(encoding="utf-8"))
    case = data["eval_cases"][0]
    case["eval_id"] = "inspire"
    case["rubrics"] = [
        _rubric("hands_off", "Hands the request to a sub-agent.", "TOOL_USE_QUALITY"),
        _rubric("plans_in_order", "Inspires first, plans after.", "TRAJECTORY_QUALITY"),
    ]
    first, second = case["conversation"]
    first["rubrics"] = [
        _rubric("asks_place_agent", "Calls place_agent with the region named.", "TOOL_USE_QUALITY"),
        _rubric("friendly", "The reply is friendly.", "FINAL_RESPONSE_QUALITY"),
    ]
    second["rubrics"] = [
        _rubric("to_planner", "Transfers to planning_agent.", "TOOL_USE_QUALITY"),
        _rubric("keeps_peru", "Keeps to the destination chosen.", "TRAJECTORY_QUALITY"),
    ]
    path = folder / "inspire.test.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def replay_agent(eval_set: EvalSet) -> Any:
    """An agent that answers each turn as the eval set expects, with the expected tool calls
    (each returning `{"ok": true}`)."""
    turns = {turn.input: turn for case in eval_set.cases for turn in case.conversation or []}

    def agent(messages: Any) -> dict[str, Any]:
        turn = turns[messages[-1]["content"]]
        calls = [
            {"name": c.name, "arguments": c.arguments, "result": {"ok": True}}
            for c in turn.expected_tool_trajectory
        ]
        return {"output": turn.expected_final_response, "tool_calls": calls}

    return agent


def config(folder: Path, criteria: dict[str, Any]) -> EvalConfig:
    path = folder / "test_config.json"
    path.write_text(json.dumps({"criteria": criteria}), encoding="utf-8")
    return EvalConfig.load(path)


def judged(
    threshold: float, samples: int, rubrics: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    setting: dict[str, Any] = {
        "threshold": threshold,
        "judge_model_options": {"judge_model": "gpt-4o-mini", "num_samples": samples},
    }
    if rubrics is not None:
        setting["rubrics"] = rubrics
    return setting


@pytest.fixture
def judge(fake_judge: FakeOpenAI) -> ScriptedJudge:
    return ScriptedJudge(fake_judge)


async def evaluate(
    tmp_path: Path, judge_config: JudgeConfig, criteria: dict[str, Any], **options: Any
) -> Any:
    path = inspire_with_rubrics(tmp_path)
    eval_set = EvalSet.load(path)
    evaluator = AgentEvaluator(
        replay_agent(eval_set),
        config(tmp_path, criteria),
        store=tmp_path / "runs.db",
        judge=judge_config,
        **options,
    )
    return await evaluator.evaluate(eval_set)


# --- rubric_based_tool_use_quality_v1


async def test_tool_use_rubrics_are_judged_turn_by_turn(
    tmp_path: Path, judge: ScriptedJudge, judge_config: JudgeConfig
) -> None:
    """Turn 1 is graded by the config's rubric, the case's and its own TOOL_USE_QUALITY rubric;
    turn 2 likewise. The judge finds `only_real_tools` broken in turn 2: 5 of the 6 verdicts
    are met, (1 + 1 + 1 + 0 + 1 + 1) / 6, over the threshold of 0.7."""

    def answer(blocks: dict[str, str], seen: int) -> dict[str, Any]:
        ids = rubric_ids(blocks["rubrics"])
        turn_two = "planning_agent" in blocks["tool_use"]
        return rubric_verdict({rid: not (turn_two and rid == "only_real_tools") for rid in ids})

    judge.answers["tool_use_rubrics"] = answer
    only_real = {
        "rubric_id": "only_real_tools",
        "rubric_content": {"text_property": "Calls only tools it was offered."},
    }
    report = await evaluate(
        tmp_path,
        judge_config,
        {"rubric_based_tool_use_quality_v1": judged(0.7, 3, [only_real])},
    )
    [result] = report.results
    score = result.criterion_results["rubric_based_tool_use_quality_v1"]
    assert score.value == pytest.approx(5 / 6) and score.passed is True
    assert result.status is CaseStatus.PASSED
    assert score.details["per_turn"] == [
        {
            "turn": 1,
            "rubrics": {"only_real_tools": 1.0, "hands_off": 1.0, "asks_place_agent": 1.0},
            "votes": {
                "only_real_tools": {"met": 3, "not_met": 0},
                "hands_off": {"met": 3, "not_met": 0},
                "asks_place_agent": {"met": 3, "not_met": 0},
            },
            "score": 1.0,
        },
        {
            "turn": 2,
            "rubrics": {"only_real_tools": 0.0, "hands_off": 1.0, "to_planner": 1.0},
            "votes": {
                "only_real_tools": {"met": 0, "not_met": 3},
                "hands_off": {"met": 3, "not_met": 0},
                "to_planner": {"met": 3, "not_met": 0},
            },
            "score": 2 / 3,
        },
    ]
    assert score.reason == "5 of 6 rubric verdicts met; not met: only_real_tools"
    # What the judge saw: each turn on its own, three samples each, the right rubrics only.
    asked = judge.of("tool_use_rubrics")
    assert len(asked) == 6
    first = next(b for b in asked if b["question"] == "Inspire me about the Americas")
    assert rubric_ids(first["rubrics"]) == ["only_real_tools", "hands_off", "asks_place_agent"]
    assert 'place_agent({"request": "Americas"})' in first["tool_use"]
    assert "planning_agent" not in first["tool_use"]
    assert "friendly" not in first["rubrics"] and "plans_in_order" not in first["rubrics"]
    second = next(b for b in asked if b["question"] == "Start planning")
    assert second["tool_use"].count("(tool call)") == 1


async def test_no_tool_use_rubric_gives_no_score(
    tmp_path: Path, judge: ScriptedJudge, judge_config: JudgeConfig
) -> None:
    case = EvalCase(id="plain", input="hi", rubrics=["Says hello."])
    evaluator = AgentEvaluator(
        lambda prompt: "hello",
        EvalConfig.from_adk({"criteria": {"rubric_based_tool_use_quality_v1": 0.8}}),
        store=tmp_path / "runs.db",
        judge=judge_config,
    )
    report = await evaluator.evaluate([case])
    [result] = report.results
    score = result.criterion_results["rubric_based_tool_use_quality_v1"]
    assert (score.value, score.passed, score.error) == (None, None, None)
    assert score.reason == (
        "no rubrics of type TOOL_USE_QUALITY in the case, its turns or the config: nothing to "
        "grade the tool use by"
    )
    assert result.status is CaseStatus.NOT_EVALUATED
    assert judge.asked == []


async def test_a_rubric_the_samples_split_on_is_left_out_and_all_tied_is_undecided(
    tmp_path: Path, judge: ScriptedJudge, judge_config: JudgeConfig
) -> None:
    """Two samples a judgement: `to_planner` gets one vote each way (ADK would count it as not
    met): it is left out of the score. With only tied rubrics the case is undecided."""
    lock = threading.Lock()
    flips: dict[str, int] = {}

    def answer(blocks: dict[str, str], seen: int) -> dict[str, Any]:
        ids = rubric_ids(blocks["rubrics"])
        with lock:
            n = flips[blocks["question"]] = flips.get(blocks["question"], -1) + 1
        return rubric_verdict({rid: rid != "to_planner" or n % 2 == 0 for rid in ids})

    judge.answers["tool_use_rubrics"] = answer
    report = await evaluate(
        tmp_path, judge_config, {"rubric_based_tool_use_quality_v1": judged(0.8, 2)}
    )
    score = report.results[0].criterion_results["rubric_based_tool_use_quality_v1"]
    # turn 1: hands_off, asks_place_agent met; turn 2: hands_off met, to_planner tied.
    assert score.value == 1.0 and score.details["ties"] == ["to_planner"]
    assert "tied (left out): to_planner" in (score.reason or "")

    def split(blocks: dict[str, str], seen: int) -> dict[str, Any]:
        return rubric_verdict(dict.fromkeys(rubric_ids(blocks["rubrics"]), seen % 2 == 0))

    judge.answers["tool_use_rubrics"] = split
    case = EvalCase(
        id="one",
        input="find a flight",
        rubrics=[
            {"rubric_id": "searches", "content": "Searches flights.", "type": "TOOL_USE_QUALITY"}
        ],
    )
    evaluator = AgentEvaluator(
        lambda prompt: "done",
        config(tmp_path, {"rubric_based_tool_use_quality_v1": judged(0.8, 2)}),
        store=tmp_path / "runs.db",
        judge=JudgeConfig(
            spec=judge_config.spec, base_url=judge_config.base_url, cache_path=tmp_path / "c2.db"
        ),
    )
    report = await evaluator.evaluate([case])
    [result] = report.results
    score = result.criterion_results["rubric_based_tool_use_quality_v1"]
    assert (score.value, score.passed, score.details.get("tie")) == (None, None, True)
    assert result.status is CaseStatus.UNDECIDED
    assert report.summary.criterion_stats["rubric_based_tool_use_quality_v1"].ties == 1


async def test_a_judge_that_fails_is_an_error_not_a_low_score(
    tmp_path: Path, fake_judge: FakeOpenAI, judge_config: JudgeConfig
) -> None:
    fake_judge.default = http_error(400, message="bad request")
    report = await evaluate(
        tmp_path,
        judge_config,
        {
            "rubric_based_tool_use_quality_v1": judged(0.8, 3),
            "multi_turn_task_success_v1": judged(0.8, 3),
        },
    )
    [result] = report.results
    for name in ("rubric_based_tool_use_quality_v1", "multi_turn_task_success_v1"):
        score = result.criterion_results[name]
        assert score.error == "All LLM samples failed"
        assert report.summary.criterion_stats[name].errors == 1
        assert report.run.summary is not None
        assert report.run.summary.scorers[name].errors == 1
        assert report.run.summary.scorers[name].scored == 0


# --- the whole conversation


async def test_the_three_multi_turn_metrics_judge_the_conversation_once(
    tmp_path: Path, judge: ScriptedJudge, judge_config: JudgeConfig
) -> None:
    """Each sample's score is the share of its own checks met (its `score` field is not read):
    samples of 2/3, 2/3 and 1/3 make 5/9."""
    shares = [[True, True, False], [True, False, True], [False, False, True]]
    for template in (
        "multi_turn_task_success",
        "multi_turn_trajectory_quality",
        "multi_turn_tool_use_quality",
    ):
        judge.answers[template] = lambda blocks, seen: checks_verdict(shares[seen % 3])
    names = (
        "multi_turn_task_success_v1",
        "multi_turn_trajectory_quality_v1",
        "multi_turn_tool_use_quality_v1",
    )
    report = await evaluate(tmp_path, judge_config, {name: judged(0.5, 3) for name in names})
    [result] = report.results
    for name in names:
        score = result.criterion_results[name]
        assert score.value == pytest.approx(5 / 9) and score.passed is True
        assert sorted(score.details["individual_scores"]) == pytest.approx([1 / 3, 2 / 3, 2 / 3])
    assert result.status is CaseStatus.PASSED
    asked = judge.of("multi_turn_task_success")
    assert len(asked) == 3
    conversation = asked[0]["conversation"]
    assert conversation.splitlines()[:4] == [
        "USER TURN 1: Inspire me about the Americas",
        'AGENT TURN 1 (tool call): transfer_to_agent({"agent_name": "inspiration_agent"})',
        'AGENT TURN 1 (tool output): transfer_to_agent -> {"ok": true}',
        'AGENT TURN 1 (tool call): place_agent({"request": "Americas"})',
    ]
    assert "USER TURN 2: Start planning" in conversation
    assert "AGENT TURN 2: Okay, let's start planning your trip to Peru!" in conversation


async def test_a_single_turn_case_is_a_conversation_of_one_turn(
    tmp_path: Path, judge: ScriptedJudge, judge_config: JudgeConfig
) -> None:
    judge.answers["multi_turn_task_success"] = lambda blocks, seen: checks_verdict([True])
    evaluator = AgentEvaluator(
        lambda prompt: "Paris is 18°C.",
        config(tmp_path, {"multi_turn_task_success_v1": judged(0.8, 1)}),
        store=tmp_path / "runs.db",
        judge=judge_config,
    )
    report = await evaluator.evaluate([EvalCase(id="one", input="Weather in Paris?")])
    assert report.results[0].criterion_results["multi_turn_task_success_v1"].value == 1.0
    [asked] = judge.of("multi_turn_task_success")
    assert asked["conversation"] == "USER TURN 1: Weather in Paris?\nAGENT TURN 1: Paris is 18°C."


async def test_trajectory_rubrics_are_judged_over_the_conversation(
    tmp_path: Path, judge: ScriptedJudge, judge_config: JudgeConfig
) -> None:
    """The case's and the turns' TRAJECTORY_QUALITY rubrics, one judgement: one met, one not."""

    def answer(blocks: dict[str, str], seen: int) -> dict[str, Any]:
        return rubric_verdict(
            {rid: rid == "plans_in_order" for rid in rubric_ids(blocks["rubrics"])}
        )

    judge.answers["conversation_rubrics"] = answer
    report = await evaluate(
        tmp_path,
        judge_config,
        {"rubric_based_multi_turn_trajectory_quality_v1": judged(0.5, 3)},
        trials=2,
    )
    for result in report.results:
        score = result.criterion_results["rubric_based_multi_turn_trajectory_quality_v1"]
        assert score.value == 0.5 and score.passed is True
        assert score.details["rubric_scores"] == {"plans_in_order": 1.0, "keeps_peru": 0.0}
    asked = judge.of("conversation_rubrics")
    # Two trials, the same conversation: the judge cache answers the second.
    assert len(asked) == 3
    assert rubric_ids(asked[0]["rubrics"]) == ["plans_in_order", "keeps_peru"]
    assert "USER TURN 2: Start planning" in asked[0]["conversation"]


async def test_the_judge_sees_every_line_of_a_result_and_the_errors(
    tmp_path: Path, judge: ScriptedJudge, judge_config: JudgeConfig
) -> None:
    """Seen failing first: only the first line of a multi-line result reached the judge."""
    judge.answers["tool_use_rubrics"] = lambda blocks, seen: rubric_verdict(
        dict.fromkeys(rubric_ids(blocks["rubrics"]), True)
    )
    case = EvalCase(
        id="lines",
        input="read the log",
        rubrics=[{"rubric_id": "reads", "content": "Reads the log.", "type": "TOOL_USE_QUALITY"}],
    )

    def agent(prompt: str) -> dict[str, Any]:
        return {
            "output": "done",
            "tool_calls": [
                {"name": "read_log", "arguments": {}, "result": "line one\nline two"},
                {"name": "delete_log", "arguments": {"password": "hunter2"}, "error": "denied"},
            ],
        }

    evaluator = AgentEvaluator(
        agent,
        config(tmp_path, {"rubric_based_tool_use_quality_v1": judged(0.8, 1)}),
        store=tmp_path / "runs.db",
        judge=judge_config,
    )
    report = await evaluator.evaluate([case])
    assert report.results[0].criterion_results["rubric_based_tool_use_quality_v1"].value == 1.0
    [asked] = judge.of("tool_use_rubrics")
    assert asked["tool_use"].splitlines() == [
        "AGENT (tool call): read_log({})",
        "AGENT (tool output): read_log -> line one",
        "line two",
        'AGENT (tool call): delete_log({"password": "[REDACTED]"})',
        "AGENT (tool error): delete_log raised denied",
    ]


async def test_the_judge_is_told_which_agents_took_part(
    tmp_path: Path, judge: ScriptedJudge, judge_config: JudgeConfig
) -> None:
    judge.answers["multi_turn_trajectory_quality"] = lambda blocks, seen: checks_verdict([True])
    evaluator = AgentEvaluator(
        lambda prompt: {"output": "18°C", "node_visits": ["root", "weather_agent"]},
        config(tmp_path, {"multi_turn_trajectory_quality_v1": judged(0.8, 1)}),
        store=tmp_path / "runs.db",
        judge=judge_config,
    )
    await evaluator.evaluate([EvalCase(id="one", input="Weather in Paris?")])
    [asked] = judge.of("multi_turn_trajectory_quality")
    assert asked["conversation"].splitlines()[-1] == (
        "(the agents that took part, in order: root -> weather_agent)"
    )


async def test_a_rubric_the_judge_leaves_out_is_unvoted_and_none_decided_is_an_error(
    tmp_path: Path, judge: ScriptedJudge, judge_config: JudgeConfig
) -> None:
    """A judge that skips `keeps_peru` decides `plans_in_order` alone (ADK drops an unnamed
    rubric the same way); one that names no rubric it was asked about has failed."""
    judge.answers["conversation_rubrics"] = lambda blocks, seen: rubric_verdict(
        {"plans_in_order": True, "made_up": False}
    )
    report = await evaluate(
        tmp_path, judge_config, {"rubric_based_multi_turn_trajectory_quality_v1": judged(0.5, 3)}
    )
    score = report.results[0].criterion_results["rubric_based_multi_turn_trajectory_quality_v1"]
    assert (score.value, score.details["unvoted"]) == (1.0, ["keeps_peru"])
    assert score.details["votes"]["keeps_peru"] == {"met": 0, "not_met": 0}

    judge.answers["conversation_rubrics"] = lambda blocks, seen: rubric_verdict({"other": True})
    evaluator = AgentEvaluator(
        lambda prompt: "ok",
        config(tmp_path, {"rubric_based_multi_turn_trajectory_quality_v1": judged(0.5, 1)}),
        store=tmp_path / "runs.db",
        judge=judge_config,
    )
    case = EvalCase(
        id="one",
        input="plan a trip",
        rubrics=[{"rubric_id": "asks", "content": "Asks where to.", "type": "TRAJECTORY_QUALITY"}],
    )
    report = await evaluator.evaluate([case])
    [result] = report.results
    score = result.criterion_results["rubric_based_multi_turn_trajectory_quality_v1"]
    assert score.error == "the judge decided no rubric (its samples named none of them)"
    assert (
        report.summary.criterion_stats["rubric_based_multi_turn_trajectory_quality_v1"].errors == 1
    )
