"""The records of a run, pure data: what it was asked to do (`RunInfo`), where it stands
(`RunStatus`), each (case, trial) result (`TrialResult`) and the pairs with none (`MissingTrials`).

The store writes and reads them, the reports render them, and `agenteval.run.Run` is the handle a
user gets over them; they know nothing of any of those."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenteval.case import EvalCase
from agenteval.prebuilt import prebuilt
from agenteval.score import Score
from agenteval.trace import ToolSpec, Trial, utc_now

__all__ = [
    "PYTEST_TARGET",
    "PYTHON_TARGET",
    "MissingTrials",
    "RunInfo",
    "RunStatus",
    "TrialResult",
    "how_to_complete",
    "new_run_id",
    "pytest_test_of",
    "shown_status",
    "trial_result",
]

PYTEST_TARGET = "pytest:"
"""How the target of a run the pytest plugin made begins: `pytest:tests/test_x.py::test_y`."""

PYTHON_TARGET = "python:"
"""How the target of a run made from Python (`agenteval.evaluate`) begins: `python:answer`."""


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
    PARTIAL = "partial"
    """Ended with only some of its (case, trial) pairs stored, and nothing more coming: a
    pytest session that selected some of a test's cases (`-k`, `--lf`), stopped early (`-x`,
    Ctrl-C), or whose store lost trials. Never resumed (the next session is a new run); never
    complete, so a gate refuses it."""


def shown_status(status: RunStatus, complete: bool, *, owner_gone: bool = False) -> str:
    """Where a run stands, as `--json`, `agenteval runs`, the HTML report and the viewer say it,
    from its stored status, whether every (case, trial) is stored (`complete`) and whether the
    process it records as its owner is known to be gone (`owners.owner_gone`):

    - `finished`: marked finished, every trial stored;
    - `incomplete`: marked finished with trials missing (as an older agenteval could mark one);
    - `interrupted`: trials missing, not marked finished, and its process gone from this
      machine (killed, say): nothing more is coming until it is resumed;
    - `running`: trials missing and not marked finished, its process alive or not known to be
      gone (another machine's, or recorded by an older agenteval);
    - `stopped`: every trial stored and never marked finished: its process stopped after
      storing the last trial (killed, say), or is finishing this instant. Nothing is missing,
      but it did not finish: a resume marks it finished without running a trial;
    - `partial`: a pytest session's run of only some of its cases.
    """
    if status is RunStatus.FINISHED and not complete:
        return "incomplete"
    if status is RunStatus.RUNNING and complete:
        return "stopped"
    if status is RunStatus.RUNNING and owner_gone:
        return "interrupted"
    return status.value


def pytest_test_of(target: str | None) -> str | None:
    """The pytest test (`tests/test_x.py::test_support`, relative to pytest's rootdir) whose
    session made the run with this target; None for a run of any other kind."""
    if target is None or not target.startswith(PYTEST_TARGET):
        return None
    return target.removeprefix(PYTEST_TARGET)


def how_to_complete(target: str | None, run_id: str) -> str:
    """What runs a run's missing trials, as a hint says it: `agenteval run TARGET --resume ID`;
    for a pytest session's run, which nothing resumes, the test again (a new run); for a run
    made from Python, `evaluate(..., resume=ID)`."""
    test = pytest_test_of(target)
    if test is not None:
        return f"`pytest {test}` runs every case again, as a new run"
    if target is not None and target.startswith(PYTHON_TARGET):
        # A run made from Python has no command-line target to resume it on.
        return f'`agenteval.evaluate(agent, cases, resume="{run_id}")` runs the missing trials'
    return f"`agenteval run {target or 'TARGET'} --resume {run_id}` runs the missing trials"


@dataclass(frozen=True, slots=True)
class MissingTrials:
    """How many of the (case, trial) pairs a run was asked for have no stored result, and a few
    of them by name (`RunStore.missing_trials`).

    A run is finished only when none is missing; `show`, `report`, `compare` and `gate` read
    this rather than the stored status, which a store written by an older agenteval may have
    set with trials lost.
    """

    run_id: str
    expected: int
    """The pairs the run was asked for: its cases × its trials per case (for recorded traces,
    the trials that were recorded)."""
    stored: int
    """The pairs with a stored trial."""
    examples: tuple[tuple[str, int], ...] = ()
    """A few missing pairs, (case id, trial index), in case order."""

    @property
    def count(self) -> int:
        """How many pairs have no stored result."""
        return max(self.expected - self.stored, 0)

    def describe(self) -> str:
        """`2 of 10 trials have no stored result (case 'a' trial 0, case 'b' trial 1)`."""
        text = f"{self.count} of {self.expected} trials have no stored result"
        if not self.examples:
            return text
        by_case: dict[str, list[int]] = {}
        for case_id, trial_index in self.examples:
            by_case.setdefault(case_id, []).append(trial_index)
        named = ", ".join(
            f"case {case_id!r} trial{'s' if len(indexes) > 1 else ''} "
            + ", ".join(map(str, indexes))
            for case_id, indexes in by_case.items()
        )
        more = self.count - len(self.examples)
        return f"{text} ({named}{f' and {more} more' if more > 0 else ''})"


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
    scorers: list[str | dict[str, Any]] = Field(default_factory=list)
    """The scorers added to the built-ins, as references a rescore loads again: built-in
    names, `module:function`, and built-ins with settings (`{"name": ..., setting: value}`)."""
    builtins: bool = True
    tools: dict[str, ToolSpec] = Field(default_factory=dict)
    """The tools the agent declared, by name, with the JSON schemas their calls are checked
    against."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """The run's stored settings beyond the fields above: its judge (`"judge"`, what
    `JudgeChoice.stored()` keeps), where each scorer's scores came from (`"scorer_refs"`), ...
    Not the options a run is started with, nor a scorer's own settings."""


class TrialResult(BaseModel):
    """One (case, trial) pair: the case, what the agent did (`trial`, the `Trial` record; its
    index is `trial.trial`), and every score it got."""

    model_config = ConfigDict(extra="forbid")

    case: EvalCase
    trial: Trial
    scores: dict[str, Score] = Field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int]:
        """The pair's identity within its run: (case id, trial index)."""
        return (self.case.id, self.trial.trial)


def trial_result(case: EvalCase, trial: Trial, scores: dict[str, Score]) -> TrialResult:
    """`TrialResult(case=case, trial=trial, scores=scores)`, built without validating what is
    valid already: a case and a trial of their classes, a dict of scores by str name (copied,
    as validation copies it). Anything else is validated, and fails as it did.

    Why: the engine makes one a trial, and validating it was 4.6 us of bench W1's ~85 us a
    trial; this takes 0.9 (the same instance as validation leaves: its fields, the names given,
    no extra or private attributes; tests/engine/test_trial_result.py compares them)."""
    # `type(...) is` first: pydantic's classes are ABCs, whose isinstance is the slow part.
    if (
        (type(case) is EvalCase or isinstance(case, EvalCase))
        and (type(trial) is Trial or isinstance(trial, Trial))
        and type(scores) is dict
    ):
        for name, score in scores.items():
            if type(name) is not str or not (type(score) is Score or isinstance(score, Score)):
                break
        else:
            fields = {"case": case, "trial": trial, "scores": scores.copy()}
            return prebuilt(TrialResult, fields, {"case", "trial", "scores"})
    return TrialResult(case=case, trial=trial, scores=scores)
