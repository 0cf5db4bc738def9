"""What a test of `@agenteval_cases` evaluates (`EvalSpec`), the decorator that makes it one
test per case, and a case's result against its requirement (`CaseResult`); see the package
docs. Nothing of agenteval is imported until a decorated test is collected."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar

import pytest

from agenteval.engine.options import Setting

if TYPE_CHECKING:
    from agenteval.case import EvalCase
    from agenteval.engine.options import RunOptions
    from agenteval.records import TrialResult
    from agenteval.scorers.base import ScorerLike
    from agenteval.trace import Trial

__all__ = ["CONCURRENCY", "CaseResult", "CasesDecorator", "EvalSpec", "agenteval_cases", "count"]

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")

CONCURRENCY = 4
"""A test's default `concurrency`: the trials of its one case in flight at once."""

_SHOWN = 200
_UNJUDGED_SHOWN = 5  # scorers named per unjudged trial in a report


class EvalSpec:
    """What one `@agenteval_cases` test evaluates, and what it requires (see the package).

    Its run settings are one `RunOptions` (`options`), checked as `agenteval.evaluate` checks
    them; a setting or requirement out of range is an `OptionError` (a `ConfigError` and a
    `ValueError`) when the test is decorated.
    """

    def __init__(
        self,
        cases: str | os.PathLike[str] | Sequence[Any],
        *,
        agent: Any,
        trials: int = 1,
        scorers: Sequence[ScorerLike] = (),
        builtins: bool = True,
        thresholds: Mapping[str, float] | None = None,
        required: Sequence[str] | None = None,
        pass_k: int | None = None,
        pass_k_min: float = 1.0,
        timeout: float | None = None,
        retries: int = 2,
        concurrency: int = CONCURRENCY,
        judge: Any = None,
        rubrics: Sequence[str] | None = None,
        tool_mocks: Mapping[str, Any] | None = None,
        user_simulator: Any = None,
    ) -> None:
        from agenteval.engine.options import OptionError, RunOptions

        self.options: RunOptions = RunOptions(
            trials=trials,
            concurrency=concurrency,
            timeout=timeout,
            retries=retries,
            builtins=builtins,
            judge=judge,
            rubrics=rubrics,
            tool_mocks=tool_mocks,
            user_simulator=user_simulator,
        )
        k = trials if pass_k is None else pass_k
        if not 1 <= k <= trials:
            raise OptionError(
                f"pass_k must be between 1 and trials ({trials}), got {pass_k}", field="pass_k"
            )
        if not 0.0 <= pass_k_min <= 1.0:
            raise OptionError(
                f"pass_k_min must be between 0 and 1, got {pass_k_min}", field="pass_k_min"
            )
        for name, value in (thresholds or {}).items():
            if not 0.0 <= value <= 1.0:
                raise OptionError(
                    f"the threshold of {name!r} must be between 0 and 1, got {value}",
                    field="thresholds",
                )
        self.cases = cases
        self.agent = agent
        self.scorers = list(scorers)
        self.thresholds = dict(thresholds or {})
        self.required = list(required) if required is not None else None
        self.pass_k = k
        self.pass_k_min = pass_k_min
        self._loaded: dict[Path, list[EvalCase]] = {}
        self._agent: tuple[Any, str] | None = None

    # The run settings, read as attributes (`spec.trials`): `options`'s.
    trials, builtins, timeout, retries = Setting(), Setting(), Setting(), Setting()
    concurrency, judge, rubrics, tool_mocks = Setting(), Setting(), Setting(), Setting()
    user_simulator = Setting()

    def load_cases(self, base_dir: Path) -> list[EvalCase]:
        """The cases, read once per process (files relative to `base_dir`)."""
        if base_dir not in self._loaded:
            from agenteval.case import EvalCase
            from agenteval.datasets import load_cases

            if isinstance(self.cases, str | os.PathLike):
                path = Path(self.cases)
                cases = load_cases(path if path.is_absolute() else base_dir / path)
            else:
                cases = [
                    case if isinstance(case, EvalCase) else EvalCase.model_validate(case)
                    for case in self.cases
                ]
            self._loaded[base_dir] = cases
        return self._loaded[base_dir]

    def dataset(self, base_dir: Path) -> str | None:
        """The case file, as the run records it."""
        if isinstance(self.cases, str | os.PathLike):
            path = Path(self.cases)
            return str((path if path.is_absolute() else base_dir / path).resolve())
        return None

    def resolve_agent(self, base_dir: Path) -> tuple[Any, str]:
        """The agent to call and how the run names it, resolved once per process."""
        if self._agent is None:
            self._agent = agent_of(self.agent, base_dir)
        return self._agent


class CasesDecorator(Protocol):
    """What `agenteval_cases(...)` returns: it marks a test function, and returns it."""

    def __call__(self, fn: F, /) -> F: ...


def _decorator(make: Callable[P, EvalSpec]) -> Callable[P, CasesDecorator]:
    """`agenteval_cases`, taking exactly `EvalSpec`'s arguments."""

    @functools.wraps(make)
    def agenteval_cases(*args: P.args, **kwargs: P.kwargs) -> CasesDecorator:
        spec = make(*args, **kwargs)

        def decorate(fn: F) -> F:
            marked = pytest.mark.usefixtures("agenteval_result")(fn)
            return pytest.mark.agenteval(spec)(marked)  # type: ignore[no-any-return]

        return decorate

    return agenteval_cases


agenteval_cases = _decorator(EvalSpec)
agenteval_cases.__name__ = agenteval_cases.__qualname__ = "agenteval_cases"
# `help` shows EvalSpec's arguments, returning the decorator.
setattr(  # noqa: B010
    agenteval_cases,
    "__signature__",
    inspect.signature(EvalSpec).replace(return_annotation="CasesDecorator"),
)
agenteval_cases.__doc__ = """Make the decorated test one test per case of `cases` (see the
    package docs).

    `cases`: a case file (relative to the test file) or a list of `EvalCase` (or mappings).
    `agent`: a callable, `module:function` / `path/to/file.py:function` (relative to the test
    file), an HTTP agent's URL, or an `agent:` mapping of agenteval.yaml (`{url: ...}`,
    `{model: ...}`). `trials`, `scorers`, `builtins`, `judge`, `rubrics`, `timeout`, `retries`
    `tool_mocks` (what tools answer in every case; a case's own mock of a tool wins) and
    `user_simulator` (who plays the user of cases with a `user_simulation` and no `script`)
    are `agenteval.evaluate`'s; `concurrency` bounds the trials of one case in flight at once.
    `thresholds`, `required`, `pass_k`, `pass_k_min`: what the case must meet to pass.
    """


@dataclass
class CaseResult:
    """One case's trials, their scores, and whether the case met its requirement."""

    case: EvalCase
    results: list[TrialResult]
    spec: EvalSpec
    run_id: str
    store: Path
    missing: tuple[int, ...] = ()
    """The case's trials with no stored result: the case fails while any is missing."""
    checked: bool = field(default=False, repr=False)

    @property
    def trials(self) -> list[Trial]:
        """The case's trials, in trial order."""
        return [result.trial for result in self.results]

    @property
    def outputs(self) -> list[str | None]:
        """Each trial's final answer."""
        return [result.trial.output for result in self.results]

    def _counted(self, name: str) -> bool:
        return self.spec.required is None or name in self.spec.required

    def problems(self, result: TrialResult) -> list[str]:
        """Why a trial failed (empty when it did not fail: it passed, or is `unscored`)."""
        found: list[str] = []
        failure = result.trial.failure
        if failure is not None:
            found.append(f"failed ({failure.cause.value}): {failure.message}")
        for name, score in result.scores.items():
            if not self._counted(name):
                continue
            if score.error is not None:
                found.append(f"{name} errored: {score.error}")
                continue
            if score.value is None:
                continue
            threshold = self.spec.thresholds.get(name)
            if threshold is not None:
                if score.value < threshold:
                    found.append(
                        f"{name} {score.value:.2f} < {threshold:g}{_because(score.reason)}"
                    )
            elif score.passed is False:
                found.append(f"{name} failed ({score.value:.2f}){_because(score.reason)}")
        return found

    def unscored(self, result: TrialResult) -> list[str]:
        """The scorers that count and could not score the trial, because its trace does not
        record what they read (`scorers.recorded`), each with why: such a trial neither
        passed nor failed on them, so it did not pass (empty when none)."""
        from agenteval.scorers.recorded import is_not_recorded

        return [
            f"{name} {score.reason}"
            for name, score in result.scores.items()
            if self._counted(name) and is_not_recorded(score)
        ]

    def unjudged(self, result: TrialResult) -> list[str]:
        """The scorers that count, each with why it gave no score, when none of them scored
        the trial (none applied: a case with no `expected_output` for `exact_match`): nothing
        checked it, so it did not pass; empty when one of them gave it a score or an error."""
        counted = [(name, score) for name, score in result.scores.items() if self._counted(name)]
        if any(score.value is not None or score.error is not None for _, score in counted):
            return []
        if not counted:
            return ["no scorer that counts scored it"]
        said = [
            f"{name} did not apply: {score.reason or 'no score'}"
            for name, score in counted[:_UNJUDGED_SHOWN]
        ]
        if len(counted) > _UNJUDGED_SHOWN:
            said.append(f"and {len(counted) - _UNJUDGED_SHOWN} more scorers that did not apply")
        return said

    @property
    def passes(self) -> list[bool]:
        """Whether each trial passed: nothing failed, a scorer that counts scored it, and none
        of them went unscored for a field its trace does not record."""
        return [
            not self.problems(result) and not self.unscored(result) and not self.unjudged(result)
            for result in self.results
        ]

    @property
    def undecided(self) -> bool:
        """Whether the case's verdict hangs on trials nothing checked: it did not pass, but
        would have had every trial not failed (only `unscored` or `unjudged`) passed. Such a
        case is skipped, with why, not passed (nothing checked it) and not failed (nothing
        failed)."""
        if self.missing or not self.results or self.passed:
            return False
        hopeful = sum(not self.problems(result) for result in self.results)
        from agenteval.report.statistics import pass_hat_k

        n, k = len(self.results), self.spec.pass_k
        return n >= k and pass_hat_k(n, hopeful, k) >= self.spec.pass_k_min - 1e-12

    @property
    def pass_k_value(self) -> float:
        """pass^k over the case's trials: C(c, k) / C(n, k) for c of n trials passing."""
        from agenteval.report.statistics import pass_hat_k

        n, c, k = len(self.results), sum(self.passes), self.spec.pass_k
        if n < k:
            return 0.0
        return pass_hat_k(n, c, k)

    @property
    def passed(self) -> bool:
        """Whether the case met its requirement (pass^k at least `pass_k_min`) with every one
        of its trials stored."""
        return (
            not self.missing
            and bool(self.results)
            and self.pass_k_value >= self.spec.pass_k_min - 1e-12
        )

    def report(self) -> str:
        """What the case did against its requirement, failing trials first-hand, secrets
        redacted."""
        n, c, k = len(self.results), sum(self.passes), self.spec.pass_k
        lines = [
            f"case {self.case.id!r}: {c} of {count(n, 'trial')} passed; "
            f"pass^{k} = {self.pass_k_value:.2f}, needs {self.spec.pass_k_min:.2f}"
        ]
        if self.undecided:
            lines.insert(0, f"case {self.case.id!r}: not judged: {self._not_judged_summary()}")
        if self.missing:
            from agenteval.records import MissingTrials

            lost = MissingTrials(
                self.run_id,
                expected=self.spec.trials,
                stored=self.spec.trials - len(self.missing),
                examples=tuple((self.case.id, index) for index in self.missing),
            )
            lines.insert(0, f"case {self.case.id!r}: {lost.describe()}; the run stays unfinished")
        for result in self.results:
            problems, unscored = self.problems(result), self.unscored(result)
            unjudged = [] if problems or unscored else self.unjudged(result)
            if not problems and not unscored and not unjudged:
                continue
            lines.append(f"  trial {result.trial.trial}:")
            lines.extend(f"    {problem}" for problem in problems)
            lines.extend(f"    {gap}" for gap in unscored)
            lines.extend(f"    {why}" for why in unjudged)
            if problems and result.trial.output is not None:
                lines.append(f"    answer: {_clip(result.trial.output)!r}")
        lines.append(f"run {self.run_id} in {self.store} (agenteval show {self.run_id})")
        # The trials are the ones in memory, not the store's redacted copies: the report goes to
        # a terminal or a CI log, so it is redacted as the store is.
        from agenteval.redaction import Redactor

        return Redactor.from_environment().redact_text("\n".join(lines))

    def _not_judged_summary(self) -> str:
        """Why the trials that did not fail were not judged: the `unscored` scorers, and the
        trials no scorer that counts applied to (`unjudged`)."""
        said: list[str] = []
        if any(self.unscored(result) for result in self.results):
            said.append(self._unscored_summary())
        unjudged = sum(
            bool(not self.problems(result) and not self.unscored(result) and self.unjudged(result))
            for result in self.results
        )
        if unjudged:
            said.append(
                f"no scorer that counts applied to {unjudged} of "
                f"{count(len(self.results), 'trial')}, so nothing checked it (give the case "
                "what those scorers check, as each trial says below, or count other scorers)"
            )
        return "; ".join(said)

    def _unscored_summary(self) -> str:
        """`tool_selection not scored on 2 of 3 trials (...)`: the `unscored` scorers."""
        times: dict[str, int] = {}
        for result in self.results:
            for name, score in result.scores.items():
                if f"{name} {score.reason}" in self.unscored(result):
                    times[name] = times.get(name, 0) + 1
        said = "; ".join(
            f"{name} not scored on {k} of {count(len(self.results), 'trial')}"
            for name, k in times.items()
        )
        scorers = "scorer reads" if len(times) == 1 else "scorers read"
        return (
            f"{said}: the trace does not record what the {scorers}, so nothing checked it "
            "(record it, as each trial says below, or leave the scorer out of `required`)"
        )

    def check(self) -> None:
        """Fail the test, with the failing scorers and reasons, unless the case passed; skip
        it, with the scorers its trials' traces could not feed, when only those kept it from
        passing (`undecided`)."""
        self.checked = True
        if self.passed:
            return
        if self.undecided:
            pytest.skip(self.report())
        pytest.fail(self.report(), pytrace=False)


def _because(reason: str | None) -> str:
    return f": {_clip(reason)}" if reason else ""


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN else flat[:_SHOWN] + "…"


def agent_of(agent: Any, base_dir: Path) -> tuple[Any, str]:
    """The agent `agent` describes, ready to call, and how the run names it."""
    from agenteval.agents.builtin import BuiltinAgentConfig
    from agenteval.agents.http import HttpAgentConfig
    from agenteval.config import resolve_agent

    if isinstance(agent, str) and agent.startswith(("http://", "https://")):
        return resolve_agent({"url": agent})
    if isinstance(agent, str | Mapping | HttpAgentConfig | BuiltinAgentConfig):
        return resolve_agent(agent, base_dir=base_dir)
    from agenteval.agents.frameworks import as_framework_agent

    framework = as_framework_agent(agent)
    if framework is not None:
        return framework, framework.reference
    if not callable(agent):
        raise TypeError(f"agent must be callable, a reference or an agent mapping, not {agent!r}")
    name = getattr(agent, "__qualname__", None) or type(agent).__qualname__
    return agent, f"{getattr(agent, '__module__', '?')}:{name}"


def count(n: int, noun: str) -> str:
    """`1 case`, `2 cases`."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
