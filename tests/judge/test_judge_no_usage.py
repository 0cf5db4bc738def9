"""A judge whose server answers without token usage (a proxy that strips it): what its calls
cost is unknown, never $0 — on the score, in the summary and in a comparison."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.judge.fakes import FakeAnthropic, FakeGoogle, FakeOpenAI, FakeServer, verdict

import agenteval
from agenteval import EvalCase
from agenteval.judge.judge import JudgeConfig
from agenteval.report.compare import compare_results

pytestmark = pytest.mark.usefixtures("clean_env")

CASE = EvalCase(id="capital", input="What is the capital of France?", expected_output="Paris")
SPECS = {
    "openai": ("openai:gpt-4o-mini", FakeOpenAI),
    "anthropic": ("anthropic:claude-haiku-4-5", FakeAnthropic),
    "google": ("google:gemini-2.5-flash", FakeGoogle),
}


def capital_agent(question: str) -> str:
    return "Paris"


@pytest.fixture(params=sorted(SPECS))
def stripped(request: pytest.FixtureRequest) -> Iterator[tuple[str, FakeServer]]:
    """Each provider's fake, answering every verdict with its usage taken out."""
    spec, fake_class = SPECS[request.param]
    with fake_class() as fake:
        fake.handler = lambda body: verdict({"reasoning": "fine", "score": 1.0})
        fake.strip_usage = True
        yield spec, fake


def _run(spec: str, fake: FakeServer, tmp_path: Path) -> agenteval.Run:
    config = JudgeConfig(spec=spec, base_url=fake.base_url, cache_path=tmp_path / "c.db")
    return agenteval.evaluate(capital_agent, [CASE], judge=config, store=tmp_path / "runs.db")


def test_a_judge_answering_without_usage_costs_unknown_not_zero(
    stripped: tuple[str, FakeServer], tmp_path: Path
) -> None:
    # Before: usage(None) read 0 tokens, so a priced judge model cost $0.0000 (and the
    # Anthropic SDK's missing usage raised AttributeError: no score at all).
    spec, fake = stripped
    run = _run(spec, fake, tmp_path)
    score = run.results[0].scores["correctness"]
    assert score.value == 1.0
    assert score.judge is not None
    assert score.judge.cost_usd is None
    assert score.judge.usage_recorded is False
    cost = run.summary.cost
    assert cost.judge_usd is None
    assert cost.judge_models_without_usage == [spec.partition(":")[2]]
    assert cost.models_without_usage == []  # the agent's calls are not the judge's
    assert cost.unpriced_models == []
    assert "their cost is missing, not zero" in " ".join(str(run).split())


def test_a_comparison_gives_no_judge_cost_when_a_run_judge_usage_is_unknown(
    tmp_path: Path,
) -> None:
    with FakeOpenAI() as fake:
        fake.handler = lambda body: verdict({"reasoning": "fine", "score": 1.0})
        base = _run("openai:gpt-4o-mini", fake, tmp_path / "base")
        fake.strip_usage = True
        candidate = _run("openai:gpt-4o-mini", fake, tmp_path / "candidate")
    assert base.summary.cost.judge_usd is not None and base.summary.cost.judge_usd > 0
    comparison = compare_results(base.info, base.results, candidate.info, candidate.results)
    assert comparison.judge_cost_per_case.base is not None
    assert comparison.judge_cost_per_case.candidate is None  # before: $0.0000, a "saving"
    assert comparison.models_without_usage == ["gpt-4o-mini"]
