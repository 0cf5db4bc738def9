"""Scores of a whole conversation with a simulated user (a case's `user_simulation`):
`goal_completion`, the judge's verdict on whether the agent got the user what they wanted, and
`turns_to_goal`, how many user messages that took (reported, never a pass or a fail).

Both read the conversation the trial held (`Trial.simulation`) and apply to nothing else: a
written case has no goal, so each gives no score, with why (`declines`), never a made-up value.
A trial whose conversation ended on the harness's failure (the simulator's, a timeout) is not
judged (`scorers.answer.not_judged`): it says nothing of the agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.judge.played import transcript, turns_of
from agenteval.judge.rubrics import NO_JUDGE, JudgeRubric
from agenteval.judge.templates import load_template
from agenteval.score import Score
from agenteval.scorers.answer import not_judged
from agenteval.scorers.reported import REPORTED
from agenteval.trace import SimulatedConversation, Trial

__all__ = ["CONVERSATION_SCORERS", "GoalCompletion", "TurnsToGoal", "simulation_declined"]

NO_SIMULATION = "no simulated user in the trial: the conversation was written in advance"


def simulation_declined(case: EvalCase, *, goal: bool) -> str | None:
    """Why a conversation score does not apply to `case`: it has no `user_simulation`, or
    (`goal`) its simulated user has no goal to judge by."""
    if case.user_simulation is None:
        return "no user_simulation in the case: a written conversation has no user's goal"
    if goal and not (case.user_simulation.goal or "").strip():
        return "the case's simulated user has no goal (give `user_simulation.goal`)"
    return None


@dataclass(frozen=True)
class GoalCompletion(JudgeRubric):
    """Whether the agent got the simulated user what they wanted: the judge reads the user's
    goal (`user_simulation.goal`) and the whole conversation as played, turn by turn (every
    user message, the agent's tool calls with what they returned, its answers; the
    `goal_completion` template), and scores 1.0 (reached), 0.5 (partly) or 0.0, passing at
    `threshold`.

    A judge rubric like `correctness` (named `goal_completion` in `--rubric`, `rubrics:`,
    `scorers:`; `agenteval judge` adds it to a stored run). The simulated user's own stop
    (`goal_achieved`) is not taken as proof: the judge checks what the agent did. No score
    for a case without a simulated user or without a goal (a scripted user given none), a trial
    that held no simulated conversation, or when there is no judge.
    """

    name: str = "goal_completion"

    @property
    def template_id(self) -> str:
        """`goal_completion`, whatever the scorer is named."""
        return "goal_completion"

    @property
    def reads(self) -> frozenset[str]:
        """The answers and the tool calls (the transcript shows both)."""
        return frozenset({"output", "tool_calls"})

    def declines(self, case: EvalCase) -> str | None:
        """Why it does not apply to `case`: no simulated user, or one without a goal."""
        return simulation_declined(case, goal=True)

    async def __call__(self, case: EvalCase, trial: Trial) -> Score:
        simulation = _played(self.name, self.declines(case), trial)
        if isinstance(simulation, Score):
            return simulation
        assert case.user_simulation is not None  # `declines` says so
        if not simulation.turns:
            return Score(name=self.name, reason="the simulated user said nothing: no conversation")
        if self.judge is None:
            return Score(name=self.name, reason=self.unavailable or NO_JUDGE)
        turns = turns_of(case, trial)
        details: dict[str, Any] = {
            "turns": len(simulation.turns),
            "end_reason": simulation.end_reason.value if simulation.end_reason else None,
        }
        blocks = {
            "goal": case.user_simulation.goal or "",
            "conversation": transcript(turns, trial.node_visits),
        }
        return await self.judge.score(
            self.name,
            load_template(self.template_id),
            blocks,
            num_samples=self.num_samples,
            threshold=self.threshold,
            details=details,
        )


@dataclass(frozen=True)
class TurnsToGoal:
    """How many user messages it took the simulated user to reach its goal (the written ones
    included): a reported figure (`scorers.reported`), never a pass or a fail, its value under
    `details["agenteval.reported"]` in `user messages`.

    The goal counts as reached when the simulated user stopped saying so (`goal_achieved`, the
    same reading as `SimulatedConversation.turns_to_goal` and the run summary); otherwise the
    score is reported with no figure and the reason says how the conversation ended, so a mean
    is taken over the conversations that reached their goal only. No score for a case without
    a simulated user or a trial that held no simulated conversation.
    """

    name: str = "turns_to_goal"
    reads: ClassVar[frozenset[str]] = frozenset()
    """It reads the trial's simulated conversation, which no trace leaves out."""

    def declines(self, case: EvalCase) -> str | None:
        """Why it does not apply to `case`: no simulated user."""
        return simulation_declined(case, goal=False)

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        simulation = _played(self.name, self.declines(case), trial)
        if isinstance(simulation, Score):
            return simulation
        turns = simulation.turns_to_goal
        if turns is None:
            ended = simulation.end_reason.value if simulation.end_reason else "unknown"
            reason = f"the goal was not reached: the conversation ended on {ended}"
            if simulation.end_detail:
                reason += f" ({simulation.end_detail})"
        else:
            reason = f"the goal was reached in {turns} user message{'s' * (turns != 1)}"
        return Score(
            name=self.name,
            reason=reason,
            details={REPORTED: {"value": turns, "unit": "user messages"}},
        )


def _played(name: str, declined: str | None, trial: Trial) -> SimulatedConversation | Score:
    """The trial's simulated conversation, or the no-score that says why there is none to
    score: the case declined (`declined`), an infrastructure failure (not judged), or a trial
    that held no simulated conversation."""
    if declined is not None:
        return Score(name=name, reason=declined)
    skipped = not_judged(name, trial)
    if skipped is not None:
        return skipped
    if trial.simulation is None:
        return Score(name=name, reason=NO_SIMULATION)
    return trial.simulation


CONVERSATION_SCORERS: dict[str, type[GoalCompletion] | type[TurnsToGoal]] = {
    "goal_completion": GoalCompletion,
    "turns_to_goal": TurnsToGoal,
}
"""The conversation scores by name, for the catalog: named, never applied by default (a run
without simulated users would only show them skipped)."""
