"""`RubricBasedToolUseCriterion`: ADK's `rubric_based_tool_use_quality_v1`, the agent's tool
calls in each turn judged against rubrics of type `TOOL_USE_QUALITY`.

As in google-adk 2.13, each turn (invocation) is judged on its own: the judge sees the tools the
agent was offered, what the user said in that turn, the tool calls the agent made in it with
their arguments and results (or that it made none), and the rubrics; it decides each rubric met
or not (`criteria.rubric_verdicts`: a majority of `num_samples` samples, ties left undecided).
A turn is graded by the config's rubrics, the case's `TOOL_USE_QUALITY` rubrics and its own. The
score is the share of met verdicts over every graded turn's rubrics together (ADK's mean of the
rubric scores across invocations); it passes at the threshold.

No score, with the reason, when no rubric of that type applies to the case (ADK refuses to run
without rubrics). A turn with no rubric of its own while the config and the case give none is
not graded (ADK stops the metric there). The judge's prompt is agenteval's own
(`judge/templates/tool_use_rubrics.yaml`), so values can differ from ADK's with another judge
model and prompt.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.criteria.base import CriterionResult
from agenteval.criteria.conversation import Turn, tool_declarations, tool_lines, turns_of
from agenteval.criteria.judging import criterion_judge
from agenteval.criteria.llm import JudgeAsk, TemplatedLLMCriterion
from agenteval.criteria.rubric_verdicts import RubricVotes, ask_rubrics, rubric_lines, typed_rubrics
from agenteval.score import JudgeRecord
from agenteval.trace import Trial, Usage

__all__ = ["RubricBasedToolUseCriterion", "judged_result"]

TOOL_USE_QUALITY = "TOOL_USE_QUALITY"


def _tool_use_text(turn: Turn) -> str:
    if not turn.tool_calls:
        return "(the agent called no tool in this turn)"
    return "\n".join(tool_lines(turn.tool_calls))


def judged_result(
    criterion: TemplatedLLMCriterion,
    graded: list[tuple[int | None, RubricVotes]],
    details: dict[str, Any],
) -> CriterionResult:
    """One result from the votes of one or more judgements: an error when a judgement failed,
    else the share of met verdicts over all of them, undecided when every rubric tied, no
    score when the judge decided none."""
    usage: Usage | None = None
    judge: JudgeRecord | None = None
    for _, votes in graded:
        if votes.usage is not None:
            usage = votes.usage if usage is None else usage + votes.usage
        judge = judge or votes.judge
    verdicts = [v for _, votes in graded for v in votes.verdicts.values()]
    ties = [rid for _, votes in graded for rid in votes.ties]
    unvoted = [rid for _, votes in graded for rid in votes.unvoted]
    details = {
        **details,
        **({"ties": ties} if ties else {}),
        **({"unvoted": unvoted} if unvoted else {}),
    }
    failed = next((votes for _, votes in graded if votes.error is not None), None)
    if failed is not None:
        return criterion._failure(
            failed.error or "All LLM samples failed",
            details={**details, "samples": failed.samples},
            token_usage=usage,
            judge=judge,
        )
    if not verdicts:
        if ties:
            reason = (
                f"judge tie on every rubric ({', '.join(ties)}); not counted as a pass or a "
                "fail: ask an odd num_samples, or read the samples' reasons"
            )
            return criterion._result(
                None, {**details, "tie": True, "reason": reason}, usage, reason=reason
            )
        reason = "the judge decided no rubric (its samples named none of them)"
        return criterion._failure(reason, details=details, token_usage=usage, judge=judge)
    score = sum(verdicts) / len(verdicts)
    missed = [rid for _, votes in graded for rid, v in votes.verdicts.items() if v == 0.0]
    reason = (
        f"{sum(verdicts):g} of {len(verdicts)} rubric verdicts met"
        + (f"; not met: {', '.join(dict.fromkeys(missed))}" if missed else "")
        + (f"; tied (left out): {', '.join(ties)}" if ties else "")
    )
    return criterion._result(
        score, {**details, "reason": reason}, usage, reason=reason, judge=judge
    )


class RubricBasedToolUseCriterion(TemplatedLLMCriterion):
    """The tool calls of each turn judged against `TOOL_USE_QUALITY` rubrics (see the module's
    docs). `details`: `per_turn` (each graded turn: `turn`, `rubrics` with their verdicts,
    `votes`, `score`), `rubric_scores` (each rubric's mean over the turns), `rubrics`, and
    `ties` / `unvoted` when some rubric was not decided."""

    name = "rubric_based_tool_use_quality_v1"
    description = "The tool calls of each turn meet your TOOL_USE_QUALITY rubrics (LLM judge)"
    template_id = "tool_use_rubrics"
    rubric_type: ClassVar[str] = TOOL_USE_QUALITY
    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls", "tool_arguments"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

    def ask(self, actual: Trial, expected: EvalCase) -> JudgeAsk | CriterionResult:
        """The result without asking, when no rubric applies (else `evaluate` asks per turn)."""
        if not typed_rubrics(self.config.rubrics, expected, self.rubric_type, None):
            reason = (
                f"no rubrics of type {self.rubric_type} in the case, its turns or the config: "
                "nothing to grade the tool use by"
            )
            return self._result(None, {"reason": reason, "rubrics": []}, reason=reason)
        return JudgeAsk({})

    async def evaluate(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Judge every turn that has rubrics; the share of met verdicts over all of them."""
        asked = self.ask(actual, expected)
        if isinstance(asked, CriterionResult):
            return asked
        turns = turns_of(expected, actual)
        plan = []
        for turn in turns:
            indices = [turn.index] if expected.conversation and len(turns) > 1 else None
            rubrics = typed_rubrics(self.config.rubrics, expected, self.rubric_type, indices)
            if rubrics:
                plan.append((turn, rubrics))
        if not plan:
            reason = "no played turn has rubrics of type " + self.rubric_type
            return self._result(None, {"reason": reason, "rubrics": []}, reason=reason)
        graded: list[tuple[int | None, RubricVotes]] = []
        async with criterion_judge(self.config, getattr(self, "_context", None)) as lease:
            if lease.judge is None:
                reason = lease.problem or "no judge"
                return self._result(None, {"reason": reason}, reason=reason)
            tools = tool_declarations(self._context.tools if self._context else None, actual)
            for turn, rubrics in plan:
                blocks = {
                    "tools": tools,
                    "question": turn.user,
                    "tool_use": _tool_use_text(turn),
                    "rubrics": rubric_lines(rubrics),
                }
                votes = await ask_rubrics(
                    lease.judge,
                    self.name,
                    self.template_id,
                    blocks,
                    rubrics,
                    num_samples=self.config.num_samples,
                )
                graded.append((turn.index, votes))
                if votes.error is not None:
                    break
        per_turn = [
            {
                "turn": (index or 0) + 1,
                "rubrics": dict(votes.verdicts),
                "votes": votes.votes,
                "score": votes.score,
            }
            for index, votes in graded
        ]
        by_rubric: dict[str, list[float]] = {}
        for _, votes in graded:
            for rid, verdict in votes.verdicts.items():
                by_rubric.setdefault(rid, []).append(verdict)
        details: dict[str, Any] = {
            "per_turn": per_turn,
            "rubric_scores": {rid: sum(v) / len(v) for rid, v in by_rubric.items()},
            "rubrics": list(dict.fromkeys(r.rubric_id for _, rs in plan for r in rs)),
        }
        return judged_result(self, graded, details)
