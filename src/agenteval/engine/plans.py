"""What a plan is, and the steps every planner shares: `RunPlan` (what `engine.evaluate.execute`
runs), the store a run is planned in, the judge it uses, its scorers resolved and announced.
The planners are `engine/planning.py` (new, recorded, resumed runs, a pytest case) and
`engine/rescoring.py` (a stored run scored again, or judged)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from agenteval.agents.calling import Agent
from agenteval.case import EvalCase
from agenteval.catalog import ResolvedScorers, resolve_run_scorers
from agenteval.engine.options import RunOptions
from agenteval.engine.scheduler import EngineSettings
from agenteval.errors import ConfigError
from agenteval.judge.rubrics import NO_JUDGE, JudgeRubric
from agenteval.records import RunInfo
from agenteval.report.summary import SummaryBuilder
from agenteval.scorers.base import unrenamed
from agenteval.scorers.context import ScoringContext
from agenteval.store import RunStore
from agenteval.trace import ToolSpec, Trial

if TYPE_CHECKING:
    from agenteval.judge.choice import JudgeChoice

__all__ = [
    "PlanKind",
    "RunPlan",
    "Warn",
    "announce_scoring",
    "logger",
    "open_store",
    "planned",
    "resolve_scorers",
    "run_judge_choice",
]

logger = logging.getLogger("agenteval")

Warn = Callable[[str], None]
PlanKind = Literal["new", "recorded", "resume", "rescore", "judge", "case"]
T = TypeVar("T")


@dataclass
class RunPlan:
    """A run ready to execute: what runs, what scores it, and what is done already."""

    kind: PlanKind
    info: RunInfo
    """The run: as it will be stored (new), as stored (resumed), or as it is stored once
    scored again (rescore, judge)."""
    scorers: list[Any]
    """The run's scorers, resolved, each under its name in the run."""
    judge: JudgeChoice
    """The run's judge (or why there is none); `execute` closes it."""
    summary: SummaryBuilder
    """The run's summary, holding the stored results of a resumed run already."""
    store: Path
    """Where the run is stored."""
    settings: EngineSettings = field(default_factory=EngineSettings)
    agent: Agent | None = None
    cases: Iterable[EvalCase] | None = None
    """The cases to run; None: the run's own, read back from the store."""
    case_count: int = 0
    done: set[tuple[str, int]] = field(default_factory=set)
    """The (case id, trial) pairs the store holds already: not run again."""
    first_write: Callable[[], Any] | None = None
    """Stores the run and its cases with the first trials written (a list of cases given)."""
    recorded: Mapping[tuple[str, int], Trial] | None = None
    """Trials recorded elsewhere, by (case id, trial index), scored as they are."""
    tools: Mapping[str, ToolSpec] | None = None
    """The tools the run records when it ends; None: every tool known by then."""


def open_store(options: RunOptions) -> RunStore:
    """The run store a new or resumed run is planned and executed in, open (use it in a
    `with`); a damaged store is refused before anything starts (the first write would refuse
    it)."""
    store = RunStore(options.store)
    try:
        store.check_undamaged()
    except BaseException:
        store.close()
        raise
    return store


async def planned(choice: JudgeChoice, make: Callable[[], T]) -> T:
    """`make()`, closing the judge when the plan cannot be made."""
    try:
        return make()
    except BaseException:
        await choice.aclose()
        raise


def run_judge_choice(options: RunOptions, stored: Mapping[str, Any] | None = None) -> JudgeChoice:
    """The run's judge: `options.judge`, else the one a stored run names (`stored`), else
    `AGENTEVAL_JUDGE`; none asked for is no judge (its rubrics give no score, with one warning).

    A judge asked for that cannot run here (no API key, its SDK extra missing) is a
    `ConfigError` naming what to set, before anything runs or is stored, as `agenteval run
    --judge` and the pytest plugin refuse it: its rubrics would give no score on every trial,
    and a rescore would replace the stored verdicts with none."""
    from agenteval.judge.choice import choose_judge, config_from_stored

    judge = options.judge
    from_store = judge is None and stored is not None
    if judge is None and stored is not None:
        judge = config_from_stored(stored)
    choice = choose_judge(judge, use_cache=options.use_cache, prices=options.prices)
    if choice.problem is None:
        return choice
    raise ConfigError(
        choice.problem,
        field="judge",
        hint="nothing was changed: without its judge the run's rubrics would give no score (a "
        "rescore would replace its verdicts with none); set what it names, or pass judge= to "
        "judge it with another"
        if from_store
        else "nothing was run or stored; set what it names, or run without a judge (no "
        "judge=, no AGENTEVAL_JUDGE)",
    )


def resolve_scorers(
    refs: Sequence[Any],
    choice: JudgeChoice,
    *,
    builtins: bool,
    tools: Mapping[str, ToolSpec],
    base_dir: Path | None = None,
    stored: Mapping[str, Any] | None = None,
) -> ResolvedScorers:
    context = ScoringContext(
        tools=tools, judge=choice.judge, judge_problem=choice.problem, base_dir=base_dir
    )
    return resolve_run_scorers(refs, builtins=builtins, context=context, stored=stored)


def announce_scoring(
    resolution: ResolvedScorers, choice: JudgeChoice, warn: Warn, *, renamed: bool = True
) -> None:
    """The scorers renamed; then one warning up front when judge scorers will give no score."""
    for note in resolution.renamed if renamed else ():
        warn(note)
    rubrics = [s.name for s in resolution.scorers if isinstance(unrenamed(s), JudgeRubric)]
    if not rubrics:
        return
    if choice.problem is not None:
        warn(f"{choice.problem}; {', '.join(rubrics)} will give no score")
    elif choice.judge is None:
        warn(f"{NO_JUDGE}; {', '.join(rubrics)} will give no score")
