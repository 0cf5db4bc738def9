"""The four LLM judge rubrics of "What gets measured": `correctness`, `groundedness`,
`answer_relevance` and `context_relevance`, as scorers over the one judge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agenteval.case import EvalCase
from agenteval.judge.played import case_question
from agenteval.judge.templates import load_template
from agenteval.redaction import masked_json
from agenteval.score import Score
from agenteval.trace import Trial

if TYPE_CHECKING:
    from agenteval.judge.judge import Judge

__all__ = [
    "NO_JUDGE",
    "RUBRICS",
    "JudgeRubric",
    "case_question",
    "tool_results_text",
]

RUBRICS = ("correctness", "groundedness", "answer_relevance", "context_relevance")
"""The judge rubrics, in the order reports show them."""

NO_JUDGE = (
    "no judge configured: pass --judge PROVIDER:MODEL (e.g. openai:gpt-4o-mini), "
    "set `judge:` in agenteval.yaml, or set AGENTEVAL_JUDGE"
)

_MAX_RESULT_CHARS = 4_000
_MAX_RESULTS_CHARS = 24_000


def _as_text(value: Any) -> str:
    # Masked while it is still data (`masked_json`): once written as JSON text, a plain-words
    # value under a secret-named key (`"password": "velvet morning"`) no longer looks like a
    # secret, and the judge's redaction of the text it sends could not tell. A result nested
    # thousands deep, or one that contains itself, is shown cut.
    return value if isinstance(value, str) else masked_json(value, sort_keys=True)


def tool_results_text(trial: Trial) -> tuple[str, int]:
    """Every tool call that returned a result, as text, and how many results were cut short
    (each result is kept to 4,000 characters, all of them to 24,000). Values under
    secret-named keys (`password`, `api_key`, ...) are masked."""
    parts: list[str] = []
    cut = 0
    total = 0
    for index, call in enumerate(trial.tool_calls, start=1):
        if call.result is None or call.error is not None:
            continue
        result = _as_text(call.result)
        if len(result) > _MAX_RESULT_CHARS:
            result, cut = result[:_MAX_RESULT_CHARS] + " …[cut]", cut + 1
        part = f"[{index}] {call.name}({_as_text(call.arguments)}) returned:\n{result}"
        if total + len(part) > _MAX_RESULTS_CHARS:
            cut += 1
            continue
        parts.append(part)
        total += len(part)
    return "\n\n".join(parts), cut


@dataclass(frozen=True)
class JudgeRubric:
    """A rubric scored by the LLM judge (a template of `agenteval/judge/templates/`).

    Without a judge, it gives no score, with a reason that says how to configure one (never a
    made-up 0.5). It skips, also with no score, when the trial lacks what the rubric needs
    (`expected_output`, tool results).
    """

    name: str
    judge: Judge | None = None
    unavailable: str | None = None
    """Why there is no judge (its SDK or key is missing), to tell the user."""
    num_samples: int = 1
    threshold: float = 0.5

    @property
    def template_id(self) -> str:
        """The template this rubric asks with."""
        return self.name

    @property
    def reads(self) -> frozenset[str]:
        """The trial fields its template reads: the answer, the tool results (a run gives no
        score when the trace does not record one: `agenteval.scorers.recorded`)."""
        template = load_template(self.template_id)
        fields = {"output"} if "{{ answer }}" in template.user else set()
        if "tool_results" in template.needs:
            fields |= {"tool_calls", "tool_results"}
        return frozenset(fields)

    def declines(self, case: EvalCase) -> str | None:
        """Why it does not apply to `case`, whatever the trial did (`scorers.recorded`): its
        template compares with an `expected_output` the case lacks. Cheap: no judge is asked."""
        if "expected_output" in load_template(self.template_id).needs and not case.expected_output:
            return "no expected_output in the case"
        return None

    async def __call__(self, case: EvalCase, trial: Trial) -> Score:
        if trial.failure is not None and not trial.responded:
            # The agent never got to answer: as every built-in scorer has it
            # (`scorers.answer.not_judged`), no score, never "the trial gave no answer" 0.0.
            failure, message = trial.failure.cause.value, trial.failure.message
            if message:
                failure += ": " + (message if len(message) <= 80 else message[:79] + "…")
            reason = f"not judged: the trial failed for an infrastructure reason ({failure})"
            return Score(name=self.name, reason=reason)
        template = load_template(self.template_id)
        blocks: dict[str, str] = {"question": case_question(case, trial)}
        details: dict[str, Any] = {}
        if "expected_output" in template.needs:
            if not case.expected_output:
                return Score(name=self.name, reason="no expected_output in the case")
            blocks["expected_output"] = case.expected_output
        if "tool_results" in template.needs:
            results, cut = tool_results_text(trial)
            if not results:
                return Score(name=self.name, reason="no tool results to judge against")
            blocks["tool_results"] = results
            if cut:
                details["tool_results_cut"] = cut
        if "{{ answer }}" in template.user:
            if not trial.output:
                if self.name == "groundedness":
                    return Score(name=self.name, reason="no answer: nothing claimed")
                return Score(
                    name=self.name, value=0.0, passed=False, reason="the trial gave no answer"
                )
            blocks["answer"] = trial.output
        if self.judge is None:
            return Score(name=self.name, reason=self.unavailable or NO_JUDGE)
        return await self.judge.score(
            self.name,
            template,
            blocks,
            num_samples=self.num_samples,
            threshold=self.threshold,
            details=details,
        )
