"""A run: its settings, its cases, and for every (case, trial) the trial and its scores."""

from __future__ import annotations

import secrets
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenteval.agents.tools import ToolSpec
from agenteval.case import EvalCase
from agenteval.score import Score
from agenteval.trace import Trial, utc_now

__all__ = ["RunInfo", "RunStatus", "TrialResult", "new_run_id"]


def new_run_id(now: datetime | None = None) -> str:
    """A run id that sorts by time and is short enough to type: `20261130-073915-a1b2`."""
    moment = now or utc_now()
    return f"{moment:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


class RunStatus(StrEnum):
    """Where a run stands."""

    RUNNING = "running"
    """Started and not finished: it was interrupted, or is still going."""
    FINISHED = "finished"
    """Every (case, trial) pair has a result."""


class RunInfo(BaseModel):
    """What a run was asked to do: everything needed to resume or rescore it."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(default_factory=new_run_id)
    created_at: datetime = Field(default_factory=utc_now)
    finished_at: datetime | None = None
    status: RunStatus = RunStatus.RUNNING
    target: str | None = None
    """What the run was started on (a config, folder or dataset path), to find it for `--resume`."""
    agent: str | None = None
    """The agent reference (`module:function`), when the run was started from one."""
    dataset: str | None = None
    trials: int = 1
    concurrency: int = 1
    timeout_s: float | None = None
    max_retries: int = 0
    scorers: list[str] = Field(default_factory=list)
    """The scorers' references, as given (built-in names and `module:function` references)."""
    builtins: bool = True
    tools: dict[str, ToolSpec] = Field(default_factory=dict)
    """The tools the agent declared, by name, with the JSON schemas their calls are checked
    against."""
    settings: dict[str, Any] = Field(default_factory=dict)


class TrialResult(BaseModel):
    """One (case, trial) pair: the case, what the agent did, and every score it got."""

    model_config = ConfigDict(extra="forbid")

    case: EvalCase
    trial: Trial
    scores: dict[str, Score] = Field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int]:
        """The pair's identity within its run: (case id, trial index)."""
        return (self.case.id, self.trial.trial)
