"""What a run gives the scorers that ask for it (`ScoringContext`).

A scorer with a `for_run(context)` method (the criteria, the agent evaluators, the ADK tie
criteria) is bound to the run before it scores: the run applies what that method returns. The
built-in scorers that need the run's tools or judge get them as fields instead (see
`agenteval.catalog`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agenteval.trace import ToolSpec

if TYPE_CHECKING:
    from agenteval.judge.judge import Judge

__all__ = ["ScoringContext"]


@dataclass(frozen=True)
class ScoringContext:
    """What scorers may need from the run: its tools, and its judge (or why it has none)."""

    tools: Mapping[str, ToolSpec] = field(default_factory=dict)
    judge: Judge | None = None
    judge_problem: str | None = None
    base_dir: Path | None = None
