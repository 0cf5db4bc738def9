"""ADK's own eval sets with simulated users (`data/adk_simulation`), run for real: a Google ADK
agent on a scripted model (`tests.frameworks.adk.scripted`) plays each scenario against a
scripted user (a `User` object), through `AgentEvaluator` and through `agenteval.evaluate`; the
user's moves are judged by `per_turn_user_simulator_quality_v1` on a loopback judge."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from tests.evalset.metrics.judging import ScriptedJudge
from tests.frameworks.adk.scripted import weather_agent
from tests.judge.fakes import FakeOpenAI

import agenteval
from agenteval import EndReason, UserReply, UserRequest, load_cases
from agenteval.evalset import AgentEvaluator, EvalConfig, EvalSet
from agenteval.judge.judge import JudgeConfig

DATA = Path(__file__).parent / "data" / "adk_simulation"
SCENARIO_FILE = DATA / "conversation_scenario.test.json"
LIVE_FILE = DATA / "live" / "live_non_blocking_tool_agent.evalset.json"

# The agent's model, keyed by the user's messages (the k-th answer after each).
SCRIPT: dict[str, list[Any]] = {
    "Hello": ["Hi! What can I do for you?"],
    "Please remember the topic weather.": [[("note_topic", {"topic": "weather"})], "Noted."],
    "Hi, can you kick off a long background task for me?": ["Sure: what should the task do?"],
    "Index my documents.": [[("note_topic", {"topic": "index"})], "Indexing started."],
    "What is two plus two?": ["Four. Your documents are indexed."],
    "Please start a slow background task to index my documents.": ["Started."],
    "While that runs, what is two plus two?": ["Four."],
}

# The user: the agent's last answer → the user's next move.
REPLIES: dict[str, str | EndReason] = {
    "Hi! What can I do for you?": "Please remember the topic weather.",
    "Noted.": EndReason.GOAL_ACHIEVED,
    "Sure: what should the task do?": "Index my documents.",
    "Indexing started.": "What is two plus two?",
    "Four. Your documents are indexed.": EndReason.GOAL_ACHIEVED,
}


class ScriptedAdkUser:
    """A user of the run (`agents.users.User`), answering the agent's last message; it keeps
    nothing between calls, so concurrent trials cannot disturb each other."""

    label = "test:adk-user"

    async def reply(self, request: UserRequest) -> UserReply | None:
        last = request.messages[-1]["content"] if request.messages else ""
        move = REPLIES.get(last)
        if move is None:
            return UserReply(stop=EndReason.USER_GAVE_UP, detail=f"unexpected: {last!r}")
        if isinstance(move, EndReason):
            return UserReply(stop=move, detail="done")
        return UserReply(message=move)


def judged(fake: FakeOpenAI) -> ScriptedJudge:
    """Every move of the user kept to its plan; the hallucination check finds nothing."""
    return ScriptedJudge(
        fake,
        {
            "per_turn_user_simulator_quality": lambda blocks, n: {
                "reasoning": "kept to the plan",
                "checks": [{"check": "plan", "reason": "as planned", "passes": True}],
                "score": 1.0,
            },
            "groundedness": lambda blocks, n: {
                "reasoning": "grounded",
                "unsupported_claims": [],
                "score": 1.0,
            },
        },
    )


async def test_adks_scenario_file_runs_through_the_agent_evaluator(
    tmp_path: Path, fake_judge: FakeOpenAI, judge_config: JudgeConfig
) -> None:
    scripted = judged(fake_judge)
    folder = tmp_path / "fixture"
    shutil.copytree(DATA, folder, ignore=shutil.ignore_patterns("live"))
    # ADK's test_config.json beside it, with the user's moves judged too
    config = EvalConfig.for_file(folder / "conversation_scenario.test.json")
    config = config.model_copy(
        update={
            "criteria": config.criteria.model_copy(
                update={
                    "per_turn_user_simulator_quality_v1": EvalConfig.from_adk(
                        {"criteria": {"per_turn_user_simulator_quality_v1": 0.8}}
                    ).criteria.per_turn_user_simulator_quality_v1
                }
            )
        }
    )
    evaluator = AgentEvaluator(
        weather_agent(SCRIPT),
        config,
        store=tmp_path / "runs.db",
        judge=judge_config,
        user_simulator=ScriptedAdkUser(),
        trials=4,
        concurrency=8,
    )
    report = await evaluator.evaluate(folder / "conversation_scenario.test.json")
    # four trials at once, each with its own conversation and session
    assert [r.status for r in report.results] == ["passed"] * 4
    for result in report.run.results:
        simulation = result.trial.simulation
        assert simulation is not None
        assert [(t.user, t.source, t.agent) for t in simulation.turns] == [
            ("Hello", "written", "Hi! What can I do for you?"),
            ("Please remember the topic weather.", "simulated", "Noted."),
        ]
        assert simulation.end_reason is EndReason.GOAL_ACHIEVED
        assert result.trial.metadata["session_state"] == {"count": 1, "topic": "weather"}
        quality = result.scores["per_turn_user_simulator_quality_v1"]
        assert quality.value == 1.0 and quality.passed is True
        assert [m["move"] for m in quality.details["moves"]] == [
            "starting_prompt",
            "message",
            "end",
        ]
    # the plan reached the judge; two moves judged, 3 samples each (ADK's config's default);
    # the trials held the same conversation: a verdict the cache holds is not asked again
    asked = scripted.of("per_turn_user_simulator_quality")
    assert {blocks["plan"] for blocks in asked} == {"Ask the agent to do something"}
    assert {blocks["move"] for blocks in asked} == {
        "Please remember the topic weather.",
        "[The user ends the conversation here: its goal was achieved.] (done)",
    }
    assert 6 <= len(asked) <= 4 * 6


async def test_adks_live_sample_runs_through_agenteval_evaluate(
    tmp_path: Path, fake_judge: FakeOpenAI, judge_config: JudgeConfig
) -> None:
    judged(fake_judge)
    cases = load_cases(LIVE_FILE)
    run = await agenteval.evaluate_async(
        weather_agent(SCRIPT),
        cases,
        store=tmp_path / "runs.db",
        judge=judge_config,
        user_simulator=ScriptedAdkUser(),
        scorers=[
            agenteval.criteria.PerTurnUserSimulatorQualityCriterion(
                agenteval.CriterionConfig(num_samples=1)
            )
        ],
    )
    by_case = {result.case.id: result for result in run.results}
    scenario = by_case["background_task_scenario"]
    simulation = scenario.trial.simulation
    assert simulation is not None
    assert [turn.user for turn in simulation.turns] == [
        "Hi, can you kick off a long background task for me?",
        "Index my documents.",
        "What is two plus two?",
    ]
    assert [turn.source for turn in simulation.turns] == ["written", "simulated", "simulated"]
    assert simulation.end_reason is EndReason.GOAL_ACHIEVED
    assert scenario.scores["per_turn_user_simulator_quality_v1"].value == 1.0
    # the written case plays as written, and the criterion does not apply to it
    scripted_case = by_case["background_task_scripted"]
    assert scripted_case.trial.simulation is None
    assert scripted_case.trial.metadata["turn_outputs"] == ["Started.", "Four."]
    skipped = scripted_case.scores["per_turn_user_simulator_quality_v1"]
    assert skipped.value is None and "no simulated user" in (skipped.reason or "")


def test_a_run_without_a_user_for_a_scenario_is_refused(tmp_path: Path) -> None:
    with pytest.raises(agenteval.ConfigError, match="user simulator"):
        AgentEvaluator(
            weather_agent(SCRIPT),
            EvalConfig.from_adk({"criteria": {"safety_v1": 0.5}}),
            store=tmp_path / "runs.db",
        ).evaluate_sync(EvalSet.load(SCENARIO_FILE))


def test_agenteval_run_reads_the_scenario_and_asks_for_a_user(tmp_path: Path) -> None:
    """`agenteval run FILE` reads ADK's scenario file and, with no user simulator in the run
    (and no script in the case), stops before the run with one message saying how to give one."""
    import os

    from tests.cli_process import agenteval_cli, cli_env

    shutil.copytree(DATA, tmp_path / "fixture", ignore=shutil.ignore_patterns("live"))
    root = Path(__file__).parents[2]
    done = agenteval_cli(
        tmp_path,
        "run",
        "fixture/conversation_scenario.test.json",
        "--agent",
        "tests.evalset.adk_scenario_agent:root_agent",
        env=cli_env(PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])),
    )
    assert done.returncode != 0
    said = done.stdout + done.stderr
    # The file's own `user_simulator_config.model` plays its users (as ADK runs the file):
    # with no key for it here, the run stops before anything is stored, saying so.
    assert "Traceback" not in said
    assert "user simulator google:gemini-2.5-flash cannot run" in said
    assert "the google user simulator needs an API key" in said
    assert "nothing was run or stored" in said


async def test_the_evaluators_config_limits_the_conversation(
    tmp_path: Path, fake_judge: FakeOpenAI, judge_config: JudgeConfig
) -> None:
    """An `EvalConfig`'s `user_simulator_config` wins over the file's `test_config.json`: one
    message at most, so the conversation ends at the starting prompt (`max_turns`), and the
    judge finds that end premature: the starting prompt's move fails."""
    ScriptedJudge(
        fake_judge,
        {
            "per_turn_user_simulator_quality": lambda blocks, n: {
                "reasoning": "the plan is not done",
                "checks": [{"check": "ending", "reason": "goals remain", "passes": False}],
                "score": 0.0,
            }
        },
    )
    config = EvalConfig.from_adk(
        {
            "criteria": {"per_turn_user_simulator_quality_v1": 0.5},
            "user_simulator_config": {"max_allowed_invocations": 1},
        }
    )
    evaluator = AgentEvaluator(
        weather_agent(SCRIPT),
        config,
        store=tmp_path / "runs.db",
        judge=judge_config,
        user_simulator=ScriptedAdkUser(),
    )
    report = await evaluator.evaluate(SCENARIO_FILE)
    [result] = report.run.results
    simulation = result.trial.simulation
    assert simulation is not None
    assert [turn.user for turn in simulation.turns] == ["Hello"]
    assert simulation.end_reason is EndReason.MAX_TURNS
    quality = result.scores["per_turn_user_simulator_quality_v1"]
    assert quality.value == 0.0 and quality.passed is False
    assert [m["move"] for m in quality.details["moves"]] == ["starting_prompt", "end"]
