"""A run's mocks checked before any trial runs: a mock of a tool the agent does not have, or
a `when` on an argument its tool does not take, is one error naming the file, line, case and
the tool meant; agenteval.yaml's `tool_mocks:` apply to every case, and a mistake in them names
the config's line; the run says nothing when it does not know the agent's tools."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli_process import agenteval_cli, cli_env

import agenteval
from agenteval import EvalCase, evaluate
from agenteval.config import find_target, resolve_settings
from agenteval.engine.options import OptionError
from agenteval.errors import DatasetError
from agenteval.trace import ToolSpec

CALLED: list[str] = []


@agenteval.tool
def lookup_order(order_id: str, include_items: bool = False) -> dict[str, Any]:
    CALLED.append(order_id)
    return {"order": order_id, "status": "real"}


def order_agent(prompt: str) -> str:
    return str(lookup_order(prompt))


CASES_YAML = """\
- id: fine
  input: A-1
  tool_mocks:
    lookup_order:
      result: {status: shipped}
- id: typo
  input: A-2
  tool_mocks:
    lookup_ordr:
      result: {status: shipped}
"""


def test_a_mock_of_an_unknown_tool_names_file_line_case_and_the_tool_meant(
    tmp_path: Path,
) -> None:
    CALLED.clear()
    path = tmp_path / "cases.yaml"
    path.write_text(CASES_YAML)

    with pytest.raises(DatasetError) as caught:
        evaluate(order_agent, path, store=tmp_path / "runs.db")

    error = caught.value
    assert (error.file, error.line, error.case) == (str(path), 9, "typo")
    assert error.field == "tool_mocks.lookup_ordr"
    assert "did you mean 'lookup_order'?" in error.message
    assert error.hint == "rename 'lookup_ordr' to 'lookup_order'"
    assert CALLED == []  # refused before any trial ran


@pytest.mark.parametrize(
    ("mock", "line", "field"),
    [
        (
            "      when: {order_idd: A-1}\n      result: 1\n",
            4,
            "tool_mocks.lookup_order.when.order_idd",
        ),
        (
            "      - when: {order_id: A-1}\n        result: 1\n"
            "      - when: {order_idd: A-2}\n        result: 2\n",
            6,
            "tool_mocks.lookup_order.1.when.order_idd",
        ),
    ],
    ids=["one-rule", "second-rule"],
)
def test_a_when_on_an_argument_the_tool_does_not_take(
    tmp_path: Path, mock: str, line: int, field: str
) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- id: c\n  input: A-1\n  tool_mocks:\n    lookup_order:\n" + mock)

    with pytest.raises(DatasetError) as caught:
        evaluate(order_agent, path, store=tmp_path / "runs.db")

    error = caught.value
    assert (error.line, error.case, error.field) == (line + 1, "c", field)
    assert "`when` on 'order_idd', which lookup_order does not take" in error.message
    assert error.hint == "rename 'order_idd' to 'order_id'"


def test_cases_built_in_python_name_the_case_and_field(tmp_path: Path) -> None:
    case = EvalCase(
        id="py",
        input="A-1",
        tool_mocks={"lookup_order": [{"when": {"colour": "red"}, "result": 1}]},
    )

    with pytest.raises(DatasetError) as caught:
        evaluate(order_agent, [case], store=tmp_path / "runs.db")

    error = caught.value
    assert (error.file, error.line, error.case) == (None, None, "py")
    assert error.field == "tool_mocks.lookup_order.0.when.colour"
    assert "its arguments: include_items, order_id" in error.message


def test_the_run_s_mocks_are_checked_too(tmp_path: Path) -> None:
    with pytest.raises(OptionError) as caught:
        evaluate(
            order_agent,
            [EvalCase(input="A-1")],
            store=tmp_path / "runs.db",
            tool_mocks={"lookup_ordr": {"result": 1}},
        )

    assert caught.value.field == "tool_mocks.lookup_ordr"
    assert "did you mean 'lookup_order'?" in caught.value.message


def test_the_tools_option_is_what_the_run_knows(tmp_path: Path) -> None:
    tools = {"search": ToolSpec(name="search", parameters={"type": "object", "properties": {}})}
    with pytest.raises(DatasetError, match="names no tool of the agent"):
        evaluate(
            order_agent,
            [EvalCase(input="A-1", tool_mocks={"lookup_order": {"result": 1}})],
            store=tmp_path / "runs.db",
            tools=tools,
        )


def test_an_http_agent_s_tools_cannot_be_mocked_so_a_mock_is_refused(tmp_path: Path) -> None:
    # Its tools run in its service: a mock would never answer and the real tool would run
    # (tests/agents/test_http_mocks_refused.py runs it end to end).
    from agenteval.agents.http import HttpAgent, HttpAgentConfig
    from agenteval.engine.mock_check import checked_mocks
    from agenteval.engine.options import RunOptions
    from agenteval.errors import AgentEvalError

    agent = HttpAgent(HttpAgentConfig(url="http://127.0.0.1:9/agent"))
    cases = [EvalCase(input="x", tool_mocks={"anything": {"result": 1}})]

    with pytest.raises(AgentEvalError, match="HTTP agent"):
        checked_mocks(cases, agent, RunOptions(tool_mocks={"other": {"result": 2}}))
    with pytest.raises(AgentEvalError, match="HTTP agent"):
        checked_mocks(cases, agent, RunOptions())
    plain = [EvalCase(input="x")]
    assert checked_mocks(plain, agent, RunOptions()) is plain


def test_a_tool_taking_any_argument_takes_any_when(tmp_path: Path) -> None:
    from agenteval.engine.mock_check import checked_mocks
    from agenteval.engine.options import RunOptions

    spec = ToolSpec(name="t", parameters={"type": "object", "additionalProperties": True})
    cases = [EvalCase(input="x", tool_mocks={"t": [{"when": {"whatever": 1}, "result": 1}]})]

    assert checked_mocks(cases, None, RunOptions(tools={"t": spec})) is cases


def test_a_stream_is_checked_before_the_first_trial(tmp_path: Path) -> None:
    CALLED.clear()

    def stream() -> Iterator[EvalCase]:
        yield EvalCase(id="a", input="A-1")
        yield EvalCase(id="b", input="A-2", tool_mocks={"lookup_ordr": {"result": 1}})

    with pytest.raises(DatasetError) as caught:
        evaluate(order_agent, stream(), store=tmp_path / "runs.db")

    assert caught.value.case == "b"
    assert CALLED == []
    from agenteval import RunStore

    with RunStore(tmp_path / "runs.db") as runs:
        assert runs.list_runs() == []  # the store took nothing of the refused stream


def test_the_built_in_agent_s_tools_are_known(tmp_path: Path) -> None:
    from agenteval.agents.builtin import BuiltinAgent, BuiltinAgentConfig
    from agenteval.engine.mock_check import agent_tools
    from agenteval.engine.options import RunOptions

    agent = BuiltinAgent(
        BuiltinAgentConfig(model="openai:gpt-4o-mini", base_url="http://127.0.0.1:9/v1"),
        tools=[lookup_order],
    )

    tools = agent_tools(agent, RunOptions())

    assert tools is not None and set(tools) == {"lookup_order"}


# ---------------------------------------------------------------------------------------------
# agenteval.yaml's `tool_mocks:`

CONFIG = """\
dataset: cases.yaml
agent: agent.py:answer
tool_mocks:
  lookup_order:
    result: {status: shipped}
"""

AGENT = """\
import agenteval

@agenteval.tool
def lookup_order(order_id: str) -> dict:
    raise RuntimeError("the real tool ran")

def answer(question: str) -> str:
    return lookup_order(question)["status"]
"""


def test_agenteval_yaml_mocks_every_case(tmp_path: Path) -> None:
    (tmp_path / "agenteval.yaml").write_text(CONFIG)
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text(
        "- id: a\n  input: A-1\n  expected_output: shipped\n"
        "- id: b\n  input: A-2\n  expected_output: lost\n"
        "  tool_mocks:\n    lookup_order: {result: {status: lost}}\n"
    )

    done = agenteval_cli(tmp_path, "run", "agenteval.yaml", "--store", "runs.db", env=cli_env())

    assert done.returncode == 0, done.stdout + done.stderr
    with agenteval.RunStore(tmp_path / "runs.db") as runs:
        (row,) = runs.list_runs()
        results = {r.case.id: r for r in runs.iter_results(row.run_id)}
        info = runs.get_info(row.run_id)
    assert all(r.scores["exact_match"].passed for r in results.values())
    assert results["a"].trial.tool_calls[0].mocked == "mock"
    assert info.settings["tool_mocks"] == {"lookup_order": {"result": {"status": "shipped"}}}


@pytest.mark.parametrize(
    ("mock", "line", "field", "message"),
    [
        (
            "  lookup_order:\n    result: 1\n    latency_s: -1\n",
            6,
            "tool_mocks.lookup_order.latency_s",
            "`latency_s` is the delay before the answer",
        ),
        (
            "  lookup_order:\n    result: 1\n    error: boom\n",
            4,
            "tool_mocks.lookup_order",
            "a `result` and an `error` are both given",
        ),
        (
            "  lookup_order:\n    - when: {order_id: A}\n      result: 1\n    - reslt: 2\n",
            7,
            "tool_mocks.lookup_order.1.reslt",
            "did you mean 'result'?",
        ),
    ],
    ids=["latency", "both", "unknown-key"],
)
def test_a_mistake_in_agenteval_yaml_mocks_names_its_line(
    tmp_path: Path, mock: str, line: int, field: str, message: str
) -> None:
    config = tmp_path / "agenteval.yaml"
    config.write_text("dataset: cases.yaml\ntrials: 1\ntool_mocks:\n" + mock)
    target = find_target(config)

    with pytest.raises(OptionError) as caught:
        resolve_settings(target.config, target.base_dir, config_file=config, env={})

    error = caught.value
    assert (error.file, error.line, error.field) == (str(config), line, field)
    assert message in error.message


def test_agenteval_yaml_mock_of_an_unknown_tool_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "agenteval.yaml").write_text(
        "dataset: cases.yaml\nagent: agent.py:answer\ntool_mocks:\n"
        "  lookup_order:\n    result: {status: shipped}\n"
        "  lookup_ordr:\n    result: {status: shipped}\n"
    )
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text("- input: A-1\n")

    done = agenteval_cli(tmp_path, "run", "agenteval.yaml", "--store", "runs.db", env=cli_env())

    assert done.returncode == 2
    said = " ".join(done.stderr.split())
    assert "agenteval.yaml:6, field 'tool_mocks.lookup_ordr'" in said
    assert "did you mean 'lookup_order'?" in said
    assert "Traceback" not in done.stderr


def test_a_framework_agent_s_declared_tools_are_what_the_run_knows(tmp_path: Path) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    model = TestModel()
    agent = Agent(model, name="weather")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return "sunny"

    cases = [
        EvalCase(id="ok", input="hi", tool_mocks={"get_weather": {"result": "rain"}}),
        EvalCase(
            id="bad", input="hi", tool_mocks={"get_weather": [{"when": {"town": "x"}, "result": 1}]}
        ),
    ]

    with pytest.raises(DatasetError) as caught:
        evaluate(agent, cases, store=tmp_path / "runs.db")

    assert (caught.value.case, caught.value.field) == ("bad", "tool_mocks.get_weather.0.when.town")
    assert "which get_weather does not take (its arguments: city)" in caught.value.message
    assert model.last_model_request_parameters is None  # the model was never asked


@pytest.mark.parametrize("suffix", ["json", "jsonl", "csv"])
def test_the_line_is_found_in_every_format(tmp_path: Path, suffix: str) -> None:
    from agenteval.datasets import dump_cases

    cases = [
        EvalCase(id="a", input="A-1"),
        EvalCase(id="b", input="A-2", tool_mocks={"lookup_ordr": {"result": 1}}),
    ]
    if suffix == "csv":
        path = tmp_path / "cases.csv"
        path.write_text('id,input,tool_mocks\na,A-1,\nb,A-2,"{""lookup_ordr"": {""result"": 1}}"\n')
        line = 3
    else:
        path = dump_cases(cases, tmp_path / f"cases.{suffix}")
        text = path.read_text().splitlines()
        line = next(n for n, t in enumerate(text, 1) if "lookup_ordr" in t)

    with pytest.raises(DatasetError) as caught:
        evaluate(order_agent, path, store=tmp_path / "runs.db")

    assert (caught.value.file, caught.value.line, caught.value.case) == (str(path), line, "b")


def test_a_run_without_mocks_never_asks_for_the_agent_s_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agenteval.engine.mock_check as mock_check

    def refuse(*args: Any) -> None:
        raise AssertionError("the agent's tools were asked for")

    monkeypatch.setattr(mock_check, "agent_tools", refuse)

    run = evaluate(lambda q: q, [EvalCase(input="a"), EvalCase(input="b")], store=tmp_path / "r.db")

    assert len(run.results) == 2
