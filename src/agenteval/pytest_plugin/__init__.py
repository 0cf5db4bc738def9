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
raised fails it (its error is the reason). A trial no scorer that counts scored (none applied)
was checked by nothing: it does not pass, and a case whose verdict hangs only on such trials
is skipped, naming the scorers and why none applied, never passed. A judge asked for
(`judge=`, else `AGENTEVAL_JUDGE`) that cannot run here errors each case before it runs.

A scorer that counts and applies to the case but could not score a trial, because the trial's
trace does not record what it reads (`Trial.not_recorded`: an OpenTelemetry instrumentation
without message content capture, openai-v2's default), leaves that trial without a verdict:
nothing checked it. When only such trials keep the case from passing (it would pass had they
passed), the test is *skipped*, naming the scorers, how many trials, and the setting that
records the field; a case that fails anyway still fails. A scorer that would not apply to the
case anyway (`tool_selection` on a case with no `expected_tools`) gives its ordinary no-score
and holds nothing up; `required` leaves out the scorers you do not want to wait on.

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

The package: `cases` (the decorator, `EvalSpec`, `CaseResult`), `running` (one case through
the engine), `state` (the session's runs and how they end), and here pytest's hooks and
fixtures.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .cases import CaseResult, EvalSpec, agenteval_cases, count
from .running import evaluate_case
from .state import Session, end_runs

if TYPE_CHECKING:
    from agenteval.case import EvalCase

__all__ = ["CaseResult", "EvalSpec", "agenteval_cases"]

_MARKER = "agenteval"
_DEFAULT_STORE = Path(".agenteval") / "runs.db"


_SESSION = pytest.StashKey[Session]()
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
        session = Session(workerinput["agenteval_session"], Path(workerinput["agenteval_store"]))
    else:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        session = Session(f"{stamp}/{secrets.token_hex(4)}", _store_path(config))
    config.stash[_SESSION] = session
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(session), "agenteval-xdist")


class _XdistHooks:
    """pytest-xdist's hooks, registered only when it is installed: the controller hands its
    session to the workers, and hears back which runs they wrote (from each test's report as
    it comes, and from each worker's output when it ends)."""

    def __init__(self, session: Session) -> None:
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
    state.ended = end_runs(state)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_SESSION, None)
    if state is None or not state.ended or hasattr(config, "workerinput"):
        return
    from agenteval.records import RunStatus

    terminalreporter.section("agenteval")
    for run in state.ended:
        counted = (
            count(run.cases, "case")
            if run.ran == run.cases
            else f"{run.ran} of {count(run.cases, 'case')}"
        )
        left = run.cases - run.ran
        notes = "".join(
            (
                f"; {left} not run: deselected or stopped" if left else "",
                f"; {count(run.unstored, 'trial')} not stored" if run.unstored else "",
            )
        )
        status = "" if run.status is RunStatus.FINISHED else f" · {run.status.value}"
        terminalreporter.write_line(
            f"run {run.run_id}: {run.test} ({counted} × {count(run.trials, 'trial')}{notes})"
            f"{status} in {state.store} · agenteval show {run.run_id} --store {state.store}"
        )


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
        result = asyncio.run(evaluate_case(spec, agenteval_case, session, test, base_dir))
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
