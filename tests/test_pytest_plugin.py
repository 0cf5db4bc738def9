"""The pytest plugin: each case its own test, requirements per scorer and over trials, the run
stored like any other, under pytest-xdist too. Each test runs pytest on a small project."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from tests.agents.fakes_http import FakeAgentService, reply

from agenteval.run import RunStatus
from agenteval.store import RunStore

pytest_plugins = ("pytester",)

AGENT = '''
import threading

import agenteval

_lock = threading.Lock()
_calls = {"n": 0}


@agenteval.tool
def pp_lookup(city: str) -> dict:
    """Look a city up."""
    return {"city": city, "population": 2100000}


def answer(question: str) -> str:
    if "population" in question:
        return f"{pp_lookup(question.split()[-1])['population']:,}"
    if "flaky" in question:
        with _lock:
            _calls["n"] += 1
            return "yes" if _calls["n"] % 2 else "no"
    if "crash" in question:
        raise RuntimeError("the agent fell over")
    return "Paris"
'''

CASES = """
- id: capital
  input: What is the capital of France?
  expected_output: paris
- id: population
  input: What is the population of Paris
  expected_output: 2100000
  expected_tools: [pp_lookup]
- id: wrong-city
  input: What is the capital of Spain?
  expected_output: Madrid
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", cases=CASES)
    (pytester.path / "agent.py").write_text(AGENT, encoding="utf-8")
    pytester.makeini(
        "[pytest]\nagenteval_store = evals/runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    return pytester


def _runs(path: Path) -> list[tuple[str, RunStatus, int, int]]:
    with RunStore(path, create=False) as store:
        return [
            (row.run_id, row.status, row.trials_done, row.trials_total) for row in store.list_runs()
        ]


def test_each_case_is_a_test_named_by_its_id_and_failing_with_its_reasons(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_support="""
        from agenteval.pytest_plugin import agenteval_cases

        @agenteval_cases("cases.yaml", agent="agent.py:answer", trials=2)
        def test_support(agenteval_result):
            '''Each case of cases.yaml.'''
        """
    )
    result = project.runpytest("-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_support.py::test_support?capital? PASSED*",
            "*test_support.py::test_support?population? PASSED*",
            "*test_support.py::test_support?wrong-city? FAILED*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "case 'wrong-city': 0 of 2 trials passed; pass^2 = 0.00, needs 1.00",
            "  trial 0:",
            "    exact_match failed (0.00): expected 'Madrid', got 'Paris'",
            "    answer: 'Paris'",
            "  trial 1:",
            "*agenteval*",
            "run *: test_support.py::test_support (3 cases × 2 trials) in *evals/runs.db*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    # One run, like any other: finished, every trial stored, scored and its tools known.
    store = project.path / "evals" / "runs.db"
    ((run_id, status, done, total),) = _runs(store)
    assert (status, done, total) == (RunStatus.FINISHED, 6, 6)
    with RunStore(store, create=False) as runs:
        info = runs.get_info(run_id)
        results = list(runs.iter_results(run_id))
    assert info.target == "pytest:test_support.py::test_support"
    assert info.agent == "agent.py:answer"
    assert "pp_lookup" in info.tools
    assert info.settings["pytest"]["pass_k"] == 2
    assert {r.case.id for r in results} == {"capital", "population", "wrong-city"}
    assert all("exact_match" in r.scores for r in results)


def test_thresholds_required_scorers_and_agent_failures(project: pytest.Pytester) -> None:
    project.makefile(
        ".yaml",
        more="""
        - id: crash
          input: please crash
          expected_output: anything
        - id: efficient
          input: What is the population of Paris
          expected_output: 2100000
          max_tool_calls: 1
        """,
    )
    project.makepyfile(
        test_more="""
        from agenteval.pytest_plugin import agenteval_cases

        @agenteval_cases(
            "more.yaml", agent="agent.py:answer", thresholds={"step_efficiency": 1.0}
        )
        def test_strict(agenteval_result):
            pass

        @agenteval_cases("cases.yaml", agent="agent.py:answer", required=["tool_selection"])
        def test_only_tools(agenteval_result):
            # Only tool_selection counts: the wrong city's wrong answer fails nothing, and
            # with no expected_tools nothing judged it: skipped, like the capital.
            assert agenteval_result.passed or agenteval_result.undecided
            assert agenteval_result.outputs == [agenteval_result.trials[0].output]
        """
    )
    result = project.runpytest("-v")
    result.assert_outcomes(passed=2, failed=1, skipped=2)
    result.stdout.fnmatch_lines(["*test_only_tools?population? PASSED*"])
    result.stdout.fnmatch_lines(["*test_only_tools?wrong-city? SKIPPED*"])
    result.stdout.fnmatch_lines(
        [
            "case 'crash': 0 of 1 trial passed; pass^1 = 0.00, needs 1.00",
            "  trial 0:",
            "    failed (agent_error): the agent fell over",
            "    exact_match failed (0.00)*",
        ]
    )
    result.stdout.fnmatch_lines(["*test_strict?efficient? PASSED*"])
    assert len(_runs(project.path / "evals" / "runs.db")) == 2


def test_pass_k_over_trials(project: pytest.Pytester) -> None:
    project.makefile(
        ".yaml", flaky="- id: flaky\n  input: is it flaky?\n  expected_output: 'yes'\n"
    )
    project.makepyfile(
        test_flaky="""
        from agenteval.pytest_plugin import agenteval_cases

        # The agent answers right every other call: 2 of 4 trials pass.
        @agenteval_cases("flaky.yaml", agent="agent.py:answer", trials=4, pass_k=1, pass_k_min=0.5)
        def test_half_the_time(agenteval_result):
            assert agenteval_result.passes.count(True) == 2
            assert agenteval_result.pass_k_value == 0.5

        @agenteval_cases("flaky.yaml", agent="agent.py:answer", trials=4, pass_k=2, pass_k_min=0.5)
        def test_twice_in_a_row(agenteval_result):
            pass
        """
    )
    result = project.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    # C(2, 2) / C(4, 2) = 1/6
    result.stdout.fnmatch_lines(["case 'flaky': 2 of 4 trials passed; pass^2 = 0.17, needs 0.50"])


def test_the_body_can_check_and_assert_more(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_body="""
        from agenteval import EvalCase
        from agenteval.pytest_plugin import agenteval_cases

        CASES = [EvalCase(id="paris", input="Capital of France?", expected_output="Paris")]

        def agent(question):
            return "Paris"

        @agenteval_cases(CASES, agent=agent)
        def test_body(agenteval_result, agenteval_case):
            agenteval_result.check()
            assert agenteval_case.id == "paris"
            assert agenteval_result.outputs == ["Lyon"], "the body's own assertion"
        """
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the body's own assertion*"])


def test_an_http_agent_and_the_default_store(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTEVAL_STORE", raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    pytester.makefile(".yaml", cases="- id: hi\n  input: Say hi\n  expected_output: hi\n")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    with FakeAgentService(default=reply({"output": "hi"})) as service:
        pytester.makepyfile(
            test_http=f"""
            from agenteval.pytest_plugin import agenteval_cases

            @agenteval_cases("cases.yaml", agent="{service.agent_url}", trials=3)
            def test_service(agenteval_result):
                pass
            """
        )
        result = pytester.runpytest()
        assert service.requests == [{"input": "Say hi"}] * 3
    result.assert_outcomes(passed=1)
    (run,) = _runs(pytester.path / ".agenteval" / "runs.db")
    assert run[1:] == (RunStatus.FINISHED, 3, 3)


def test_the_store_option_wins(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_opt="""
        from agenteval.pytest_plugin import agenteval_cases

        @agenteval_cases("cases.yaml", agent="agent.py:answer", required=["tool_selection"])
        def test_opt(agenteval_result):
            pass
        """
    )
    result = project.runpytest("--agenteval-store", "elsewhere.db")
    # tool_selection judges the one case with expected_tools; the others are not judged.
    result.assert_outcomes(passed=1, skipped=2)
    assert len(_runs(project.path / "elsewhere.db")) == 1
    assert not (project.path / "evals").exists()


def test_mistakes_are_reported_without_tracebacks(project: pytest.Pytester) -> None:
    project.makefile(".yaml", broken="- id: a\n  input: x\n  expeted_output: y\n")
    project.makepyfile(
        test_broken="""
        from agenteval.pytest_plugin import agenteval_cases

        @agenteval_cases("broken.yaml", agent="agent.py:answer")
        def test_broken(agenteval_result):
            pass
        """,
        test_misused="""
        from agenteval.pytest_plugin import agenteval_cases

        @agenteval_cases("cases.yaml", agent="agent.py:no_such_function")
        def test_bad_agent(agenteval_result):
            pass

        def test_not_decorated(agenteval_result):
            pass
        """,
    )
    result = project.runpytest("--continue-on-collection-errors")
    # The case file cannot be collected; each case of the bad agent, and the undecorated
    # test, fail in setup.
    result.assert_outcomes(errors=5)
    output = result.stdout.str()
    assert "broken.yaml:3, case 'a', field 'expeted_output': unknown field" in output
    assert "agent.py has no attribute 'no_such_function'" in output
    assert "only given to tests decorated with @agenteval_cases" in output
    assert "Traceback" not in output and "During handling" not in output
    with pytest.raises(ValueError, match="pass_k must be between 1 and trials"):
        from agenteval.pytest_plugin import agenteval_cases

        agenteval_cases("cases.yaml", agent=print, trials=2, pass_k=3)


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="needs pytest-xdist")
def test_under_xdist_the_workers_write_one_run(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_dist="""
        from agenteval.pytest_plugin import agenteval_cases

        @agenteval_cases("cases.yaml", agent="agent.py:answer", trials=3)
        def test_dist(agenteval_result):
            pass
        """
    )
    result = project.runpytest_subprocess("-n", "2", "-p", "xdist", "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*case 'wrong-city': 0 of 3 trials passed*"])
    # Both workers ran cases; both wrote into the one run the controller named.
    assert "[gw0]" in result.stdout.str() and "[gw1]" in result.stdout.str()
    result.stdout.fnmatch_lines(["run *: test_dist.py::test_dist (3 cases × 3 trials) in *"])
    ((run_id, status, done, total),) = _runs(project.path / "evals" / "runs.db")
    assert (status, done, total) == (RunStatus.FINISHED, 9, 9)
    assert run_id in result.stdout.str()


def test_the_pytest_example_passes_alone_and_under_xdist(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    for extra in ([], ["-n", "2"]):
        if extra and importlib.util.find_spec("xdist") is None:
            continue
        store = tmp_path / f"runs{len(extra)}.db"
        args = ["examples/pytest", "-q", "-p", "no:cacheprovider", "--agenteval-store", str(store)]
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *args, *extra],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "6 passed" in done.stdout
        runs = _runs(store)
        assert sorted((status, n, total) for _, status, n, total in runs) == [
            (RunStatus.FINISHED, 3, 3),
            (RunStatus.FINISHED, 9, 9),
        ]
