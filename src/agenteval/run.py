"""A run as a user holds it: `Run`, a handle over a stored run's records, summary and reports.

The records themselves (`RunInfo`, `TrialResult`, ...) are pure data in `agenteval.records`; this
module re-exports them under their documented import path, `agenteval.run`.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.records import (
    PYTEST_TARGET,
    PYTHON_TARGET,
    MissingTrials,
    RunInfo,
    RunStatus,
    TrialResult,
    how_to_complete,
    new_run_id,
    pytest_test_of,
)

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
