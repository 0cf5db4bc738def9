"""The built-in agent on a server that answers without token usage (a proxy that strips it):
each model call's tokens are unknown (`usage_recorded=False`), never 0, so a cost gate cannot
pass it as free."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.agents.fakes_toolcalls import answer, call, tool_calls

import agenteval
from agenteval import EvalCase
from agenteval.agents.builtin import builtin_agent
from agenteval.report.compare import compare_results
from agenteval.report.gate import GatePolicy, evaluate_gate

TOOLS = '''
import agenteval


@agenteval.tool
def nu_search(query: str) -> str:
    """Search the help centre."""
    return "Refunds within 30 days."
'''

CASE = EvalCase(id="refund", input="What is the refund window?", expected_output="30 days")
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5", "google": "gemini-2.5-flash"}


@pytest.fixture(params=sorted(MODELS))
def fake(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(f"{request.param}_fake")


def _run(fake: Any, tmp_path: Path, *, strip: bool) -> agenteval.Run:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "nu_tools.py").write_text(TOOLS, encoding="utf-8")
    fake.strip_usage = strip
    fake.push(tool_calls(call("nu_search", query="refund")), answer("30 days"))
    spec = {
        "model": f"{fake.name}:{MODELS[fake.name]}",
        "base_url": fake.base_url,
        "tools": "nu_tools.py",
    }
    agent = builtin_agent(spec, base_dir=tmp_path)
    return agenteval.evaluate(agent, [CASE], store=tmp_path / "runs.db")


def test_a_reply_without_usage_is_a_call_of_unknown_cost(fake: Any, tmp_path: Path) -> None:
    # Before: usage(None) read 0 tokens, recorded as measured: a priced model cost $0 (and the
    # Anthropic SDK's missing usage raised AttributeError: the trial failed).
    run = _run(fake, tmp_path, strip=True)
    trial = run.results[0].trial
    assert trial.failure is None and trial.output == "30 days"
    assert len(trial.model_calls) == 2
    assert [call.usage_recorded for call in trial.model_calls] == [False, False]
    assert "usage" in trial.not_recorded
    cost = run.summary.cost
    assert cost.models_without_usage == [MODELS[fake.name]]
    assert cost.agent_usd is None


def test_a_cost_gate_cannot_pass_an_agent_whose_tokens_were_not_returned(
    openai_fake: Any, tmp_path: Path
) -> None:
    base = _run(openai_fake, tmp_path / "base", strip=False)
    assert base.results[0].trial.model_calls[0].usage_recorded is True
    candidate = _run(openai_fake, tmp_path / "candidate", strip=True)
    comparison = compare_results(base.info, base.results, candidate.info, candidate.results)
    verdict = evaluate_gate(comparison, GatePolicy(max_cost_per_case_usd=1.0))
    (rule,) = [r for r in verdict.rules if r.rule.startswith("agent cost")]
    assert rule.passed is False  # before: $0.0000, 0% of the limit, passed
    assert "cannot check" in rule.detail
