"""A pydantic-ai `Agent` through every door agenteval has, with no wrapper: `agenteval run` with
`agent: module:agent` in agenteval.yaml (a child process), `EvalSuite`, `AgentEvaluator` and the
pytest plugin."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from tests.cli_process import agenteval_cli, assert_clean, cli_env
from tests.frameworks.pydantic_ai.scripted import weather_agent

from agenteval import EvalCase, RunStore

pytest_plugins = ("pytester",)

AGENT_MODULE = textwrap.dedent(
    '''
    """A pydantic-ai agent on a scripted model: one get_weather call, then the answer."""

    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import RequestUsage

    WEATHER = {"Paris": "sunny", "Rome": "rainy"}


    def model(messages, info):
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            return ModelResponse(
                parts=[TextPart(f"It is {last.content}.")],
                usage=RequestUsage(input_tokens=30, output_tokens=5),
            )
        city = str(last.content).rstrip("?").split()[-1]
        return ModelResponse(
            parts=[ToolCallPart("get_weather", {"city": city}, tool_call_id="c1")],
            usage=RequestUsage(input_tokens=20, output_tokens=4),
        )


    agent = Agent(FunctionModel(model, model_name="acme-mini"), name="forecaster")


    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Today's weather in a city."""
        return WEATHER.get(city, "unknown")
    '''
)

DEPS_MODULE = textwrap.dedent(
    '''
    """The same agent with deps: a list per trial, where its tool notes each city asked."""

    from forecast_agent import WEATHER, model
    from pydantic_ai import Agent, RunContext
    from pydantic_ai.models.function import FunctionModel

    from agenteval.agents.frameworks.pydantic_ai import PydanticAIAgent

    agent = Agent(FunctionModel(model, model_name="acme-mini"), name="noting", deps_type=list)


    @agent.tool
    def get_weather(ctx: RunContext[list], city: str) -> str:
        """Today's weather in a city."""
        ctx.deps.append(city)
        return f"{WEATHER.get(city, 'unknown')} ({len(ctx.deps)})"


    evaluated = PydanticAIAgent(agent, deps=lambda: [])
    '''
)

CASES_YAML = textwrap.dedent(
    """
    - id: paris
      input: Weather in Paris?
      expected_output: It is sunny.
      expected_tools: [get_weather]
    - id: rome
      input: Weather in Rome?
      expected_output: It is sunny.
    """
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "forecast_agent.py").write_text(AGENT_MODULE, encoding="utf-8")
    (tmp_path / "cases.yaml").write_text(CASES_YAML, encoding="utf-8")
    return tmp_path


def test_agenteval_run_takes_the_agent_by_reference_from_agenteval_yaml(project: Path) -> None:
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: forecast_agent:agent\ntrials: 2\nconcurrency: 8\n",
        encoding="utf-8",
    )
    done = agenteval_cli(project, "run", ".", env=cli_env(NO_PROXY="*"))
    # One case of two fails its exact match: the run itself succeeded.
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    assert_clean(done.stderr)
    assert "Traceback" not in done.stdout + done.stderr
    with RunStore(project / ".agenteval" / "runs.db", create=False) as runs:
        run_id = runs.resolve_run_id("latest")
        info = runs.get_info(run_id)
        results = list(runs.iter_results(run_id))
    assert info.agent == "forecast_agent:agent"
    assert len(results) == 4
    for result in results:
        city = result.case.id.capitalize()
        assert [(c.name, c.arguments) for c in result.trial.tool_calls] == [
            ("get_weather", {"city": city})
        ]
        assert result.trial.usage.input_tokens == 50
        assert result.trial.tool_specs["get_weather"].parameters["required"] == ["city"]
    passed = {r.case.id: r.scores["exact_match"].passed for r in results}
    assert passed == {"paris": True, "rome": False}


def test_agenteval_run_takes_an_agent_wrapped_with_its_deps_factory(project: Path) -> None:
    (project / "deps_agent.py").write_text(DEPS_MODULE, encoding="utf-8")
    (project / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: deps_agent.py:evaluated\ntrials: 3\nconcurrency: 8\n",
        encoding="utf-8",
    )
    done = agenteval_cli(project, "run", ".", env=cli_env(NO_PROXY="*"))
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    with RunStore(project / ".agenteval" / "runs.db", create=False) as runs:
        results = list(runs.iter_results(runs.resolve_run_id("latest")))
    assert len(results) == 6
    # Fresh deps for each trial: each one's list held its own single city.
    assert all(r.trial.tool_calls[0].result.endswith("(1)") for r in results)
    assert {r.trial.output for r in results} == {"It is sunny (1).", "It is rainy (1)."}


def test_eval_suite_runs_the_agent_object(tmp_path: Path) -> None:
    from agenteval.evaluators import EvalSuite

    suite = EvalSuite("weather", store=tmp_path / "runs.db").add_cases(
        [EvalCase(id="p", input="Weather in Paris?", expected_output="Paris: sunny")]
    )
    report = suite.add_evaluators("exact_match", "tool_arguments_valid").run(
        weather_agent(), trials=2, concurrency=8
    )
    assert report.complete
    for result in report.results:
        assert result.scores["exact_match"].passed is True
        assert result.scores["tool_arguments_valid"].value == 1.0
        assert [c.name for c in result.trial.tool_calls] == ["get_weather"]


def test_agent_evaluator_runs_the_agent_object(tmp_path: Path) -> None:
    from agenteval.criteria import ExactMatchCriterion
    from agenteval.evalset import AgentEvaluator, EvalConfig

    evaluator = AgentEvaluator(
        weather_agent(),
        EvalConfig(criteria={}),
        criteria=[ExactMatchCriterion()],
        trials=2,
        store=tmp_path / "runs.db",
    )
    report = evaluator.evaluate_sync(
        [EvalCase(id="r", input="Weather in Rome?", expected_output="Rome: rainy")]
    )
    assert report.complete
    assert report.passed


def test_the_pytest_plugin_takes_the_agent_by_reference(pytester: pytest.Pytester) -> None:
    (pytester.path / "forecast_agent.py").write_text(AGENT_MODULE, encoding="utf-8")
    pytester.makefile(".yaml", cases=CASES_YAML)
    pytester.makeini(
        "[pytest]\nagenteval_store = evals/runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(
        test_forecast="""
        from agenteval.pytest_plugin import agenteval_cases
        from forecast_agent import agent

        @agenteval_cases("cases.yaml", agent="forecast_agent.py:agent", trials=2)
        def test_forecast(agenteval_result):
            for trial in agenteval_result.trials:
                assert [c.name for c in trial.tool_calls] == ["get_weather"]

        @agenteval_cases("cases.yaml", agent=agent)
        def test_object(agenteval_result):
            assert agenteval_result.trials[0].model_calls
        """
    )
    result = pytester.runpytest("-v", "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*test_forecast?paris? PASSED*", "*test_forecast?rome? FAILED*"])
    result.stdout.fnmatch_lines(["*test_object?paris? PASSED*", "*test_object?rome? FAILED*"])
    assert "Traceback" not in result.stdout.str()
    with RunStore(pytester.path / "evals" / "runs.db", create=False) as runs:
        results = [r for row in runs.list_runs() for r in runs.iter_results(row.run_id)]
    assert len(results) == 4 + 2
    assert all(r.trial.tool_specs["get_weather"].description for r in results)
