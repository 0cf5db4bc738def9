"""`TemplatedLLMCriterion`: the shared machinery of the LLM-judged criteria.

A criterion of this kind names a judge template (`agenteval/judge/templates/<id>.yaml`), builds
the blocks the template fills (question, answer, reference, ...) and asks agenteval's one judge
(`Judge.score`) for `config.num_samples` samples (3 by default). The score is the mean of the
samples that gave a verdict; a sample that failed is logged (logger `agenteval.judge`) and
dropped; when every sample failed the result is a failure with `error="All LLM samples failed"`.
The judge's token usage goes to `CriterionResult.token_usage`, and the judge that scored it to
`CriterionResult.judge`.

With no judge to be had (no SDK, no API key), the result has no score (`score=None`) and a
reason saying how to fix it; agenteval never makes a score up (agentflow's criterion API scores
0.5 in this case; that is deliberately not followed).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.criteria.base import BaseCriterion, CriterionResult
from agenteval.criteria.judging import API_STYLES, criterion_judge, judge_spec
from agenteval.errors import ConfigError
from agenteval.judge.templates import load_template
from agenteval.score import Score
from agenteval.trace import Trial

__all__ = ["JudgeAsk", "TemplatedLLMCriterion", "distinct"]


@dataclass
class JudgeAsk:
    """What a criterion asks the judge: the template's blocks (raw text; the judge fences
    them) and details to keep in the result."""

    blocks: dict[str, str]
    details: dict[str, Any] = field(default_factory=dict)


def distinct(items: Iterable[Any]) -> list[Any]:
    """`items` without repeats, in first-seen order (for lists merged across samples)."""
    seen: list[Any] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


class TemplatedLLMCriterion(BaseCriterion):
    """A criterion scored by the LLM judge with one template.

    Subclasses set `template_id` and implement `ask` (the blocks to send, or a result given
    without asking: a skip, a missing reference) and may extend `judged_details`. Reads
    `config.threshold`, `judge_model`, `num_samples` and `api_style`.
    """

    template_id: ClassVar[str]
    """The judge template this criterion asks with."""

    @abstractmethod
    def ask(self, actual: Trial, expected: EvalCase) -> JudgeAsk | CriterionResult:
        """The blocks to judge, or the result to give without asking the judge."""

    def judged_details(self, samples: list[dict[str, Any]], score: Score) -> dict[str, Any]:
        """Details of a judged result, from the samples that gave a verdict: `samples` (every
        sample: score, reasoning and the template's own fields, or its error),
        `individual_scores`, `reasonings`, `judge_model`, `reason`."""
        return {
            "samples": score.details.get("samples", []),
            "individual_scores": [sample["score"] for sample in samples],
            "reasonings": [sample["reasoning"] for sample in samples],
            "judge_model": score.judge.judge if score.judge else None,
            "reason": score.reason,
        }

    def validate_config(self) -> list[str]:
        """The base checks, a judge model that names a judge, at least one sample, and a known
        `api_style`."""
        errors = super().validate_config()
        if self.config.num_samples < 1:
            errors.append(f"num_samples must be at least 1, got {self.config.num_samples}")
        try:
            judge_spec(self.config.judge_model)
        except ConfigError as exc:
            errors.append(f"judge_model {self.config.judge_model!r}: {exc.message}")
        if self.config.api_style not in API_STYLES:
            errors.append(
                f"api_style must be one of {', '.join(API_STYLES)}, got {self.config.api_style!r}"
            )
        return errors

    async def evaluate(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Ask the judge (unless `ask` settles it) and read its samples into a result."""
        asked = self.ask(actual, expected)
        if isinstance(asked, CriterionResult):
            return asked
        template = load_template(self.template_id)
        async with criterion_judge(self.config, getattr(self, "_context", None)) as lease:
            if lease.judge is None:
                reason = lease.problem or "no judge"
                return self._result(None, {**asked.details, "reason": reason}, reason=reason)
            score = await lease.judge.score(
                self.name,
                template,
                asked.blocks,
                num_samples=self.config.num_samples,
                threshold=self.threshold,
                details=asked.details,
            )
        good = [sample for sample in score.details.get("samples", []) if "score" in sample]
        if score.error is not None or score.value is None:
            return self._failure(
                score.error or "All LLM samples failed",
                details={**asked.details, "samples": score.details.get("samples", [])},
                token_usage=score.usage,
                judge=score.judge,
            )
        details = {**asked.details, **self.judged_details(good, score)}
        return self._result(
            score.value, details, score.usage, reason=score.reason, judge=score.judge
        )
