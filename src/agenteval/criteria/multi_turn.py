"""The whole conversation, judged once: ADK's `multi_turn_task_success_v1`,
`multi_turn_trajectory_quality_v1`, `multi_turn_tool_use_quality_v1` and
`rubric_based_multi_turn_trajectory_quality_v1`.

**What the judge reads.** As in google-adk 2.13: every turn the trial played, in order, with
what the user said, the agent's tool calls (arguments, and what each returned or raised) and the
agent's reply (`criteria.conversation`), and the tools the agent was offered. A single-turn case
is a conversation of one turn (ADK judges it too). ADK also shows the agents' instructions,
which agenteval does not record.

**The three `multi_turn_*_v1`.** ADK sends these to Vertex AI's managed rubric metrics, which
write checks for the conversation and decide each. agenteval asks its own judge the same way, in
its own words (`judge/templates/multi_turn_*.yaml`): the judge writes the checks the
conversation must pass on the metric's question (task success: were the user's goals reached;
trajectory quality: was the path a good one; tool use quality: were the tool calls good ones),
decides each, and the sample's score is the share of checks met. The score is the mean of the
samples (agenteval's LLM criteria), passing at the threshold; a judge tie is undecided under
`AgentEvaluator` (`evalset.ties`). Another judge and another prompt than Vertex's: values can
differ from ADK's.

**`rubric_based_multi_turn_trajectory_quality_v1`.** The rubrics of type `TRAJECTORY_QUALITY`
(the case's and its turns', ADK reads the last turn's only) and the config's, each decided for
the whole conversation by a majority of the samples (`criteria.rubric_verdicts`); the score is
the share met. No score, with the reason, when no such rubric exists.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.criteria.base import CriterionResult
from agenteval.criteria.conversation import tool_declarations, transcript, turns_of
from agenteval.criteria.judging import criterion_judge
from agenteval.criteria.llm import JudgeAsk, TemplatedLLMCriterion
from agenteval.criteria.rubric_verdicts import ask_rubrics, rubric_lines, typed_rubrics
from agenteval.criteria.tool_use import judged_result
from agenteval.score import Score
from agenteval.trace import Trial

__all__ = [
    "MultiTurnTaskSuccessCriterion",
    "MultiTurnToolUseQualityCriterion",
    "MultiTurnTrajectoryQualityCriterion",
    "RubricBasedMultiTurnTrajectoryCriterion",
]

TRAJECTORY_QUALITY = "TRAJECTORY_QUALITY"


def _checks_share(sample: dict[str, Any]) -> float | None:
    checks = sample.get("checks")
    if not isinstance(checks, list):
        return None
    decided: list[bool] = [
        c["met"] for c in checks if isinstance(c, dict) and isinstance(c.get("met"), bool)
    ]
    return sum(decided) / len(decided) if decided else None


class _ConversationCriterion(TemplatedLLMCriterion):
    """A whole-conversation judgement by a template whose judge writes and decides checks."""

    reads: ClassVar[frozenset[str]] = frozenset({"output", "tool_calls"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

    def ask(self, actual: Trial, expected: EvalCase) -> JudgeAsk | CriterionResult:
        """The tools and the conversation."""
        turns = turns_of(expected, actual)
        context = getattr(self, "_context", None)
        return JudgeAsk(
            {
                "tools": tool_declarations(context.tools if context else None, actual),
                "conversation": transcript(turns, actual.node_visits),
            },
            {"turns": len(turns)},
        )

    def judged_details(self, samples: list[dict[str, Any]], score: Score) -> dict[str, Any]:
        """The shared details, with each sample's `checks` and the share of them met."""
        details = super().judged_details(samples, score)
        details["checks"] = [sample.get("checks", []) for sample in samples]
        details["checks_met"] = [_checks_share(sample) for sample in samples]
        return details

    async def evaluate(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """The judge's samples; each sample's score is the share of its checks met (its own
        score when it wrote no check), and the result their mean."""
        result = await super().evaluate(actual, expected)
        if result.score is None or result.error is not None:
            return result
        shares = result.details.get("checks_met", [])
        scores = [
            share if share is not None else float(own)
            for share, own in zip(shares, result.details.get("individual_scores", []), strict=False)
        ]
        if not scores:
            return result
        value = sum(scores) / len(scores)
        details = {**result.details, "individual_scores": scores}
        return result.model_copy(
            update={"score": value, "passed": value >= self.threshold, "details": details}
        )


class MultiTurnTaskSuccessCriterion(_ConversationCriterion):
    """Did the agent reach what the user wanted over the conversation (see the module)."""

    name = "multi_turn_task_success_v1"
    description = "The agent achieved the user's goals over the conversation (LLM judge)"
    template_id = "multi_turn_task_success"


class MultiTurnTrajectoryQualityCriterion(_ConversationCriterion):
    """Was the agent's path through the conversation a good one (see the module)."""

    name = "multi_turn_trajectory_quality_v1"
    description = "The agent's path through the conversation was a good one (LLM judge)"
    template_id = "multi_turn_trajectory_quality"


class MultiTurnToolUseQualityCriterion(_ConversationCriterion):
    """Were the agent's tool calls across the conversation good ones (see the module)."""

    name = "multi_turn_tool_use_quality_v1"
    description = "The agent's tool calls across the conversation were good ones (LLM judge)"
    template_id = "multi_turn_tool_use_quality"
    reads: ClassVar[frozenset[str]] = frozenset({"output", "tool_calls", "tool_arguments"})
    """The trial fields it reads: the calls' arguments too (`agenteval.scorers.recorded`)."""


class RubricBasedMultiTurnTrajectoryCriterion(TemplatedLLMCriterion):
    """The whole conversation against `TRAJECTORY_QUALITY` rubrics (see the module).
    `details`: `rubrics` (their verdicts), `votes`, `rubric_scores`, and `ties` / `unvoted`."""

    name = "rubric_based_multi_turn_trajectory_quality_v1"
    description = "The conversation meets your TRAJECTORY_QUALITY rubrics (LLM judge)"
    template_id = "conversation_rubrics"
    rubric_type: ClassVar[str] = TRAJECTORY_QUALITY
    reads: ClassVar[frozenset[str]] = frozenset({"output", "tool_calls"})
    """The trial fields it reads (`agenteval.scorers.recorded`)."""

    def ask(self, actual: Trial, expected: EvalCase) -> JudgeAsk | CriterionResult:
        """The tools, the conversation and the rubrics; no score without a rubric."""
        rubrics = typed_rubrics(self.config.rubrics, expected, self.rubric_type, None)
        if not rubrics:
            reason = (
                f"no rubrics of type {self.rubric_type} in the case, its turns or the config: "
                "nothing to grade the conversation by"
            )
            return self._result(None, {"reason": reason, "rubrics": []}, reason=reason)
        context = getattr(self, "_context", None)
        return JudgeAsk(
            {
                "tools": tool_declarations(context.tools if context else None, actual),
                "conversation": transcript(turns_of(expected, actual), actual.node_visits),
                "rubrics": rubric_lines(rubrics),
            },
            {"rubrics": [r.rubric_id for r in rubrics]},
        )

    async def evaluate(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """One judgement of every rubric; the share of met verdicts."""
        asked = self.ask(actual, expected)
        if isinstance(asked, CriterionResult):
            return asked
        rubrics = typed_rubrics(self.config.rubrics, expected, self.rubric_type, None)
        async with criterion_judge(self.config, getattr(self, "_context", None)) as lease:
            if lease.judge is None:
                reason = lease.problem or "no judge"
                return self._result(None, {**asked.details, "reason": reason}, reason=reason)
            votes = await ask_rubrics(
                lease.judge,
                self.name,
                self.template_id,
                asked.blocks,
                rubrics,
                num_samples=self.config.num_samples,
            )
        details: dict[str, Any] = {
            **asked.details,
            "rubric_scores": dict(votes.verdicts),
            "votes": votes.votes,
        }
        return judged_result(self, [(None, votes)], details)
