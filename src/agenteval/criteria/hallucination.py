"""`HallucinationCriterion`: is every claim of the response grounded in what the agent's tools
returned and the context the case provides? agenteval's `groundedness` template, with seed
003's grounding context."""

from __future__ import annotations

from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.criteria.base import CriterionResult
from agenteval.criteria.llm import JudgeAsk, TemplatedLLMCriterion, distinct
from agenteval.judge.played import case_question
from agenteval.judge.rubrics import tool_results_text
from agenteval.score import Score
from agenteval.scorers.answer import no_answer_reason
from agenteval.trace import Trial

__all__ = ["HallucinationCriterion", "grounding_context"]


def grounding_context(actual: Trial, expected: EvalCase) -> tuple[str, int]:
    """What the response may rest on: every tool result (as the `groundedness` rubric reads
    them), then the case's `metadata["context"]` marked `[context]`; and how many tool results
    were cut short."""
    results, cut = tool_results_text(actual)
    context = expected.metadata.get("context")
    if isinstance(context, list | tuple):
        context = "\n".join(str(item) for item in context)
    parts = [results] if results else []
    if context:
        parts.append(f"[context] provided with the case:\n{context}")
    return "\n\n".join(parts), cut


class HallucinationCriterion(TemplatedLLMCriterion):
    """The share of the response's claims supported by the grounding context (every tool call
    result, plus `metadata["context"]`); 1.0 is fully grounded.

    No score when the response is empty (nothing claimed) or there is nothing to ground it in.
    `details`: `is_grounded` (score at or above the threshold), `samples`, `reasonings`,
    `hallucinations` (the unsupported claims the samples found, each once).
    """

    name = "hallucinations_v1"
    description = "Claims are grounded in tool results and provided context (LLM judge)"
    template_id = "groundedness"
    reads: ClassVar[frozenset[str]] = frozenset({"output", "tool_calls", "tool_results"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

    def ask(self, actual: Trial, expected: EvalCase) -> JudgeAsk | CriterionResult:
        """The question, the grounding context and the response."""
        if not actual.actual_response.strip():
            reason = f"nothing claimed: {no_answer_reason(actual)}"
            return self._result(None, {"reason": reason}, reason=reason)
        context, cut = grounding_context(actual, expected)
        if not context:
            reason = "no tool results or metadata['context'] to check the response against"
            return self._result(None, {"reason": reason}, reason=reason)
        details: dict[str, Any] = {"tool_results_cut": cut} if cut else {}
        return JudgeAsk(
            {
                "question": case_question(expected, actual),
                "tool_results": context,
                "answer": actual.actual_response,
            },
            details,
        )

    def judged_details(self, samples: list[dict[str, Any]], score: Score) -> dict[str, Any]:
        """The shared details, with `is_grounded` and the unsupported claims."""
        details = super().judged_details(samples, score)
        details["is_grounded"] = score.value is not None and score.value >= self.threshold
        details["hallucinations"] = distinct(
            claim for sample in samples for claim in sample.get("unsupported_claims", [])
        )
        return details
