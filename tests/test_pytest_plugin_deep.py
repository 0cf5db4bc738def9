"""The pytest plugin over an agent whose answers carry data of any shape: metadata nested
3,000 deep and a tool result that contains itself are scored and stored cut, and a failing
case's report stays one clear message (no traceback)."""

from __future__ import annotations

import pytest

from agenteval.jsonsafe import CIRCULAR, DEEP

pytest_plugins = ("pytester",)

AGENT = '''
import agenteval


def nested(levels):
    value = "x"
    for _ in range(levels):
        value = [value]
    return value


@agenteval.tool
def pp_deep_loop() -> dict:
    """A result that contains itself."""
    value = {"city": "Paris"}
    value["self"] = value
    return value


def answer(question: str):
    if "loop" in question:
        pp_deep_loop()
        return "Paris"
    city = "Paris" if "France" in question else "Lyon"
    return {"output": city, "metadata": {"m": nested(3000)}}
'''

CASES = """
- id: deep
  input: What is the capital of France?
  expected_output: Paris
- id: loop
  input: loop, capital of France?
  expected_output: Paris
- id: deep-wrong
  input: What is the capital of Spain?
  expected_output: Madrid
"""


def test_deep_and_circular_answers_are_scored_and_a_failure_reported_cleanly(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".yaml", cases=CASES)
    (pytester.path / "agent.py").write_text(AGENT, encoding="utf-8")
    pytester.makeini(
        "[pytest]\nagenteval_store = runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(
        test_deep="""
        from agenteval.pytest_plugin import agenteval_cases

        @agenteval_cases(
            "cases.yaml", agent="agent.py:answer", scorers=["exact_match"], builtins=False
        )
        def test_deep(agenteval_result):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*exact_match failed (0.00): expected 'Madrid', got 'Lyon'*"])
    assert "Traceback" not in result.stdout.str()
    files = [pytester.path / "runs.db", pytester.path / "runs.db-wal"]
    stored = b"".join(f.read_bytes() for f in files if f.exists())
    assert DEEP.encode() in stored and CIRCULAR.encode() in stored
