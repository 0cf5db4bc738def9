"""A run: its settings, its cases, and for every (case, trial) the trial and its scores."""

from __future__ import annotations

import io
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agenteval.case import EvalCase
from agenteval.score import Score
from agenteval.trace import ToolSpec, Trial, utc_now

if TYPE_CHECKING:
    from rich.console import Console

    from agenteval.pricing import PriceTable
    from agenteval.report.summary import Summary

__all__ = [
    "PYTEST_TARGET",
    "PYTHON_TARGET",
    "MissingTrials",
    "Run",
    "RunInfo",
    "RunStatus",
    "TrialResult",
    "how_to_complete",
    "new_run_id",
    "pytest_test_of",
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
        for case_id, trial in self.examples:
            by_case.setdefault(case_id, []).append(trial)
        named = ", ".join(
            f"case {case_id!r} trial{'s' if len(trials) > 1 else ''} " + ", ".join(map(str, trials))
            for case_id, trials in by_case.items()
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


class Run:
    """A finished (or resumed) run: its settings, summary, and results in the store.

    `run.run_id` names it in the store (`agenteval show RUN_ID`); `print(run)` or
    `run.print_summary()` prints its summary as `agenteval run` does; `run.to_html(path)` writes
    its report; `run.to_json()` is the document `--json` writes. `results` loads every (case,
    trial) result from the store on first use; `iter_results` streams them for runs too large
    to hold in memory.

    The reports are imported inside the methods that use them: the model knows nothing of the
    layers above it.
    """

    def __init__(
        self,
        info: RunInfo,
        summary: Summary,
        store_path: Path,
        missing: MissingTrials | None = None,
    ) -> None:
        self.info = info
        self.summary = summary
        self.store_path = store_path
        self.missing = missing
        """The pairs with no stored result when the run ended (None: not counted)."""
        self._results: list[TrialResult] | None = None

    @property
    def complete(self) -> bool:
        """Whether every (case, trial) pair has a stored result, so the run is finished; an
        incomplete run stays resumable and its summary covers only the stored trials."""
        if self.missing is not None:
            return self.missing.count == 0
        return self.info.status is RunStatus.FINISHED

    @property
    def run_id(self) -> str:
        """The run's id in the store, e.g. `20261130-073915-a1b2`: what `agenteval show`,
        `report`, `compare`, `rescore` and `judge` take (or any unique prefix of it)."""
        return self.info.run_id

    def iter_results(self) -> Iterator[TrialResult]:
        """Every result, in case order then trial order, streamed from the store."""
        from agenteval.store import RunStore

        with RunStore(self.store_path, create=False) as store:
            yield from store.iter_results(self.run_id)

    @property
    def results(self) -> list[TrialResult]:
        """Every result: `.case`, `.trial` and `.scores` (name → Score) for each (case, trial)."""
        if self._results is None:
            self._results = list(self.iter_results())
        return self._results

    def print_summary(self, console: Console | None = None) -> None:
        """Print the run's summary as `agenteval run` and `agenteval show` print it (to the
        terminal, in colour when it is one; or to the rich `console` given)."""
        from agenteval.report.terminal import print_summary

        print_summary(self.summary, self.info, console)

    def to_html(self, path: str | Path, *, prices: PriceTable | None = None) -> Path:
        """Write the run's report as one self-contained HTML page (as `agenteval report RUN_ID
        --html FILE` does), making its folder if needed; the path written. `prices` prices each
        trial's model calls (default: the shipped price table)."""
        from agenteval.report.html import write_html

        target = Path(path)
        write_html(
            target,
            self.info,
            self.summary,
            self.iter_results(),
            prices=prices,
            missing=self.missing,
        )
        return target

    def __str__(self) -> str:
        """The summary as plain text, no colour: `print(run)`."""
        from rich.console import Console

        text = io.StringIO()
        self.print_summary(Console(file=text, color_system=None, force_terminal=False))
        return text.getvalue()

    def to_json(self) -> dict[str, Any]:
        """The run as the document `--json` writes (schema `agenteval.run/1`)."""
        from agenteval.report.json_document import run_document

        return run_document(self.info, self.summary, self.iter_results(), self.missing)

    def __repr__(self) -> str:
        missing = (
            ""
            if self.complete
            else f", incomplete: {self.missing.describe() if self.missing else 'not finished'}"
        )
        return f"Run({self.run_id!r}, trials={self.summary.trials}, failed={self.summary.failed_trials}{missing})"
