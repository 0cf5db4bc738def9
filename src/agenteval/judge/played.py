"""What the user said to the agent in one trial, and the conversation turn by turn, as played:
the one reading every judged scorer shares (the judge rubrics, the criteria, the agent
evaluators, `goal_completion`).

A written case says its user's words in advance (its `input`, or its `conversation`'s turns);
a case with a simulated user (`user_simulation`) does not: its user's messages are known only
once the trial played them (`Trial.simulation.turns`, the written ones included), and the case's
own `input` is then at most the first of them (None for a simulated-only case). So the user's
words are read from the trial when it holds a simulated conversation, from the case otherwise,
here and nowhere else (`user_words`), and a simulated conversation is judged as a written one.

The transcript (`turns_of`, `transcript`) masks values under secret-named keys while still
data (`redaction.masked_json`); a result is kept to 4,000 characters and a transcript to 60,000
(a cut says so). The judge's own redaction of the text it sends applies on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agenteval.case import EvalCase
from agenteval.redaction import masked_json
from agenteval.trace import AgentStep, ToolCall, Trial

__all__ = [
    "Turn",
    "UserWords",
    "case_question",
    "tool_lines",
    "transcript",
    "turn_text",
    "turns_of",
    "user_words",
]

_MAX_VALUE_CHARS = 4_000
_MAX_TRANSCRIPT_CHARS = 60_000


@dataclass(frozen=True)
class UserWords:
    """What the user said in one trial, in order.

    `before` holds the messages given before the first turn (a case whose `input` is a list of
    messages: all but its last user message), as `(role, content)`; `turns` one user message
    per turn, as played. `simulated`: the turns come from the trial's simulated conversation.
    """

    before: tuple[tuple[str, str], ...]
    turns: tuple[str, ...]
    simulated: bool = False
    single: bool = False
    """The case's one text `input`, played alone: its text is the input itself."""

    @property
    def text(self) -> str:
        """As one text for a judge's prompt: the one input as it is; else a line per message,
        `role: content` (the user's turns as `user: ...`)."""
        if self.single:
            return self.turns[0]
        lines = [f"{role}: {content}" for role, content in self.before]
        lines.extend(f"user: {turn}" for turn in self.turns)
        return "\n".join(lines)


def user_words(case: EvalCase, trial: Trial | None = None) -> UserWords:
    """What the user said in `trial` of `case`: the trial's simulated conversation when it holds
    one (every user message as played, written and simulated), else the case's written words
    (`EvalCase.written_opening`: its `conversation`'s turns, or its `input`)."""
    opening, written = case.written_opening()
    before = tuple((message.role, message.content) for message in opening)
    if trial is not None and trial.simulation is not None:
        said = tuple(turn.user for turn in trial.simulation.turns)
        return UserWords(before, said, simulated=True)
    if isinstance(case.input, str) and not case.conversation:
        return UserWords((), (case.input,), single=True)
    return UserWords(before, tuple(written))


def case_question(case: EvalCase, trial: Trial | None = None, *, upto: int | None = None) -> str:
    """What the user asked, as one text (`UserWords.text`): the question, or the conversation's
    user messages, as played in `trial` when it holds a simulated conversation.

    `upto`: the judged turn's number of user messages (its index + 1). A simulated
    conversation is cut there: the user's later messages answer questions the agent had not
    asked yet when it gave the judged answer. (A written conversation keeps every turn, as its
    judge prompts always have.)"""
    words = user_words(case, trial)
    if upto is not None and words.simulated and upto < len(words.turns):
        words = UserWords(words.before, words.turns[:upto], simulated=True)
    return words.text


@dataclass(frozen=True)
class Turn:
    """One user turn and what the agent did in it."""

    index: int
    """From 0."""
    user: str
    tool_calls: tuple[ToolCall, ...]
    answer: str | None
    failure: str | None = None
    """How the agent failed in this turn (its last turn only), when it did."""
    source: str | None = None
    """Who wrote the user's message in a simulated conversation (`written`, `simulated`,
    `scripted`: `trace.UserTurn.source`); None for a written case."""


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else masked_json(value, sort_keys=True)
    if len(text) > _MAX_VALUE_CHARS:
        return text[:_MAX_VALUE_CHARS] + " …[cut]"
    return text


def turns_of(case: EvalCase, trial: Trial) -> list[Turn]:
    """The turns the trial played: each user message (`user_words`) with the trial's step for
    it (a trial that stopped early has fewer), else the case's one question with the whole
    trial. A conversation's messages before its first turn go with the first turn."""
    failure = (
        f"{trial.failure.cause.value}: {trial.failure.message}".rstrip(": ")
        if trial.failure is not None
        else None
    )
    words = user_words(case, trial)
    by_turn = words.simulated or bool(case.conversation)
    users = list(words.turns) if by_turn else [words.text]
    if by_turn and words.before and users:
        users[0] = UserWords(words.before, (users[0],)).text
    played = trial.simulation.turns if trial.simulation is not None else []
    outputs = trial.metadata.get("turn_outputs")
    if by_turn and trial.steps and len(trial.steps) <= len(users):
        steps: list[AgentStep] = list(trial.steps)
    elif words.simulated and played and len(played) == len(users):
        # No step per turn (an agent that failed mid-conversation records none), but the
        # simulated conversation kept each answer: a turn per user message, as played, the
        # trial's tool calls with its last turn (which turn made them is not known).
        steps = [AgentStep() for _ in played[:-1]]
        steps.append(AgentStep(tool_calls=list(trial.tool_calls), output=trial.output))
    else:
        steps = [AgentStep(tool_calls=list(trial.tool_calls), output=trial.output)]
        users = ["\n".join(users)] if len(users) > 1 else users
        played = []  # one turn for the whole trial: no user message of its own
    turns: list[Turn] = []
    for index, step in enumerate(steps):
        answer = step.output
        if isinstance(outputs, list) and len(outputs) == len(steps):
            answer = outputs[index] if isinstance(outputs[index], str) else answer
        if index < len(played) and played[index].agent is not None:
            answer = played[index].agent
        last = index == len(steps) - 1
        turns.append(
            Turn(
                index=index,
                user=users[index] if index < len(users) else "",
                tool_calls=tuple(step.tool_calls),
                answer=answer if not last else (answer or trial.output),
                failure=failure if last else None,
                source=played[index].source if index < len(played) else None,
            )
        )
    return turns


def tool_lines(calls: tuple[ToolCall, ...], tag: str = "") -> list[str]:
    """Each call and what it returned or raised: `AGENT{tag} (tool call): name({...})`, then
    `AGENT{tag} (tool output): name -> ...` or `AGENT{tag} (tool error): name raised ...`."""
    lines: list[str] = []
    for call in calls:
        lines.append(f"AGENT{tag} (tool call): {call.name}({_text(call.arguments)})")
        if call.error is not None:
            lines.append(f"AGENT{tag} (tool error): {call.name} raised {_text(call.error)}")
        elif call.result is not None:
            lines.append(f"AGENT{tag} (tool output): {call.name} -> {_text(call.result)}")
        else:
            lines.append(f"AGENT{tag} (tool output): {call.name} -> (no result recorded)")
    return lines


def turn_text(turn: Turn, *, numbered: bool = True) -> str:
    """One turn as lines: `USER TURN n: ...`, `AGENT TURN n (tool call): name({...})`,
    `AGENT TURN n (tool output): name -> ...`, `AGENT TURN n: answer`."""
    tag = f" TURN {turn.index + 1}" if numbered else ""
    lines = [f"USER{tag}: {turn.user}", *tool_lines(turn.tool_calls, tag)]
    if turn.answer:
        lines.append(f"AGENT{tag}: {turn.answer}")
    if turn.failure is not None:
        lines.append(f"AGENT{tag} (failed): {turn.failure}")
    elif not turn.answer:
        lines.append(f"AGENT{tag}: (no answer)")
    return "\n".join(lines)


def transcript(turns: list[Turn], visits: list[str] | None = None) -> str:
    """Every turn, in order, numbered; a transcript past 60,000 characters keeps its last turns
    whole and says how many earlier turns were left out. `visits`: the agents (graph nodes)
    that took part, in order, said in a last line (ADK names each event's author)."""
    parts = [turn_text(turn) for turn in turns]
    kept: list[str] = []
    size = 0
    for part in reversed(parts):
        if kept and size + len(part) > _MAX_TRANSCRIPT_CHARS:
            break
        kept.append(part)
        size += len(part)
    left = len(parts) - len(kept)
    head = [f"(the first {left} turns are left out: the conversation is too long)"] if left else []
    tail = [f"(the agents that took part, in order: {' -> '.join(visits)})"] if visits else []
    return "\n\n".join([*head, *reversed(kept), *tail])
