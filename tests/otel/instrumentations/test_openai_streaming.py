"""The plain openai-SDK tool loop of `test_openai_sdk.py`, streaming its responses
(`stream=True`), under each real openai instrumentation. Streaming is how chat front ends call
a model, and each instrumentation records a streamed call its own way once the stream is
read: agenteval must record the same tool calls, results, answer, tokens and cost as for the
same conversation unstreamed, live and offline alike."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import agenteval
from agenteval import RunStore
from agenteval.report.summary import summarize

from .agents import (
    CASES,
    EXPECTED,
    PRICES,
    expected_cost,
    expected_scores,
    expected_usage,
    streaming_openai_agent,
)
from .families import (
    OPENAI_INSTRUMENTATIONS,
    OPENAI_V2,
    OPENINFERENCE,
    OPENLLMETRY,
    Family,
    require,
)
from .loopback import REQUEST_MODEL, RESPONSE_MODEL, ScriptedOpenAI
from .runs import TraceFile, both_ways, facts, run_live, run_offline

require(*OPENAI_INSTRUMENTATIONS)


WITH_CONTENT = [OPENAI_V2, OPENINFERENCE, OPENLLMETRY]


@pytest.mark.parametrize("instrumented", WITH_CONTENT, ids=lambda f: f.name, indirect=True)
def test_a_streamed_conversation_is_recorded_as_the_same_one_unstreamed(
    instrumented: Family,
    openai_server: ScriptedOpenAI,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    agent = streaming_openai_agent(openai_server.base_url)
    offline = run_offline(agent, trace_file, tmp_path / "offline.db")
    live = run_live(agent, tmp_path / "live.db")
    assert set(live) == set(offline) == set(EXPECTED)
    for case_id, expected, where, result in both_ways(live, offline):
        seen = facts(result)
        assert [(n, a) for n, a, _ in seen["calls"]] == [(n, a) for n, a, _ in expected.calls], (
            where
        )
        assert seen["output"] == expected.output, where
        assert (seen["failure"], seen["not_recorded"]) == (None, []), where
        assert seen["model_calls"] == expected.model_calls, where
        details = instrumented.token_details
        usage = expected_usage(case_id, details=details)
        if instrumented is OPENLLMETRY:
            # OpenLLMetry 0.62.4 puts no reasoning count on a streamed call's span (the
            # stream's last chunk has it): not agenteval's to make up. Cost is unchanged:
            # reasoning tokens are priced inside the output tokens.
            usage["reasoning_tokens"] = 0
        assert seen["usage"] == usage, where
        assert seen["cost"] == pytest.approx(expected_cost(case_id, details=details)), where
        assert seen["scores"] == expected_scores(case_id, tool_schemas=instrumented.tool_schemas), (
            where
        )


@pytest.mark.parametrize("instrumented", WITH_CONTENT, ids=lambda f: f.name, indirect=True)
def test_a_stream_without_usage_has_an_unknown_cost_not_a_free_one(
    instrumented: Family,
    openai_server: ScriptedOpenAI,
    trace_file: TraceFile,
    tmp_path: Path,
) -> None:
    """The openai SDK streams without usage unless asked (`stream_options`), and then no
    instrumentation has tokens to record. Read as 0 tokens, every such agent cost $0 and
    passed any cost gate; the calls' usage is "not recorded" instead, the summary's cost
    names the model as missing, and a cost gate cannot pass on it."""
    agent = streaming_openai_agent(openai_server.base_url, include_usage=False)
    offline = run_offline(agent, trace_file, tmp_path / "offline.db")
    live = run_live(agent, tmp_path / "live.db")
    for case_id, expected, where, result in both_ways(live, offline):
        seen = facts(result)
        assert seen["output"] == expected.output, where
        assert seen["model_calls"] == expected.model_calls, where
        calls = result.trial.model_calls
        assert [call.usage_recorded for call in calls] == [False] * len(calls), where
        assert seen["not_recorded"] == ["usage"], where
        assert "include_usage" in result.trial.not_recorded["usage"], where
        assert seen["scores"] == expected_scores(case_id, tool_schemas=instrumented.tool_schemas), (
            where
        )
    for store in (tmp_path / "live.db", tmp_path / "offline.db"):
        with RunStore(store) as runs:
            [row] = runs.list_runs()
            summary = summarize(runs.iter_results(row.run_id), prices=PRICES)
        assert summary.cost.agent_usd is None, store
        # OpenInference names the model that answered, the others the one asked for.
        [model] = summary.cost.models_without_usage
        assert model in (REQUEST_MODEL, RESPONSE_MODEL), store


@pytest.mark.parametrize("instrumented", [OPENAI_V2], ids=lambda f: f.name, indirect=True)
def test_a_cost_gate_cannot_pass_a_run_whose_usage_was_not_recorded(
    instrumented: Family, openai_server: ScriptedOpenAI, tmp_path: Path
) -> None:
    """`agenteval gate` with `max_cost_per_case_usd`, as a CI job runs it: the run that streamed
    without usage cost $0 a case before, under any limit, and the gate passed (exit 0)."""
    store = tmp_path / "runs.db"
    runs = [
        agenteval.evaluate(
            streaming_openai_agent(openai_server.base_url, include_usage=include_usage),
            CASES,
            prices=PRICES,
            store=store,
            tools={},
        ).run_id
        for include_usage in (True, False)
    ]
    (tmp_path / "agenteval.yaml").write_text(
        f"prices:\n  {REQUEST_MODEL}: {{input: 1.0, output: 4.0, cached_input: 0.5}}\n"
    )
    (tmp_path / "gate.yaml").write_text("max_cost_per_case_usd: 0.01\n")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agenteval", *args, "--store", str(store)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "200"},
        )

    def gate(base: str, candidate: str) -> subprocess.CompletedProcess[str]:
        return cli("gate", base, candidate, "--policy", "gate.yaml")

    metered = gate(runs[0], runs[0])
    assert metered.returncode == 0, metered.stdout + metered.stderr
    assert "✓ agent cost per case ≤ $0.01" in metered.stdout
    done = gate(runs[0], runs[1])
    assert done.returncode == 1, done.stdout + done.stderr
    assert "cannot check: no token usage recorded for some calls to gpt-test" in done.stdout
    compared = cli("compare", runs[0], runs[1])
    assert "no token usage recorded for some calls to gpt-test" in compared.stdout
