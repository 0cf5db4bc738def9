"""Tool mocks and environment state declared in case files: read from YAML, JSON, JSONL and
CSV, written back by `dump_cases`, described by the schema, and each mistake one `DatasetError`
naming the file, the line, the case and the field (the tool), with the fix."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from agenteval import EvalCase
from agenteval.datasets import case_file_schema, dump_cases, load_cases
from agenteval.errors import DatasetError

CASE = EvalCase(
    id="weather",
    input="What is the weather in Paris?",
    tool_mocks={
        "get_weather": [
            {"when": {"city": "Paris"}, "result": {"celsius": 14, "sky": "cloudy"}},
            {"when": {"city": "Atlantis"}, "error": "UnknownCityError: no such city"},
            {"result": {"celsius": 20}},
        ],
        "create_ticket": {"result": {"id": "T-1"}, "latency_s": 0.2, "set_state": {"open": 1}},
        "charge_card": {"sequence": [{"error": "timeout"}, {"result": {"status": "ok"}}]},
        "ping": {"result": None},
    },
    tool_mocks_only=True,
    initial_state={"tickets": []},
    expected_state={"tickets": [{"id": "T-1"}]},
)


@pytest.mark.parametrize("suffix", ["yaml", "json", "jsonl"])
def test_mocks_and_state_round_trip(tmp_path: Path, suffix: str) -> None:
    path = dump_cases([CASE], tmp_path / f"cases.{suffix}")

    assert load_cases(path) == [CASE]


def test_the_written_shapes_stay_as_written(tmp_path: Path) -> None:
    data = json.loads(dump_cases([CASE], tmp_path / "cases.json").read_text())[0]

    assert data["tool_mocks"]["create_ticket"] == {
        "result": {"id": "T-1"},
        "latency_s": 0.2,
        "set_state": {"open": 1},
    }
    assert data["tool_mocks"]["charge_card"] == {
        "sequence": [{"error": "timeout"}, {"result": {"status": "ok"}}]
    }
    assert data["tool_mocks"]["ping"] == {"result": None}  # null is a result
    assert len(data["tool_mocks"]["get_weather"]) == 3


def test_the_schema_takes_the_written_shapes_and_refuses_both_answers(tmp_path: Path) -> None:
    validator = jsonschema.Draft202012Validator(case_file_schema())
    data = json.loads(dump_cases([CASE], tmp_path / "cases.json").read_text())

    assert validator.is_valid(data)
    both = {"input": "hi", "tool_mocks": {"t": {"result": 1, "error": "x"}}}
    neither = {"input": "hi", "tool_mocks": {"t": {"latency_s": 1}}}
    empty = {"input": "hi", "tool_mocks": {"t": {"sequence": []}}}
    assert not validator.is_valid([both])
    assert not validator.is_valid([neither])
    assert not validator.is_valid([empty])


def test_csv_reads_json_objects_in_cells(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    mocks = json.dumps({"get_weather": {"result": {"celsius": 14}}}).replace('"', '""')
    path.write_text(
        "id,input,tool_mocks,tool_mocks_only,initial_state,expected_state\n"
        f'a,hi,"{mocks}",true,"{{""n"": 1}}","{{""n"": 2}}"\n'
    )

    (case,) = load_cases(path)

    assert case.tool_mocks is not None
    assert case.tool_mocks["get_weather"].model_dump() == {"result": {"celsius": 14}}
    assert case.tool_mocks_only is True
    assert (case.initial_state, case.expected_state) == ({"n": 1}, {"n": 2})


def test_csv_cell_that_is_not_json_names_the_row_and_column(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text("id,input,tool_mocks\na,hi,\nb,hi,{get_weather: 1}\n")

    with pytest.raises(DatasetError) as caught:
        load_cases(path)

    error = caught.value
    assert (error.line, error.case, error.field) == (3, "b", "tool_mocks")
    assert "not valid JSON" in error.message
    assert error.hint is not None and "JSON object" in error.hint


def test_csv_mock_mistake_names_the_row_and_the_tool(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text('id,input,tool_mocks\na,hi,"{""t"": {""result"": 1, ""latency_s"": -1}}"\n')

    with pytest.raises(DatasetError) as caught:
        load_cases(path)

    assert (caught.value.line, caught.value.case) == (2, "a")
    assert caught.value.field == "tool_mocks.t.latency_s"


# ---------------------------------------------------------------------------------------------
# Each mistake: one message, its line, case and field, and the fix

HEAD = "- id: c1\n  input: hi\n"

MISTAKES = [
    pytest.param(
        "  tool_mocks:\n    get_weather:\n      result: 1\n      error: boom\n",
        4,
        "tool_mocks.get_weather",
        "the mock of 'get_weather': a `result` and an `error` are both given",
        "keep one",
        id="result-and-error",
    ),
    pytest.param(
        "  tool_mocks:\n    get_weather:\n      latency_s: 1\n",
        4,
        "tool_mocks.get_weather",
        "neither a `result` nor an `error` is given",
        "add `result:`",
        id="neither",
    ),
    pytest.param(
        "  tool_mocks:\n    charge:\n      sequence: []\n",
        4,
        "tool_mocks.charge",
        "the mock of 'charge': a `sequence:` has no answer",
        "at least one answer",
        id="empty-sequence",
    ),
    pytest.param(
        "  tool_mocks:\n    get_weather: []\n",
        4,
        "tool_mocks.get_weather",
        "needs at least one rule",
        "at least one rule",
        id="empty-rules",
    ),
    pytest.param(
        "  tool_mocks:\n    get_weather:\n      result: 1\n      latency_s: -1\n",
        6,
        "tool_mocks.get_weather.latency_s",
        "`latency_s` is the delay before the answer, in seconds, 0 or more; got the number -1",
        "latency_s: 0.2",
        id="negative-latency",
    ),
    pytest.param(
        "  tool_mocks:\n    get_weather:\n      - when: Paris\n        result: 1\n",
        5,
        "tool_mocks.get_weather.0.when",
        "`when` is a mapping of the arguments a call must have, got text 'Paris'",
        "when: {city: Paris}",
        id="when-not-a-mapping",
    ),
    pytest.param(
        "  tool_mocks:\n    get_weather:\n      result: 1\n      delay: 3\n",
        6,
        "tool_mocks.get_weather.delay",
        "the mock of 'get_weather': unknown key 'delay' — did you mean 'latency_s'?",
        "rename 'delay' to 'latency_s'",
        id="unknown-key-by-meaning",
    ),
    pytest.param(
        "  tool_mocks:\n    get_weather:\n      - when: {city: Paris}\n        result: 1\n"
        "      - reslt: 2\n",
        7,
        "tool_mocks.get_weather.1.reslt",
        "unknown key 'reslt' — did you mean 'result'?",
        "rename 'reslt' to 'result'",
        id="unknown-key-by-spelling",
    ),
    pytest.param(
        "  tool_mocks:\n    get_weather:\n      result: 1\n      colour: red\n",
        6,
        "tool_mocks.get_weather.colour",
        "unknown key 'colour'",
        "when, result, error, latency_s, set_state, sequence",
        id="unknown-key",
    ),
    pytest.param(
        "  tool_mocks:\n    charge:\n      sequence:\n        - error: timeout\n"
        "        - result: 1\n          error: x\n",
        7,
        "tool_mocks.charge.sequence.1",
        "the mock of 'charge': a `result` and an `error` are both given",
        "keep one",
        id="both-inside-a-sequence",
    ),
    pytest.param(
        "  tool_mocks:\n    charge:\n      sequence: [{result: 1}]\n      latency_s: 1\n",
        6,
        "tool_mocks.charge.latency_s",
        "`latency_s` is given beside `sequence:`",
        "move `latency_s:` into the answers",
        id="key-beside-sequence",
    ),
    pytest.param(
        "  tool_mocks:\n    get_weather:\n      - result: 1\n      - when: {city: Paris}\n"
        "        result: 2\n",
        4,
        "tool_mocks.get_weather",
        "rule 1 has no `when`, so it answers every call",
        "move the rule without `when` last",
        id="rule-never-reached",
    ),
    pytest.param(
        "  tool_mock:\n    get_weather:\n      result: 1\n",
        3,
        "tool_mock",
        "unknown field — did you mean 'tool_mocks'?",
        "rename 'tool_mock' to 'tool_mocks'",
        id="misspelt-tool-mocks",
    ),
    pytest.param(
        "  tool_mocks: [get_weather]\n",
        3,
        "tool_mocks",
        "`tool_mocks` is a mapping of tool names to their mocks, got a list",
        "tool_mocks: {get_weather:",
        id="tool-mocks-a-list",
    ),
    pytest.param(
        "  tool_mocks:\n    get_weather:\n",
        4,
        "tool_mocks.get_weather",
        "the tool's answer is a mapping with `result:` or `error:`, got nothing (null)",
        "{result: ...}",
        id="a-tool-without-a-mock",
    ),
    pytest.param(
        "  tool_mocks:\n    get_weather:\n      error: 404\n",
        5,
        "tool_mocks.get_weather.error",
        "`error` is text, got the number 404",
        "error: timeout",
        id="error-not-text",
    ),
    pytest.param(
        "  tool_mocks:\n    get_weather:\n      error: ' '\n",
        4,
        "tool_mocks.get_weather",
        "`error` is empty",
        "`timeout` / `rate_limited`",
        id="empty-error",
    ),
    pytest.param(
        "  tool_mocks:\n    t:\n      result: 1\n      set_state: [a]\n",
        6,
        "tool_mocks.t.set_state",
        "`set_state` is a mapping of state keys to their new values, got a list",
        "set_state: {",
        id="set-state-not-a-mapping",
    ),
    pytest.param(
        "  tool_mocks_only: maybe\n",
        3,
        "tool_mocks_only",
        "expected true or false",
        "true or false",
        id="mocks-only-not-a-bool",
    ),
    pytest.param(
        "  initial_state: [1]\n",
        3,
        "initial_state",
        "expected a mapping, got a list",
        "mapping",
        id="state-not-a-mapping",
    ),
    pytest.param(
        "  final_state: {n: 1}\n",
        3,
        "final_state",
        "did you mean 'expected_state'?",
        "rename 'final_state' to 'expected_state'",
        id="expected-state-by-meaning",
    ),
]


@pytest.mark.parametrize(("body", "line", "field", "message", "hint"), MISTAKES)
def test_a_bad_declaration_is_one_clear_error(
    tmp_path: Path, body: str, line: int, field: str, message: str, hint: str
) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(HEAD + body)

    with pytest.raises(DatasetError) as caught:
        load_cases(path)

    error = caught.value
    assert (error.file, error.line, error.case, error.field) == (str(path), line, "c1", field)
    assert message in error.message
    assert error.hint is not None and hint in error.hint
    assert "Traceback" not in str(error) and "pydantic" not in str(error)


def test_json_mistake_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(
        '[\n  {"id": "c1",\n   "input": "hi",\n   "tool_mocks": {\n     "t": {\n'
        '       "result": 1,\n       "latency_s": -1\n     }\n   }\n  }\n]\n'
    )

    with pytest.raises(DatasetError) as caught:
        load_cases(path)

    assert (caught.value.line, caught.value.case) == (7, "c1")
    assert caught.value.field == "tool_mocks.t.latency_s"


def test_jsonl_mistake_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        '{"id": "a", "input": "hi"}\n'
        '{"id": "b", "input": "hi", "tool_mocks": {"t": {"result": 1, "error": "x"}}}\n'
    )

    with pytest.raises(DatasetError) as caught:
        load_cases(path)

    assert (caught.value.line, caught.value.case, caught.value.field) == (2, "b", "tool_mocks.t")
    assert "both given" in caught.value.message


def test_the_keys_a_message_lists_are_the_model_s() -> None:
    from agenteval.mock_errors import MOCK_KEYS
    from agenteval.tool_mocks import MockRule

    assert set(MOCK_KEYS) == set(MockRule.model_fields)


def fixture_weather(city: str) -> dict[str, str]:
    return {"city": city}


def test_a_function_result_is_written_as_its_reference_and_reads_back(tmp_path: Path) -> None:
    case = EvalCase(id="f", input="hi", tool_mocks={"get_weather": {"result": fixture_weather}})
    reference = {"agenteval.callable": f"{__name__}:fixture_weather"}

    (back,) = load_cases(dump_cases([case], tmp_path / "cases.yaml"))

    assert back.tool_mocks is not None
    (answer,) = back.tool_mocks["get_weather"].rules or []
    assert answer.result == reference and answer.function is None
    assert case.tool_mocks is not None
    (given,) = case.tool_mocks["get_weather"].rules or []
    assert given.result == reference and given.function is fixture_weather


def test_an_adk_eval_set_keeps_mocks_and_state_under_its_agenteval_key(tmp_path: Path) -> None:
    from agenteval.evalset import EvalSet

    path = EvalSet(id="weather", cases=[CASE]).save(tmp_path / "weather.evalset.json")
    written = json.loads(path.read_text())["eval_cases"][0]

    (back,) = load_cases(path)

    assert written["agenteval"]["case"]["tool_mocks_only"] is True
    assert back.tool_mocks == CASE.tool_mocks and back.tool_mocks_only
    assert (back.initial_state, back.expected_state) == (CASE.initial_state, CASE.expected_state)


def test_an_adk_eval_set_without_mocks_is_written_as_before(tmp_path: Path) -> None:
    from agenteval.evalset import EvalSet

    plain = EvalCase(id="p", input="hi", expected_output="hello")
    path = EvalSet(id="plain", cases=[plain]).save(tmp_path / "plain.evalset.json")

    assert "agenteval" not in json.loads(path.read_text())["eval_cases"][0]


def test_a_mock_mistake_in_an_adk_eval_set_names_its_line(tmp_path: Path) -> None:
    from agenteval.evalset import EvalSet

    path = EvalSet(id="weather", cases=[CASE]).save(tmp_path / "weather.evalset.json")
    data = json.loads(path.read_text())
    data["eval_cases"][0]["agenteval"]["case"]["tool_mocks"]["create_ticket"]["latency_s"] = -1
    path.write_text(json.dumps(data, indent=2))
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if '"latency_s": -1' in t)

    with pytest.raises(DatasetError) as caught:
        load_cases(path)

    error = caught.value
    assert (error.line, error.case, error.field) == (
        line,
        "weather",
        "tool_mocks.create_ticket.latency_s",
    )
    assert "`latency_s` is the delay before the answer" in error.message
