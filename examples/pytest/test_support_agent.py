"""The support agent's evals, as tests: `pytest examples/pytest` (add `-n 2` with pytest-xdist).

Each case of cases.yaml becomes its own test, named by the case id
(`test_support_agent[refund-window]`, ...), and fails with the failing scorers and their
reasons. The trials are stored as one run: `agenteval show latest` shows it.
"""

from agenteval.pytest_plugin import agenteval_cases


@agenteval_cases(
    "cases.yaml",
    agent="agent.py:answer",
    trials=3,
    thresholds={"step_efficiency": 1.0},  # no extra tool call on top of what is needed
    pass_k=3,  # pass^3: every one of the three trials must pass
)
def test_support_agent(agenteval_result):
    """The requirement is checked after the body; assert more here if you like."""
    assert all(output and output.count(".") == 1 for output in agenteval_result.outputs)


@agenteval_cases(
    "cases.yaml",
    agent="agent.py:answer",
    required=["exact_match"],  # only the answer counts here
)
def test_answers_only(agenteval_result):
    """One trial per case; a test of its own, so a run of its own."""
