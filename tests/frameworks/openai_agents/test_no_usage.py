"""An OpenAI Agents SDK agent on a server that answers without `usage` (a proxy that strips
it): the SDK reads such a response as `Usage(requests=1)`, every count 0, which no real model
response is (a request has input tokens), so each call's cost is unknown, never free."""

from __future__ import annotations

from pathlib import Path

import agenteval
from agenteval import EvalCase

from . import scripted
from .loopback import ScriptedServer, scripted_server


def test_a_response_without_usage_is_a_call_of_unknown_cost(tmp_path: Path) -> None:
    # Before: each call was recorded as measured with 0 tokens: a priced model cost $0.
    with scripted_server() as server:
        server.strip_usage = True
        run = agenteval.evaluate(
            scripted.weather_agent(server.base_url),
            [EvalCase(id="paris-1", input="Paris? #1")],
            store=tmp_path / "runs.db",
        )
    trial = run.results[0].trial
    assert trial.failure is None
    assert len(trial.model_calls) == 2
    assert [call.usage_recorded for call in trial.model_calls] == [False, False]
    assert "usage" in trial.not_recorded
    assert run.summary.cost.models_without_usage == [trial.model_calls[0].model]


def test_a_response_with_usage_is_measured(server: ScriptedServer, tmp_path: Path) -> None:
    run = agenteval.evaluate(
        scripted.weather_agent(server.base_url),
        [EvalCase(id="paris-2", input="Paris? #2")],
        store=tmp_path / "runs.db",
    )
    trial = run.results[0].trial
    assert trial.model_calls and all(call.usage_recorded for call in trial.model_calls)
    assert "usage" not in trial.not_recorded
