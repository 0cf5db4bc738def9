"""Scoring recorded traces with no agent at all (`agenteval score`): read them, match them to
cases, and score them as a stored run like any other."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from agenteval.case import EvalCase
from agenteval.datasets import load_cases
from agenteval.engine.evaluate import run_planned
from agenteval.engine.options import DEFAULT_CONCURRENCY, RunOptions
from agenteval.engine.planning import plan_recorded
from agenteval.engine.sync import sync_form
from agenteval.errors import ConfigError
from agenteval.records import RunInfo, TrialResult
from agenteval.run import Run
from agenteval.scorers.base import ScorerLike
from agenteval.store import DEFAULT_STORE_PATH

from .convert import CASE_ID_ATTRIBUTE
from .matching import match_trials
from .reading import read_recorded

if TYPE_CHECKING:
    from agenteval.judge.judge import Judge, JudgeConfig
    from agenteval.pricing import PriceTable

__all__ = ["score_traces", "score_traces_async"]

logger = logging.getLogger("agenteval")


async def score_traces_async(
    traces: str | Path,
    cases: Sequence[EvalCase] | str | Path,
    scorers: Sequence[ScorerLike] = (),
    *,
    match_attribute: str = CASE_ID_ATTRIBUTE,
    match_by_order: bool = False,
    builtins: bool = True,
    store: str | Path = DEFAULT_STORE_PATH,
    judge: Judge | JudgeConfig | str | None = None,
    rubrics: Sequence[str] | None = None,
    use_cache: bool = True,
    prices: PriceTable | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    base_dir: Path | None = None,
    on_start: Callable[[RunInfo, int, int], None] | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
    on_warning: Callable[[str], None] = logger.warning,
    otlp_endpoint: str | None = None,
) -> Run:
    """The async form of `score_traces` (see there)."""
    options = RunOptions(
        otlp_endpoint=otlp_endpoint,
        concurrency=concurrency,
        builtins=builtins,
        store=Path(store),
        judge=judge,
        rubrics=rubrics,
        use_cache=use_cache,
        prices=prices,
        base_dir=base_dir,
    )
    if not match_attribute.strip():
        raise ConfigError("the match attribute is empty", field="--match-attribute")
    case_list = load_cases(cases) if isinstance(cases, str | Path) else list(cases)
    if not case_list:
        raise ConfigError("no cases to score against", field="cases", hint="give at least one case")
    recorded = read_recorded(traces, match_attribute)
    matched = match_trials(
        recorded,
        case_list,
        attribute=match_attribute,
        source=str(traces),
        by_order=match_by_order,
    )
    for note in matched.notes:
        on_warning(note)
    options = replace(options, trials=matched.trials_per_case, tools=matched.tools)
    planner = functools.partial(
        plan_recorded,
        recorded=matched.trials,
        cases=matched.cases,
        scorers=scorers,
        options=options,
        target=str(traces),
        on_warning=on_warning,
        settings_extra={"matching": matched.settings()},
    )
    return await run_planned(
        options, planner, on_start=on_start, on_result=on_result, on_warning=on_warning
    )


score_traces = sync_form(
    score_traces_async,
    doc="""Score recorded traces with no agent: OTLP JSON (as the OpenTelemetry Collector's
    file exporter writes it) or agenteval trial JSONL, a file or a folder of them.

    Each trace is matched to its case by `match_attribute` on its root span (a trial line by
    its `case_id`); several traces of a case are its trials. When no trace names its case, it
    is a `DatasetError` saying what was found and the fix, unless `match_by_order=True`: then
    trace i answers case i (the file holds one trace per trial, in case order), with a warning,
    and the run's settings record it (`info.settings["matching"]["by"] == "order"`). The result
    is a stored run like any other: reports, compare and gate work on it.

    `cases` is a list of `EvalCase` or a case file's path; `scorers`, `builtins`, `store`,
    `judge`, `rubrics`, `use_cache`, `prices` and `concurrency` are `agenteval.evaluate`'s
    (the trials per case are the traces per case); `base_dir`, `on_start`, `on_result` and
    `on_warning` serve the CLI, as `evaluate`'s do; `otlp_endpoint` also sends each score
    there, parented to its trace's root span (as `evaluate` does). `score_traces_async` is
    the same, to await.
    """,
    instead="`await score_traces_async(...)`",
)
