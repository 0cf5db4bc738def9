"""`goal_completion` and `turns_to_goal`: scores of a conversation with a simulated user, in a
run with a loopback judge; no score for what they do not apply to; rescoring and re-judging a
stored run never call the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.fakes import clear_provider_env
from tests.scorers.judged import answering_judge
from tests.scorers.simulated import EMAIL, FIRST, GOAL, ORDER, SAID, CountingUser

import agenteval
from agenteval import EvalCase, Score
from agenteval.catalog import resolve_scorers, scorer_reference
from agenteval.scorers.base import run_scorer
from agenteval.scorers.conversation import GoalCompletion, TurnsToGoal
from agenteval.scorers.reported import is_reported, reported_unit, reported_value

AGENT = "tests.scorers.simulated:refund_agent"
SCRIPT = "tests.scorers.simulated:replying_user"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_provider_env(monkeypatch)


def _agent():  # type: ignore[no-untyped-def]
    from tests.scorers.simulated import refund_agent

    return refund_agent


def _scores(run: agenteval.Run) -> dict[str, Score]:
    (result,) = run.results
    return result.scores


def _case(**simulation: object) -> EvalCase:
    return EvalCase(id="refund", user_simulation={"script": SCRIPT, "goal": GOAL, **simulation})


def test_goal_completion_judges_the_goal_and_every_message_as_played(tmp_path: Path) -> None:
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            _agent(),
            [_case()],
            scorers=["goal_completion", "turns_to_goal"],
            builtins=False,
            rubrics=[],
            judge=judge.config,
            store=tmp_path / "runs.db",
        )
    scores = _scores(run)
    goal = scores["goal_completion"]
    assert (goal.value, goal.passed) == (1.0, True)
    assert goal.judge is not None and goal.judge.template == "goal_completion"
    assert goal.details["turns"] == 3
    assert goal.details["end_reason"] == "goal_achieved"
    (prompt,) = judge.prompts["goal_completion"]
    assert GOAL in prompt
    for number, said in enumerate(SAID, start=1):
        assert f"USER TURN {number}: {said}" in prompt
    assert "AGENT TURN 3 (tool call): issue_refund" in prompt
    assert "AGENT TURN 3: Refund issued for order 4417." in prompt
    turns = scores["turns_to_goal"]
    assert is_reported(turns)
    assert (turns.value, turns.passed) == (None, None)
    assert reported_value(turns) == 3.0
    assert reported_unit(turns) == "user messages"
    assert run.to_json()["summary"]["scorers"]["turns_to_goal"]["reported"] == 1


def test_no_goal_reached_is_reported_with_no_figure(tmp_path: Path) -> None:
    # Two user messages allowed: the agent still asks for the email when the conversation ends.
    run = agenteval.evaluate(
        _agent(),
        [_case(max_turns=2)],
        scorers=["turns_to_goal"],
        builtins=False,
        store=tmp_path / "runs.db",
    )
    score = _scores(run)["turns_to_goal"]
    assert is_reported(score)
    assert reported_value(score) is None
    assert score.reason == "the goal was not reached: the conversation ended on max_turns"


async def test_a_written_case_has_no_goal() -> None:
    written = EvalCase(id="written", conversation=[{"input": FIRST}, {"input": ORDER}])
    trial = agenteval.Trial(output="ok")
    for scorer in (GoalCompletion(), TurnsToGoal()):
        assert scorer.declines(written) is not None
        score = await run_scorer(scorer, written, trial)
        assert score.value is None and not is_reported(score)
        assert "a written conversation has no user's goal" in (score.reason or "")


def test_a_scripted_user_without_a_goal_is_not_judged_and_no_judge_is_asked(
    tmp_path: Path,
) -> None:
    case = EvalCase(id="no-goal", user_simulation={"script": SCRIPT})
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            _agent(),
            [case],
            scorers=["goal_completion", "turns_to_goal"],
            builtins=False,
            rubrics=[],
            judge=judge.config,
            store=tmp_path / "runs.db",
        )
        assert judge.fake.request_count == 0
    scores = _scores(run)
    assert scores["goal_completion"].value is None
    assert "has no goal" in (scores["goal_completion"].reason or "")
    assert reported_value(scores["turns_to_goal"]) == 3.0  # a goal reached needs no goal text


def test_a_conversation_the_simulator_broke_is_not_scored(tmp_path: Path) -> None:
    case = EvalCase(
        id="broken",
        input=FIRST,
        user_simulation={"script": "tests.users.scripted:raising_user", "goal": GOAL},
    )
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            _agent(),
            [case],
            scorers=["goal_completion", "turns_to_goal"],
            builtins=False,
            rubrics=[],
            judge=judge.config,
            retries=0,
            store=tmp_path / "runs.db",
        )
        assert judge.fake.request_count == 0
    (result,) = run.results
    assert result.trial.failure is not None
    assert result.trial.failure.cause.value == "user_simulator_error"
    for name in ("goal_completion", "turns_to_goal"):
        score = result.scores[name]
        assert score.value is None and not is_reported(score)
        assert (score.reason or "").startswith("not judged: the trial failed for an infrastructure")


def test_goal_completion_without_a_judge_says_how_to_get_one(tmp_path: Path) -> None:
    run = agenteval.evaluate(
        _agent(),
        [_case()],
        scorers=["goal_completion"],
        builtins=False,
        store=tmp_path / "runs.db",
    )
    score = _scores(run)["goal_completion"]
    assert score.value is None and score.error is None
    assert "no judge configured" in (score.reason or "")


def test_the_catalog_names_them_and_stores_their_settings() -> None:
    goal, turns = resolve_scorers(
        [{"name": "goal_completion", "threshold": 0.9}, "turns_to_goal"], builtins=False
    )
    assert isinstance(goal, GoalCompletion) and goal.threshold == 0.9
    assert isinstance(turns, TurnsToGoal)
    assert scorer_reference(goal) == {"name": "goal_completion", "threshold": 0.9}
    assert scorer_reference(turns) == "turns_to_goal"


def test_rescoring_and_rejudging_never_call_the_simulator(tmp_path: Path) -> None:
    simulator = CountingUser()
    case = EvalCase(id="simulated", user_simulation={"goal": GOAL})
    store = tmp_path / "runs.db"
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            _agent(),
            [case],
            scorers=["goal_completion", "turns_to_goal", "task_completion"],
            builtins=False,
            rubrics=["answer_relevance"],
            judge=judge.config,
            user_simulator=simulator,
            store=store,
        )
        played = simulator.calls
        assert played == 4  # three messages, then the stop
        assert [t.user for t in run.results[0].trial.simulation.turns] == [FIRST, ORDER, EMAIL]
        asked = judge.fake.request_count
        rescored = agenteval.rescore(run.run_id, store=store, judge=judge.config, use_cache=False)
        rejudged = agenteval.judge_run(
            run.run_id,
            judge.config,
            rubrics=["goal_completion", "correctness"],
            store=store,
            use_cache=False,
        )
        assert judge.fake.request_count > asked  # the judge was asked again, afresh
    assert simulator.calls == played
    for again in (rescored, rejudged):
        scores = _scores(again)
        assert scores["goal_completion"].value == 1.0
        assert reported_value(scores["turns_to_goal"]) == 3.0
    assert _scores(rescored)["task_completion"].value == 1.0
    for prompt in judge.prompts["goal_completion"]:
        assert all(said in prompt for said in SAID)


def test_concurrent_trials_are_each_judged_on_their_own_conversation(tmp_path: Path) -> None:
    from tests.scorers.simulated import MarkingUser

    trials = 6
    with answering_judge(tmp_path) as judge:
        run = agenteval.evaluate(
            _agent(),
            [EvalCase(id="simulated", user_simulation={"goal": GOAL})],
            scorers=["goal_completion", "turns_to_goal"],
            builtins=False,
            rubrics=[],
            judge=judge.config,
            user_simulator=MarkingUser(),
            trials=trials,
            concurrency=8,
            store=tmp_path / "runs.db",
        )
    assert len(run.results) == trials
    for result in run.results:
        assert result.scores["goal_completion"].value == 1.0
        assert reported_value(result.scores["turns_to_goal"]) == 3.0
    prompts = judge.prompts["goal_completion"]
    assert len(prompts) == trials  # each trial's conversation differs: no prompt shared
    for trial in range(trials):
        (own,) = [prompt for prompt in prompts if f"[t{trial}]" in prompt]
        assert own.count(f"[t{trial}]") == 3
        assert all(f"[t{other}]" not in own for other in range(trials) if other != trial)
