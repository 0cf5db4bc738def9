"""LLM-judged criteria of the response against what was expected: `LLMJudgeCriterion` and
`ResponseMatchCriterion` (the `correctness` template, agenteval's correctness rubric),
`RubricBasedCriterion` (written rules) and `FactualAccuracyCriterion` (facts, numbers, names).

A response that is missing because the agent failed (`actual.failure` set: it raised, returned
nothing, or returned something that is not an answer) is a wrong response: 0.0, with the cause.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean
from typing import Any, ClassVar

from agenteval.case import EvalCase, Rubric
from agenteval.criteria.base import CriterionResult
from agenteval.criteria.expected import expected_final_response, expected_rubrics
from agenteval.criteria.llm import JudgeAsk, TemplatedLLMCriterion, distinct
from agenteval.criteria.text import turns_to_score
from agenteval.judge.played import case_question
from agenteval.score import Score
from agenteval.scorers.answer import no_answer_reason
from agenteval.trace import Trial

__all__ = [
    "FactualAccuracyCriterion",
    "LLMJudgeCriterion",
    "ResponseMatchCriterion",
    "RubricBasedCriterion",
]


def _failed_without_answer(criterion: TemplatedLLMCriterion, actual: Trial) -> CriterionResult:
    reason = no_answer_reason(actual)
    return criterion._result(0.0, {"reason": reason}, reason=reason)


class LLMJudgeCriterion(TemplatedLLMCriterion):
    """The judge says whether the response means the same as the last expected final response
    (agenteval's `correctness` template: 1.0 same answer, 0.5 partly, 0.0 different). In a
    conversation, the last turn with an expected response is judged against that turn's answer.

    No score when no turn has an expected final response (nothing to compare with); 0.0
    without asking the judge when the agent said nothing where an answer was expected (agentflow's
    criterion API skips both with 1.0, which passes a silent agent). `details`: `samples`,
    `individual_scores`, `reasonings`, `judge_model`, `reason`.
    """

    name = "final_response_match_v2"
    description = "The response means the same as the expected response (LLM judge)"
    template_id = "correctness"
    reads: ClassVar[frozenset[str]] = frozenset({"output"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

    def ask(self, actual: Trial, expected: EvalCase) -> JudgeAsk | CriterionResult:
        """The question, the expected response and the response."""
        turns = turns_to_score(actual, expected)
        if isinstance(turns, str):
            return self._result(None, {"note": turns, "reason": turns}, reason=turns)
        # The last turn with an expected response, judged against that turn's own answer (not
        # the conversation's last answer, which may reply to something else).
        reference, answer = turns[-1].want, turns[-1].got
        if not answer.strip():
            if actual.failure is not None:
                return _failed_without_answer(self, actual)
            note = "the agent gave no response to compare with the expected one"
            return self._result(0.0, {"note": note, "reason": note}, reason=note)
        return JudgeAsk(
            {
                "question": case_question(expected, actual, upto=turns[-1].upto),
                "expected_output": reference,
                "answer": answer,
            }
        )


class ResponseMatchCriterion(LLMJudgeCriterion):
    """`LLMJudgeCriterion` under the name `response_match_score`: the same prompt, the same
    skips. The recommended default over `RougeMatchCriterion`."""

    name = "response_match_score"
    description = "The response means the same as the expected response, however worded"


def _rubric_lines(rubrics: list[Rubric]) -> str:
    lines: list[str] = []
    for rubric in rubrics:
        lines.append(f"- {rubric.rubric_id}: {rubric.content}")
        if rubric.weight != 1.0:
            lines.append(f"  weight: {rubric.weight:g}")
    return "\n".join(lines)


class RubricBasedCriterion(TemplatedLLMCriterion):
    """The judge grades the response against written rules, each rendered into the prompt as
    `- {rubric_id}: {content}` (with its weight when not 1.0).

    The rules are `config.rubrics`, then the case's own `rubrics` and every turn's (none
    dropped). With no rule at all the score is 1.0 at once. `details`: `rubrics` (the ids),
    `scores` (each sample's), `reasonings`, `rubric_scores` (each rubric's mean over samples).
    """

    name = "rubric_based_final_response_quality_v1"
    description = "The response meets your written grading rules (LLM judge)"
    template_id = "rubric_based"
    reads: ClassVar[frozenset[str]] = frozenset({"output"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

    def rubrics_for(self, case: EvalCase) -> list[Rubric]:
        """The rules this case's response is graded by: the config's, and the case's and its
        turns' that grade the answer (no `type`, or ADK's `FINAL_RESPONSE_QUALITY`; a rubric of
        another type, `TOOL_USE_QUALITY` say, is for another metric)."""
        own = [r for r in expected_rubrics(case) if r.type in (None, "FINAL_RESPONSE_QUALITY")]
        return distinct([*self.config.rubrics, *own])

    def validate_config(self) -> list[str]:
        """The LLM checks, and rubric weights that are not negative."""
        errors = super().validate_config()
        errors.extend(
            f"rubric {rubric.rubric_id!r} has a negative weight ({rubric.weight})"
            for rubric in self.config.rubrics
            if rubric.weight < 0
        )
        return errors

    def ask(self, actual: Trial, expected: EvalCase) -> JudgeAsk | CriterionResult:
        """The question, the rules and the response."""
        rubrics = self.rubrics_for(expected)
        if not rubrics:
            note = "No rubrics specified"
            return self._result(1.0, {"note": note, "rubrics": []}, reason=note)
        ids = [rubric.rubric_id for rubric in rubrics]
        if not actual.actual_response.strip() and actual.failure is not None:
            result = _failed_without_answer(self, actual)
            result.details["rubrics"] = ids
            return result
        return JudgeAsk(
            {
                "question": case_question(expected, actual),
                "rubrics": _rubric_lines(rubrics),
                "answer": actual.actual_response,
            },
            {"rubrics": ids},
        )

    def judged_details(self, samples: list[dict[str, Any]], score: Score) -> dict[str, Any]:
        """The shared details, with `scores` and each rubric's mean score."""
        details = super().judged_details(samples, score)
        details["scores"] = details["individual_scores"]
        per_rubric: defaultdict[str, list[float]] = defaultdict(list)
        for sample in samples:
            for entry in sample.get("rubric_scores", []):
                value = entry.get("score")
                if isinstance(value, int | float) and 0.0 <= value <= 1.0:
                    per_rubric[str(entry.get("rubric_id"))].append(float(value))
        details["rubric_scores"] = {rid: fmean(values) for rid, values in per_rubric.items()}
        return details


def _reference_facts(case: EvalCase) -> str | None:
    facts = case.metadata.get("reference_facts")
    if facts is None or facts == "" or facts == []:
        return None
    if isinstance(facts, list | tuple):
        return "\n".join(f"- {fact}" for fact in facts)
    return str(facts)


class FactualAccuracyCriterion(TemplatedLLMCriterion):
    """The judge checks the facts, numbers, dates and names of the response against the last
    expected final response, else `metadata["reference_facts"]` (a text or a list of facts),
    else well-established knowledge.

    No score for an empty response (no fact stated). `details`: `is_accurate` (score at or above
    the threshold), `samples`, `reasonings`, `errors` (the errors the samples found, each once).
    """

    name = "factual_accuracy_v1"
    description = "Facts, numbers, dates and names are correct (LLM judge)"
    template_id = "factual_accuracy"
    reads: ClassVar[frozenset[str]] = frozenset({"output"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

    def ask(self, actual: Trial, expected: EvalCase) -> JudgeAsk | CriterionResult:
        """The question, the reference (when there is one) and the response."""
        answer = actual.actual_response
        reference = expected_final_response(expected)
        turns = turns_to_score(actual, expected) if reference is not None else None
        upto = None
        if isinstance(turns, list) and turns:
            # The turn whose expected response is the reference, with its own answer (a
            # simulated user may have gone on after it: the last answer replies to that).
            reference, answer = turns[-1].want, turns[-1].got
            upto = turns[-1].upto
        reference = reference or _reference_facts(expected)
        if not answer.strip():
            reason = f"no response, so no fact to check ({no_answer_reason(actual)})"
            return self._result(None, {"reason": reason}, reason=reason)
        blocks = {"question": case_question(expected, actual, upto=upto), "answer": answer}
        if reference is not None:
            blocks["reference"] = reference
        return JudgeAsk(blocks, {"reference": reference})

    def judged_details(self, samples: list[dict[str, Any]], score: Score) -> dict[str, Any]:
        """The shared details, with `is_accurate` and the errors found."""
        details = super().judged_details(samples, score)
        details["is_accurate"] = score.value is not None and score.value >= self.threshold
        details["errors"] = distinct(
            error for sample in samples for error in sample.get("errors", [])
        )
        return details
