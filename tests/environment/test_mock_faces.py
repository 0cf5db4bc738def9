"""Run-level mocks through every face: `EvalSuite.run(tool_mocks=)`, `AgentEvaluator(...,
tool_mocks=)` and `@agenteval_cases(..., tool_mocks=)`; a case's own mock of a tool wins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agenteval
from agenteval import EvalCase
from agenteval.evaluators import EvalSuite

pytest_plugins = ("pytester",)

REAL: list[str] = []


@agenteval.tool
def find_flight(origin: str, destination: str) -> dict[str, Any]:
    REAL.append(f"{origin}-{destination}")
    return {"price": 999}


def flight_agent(prompt: Any) -> str:
    said = prompt if isinstance(prompt, str) else str(prompt[-1]["content"])
    return str(find_flight("PAR", said)["price"])


RUN_MOCKS = {"find_flight": [{"when": {"destination": "ROM"}, "result": {"price": 80}}]}
CASES = [
    EvalCase(id="rome", input="ROM", expected_output="80"),
    EvalCase(
        id="oslo",
        input="OSL",
        expected_output="120",
        tool_mocks={"find_flight": {"result": {"price": 120}}},
    ),
]


def mocked_outputs(run: Any) -> dict[str, tuple[str | None, list[str | None]]]:
    return {
        r.case.id: (r.trial.output, [call.mocked for call in r.trial.tool_calls])
        for r in run.results
    }


def test_eval_suite_run_passes_the_run_s_mocks(tmp_path: Path) -> None:
    REAL.clear()
    suite = EvalSuite("flights", store=tmp_path / "runs.db").add_cases(CASES)
    suite.add_evaluators("exact_match")

    run = suite.run(flight_agent, tool_mocks=RUN_MOCKS)

    assert mocked_outputs(run) == {"rome": ("80", ["mock"]), "oslo": ("120", ["mock"])}
    assert REAL == []


async def test_agent_evaluator_passes_the_run_s_mocks(tmp_path: Path) -> None:
    from agenteval.evalset import AgentEvaluator, EvalConfig

    REAL.clear()
    evaluator = AgentEvaluator(
        flight_agent,
        EvalConfig(criteria={"response_match_score": 0.5}),
        store=tmp_path / "runs.db",
        tool_mocks=RUN_MOCKS,
    )

    report = await evaluator.evaluate(CASES)

    assert evaluator.tool_mocks is not None and set(evaluator.tool_mocks) == {"find_flight"}
    assert mocked_outputs(report.run) == {"rome": ("80", ["mock"]), "oslo": ("120", ["mock"])}
    assert REAL == []


def test_a_mistake_in_a_face_s_mocks_is_an_option_error(tmp_path: Path) -> None:
    from agenteval.engine.options import OptionError
    from agenteval.pytest_plugin import agenteval_cases

    with pytest.raises(OptionError) as caught:
        agenteval_cases(CASES, agent=flight_agent, tool_mocks={"find_flight": {"latency_s": 1}})

    assert caught.value.field == "tool_mocks.find_flight"
    assert "neither a `result` nor an `error`" in caught.value.message


def test_agenteval_cases_passes_the_run_s_mocks(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nagenteval_store = evals/runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makefile(
        ".yaml",
        cases="- id: rome\n  input: ROM\n  expected_output: '80'\n"
        "- id: oslo\n  input: OSL\n  expected_output: '120'\n"
        "  tool_mocks:\n    find_flight: {result: {price: 120}}\n",
    )
    pytester.makepyfile(
        test_flights="""
        from agenteval.pytest_plugin import agenteval_cases
        from tests.environment.test_mock_faces import RUN_MOCKS, flight_agent

        @agenteval_cases("cases.yaml", agent=flight_agent, tool_mocks=RUN_MOCKS)
        def test_flights(agenteval_result):
            for trial in agenteval_result.trials:
                assert [call.mocked for call in trial.tool_calls] == ["mock"]
        """
    )

    result = pytester.runpytest("-p", "no:randomly")

    result.assert_outcomes(passed=2)
