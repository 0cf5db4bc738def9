"""`PerTurnRubricCriterion`: every turn's rubrics, each judged against that turn's answer.

ADK's `rubric_based_final_response_quality_v1` keeps the rubrics of the last invocation only,
so the rules written for earlier turns are never checked. agenteval's `RubricBasedCriterion`
keeps all of them but grades them together against the final answer, where a rule written for
turn 1 ("states the temperature") may not apply to the last reply ("Yes, take an umbrella").

This criterion grades each turn that has rubrics of its own against what the agent answered in
that turn, with the conversation up to that turn as the question; the last turn is always
graded. Each graded turn is judged by its own rubrics plus the config's and the case's (ADK
applies those to every invocation). The score is the mean over the graded turns; a turn whose
judge samples tie (see `agenteval.evalset.ties`) is left out of the mean, and when every
graded turn ties the result is undecided. A case without rubrics of its turns, or a trial that
cannot be split into turns (the agent failed mid-conversation), is graded as
`RubricBasedCriterion` grades it.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any

from agenteval.case import EvalCase, Invocation
from agenteval.criteria.base import CriterionResult
from agenteval.criteria.response import RubricBasedCriterion
from agenteval.evalset.ties import apply_tie_rule
from agenteval.trace import Trial, Usage

__all__ = ["PerTurnRubricCriterion"]


def _turn_views(actual: Trial, expected: EvalCase) -> list[tuple[int, Trial, EvalCase]] | None:
    """(turn index, the trial's turn, the case up to that turn) for every turn to grade, or None
    when the trial cannot be split into the case's turns."""
    turns = expected.conversation or []
    outputs = actual.metadata.get("turn_outputs")
    # A simulated user spoke after the written turns: each written turn is still graded on its
    # own answer (the first ones), and the rubrics of no turn on the conversation's end.
    continued = (
        actual.simulation is not None
        and isinstance(outputs, list)
        and len(outputs) > len(turns)
        and len(actual.steps) == len(outputs)
    )
    if (
        len(turns) < (1 if continued else 2)
        or not isinstance(outputs, list)
        or (len(outputs) != len(turns) and not continued)
        or (len(actual.steps) != len(turns) and not continued)
    ):
        return None
    last = len(turns) - 1
    views: list[tuple[int, Trial, EvalCase]] = []
    for index, turn in enumerate(turns):
        if not turn.rubrics and (index != last or continued):
            continue
        step = actual.steps[index]
        trial = actual.model_copy(
            update={
                "output": outputs[index],
                "steps": [step],
                "tool_calls": list(step.tool_calls),
                "failure": actual.failure if index == last and not continued else None,
                # Read as the written turns up to this one (a simulated user said no more).
                "simulation": None,
            }
        )
        earlier: list[Invocation] = [t.model_copy(update={"rubrics": []}) for t in turns[:index]]
        case = expected.model_copy(update={"conversation": [*earlier, turn]})
        views.append((index, trial, case))
    if continued:
        # The case's and the run's rubrics: the whole conversation, as played, to its end.
        bare = [t.model_copy(update={"rubrics": []}) for t in turns]
        views.append(
            (len(actual.steps) - 1, actual, expected.model_copy(update={"conversation": bare}))
        )
    return views


class PerTurnRubricCriterion(RubricBasedCriterion):
    """`RubricBasedCriterion`, grading each turn's rubrics against that turn's answer (see the
    module's docs). `details`: `per_turn` (for each graded turn: `turn`, `rubrics`, `score`,
    `passed`, `reason`, and `tie` when its samples tied) and `rubrics` (every id graded)."""

    async def evaluate(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        """Grade each turn with rubrics of its own, and the last; the mean of their scores."""
        views = _turn_views(actual, expected)
        if views is None or not any(t.rubrics for t in (expected.conversation or [])):
            return apply_tie_rule(await super().evaluate(actual, expected), self.threshold)
        graded: list[tuple[int, CriterionResult]] = []
        for index, trial, case in views:
            if not self.rubrics_for(case):
                continue  # the last turn, with nothing to grade it by
            result = apply_tie_rule(await super().evaluate(trial, case), self.threshold)
            graded.append((index, result))
        if not graded:  # the turns' rubrics are all for other metrics (tool use, say)
            return apply_tie_rule(await super().evaluate(actual, expected), self.threshold)
        if len(graded) == 1:
            return graded[0][1]
        usage: Usage | None = None
        for _, result in graded:
            if result.token_usage is not None:
                usage = result.token_usage if usage is None else usage + result.token_usage
        per_turn: list[dict[str, Any]] = [
            {
                "turn": index + 1,
                "rubrics": result.details.get("rubrics", []),
                "score": result.score,
                "passed": result.passed,
                "reason": result.reason or result.error,
                **({"tie": True} if result.details.get("tie") else {}),
            }
            for index, result in graded
        ]
        details: dict[str, Any] = {
            "per_turn": per_turn,
            "rubrics": list(dict.fromkeys(r for entry in per_turn for r in entry["rubrics"])),
        }
        judge = next((r.judge for _, r in graded if r.judge is not None), None)
        failed = next((r for _, r in graded if r.error is not None), None)
        if failed is not None:
            return self._failure(
                failed.error or "All LLM samples failed",
                details=details,
                token_usage=usage,
                judge=judge,
            )
        unscored = [(i, r) for i, r in graded if r.score is None and not r.details.get("tie")]
        if unscored:
            index, result = unscored[0]
            reason = f"turn {index + 1}: {result.reason or 'no score'}"
            return self._result(None, {**details, "reason": reason}, usage, reason=reason)
        decided = [r.score for _, r in graded if r.score is not None]
        if not decided:
            reason = "judge tie on every graded turn; not counted as a pass or a fail"
            return self._result(
                None, {**details, "tie": True, "reason": reason}, usage, reason=reason
            )
        score = fmean(decided)
        reason = "; ".join(
            f"turn {entry['turn']}: " + ("tie" if entry.get("tie") else f"{entry['score']:.2f}")
            for entry in per_turn
        )
        return self._result(score, details, usage, reason=reason, judge=judge)
