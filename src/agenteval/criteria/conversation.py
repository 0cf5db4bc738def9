"""A trial as the judge reads it, turn by turn: what the user said, each tool the agent called
(with its arguments and what it returned or raised), and what the agent answered; and the tools
the agent was offered. For the criteria that judge a whole conversation or one turn's tool use
(`criteria.multi_turn`, `criteria.tool_use`), the inputs ADK's evaluators of the same names read.

Values under secret-named keys are masked while still data (`redaction.masked_json`); a result
is kept to 4,000 characters and a transcript to 60,000 (a cut says so). The judge's own
redaction of the text it sends applies on top.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agenteval.case import EvalCase
from agenteval.judge.rubrics import case_question
from agenteval.redaction import masked_json
from agenteval.scorers.tools.schemas import known_tools
from agenteval.trace import AgentStep, ToolCall, ToolSpec, Trial

__all__ = ["Turn", "tool_declarations", "tool_lines", "transcript", "turn_text", "turns_of"]

_MAX_VALUE_CHARS = 4_000
_MAX_TRANSCRIPT_CHARS = 60_000


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


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else masked_json(value, sort_keys=True)
    if len(text) > _MAX_VALUE_CHARS:
        return text[:_MAX_VALUE_CHARS] + " …[cut]"
    return text


def turns_of(case: EvalCase, trial: Trial) -> list[Turn]:
    """The turns the trial played: a conversation's user turns with the trial's step for each
    (a trial that stopped early has fewer), else the case's one question with the whole trial."""
    failure = (
        f"{trial.failure.cause.value}: {trial.failure.message}".rstrip(": ")
        if trial.failure is not None
        else None
    )
    users = list(case.turns) if case.conversation else [case_question(case)]
    outputs = trial.metadata.get("turn_outputs")
    if case.conversation and trial.steps and len(trial.steps) <= len(users):
        steps: list[AgentStep] = list(trial.steps)
    else:
        steps = [AgentStep(tool_calls=list(trial.tool_calls), output=trial.output)]
        users = ["\n".join(users)] if len(users) > 1 else users
    turns: list[Turn] = []
    for index, step in enumerate(steps):
        answer = step.output
        if isinstance(outputs, list) and len(outputs) == len(steps):
            answer = outputs[index] if isinstance(outputs[index], str) else answer
        last = index == len(steps) - 1
        turns.append(
            Turn(
                index=index,
                user=users[index] if index < len(users) else "",
                tool_calls=tuple(step.tool_calls),
                answer=answer if not last else (answer or trial.output),
                failure=failure if last else None,
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


def tool_declarations(run_tools: Mapping[str, ToolSpec] | None, trial: Trial) -> str:
    """The tools the agent was offered, one a line with its description and parameters; a
    line saying so when none is known."""
    tools = known_tools(run_tools, trial)
    if not tools:
        return "(the tools the agent was offered are not known)"
    lines = []
    for name, spec in sorted(tools.items()):
        described = f": {spec.description}" if spec.description else ""
        params = f" parameters {_text(spec.parameters)}" if spec.parameters else ""
        lines.append(f"- {name}{described}{params}")
    return "\n".join(lines)
