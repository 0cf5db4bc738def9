"""A trial's cost in the HTML report's table is what the trial cost, or nothing: when any part
of it is unknown (a call whose tokens were not recorded, a model without a price), the cell is
empty (None), never the known part shown as the whole, as the run's totals do."""

from __future__ import annotations

import pytest

from agenteval import EvalCase, ModelCall, Score, Trial, Usage
from agenteval.pricing import PriceTable
from agenteval.records import TrialResult
from agenteval.report.html.trials import trial_view
from agenteval.score import JudgeRecord
from agenteval.trace import SimulatedConversation

PRICES = PriceTable.default()
CASE = EvalCase(id="c", input="q", expected_output="a")
USAGE = Usage(input_tokens=1000, output_tokens=100)
AGENT = ModelCall(model="gpt-4.1-mini", usage=USAGE)
AGENT_USD = PRICES.cost("gpt-4.1-mini", USAGE)


def _cost(trial: Trial, scores: dict[str, Score] | None = None) -> float | None:
    return trial_view(
        0, TrialResult(case=CASE, trial=trial, scores=scores or {}), PRICES, None, set()
    ).cost


def _simulation(*calls: ModelCall, cost_usd: float | None) -> SimulatedConversation:
    return SimulatedConversation(user="openai:sim", model_calls=list(calls), cost_usd=cost_usd)


def test_a_priced_trial_costs_its_agent_judge_and_simulator() -> None:
    judged = Score(
        name="correctness",
        value=1.0,
        usage=USAGE,
        judge=JudgeRecord(
            judge="openai:gpt-4.1-mini", template="t", template_version=1, cost_usd=0.5
        ),
    )
    simulation = _simulation(ModelCall(model="gpt-4.1-mini", usage=USAGE), cost_usd=0.25)
    trial = Trial(case_id="c", model_calls=[AGENT], simulation=simulation)
    assert AGENT_USD is not None
    assert _cost(trial, {"correctness": judged}) == pytest.approx(AGENT_USD + 0.75)


def test_a_simulator_call_without_usage_makes_the_trial_cost_unknown() -> None:
    simulation = _simulation(
        ModelCall(model="gpt-4.1-mini", usage=USAGE),
        ModelCall(model="gpt-4.1-mini", usage_recorded=False),
        cost_usd=0.25,  # the metered call's part only
    )
    trial = Trial(case_id="c", model_calls=[AGENT], simulation=simulation)
    assert _cost(trial) is None  # before: the agent's cost plus the simulator's known $0.25


def test_an_unpriced_simulator_makes_the_trial_cost_unknown() -> None:
    simulation = _simulation(ModelCall(model="my-own-simulator", usage=USAGE), cost_usd=None)
    trial = Trial(case_id="c", model_calls=[AGENT], simulation=simulation)
    assert _cost(trial) is None  # before: the agent's cost alone


def test_an_unpriced_agent_model_makes_the_trial_cost_unknown() -> None:
    unpriced = ModelCall(model="my-own-model", usage=USAGE)
    assert _cost(Trial(case_id="c", model_calls=[AGENT, unpriced])) is None


def test_an_unpriced_judge_that_spent_tokens_makes_the_trial_cost_unknown() -> None:
    judged = Score(
        name="correctness",
        value=1.0,
        usage=USAGE,
        judge=JudgeRecord(judge="openai:my-local-judge", template="t", template_version=1),
    )
    assert _cost(Trial(case_id="c", model_calls=[AGENT]), {"correctness": judged}) is None


def test_a_cached_judge_score_costs_nothing() -> None:
    cached = Score(
        name="correctness",
        value=1.0,
        judge=JudgeRecord(
            judge="openai:my-local-judge", template="t", template_version=1, cached_samples=1
        ),
    )
    trial = Trial(case_id="c", model_calls=[AGENT])
    assert _cost(trial, {"correctness": cached}) == pytest.approx(AGENT_USD)


def test_a_trial_without_any_call_has_no_cost() -> None:
    assert _cost(Trial(case_id="c", output="a")) is None
