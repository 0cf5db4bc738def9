"""A turn whose expected final response is null or empty is not scored by the response criteria:
they average the turns that have a reference, and with none there is no score.

ADK 2.13 scores ROUGE of the answer against "" as 0 and fails a perfect agent on its own
fixture (`tests/integration/fixture/elicitation_agent/elicitation_flow.test.json`, whose first
turn expects `{"text": null}`). agenteval differs on purpose; these tests run both on the same
input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agenteval import EvalCase, Invocation
from agenteval.criteria import (
    CriterionConfig,
    ExactMatchCriterion,
    LLMJudgeCriterion,
    RougeMatchCriterion,
)
from agenteval.criteria.llm import JudgeAsk
from agenteval.evalset import AgentEvaluator, CaseStatus, EvalConfig, EvalSet
from agenteval.trace import Trial

ELICITATION = Path(__file__).parent / "data" / "adk_corpus" / "elicitation_flow.test.json"

ASKS = "When do you fly, and who is travelling?"
BOOKED = "Successfully booked flight to London on 2026-05-15 for Alice."


def perfect_agent(messages: Any) -> str:
    """Asks for what is missing, then books: what the fixture's agent does."""
    return ASKS if len(messages) == 1 else BOOKED


def adk_rouge_score(expected: list[str | None], answers: list[str]) -> tuple[float | None, str]:
    """ADK's own `response_match_score` (its RougeEvaluator) on the same turns (google-adk
    with `rouge-score`, which its `eval` extra installs)."""
    adk_case = pytest.importorskip("google.adk.evaluation.eval_case")
    adk_metrics = pytest.importorskip("google.adk.evaluation.eval_metrics")
    adk_rouge = pytest.importorskip("google.adk.evaluation.final_response_match_v1")
    genai_types = pytest.importorskip("google.genai.types")

    def turn(text: str | None) -> Any:
        return adk_case.Invocation(
            user_content=genai_types.Content(role="user", parts=[genai_types.Part(text="q")]),
            final_response=genai_types.Content(role="model", parts=[genai_types.Part(text=text)]),
        )

    metric = adk_metrics.EvalMetric(metric_name="response_match_score", threshold=0.8)
    result = adk_rouge.RougeEvaluator(metric).evaluate_invocations(
        [turn(answer) for answer in answers], [turn(text) for text in expected]
    )
    return result.overall_score, result.overall_eval_status.name


async def test_adks_fixture_with_a_null_first_reference_passes_a_perfect_agent(
    tmp_path: Path,
) -> None:
    config = EvalConfig.from_adk({"criteria": {"response_match_score": 0.8}})
    report = await AgentEvaluator(perfect_agent, config, store=tmp_path / "runs.db").evaluate(
        EvalSet.load(ELICITATION)
    )

    (result,) = report.results
    rouge = result.criterion_results["rouge_match"]
    assert rouge.value == 1.0  # turn 2 only: turn 1 states no expected answer
    assert result.status is CaseStatus.PASSED

    # ADK, on the same turns: turn 1's ROUGE against "" is 0, the mean 0.5, a failure.
    assert adk_rouge_score([None, BOOKED], [ASKS, BOOKED]) == (0.5, "FAILED")


def conversation(*references: str | None) -> EvalCase:
    turns = [
        Invocation(input=f"q{i}", expected_final_response=ref)
        if ref is not None
        else Invocation(input=f"q{i}")
        for i, ref in enumerate(references)
    ]
    return EvalCase(id="c", conversation=turns)


def answered(*answers: str) -> Trial:
    return Trial(output=answers[-1], metadata={"turn_outputs": list(answers)})


@pytest.mark.parametrize("criterion", [RougeMatchCriterion(), ExactMatchCriterion()])
@pytest.mark.parametrize("blank", [None, "", "   "])
async def test_no_reference_in_any_turn_gives_no_score_with_a_reason(
    criterion: RougeMatchCriterion | ExactMatchCriterion, blank: str | None
) -> None:
    result = await criterion.evaluate(answered("Hi there"), conversation(blank))
    assert (result.score, result.passed) == (None, None)
    assert result.reason == "no expected final response in the case"


async def test_adk_fails_a_single_turn_with_no_reference() -> None:
    """What ADK does where agenteval gives no score."""
    score, status = adk_rouge_score([""], ["Hi there"])
    assert (score, status) == (0.0, "FAILED")


@pytest.mark.parametrize("criterion", [RougeMatchCriterion(), ExactMatchCriterion()])
async def test_each_turn_with_a_reference_is_scored_against_its_own_answer(
    criterion: RougeMatchCriterion | ExactMatchCriterion,
) -> None:
    case = conversation("Paris.", None, "Rome.")
    # Turn 3's answer is right, turn 1's wrong: not turn 3's reference held against turn 1.
    result = await criterion.evaluate(answered("Lyon.", "Sure.", "Rome."), case)
    assert result.score == 0.5
    assert [t["turn"] for t in result.details["turns"]] == [1, 3]


async def test_a_last_turn_without_a_reference_is_not_held_to_an_earlier_ones() -> None:
    """The earlier reading compared turn 1's reference with turn 2's answer."""
    case = conversation("It is 18°C in Paris.", None)
    result = await RougeMatchCriterion(CriterionConfig(threshold=0.8)).evaluate(
        answered("It is 18°C in Paris.", "Yes, take an umbrella."), case
    )
    assert result.score == 1.0
    assert result.passed is True


def test_the_llm_judge_is_asked_about_the_turn_whose_reference_it_holds() -> None:
    """A last turn with no expected response: the judge compares turn 1's reference with turn
    1's answer, not with the last reply."""
    case = conversation("It is 18°C in Paris.", None)
    ask = LLMJudgeCriterion().ask(answered("18 degrees in Paris.", "Yes, take an umbrella."), case)

    assert isinstance(ask, JudgeAsk)
    assert ask.blocks["expected_output"] == "It is 18°C in Paris."
    assert ask.blocks["answer"] == "18 degrees in Paris."


@pytest.mark.parametrize("blank", [None, "", "   "])
def test_the_llm_judge_gives_no_score_without_a_reference(blank: str | None) -> None:
    """Seed 003 skipped with 1.0 here; a criterion with nothing to compare against gives no
    score, as ROUGE and exact match now do."""
    result = LLMJudgeCriterion().ask(answered("Hi there"), conversation(blank))

    assert not isinstance(result, JudgeAsk)
    assert (result.score, result.passed) == (None, None)
    assert result.reason == "no expected final response in the case"


def test_the_llm_judge_fails_a_silent_agent_without_asking() -> None:
    """An agent that said nothing where an answer was expected does not match it: 0, not the
    seed's skip with 1.0 (a pass for silence)."""
    result = LLMJudgeCriterion().ask(answered(""), conversation("Paris."))

    assert not isinstance(result, JudgeAsk)
    assert (result.score, result.passed) == (0.0, False)
    assert result.reason == "the agent gave no response to compare with the expected one"
