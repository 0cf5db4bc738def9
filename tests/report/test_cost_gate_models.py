"""The gate's agent-cost rule reads the agent's own cost: a judge or user simulator without a
price leaves the agent's cost known, and must not make the rule "cannot check" (a false failure
of every gated run that judges with a local model); an agent model without a price must."""

from __future__ import annotations

from tests.report.test_simulation_views import _conversation

from agenteval import EvalCase, ModelCall, Score, Trial, Usage
from agenteval.records import RunInfo, TrialResult
from agenteval.report.compare import compare_results
from agenteval.report.gate import GatePolicy, evaluate_gate
from agenteval.score import JudgeRecord
from agenteval.user_simulation import EndReason

CASE = EvalCase(id="c", input="q", expected_output="a")
PRICED = ModelCall(model="gpt-4.1-mini", usage=Usage(input_tokens=1000, output_tokens=100))


def _judged(judge_model: str) -> Score:
    """A judge's score whose tokens have no price when `judge_model` is not in the table."""
    return Score(
        name="correctness",
        value=1.0,
        passed=True,
        usage=Usage(input_tokens=300, output_tokens=20),
        judge=JudgeRecord(
            judge=f"openai:{judge_model}", template="correctness", template_version=1
        ),
    )


def _verdict(result: TrialResult) -> tuple[bool, str]:
    info = RunInfo(run_id="20261203-000000-cost")
    comparison = compare_results(info, [result], info, [result])
    verdict = evaluate_gate(comparison, GatePolicy(max_cost_per_case_usd=1.0))
    (rule,) = [r for r in verdict.rules if r.rule.startswith("agent cost")]
    return rule.passed, rule.detail


def test_an_unpriced_judge_leaves_the_agent_cost_checked() -> None:
    trial = Trial(case_id="c", output="a", model_calls=[PRICED])
    result = TrialResult(case=CASE, trial=trial, scores={"correctness": _judged("my-local-judge")})
    assert result.trial.model_calls[0].usage_recorded
    passed, detail = _verdict(result)
    assert passed, detail  # before: "cannot check: no price for my-local-judge"
    assert "of the limit" in detail


def test_an_unpriced_simulator_leaves_the_agent_cost_checked() -> None:
    case = EvalCase(id="c", user_simulation={"goal": "g"})
    conversation = _conversation(
        1,
        EndReason.GOAL_ACHIEVED,
        model_calls=[{"model": "my-own-simulator", "usage": {"input_tokens": 50}}],
    )
    trial = Trial(case_id="c", output="a", model_calls=[PRICED], simulation=conversation)
    passed, detail = _verdict(TrialResult(case=case, trial=trial))
    assert passed, detail  # before: "cannot check: no price for my-own-simulator"


def test_an_unpriced_agent_model_still_cannot_be_checked() -> None:
    unpriced = ModelCall(model="my-own-agent-model", usage=Usage(input_tokens=10))
    trial = Trial(case_id="c", output="a", model_calls=[PRICED, unpriced])
    passed, detail = _verdict(TrialResult(case=CASE, trial=trial))
    assert not passed
    assert detail == (
        "cannot check: no price for my-own-agent-model (add them under `prices:` in agenteval.yaml)"
    )
