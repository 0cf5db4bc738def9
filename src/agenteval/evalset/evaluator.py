"""`AgentEvaluator`: run an agent over an `EvalSet` with the criteria of an `EvalConfig`; and,
called on the class, Google ADK's static `AgentEvaluator.evaluate(agent_module=...)`.

It is a front door to agenteval's one engine (`agenteval.evaluate_async`): the run is stored,
trials run concurrently with retries of infrastructure failures, multi-turn cases call the
agent once per turn with the conversation so far, and the LLM criteria share the run's judge.
The criteria run as the run's scorers (and nothing else: no built-in scorers), so
`agenteval show RUN_ID` shows the same scores the report summarises.

`AgentEvaluator.evaluate` has two forms (`evalset.twofold.ClassOrInstanceMethod`): on an
instance, agenteval's `evaluator.evaluate(eval_set) -> EvalReport`; on the class, ADK 2.13's
`await AgentEvaluator.evaluate(agent_module, eval_dataset_file_path_or_dir, num_runs, ...)`,
which raises `AssertionError` naming the failing metrics (the parts are `evalset.dropin`).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from agenteval.agents.calling import Agent
from agenteval.agents.tools import ToolSpec
from agenteval.case import EvalCase
from agenteval.criteria.base import BaseCriterion
from agenteval.criteria.llm import TemplatedLLMCriterion
from agenteval.criteria.response import RubricBasedCriterion
from agenteval.engine.evaluate import run_planned
from agenteval.engine.options import (
    DEFAULT_CONCURRENCY,
    DEFAULT_RETRIES,
    EVALUATOR_BUILTINS,
    RunOptions,
    Setting,
)
from agenteval.engine.planning import load_agent, plan_new
from agenteval.engine.sync import run_sync
from agenteval.errors import ConfigError
from agenteval.evalset import dropin
from agenteval.evalset.adk import FINAL_SESSION_STATE
from agenteval.evalset.config import EvalConfig
from agenteval.evalset.evalset import EvalSet
from agenteval.evalset.report import EvalCaseResult, EvalReport
from agenteval.evalset.rubrics import PerTurnRubricCriterion
from agenteval.evalset.session import FinalSessionStateMatch
from agenteval.evalset.ties import TieRule
from agenteval.evalset.twofold import ClassOrInstanceMethod
from agenteval.judge.judge import Judge, JudgeConfig
from agenteval.pricing import PriceTable
from agenteval.records import TrialResult
from agenteval.store import DEFAULT_STORE_PATH
from agenteval.trace import utc_now

__all__ = ["AgentEvaluator"]


def _prepared(criterion: BaseCriterion) -> BaseCriterion:
    """The criterion as the evaluator runs it: the rubric criterion grading each turn's
    rubrics against that turn's answer, and every LLM criterion under the tie rule."""
    if type(criterion) is RubricBasedCriterion:
        per_turn = PerTurnRubricCriterion(config=criterion.config)
        per_turn.name = criterion.name
        return per_turn
    if isinstance(criterion, TemplatedLLMCriterion) and not isinstance(
        criterion, PerTurnRubricCriterion
    ):
        return TieRule(criterion)
    return criterion


async def _evaluate_adk(
    cls: type[AgentEvaluator],
    agent_module: str | ModuleType,
    eval_dataset_file_path_or_dir: str | Path,
    num_runs: int = dropin.NUM_RUNS,
    agent_name: str | None = None,
    initial_session_file: str | Path | None = None,
    print_detailed_results: bool = True,
    artifact_service: Any = None,
    output_file: str | None = None,
    app_name: str | None = None,
    eval_set_results_manager: Any = None,
    *,
    store: str | Path | None = None,
) -> None:
    """Google ADK's `AgentEvaluator.evaluate`, the class form of `AgentEvaluator.evaluate`: the
    agent of `agent_module` (its `agent.root_agent`, or `agent_name`'s sub-agent) over the test
    file, or every `*.test.json` under the folder, `num_runs` times each case, with the
    `test_config.json` beside each file (else ADK's defaults); `initial_session_file` is the
    session of legacy test files. Each file is one stored run (`store`, else `AGENTEVAL_STORE`, else
    `.agenteval/runs.db`). Raises `AssertionError` naming every failing metric (ADK's
    wording) and the runs' ids; `print_detailed_results` prints each run's details.
    ADK's `artifact_service`, `output_file` and `eval_set_results_manager` are refused
    (agenteval stores the run); `app_name` alone changes nothing."""
    dropin.check_adk_arguments(
        num_runs,
        artifact_service=artifact_service,
        output_file=output_file,
        app_name=app_name,
        eval_set_results_manager=eval_set_results_manager,
    )
    session = dropin.read_initial_session(initial_session_file)
    # Every file is read (and its config) before anything runs: a mistake stops it all.
    runs = [
        (file, dropin.config_for_test_file(file), dropin.load_test_file(file, session))
        for file in dropin.eval_files(eval_dataset_file_path_or_dir)
    ]
    await cls._run_adk(agent_module, agent_name, runs, num_runs, print_detailed_results, store)


class AgentEvaluator:
    """Evaluates an agent on eval sets with the criteria of an `EvalConfig`.

    ```python
    evaluator = AgentEvaluator(agent, EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}))
    report = await evaluator.evaluate(EvalSet.load("weather.evalset.json"))
    print(report.summary.pass_rate, report.summary.criterion_stats)
    ```

    Called on the class, `evaluate` and `evaluate_eval_set` are Google ADK's (2.13) static
    test API, a drop-in for `google.adk.evaluation.AgentEvaluator`:

    ```python
    await AgentEvaluator.evaluate(
        agent_module="home_automation_agent",
        eval_dataset_file_path_or_dir="tests/fixture/home_automation_agent/",
        num_runs=2,
    )
    ```

    `agent` is any agent `agenteval.evaluate` takes (a sync or async callable, or a
    `module:function` reference). `config` defaults to the `test_config.json` beside an eval
    set given by path, else `EvalConfig.default()` (ADK's defaults). `criteria` adds criterion
    objects by hand (`ExactMatchCriterion()`, a criterion of your own). The other arguments
    are those of `agenteval.evaluate`: `trials` per case (ADK's `num_runs`), `concurrency`,
    `timeout`, `retries`, the run `store`, the `judge` of the LLM criteria (else
    `AGENTEVAL_JUDGE`, else each criterion's `judge_model`), `use_cache` (the judge cache),
    `prices` (for the run's cost), the agent's `tools` and `tool_mocks` (what tools answer in
    every case; a case's own mock of a tool wins), and the `user_simulator` who plays the cases
    that simulate their user (ADK's `conversation_scenario`) without a script of their own
    (as `agenteval.evaluate(user_simulator=...)` takes it). They are kept as one checked value,
    `evaluator.options` (and read as attributes: `evaluator.trials`); the run has no built-in
    scorer and no default judge rubric (`EVALUATOR_BUILTINS`): the criteria are its scores.

    Each LLM criterion's judge tie counts as neither a pass nor a fail (see
    `agenteval.evalset.ties`); `rubric_based_final_response_quality_v1` grades each turn's
    rubrics against that turn's answer (see `agenteval.evalset.rubrics`); and a case's expected
    `final_session_state` is compared (`final_session_state_match`) unless
    `config.check_final_session_state` is off.
    """

    def __init__(
        self,
        agent: Agent | str | None,
        config: EvalConfig | None = None,
        *,
        criteria: Sequence[BaseCriterion] = (),
        trials: int = 1,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float | None = None,
        retries: int = DEFAULT_RETRIES,
        store: str | Path = DEFAULT_STORE_PATH,
        judge: Judge | JudgeConfig | str | None = None,
        use_cache: bool = True,
        prices: PriceTable | None = None,
        tools: Mapping[str, ToolSpec] | None = None,
        tool_mocks: Mapping[str, Any] | None = None,
        user_simulator: Any = None,
    ) -> None:
        if config is not None and not isinstance(config, EvalConfig):
            raise TypeError(
                f"config should be an EvalConfig, got {type(config).__name__}: agenteval "
                "records what the agent does by itself, no trajectory collector is needed"
            )
        for extra in criteria:
            if not isinstance(extra, BaseCriterion):
                raise TypeError(
                    f"criteria should be BaseCriterion objects, got {type(extra).__name__}"
                )
        self.agent = agent
        self.config = config
        self.extra_criteria = list(criteria)
        self.options = RunOptions(
            trials=trials,
            concurrency=concurrency,
            timeout=timeout,
            retries=retries,
            store=Path(store),
            judge=judge,
            use_cache=use_cache,
            prices=prices,
            tools=tools,
            tool_mocks=tool_mocks,
            user_simulator=user_simulator,
            # The criteria are the run's scorers: no built-in scorer, no default judge rubric.
            builtins=EVALUATOR_BUILTINS,
            rubrics=(),
        )
        """The run's settings, built and checked once (`agenteval.engine.options.RunOptions`)."""

    # The run settings, read as attributes (`evaluator.trials`): `options`'s.
    trials, concurrency, timeout, retries = Setting(), Setting(), Setting(), Setting()
    store, judge, use_cache, prices, tools = Setting(), Setting(), Setting(), Setting(), Setting()
    tool_mocks, user_simulator = Setting(), Setting()

    # --- what runs

    def config_for(self, source: EvalSet | str | Path | Sequence[EvalCase]) -> EvalConfig:
        """The config an evaluation of `source` uses: the one given, else the
        `test_config.json` beside a path, else `EvalConfig.default()`."""
        if self.config is not None:
            return self.config
        if isinstance(source, str | Path):
            return EvalConfig.for_file(source)
        return EvalConfig.default()

    def criteria_for(self, config: EvalConfig, cases: Sequence[EvalCase]) -> list[Any]:
        """The scorers the run applies: the config's criteria, the ones given by hand, and
        `final_session_state_match` when a case expects a final session state."""
        scorers: list[Any] = []
        names: set[str] = set()
        for criterion in [*config.build_criteria(), *self.extra_criteria]:
            if not criterion.is_enabled:
                continue
            if criterion.name in names:
                raise ConfigError(
                    f"two criteria are named {criterion.name!r}",
                    field="criteria",
                    hint="set it in the EvalConfig or pass it by hand, not both",
                )
            names.add(criterion.name)
            scorers.append(_prepared(criterion))
        if config.check_final_session_state and any(
            case.metadata.get(FINAL_SESSION_STATE) for case in cases
        ):
            session = FinalSessionStateMatch()
            if session.name not in names:
                scorers.append(session)
        if not scorers:
            raise ConfigError(
                "no criteria to evaluate with",
                field="criteria",
                hint="set criteria in the EvalConfig, e.g. "
                "EvalConfig(criteria={'tool_trajectory_avg_score': 1.0})",
            )
        return scorers

    # --- running

    async def _evaluate_instance(
        self,
        eval_set: EvalSet | str | Path | Sequence[EvalCase],
        *,
        on_result: Callable[[TrialResult], None] | None = None,
    ) -> EvalReport:
        """Run the agent over every case of `eval_set` (an `EvalSet`, a path `EvalSet.load`
        reads, or a list of cases), `trials` times each, score every trial with the criteria,
        and return the report. Everything is stored as it finishes (`report.run_id`).

        A trial with no stored result when the run ends (the store lost it) is an `error`
        result saying so, and the report does not pass (`report.complete` is False).

        (Called on the class, `AgentEvaluator.evaluate(agent_module=...)` is ADK's form.)"""
        return await self._evaluate(eval_set, self.options, on_result)

    evaluate = ClassOrInstanceMethod(_evaluate_instance, _evaluate_adk)
    """On an instance, agenteval's `evaluate(eval_set) -> EvalReport`; on the class, ADK's
    `AgentEvaluator.evaluate(agent_module=..., eval_dataset_file_path_or_dir=...)`."""

    @classmethod
    async def evaluate_eval_set(
        cls,
        agent_module: str | ModuleType,
        eval_set: Any,
        criteria: Mapping[str, float] | None = None,
        eval_config: Any = None,
        num_runs: int = dropin.NUM_RUNS,
        agent_name: str | None = None,
        print_detailed_results: bool = True,
        artifact_service: Any = None,
        output_file: str | None = None,
        app_name: str | None = None,
        eval_set_results_manager: Any = None,
        *,
        store: str | Path | None = None,
    ) -> None:
        """Google ADK's `AgentEvaluator.evaluate_eval_set`: the agent of `agent_module` over
        `eval_set` (agenteval's `EvalSet` or ADK's) with `eval_config` (agenteval's
        `EvalConfig` or ADK's; ADK's deprecated `criteria`, metric → threshold, wins), one
        stored run; raises `AssertionError` naming every failing metric."""
        dropin.check_adk_arguments(
            num_runs,
            artifact_service=artifact_service,
            output_file=output_file,
            app_name=app_name,
            eval_set_results_manager=eval_set_results_manager,
        )
        the_set = dropin.eval_set_of(eval_set)
        config = dropin.eval_config_of(criteria, eval_config)
        runs = [(the_set.id, config, the_set)]
        await cls._run_adk(agent_module, agent_name, runs, num_runs, print_detailed_results, store)

    @staticmethod
    def find_config_for_test_file(test_file: str | Path) -> EvalConfig:
        """Google ADK's: the `test_config.json` in the test file's folder, else ADK's default
        criteria; as ADK runs it (no `final_session_state` comparison, `dropin.adk_config`)."""
        return dropin.config_for_test_file(test_file)

    @classmethod
    async def _run_adk(
        cls,
        agent_module: str | ModuleType,
        agent_name: str | None,
        runs: Sequence[tuple[str | Path, EvalConfig, EvalSet]],
        num_runs: int,
        print_detailed_results: bool,
        store: str | Path | None,
    ) -> None:
        """Each (source, config, eval set) as one stored run of the ADK agent, then ADK's
        verdict over all of them (every run goes ahead, so all failures are named at once)."""
        where = store or os.environ.get("AGENTEVAL_STORE") or DEFAULT_STORE_PATH
        shown = agent_module if isinstance(agent_module, str) else agent_module.__name__
        failures: list[str] = []
        reports: list[tuple[str, EvalReport]] = []
        async with dropin.adk_agent(agent_module, agent_name) as agent:
            for source, config, eval_set in runs:
                evaluator = cls(agent, config, trials=num_runs, store=where)
                report = await evaluator._evaluate(
                    eval_set, evaluator.options, config=config, target=str(source)
                )
                reports.append((str(source), report))
                failures += dropin.failure_lines(report, shown, str(source))
                if print_detailed_results:
                    print(dropin.detailed_results(report, str(source)))
        dropin.assert_passed(failures, reports, print_detailed_results)

    async def evaluate_case(self, case: EvalCase) -> EvalCaseResult:
        """Run one case once and return its result (a run of its own in the store); a trial
        whose result was not stored is an `error` result, never a pass."""
        report = await self._evaluate([case], replace(self.options, trials=1, concurrency=1))
        return report.results[0]

    def evaluate_sync(self, eval_set: EvalSet | str | Path | Sequence[EvalCase]) -> EvalReport:
        """`evaluate`, for code that is not async (raises inside a running event loop)."""
        return run_sync(self.evaluate(eval_set), instead="`await evaluator.evaluate(...)`")

    async def _evaluate(
        self,
        eval_set: EvalSet | str | Path | Sequence[EvalCase],
        options: RunOptions,
        on_result: Callable[[TrialResult], None] | None = None,
        *,
        config: EvalConfig | None = None,
        target: str | None = None,
    ) -> EvalReport:
        config = config or self.config_for(eval_set)
        the_set = self._eval_set(eval_set)
        if config.user_simulator_config is not None:
            # ADK's user_simulator_config: the cases that simulate their user take it.
            the_set = the_set.model_copy(update={"cases": config.simulated_cases(the_set.cases)})
        scorers = self.criteria_for(config, the_set.cases)
        thresholds = {getattr(s, "name", ""): getattr(s, "threshold", None) for s in scorers}
        started = utc_now()
        clock = time.monotonic()
        planner = functools.partial(
            plan_new,
            agent=load_agent(self.agent, options),
            cases=the_set.cases,
            scorers=scorers,
            options=options,
            target=target or (str(eval_set) if isinstance(eval_set, str | Path) else the_set.id),
        )
        run = await run_planned(options, planner, on_result=on_result)
        return EvalReport.from_run(
            run,
            eval_set_id=the_set.id,
            eval_set_name=the_set.name,
            config=config,
            thresholds=thresholds,
            created_at=started,
            duration_s=time.monotonic() - clock,
        )

    @staticmethod
    def _eval_set(source: EvalSet | str | Path | Sequence[EvalCase]) -> EvalSet:
        if isinstance(source, EvalSet):
            eval_set = source
        elif isinstance(source, str | Path):
            eval_set = EvalSet.load(source)
        else:
            eval_set = EvalSet(id="cases", cases=list(source))
        if not eval_set.cases:
            raise ConfigError(
                f"the eval set {eval_set.id!r} has no cases",
                field="eval_set",
                hint="add eval cases",
            )
        return eval_set

    def __repr__(self) -> str:
        return f"AgentEvaluator({self.agent!r}, config={self.config!r})"
