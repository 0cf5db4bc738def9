"""A trial as the judge reads it, turn by turn: what the user said, each tool the agent called
(with its arguments and what it returned or raised), and what the agent answered; and the tools
the agent was offered. For the criteria that judge a whole conversation or one turn's tool use
(`criteria.multi_turn`, `criteria.tool_use`), the inputs ADK's evaluators of the same names read.

The turns are `judge.played`'s (`turns_of`: a simulated conversation's user messages as played,
a written case's as written), shared with the judge rubrics and the agent evaluators; the tools
offered are read here, as the scorers know them (`scorers.tools.schemas.known_tools`). Values
under secret-named keys are masked while still data (`redaction.masked_json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval.judge.played import Turn, tool_lines, transcript, turn_text, turns_of
from agenteval.redaction import masked_json
from agenteval.scorers.tools.schemas import known_tools
from agenteval.trace import ToolSpec, Trial

__all__ = ["Turn", "tool_declarations", "tool_lines", "transcript", "turn_text", "turns_of"]

_MAX_VALUE_CHARS = 4_000


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else masked_json(value, sort_keys=True)
    if len(text) > _MAX_VALUE_CHARS:
        return text[:_MAX_VALUE_CHARS] + " …[cut]"
    return text


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
