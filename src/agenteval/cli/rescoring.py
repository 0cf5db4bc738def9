"""Scoring a stored run again without its agent: `agenteval rescore` (the scorers) and
`agenteval judge` (the LLM judge's rubrics). Each builds its options once from the flags and the
config, then calls the engine's two steps: a plan (`plan_rescore`, `plan_judging`), executed by
`run_planned`."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

from agenteval.cli.common import warn
from agenteval.cli.live import run_async
from agenteval.cli.options import Flags, RunIdArgument, names, with_options
from agenteval.cli.output import check_writable, finish, junit_target
from agenteval.cli.settings import absolute_ref, judged_settings, require_stored_judge
from agenteval.config import check_scorer_flags
from agenteval.engine.evaluate import run_planned
from agenteval.engine.rescoring import plan_judging, plan_rescore
from agenteval.engine.scheduler import DEFAULT_CONCURRENCY
from agenteval.judge.rubrics import RUBRICS
from agenteval.records import how_to_complete, pytest_test_of
from agenteval.run import Run
from agenteval.store import RunStore

__all__ = ["judge_command", "rescore"]


@with_options("scorer no_builtins store json_path junit_path judge no_cache verbose otlp_endpoint")
def rescore(run_id: RunIdArgument, *, flags: Flags) -> None:
    """Score a stored run again, without running the agent (the judge's cache makes judging
    the same trials again free)."""
    junit_target(flags.junit_path)
    check_scorer_flags(flags.scorer or [])
    refs = [absolute_ref(ref, Path.cwd()) for ref in flags.scorer or []]
    check_writable(flags.json_path)
    settings = judged_settings(flags)
    if settings.judge is None:  # the run's own judge, if it has one
        with RunStore(settings.store, create=False) as run_store:
            require_stored_judge(run_store.get_info(run_store.resolve_run_id(run_id)))
    # A rescore scores as many trials at once as the engine's default, whatever the config says.
    options = dataclasses.replace(settings, concurrency=DEFAULT_CONCURRENCY)
    planner = functools.partial(
        plan_rescore,
        run_id=run_id,
        scorers=refs,
        options=options,
        builtins=False if flags.no_builtins else None,
        on_warning=warn,
    )
    result: Run = run_async(lambda: run_planned(options, planner, stored=True, on_warning=warn))
    finish(result, flags, _rescored_hint(result))


@with_options("judge rubric store no_cache json_path junit_path verbose")
def judge_command(run_id: RunIdArgument, *, flags: Flags) -> None:
    """Score a stored run with an LLM judge's rubrics, without running the agent."""
    junit_target(flags.junit_path)
    check_writable(flags.json_path)
    settings = judged_settings(flags)
    options = dataclasses.replace(
        settings, rubrics=names(flags.rubric) or RUBRICS, concurrency=DEFAULT_CONCURRENCY
    )
    planner = functools.partial(plan_judging, run_id=run_id, options=options, on_warning=warn)
    result: Run = run_async(lambda: run_planned(options, planner, stored=True, on_warning=warn))
    finish(result, flags, _rescored_hint(result))


def _rescored_hint(result: Run) -> str:
    """What to do about a run scored again with trials missing: resume it, then score again."""
    then = how_to_complete(result.info.target, result.run_id)
    if pytest_test_of(result.info.target) is not None:
        return f"its stored trials are scored; {then}"
    return f"its stored trials are scored; {then}, then score it again"
