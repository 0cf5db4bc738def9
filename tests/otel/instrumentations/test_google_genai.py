"""A plain google-genai tool loop under the official `opentelemetry-instrumentation-google-genai`
(with message content on, as its docs tell users), against a loopback Gemini API server: the
calls are `functionCall` parts (no call id, as Gemini 2.x sends them), their results
`functionResponse` parts (`{"result": ...}`, or `{"error": ...}` for the tool that fails), the
tokens as Gemini splits them (thinking tokens apart from `candidatesTokenCount`).

Not in the `dev` extra: 1.3b0 requires `opentelemetry-util-genai>=1.3b0`, which breaks the
openai-v2 instrumentation the other tests pin, so this runs only where it is installed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.genai")
pytest.importorskip("opentelemetry.instrumentation.google_genai")

import agenteval
from agenteval import EvalCase
from agenteval.otel.scoring import score_traces
from agenteval.records import TrialResult

from .agents import EXPECTED, expected_cost, expected_scores
from .agents_gemini import GEMINI_PRICES, gemini_agent, gemini_usage
from .families import GOOGLE_GENAI, Family
from .loopback_gemini import TWO_ROUNDS, ScriptedGemini
from .runs import TraceFile, facts, live_and_offline, record_offline, stored_results


def _both(
    server: ScriptedGemini, trace_file: TraceFile, tmp_path: Path
) -> tuple[dict[str, TrialResult], dict[str, TrialResult]]:
    agent = gemini_agent(server.base_url)
    return live_and_offline(agent, trace_file, tmp_path, GEMINI_PRICES)


def _seen(result: TrialResult) -> dict[str, Any]:
    seen = facts(result)
    calls = result.trial.model_calls
    seen["cost"] = sum(GEMINI_PRICES.cost(m.model, m.usage) or 0.0 for m in calls)
    seen["unpriced"] = sorted(
        {m.model for m in calls if GEMINI_PRICES.cost(m.model, m.usage) is None}
    )
    return seen


@pytest.mark.parametrize("instrumented", [GOOGLE_GENAI], ids=lambda f: f.name, indirect=True)
def test_live_and_offline_read_the_gemini_agent_right(
    instrumented: Family,
    gemini_server: ScriptedGemini,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    live, offline = _both(gemini_server, trace_file, tmp_path)
    assert set(live) == set(offline) == set(EXPECTED)
    for case_id, expected in EXPECTED.items():
        seen = _seen(live[case_id])
        assert seen == _seen(offline[case_id]), case_id
        asked = [(name, arguments) for name, arguments, _ in seen["calls"]]
        assert asked == [(name, arguments) for name, arguments, _ in expected.calls], case_id
        for result, call_error, wanted in zip(
            seen["results"], seen["call_errors"], expected.results, strict=True
        ):
            if wanted is None:  # the failed call: `{"error": ...}` sent back
                assert expected.error is not None and expected.error in str(call_error)
            else:
                assert result == {"result": wanted} and call_error is None, case_id
        assert seen["output"] == expected.output, case_id
        assert (seen["failure"], seen["not_recorded"]) == (None, []), case_id
        assert seen["model_calls"] == expected.model_calls, case_id
        assert seen["usage"] == gemini_usage(case_id), case_id
        assert seen["unpriced"] == [], case_id
        assert seen["cost"] == pytest.approx(expected_cost(case_id, details=True)), case_id
        assert seen["scores"] == expected_scores(case_id, tool_schemas=True), case_id


@pytest.mark.parametrize("instrumented", [GOOGLE_GENAI], ids=lambda f: f.name, indirect=True)
def test_the_same_tool_called_in_two_rounds_is_two_calls(
    instrumented: Family,
    gemini_server: ScriptedGemini,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    """Gemini 2.x gives its calls no id, and the instrumentation names each `{name}_{position}`:
    `get_weather` asked for in one round and again in the next is `get_weather_0` both times.
    Read as one call (as agenteval did), the second call, which failed, was lost: the trial
    showed one call that worked and `tool_execution` passed. Both calls are kept, each with
    its own result, live and offline."""
    case = EvalCase(
        id="trip",
        input="Plan my trip please",
        expected_output=TWO_ROUNDS["trip"][-1].text,
        expected_tools=["get_weather"],
    )
    agent = gemini_agent(gemini_server.base_url)
    record_offline(agent, [case])
    score_traces(trace_file.save(), [case], prices=GEMINI_PRICES, store=tmp_path / "offline.db")
    agenteval.evaluate(agent, [case], prices=GEMINI_PRICES, store=tmp_path / "live.db", tools={})
    for store in ("live.db", "offline.db"):
        result = stored_results(tmp_path / store)["trip"]
        seen = facts(result)
        assert [(name, arguments) for name, arguments, _ in seen["calls"]] == [
            ("get_weather", {"city": "Paris"}),
            ("get_weather", {"city": "Atlantis"}),
        ], store
        assert seen["results"] == [{"result": "sunny, 18 C"}, {"error": "unknown city: Atlantis"}]
        assert seen["model_calls"] == 3, store
        assert result.scores["tool_execution"].value == 0.0, store
