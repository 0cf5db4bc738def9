"""The built-in tool-calling agent, against loopback servers that script tool calls."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from tests.agents.fakes_toolcalls import (
    ToolCallingAnthropic,
    ToolCallingGoogle,
    ToolCallingOpenAI,
    answer,
    call,
    call_raw,
    tool_calls,
)
from tests.judge.fakes import delay, http_error

import agenteval
from agenteval import EvalCase, FailureCause, Usage
from agenteval.agents.builtin import BuiltinAgent, BuiltinAgentConfig, builtin_agent, load_tools
from agenteval.errors import AgentLoadError, ConfigError
from agenteval.trace import Trial

TOOLS = '''
import agenteval


@agenteval.tool
def bi_search(query: str, limit: int = 3) -> list[dict]:
    """Search the help centre."""
    return [{"id": "refunds", "text": "Refunds within 30 days."}][:limit]


@agenteval.tool
async def bi_convert(amount: float, currency: str = "EUR") -> dict:
    """Convert an amount to USD."""
    return {"usd": round(amount * 1.1, 2), "from": currency}


@agenteval.tool
def bi_fail(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


def helper() -> int:  # not a tool: never offered to the model
    return 1
'''


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    (tmp_path / "bi_tools.py").write_text(TOOLS, encoding="utf-8")
    return tmp_path


def _agent(fake: Any, tools_dir: Path, **settings: Any) -> BuiltinAgent:
    provider = {
        ToolCallingOpenAI: "openai",
        ToolCallingAnthropic: "anthropic",
        ToolCallingGoogle: "google",
    }[type(fake)]
    spec: dict[str, Any] = {
        "model": f"{provider}:fake-llm",
        "base_url": fake.base_url,
        "system_prompt": "You are Acme's assistant.",
        "tools": "bi_tools.py",
        **settings,
    }
    return builtin_agent(spec, base_dir=tools_dir)


def _run(agent: Any, case: EvalCase, tmp_path: Path, **options: Any) -> agenteval.TrialResult:
    run = agenteval.evaluate(agent, [case], store=tmp_path / "runs.db", **options)
    (result,) = run.results
    return result


REFUND = EvalCase(
    id="refund",
    input="What is the refund window?",
    expected_output="Refunds within 30 days.",
    expected_tools=["bi_search", "bi_convert"],
    expected_trajectory=["bi_search", "bi_search", "bi_convert"],
)


def test_openai_tool_loop_with_parallel_calls_is_recorded(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.push(
        tool_calls(
            call("bi_search", query="refund policy"),
            text="Let me look.",
            input_tokens=100,
            output_tokens=20,
        ),
        tool_calls(
            call("bi_search", query="fees", limit=1),
            call("bi_convert", amount=10),
            input_tokens=150,
            output_tokens=30,
            cached_tokens=50,
        ),
        answer("Refunds within 30 days.", input_tokens=200, output_tokens=10, reasoning_tokens=4),
    )
    agent = _agent(openai_fake, tools_dir, params={"temperature": 0, "seed": 7, "top_k": 5})
    result = _run(agent, REFUND, tools_dir)
    trial = result.trial

    assert trial.failure is None
    assert trial.output == "Refunds within 30 days."
    assert [c.name for c in trial.tool_calls] == ["bi_search", "bi_search", "bi_convert"]
    assert trial.tool_calls[1].arguments == {"query": "fees", "limit": 1}
    assert trial.tool_calls[1].result == [{"id": "refunds", "text": "Refunds within 30 days."}]
    assert trial.tool_calls[2].result == {"usd": 11.0, "from": "EUR"}
    assert all(c.duration_s is not None and c.error is None for c in trial.tool_calls)
    assert [len(step.tool_calls) for step in trial.steps] == [1, 2, 0]
    assert trial.steps[0].thought == "Let me look."
    assert trial.metadata == {"turns": 3, "finish_reason": "stop"}
    # Every model call, with its tokens; the trial's usage is their sum.
    assert len(trial.model_calls) == 3
    assert all(m.model == "fake-llm" and m.provider == "openai" for m in trial.model_calls)
    assert all(m.duration_s is not None for m in trial.model_calls)
    assert trial.usage == Usage(
        input_tokens=450, output_tokens=60, cached_tokens=50, reasoning_tokens=4
    )
    for name in ("exact_match", "tool_selection", "tool_arguments_valid", "trajectory_order"):
        assert result.scores[name].passed is True, (name, result.scores[name])

    # On the wire: the system prompt, the question, the tool schemas, the params.
    assert openai_fake.request_count == 3
    first, second, third = openai_fake.requests
    assert first["model"] == "fake-llm"
    assert first["messages"][:2] == [
        {"role": "system", "content": "You are Acme's assistant."},
        {"role": "user", "content": "What is the refund window?"},
    ]
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert set(offered) == {"bi_search", "bi_convert", "bi_fail"}
    known = agenteval.known_tools()
    assert offered["bi_search"]["parameters"] == known["bi_search"].parameters
    assert offered["bi_search"]["description"] == "Search the help centre."
    assert (first["temperature"], first["seed"], first["top_k"]) == (0, 7, 5)
    # Each result goes back to the call that asked for it.
    said = second["messages"][2]
    assert said["role"] == "assistant" and said["content"] == "Let me look."
    assert second["messages"][3] == {
        "role": "tool",
        "tool_call_id": said["tool_calls"][0]["id"],
        "content": json.dumps([{"id": "refunds", "text": "Refunds within 30 days."}]),
    }
    asked = third["messages"][4]["tool_calls"]
    replies = third["messages"][5:7]
    assert [r["tool_call_id"] for r in replies] == [c["id"] for c in asked]
    assert json.loads(replies[1]["content"]) == {"usd": 11.0, "from": "EUR"}


def test_tool_errors_unknown_tools_and_bad_arguments_go_back_to_the_model(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.push(
        tool_calls(
            call("bi_fail", reason="index offline"),
            call("bi_teleport", to="Mars"),
            call_raw("bi_search", "{not json"),
            call("bi_search", wrong="argument"),
        ),
        answer("Sorry, I could not look it up."),
    )
    trial = _run(_agent(openai_fake, tools_dir), REFUND, tools_dir).trial
    assert trial.failure is None
    assert [c.name for c in trial.tool_calls] == [
        "bi_fail",
        "bi_teleport",
        "bi_search",
        "bi_search",
    ]
    fail, unknown, bad_json, bad_args = trial.tool_calls
    assert fail.error == "RuntimeError: index offline"
    assert unknown.error is not None and "no tool named 'bi_teleport'" in unknown.error
    assert unknown.arguments == {"to": "Mars"}
    assert bad_json.error is not None and "not a JSON object" in bad_json.error
    assert bad_args.error is not None and bad_args.error.startswith("TypeError")
    contents = [m["content"] for m in openai_fake.requests[1]["messages"] if m["role"] == "tool"]
    assert contents[0] == "error: RuntimeError: index offline"
    assert contents[1].startswith("error: no tool named 'bi_teleport'")
    assert all(content.startswith("error: ") for content in contents)


def test_max_turns_ends_the_trial_as_the_agents_error_keeping_its_calls(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.default = tool_calls(call("bi_search", query="again"))
    trial = _run(_agent(openai_fake, tools_dir, max_turns=3), REFUND, tools_dir).trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.AGENT_ERROR
    assert trial.failure.error_type == "MaxTurnsExceeded"
    assert "max_turns=3" in trial.failure.message
    # Three model calls; the tools of the first two were called, the third's never were.
    assert openai_fake.request_count == 3
    assert len(trial.model_calls) == 3
    assert [c.name for c in trial.tool_calls] == ["bi_search", "bi_search"]


def test_model_calls_are_retried_inside_the_agent_and_counted(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.push(
        tool_calls(call("bi_search", query="refund")),
        http_error(429, retry_after=0),
        http_error(503, retry_after=0),
        answer("Refunds within 30 days."),
    )
    trial = _run(_agent(openai_fake, tools_dir), REFUND, tools_dir).trial
    assert trial.failure is None
    assert trial.output == "Refunds within 30 days."
    # The call was retried, not the trial: the tool ran once; no silent SDK retry either.
    assert trial.attempts == 1
    assert [c.name for c in trial.tool_calls] == ["bi_search"]
    assert trial.retries == {"rate_limited": 1, "provider_error": 1}
    assert openai_fake.request_count == 4
    assert len(trial.model_calls) == 2


def test_when_the_agents_retries_run_out_the_engine_classifies_the_failure(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.default = http_error(500, retry_after=0)
    trial = _run(_agent(openai_fake, tools_dir, retries=1), REFUND, tools_dir, retries=0).trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.PROVIDER_ERROR
    assert trial.retries == {"provider_error": 1}
    assert openai_fake.request_count == 2


def test_a_model_call_past_its_timeout_is_a_timeout(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.push(delay(5, answer("late")))
    agent = _agent(openai_fake, tools_dir, timeout=0.3, retries=0)
    trial = _run(agent, REFUND, tools_dir, retries=0).trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.TIMEOUT


def test_a_bad_request_is_the_agents_error_and_not_retried(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.default = http_error(400, message="tools[0] is invalid")
    trial = _run(_agent(openai_fake, tools_dir), REFUND, tools_dir).trial
    assert trial.failure is not None
    assert trial.failure.cause is FailureCause.AGENT_ERROR
    assert "tools[0] is invalid" in trial.failure.message
    assert openai_fake.request_count == 1


def test_a_conversation_is_sent_turn_by_turn(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.push(answer("Hello!"), answer("30 days."))
    case = EvalCase.model_validate(
        {
            "id": "chat",
            "conversation": [
                {"input": "Hi"},
                {"input": "Refund window?", "expected_final_response": "30 days."},
            ],
        }
    )
    trial = _run(_agent(openai_fake, tools_dir), case, tools_dir).trial
    assert trial.output == "30 days."
    assert openai_fake.requests[1]["messages"][1:] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Refund window?"},
    ]


async def test_parallel_tools_run_concurrently(tmp_path: Path, clean_env: None) -> None:
    both_started = asyncio.Event()
    started: list[str] = []

    @agenteval.tool
    async def bi_wait_a() -> str:
        started.append("a")
        if len(started) == 2:
            both_started.set()
        await asyncio.wait_for(both_started.wait(), 2)
        return "a"

    @agenteval.tool
    async def bi_wait_b() -> str:
        started.append("b")
        if len(started) == 2:
            both_started.set()
        await asyncio.wait_for(both_started.wait(), 2)
        return "b"

    with ToolCallingOpenAI() as fake:
        fake.push(tool_calls(call("bi_wait_a"), call("bi_wait_b")), answer("both"))
        config = BuiltinAgentConfig(
            model="openai:fake-llm", base_url=fake.base_url, parallel_tools=True
        )
        agent = BuiltinAgent(config, tools=[bi_wait_a, bi_wait_b])
        trial = await agent("go")
    assert trial.output == "both"
    assert [c.result for c in trial.tool_calls] == ["a", "b"]


async def test_outside_a_trial_the_answer_carries_its_own_record(
    openai_fake: ToolCallingOpenAI, tools_dir: Path
) -> None:
    openai_fake.push(tool_calls(call("bi_convert", amount=2)), answer("2.2 USD"))
    trial = await _agent(openai_fake, tools_dir)("Convert 2 EUR")
    assert isinstance(trial, Trial)
    assert trial.output == "2.2 USD"
    assert [c.name for c in trial.tool_calls] == ["bi_convert"]
    assert len(trial.model_calls) == 2
    assert trial.usage.input_tokens == 24


def test_anthropic_tool_use_loop(anthropic_fake: ToolCallingAnthropic, tools_dir: Path) -> None:
    anthropic_fake.push(
        tool_calls(
            call("bi_search", query="refund"),
            call("bi_convert", amount=10),
            text="Checking.",
            input_tokens=100,
            output_tokens=20,
            cached_tokens=40,
        ),
        answer("Refunds within 30 days.", input_tokens=150, output_tokens=9),
    )
    agent = _agent(anthropic_fake, tools_dir, params={"max_tokens": 300, "temperature": 0})
    trial = _run(agent, REFUND, tools_dir).trial
    assert trial.failure is None
    assert trial.output == "Refunds within 30 days."
    assert [c.name for c in trial.tool_calls] == ["bi_search", "bi_convert"]
    assert trial.steps[0].thought == "Checking."
    assert trial.usage == Usage(input_tokens=250, output_tokens=29, cached_tokens=40)
    first, second = anthropic_fake.requests
    assert first["system"] == "You are Acme's assistant."
    assert first["max_tokens"] == 300 and first["temperature"] == 0
    offered = {t["name"]: t for t in first["tools"]}
    assert offered["bi_convert"]["input_schema"] == agenteval.known_tools()["bi_convert"].parameters
    assistant, results = second["messages"][1:]
    ids = [b["id"] for b in assistant["content"] if b["type"] == "tool_use"]
    assert results["role"] == "user"
    assert [b["tool_use_id"] for b in results["content"]] == ids
    assert json.loads(results["content"][1]["content"]) == {"usd": 11.0, "from": "EUR"}


def test_anthropic_tool_errors_are_marked(
    anthropic_fake: ToolCallingAnthropic, tools_dir: Path
) -> None:
    anthropic_fake.push(tool_calls(call("bi_fail", reason="down")), answer("Sorry."))
    trial = _run(_agent(anthropic_fake, tools_dir), REFUND, tools_dir).trial
    assert trial.tool_calls[0].error == "RuntimeError: down"
    block = anthropic_fake.requests[1]["messages"][2]["content"][0]
    assert block["is_error"] is True and block["content"] == "error: RuntimeError: down"


def test_google_function_calling_loop(google_fake: ToolCallingGoogle, tools_dir: Path) -> None:
    google_fake.push(
        tool_calls(
            call("bi_search", query="refund"), call("bi_convert", amount=10), reasoning_tokens=3
        ),
        answer("Refunds within 30 days."),
    )
    agent = _agent(google_fake, tools_dir, params={"temperature": 0, "max_tokens": 200})
    trial = _run(agent, REFUND, tools_dir).trial
    assert trial.failure is None
    assert trial.output == "Refunds within 30 days."
    assert [c.name for c in trial.tool_calls] == ["bi_search", "bi_convert"]
    assert [c.result for c in trial.tool_calls][1] == {"usd": 11.0, "from": "EUR"}
    assert len(trial.model_calls) == 2 and trial.model_calls[0].provider == "google"
    assert trial.usage.reasoning_tokens == 3
    first, second = google_fake.requests
    assert google_fake.models == ["fake-llm", "fake-llm"]
    assert first["systemInstruction"]["parts"][0]["text"] == "You are Acme's assistant."
    assert first["generationConfig"]["maxOutputTokens"] == 200
    declared = {d["name"]: d for d in first["tools"][0]["functionDeclarations"]}
    # Sent as the SDK writes it (protobuf JSON takes either spelling).
    schema = declared["bi_search"].get("parametersJsonSchema") or declared["bi_search"].get(
        "parameters_json_schema"
    )
    assert schema == agenteval.known_tools()["bi_search"].parameters
    responses = second["contents"][2]["parts"]
    assert [p["functionResponse"]["name"] for p in responses] == ["bi_search", "bi_convert"]
    assert responses[1]["functionResponse"]["response"] == {"result": {"usd": 11.0, "from": "EUR"}}


# --- Configuration -------------------------------------------------------------------------------


def test_a_missing_key_is_a_config_error_naming_the_variable(clean_env: None) -> None:
    with pytest.raises(ConfigError, match="needs an API key") as caught:
        builtin_agent({"model": "openai:gpt-4o-mini"})
    assert caught.value.hint is not None and "OPENAI_API_KEY" in caught.value.hint


def test_keys_and_base_urls_come_from_the_providers_variables(
    clean_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    agent = builtin_agent({"model": "openai:gpt-4o-mini"})
    assert (agent._api_key, agent._base_url) == ("sk-test-123", "http://127.0.0.1:9/v1")
    assert "sk-test" not in repr(agent) and agent.reference == "builtin:openai:gpt-4o-mini"
    monkeypatch.setenv("MY_GATEWAY_KEY", "gw-456")
    agent = builtin_agent({"model": "openai:m", "api_key_env": "MY_GATEWAY_KEY"})
    assert agent._api_key == "gw-456"
    with pytest.raises(ConfigError, match="NOPE_KEY is not set"):
        monkeypatch.delenv("OPENAI_BASE_URL")
        builtin_agent({"model": "openai:m", "api_key_env": "NOPE_KEY"})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"model": "gpt-4o"}, "not provider:model"),
        ({"model": "mistral:large"}, "not provider:model"),
        ({"model": "openai:m", "max_turns": 0}, "greater than or equal to 1"),
        ({"model": "openai:m", "temperature": 0}, "Extra inputs are not permitted"),
    ],
)
def test_invalid_settings_are_refused(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BuiltinAgentConfig.model_validate(spec)


def test_reserved_params_are_refused_up_front(clean_env: None) -> None:
    with pytest.raises(ConfigError, match="messages cannot be set"):
        builtin_agent(
            {"model": "openai:m", "base_url": "http://127.0.0.1:9/v1", "params": {"messages": []}}
        )
    with pytest.raises(ConfigError, match="not google-genai GenerateContentConfig fields"):
        builtin_agent(
            {"model": "google:m", "base_url": "http://127.0.0.1:9", "params": {"top_q": 1}}
        )


def test_tools_from_modules_files_and_single_functions(tools_dir: Path) -> None:
    (tools_dir / "bi_plain.py").write_text(
        "def bi_weather(city: str) -> str:\n    'The weather.'\n    return 'sunny'\n"
    )
    tools = load_tools(["bi_tools.py", "bi_plain.py:bi_weather"], base_dir=tools_dir)
    names = [fn.tool_spec.name for fn in tools]  # type: ignore[attr-defined]
    assert names == ["bi_search", "bi_convert", "bi_fail", "bi_weather"]
    # A plain function named on its own becomes a tool, with a schema from its signature.
    assert agenteval.known_tools()["bi_weather"].parameters["required"] == ["city"]


def test_tool_loading_mistakes_are_located(tools_dir: Path) -> None:
    (tools_dir / "bi_none.py").write_text("def f() -> None: ...\n")
    with pytest.raises(AgentLoadError, match=r"has no @agenteval\.tool function"):
        load_tools(["bi_none.py"], base_dir=tools_dir)
    with pytest.raises(AgentLoadError, match="no file"):
        load_tools(["missing.py"], base_dir=tools_dir)
    with pytest.raises(AgentLoadError, match="no module named"):
        load_tools(["no_such_module_here"], base_dir=tools_dir)
    (tools_dir / "bi_dup.py").write_text(
        "import agenteval\n\n@agenteval.tool(name='bi_search')\ndef other(q: str) -> str:\n"
        "    return q\n"
    )
    with pytest.raises(AgentLoadError, match="two tools are named 'bi_search'"):
        load_tools(["bi_tools.py", "bi_dup.py"], base_dir=tools_dir)
