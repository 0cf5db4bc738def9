"""`EvalSuite`: the agent evaluators' front door to a run. A named set of cases and evaluators
whose `run` is `agenteval.evaluate` with those evaluators, and whose report is the same `Run`."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from agenteval.case import EvalCase
from agenteval.datasets import load_cases
from agenteval.engine.options import (
    DEFAULT_CONCURRENCY,
    DEFAULT_RETRIES,
    EVALUATOR_BUILTINS,
    RunOptions,
)
from agenteval.engine.sync import sync_form
from agenteval.errors import ConfigError
from agenteval.store import DEFAULT_STORE_PATH

if TYPE_CHECKING:
    from agenteval.agents.calling import Agent
    from agenteval.agents.tools import ToolSpec
    from agenteval.judge.judge import Judge, JudgeConfig
    from agenteval.pricing import PriceTable
    from agenteval.run import Run

__all__ = ["EvalSuite"]


class EvalSuite:
    """A named suite: cases (`add_cases`), evaluators (`add_evaluators`), and `run(run_agent)`.

    `run` is `agenteval.evaluate` over the suite's cases with its evaluators as the scorers
    (and no built-in scorer or judge rubric unless asked for: `EVALUATOR_BUILTINS`), so the report it returns is the
    same `Run`: `report.results` holds, for each (case, trial), every evaluator's `Score` with
    its reason, `report.summary` the means and pass rates, and `report.to_json()` the JSON
    document. The run is stored like any other (`agenteval show`), under the suite's name.
    """

    def __init__(
        self,
        name: str,
        *,
        store: str | Path = DEFAULT_STORE_PATH,
        judge: Judge | JudgeConfig | str | None = None,
    ) -> None:
        if not name.strip():
            raise ConfigError("a suite needs a name", field="name")
        self.name = name
        self.store = store
        self.judge = judge
        self._cases: list[EvalCase] = []
        self._evaluators: list[Any] = []

    @property
    def cases(self) -> list[EvalCase]:
        """The suite's cases, in the order added."""
        return list(self._cases)

    @property
    def evaluators(self) -> list[Any]:
        """The suite's evaluators (or any other scorers), in the order added."""
        return list(self._evaluators)

    def add_cases(self, *cases: EvalCase | Iterable[EvalCase] | str | Path) -> Self:
        """Add cases: `EvalCase`s, lists of them, or case files (read with `load_cases`)."""
        for item in cases:
            if isinstance(item, EvalCase):
                self._cases.append(item)
            elif isinstance(item, str | Path):
                self._cases.extend(load_cases(item))
            else:
                for case in item:
                    if not isinstance(case, EvalCase):
                        raise ConfigError(
                            f"{case!r} is not an EvalCase",
                            field="cases",
                            hint="add EvalCase objects, lists of them, or a case file's path",
                        )
                    self._cases.append(case)
        return self

    def add_evaluators(self, *evaluators: Any) -> Self:
        """Add evaluators: `ToolCallAccuracy()` and the others, or any scorer (a function of
        `(case, trial)`, a scorer name such as `"exact_match"`)."""
        self._evaluators.extend(evaluators)
        return self

    async def run_async(
        self,
        run_agent: Agent | str | None = None,
        *,
        trials: int = 1,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float | None = None,
        retries: int = DEFAULT_RETRIES,
        judge: Judge | JudgeConfig | str | None = None,
        builtins: bool = EVALUATOR_BUILTINS,
        rubrics: Iterable[str] = (),
        store: str | Path | None = None,
        tools: Mapping[str, ToolSpec] | None = None,
        use_cache: bool = True,
        prices: PriceTable | None = None,
        tool_mocks: Mapping[str, Any] | None = None,
        user_simulator: Any = None,
    ) -> Run:
        """Run `run_agent` over the suite's cases and score every trial with its evaluators.

        `run_agent` is any agent `agenteval.evaluate` takes: a callable (sync or async) of the
        case input returning the final answer, a `Trial`, or a list of `AgentStep`s. Evaluators
        read what the agent recorded, else the case's `agent_trace`. `None` runs no agent and
        scores each case's `agent_trace`. The LLM-judged evaluators use `judge`
        (`"openai:gpt-4o-mini"`, a `JudgeConfig` or a `Judge`; else the suite's, else
        `AGENTEVAL_JUDGE`) unless they were given their own. The run scores with the suite's
        evaluators only: `builtins=True` adds agenteval's built-in scorers (the default is
        `agenteval.engine.options.EVALUATOR_BUILTINS`), `rubrics` judge rubrics by name;
        `store` defaults to the suite's; `trials`, `concurrency`, `timeout`, `retries`,
        `tools`, `use_cache`, `prices`, `tool_mocks` (what tools answer in every case;
        a case's own mock of a tool wins) and `user_simulator` (who plays the user of cases
        with a `user_simulation` and no `script`) are `evaluate`'s.

        `run` is the same, for code that is not async.
        """
        from agenteval.engine.evaluate import run_planned
        from agenteval.engine.planning import load_agent, plan_new

        if not self._cases:
            raise ConfigError(
                f"suite {self.name!r} has no cases", hint="add some with suite.add_cases(...)"
            )
        if not self._evaluators and not builtins:
            raise ConfigError(
                f"suite {self.name!r} has no evaluators",
                hint="add some with suite.add_evaluators(...)",
            )
        options = RunOptions(
            trials=trials,
            concurrency=concurrency,
            timeout=timeout,
            retries=retries,
            builtins=builtins,
            store=Path(self.store if store is None else store),
            tools=tools,
            judge=self.judge if judge is None else judge,
            rubrics=list(rubrics),
            use_cache=use_cache,
            prices=prices,
            tool_mocks=tool_mocks,
            user_simulator=user_simulator,
        )
        planner = functools.partial(
            plan_new,
            agent=load_agent(run_agent, options),
            cases=self._cases,
            scorers=self._evaluators,
            options=options,
            target=self.name,
        )
        return await run_planned(options, planner)

    run = sync_form(
        run_async,
        doc=(run_async.__doc__ or "").replace(
            "`run` is the same, for code that is not async.",
            "`run_async` is the same, to await.",
        ),
        instead="`await suite.run_async()`",
    )

    def __repr__(self) -> str:
        return (
            f"EvalSuite({self.name!r}, cases={len(self._cases)}, "
            f"evaluators={len(self._evaluators)})"
        )
