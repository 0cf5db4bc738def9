"""A case no scorer that counts judged is not a pass: the test is skipped, naming the scorers
and why none applied; a case with a judged failure still fails, one with a judged pass still
passes. Each test runs pytest on a small project over a real store.

Before, such a case PASSED with nothing checked: `required=["exact_match"]` on a case with no
`expected_output`, or the built-ins alone on a case that expects nothing they check, while the
summary gave its trial no verdict ("applied to no trial") and `--junit` skipped it."""

from __future__ import annotations

import pytest

from agenteval.store import RunStore

pytest_plugins = ("pytester",)

AGENT = """
def answer(question: str) -> str:
    return "I cannot help with that."
"""

CASES = """
- id: refund
  input: How long is the refund window?
  expected_output: 30 days
- id: greeting
  input: Hello
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", cases=CASES)
    (pytester.path / "agent.py").write_text(AGENT, encoding="utf-8")
    pytester.makeini(
        "[pytest]\nagenteval_store = runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    return pytester


def _test(arguments: str = "", body: str = "pass") -> str:
    return f"""
from agenteval.pytest_plugin import agenteval_cases

@agenteval_cases("cases.yaml", agent="agent.py:answer"{arguments})
def test_support(agenteval_result):
    {body}
"""


def test_a_case_no_scorer_applied_to_is_skipped_not_passed(project: pytest.Pytester) -> None:
    project.makepyfile(test_support=_test())
    result = project.runpytest("-v", "-rs")
    # refund fails exact_match; greeting expects nothing any built-in checks. Before: the
    # greeting PASSED.
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*test_support?refund? FAILED*",
            "*test_support?greeting? SKIPPED*",
            "*case 'greeting': not judged: no scorer that counts applied to 1 of 1 trial, so "
            "nothing checked it*",
        ]
    )
    assert "exact_match did not apply" in result.stdout.str()


def test_a_required_scorer_that_did_not_apply_does_not_pass_the_case(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_support=_test(
            ', required=["exact_match"]',
            body="assert not agenteval_result.passed",
        )
    )
    result = project.runpytest("-v", "-rs", "test_support.py::test_support[greeting]")
    result.assert_outcomes(skipped=1)  # passed before the fix
    result.stdout.fnmatch_lines(
        [
            "*not judged: no scorer that counts applied to 1 of 1 trial*",
            "    exact_match did not apply: no expected_output in the case",
        ]
    )


def test_a_judged_pass_among_unjudged_trials_decides_as_the_requirement_says(
    pytester: pytest.Pytester,
) -> None:
    # A scorer of the test's own that judges the first trial and not the second.
    pytester.makefile(".yaml", cases="- id: only\n  input: q\n")
    (pytester.path / "agent.py").write_text(
        "def answer(question):\n    return 'fine'\n", encoding="utf-8"
    )
    pytester.makeini(
        "[pytest]\nagenteval_store = runs.db\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(
        test_half="""
from agenteval.pytest_plugin import agenteval_cases

def every_other(case, trial):
    return None if trial.trial % 2 else True

@agenteval_cases(
    "cases.yaml", agent="agent.py:answer", scorers=[every_other], builtins=False, trials=2,
    pass_k=1, pass_k_min=0.5,
)
def test_half(agenteval_result):
    assert agenteval_result.passes == [True, False]

@agenteval_cases(
    "cases.yaml", agent="agent.py:answer", scorers=[every_other], builtins=False, trials=2,
)
def test_all(agenteval_result):
    pass
"""
    )
    result = pytester.runpytest("-v", "-rs")
    # pass^1 = 0.5 meets 0.5: passed. pass^2 needs both: the unjudged trial holds it up, and
    # nothing failed: skipped, not passed.
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*test_half?only? PASSED*", "*test_all?only? SKIPPED*"])


def test_a_judge_asked_for_that_cannot_run_fails_every_case_before_it_runs(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As `agenteval run --judge` exits 2: the rubrics would give no score on every trial.
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTEVAL_JUDGE"):
        monkeypatch.delenv(name, raising=False)
    project.makepyfile(
        test_support=_test(
            ', judge="openai:gpt-4o-mini", rubrics=["answer_relevance"], '
            'required=["answer_relevance"]'
        )
    )
    result = project.runpytest("-v", "-rs")
    # Before: passed, the rubric giving no score and nothing failing. Now each case errors in
    # its setup with the one message, as an unknown `required` name does.
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        ["*judge openai:gpt-4o-mini unavailable: the openai judge needs an API key*"]
    )
    assert "Traceback" not in result.stdout.str()
    with RunStore(project.path / "runs.db", create=False) as store:
        assert store.list_runs() == []  # nothing run or stored
