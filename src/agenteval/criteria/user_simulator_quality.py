"""`per_turn_user_simulator_quality_v1`: whether a simulated user played its part, move by move
(google-adk 2.13's metric of that name, `PerTurnUserSimulatorQualityV1`).

**What is judged.** The user's moves in one trial's simulated conversation (`Trial.simulation`),
against the case's `user_simulation`: its goal (ADK's `conversation_plan`) and its persona (the
persona text, and the `violation_rubrics` of the behaviours ADK's persona lists, kept in
`extra["user_persona"]`). As ADK does:

1. The first move of the user is its `starting_prompt`: it passes when the message sent is the
   starting prompt (white space around them aside), without asking the judge.
2. Each later message of the user is judged with the conversation before it: does it keep to
   the plan, the persona, and the conversation so far (agenteval's own words for ADK's checks:
   `judge/templates/per_turn_user_simulator_quality.yaml`).
3. The end: the judge is asked whether ending the conversation after the last message was
   right (the user stopped with its reason, or the conversation reached `max_turns`, which ADK
   judges the same way). When it was not, the last move counts as failed.

Each judged move is asked `num_samples` times; the move passes when more samples pass it than
fail it (a tie fails it, as in ADK). The score is the share of the user's moves that passed;
the criterion passes at the threshold.

**Where it differs from ADK.** The case's written turns (played before the simulated user, which
ADK's scenarios do not have) are not the user's moves: they are shown as conversation, not
judged. With no `starting_prompt`, the first move is judged like the others. A judged move whose
samples all failed makes the result an error (`All LLM samples failed`), where ADK would count
the move as failed; a conversation cut by a failing trial has no end to judge.

**No score** (with the reason) for a trial without a simulated user (a case played from written
turns), and for one whose user wrote no message of its own.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from agenteval.case import EvalCase
from agenteval.criteria.base import BaseCriterion, CriterionResult
from agenteval.criteria.judging import criterion_judge, judge_spec
from agenteval.errors import ConfigError
from agenteval.judge.judge import Judge
from agenteval.judge.templates import load_template
from agenteval.score import JudgeRecord
from agenteval.trace import EndReason, Trial, Usage, UserTurn
from agenteval.user_simulation import UserSimulation

__all__ = ["PerTurnUserSimulatorQualityCriterion"]

_STOP_SIGNAL = re.compile(r"\{\{\s*stop_signal\s*\}\}")
"""ADK's stop token in a persona's texts (agenteval's users stop with a structured stop)."""
_NO_PERSONA = "No persona was given: judge the move against the plan and the conversation only."
_STOPS = {
    EndReason.GOAL_ACHIEVED: "its goal was achieved",
    EndReason.AGENT_CANNOT_HELP: "the agent cannot help",
    EndReason.USER_GAVE_UP: "it gave up",
    EndReason.USER_STOPPED: "it had nothing more to say",
}


@dataclass
class _Move:
    """One move of the user and its verdict."""

    turn: int
    """The turn it follows (1-based; the end follows the last turn)."""
    kind: str
    """`starting_prompt`, `message` or `end`."""
    said: str
    valid: bool | None = None
    votes: tuple[int, int] = (0, 0)
    reasons: tuple[str, ...] = ()

    def detail(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "move": self.kind,
            "said": self.said,
            "valid": self.valid,
            "votes": {"pass": self.votes[0], "fail": self.votes[1]},
            "reasons": list(self.reasons),
        }


class PerTurnUserSimulatorQualityCriterion(BaseCriterion):
    """Whether a simulated user kept to its plan and persona, move by move (see the module):
    the share of its moves that passed. Reads `threshold`, `judge_model`, `num_samples`."""

    name = "per_turn_user_simulator_quality_v1"
    description = "The simulated user's messages, each judged against its plan and persona."
    template_id: ClassVar[str] = "per_turn_user_simulator_quality"
    reads: ClassVar[frozenset[str]] = frozenset({"output"})
    """The trial fields it reads (`agenteval.scorers.recorded`): the agent's answers, which the
    judge reads each move of the user against."""

    def validate_config(self) -> list[str]:
        """The base checks, a judge model that names a judge, and at least one sample."""
        errors = super().validate_config()
        if self.config.num_samples < 1:
            errors.append(f"num_samples must be at least 1, got {self.config.num_samples}")
        try:
            judge_spec(self.config.judge_model)
        except ConfigError as exc:
            errors.append(f"judge_model {self.config.judge_model!r}: {exc.message}")
        return errors

    async def evaluate(self, actual: Trial, expected: EvalCase) -> CriterionResult:
        simulation = expected.user_simulation
        record = actual.simulation
        if simulation is None or record is None:
            reason = "no simulated user in this trial: the case plays its written turns"
            return self._result(None, {"reason": reason}, reason=reason)
        turns = record.turns
        first = len(expected.written_opening()[1])  # the case's own written turns come first
        if first >= len(turns):
            reason = "the simulated user wrote no message of its own"
            return self._result(None, {"reason": reason}, reason=reason)
        moves = [
            _Move(
                i + 1,
                "starting_prompt"
                if i == first and simulation.starting_prompt is not None
                else "message",
                turns[i].user,
            )
            for i in range(first, len(turns))
        ]
        if moves[0].kind == "starting_prompt":
            sent, prompt = moves[0].said.strip(), (simulation.starting_prompt or "").strip()
            moves[0].valid = sent == prompt
            moves[0].reasons = (
                ("the starting prompt, as written",)
                if moves[0].valid
                else (f"the first message is not the starting prompt {prompt!r}",)
            )
        end: _Move | None = None
        if record.end_reason is not EndReason.TRIAL_FAILED:
            end = _Move(len(turns), "end", _end_line(record.end_reason, record.end_detail))
        asked = [m for m in moves if m.valid is None] + ([end] if end else [])
        async with criterion_judge(self.config, getattr(self, "_context", None)) as lease:
            if lease.judge is None:
                reason = lease.problem or "no judge"
                return self._result(None, {"reason": reason}, reason=reason)
            outcomes = await asyncio.gather(
                *(self._judge(lease.judge, simulation, turns, move) for move in asked)
            )
        usage = Usage()
        for outcome in outcomes:
            usage = usage + outcome[0]
        judge = next((o[1] for o in outcomes if o[1] is not None), None)
        failed = [move for move in asked if move.valid is None]
        details: dict[str, Any] = {"moves": [m.detail() for m in [*moves, *([end] if end else [])]]}
        if failed:
            where = ", ".join(f"{m.kind} at turn {m.turn}" for m in failed)
            return self._failure(
                f"All LLM samples failed ({where})",
                details=details,
                token_usage=usage,
                judge=judge,
            )
        if end is not None and not end.valid:
            moves[-1].valid = False  # ADK: a wrong ending fails the last move
        score = sum(1 for m in moves if m.valid) / len(moves)
        passed = sum(1 for m in moves if m.valid)
        reason = f"{passed} of {len(moves)} moves of the simulated user kept to its plan" + (
            "; the conversation did not end when it should have"
            if end is not None and not end.valid
            else ""
        )
        details["reason"] = reason
        return self._result(score, details, usage, reason=reason, judge=judge)

    async def _judge(
        self, judge: Judge, simulation: UserSimulation, turns: list[UserTurn], move: _Move
    ) -> tuple[Usage, JudgeRecord | None]:
        """Ask the judge about `move` (its verdict set on it): the usage and the judge."""
        before = turns[: move.turn - 1] if move.kind != "end" else turns
        score = await judge.score(
            self.name,
            load_template(self.template_id),
            {
                "plan": simulation.goal or "(no plan given)",
                "persona": _persona(simulation),
                "conversation": _conversation(before),
                "move": move.said,
            },
            num_samples=self.config.num_samples,
            threshold=0.5,
        )
        good = [s for s in score.details.get("samples", []) if "score" in s]
        if good:
            yes = sum(1 for s in good if float(s["score"]) >= 0.5)
            move.votes = (yes, len(good) - yes)
            move.valid = yes > len(good) - yes
            move.reasons = tuple(str(s.get("reasoning", "")) for s in good)
        return score.usage or Usage(), score.judge


def _persona(simulation: UserSimulation) -> str:
    """The persona text and, for a persona of ADK's, the faults its behaviours list."""
    if not (simulation.persona or "").strip():
        return _NO_PERSONA
    lines = [simulation.persona or ""]
    structure = simulation.extra.get("user_persona")
    behaviors = structure.get("behaviors") if isinstance(structure, dict) else None
    faults = [
        f"- {behavior.get('name', '')}: {rubric}"
        for behavior in behaviors or []
        if isinstance(behavior, dict)
        for rubric in behavior.get("violation_rubrics") or []
    ]
    if faults:
        lines += ["", "Faults that break this persona:", *faults]
    return _STOP_SIGNAL.sub("ending the conversation", "\n".join(lines))


def _conversation(turns: list[UserTurn]) -> str:
    """The turns as `USER:` / `AGENT:` lines (an agent that gave no answer shows none)."""
    lines: list[str] = []
    for turn in turns:
        lines.append(f"USER: {turn.user}")
        if turn.agent is not None:
            lines.append(f"AGENT: {turn.agent}")
    return "\n\n".join(lines) if lines else "(nothing yet: this is the first message)"


def _end_line(reason: EndReason | None, detail: str | None) -> str:
    """The end of the conversation, said as the user's move."""
    if reason is EndReason.MAX_TURNS or reason is None:
        return "[The user ends the conversation here (it reached its message limit).]"
    why = _STOPS.get(reason, reason.value)
    return f"[The user ends the conversation here: {why}.]" + (f" ({detail})" if detail else "")
