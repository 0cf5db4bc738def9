"""A case judged by a scorer that could not score, because its trial's trace does not record
what the scorer reads (`Trial.not_recorded`: openai-v2 without content capture, its default),
is not a pass: the test is skipped, naming the scorer, the field and the fix; a real failure
still fails. Each test runs pytest on a small project over a real store.

The first test reproduces the vacuous pass: a case requiring `tool_selection`, run on an agent
whose trace leaves the tool calls unknown, passed though nothing checked the tools."""

from __future__ import annotations

import pytest

pytest_plugins = ("pytester",)

WHY = (
    "the model asked for tools (finish_reasons tool_calls) and the instrumentation kept no "
    "message content; set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"
)

# An agent as an instrumented one without content capture looks after its trace is read: it
# answered, it asked for tools, and what it called is unknown.
AGENT = f"""
from agenteval.trace import Trial

WHY = {WHY!r}


def answer(question: str) -> Trial:
    if "wrong" in question:
        return Trial(output="Rainy", not_recorded={{"tool_calls": WHY}})
    return Trial(output="Sunny", not_recorded={{"tool_calls": WHY}})
"""

CASES = """
- id: weather
  input: Weather in Paris?
  expected_output: Sunny
  expected_tools: [get_weather]
- id: wrong
  input: Weather in Rome, wrong answer?
  expected_output: Sunny
  expected_tools: [get_weather]
- id: no-tools
  input: Say sunny
  expected_output: Sunny
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", cases=CASES)
    (pytester.path / "agent.py").write_text(AGENT, encoding="utf-8")
    pytester.makeini(
        "[pytest]\nagenteval_store = runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    return pytester


def _test(arguments: str) -> str:
    return f"""
from agenteval.pytest_plugin import agenteval_cases

@agenteval_cases("cases.yaml", agent="agent.py:answer", {arguments})
def test_weather(agenteval_result):
    pass
"""


def test_a_required_scorer_the_trace_could_not_feed_skips_the_case_not_passes_it(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_weather=_test('required=["tool_selection"]'))
    result = project.runpytest("-v", "-rs", "test_weather.py::test_weather[weather]")
    result.assert_outcomes(skipped=1)  # passed before the fix
    result.stdout.fnmatch_lines(
        [
            "*test_weather?weather? SKIPPED*",
            "*case 'weather': not judged: tool_selection not scored on 1 of 1 trial: the trace "
            "does not record what the scorer reads, so nothing checked it*",
            "  trial 0:",
            "    tool_selection not scored: the trace does not record the tool calls — the model "
            "asked for tools*CAPTURE_MESSAGE_CONTENT=SPAN_ONLY",
        ]
    )


def test_a_real_failure_still_fails_and_a_scorer_the_case_does_not_call_for_is_no_gap(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_weather=_test('required=["exact_match", "tool_selection"]'))
    result = project.runpytest("-v", "-rs")
    result.assert_outcomes(passed=1, skipped=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_weather?weather? SKIPPED*",
            "*test_weather?wrong? FAILED*",
            # No expected_tools: tool_selection does not apply, as on a fully recorded trace.
            "*test_weather?no-tools? PASSED*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "case 'wrong': 0 of 1 trial passed; pass^1 = 0.00, needs 1.00",
            "  trial 0:",
            "    exact_match failed (0.00): expected 'Sunny', got 'Rainy'",
            "    tool_selection not scored: the trace does not record the tool calls*",
        ]
    )


def test_every_scorer_counting_a_case_with_no_tool_expectations_still_waits_on_the_calls(
    project: pytest.Pytester,
) -> None:
    # tool_execution judges whatever calls were made, and the trace says calls were made
    # without saying which: the case's verdict hangs on them.
    project.makepyfile(test_weather=_test("trials=1"))
    result = project.runpytest("-v", "-rs", "test_weather.py::test_weather[no-tools]")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*not judged:*tool_execution not scored on 1 of 1 trial*"])
    assert "tool_selection" not in result.stdout.str()


def test_a_case_whose_judged_trials_meet_its_requirement_passes_whatever_the_others(
    project: pytest.Pytester,
) -> None:
    # pass^1 at least 0.5 over 2 trials: one passing trial is enough whatever the other did;
    # an agent whose calls are recorded on the first trial only.
    (project.path / "agent.py").write_text(
        AGENT.replace(
            "def answer(question: str) -> Trial:",
            "_n = {'calls': 0}\n\n\ndef answer(question: str) -> Trial:\n"
            "    _n['calls'] += 1\n"
            "    if _n['calls'] == 1:\n"
            "        return Trial(output='Sunny', tool_calls=[{'name': 'get_weather'}])",
        ),
        encoding="utf-8",
    )
    project.makepyfile(
        test_weather=_test(
            'required=["tool_selection"], trials=2, pass_k=1, pass_k_min=0.5, concurrency=1'
        )
    )
    result = project.runpytest(
        "-v", "-rs", "-p", "no:randomly", "test_weather.py::test_weather[weather]"
    )
    result.assert_outcomes(passed=1)
