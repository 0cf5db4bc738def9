"""agenteval's pytest plugin: an eval that lives in the test suite, one test per case.

    from agenteval.pytest_plugin import agenteval_cases

    @agenteval_cases(
        "cases.yaml",                    # relative to this test file
        agent="agent.py:answer",         # or a callable, {url: ...}, {model: ...}
        trials=3,
        thresholds={"exact_match": 1.0, "step_efficiency": 0.5},
        pass_k=3,                        # pass^3: all three trials must pass
    )
    def test_support_agent(agenteval_result):
        '''Each case of cases.yaml is its own test, with the case id as the test id.'''

Each case becomes its own test (`test_support_agent[refund-window]`, ...). A test runs its
case's trials through the engine, scores them, and fails with the failing scorers and their
reasons unless the case meets its requirement:

- a trial *passes* when it completed (no `failure`) and every scorer that scored it passed:
  `thresholds` sets a scorer's pass mark on its value (`value >= threshold`), others use the
  scorer's own `passed`; `required` limits which scorers count (default: all); a scorer that
  did not apply (no score) or that errored counts as noted below;
- the *case passes* when pass^k (the chance that k trials drawn from its n trials all pass,
  τ-bench's C(c, k) / C(n, k) for c passing trials) is at least `pass_k_min`. The default,
  `pass_k=trials` and `pass_k_min=1.0`, asks that every trial pass; `pass_k=1` with
  `pass_k_min=0.8` asks for a pass rate of 80%.

A scorer that did not apply gives no score and neither passes nor fails a trial; a scorer that
raised fails it (its error is the reason).

A case is judged only on trials the store holds: when any of its trials has no stored
result (the store lost it, say), the test fails naming the missing trials, however the
stored ones did, and the run is not marked finished.

The test's body runs after the case has been evaluated: `agenteval_result` (a `CaseResult`)
holds the case, its trial results and scores, `passed`, `pass_k_value` and `report()`; assert
more there if you like. The requirement is checked after the body (or when it calls
`agenteval_result.check()`).

The run is stored like any other: one run per decorated test function per pytest session, in
the run store (`--agenteval-store PATH`, the `agenteval_store` ini option, `AGENTEVAL_STORE`,
else `.agenteval/runs.db` under the rootdir), so `agenteval show`, reports and gates work on
it. Under pytest-xdist every worker writes its cases' trials into that same run (the
controller hands the workers one session id; the store takes concurrent writers). The run is
marked finished when its last trial is stored; a session that ran only some of its cases
(`-k`, `--lf`, `-x`, Ctrl-C) ends it `partial`: never resumed (the next session makes a new
run), never complete (a gate refuses it), its stored trials shown and compared like any
other's. The terminal summary names each run, the cases that ran and how many did not.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from agenteval.case import EvalCase
    from agenteval.records import RunInfo, RunStatus, TrialResult
    from agenteval.trace import Trial

__all__ = ["CaseResult", "EvalSpec", "agenteval_cases"]

F = TypeVar("F", bound=Callable[..., Any])

_MARKER = "agenteval"
_DEFAULT_STORE = Path(".agenteval") / "runs.db"
_SHOWN = 200


# --- The API -------------------------------------------------------------------------------------


class EvalSpec:
    """What one `@agenteval_cases` test evaluates, and what it requires (see the module)."""

    def __init__(
        self,
        cases: str | os.PathLike[str] | Sequence[Any],
        *,
        agent: Any,
        trials: int = 1,
        scorers: Sequence[Any] = (),
        builtins: bool = True,
        thresholds: Mapping[str, float] | None = None,
        required: Sequence[str] | None = None,
        pass_k: int | None = None,
        pass_k_min: float = 1.0,
        timeout: float | None = None,
        retries: int = 2,
        concurrency: int = 4,
        judge: Any = None,
        rubrics: Sequence[str] | None = None,
    ) -> None:
        if trials < 1:
            raise ValueError(f"trials must be at least 1, got {trials}")
        k = trials if pass_k is None else pass_k
        if not 1 <= k <= trials:
            raise ValueError(f"pass_k must be between 1 and trials ({trials}), got {pass_k}")
        if not 0.0 <= pass_k_min <= 1.0:
            raise ValueError(f"pass_k_min must be between 0 and 1, got {pass_k_min}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        if retries < 0:
            raise ValueError(f"retries must be 0 or more, got {retries}")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        for name, value in (thresholds or {}).items():
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"the threshold of {name!r} must be between 0 and 1, got {value}")
        self.cases = cases
        self.agent = agent
        self.trials = trials
        self.scorers = list(scorers)
        self.builtins = builtins
        self.thresholds = dict(thresholds or {})
        self.required = list(required) if required is not None else None
        self.pass_k = k
        self.pass_k_min = pass_k_min
        self.timeout = timeout
        self.retries = retries
        self.concurrency = concurrency
        self.judge = judge
        self.rubrics = list(rubrics) if rubrics is not None else None
        self._loaded: dict[Path, list[EvalCase]] = {}
        self._agent: tuple[Any, str] | None = None

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
            self._agent = _resolve_agent(self.agent, base_dir)
        return self._agent


def agenteval_cases(
    cases: str | os.PathLike[str] | Sequence[Any],
    *,
    agent: Any,
    trials: int = 1,
    scorers: Sequence[Any] = (),
    builtins: bool = True,
    thresholds: Mapping[str, float] | None = None,
    required: Sequence[str] | None = None,
    pass_k: int | None = None,
    pass_k_min: float = 1.0,
    timeout: float | None = None,
    retries: int = 2,
    concurrency: int = 4,
    judge: Any = None,
    rubrics: Sequence[str] | None = None,
) -> Callable[[F], F]:
    """Make the decorated test one test per case of `cases` (see the module docs).

    `cases`: a case file (relative to the test file) or a list of `EvalCase` (or mappings).
    `agent`: a callable, `module:function` / `path/to/file.py:function` (relative to the test
    file), an HTTP agent's URL, or an `agent:` mapping of agenteval.yaml (`{url: ...}`,
    `{model: ...}`). `scorers`, `builtins`, `judge`, `rubrics`, `timeout`, `retries` are
    `agenteval.evaluate`'s; `concurrency` bounds the trials of one case in flight at once.
    `thresholds`, `required`, `pass_k`, `pass_k_min`: what the case must meet to pass.
    """
    spec = EvalSpec(
        cases,
        agent=agent,
        trials=trials,
        scorers=scorers,
        builtins=builtins,
        thresholds=thresholds,
        required=required,
        pass_k=pass_k,
        pass_k_min=pass_k_min,
        timeout=timeout,
        retries=retries,
        concurrency=concurrency,
        judge=judge,
        rubrics=rubrics,
    )

    def decorate(fn: F) -> F:
        marked = pytest.mark.usefixtures("agenteval_result")(fn)
        return pytest.mark.agenteval(spec)(marked)  # type: ignore[no-any-return]

    return decorate


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

    def problems(self, result: TrialResult) -> list[str]:
        """Why a trial did not pass (empty when it passed)."""
        found: list[str] = []
        failure = result.trial.failure
        if failure is not None:
            found.append(f"failed ({failure.cause.value}): {failure.message}")
        for name, score in result.scores.items():
            if self.spec.required is not None and name not in self.spec.required:
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

    @property
    def passes(self) -> list[bool]:
        """Whether each trial passed."""
        return [not self.problems(result) for result in self.results]

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
            f"case {self.case.id!r}: {c} of {_count(n, 'trial')} passed; "
            f"pass^{k} = {self.pass_k_value:.2f}, needs {self.spec.pass_k_min:.2f}"
        ]
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
            problems = self.problems(result)
            if not problems:
                continue
            lines.append(f"  trial {result.trial.trial}:")
            lines.extend(f"    {problem}" for problem in problems)
            if result.trial.output is not None:
                lines.append(f"    answer: {_clip(result.trial.output)!r}")
        lines.append(f"run {self.run_id} in {self.store} (agenteval show {self.run_id})")
        # The trials are the ones in memory, not the store's redacted copies: the report goes to
        # a terminal or a CI log, so it is redacted as the store is.
        from agenteval.redaction import Redactor

        return Redactor.from_environment().redact_text("\n".join(lines))

    def check(self) -> None:
        """Fail the test, with the failing scorers and reasons, unless the case passed."""
        self.checked = True
        if not self.passed:
            pytest.fail(self.report(), pytrace=False)


def _because(reason: str | None) -> str:
    return f": {_clip(reason)}" if reason else ""


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN else flat[:_SHOWN] + "…"


def _resolve_agent(agent: Any, base_dir: Path) -> tuple[Any, str]:
    from agenteval.agents.builtin import BuiltinAgentConfig
    from agenteval.agents.http import HttpAgentConfig
    from agenteval.config import resolve_agent

    if isinstance(agent, str) and agent.startswith(("http://", "https://")):
        return resolve_agent({"url": agent})
    if isinstance(agent, str | Mapping | HttpAgentConfig | BuiltinAgentConfig):
        return resolve_agent(agent, base_dir=base_dir)
    if not callable(agent):
        raise TypeError(f"agent must be callable, a reference or an agent mapping, not {agent!r}")
    name = getattr(agent, "__qualname__", None) or type(agent).__qualname__
    return agent, f"{getattr(agent, '__module__', '?')}:{name}"


# --- One session ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ended:
    """A run as the session left it, for the terminal summary: how many of its cases the
    session evaluated, how many trials of those it lacks, and its status (`finished`, or
    `partial` when some never ran or were not stored)."""

    run_id: str
    test: str
    cases: int
    ran: int
    trials: int
    unstored: int
    """Trials of the evaluated cases with no stored result (the store lost them)."""
    status: RunStatus


@dataclass
class _Session:
    """The plugin's state for one pytest session (one process)."""

    token: str
    store: Path
    created: set[str] = field(default_factory=set)
    runs: dict[str, set[str]] = field(default_factory=dict)
    """The runs the session wrote to, each with the cases it evaluated to the end: in this
    process, or (the controller under xdist) as the workers' reports and outputs name them."""

    def ran(self, run_id: str, case_id: str | None = None) -> None:
        """Note the run, and a case of it evaluated to the end."""
        cases = self.runs.setdefault(run_id, set())
        if case_id is not None:
            cases.add(case_id)

    ended: list[_Ended] = field(default_factory=list)

    def run_id(self, test: str) -> str:
        """The run of one decorated test in this session: the same in every xdist worker, and
        shaped like any run id (it sorts by time)."""
        stamp = self.token.split("/", 1)[0]
        digest = hashlib.sha256(f"{self.token}|{test}".encode()).hexdigest()[:4]
        return f"{stamp}-{digest}"


_SESSION = pytest.StashKey[_Session]()
_RUN_OF = pytest.StashKey[str]()
"""The run a test's case is evaluated into, to name it on the test's reports."""
_CASE_RAN = pytest.StashKey[str]()
"""The test's case, once its evaluation ended (not stopped halfway)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agenteval", "agenteval: evals as tests")
    group.addoption(
        "--agenteval-store",
        default=None,
        metavar="PATH",
        help="The run store for @agenteval_cases tests (default: $AGENTEVAL_STORE, else "
        ".agenteval/runs.db under the rootdir).",
    )
    parser.addini("agenteval_store", "The run store for @agenteval_cases tests.", default=None)


def _store_path(config: pytest.Config) -> Path:
    option = config.getoption("agenteval_store", None)
    if option:
        return (config.invocation_params.dir / str(option)).resolve()
    env = os.environ.get("AGENTEVAL_STORE")
    if env:
        return (config.invocation_params.dir / env).resolve()
    ini = config.getini("agenteval_store")
    if ini:
        return (config.rootpath / str(ini)).resolve()
    return (config.rootpath / _DEFAULT_STORE).resolve()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "agenteval(spec): one test per case of an agenteval dataset; set by @agenteval_cases",
    )
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None and "agenteval_session" in workerinput:
        session = _Session(workerinput["agenteval_session"], Path(workerinput["agenteval_store"]))
    else:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        session = _Session(f"{stamp}/{secrets.token_hex(4)}", _store_path(config))
    config.stash[_SESSION] = session
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(session), "agenteval-xdist")


class _XdistHooks:
    """pytest-xdist's hooks, registered only when it is installed: the controller hands its
    session to the workers, and hears back which runs they wrote (from each test's report as
    it comes, and from each worker's output when it ends)."""

    def __init__(self, session: _Session) -> None:
        self.session = session

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["agenteval_session"] = self.session.token
        node.workerinput["agenteval_store"] = str(self.session.store)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output: dict[str, Any] = getattr(node, "workeroutput", None) or {}
        for run_id, cases in dict(output.get("agenteval_runs", {})).items():
            for case_id in [None, *cases]:
                self.session.ran(run_id, case_id)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        run_id = getattr(report, "agenteval_run", None)
        if isinstance(run_id, str):
            case_id = getattr(report, "agenteval_case", None)
            self.session.ran(run_id, case_id if isinstance(case_id, str) else None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    run_id = item.stash.get(_RUN_OF, None)
    if run_id is not None:
        # Carried to the xdist controller with the report (its extra attributes travel), so
        # the process that ends the session's runs knows them even if a worker dies.
        report.agenteval_run = run_id
        report.agenteval_case = item.stash.get(_CASE_RAN, None)
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    state = session.config.stash.get(_SESSION, None)
    if state is None:
        return
    if workeroutput is not None:
        workeroutput["agenteval_runs"] = {run: sorted(cases) for run, cases in state.runs.items()}
        return
    # The session (or the xdist controller, once every worker is done) ends its runs: here,
    # after an interrupted or stopped session too, as pytest calls this hook whatever ended it.
    state.ended = _end_runs(state)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_SESSION, None)
    if state is None or not state.ended or hasattr(config, "workerinput"):
        return
    from agenteval.records import RunStatus

    terminalreporter.section("agenteval")
    for run in state.ended:
        counted = (
            _count(run.cases, "case")
            if run.ran == run.cases
            else f"{run.ran} of {_count(run.cases, 'case')}"
        )
        left = run.cases - run.ran
        notes = "".join(
            (
                f"; {left} not run: deselected or stopped" if left else "",
                f"; {_count(run.unstored, 'trial')} not stored" if run.unstored else "",
            )
        )
        status = "" if run.status is RunStatus.FINISHED else f" · {run.status.value}"
        terminalreporter.write_line(
            f"run {run.run_id}: {run.test} ({counted} × {_count(run.trials, 'trial')}{notes})"
            f"{status} in {state.store} · agenteval show {run.run_id} --store {state.store}"
        )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker(_MARKER)
    if marker is None:
        return
    spec = _spec_of(marker)
    from agenteval.errors import AgentEvalError

    problem: str | None = None
    try:
        cases = spec.load_cases(metafunc.definition.path.parent)
    except AgentEvalError as exc:
        problem = exc.render()
    if problem is not None:  # failed outside the handler: no chained traceback
        pytest.fail(f"agenteval: {problem}", pytrace=False)
    if not cases:
        pytest.fail(f"agenteval: no cases in {spec.cases}", pytrace=False)
    metafunc.parametrize("agenteval_case", cases, ids=[case.id for case in cases])


def _spec_of(marker: pytest.Mark) -> EvalSpec:
    if len(marker.args) != 1 or not isinstance(marker.args[0], EvalSpec):
        raise pytest.UsageError(
            "use @agenteval_cases(...) (from agenteval.pytest_plugin), not the agenteval marker"
        )
    return marker.args[0]


@pytest.fixture
def agenteval_case(request: pytest.FixtureRequest) -> EvalCase:
    """The case a test of `@agenteval_cases` evaluates (given by the parametrisation)."""
    pytest.fail("agenteval_case is only given to tests decorated with @agenteval_cases")


@pytest.fixture
def agenteval_result(request: pytest.FixtureRequest, agenteval_case: EvalCase) -> CaseResult:
    """The case evaluated: its trials run, scored and stored (see `CaseResult`)."""
    marker = request.node.get_closest_marker(_MARKER)
    if marker is None:
        pytest.fail("agenteval_result is only given to tests decorated with @agenteval_cases")
    spec = _spec_of(marker)
    session = request.config.stash[_SESSION]
    node = request.node
    test = f"{node.parent.nodeid}::{getattr(node, 'originalname', node.name)}"
    base_dir = Path(node.path).parent
    node.stash[_RUN_OF] = session.run_id(test)
    from agenteval.errors import AgentEvalError

    try:
        result = asyncio.run(_evaluate_case(spec, agenteval_case, session, test, base_dir))
        node.stash[_CASE_RAN] = agenteval_case.id
        return result
    except AgentEvalError as exc:
        problem = exc.render()
    pytest.fail(f"agenteval: {problem}", pytrace=False)  # outside the handler: no chaining


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    outcome = yield
    result = getattr(item, "funcargs", {}).get("agenteval_result")
    if isinstance(result, CaseResult) and not result.checked:
        result.check()
    return outcome


# --- Running one case ----------------------------------------------------------------------------


async def _evaluate_case(
    spec: EvalSpec, case: EvalCase, session: _Session, test: str, base_dir: Path
) -> CaseResult:
    """Run the case's trials through the engine, score them, store them in the test's run."""
    from agenteval.agents.tools import registered_tools
    from agenteval.catalog import resolve_run_scorers
    from agenteval.engine.scheduler import EngineSettings, execute
    from agenteval.judge.choice import choose_judge
    from agenteval.judge.rubrics import RUBRICS
    from agenteval.retry import RetryPolicy
    from agenteval.scorers.base import scorer_name
    from agenteval.scorers.context import ScoringContext
    from agenteval.store import RunStore

    agent, agent_ref = spec.resolve_agent(base_dir)
    cases = spec.load_cases(base_dir)
    choice = choose_judge(spec.judge)
    try:
        refs = list(spec.scorers)
        if spec.rubrics is not None:
            refs += spec.rubrics
        elif choice.config is not None:
            refs += list(RUBRICS)
        context = ScoringContext(
            tools=registered_tools(),
            judge=choice.judge,
            judge_problem=choice.problem,
            base_dir=base_dir,
        )
        resolution = resolve_run_scorers(refs, builtins=spec.builtins, context=context)
        scorers = resolution.scorers
        _check_named_scorers(spec, [scorer_name(s) for s in scorers])
        run_id = session.run_id(test)
        settings = EngineSettings(
            trials=spec.trials,
            concurrency=spec.concurrency,
            timeout_s=spec.timeout,
            retry=RetryPolicy(max_retries=spec.retries),
        )
        results: list[TrialResult] = []
        with RunStore(session.store) as store:
            if run_id not in session.created:
                _create_run(
                    store,
                    run_id,
                    spec,
                    cases,
                    test,
                    agent_ref,
                    refs,
                    base_dir,
                    choice,
                    resolution.references,
                )
                session.created.add(run_id)
                session.ran(run_id)
            await execute(agent, [case], scorers, settings, store, run_id, on_result=results.append)
            # Judged on what the store holds: a trial whose result was lost is missing, not
            # passed on the strength of the copy in memory.
            stored = store.stored_trials(run_id, case.id)
            _finish_if_complete(store, run_id)
            session.ran(run_id, case.id)
    finally:
        await choice.aclose()
    kept = sorted(
        (result for result in results if result.trial.trial in stored),
        key=lambda result: result.trial.trial,
    )
    missing = tuple(index for index in range(spec.trials) if index not in stored)
    return CaseResult(case, kept, spec, run_id, session.store, missing)


def _check_named_scorers(spec: EvalSpec, names: Sequence[str]) -> None:
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


def _create_run(
    store: Any,
    run_id: str,
    spec: EvalSpec,
    cases: Sequence[EvalCase],
    test: str,
    agent_ref: str,
    refs: Sequence[Any],
    base_dir: Path,
    choice: Any,
    references: dict[str, Any],
) -> None:
    """Store the run with all its cases; another xdist worker may have stored it first."""
    from agenteval.agents.tools import known_tools
    from agenteval.catalog import SCORER_REFS, scorer_reference
    from agenteval.engine.ownership import current_owner
    from agenteval.errors import StoreError
    from agenteval.records import PYTEST_TARGET, RunInfo

    record = choice.record()
    info = RunInfo(
        run_id=run_id,
        target=f"{PYTEST_TARGET}{test}",
        agent=agent_ref,
        dataset=spec.dataset(base_dir),
        trials=spec.trials,
        concurrency=spec.concurrency,
        timeout_s=spec.timeout,
        max_retries=spec.retries,
        scorers=[ref for ref in map(scorer_reference, refs) if ref is not None],
        builtins=spec.builtins,
        tools=known_tools(),
        settings={
            "owner": current_owner(),
            SCORER_REFS: references,
            "base_dir": str(base_dir.resolve()),
            "pytest": {
                "test": test,
                "thresholds": spec.thresholds,
                "required": spec.required,
                "pass_k": spec.pass_k,
                "pass_k_min": spec.pass_k_min,
            },
            **({"judge": record} if record else {}),
        },
    )
    try:
        store.create_run(info, cases)
    except StoreError:
        store.get_info(run_id)  # stored by another worker: use it (else this raises)


def _finish_if_complete(store: Any, run_id: str) -> None:
    """Mark the run finished once its every (case, trial) is stored (counted as `agenteval
    run` counts, `RunStore.missing_trials`)."""
    from agenteval.agents.tools import known_tools
    from agenteval.records import RunStatus
    from agenteval.trace import utc_now

    if store.missing_trials(run_id, examples=0).count:
        return
    info = store.get_info(run_id)
    if info.status is RunStatus.FINISHED:
        return
    store.update_info(
        info.model_copy(
            update={
                "status": RunStatus.FINISHED,
                "finished_at": utc_now(),
                "tools": {**info.tools, **known_tools()},
            }
        )
    )


def _end_runs(state: _Session) -> list[_Ended]:
    """End each run the session wrote to: `finished` when every (case, trial) is stored,
    else `partial` (the session ran only some cases: `-k`, `--lf`, `-x`, Ctrl-C, a crashed
    worker). A pytest run is never resumed (the next session starts a new one), so leaving it
    `running` would say forever that something is still coming."""
    if not state.runs:
        return []
    from agenteval.errors import StoreError
    from agenteval.records import pytest_test_of
    from agenteval.store import RunStore

    ended: list[_Ended] = []
    try:
        store = RunStore(state.store, create=False)
    except StoreError:
        return []  # the store went away: the tests that wrote to it said so already
    with store:
        for run_id in sorted(state.runs):
            try:
                info = store.change_info(run_id, lambda info: _ended_info(store, info))
                missing = store.missing_trials(run_id, examples=0).count
                cases = store.count_cases(run_id)
            except StoreError:
                # Never stored (its first case failed before the run was made), or the store
                # is damaged (its tests said so): pytest's own summary must still print.
                continue
            test = pytest_test_of(info.target) or run_id
            ran = len(state.runs[run_id])
            # Trials missing beyond the cases never run: the store lost them (at most: a
            # stopped case may have stored some of its trials).
            unstored = max(missing - (cases - ran) * info.trials, 0)
            ended.append(_Ended(run_id, test, cases, ran, info.trials, unstored, info.status))
    return ended


def _ended_info(store: Any, info: RunInfo) -> RunInfo:
    """The run's settings as the session ends it (see `_end_runs`); a run already finished,
    or that another process resumed or ended, is left as it is. Called inside the store's
    write transaction, so the count of stored trials is the one the status is stored with."""
    from agenteval.agents.tools import known_tools
    from agenteval.records import RunStatus
    from agenteval.trace import utc_now

    if info.status is not RunStatus.RUNNING or info.settings.get("pytest") is None:
        return info
    complete = store.missing_trials(info.run_id, examples=0).count == 0
    return info.model_copy(
        update={
            "status": RunStatus.FINISHED if complete else RunStatus.PARTIAL,
            "finished_at": utc_now(),
            "tools": {**info.tools, **known_tools()},
        }
    )
