"""`agent:` in agenteval.yaml as a reference, an HTTP agent or the built-in agent; `agenteval run`
on each, as a user runs it (a subprocess, against loopback servers)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.agents.fakes_http import FakeAgentService, reply
from tests.agents.fakes_toolcalls import ToolCallingOpenAI, answer, call, tool_calls
from tests.cli_process import CHECKOUT_SRC

from agenteval.agents.builtin import BuiltinAgent, BuiltinAgentConfig
from agenteval.agents.http import HttpAgent, HttpAgentConfig
from agenteval.config import find_target, resolve_agent
from agenteval.errors import ConfigError
from agenteval.store import RunStore

CASES = """
- id: refund
  input: What is the refund window?
  expected_output: 30 days
  expected_tools: [cfg_search]
- id: hello
  input: Say hello
  expected_output: Hello
"""

TOOLS = '''
import agenteval


@agenteval.tool
def cfg_search(query: str) -> list[dict]:
    """Search the help centre."""
    return [{"id": "refunds", "text": "Refunds within 30 days."}]
'''


def _config(folder: Path, agent_yaml: str) -> Path:
    (folder / "cases.yaml").write_text(CASES, encoding="utf-8")
    path = folder / "agenteval.yaml"
    path.write_text(f"dataset: cases.yaml\n{agent_yaml}\n", encoding="utf-8")
    return path


def agenteval(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "COLUMNS": "160",
            "PYTHONPATH": CHECKOUT_SRC,
            "NO_PROXY": "*",
        },
        timeout=120,
    )


def test_the_three_shapes_of_agent(tmp_path: Path) -> None:
    reference = find_target(_config(tmp_path, "agent: my_agent.py:answer")).config.agent
    assert reference == "my_agent.py:answer"
    http = find_target(
        _config(
            tmp_path,
            "agent:\n  url: http://127.0.0.1:8000/agent\n  timeout: 5\n"
            "  headers: {Authorization: 'Bearer ${TOKEN}'}",
        )
    ).config.agent
    assert http == HttpAgentConfig(
        url="http://127.0.0.1:8000/agent", timeout=5, headers={"Authorization": "Bearer ${TOKEN}"}
    )
    builtin = find_target(
        _config(
            tmp_path,
            "agent:\n  model: openai:llama3.1:8b\n  system_prompt: Be brief.\n  tools: tools.py\n"
            "  max_turns: 4\n  base_url: http://127.0.0.1:11434/v1\n  params: {temperature: 0}",
        )
    ).config.agent
    assert isinstance(builtin, BuiltinAgentConfig)
    assert (builtin.provider, builtin.model_name) == ("openai", "llama3.1:8b")
    assert builtin.tools == ["tools.py"] and builtin.max_turns == 4
    assert builtin.params == {"temperature": 0}


@pytest.mark.parametrize(
    ("agent_yaml", "line", "field", "message", "hint"),
    [
        ("agent: {url: 'http://x', tmeout: 3}", 2, "agent.tmeout", "unknown setting", "'timeout'"),
        ("agent: {model: 'openai:m', max_turn: 3}", 2, "agent.max_turn", "unknown", "'max_turns'"),
        ("agent: {name: x}", 2, "agent", "a mapping with url:", None),
        ("agent: {url: 'ftp://x'}", 2, "agent.url", "not an http:// or https:// URL", None),
        ("agent: {model: gpt-4o}", 2, "agent.model", "not provider:model", None),
        ("agent: {model: 'openai:m', max_turns: 0}", 2, "agent.max_turns", "greater than", None),
    ],
)
def test_agent_mistakes_are_located(
    tmp_path: Path, agent_yaml: str, line: int, field: str, message: str, hint: str | None
) -> None:
    with pytest.raises(ConfigError) as caught:
        find_target(_config(tmp_path, agent_yaml))
    error = caught.value
    assert (error.line, error.field) == (line, field)
    assert message in error.message
    assert "Value error" not in error.message
    if hint is not None:
        assert error.hint is not None and hint in error.hint


def test_resolve_agent_builds_each_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    (tmp_path / "my_agent.py").write_text("def answer(q):\n    return 'hi'\n")
    fn, ref = resolve_agent("my_agent.py:answer", base_dir=tmp_path)
    assert fn("x") == "hi" and ref == "my_agent.py:answer"
    http, ref = resolve_agent({"url": "http://127.0.0.1:9/agent?key=s3cret"})
    assert isinstance(http, HttpAgent) and ref == "http:http://127.0.0.1:9/agent"
    (tmp_path / "tools.py").write_text(TOOLS)
    builtin, ref = resolve_agent(
        {"model": "openai:m", "base_url": "http://127.0.0.1:9/v1", "tools": "tools.py"},
        base_dir=tmp_path,
    )
    assert isinstance(builtin, BuiltinAgent) and ref == "builtin:openai:m"
    assert [spec.name for spec in builtin.tool_specs] == ["cfg_search"]
    with pytest.raises(ConfigError, match="needs url:"):
        resolve_agent({"name": "x"})
    with pytest.raises(ConfigError) as caught:
        resolve_agent({"url": "http://x", "retries": 3})
    assert caught.value.field == "agent.retries"
    (tmp_path / "not_callable.py").write_text("answer = 3\n")
    with pytest.raises(ConfigError, match="is not callable"):
        resolve_agent("not_callable.py:answer", base_dir=tmp_path)


def test_agenteval_run_on_an_http_agent(tmp_path: Path, clean_env: None) -> None:
    with FakeAgentService() as service:
        service.handler = lambda body: reply(
            {
                "output": "30 days" if "refund" in body["input"] else "Hello",
                "tool_calls": [{"name": "cfg_search", "arguments": {"query": body["input"]}}],
            }
        )
        url = service.agent_url
        _config(tmp_path, f"agent: {{url: '{url}', timeout: 5}}\ntrials: 2")
        done = agenteval(tmp_path, "run", ".", "--store", "runs.db")
        assert done.returncode == 0, done.stderr
        assert service.request_count == 4
        # `--agent URL` is an HTTP agent too; the case file runs with the agenteval.yaml
        # beside it (its `trials: 2`), the flag taking the agent's place.
        flag = agenteval(
            tmp_path, "run", "cases.yaml", "--agent", service.agent_url, "--store", "runs.db"
        )
        assert flag.returncode == 0, flag.stderr
        assert service.request_count == 8
    with RunStore(tmp_path / "runs.db") as store:
        runs = store.list_runs()
        info = store.get_info(runs[0].run_id)
        results = list(store.iter_results(info.run_id))
    assert info.agent == f"http:{url}"
    assert {r.case.id: r.scores["exact_match"].passed for r in results} == {
        "refund": True,
        "hello": True,
    }


def test_agenteval_run_on_the_builtin_agent(tmp_path: Path, clean_env: None) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    with ToolCallingOpenAI() as fake:

        def script(body: dict[str, object]) -> object:
            messages = body["messages"]
            assert isinstance(messages, list)
            question = messages[1]["content"]
            if "refund" not in question:
                return answer("Hello")
            if messages[-1]["role"] == "tool":
                return answer("30 days")
            return tool_calls(call("cfg_search", query="refund"))

        fake.handler = script  # type: ignore[assignment]
        _config(
            tmp_path,
            "agent:\n"
            "  model: openai:local-model\n"
            f"  base_url: {fake.base_url}\n"
            "  system_prompt: You answer questions about Acme.\n"
            "  tools: tools.py\n"
            "  max_turns: 3",
        )
        done = agenteval(tmp_path, "run", ".", "--store", "runs.db", "--verbose")
        assert done.returncode == 0, done.stderr
        assert fake.request_count == 3
    with RunStore(tmp_path / "runs.db") as store:
        (row,) = store.list_runs()
        info = store.get_info(row.run_id)
        results = {r.case.id: r for r in store.iter_results(row.run_id)}
    assert info.agent == "builtin:openai:local-model"
    assert "cfg_search" in info.tools
    refund = results["refund"]
    assert refund.trial.output == "30 days"
    assert [c.name for c in refund.trial.tool_calls] == ["cfg_search"]
    assert len(refund.trial.model_calls) == 2
    assert refund.scores["tool_selection"].passed is True
    assert refund.scores["tool_arguments_valid"].passed is True


def test_a_missing_key_stops_the_run_with_one_message(tmp_path: Path) -> None:
    _config(tmp_path, "agent: {model: 'anthropic:claude-haiku-4-5'}")
    done = agenteval(tmp_path, "run", ".", "--store", "runs.db")
    assert done.returncode == 2
    assert "needs an API key" in done.stderr and "ANTHROPIC_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr
