"""Scoring stored trials again, without the agent (planned by `plan_rescore` and
`plan_judging`, below): each stored trial is read once, scored, and
only the scores that changed are written back, in batches; the run's summary is built in the
same pass.

Scorers that give their score at once (the built-ins, any sync scorer of agenteval's own) score
trial after trial with no task per trial; with an async scorer among them (the judge), up to
`concurrency` trials are scored at once, and their results are still taken in stored order.
A run of `POOL_FROM` stored trials or more, scored by built-ins only, is spread over worker
processes by ranges of whole cases (`rescore_pool`), with the same rows written and the same
summary.

**A rescore never turns the live verdict into one the real values would not give.** It reads
the stored values, where secrets are masked (`sk-proj-[REDACTED]` for any key of that shape), so
a scorer comparing text that holds the mark gives no score marked undecidable
(`scorers.redacted`); the rescore then keeps that scorer's stored score (the live verdict, made
from the real values), with a note in its details saying why, rather than write a new one. A
scorer the trial has no stored score of keeps its no-score, which says why. Trials with no
masked text are rescored as before: the only added work is a counter read per trial.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any

from agenteval.catalog import SCORER_REFS, scorer_reference
from agenteval.engine.options import RunOptions
from agenteval.engine.plans import (
    RunPlan,
    Warn,
    announce_scoring,
    logger,
    planned,
    resolve_scorers,
    run_judge_choice,
)
from agenteval.engine.scheduler import EngineSettings
from agenteval.engine.stored_trials import Keeper, as_stored
from agenteval.errors import ConfigError
from agenteval.judge.rubrics import RUBRICS, JudgeRubric
from agenteval.records import TrialResult
from agenteval.report.summary import SummaryBuilder
from agenteval.score import Score
from agenteval.scorers.base import PreparedScorer, prepare_scorers, scorer_name, unrenamed
from agenteval.scorers.redacted import StoreScoring, scoring_from_store
from agenteval.store import RunStore, StoredTrial
from agenteval.store.scores import ScoreRow

__all__ = ["plan_judging", "plan_rescore", "score_stored"]

_WRITE_BATCH = 1_000

POOL_FROM = 20_000
"""The fewest stored trials a rescore spreads over worker processes: below, starting the
pool (~0.5 s) costs more than the second core gains."""

RANGE_TRIALS = 2_000
"""About how many trials a worker scores at a time (one range of whole cases)."""

_TAIL_SPLIT = 4
"""The run's last `workers * RANGE_TRIALS` trials go in ranges this many times smaller."""

_Scored = tuple[StoredTrial, dict[str, Score]]


async def score_stored(
    store: RunStore,
    run_id: str,
    scorers: Sequence[Any],
    *,
    concurrency: int,
    merge: bool,
    on_result: Callable[[TrialResult], None] | None = None,
    summary: SummaryBuilder | None = None,
) -> None:
    """Score every stored trial of the run with `scorers`.

    With `merge`, the new scores are added to (or replace, by name) the stored ones; without,
    they replace the trial's whole score set. `on_result` gets each trial with its new scores;
    `summary` gets each trial with its scores as stored afterwards, in stored order.

    A large run scored by built-ins only, merged and with no `on_result`, is scored in worker
    processes (`rescore_pool`: the same rows written, the same summary).
    """
    prepared = prepare_scorers(scorers)
    if merge and on_result is None and all(p.synchronous for p in prepared):
        ranges = store.stored_ranges(run_id, max(1, RANGE_TRIALS // _TAIL_SPLIT))
        if sum(trials for _first, _last, trials in ranges) >= POOL_FROM:
            # pebble and a forkserver: loaded only for a run large enough to use them
            from agenteval.engine import rescore_pool

            workers = rescore_pool.pool_workers()
            if workers > 1 and rescore_pool.poolable(scorers, prepared):
                try:
                    await rescore_pool.score_in_pool(
                        store,
                        run_id,
                        scorers,
                        merge=merge,
                        summary=summary,
                        workers=workers,
                        ranges=tapered(ranges, RANGE_TRIALS, workers),
                    )
                    return
                except rescore_pool.PoolUnavailable as exc:  # nothing scored there: all here
                    logger.debug("rescoring in this process: no workers started (%s)", exc)
    writer = _Writer(store, run_id, merge=merge)
    stored = store.iter_stored(run_id)
    keep = Keeper(store, run_id)
    with scoring_from_store() as state:
        scored = (
            _score_in_turn(stored, prepared, state, keep)
            if all(p.synchronous for p in prepared)
            else _score_concurrently(stored, prepared, concurrency, keep)
        )
        # Closed on the way out, so trials still being scored are cancelled even on an error.
        async with aclosing(scored):
            try:
                async for item, scores in scored:
                    if on_result is not None:
                        on_result(TrialResult(case=item.case, trial=item.trial, scores=scores))
                    if summary is not None:
                        summary.add(as_stored(store, run_id, item, scores, merge=merge))
                    await writer.add(item, scores)
                await writer.flush()
            finally:
                await writer.close()


def tapered(
    ranges: Sequence[tuple[int, int, int]], size: int, workers: int
) -> list[tuple[int, int, int]]:
    """`ranges` (consecutive, of whole cases: `RunStore.stored_ranges`) joined into ranges of
    about `size` trials, but for the run's last `workers * size` trials, left as they are.

    Why: the workers take ranges in turn, so the last one to start ends up to a whole range
    after the others (~0.3 s of W5's ~8 s at 2,000 trials, one core idle); smaller ranges at
    the end let them finish together, without the cost of small ranges throughout."""
    tail = workers * size
    left = sum(trials for _first, _last, trials in ranges)
    joined: list[tuple[int, int, int]] = []
    start: tuple[int, int] | None = None  # (first case, trials) of the range being joined
    for first, last, trials in ranges:
        if start is None and left <= tail:
            joined.append((first, last, trials))
        else:
            begun, count = start if start is not None else (first, 0)
            count += trials
            start = None if count >= size else (begun, count)
            if start is None:
                joined.append((begun, last, count))
        left -= trials
    if start is not None:  # only when the ranges ran out while joining one
        joined.append((start[0], ranges[-1][1], start[1]))
    return joined


async def _score_in_turn(
    stored: Iterator[StoredTrial],
    scorers: Sequence[PreparedScorer],
    state: StoreScoring,
    keep: Keeper,
) -> AsyncGenerator[_Scored]:
    """Each trial scored in turn: the scorers give their scores at once."""
    for count, item in enumerate(stored, start=1):
        scores: dict[str, Score] = {}
        for scorer in scorers:
            score = scorer.call(item.case, item.trial)
            scores[scorer.name] = score if isinstance(score, Score) else await score
        if state.undecided:  # a scorer met masked text in this trial
            state.undecided = 0
            keep(item, scores)
        yield item, scores
        if count % _WRITE_BATCH == 0:
            await asyncio.sleep(0)  # let the writer and anything else in the loop go on


async def _score_concurrently(
    stored: Iterator[StoredTrial],
    scorers: Sequence[PreparedScorer],
    concurrency: int,
    keep: Keeper,
) -> AsyncGenerator[_Scored]:
    """Up to `concurrency` trials scored at once (async scorers wait on a provider), taken in
    stored order."""

    async def score(item: StoredTrial) -> dict[str, Score]:
        scores = {scorer.name: await scorer.run(item.case, item.trial) for scorer in scorers}
        keep(item, scores)  # trials interleave here, so each one's scores are looked at
        return scores

    pending: deque[tuple[StoredTrial, asyncio.Task[dict[str, Score]]]] = deque()
    try:
        for item in stored:
            pending.append((item, asyncio.ensure_future(score(item))))
            if len(pending) >= concurrency:
                first, task = pending.popleft()
                yield first, await task
        while pending:
            first, task = pending.popleft()
            yield first, await task
    finally:
        for _item, task in pending:
            task.cancel()


class _Writer:
    """Writes new scores in batches of `_WRITE_BATCH` trials, in a worker thread, while the
    next batch is scored.

    Merging (every rescore and judging), a trial's scores are compared with its stored text
    as it is added, and the batch keeps only the rows that changed (`changed_scores`): the
    same rows, in the same order and transactions, as comparing the whole batch when it is
    written, but the trials themselves die as soon as they are summarised. Holding 1,000
    trials with their scores made the cyclic gc walk them again and again: W5 (100,000
    stored trials rescored) ran at 1,650-2,050 trials a second with it, ~2x that without.
    """

    def __init__(self, store: RunStore, run_id: str, *, merge: bool) -> None:
        self._store = store
        self._run_id = run_id
        self._merge = merge
        self._batch: list[_Scored] = []  # without merge: the trials and their whole score sets
        self._rows: list[ScoreRow] = []  # with merge: the changed rows of the batch's trials
        self._trials = 0
        self._writing: asyncio.Future[Any] | None = None

    async def add(self, item: StoredTrial, scores: dict[str, Score]) -> None:
        if self._merge:
            self._rows += self._store.changed_scores(self._run_id, item, scores)
        else:
            self._batch.append((item, scores))
        self._trials += 1
        if self._trials >= _WRITE_BATCH:
            await self.flush()

    async def flush(self) -> None:
        """Start writing the batch, once the one before is written."""
        await self._wait()
        batch, self._batch = self._batch, []
        rows, self._rows = self._rows, []
        self._trials = 0
        if rows:
            self._writing = asyncio.ensure_future(
                asyncio.to_thread(self._store.write_changed, self._run_id, rows)
            )
        elif batch:
            self._writing = asyncio.ensure_future(asyncio.to_thread(self._write, batch))

    async def close(self) -> None:
        """Wait for the last write (its error, if any, is raised here)."""
        await self._wait()

    async def _wait(self) -> None:
        if self._writing is not None:
            writing, self._writing = self._writing, None
            await writing

    def _write(self, batch: list[_Scored]) -> None:
        items = [(item.key[0], item.key[1], scores) for item, scores in batch]
        self._store.replace_scores_many(self._run_id, items, merge=False)


async def plan_rescore(
    store: RunStore,
    run_id: str,
    scorers: Sequence[Any],
    options: RunOptions,
    *,
    builtins: bool | None = None,
    on_warning: Warn = logger.warning,
) -> RunPlan:
    """Score a stored run's trials again: its own scorers (the built-ins, unless `builtins`
    says otherwise, its stored references and judge rubrics, with its judge unless
    `options.judge` names another), and `scorers` besides."""
    info = store.get_info(store.resolve_run_id(run_id))
    use_builtins = info.builtins if builtins is None else builtins
    choice = run_judge_choice(options, info.settings.get("judge"))

    def make() -> RunPlan:
        stored_dir = info.settings.get("base_dir")
        resolution = resolve_scorers(
            [*info.scorers, *scorers],
            choice,
            builtins=use_builtins,
            tools=info.tools,
            base_dir=Path(stored_dir) if stored_dir else None,
            stored=info.settings.get(SCORER_REFS),
        )
        announce_scoring(resolution, choice, on_warning)
        added = [r for r in map(scorer_reference, scorers) if r is not None]
        settings = dict(info.settings)
        settings[SCORER_REFS] = {**settings.get(SCORER_REFS, {}), **resolution.references}
        if choice.stored() is not None:
            settings["judge"] = choice.stored()
        return RunPlan(
            kind="rescore",
            info=info.model_copy(
                update={
                    "scorers": [*info.scorers, *(r for r in added if r not in info.scorers)],
                    "builtins": use_builtins,
                    "settings": settings,
                }
            ),
            scorers=resolution.scorers,
            judge=choice,
            store=options.store,
            # Built as the trials are scored: the stored run is read once.
            summary=SummaryBuilder(
                map(scorer_name, resolution.scorers),
                options.prices,
                info.settings.get("passing"),
                trials_per_case=info.trials,
            ),
            settings=EngineSettings(concurrency=options.concurrency),
        )

    return await planned(choice, make)


async def plan_judging(
    store: RunStore, run_id: str, options: RunOptions, *, on_warning: Warn = logger.warning
) -> RunPlan:
    """Score a stored run's trials with the judge's rubrics (`options.rubrics`, else all
    four), added to the scores it has; the judge is `options.judge` (else
    `AGENTEVAL_JUDGE`), never the run's own."""
    info = store.get_info(store.resolve_run_id(run_id))
    choice = run_judge_choice(options)
    if choice.config is None:
        raise ConfigError(
            "no judge given",
            field="judge",
            hint="pass --judge PROVIDER:MODEL (e.g. openai:gpt-4o-mini) or set AGENTEVAL_JUDGE",
        )

    def make() -> RunPlan:
        resolution = resolve_scorers(
            list(RUBRICS if options.rubrics is None else options.rubrics),
            choice,
            builtins=False,
            tools=info.tools,
            stored=info.settings.get(SCORER_REFS),
        )
        for note in resolution.renamed:
            on_warning(note)
        if not all(isinstance(unrenamed(s), JudgeRubric) for s in resolution.scorers):
            raise ConfigError(
                "only judge rubrics can be judged",
                field="rubric",
                hint="rubrics: " + ", ".join(RUBRICS),
            )
        announce_scoring(resolution, choice, on_warning, renamed=False)
        refs = [r for r in map(scorer_reference, resolution.scorers) if r is not None]
        return RunPlan(
            kind="judge",
            info=info.model_copy(
                update={
                    "scorers": [*info.scorers, *(r for r in refs if r not in info.scorers)],
                    "settings": {
                        **info.settings,
                        "judge": choice.stored(),
                        SCORER_REFS: {
                            **info.settings.get(SCORER_REFS, {}),
                            **resolution.references,
                        },
                    },
                }
            ),
            scorers=resolution.scorers,
            judge=choice,
            store=options.store,
            summary=SummaryBuilder(
                prices=options.prices,
                passing=info.settings.get("passing"),
                trials_per_case=info.trials,
            ),
            settings=EngineSettings(concurrency=options.concurrency),
        )

    return await planned(choice, make)
