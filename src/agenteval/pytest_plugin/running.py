"""Evaluating one case of a `@agenteval_cases` test: planned and executed by the engine as
one case of the test's run (`engine.planning.plan_case`), which the first of the session's
processes to get there stores with all the test's cases."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .cases import CaseResult, EvalSpec
from .state import Session

if TYPE_CHECKING:
    from agenteval.case import EvalCase
    from agenteval.records import RunInfo, TrialResult
    from agenteval.store import RunStore

__all__ = ["check_named_scorers", "evaluate_case"]


async def evaluate_case(
    spec: EvalSpec, case: EvalCase, session: Session, test: str, base_dir: Path
) -> CaseResult:
    """Run the case's trials through the engine, score them, store them in the test's run."""
    from agenteval.engine.evaluate import execute
    from agenteval.engine.planning import plan_case
    from agenteval.records import PYTEST_TARGET
    from agenteval.scorers.base import scorer_name
    from agenteval.store import RunStore

    agent, agent_ref = spec.resolve_agent(base_dir)
    cases = spec.load_cases(base_dir)
    run_id = session.run_id(test)
    options = replace(spec.options, store=session.store, base_dir=base_dir)
    results: list[TrialResult] = []
    with RunStore(options.store) as store:
        plan = await plan_case(
            store,
            agent,
            cases,
            case,
            spec.scorers,
            options,
            run_id=run_id,
            target=f"{PYTEST_TARGET}{test}",
            agent_ref=agent_ref,
            dataset=spec.dataset(base_dir),
            settings_extra={
                "pytest": {
                    "test": test,
                    "thresholds": spec.thresholds,
                    "required": spec.required,
                    "pass_k": spec.pass_k,
                    "pass_k_min": spec.pass_k_min,
                },
            },
        )
        try:
            check_named_scorers(spec, [scorer_name(s) for s in plan.scorers])
            if run_id not in session.created:
                _create_run(store, plan.info, cases)
                session.created.add(run_id)
                session.ran(run_id)
        except BaseException:
            await plan.judge.aclose()
            raise
        await execute(store, plan, on_result=results.append, on_warning=_quiet)
        # Judged on what the store holds: a trial whose result was lost is missing, not
        # passed on the strength of the copy in memory.
        stored = store.stored_trials(run_id, case.id)
        session.ran(run_id, case.id)
    kept = sorted(
        (result for result in results if result.trial.trial in stored),
        key=lambda result: result.trial.trial,
    )
    missing = tuple(index for index in range(spec.trials) if index not in stored)
    return CaseResult(case, kept, spec, run_id, session.store, missing)


def _create_run(store: RunStore, info: RunInfo, cases: Sequence[EvalCase]) -> None:
    """Store the run with all its cases; another xdist worker may have stored it first."""
    from agenteval.errors import StoreError

    try:
        store.create_run(info, cases)
    except StoreError:
        store.get_info(info.run_id)  # stored by another worker: use it (else this raises)


def _quiet(note: str) -> None:
    """A test says what failed itself: the run's notes are not logged."""
    del note


def check_named_scorers(spec: EvalSpec, names: Sequence[str]) -> None:
    """Every scorer `required` and `thresholds` name is one of the test's: an unknown name in
    `required` would leave no scorer counting (every case passing whatever the agent said),
    and an unknown threshold would be dropped. A name shifts when a second scorer takes a
    suffix (`exact_match_2`), or loses it when the built-ins are off."""
    from agenteval.errors import ConfigError
    from agenteval.suggestions import meant

    for field_name, given in (("required", spec.required or ()), ("thresholds", spec.thresholds)):
        for name in given:
            if name in names:
                continue
            close = meant(name, names, {})
            renamed = name.rpartition("_")[2].isdigit()
            raise ConfigError(
                f"no scorer named {name!r} in this test (its scorers: {', '.join(names)})",
                field=field_name,
                hint=f"did you mean {close!r}?"
                if close
                else "name one of its scorers"
                + (
                    " (a scorer is NAME_2 only while another holds NAME: with the built-ins "
                    "off, a criterion is exact_match)"
                    if renamed
                    else ""
                ),
            )
